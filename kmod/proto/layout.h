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

#define SP_ROW_HDR_SIZE	64
#define SP_NO_OFFSET	(~0U)

/* A member's row header: node-wide state (failure detection, views). */
struct sp_row_hdr {
	__le64 heartbeat;
	__le64 reserved[7];
};

struct sp_meta_layout {
	u32 block_off[SP_MAX_SUBGROUPS];	/* SP_NO_OFFSET if not a member */
	u32 hdr_off[SP_MAX_SUBGROUPS];		/* SP_NO_OFFSET if not a sender */
	u32 size;				/* whole pages */
};

void sp_meta_layout(const struct sp_group_cfg *cfg, u32 member_id,
		    struct sp_meta_layout *lay, u32 page_size);

#endif /* SPINDLE_PROTO_LAYOUT_H */
