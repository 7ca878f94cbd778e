/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where things live in a member's "meta" region: its SST row (a 64-byte
 * row header, then one block per subgroup it belongs to) followed by its
 * header rings (one per subgroup it sends in).  The layout is a function of
 * the configuration alone, so the copy a peer holds of member j's region is
 * laid out exactly as j's own: a write goes to the same offset it came from.
 * Payload rings are regions of their own (they are what userspace maps).
 */
#ifndef SPINDLE_PROTO_LAYOUT_H
#define SPINDLE_PROTO_LAYOUT_H

#include "config.h"

#define SP_NO_OFFSET	(~0U)

/*
 * A member's row header: node-wide state, for failure detection and view
 * changes (see vc.h).  Unlike the blocks and rings it is never reset when a
 * view is installed: it carries a view change across leader failures.
 * Masks are over configured member indices; view ids only grow.
 */
struct sp_row_hdr {
	__le64 heartbeat;	/* bumped while the member lives */
	__le64 incarnation;	/* changes each time the member starts */
	__le64 view_id;		/* the view it has installed (0: none yet) */
	__le64 view_members;
	__le64 suspects;	/* members of view_id it suspects */
	__le64 wedged;		/* view_id, once it stopped sending in it */
	__le64 joins;		/* configured members it saw asking to join */
	__le64 flags;
	__le64 prop_view;	/* leader: the view it proposes... */
	__le64 prop_term;	/* ...as which attempt (unique per leader) */
	__le64 prop_members;
	__le64 echo_view;	/* the proposal whose trims it holds */
	__le64 echo_term;
	__le64 echo_members;
	__le64 commit_view;	/* the commit it knows of */
	__le64 commit_term;
	__le64 commit_members;
	__le64 drained;		/* view whose old writes of its are all done */
	__le64 ready;		/* view it has reset for and takes writes of */
	__le64 csum;		/* crc32 of the row and view area, this field 0 */
	__le64 reserved[12];
};

#define SP_ROW_HDR_SIZE	256

/*
 * The view area follows the row header and goes out with it, to every
 * peer: per subgroup (configured index), what the view change needs of
 * every member, members of that subgroup or not.
 *
 *   snap_view, received[nsenders]	my received counts, as I wedged in
 *					snap_view (0: not a member)
 *   trim_view, trim_term, trim[nsenders]	the trim I proposed or hold
 *   base_view, seq_base, base[nsenders]	where view base_view's numbering
 *					starts (every member, so a joiner
 *					can take it from any that stays)
 */
static inline u32 sp_area_entry_size(u32 nsenders)
{
	return 8 * (5 + 3 * nsenders);
}

struct sp_area_entry {
	__le64 snap_view;
	__le64 trim_view;
	__le64 trim_term;
	__le64 base_view;
	__le64 seq_base;
	__le64 v[];		/* received[n], trim[n], base[n] */
};

struct sp_meta_layout {
	u32 area_off[SP_MAX_SUBGROUPS];		/* every subgroup */
	u32 row_bytes;				/* row header and view area */
	u32 block_off[SP_MAX_SUBGROUPS];	/* SP_NO_OFFSET if not a member */
	u32 hdr_off[SP_MAX_SUBGROUPS];		/* SP_NO_OFFSET if not a sender */
	u32 size;				/* whole pages */
};

void sp_meta_layout(const struct sp_group_cfg *cfg, u32 member_id,
		    struct sp_meta_layout *lay, u32 page_size);

#endif /* SPINDLE_PROTO_LAYOUT_H */
