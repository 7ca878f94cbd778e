// SPDX-License-Identifier: GPL-2.0
/*
 * The producer page: sending with no system call while the predicate
 * thread runs (the protocol is in uapi/linux/spindle.h, struct
 * spindle_producer).  One file per subgroup may hold it.  Everything the
 * process writes there (tail, lengths) is read once and checked; the
 * kernel's own copies are what count.  All of this runs under sg->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "spindle.h"
#include "proto/ring.h"

size_t spindle_producer_size(const struct spindle_sg *sg)
{
	if (sg->my_rank < 0)
		return 0;
	return PAGE_ALIGN(sizeof(struct spindle_producer) +
			  sg->cfg.window * sizeof(u32));
}

static struct spindle_producer *spindle_prod_page(struct spindle_sg *sg)
{
	return sg->prod_reg->vaddr;
}

/*
 * Publish the limit: positions before it may be filled.  It opens only
 * while the group is active, when the predicate thread takes what is
 * filled: a process must not fill what nobody will take.
 */
void spindle_producer_limit(struct spindle_sg *sg)
{
	u64 limit;

	lockdep_assert_held(&sg->lock);
	if (!sg->prod_reg || sg->prod_stale)
		return;
	limit = sg->prod_tail;
	if (spindle_sg_state(sg) == SPINDLE_GROUP_ACTIVE)
		limit = sg->pos_base + sg->eng.pay_freed + sg->cfg.window;
	if (limit > sg->prod_limit) {
		sg->prod_limit = limit;
		WRITE_ONCE(spindle_prod_page(sg)->limit, limit);
		wake_up_all(&sg->send_wq);
	}
}

static void spindle_producer_break(struct spindle_sg *sg, const char *what, u64 val)
{
	struct spindle_producer *p = spindle_prod_page(sg);

	sg->prod_broken = true;
	WRITE_ONCE(p->flags, READ_ONCE(p->flags) | SPINDLE_PRODUCER_BROKEN);
	pr_warn_ratelimited("group %u subgroup %u: the producer wrote a bad %s (%llu): nothing more is taken from it\n",
			    sg->group_id, sg->id, what, val);
}

/**
 * spindle_producer_take - mark ready what the producer has filled
 * @sg: subgroup, sg->lock held
 *
 * Return: positions taken.
 */
int spindle_producer_take(struct spindle_sg *sg)
{
	struct sp_sg *e = &sg->eng;
	struct spindle_producer *p;
	u64 tail, pos, first;
	u32 n, len;

	lockdep_assert_held(&sg->lock);
	if (!sg->prod_reg || sg->prod_broken || sg->prod_stale || e->wedged)
		return 0;
	p = spindle_prod_page(sg);
	/* pairs with the process's release store of tail */
	tail = smp_load_acquire(&p->tail);
	if (tail == sg->prod_tail)
		return 0;
	if (tail < sg->prod_tail || tail - sg->pos_base - e->pay_freed > e->window) {
		spindle_producer_break(sg, "tail", tail);
		return 0;
	}
	tail -= sg->pos_base;		/* engine positions from here */
	n = sp_sg_reserve(e, (u32)(tail - (sg->prod_tail - sg->pos_base)), &first);
	if (WARN_ON_ONCE(first + sg->pos_base != sg->prod_tail || first + n != tail)) {
		spindle_producer_break(sg, "tail", tail);
		return 0;
	}
	for (pos = first; pos < tail; pos++) {
		len = READ_ONCE(SPINDLE_PRODUCER_LENS(p)[sp_ring_slot(pos, e->window)]);
		if (len != SPINDLE_LEN_VOID && len > e->max_msg) {
			spindle_producer_break(sg, "length", len);
			len = SPINDLE_LEN_VOID;
		}
		if (len == SPINDLE_LEN_VOID)
			sp_sg_void(e, pos);
		else
			sp_sg_mark_ready(e, pos, len);
		if (sg->prod_broken) {
			/* void the rest of the reservation: it was taken */
			while (++pos < tail)
				sp_sg_void(e, pos);
			break;
		}
	}
	sg->prod_tail = tail + sg->pos_base;
	WRITE_ONCE(p->head, sg->prod_tail);
	return (int)n;
}

/**
 * spindle_producer_attach - make @owner the subgroup's producer
 * @sg: subgroup this node sends in
 * @owner: the file
 *
 * Return: 0, -EBUSY (another producer, or reservations outstanding), -ENOMEM.
 */
