// SPDX-License-Identifier: GPL-2.0
/*
 * Subgroups and the exported in-kernel API (spindle_kapi.h).
 * /dev/spindleN (subdev.c) is built on these same calls.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sched/signal.h>

#include "group.h"
#include "subgroup.h"
#include "trace.h"

static void spindle_sub_release(struct kref *ref)
{
	struct spindle_subgroup *sub = container_of(ref, struct spindle_subgroup, ref);
	u32 r;

	sp_sub_destroy(&sub->eng);
	kvfree(sub->batch);
	kvfree(sub->descs);
	for (r = 0; r < SP_MAX_MEMBERS; r++)
		spindle_region_put(sub->pay[r]);
	spindle_region_put(sub->prod_reg);
	kfree(sub);
}

/**
 * spindle_subgroup_put - drop a reference taken by spindle_subgroup_get()
 * @sub: subgroup
 */
void spindle_subgroup_put(struct spindle_subgroup *sub)
{
	kref_put(&sub->ref, spindle_sub_release);
}
EXPORT_SYMBOL_GPL(spindle_subgroup_put);

/**
 * spindle_subgroup_get - look up a subgroup of a group this node is up in
 * @group_id: group id
 * @subgroup_id: subgroup id
 *
 * Context: process context; takes a mutex.
 * Return: the subgroup with a reference (spindle_subgroup_put() it), or NULL if
 * there is no such group, or this node is not a member of that subgroup.
 */
struct spindle_subgroup *spindle_subgroup_get(u32 group_id, u32 subgroup_id)
{
	struct spindle_subgroup *found = NULL;
	struct spindle_group *g;
	u32 s;

	mutex_lock(&spindle_groups_lock);
	g = spindle_group_find(group_id);
	for (s = 0; g && s < g->cfg.nsubgroups; s++) {
		if (g->subs[s] && g->subs[s]->id == subgroup_id) {
			found = g->subs[s];
			kref_get(&found->ref);
			break;
		}
	}
	mutex_unlock(&spindle_groups_lock);
	return found;
}
EXPORT_SYMBOL_GPL(spindle_subgroup_get);

/**
 * spindle_subgroup_attr - describe a subgroup
 * @sub: subgroup
 * @attr: out
 */
void spindle_subgroup_attr(struct spindle_subgroup *sub, struct spindle_subgroup_attr *attr)
{
	attr->group_id = sub->group_id;
	attr->subgroup_id = sub->id;
	attr->self_id = sub->self_id;
	attr->mode = sub->cfg.mode;
	attr->window = sub->cfg.window;
	attr->max_msg = sub->cfg.max_msg;
	attr->nmembers = sub->cfg.nmembers;
	attr->nsenders = sub->cfg.nsenders;
	attr->my_rank = sub->my_rank;
	attr->state = spindle_sub_state(sub);
	attr->blk_mib = sub->cfg.blk_mib;
	/* joined is set before the state leaves CONNECTING: read it after */
	smp_rmb();	/* pairs with spindle_view_mark_joined()'s smp_wmb() */
	attr->joined = READ_ONCE(sub->joined);
}
EXPORT_SYMBOL_GPL(spindle_subgroup_attr);

enum spindle_group_state spindle_sub_state(struct spindle_subgroup *sub)
{
	return READ_ONCE(sub->state);
}

/*
 * Wake the group's predicate thread, if the group is still there.
 * Context: any; the group is freed only a grace period after sub->g is
 * cleared.
 */
void spindle_sub_kick(struct spindle_subgroup *sub)
{
	struct spindle_group *g;

	rcu_read_lock();
	g = rcu_dereference(sub->g);
	if (g)
		spindle_ring_doorbell(g);
	rcu_read_unlock();
}

int spindle_state_errno(enum spindle_group_state state)
{
	switch (state) {
	case SPINDLE_GROUP_ACTIVE:
		return 0;
	case SPINDLE_GROUP_CONNECTING:
	case SPINDLE_GROUP_VIEW_CHANGE:
		return -EAGAIN;
	case SPINDLE_GROUP_FAILED:
		return -EIO;
	default:
		return -ENOTCONN;
	}
}

