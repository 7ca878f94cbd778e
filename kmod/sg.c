// SPDX-License-Identifier: GPL-2.0
/*
 * Subgroups and the exported in-kernel API (spindle_kapi.h).
 * /dev/spindleN (sgdev.c) is built on these same calls.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sched/signal.h>

#include "spindle.h"

static void spindle_sg_release(struct kref *ref)
{
	struct spindle_sg *sg = container_of(ref, struct spindle_sg, ref);
	u32 r;

	sp_sg_destroy(&sg->eng);
	kvfree(sg->batch);
	kvfree(sg->descs);
	for (r = 0; r < SP_MAX_MEMBERS; r++)
		spindle_region_put(sg->pay[r]);
	spindle_region_put(sg->prod_reg);
	kfree(sg);
}

/**
 * spindle_sg_put - drop a reference taken by spindle_sg_get()
 * @sg: subgroup
 */
void spindle_sg_put(struct spindle_sg *sg)
{
	kref_put(&sg->ref, spindle_sg_release);
}
EXPORT_SYMBOL_GPL(spindle_sg_put);

/**
 * spindle_sg_get - look up a subgroup of a group this node is up in
 * @group_id: group id
 * @subgroup_id: subgroup id
 *
 * Context: process context; takes a mutex.
 * Return: the subgroup with a reference (spindle_sg_put() it), or NULL if
 * there is no such group, or this node is not a member of that subgroup.
 */
struct spindle_sg *spindle_sg_get(u32 group_id, u32 subgroup_id)
{
	struct spindle_sg *found = NULL;
	struct spindle_group *g;
	u32 s;

	mutex_lock(&spindle_groups_lock);
	g = spindle_group_find(group_id);
	for (s = 0; g && s < g->cfg.nsubgroups; s++) {
		if (g->sgs[s] && g->sgs[s]->id == subgroup_id) {
			found = g->sgs[s];
			kref_get(&found->ref);
			break;
		}
	}
	mutex_unlock(&spindle_groups_lock);
	return found;
}
EXPORT_SYMBOL_GPL(spindle_sg_get);

/**
 * spindle_sg_attr - describe a subgroup
 * @sg: subgroup
 * @attr: out
 */
void spindle_sg_attr(struct spindle_sg *sg, struct spindle_sg_attr *attr)
{
	attr->group_id = sg->group_id;
	attr->subgroup_id = sg->id;
	attr->self_id = sg->self_id;
	attr->mode = sg->cfg.mode;
	attr->window = sg->cfg.window;
	attr->max_msg = sg->cfg.max_msg;
	attr->nmembers = sg->cfg.nmembers;
	attr->nsenders = sg->cfg.nsenders;
	attr->my_rank = sg->my_rank;
	attr->state = spindle_sg_state(sg);
}
EXPORT_SYMBOL_GPL(spindle_sg_attr);

int spindle_sg_state(struct spindle_sg *sg)
{
	return READ_ONCE(sg->state);
}

/*
 * Wake the group's predicate thread, if the group is still there.
 * Context: any; the group is freed only a grace period after sg->g is
 * cleared.
 */
void spindle_sg_kick(struct spindle_sg *sg)
{
	struct spindle_group *g;

	rcu_read_lock();
	g = rcu_dereference(sg->g);
	if (g)
		spindle_ring_doorbell(g);
	rcu_read_unlock();
}

int spindle_state_errno(int state)
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
 * while views change (the engine holds it back); sg->lock held.
 */
int spindle_mark_errno(struct spindle_sg *sg, u64 pos)
{
	int state = spindle_sg_state(sg);

	lockdep_assert_held(&sg->lock);
	if (state == SPINDLE_GROUP_FAILED)
		return -EIO;
	if (state != SPINDLE_GROUP_ACTIVE && state != SPINDLE_GROUP_VIEW_CHANGE)
		return -ENOTCONN;
	return pos < sg->pos_base ? -ESTALE : 0;
}

static bool spindle_can_reserve(struct spindle_sg *sg)
{
	int state = spindle_sg_state(sg);

	return state != SPINDLE_GROUP_CONNECTING &&
	       state != SPINDLE_GROUP_VIEW_CHANGE &&
	       (state != SPINDLE_GROUP_ACTIVE || sp_sg_free_slots(&sg->eng));
}

