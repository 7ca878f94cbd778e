// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Views and the ragged trim: see view.h. */
#include "view.h"
#include "order.h"
#include "ring.h"

/**
 * sp_view_has_majority - may a view change from @old to @next go on?
 * @old: members of the view that ends
 * @next: its survivors (joiners not counted)
 * @two_member_override: the per-group option for groups of two
 */
bool sp_view_has_majority(sp_mask_t old, sp_mask_t next, bool two_member_override)
{
	u32 n = sp_mask_count(old), s = sp_mask_count(next & old);

	if (2 * s > n)
		return true;
	/* two members, one left: only by choice, and only the lower ranked */
	return two_member_override && n == 2 && s == 1 &&
	       sp_mask_first(next & old) == sp_mask_first(old);
}

static u32 sp_filter(const u32 *ids, u32 n, const struct sp_group_cfg *cfg,
		     sp_mask_t members, u32 *out)
{
	u32 i, k = 0;

	for (i = 0; i < n; i++) {
		int idx = sp_cfg_member_index(cfg, ids[i]);

		if (idx >= 0 && sp_mask_has(members, (u32)idx))
			out[k++] = ids[i];
	}
	return k;
}

/**
 * sp_view_config - the configuration a view runs with
 * @cfg: the group's configuration
 * @members: the view's members
 * @out: @cfg with everyone else taken out of every subgroup
 */
void sp_view_config(const struct sp_group_cfg *cfg, sp_mask_t members,
		    struct sp_group_cfg *out)
{
	u32 s;

	*out = *cfg;
	for (s = 0; s < cfg->nsubgroups; s++) {
		const struct sp_sub_cfg *in = &cfg->subgroups[s];
		struct sp_sub_cfg *o = &out->subgroups[s];

		memset(o->members, 0, sizeof(o->members));
		memset(o->senders, 0, sizeof(o->senders));
		o->nmembers = sp_filter(in->members, in->nmembers, cfg, members, o->members);
		o->nsenders = sp_filter(in->senders, in->nsenders, cfg, members, o->senders);
	}
}

/**
 * sp_sub_deliver_trim - deliver what is left of a view, up to the trim
 * @sub: engine state of the view that ends (wedged: nothing more published)
 * @trim: per sender rank, the messages every survivor has; each at most
 *	what this node received (the caller checked)
 * @out: descriptors of the data messages delivered
 * @max: room in @out
 *
 * Ordered mode goes on in sequence order; a sender's messages past its
 * trim are not part of the history: their sequence numbers are skipped.
 * Unordered mode delivers each sender's messages up to its trim.  Call
 * until it returns 0.  Return: descriptors written.
 */
u32 sp_sub_deliver_trim(struct sp_sub *sub, const u64 *trim, struct sp_desc *out,
			u32 max)
{
	u32 room = sub->log_size - (u32)(sub->dl_descs - sub->rel_descs);
	struct sp_desc d;
	u32 n = 0, r, left;

	if (max > room)
		max = room;
	if (sub->mode == SP_MODE_ORDERED) {
		for (;;) {
			for (left = 0, r = 0; r < sub->nsenders; r++)
				left += sub->rx[r].dl_idx < trim[r];
			if (!left)
				break;
			r = sub->dl_rank;
			if (sub->rx[r].dl_idx < trim[r]) {
				if (n == max && sp_sub_next_is_data(sub, r))
					break;
				if (sp_sub_step(sub, r, &d)) {
					d.seq = sub->dl_seq;
					sp_sub_log(sub, &d);
					out[n++] = d;
				}
			}
			sub->dl_seq++;
			if (++sub->dl_rank == sub->nsenders)
				sub->dl_rank = 0;
		}
	} else {
		for (r = 0; r < sub->nsenders; r++) {
			while (sub->rx[r].dl_idx < trim[r]) {
				if (n == max && sp_sub_next_is_data(sub, r))
					break;
				if (sp_sub_step(sub, r, &d)) {
					d.seq = sp_seq(r, d.index, sub->nsenders);
					sp_sub_log(sub, &d);
					out[n++] = d;
				}
			}
		}
	}
	sub->stats.msgs_delivered += n;
	return n;
}

/**
 * sp_sub_next_bases - where a subgroup's numbering stands after a view
 * @cfg: the group's configuration
 * @s: the subgroup
 * @members: the members of the view that ends
 * @trim: its committed trim of @s, by configured sender rank
 * @b: the bases of the view that ends; on return, those of the next
 *
 * Each sender's messages go on after its trim.  Ordered mode's sequence
 * goes on where delivering the trim leaves it (sp_sub_deliver_trim()): one
 * past the last message under the trim, in the round-robin order of the
 * senders the view had.  It needs nothing but the commit, so every member
 * computes the same, in the subgroup or not, and a joiner can take them
 * from any member that stays.  Sums wrap (a hostile trim gives wrong
 * numbers, nothing worse; the subgroup's members refuse such a trim).
 */
void sp_sub_next_bases(const struct sp_group_cfg *cfg, u32 s, sp_mask_t members,
		       const u64 *trim, struct sp_bases *b)
{
	const struct sp_sub_cfg *sc = &cfg->subgroups[s];
	u32 ids[SP_MAX_MEMBERS];
	u32 n, q, e = 0;
	u64 end = 0;

	n = sp_filter(sc->senders, sc->nsenders, cfg, members, ids);
	for (q = 0; q < sc->nsenders; q++) {
		b->idx[q] += trim[q];
		if (e == n || ids[e] != sc->senders[q])
			continue;	/* not a sender of the view */
		if (trim[q] && sp_seq(e, trim[q] - 1, n) >= end)
			end = sp_seq(e, trim[q] - 1, n) + 1;
		e++;
	}
	if (sc->mode == SP_MODE_ORDERED)
		b->seq += end;
}
