/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Views: membership changes, and the ragged trim that makes a failure
 * atomic (Derecho's view change, as the Spindle paper assumes it).
 *
 * A view is a set of the configured members (a bit mask over member
 * indices) with an id that only grows.  When members fail, the survivors
 * stop sending (wedge); the leader, the lowest-ranked member nobody
 * suspects, takes for each subgroup and sender the minimum over the
 * survivors of the messages received: the ragged trim.  Every survivor has
 * every message under the trim, so every survivor can deliver all of them,
 * and none beyond it: delivered at all survivors or at none.
 *
 * Safety rests on one rule of the view change (vc.h): a trim is applied
 * (delivered up to) only once it is committed, and a commit is final.  A
 * later leader, over fewer survivors and later counts, may find a longer
 * trim than an earlier leader proposed; that is safe only because the
 * earlier proposal was never applied anywhere (and once every survivor
 * echoed one, any later leader adopts it rather than its own).  Trims are
 * not monotone in themselves: had a member delivered under a shorter
 * trim, a longer one would deliver, in ordered mode, messages that belong
 * in the round-robin order before ones it already delivered.
 */
#ifndef SPINDLE_PROTO_VIEW_H
#define SPINDLE_PROTO_VIEW_H

#include "config.h"
#include "engine.h"

typedef u64 sp_mask_t;		/* bit i: configured member index i */

static inline bool sp_mask_has(sp_mask_t m, u32 i)
{
	return (m >> i) & 1;
}

static inline u32 sp_mask_count(sp_mask_t m)
{
	u32 n = 0;

	for (; m; m &= m - 1)
		n++;
	return n;
}

/* The lowest member index in @m, or -1. */
static inline int sp_mask_first(sp_mask_t m)
{
	int i;

	for (i = 0; i < 64; i++)
		if (sp_mask_has(m, i))
			return i;
	return -1;
}

/*
 * Majority rule: a view change from @old to the survivors @next may go on
 * only if they are more than half of @old.  With @two_member_override, a
 * group of two where one survives may go on if the survivor is the lower
 * ranked (the risk: a partition, not a failure, makes both go on alone).
 */
bool sp_view_has_majority(sp_mask_t old, sp_mask_t next, bool two_member_override);

/*
 * The effective configuration of a view: @cfg with every member outside
 * @members removed from each subgroup's member and sender lists (order
 * kept).  Subgroups left with no member or no sender keep nsenders or
 * nmembers 0: they are dormant in that view.
 */
void sp_view_config(const struct sp_group_cfg *cfg, sp_mask_t members,
		    struct sp_group_cfg *out);

/*
 * sp_trim_merge - the ragged trim of one subgroup, one survivor at a time
 * @trim: per sender rank, start it at ~0ULL
 * @received: a survivor's received[] counts
 * @nsenders: senders of the subgroup in the old view
 */
static inline void sp_trim_merge(u64 *trim, const u64 *received, u32 nsenders)
{
	u32 r;

	for (r = 0; r < nsenders; r++)
		if (received[r] < trim[r])
			trim[r] = received[r];
}

u32 sp_sub_deliver_trim(struct sp_sub *sub, const u64 *trim, struct sp_desc *out,
			u32 max);

/*
 * Where a subgroup's numbering stands at the start of a view, over all
 * views so far: each configured sender's index of its first message, and
 * (ordered mode) the sequence number of the first message.  Every member
 * keeps them for every subgroup, in it or not (see sp_sub_next_bases()).
 */
struct sp_bases {
	u64 idx[SP_MAX_MEMBERS];	/* by configured sender rank */
	u64 seq;
};

void sp_sub_next_bases(const struct sp_group_cfg *cfg, u32 s, sp_mask_t members,
		       const u64 *trim, struct sp_bases *b);

#endif /* SPINDLE_PROTO_VIEW_H */
