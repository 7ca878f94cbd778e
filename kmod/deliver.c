// SPDX-License-Identifier: GPL-2.0
/*
 * Delivery to a subgroup's consumers (the char device's files, kernel
 * users of the API): batches handed over in the numbering users see, what
 * every consumer released given back to the engine, the trim's last
 * deliveries and the view record at a view change.  Under cons_lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "subgroup.h"
#include "region.h"
#include "proto/order.h"
#include "proto/view.h"
#include "trace.h"

/* Give back what every consumer released (cons_lock held). */
static void spindle_sub_floor(struct spindle_subgroup *sub)
{
	struct spindle_consumer *c;
	u64 floor = U64_MAX;

	lockdep_assert_held(&sub->cons_lock);
	if (list_empty(&sub->consumers))
		return;
	list_for_each_entry(c, &sub->consumers, node)
		floor = min_t(u64, floor, atomic64_read(&c->released));
	sp_sub_release(&sub->eng, floor);
}

/* With no consumer, nobody holds what was delivered: give it all back. */
static void spindle_sub_release_unheld(struct spindle_subgroup *sub)
{
	lockdep_assert_held(&sub->cons_lock);
	if (list_empty(&sub->consumers))
		sp_sub_release(&sub->eng, sub->eng.dl_descs);
}

/*
 * Hand @n engine descriptors to every consumer, in the numbering users
 * see: configured ranks, and indices and sequence numbers that go on
 * across views (cons_lock held).
 */
static void spindle_sub_hand(struct spindle_subgroup *sub, u32 n)
{
	struct sp_sub *e = &sub->eng;
	struct spindle_consumer *c;
	u32 i;

	lockdep_assert_held(&sub->cons_lock);
	for (i = 0; i < n; i++) {
		const struct sp_desc *d = &sub->descs[i];
		struct spindle_msg *m = &sub->batch[i];
		u32 r = sub->cfg_rank[d->rank];

		m->index = sub->base.idx[r] + d->index;
		m->seq = e->mode == SP_MODE_ORDERED ? sub->base.seq + d->seq :
			 sp_seq(r, m->index, sub->cfg.nsenders);
		m->offset = sp_sub_payload_offset(e, d->pay_pos);
		m->data = sub->pay[r]->vaddr + m->offset;
		m->len = d->len;
		m->rank = r;
		m->sender_id = sub->rank_id[r];
		if ((s32)r == sub->my_rank)
			sub->own_delivered++;
	}
	sub->handed += n;
	if (!n)
		return;
	trace_spindle_deliver_batch(sub->group_id, sub->id, sub->batch[0].seq, n);
	list_for_each_entry(c, &sub->consumers, node) {
		WRITE_ONCE(c->given, e->dl_descs);
		c->ops->deliver(c, c->priv, sub->batch, n);
	}
}

/**
 * spindle_sub_deliver_upto - deliver what is left of a view, up to the trim
 * @sub: subgroup, wedged
 * @trim: per engine rank
 *
 * With no consumer, what is delivered is dropped at once.
 * Return: whether everything up to the trim was delivered.
 */
bool spindle_sub_deliver_upto(struct spindle_subgroup *sub, const u64 *trim)
{
	struct sp_sub *e = &sub->eng;
	bool done = true;
	u32 n, r;

	spin_lock(&sub->cons_lock);
	do {
		spindle_sub_floor(sub);
		spindle_sub_release_unheld(sub);
		n = sp_sub_deliver_trim(e, trim, sub->descs, e->log_size);
		spindle_sub_hand(sub, n);
		spindle_sub_release_unheld(sub);
	} while (n);
	for (r = 0; r < e->nsenders; r++)
		if (e->rx[r].dl_idx < trim[r])
			done = false;
	spin_unlock(&sub->cons_lock);
	return done;
}

/**
 * spindle_sub_deliver_view - tell every consumer of the new view
 * @sub: subgroup, its old view delivered up to the trim (or joining)
 * @view: the new view's id
 * @members: its members
 */
void spindle_sub_deliver_view(struct spindle_subgroup *sub, u64 view, u64 members)
{
	struct spindle_view_rec rec = {
		.view_id = view,
		.members = members,
		.nmembers = sp_mask_count(members),
		.joined = READ_ONCE(sub->joined),
	};
	struct spindle_consumer *c;

	spin_lock(&sub->cons_lock);
	rec.own_delivered = sub->own_delivered;
	list_for_each_entry(c, &sub->consumers, node)
		if (c->ops->view)
			c->ops->view(c, c->priv, &rec);
	spin_unlock(&sub->cons_lock);
	wake_up_all(&sub->recv_wq);
}

/* Has every consumer given back everything delivered to it? */
bool spindle_sub_quiet(struct spindle_subgroup *sub)
{
	bool quiet;

	spin_lock(&sub->cons_lock);
	spindle_sub_floor(sub);
	spindle_sub_release_unheld(sub);
	quiet = sub->eng.dl_descs == sub->eng.rel_descs;
	spin_unlock(&sub->cons_lock);
	return quiet;
}

/* A new engine counts descriptors from 0: so do its consumers. */
void spindle_sub_consumers_reset(struct spindle_subgroup *sub)
{
	struct spindle_consumer *c;

	spin_lock(&sub->cons_lock);
	list_for_each_entry(c, &sub->consumers, node) {
		WRITE_ONCE(c->given, 0);
		atomic64_set(&c->released, 0);
	}
	spin_unlock(&sub->cons_lock);
}

/*
 * Hand up to @max messages to every consumer; with none, data waits and
 * nulls pass.  Returns whether anything moved.  Not while wedged: the
 * trim decides what is left.
 */
int spindle_sub_deliver(struct spindle_subgroup *sub, u32 max)
{
	struct sp_sub *e = &sub->eng;
	u64 before = e->rel_descs;
	u32 n;

	spin_lock(&sub->cons_lock);
	if (list_empty(&sub->consumers)) {
		/*
		 * Nobody holds what was delivered before the last consumer
		 * left; data waits for the next one, nulls pass.
		 */
		u64 passed = e->dl_passed;

		sp_sub_release(e, e->dl_descs);
		/* (with none to hand them to, no data may leave: handed) */
		WARN_ON_ONCE(sp_sub_deliver(e, sub->descs, 0));
		spin_unlock(&sub->cons_lock);
		return e->rel_descs != before || e->dl_passed != passed;
	}
	spindle_sub_floor(sub);
	n = sp_sub_deliver(e, sub->descs, max);
	spindle_sub_hand(sub, n);
	spin_unlock(&sub->cons_lock);
	return n + (e->rel_descs != before);
}
