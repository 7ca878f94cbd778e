// SPDX-License-Identifier: GPL-2.0
/*
 * The producer page: sending with no system call while the predicate
 * thread runs (the protocol is in uapi/linux/spindle.h, struct
 * spindle_producer).  One file per subgroup may hold it.  Everything the
 * process writes there (tail, lengths) is read once and checked; the
 * kernel's own copies are what count.  All of this runs under sub->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "group.h"
#include "subgroup.h"
#include "region.h"
#include "proto/ring.h"

/* the uapi's layout of the page: userspace maps it at this size */
static_assert(sizeof(struct spindle_producer) == 128);

size_t spindle_producer_size(const struct spindle_subgroup *sub)
{
	if (sub->my_rank < 0)
		return 0;
	return PAGE_ALIGN(sizeof(struct spindle_producer) +
			  sub->cfg.window * sizeof(u32));
}

static struct spindle_producer *spindle_prod_page(struct spindle_subgroup *sub)
{
	return sub->prod_reg->vaddr;
}

/*
 * Publish the limit: positions before it may be filled.  It opens only
 * while the group is active, when the predicate thread takes what is
 * filled: a process must not fill what nobody will take.
 */
void spindle_producer_limit(struct spindle_subgroup *sub)
{
	u64 limit;

	lockdep_assert_held(&sub->lock);
	if (!sub->prod_reg || sub->prod_stale)
		return;
	limit = sub->prod_tail;
	if (spindle_sub_state(sub) == SPINDLE_GROUP_ACTIVE)
		limit = sub->pos_base + sub->eng.pay_freed + sub->cfg.window;
	if (limit > sub->prod_limit) {
		sub->prod_limit = limit;
		WRITE_ONCE(spindle_prod_page(sub)->limit, limit);
		wake_up_all(&sub->send_wq);
	}
}

static void spindle_producer_break(struct spindle_subgroup *sub, const char *what, u64 val)
{
	struct spindle_producer *p = spindle_prod_page(sub);

	sub->prod_broken = true;
	WRITE_ONCE(p->flags, READ_ONCE(p->flags) | SPINDLE_PRODUCER_BROKEN);
	pr_warn_ratelimited("group %u subgroup %u: the producer wrote a bad %s (%llu): nothing more is taken from it\n",
			    sub->group_id, sub->id, what, val);
}

/**
 * spindle_producer_take - mark ready what the producer has filled
 * @sub: subgroup, sub->lock held
 *
 * Return: positions taken.
 */
int spindle_producer_take(struct spindle_subgroup *sub)
{
	struct sp_sub *e = &sub->eng;
	struct spindle_producer *p;
	u64 tail, pos, first;
	u32 n, len;

	lockdep_assert_held(&sub->lock);
	if (!sub->prod_reg || sub->prod_broken || sub->prod_stale || e->wedged)
		return 0;
	p = spindle_prod_page(sub);
	/* pairs with the process's release store of tail */
	tail = smp_load_acquire(&p->tail);
	if (tail == sub->prod_tail)
		return 0;
	if (tail < sub->prod_tail || tail - sub->pos_base - e->pay_freed > e->window) {
		spindle_producer_break(sub, "tail", tail);
		return 0;
	}
	tail -= sub->pos_base;		/* engine positions from here */
	n = sp_sub_reserve(e, (u32)(tail - (sub->prod_tail - sub->pos_base)), &first);
	if (WARN_ON_ONCE(first + sub->pos_base != sub->prod_tail || first + n != tail)) {
		spindle_producer_break(sub, "tail", tail);
		return 0;
	}
	for (pos = first; pos < tail; pos++) {
		len = READ_ONCE(SPINDLE_PRODUCER_LENS(p)[sp_ring_slot(pos, e->window)]);
		if (len != SPINDLE_LEN_VOID && len > e->max_msg) {
			spindle_producer_break(sub, "length", len);
			len = SPINDLE_LEN_VOID;
		}
		if (len == SPINDLE_LEN_VOID)
			sp_sub_void(e, pos);
		else
			sp_sub_mark_ready(e, pos, len);
		if (sub->prod_broken) {
			/* void the rest of the reservation: it was taken */
			while (++pos < tail)
				sp_sub_void(e, pos);
			break;
		}
	}
	sub->prod_tail = tail + sub->pos_base;
	WRITE_ONCE(p->head, sub->prod_tail);
	return (int)n;
}

/**
 * spindle_producer_attach - make @owner the subgroup's producer
 * @sub: subgroup this node sends in
 * @owner: the file
 *
 * Return: 0, -EBUSY (another producer, or reservations outstanding), -ENOMEM.
 */