/*
 * May a reservation at user position @pos be marked?  Marking goes on
 * while views change (the engine holds it back); sub->lock held.
 */
int spindle_mark_errno(struct spindle_subgroup *sub, u64 pos)
{
	enum spindle_group_state state = spindle_sub_state(sub);

	lockdep_assert_held(&sub->lock);
	if (state == SPINDLE_GROUP_FAILED)
		return -EIO;
	if (state != SPINDLE_GROUP_ACTIVE && state != SPINDLE_GROUP_VIEW_CHANGE)
		return -ENOTCONN;
	return pos < sub->pos_base ? -ESTALE : 0;
}

static bool spindle_can_reserve(struct spindle_subgroup *sub)
{
	enum spindle_group_state state = spindle_sub_state(sub);

	return state != SPINDLE_GROUP_CONNECTING &&
	       state != SPINDLE_GROUP_VIEW_CHANGE &&
	       (state != SPINDLE_GROUP_ACTIVE || sp_sub_free_slots(&sub->eng));
}

/**
 * spindle_reserve - hand out consecutive slots of this node's ring
 * @sub: subgroup this node sends in
 * @want: slots wanted, 1..window
 * @first: out: absolute position of the first slot
 * @timeout: jiffies to wait for the group to connect and a slot to free
 *	up; 0 never waits
 *
 * Slots are published in reservation order: every slot reserved must be
 * passed to spindle_mark_ready() or spindle_void().  A view change voids
 * reservations (those calls then say -ESTALE); positions go on growing.
 * Context: process context; may sleep when @timeout is non-zero.
 * Return: slots reserved (> 0), or -EPERM (this node does not send here),
 * -EINVAL, -EAGAIN (none free, @timeout 0), -ETIMEDOUT, -ERESTARTSYS,
 * -EBUSY (a process holds the producer page), -EIO (group failed),
 * -ENOTCONN (group down).
 */
int spindle_reserve(struct spindle_subgroup *sub, u32 want, u64 *first, long timeout)
{
	unsigned long deadline = jiffies + timeout;
	int ret;

	if (sub->my_rank < 0)
		return -EPERM;
	if (!want || want > sub->cfg.window)
		return -EINVAL;
	for (;;) {
		u32 n = 0;
		long left;

		spin_lock_bh(&sub->lock);
		ret = spindle_state_errno(spindle_sub_state(sub));
		if (!ret && sub->prod_owner)
			ret = -EBUSY;	/* the producer page owns the ring */
		if (!ret)
			n = sp_sub_reserve(&sub->eng, want, first);
		if (n)
			*first += sub->pos_base;
		spin_unlock_bh(&sub->lock);
		if (n)
			return n;
		if (ret && ret != -EAGAIN)
			return ret;
		if (!timeout)
			return -EAGAIN;
		left = (long)(deadline - jiffies);
		if (left <= 0)
			return -ETIMEDOUT;
		left = wait_event_interruptible_timeout(sub->send_wq,
							spindle_can_reserve(sub), left);
		if (left < 0)
			return left;
	}
}
EXPORT_SYMBOL_GPL(spindle_reserve);

/**
 * spindle_slot - where to build the message of a reserved slot
 * @sub: subgroup
 * @pos: a position spindle_reserve() returned
 *
 * Context: any.
 * Return: pointer to max_msg writable bytes.
 */
void *spindle_slot(struct spindle_subgroup *sub, u64 pos)
{
	return sub->pay[sub->my_rank]->vaddr +
	       (pos % sub->cfg.window) * sub->eng.slot_size;
}
EXPORT_SYMBOL_GPL(spindle_slot);

