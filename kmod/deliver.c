// SPDX-License-Identifier: GPL-2.0
/*
 * Delivery to a subgroup's consumers (the char device's files, kernel
 * users of the API): batches handed over in the numbering users see, what
 * every consumer released given back to the engine, the trim's last
 * deliveries and the view record at a view change.  Under cons_lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "spindle.h"
#include "proto/order.h"
#include "proto/view.h"
#include "trace.h"

/* Give back what every consumer released (cons_lock held). */
static void spindle_sg_floor(struct spindle_sg *sg)
{
	struct spindle_consumer *c;
	u64 floor = U64_MAX;

	lockdep_assert_held(&sg->cons_lock);
	if (list_empty(&sg->consumers))
		return;
	list_for_each_entry(c, &sg->consumers, node)
		floor = min_t(u64, floor, atomic64_read(&c->released));
	sp_sg_release(&sg->eng, floor);
}

/*
 * Hand @n engine descriptors to every consumer, in the numbering users
 * see: configured ranks, and indices and sequence numbers that go on
 * across views (cons_lock held).
 */
static void spindle_sg_hand(struct spindle_sg *sg, u32 n)
{
	struct sp_sg *e = &sg->eng;
	struct spindle_consumer *c;
	u32 i;

	lockdep_assert_held(&sg->cons_lock);
	for (i = 0; i < n; i++) {
		const struct sp_desc *d = &sg->descs[i];
		struct spindle_msg *m = &sg->batch[i];
		u32 r = sg->cfg_rank[d->rank];

		m->index = sg->idx_base[r] + d->index;
		m->seq = e->mode == SP_MODE_ORDERED ? sg->seq_base + d->seq :
			 sp_seq(r, m->index, sg->cfg.nsenders);
		m->offset = sp_sg_payload_offset(e, d->pay_pos);
		m->data = sg->pay[r]->vaddr + m->offset;
		m->len = d->len;
		m->rank = r;
		m->sender_id = sg->rank_id[r];
		if ((s32)r == sg->my_rank)
			sg->own_delivered++;
	}
	if (!n)
		return;
	trace_spindle_deliver_batch(sg->group_id, sg->id, sg->batch[0].seq, n);
	list_for_each_entry(c, &sg->consumers, node) {
		WRITE_ONCE(c->given, e->dl_descs);
		c->ops->deliver(c, c->priv, sg->batch, n);
	}
}

/**
 * spindle_sg_deliver_upto - deliver what is left of a view, up to the trim
 * @sg: subgroup, wedged
 * @trim: per engine rank
 *
 * With no consumer, what is delivered is dropped at once.
 * Return: whether everything up to the trim was delivered.
 */
bool spindle_sg_deliver_upto(struct spindle_sg *sg, const u64 *trim)
{
	struct sp_sg *e = &sg->eng;
	bool done = true;
	u32 n, r;

	spin_lock(&sg->cons_lock);
	do {
		spindle_sg_floor(sg);
		if (list_empty(&sg->consumers))
			sp_sg_release(e, e->dl_descs);
		n = sp_sg_deliver_trim(e, trim, sg->descs, e->log_size);
		spindle_sg_hand(sg, n);
		if (list_empty(&sg->consumers))
			sp_sg_release(e, e->dl_descs);
	} while (n);
	for (r = 0; r < e->nsenders; r++)
		if (e->rx[r].dl_idx < trim[r])
			done = false;
	spin_unlock(&sg->cons_lock);
	return done;
}

/**
 * spindle_sg_deliver_view - tell every consumer of the new view
 * @sg: subgroup, its old view delivered up to the trim (or joining)
 * @view: the new view's id
 * @members: its members
 */
void spindle_sg_deliver_view(struct spindle_sg *sg, u64 view, u64 members)
{
	struct spindle_view_rec rec = {
		.view_id = view,
		.members = members,
		.nmembers = sp_mask_count(members),
	};
	struct spindle_consumer *c;

	spin_lock(&sg->cons_lock);
	rec.own_delivered = sg->own_delivered;
	list_for_each_entry(c, &sg->consumers, node)
		if (c->ops->view)
			c->ops->view(c, c->priv, &rec);
	spin_unlock(&sg->cons_lock);
	wake_up_all(&sg->recv_wq);
}

/* Has every consumer given back everything delivered to it? */
bool spindle_sg_quiet(struct spindle_sg *sg)
{
	bool quiet;

	spin_lock(&sg->cons_lock);
	spindle_sg_floor(sg);
	if (list_empty(&sg->consumers))
		sp_sg_release(&sg->eng, sg->eng.dl_descs);
	quiet = sg->eng.dl_descs == sg->eng.rel_descs;
	spin_unlock(&sg->cons_lock);
	return quiet;
}

/* A new engine counts descriptors from 0: so do its consumers. */
void spindle_sg_consumers_reset(struct spindle_sg *sg)
{
	struct spindle_consumer *c;

	spin_lock(&sg->cons_lock);
	list_for_each_entry(c, &sg->consumers, node) {
		WRITE_ONCE(c->given, 0);
		atomic64_set(&c->released, 0);
	}
	spin_unlock(&sg->cons_lock);
}

/*
 * Hand up to @max messages to every consumer; with none, data waits and
 * nulls pass.  Returns whether anything moved.  Not while wedged: the
 * trim decides what is left.
 */
int spindle_sg_deliver(struct spindle_sg *sg, u32 max)
{
	struct sp_sg *e = &sg->eng;
	u64 before = e->rel_descs;
	u32 n;

	spin_lock(&sg->cons_lock);
	if (list_empty(&sg->consumers)) {
		/*
		 * Nobody holds what was delivered before the last consumer
		 * left; data waits for the next one, nulls pass.
		 */
		u64 passed = e->dl_passed;

		sp_sg_release(e, e->dl_descs);
		sp_sg_deliver(e, sg->descs, 0);
		spin_unlock(&sg->cons_lock);
		return e->rel_descs != before || e->dl_passed != passed;
	}
	spindle_sg_floor(sg);
	n = sp_sg_deliver(e, sg->descs, max);
	spindle_sg_hand(sg, n);
	spin_unlock(&sg->cons_lock);
	return n + (e->rel_descs != before);
}