int spindle_producer_attach(struct spindle_subgroup *sub, const void *owner)
{
	struct spindle_region *reg;
	struct spindle_producer *p;
	int ret = 0;

	reg = spindle_region_alloc(spindle_producer_size(sub));
	if (!reg)
		return -ENOMEM;
	spin_lock_bh(&sub->lock);
	if (sub->prod_owner) {
		ret = sub->prod_owner == owner ? 0 : -EBUSY;
	} else if (sp_sub_reservations_held(&sub->eng)) {
		ret = -EBUSY;	/* a file holds reservations */
	} else {
		p = reg->vaddr;
		sub->prod_reg = reg;
		sub->prod_owner = owner;
		sub->prod_broken = false;
		sub->prod_stale = false;
		sub->prod_tail = sub->pos_base + sub->eng.pay_reserved;
		sub->prod_limit = 0;
		p->tail = sub->prod_tail;
		p->head = sub->prod_tail;
		spindle_producer_limit(sub);
		reg = NULL;
	}
	spin_unlock_bh(&sub->lock);
	spindle_region_put(reg);
	return ret;
}

/**
 * spindle_producer_detach - the producer's file goes away
 * @sub: subgroup
 * @owner: the file; nothing happens unless it is the producer
 *
 * What it filled and published in the page is still taken and sent.
 */
void spindle_producer_detach(struct spindle_subgroup *sub, const void *owner)
{
	struct spindle_region *reg = NULL;

	spin_lock_bh(&sub->lock);
	if (sub->prod_owner == owner) {
		spindle_producer_take(sub);
		reg = sub->prod_reg;
		sub->prod_reg = NULL;
		sub->prod_owner = NULL;
	}
	spin_unlock_bh(&sub->lock);
	if (reg)
		spindle_sub_kick(sub);
	spindle_region_put(reg);
}

/**
 * spindle_producer_sleep - the predicate thread is about to park
 * @sub: subgroup
 * @sleep: true to ask for a wake-up call, false (after waking) to stop
 *
 * Return: true if the producer has filled more meanwhile, and the
 * predicate thread will take it (do not park).
 */
bool spindle_producer_sleep(struct spindle_subgroup *sub, bool sleep)
{
	struct spindle_producer *p;
	bool more = false;
	u32 flags;

	spin_lock_bh(&sub->lock);
	if (sub->prod_reg && !sub->prod_broken) {
		p = spindle_prod_page(sub);
		flags = READ_ONCE(p->flags) & ~SPINDLE_PRODUCER_NEED_WAKEUP;
		if (sleep)
			flags |= SPINDLE_PRODUCER_NEED_WAKEUP;
		WRITE_ONCE(p->flags, flags);
		/* the flag before the tail: pairs with the process's barrier */
		smp_mb();
		more = sleep && READ_ONCE(p->tail) != sub->prod_tail &&
		       spindle_sub_state(sub) == SPINDLE_GROUP_ACTIVE &&
		       !READ_ONCE(spindle_sub_group(sub)->stopping);
	}
	spin_unlock_bh(&sub->lock);
	return more;
}

/**
 * spindle_producer_reset - a view change voids what the page holds
 * @sub: subgroup, its new engine in place; sub->lock held
 *
 * The page says SPINDLE_PRODUCER_STALE and its limit drops to 0, so that
 * the process stops filling and asks (SPINDLE_IOC_WAKE) where to go on.
 */
void spindle_producer_reset(struct spindle_subgroup *sub)
{
	struct spindle_producer *p;

	lockdep_assert_held(&sub->lock);
	if (!sub->prod_reg)
		return;
	p = spindle_prod_page(sub);
	sub->prod_stale = true;
	sub->prod_tail = sub->pos_base;
	sub->prod_limit = 0;
	WRITE_ONCE(p->limit, 0);
	WRITE_ONCE(p->flags, READ_ONCE(p->flags) | SPINDLE_PRODUCER_STALE);
}

/**
 * spindle_producer_resync - the process asks where to go on after a reset
 * @sub: subgroup; sub->lock held, the caller is the page's owner
 *
 * Return: -ESTALE once after a reset (tail and head now say where), else 0.
 */
int spindle_producer_resync(struct spindle_subgroup *sub)
{
	struct spindle_producer *p;

	lockdep_assert_held(&sub->lock);
	if (!sub->prod_reg || !sub->prod_stale)
		return 0;
	p = spindle_prod_page(sub);
	WRITE_ONCE(p->head, sub->prod_tail);
	/* pairs with the process's acquire of tail after ESTALE */
	smp_store_release(&p->tail, sub->prod_tail);
	sub->prod_stale = false;
	WRITE_ONCE(p->flags, READ_ONCE(p->flags) & ~SPINDLE_PRODUCER_STALE);
	spindle_producer_limit(sub);
	return -ESTALE;
}