/**
 * spindle_mark_ready - a reserved slot holds a message: send it
 * @sub: subgroup
 * @pos: the slot's position
 * @len: message length, at most max_msg
 *
 * Context: process or softirq context, not hard IRQ: takes the subgroup's
 * lock with bottom halves disabled.  Does not sleep (on PREEMPT_RT that
 * lock, like every spinlock_t there, is a sleeping lock).
 * Return: 0, -EINVAL (not a reservation), -ESTALE (a view change voided
 * it), -EMSGSIZE, -EIO or -ENOTCONN.
 */
int spindle_mark_ready(struct spindle_subgroup *sub, u64 pos, u32 len)
{
	int ret;

	spin_lock_bh(&sub->lock);
	ret = spindle_mark_errno(sub, pos);
	if (!ret)
		ret = sp_sub_mark_ready(&sub->eng, pos - sub->pos_base, len);
	spin_unlock_bh(&sub->lock);
	if (!ret) {
		trace_spindle_ready(sub->group_id, sub->id, 1, false);
		spindle_sub_kick(sub);
	}
	return ret;
}
EXPORT_SYMBOL_GPL(spindle_mark_ready);

/**
 * spindle_void - give up a reserved slot; it goes out as a null message
 * @sub: subgroup
 * @pos: the slot's position
 *
 * Context: as spindle_mark_ready().
 * Return: 0, -EINVAL or -ESTALE (a view change voided it).
 */
int spindle_void(struct spindle_subgroup *sub, u64 pos)
{
	int ret;

	spin_lock_bh(&sub->lock);
	ret = pos < sub->pos_base ? -ESTALE : sp_sub_void(&sub->eng, pos - sub->pos_base);
	spin_unlock_bh(&sub->lock);
	if (!ret)
		spindle_sub_kick(sub);
	return ret;
}
EXPORT_SYMBOL_GPL(spindle_void);

/*
 * Whether @sub can take a consumer now (cons_lock held): 0, or -EBUSY with
 * why in @why; @excl, one that would hold it alone.
 */
static int spindle_sub_busy(struct spindle_subgroup *sub, bool excl, char *why, size_t len)
{
	lockdep_assert_held(&sub->cons_lock);
	if (sub->exclusive) {
		snprintf(why, len, "a consumer holds it alone");
		return -EBUSY;
	}
	if (excl && (sub->nconsumers || sub->nfiles)) {
		snprintf(why, len,
			 "%u consumer(s), %u open /dev/spindleN file(s): it cannot be held alone",
			 sub->nconsumers, sub->nfiles);
		return -EBUSY;
	}
	return 0;
}

/**
 * spindle_attach - become a consumer of a subgroup's deliveries
 * @sub: subgroup (the consumer holds its own reference)
 * @cfg: its callbacks and flags (struct spindle_consumer_cfg); read here,
 *	not kept
 *
 * The consumer sees every message delivered from now on.  While a subgroup
 * has no consumer, deliverable messages wait for one (but a view change
 * drops what it delivers then): spindle_consumer_whole() tells whether
 * this one missed any.
 * Context: process context.
 * Return: the consumer, or an ERR_PTR: -EINVAL (no ->deliver, an unknown
 * flag), -EBUSY (held alone by another consumer; or, to hold it alone,
 * another consumer or an open file of its /dev/spindleN is there), -ENOMEM.
 */
struct spindle_consumer *spindle_attach(struct spindle_subgroup *sub,
					const struct spindle_consumer_cfg *cfg)
{
	struct spindle_consumer *c;
	char why[96];
	bool excl;
	int ret;

	if (!cfg || !cfg->ops || !cfg->ops->deliver || cfg->flags & ~SPINDLE_CONSUMER_FLAGS)
		return ERR_PTR(-EINVAL);
	excl = cfg->flags & SPINDLE_CONSUMER_EXCLUSIVE;
	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		return ERR_PTR(-ENOMEM);
	c->sub = sub;
	c->ops = cfg->ops;
	c->priv = cfg->priv;
	c->exclusive = excl;
	spin_lock(&sub->cons_lock);
	ret = spindle_sub_busy(sub, excl, why, sizeof(why));
	if (ret) {
		spin_unlock(&sub->cons_lock);
		pr_warn_ratelimited("group %u subgroup %u: attach refused: %s\n",
				    sub->group_id, sub->id, why);
		kfree(c);
		return ERR_PTR(ret);
	}
	kref_get(&sub->ref);
	c->given = sub->eng.dl_descs;
	atomic64_set(&c->released, c->given);
	c->missed = sub->handed != 0;
	sub->exclusive = excl;
	list_add_tail(&c->node, &sub->consumers);
	sub->nconsumers++;
	spin_unlock(&sub->cons_lock);
	spindle_sub_kick(sub);
	return c;
}
EXPORT_SYMBOL_GPL(spindle_attach);