int spindle_producer_attach(struct spindle_sg *sg, const void *owner)
{
	struct spindle_region *reg;
	struct spindle_producer *p;
	int ret = 0;

	reg = spindle_region_alloc(spindle_producer_size(sg));
	if (!reg)
		return -ENOMEM;
	spin_lock_bh(&sg->lock);
	if (sg->prod_owner) {
		ret = sg->prod_owner == owner ? 0 : -EBUSY;
	} else if (sp_sg_reservations_held(&sg->eng)) {
		ret = -EBUSY;	/* a file holds reservations */
	} else {
		p = reg->vaddr;
		sg->prod_reg = reg;
		sg->prod_owner = owner;
		sg->prod_broken = false;
		sg->prod_stale = false;
		sg->prod_tail = sg->pos_base + sg->eng.pay_reserved;
		sg->prod_limit = 0;
		p->tail = sg->prod_tail;
		p->head = sg->prod_tail;
		spindle_producer_limit(sg);
		reg = NULL;
	}
	spin_unlock_bh(&sg->lock);
	spindle_region_put(reg);
	return ret;
}

/**
 * spindle_producer_detach - the producer's file goes away
 * @sg: subgroup
 * @owner: the file; nothing happens unless it is the producer
 *
 * What it filled and published in the page is still taken and sent.
 */
void spindle_producer_detach(struct spindle_sg *sg, const void *owner)
{
	struct spindle_region *reg = NULL;

	spin_lock_bh(&sg->lock);
	if (sg->prod_owner == owner) {
		spindle_producer_take(sg);
		reg = sg->prod_reg;
		sg->prod_reg = NULL;
		sg->prod_owner = NULL;
	}
	spin_unlock_bh(&sg->lock);
	if (reg)
		spindle_sg_kick(sg);
	spindle_region_put(reg);
}

/**
 * spindle_producer_sleep - the predicate thread is about to park
 * @sg: subgroup
 * @sleep: true to ask for a wake-up call, false (after waking) to stop
 *
 * Return: true if the producer has filled more meanwhile, and the
 * predicate thread will take it (do not park).
 */
bool spindle_producer_sleep(struct spindle_sg *sg, bool sleep)
{
	struct spindle_producer *p;
	bool more = false;
	u32 flags;

	spin_lock_bh(&sg->lock);
	if (sg->prod_reg && !sg->prod_broken) {
		p = spindle_prod_page(sg);
		flags = READ_ONCE(p->flags) & ~SPINDLE_PRODUCER_NEED_WAKEUP;
		if (sleep)
			flags |= SPINDLE_PRODUCER_NEED_WAKEUP;
		WRITE_ONCE(p->flags, flags);
		/* the flag before the tail: pairs with the process's barrier */
		smp_mb();
		more = sleep && READ_ONCE(p->tail) != sg->prod_tail &&
		       spindle_sg_state(sg) == SPINDLE_GROUP_ACTIVE &&
		       !READ_ONCE(spindle_sg_group(sg)->stopping);
	}
	spin_unlock_bh(&sg->lock);
	return more;
}

/**
 * spindle_producer_reset - a view change voids what the page holds
 * @sg: subgroup, its new engine in place; sg->lock held
 *
 * The page says SPINDLE_PRODUCER_STALE and its limit drops to 0, so that
 * the process stops filling and asks (SPINDLE_IOC_WAKE) where to go on.
 */
void spindle_producer_reset(struct spindle_sg *sg)
{
	struct spindle_producer *p;

	lockdep_assert_held(&sg->lock);
	if (!sg->prod_reg)
		return;
	p = spindle_prod_page(sg);
	sg->prod_stale = true;
	sg->prod_tail = sg->pos_base;
	sg->prod_limit = 0;
	WRITE_ONCE(p->limit, 0);
	WRITE_ONCE(p->flags, READ_ONCE(p->flags) | SPINDLE_PRODUCER_STALE);
}

/**
 * spindle_producer_resync - the process asks where to go on after a reset
 * @sg: subgroup; sg->lock held, the caller is the page's owner
 *
 * Return: -ESTALE once after a reset (tail and head now say where), else 0.
 */
int spindle_producer_resync(struct spindle_sg *sg)
{
	struct spindle_producer *p;

	lockdep_assert_held(&sg->lock);
	if (!sg->prod_reg || !sg->prod_stale)
		return 0;
	p = spindle_prod_page(sg);
	WRITE_ONCE(p->head, sg->prod_tail);
	/* pairs with the process's acquire of tail after ESTALE */
	smp_store_release(&p->tail, sg->prod_tail);
	sg->prod_stale = false;
	WRITE_ONCE(p->flags, READ_ONCE(p->flags) & ~SPINDLE_PRODUCER_STALE);
	spindle_producer_limit(sg);
	return -ESTALE;
}