/**
 * spindle_reserve - hand out consecutive slots of this node's ring
 * @sg: subgroup this node sends in
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
int spindle_reserve(struct spindle_sg *sg, u32 want, u64 *first, long timeout)
{
	unsigned long deadline = jiffies + timeout;
	int ret;

	if (sg->my_rank < 0)
		return -EPERM;
	if (!want || want > sg->cfg.window)
		return -EINVAL;
	for (;;) {
		u32 n = 0;
		long left;

		spin_lock_bh(&sg->lock);
		ret = spindle_state_errno(spindle_sg_state(sg));
		if (!ret && sg->prod_owner)
			ret = -EBUSY;	/* the producer page owns the ring */
		if (!ret)
			n = sp_sg_reserve(&sg->eng, want, first);
		if (n)
			*first += sg->pos_base;
		spin_unlock_bh(&sg->lock);
		if (n)
			return n;
		if (ret && ret != -EAGAIN)
			return ret;
		if (!timeout)
			return -EAGAIN;
		left = (long)(deadline - jiffies);
		if (left <= 0)
			return -ETIMEDOUT;
		left = wait_event_interruptible_timeout(sg->send_wq,
							spindle_can_reserve(sg), left);
		if (left < 0)
			return left;
	}
}
EXPORT_SYMBOL_GPL(spindle_reserve);

/**
 * spindle_slot - where to build the message of a reserved slot
 * @sg: subgroup
 * @pos: a position spindle_reserve() returned
 *
 * Context: any.
 * Return: pointer to max_msg writable bytes.
 */
void *spindle_slot(struct spindle_sg *sg, u64 pos)
{
	return sg->pay[sg->my_rank]->vaddr +
	       (pos % sg->cfg.window) * sg->eng.slot_size;
}
EXPORT_SYMBOL_GPL(spindle_slot);

/**
 * spindle_mark_ready - a reserved slot holds a message: send it
 * @sg: subgroup
 * @pos: the slot's position
 * @len: message length, at most max_msg
 *
 * Context: process or softirq context, not hard IRQ: takes the subgroup's
 * lock with bottom halves disabled.  Does not sleep (on PREEMPT_RT that
 * lock, like every spinlock_t there, is a sleeping lock).
 * Return: 0, -EINVAL (not a reservation), -ESTALE (a view change voided
 * it), -EMSGSIZE, -EIO or -ENOTCONN.
 */
int spindle_mark_ready(struct spindle_sg *sg, u64 pos, u32 len)
{
	int ret;

	spin_lock_bh(&sg->lock);
	ret = spindle_mark_errno(sg, pos);
	if (!ret)
		ret = sp_sg_mark_ready(&sg->eng, pos - sg->pos_base, len);
	spin_unlock_bh(&sg->lock);
	if (!ret)
		spindle_sg_kick(sg);
	return ret;
}
EXPORT_SYMBOL_GPL(spindle_mark_ready);

/**
 * spindle_void - give up a reserved slot; it goes out as a null message
 * @sg: subgroup
 * @pos: the slot's position
 *
 * Context: as spindle_mark_ready().
 * Return: 0, -EINVAL or -ESTALE (a view change voided it).
 */
int spindle_void(struct spindle_sg *sg, u64 pos)
{
	int ret;

	spin_lock_bh(&sg->lock);
	ret = pos < sg->pos_base ? -ESTALE : sp_sg_void(&sg->eng, pos - sg->pos_base);
	spin_unlock_bh(&sg->lock);
	if (!ret)
		spindle_sg_kick(sg);
	return ret;
}
EXPORT_SYMBOL_GPL(spindle_void);

/**
 * spindle_attach - become a consumer of a subgroup's deliveries
 * @sg: subgroup (the consumer holds its own reference)
 * @ops: callbacks; ->deliver is required
 * @priv: passed back to them
 *
 * The consumer sees every message delivered from now on.  While a subgroup
 * has no consumer, deliverable messages wait for one.
 * Context: process context.
 * Return: the consumer, or an ERR_PTR.
 */
struct spindle_consumer *spindle_attach(struct spindle_sg *sg,
					const struct spindle_consumer_ops *ops,
					void *priv)
{
	struct spindle_consumer *c;

	if (!ops || !ops->deliver)
		return ERR_PTR(-EINVAL);
	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		return ERR_PTR(-ENOMEM);
	kref_get(&sg->ref);
	c->sg = sg;
	c->ops = ops;
	c->priv = priv;
	spin_lock(&sg->cons_lock);
	c->given = sg->eng.dl_descs;
	atomic64_set(&c->released, c->given);
	list_add_tail(&c->node, &sg->consumers);
	sg->nconsumers++;
	spin_unlock(&sg->cons_lock);
	spindle_sg_kick(sg);
	return c;
}
EXPORT_SYMBOL_GPL(spindle_attach);

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
		spindle_sg_kick(c->sg);
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
	struct spindle_sg *sg = c->sg;

	spin_lock(&sg->cons_lock);
	list_del(&c->node);
	sg->nconsumers--;
	spin_unlock(&sg->cons_lock);
	spindle_sg_kick(sg);
	kfree(c);
	spindle_sg_put(sg);
}
EXPORT_SYMBOL_GPL(spindle_detach);