/*
 * A file of /dev/spindleN opens (spindle_sub_file_open(); -EBUSY, logged,
 * while a consumer holds the subgroup alone) and closes.
 */
int spindle_sub_file_open(struct spindle_subgroup *sub)
{
	int ret = 0;

	spin_lock(&sub->cons_lock);
	if (sub->exclusive)
		ret = -EBUSY;
	else
		sub->nfiles++;
	spin_unlock(&sub->cons_lock);
	if (ret)
		pr_info_ratelimited("group %u subgroup %u: /dev/spindleN not opened: a kernel consumer holds the subgroup alone\n",
				    sub->group_id, sub->id);
	return ret;
}

void spindle_sub_file_close(struct spindle_subgroup *sub)
{
	spin_lock(&sub->cons_lock);
	sub->nfiles--;
	spin_unlock(&sub->cons_lock);
}

/**
 * spindle_consumer_whole - has this consumer been handed every message?
 * @c: consumer
 *
 * A consumer that keeps state built from the messages (a replica) must know
 * whether it has all of them.  It has when it attached before the first
 * data message was delivered in its subgroup on this member, and this
 * member founded the group rather than came (back) into a running one.  A
 * consumer attached later than that (another consumer took the messages
 * before, or a view change dropped them with no consumer to take them), or
 * on a joiner, has not, and never will.
 *
 * Context: any.
 * Return: true if it has; false if not, or while the group is still
 * connecting (a member cannot yet tell whether it founds or joins).
 */
bool spindle_consumer_whole(const struct spindle_consumer *c)
{
	struct spindle_subgroup *sub = c->sub;

	if (spindle_sub_state(sub) == SPINDLE_GROUP_CONNECTING)
		return false;
	/* joined is set before the state leaves CONNECTING: read it after */
	smp_rmb();	/* pairs with spindle_view_mark_joined()'s smp_wmb() */
	return !c->missed && !READ_ONCE(sub->joined);
}
EXPORT_SYMBOL_GPL(spindle_consumer_whole);

/**
 * spindle_release - give back the @n oldest messages this consumer holds
 * @c: consumer
 * @n: messages; more than it holds is clamped
 *
 * Context: any, hard IRQ and ->deliver included: it takes no lock.
 */
void spindle_release(struct spindle_consumer *c, u32 n)
{
	s64 old, new;

	do {
		old = atomic64_read(&c->released);
		new = min_t(u64, old + n, READ_ONCE(c->given));
	} while (atomic64_cmpxchg(&c->released, old, new) != old);
	if (n)
		spindle_sub_kick(c->sub);
}
EXPORT_SYMBOL_GPL(spindle_release);

/**
 * spindle_detach - stop consuming; what it held is released
 * @c: consumer, freed on return
 *
 * Context: process context.
 */
void spindle_detach(struct spindle_consumer *c)
{
	struct spindle_subgroup *sub = c->sub;

	spin_lock(&sub->cons_lock);
	list_del(&c->node);
	sub->nconsumers--;
	if (c->exclusive)
		sub->exclusive = false;
	spin_unlock(&sub->cons_lock);
	spindle_sub_kick(sub);
	kfree(c);
	spindle_subgroup_put(sub);
}
EXPORT_SYMBOL_GPL(spindle_detach);
