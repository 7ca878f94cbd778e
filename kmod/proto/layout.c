// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "layout.h"
#include "engine.h"

/**
 * sp_meta_layout - offsets of @member_id's blocks and header rings
 * @cfg: validated configuration
 * @member_id: whose region
 * @lay: out
 * @page_size: the region is rounded up to whole pages
 */
void sp_meta_layout(const struct sp_group_cfg *cfg, u32 member_id,
		    struct sp_meta_layout *lay, u32 page_size)
{
	u32 off = SP_ROW_HDR_SIZE;
	u32 s;

	for (s = 0; s < SP_MAX_SUBGROUPS; s++) {
		lay->area_off[s] = SP_NO_OFFSET;
		lay->block_off[s] = SP_NO_OFFSET;
		lay->hdr_off[s] = SP_NO_OFFSET;
	}
	for (s = 0; s < cfg->nsubgroups; s++) {
		lay->area_off[s] = off;
		off += sp_area_entry_size(cfg->subgroups[s].nsenders);
	}
	off = ALIGN(off, 64);
	lay->row_bytes = off;
	for (s = 0; s < cfg->nsubgroups; s++) {
		const struct sp_sub_cfg *sub = &cfg->subgroups[s];

		if (sp_sub_member_pos(sub, member_id) < 0)
			continue;
		lay->block_off[s] = off;
		off += sp_block_size(sub->nsenders);
	}
	for (s = 0; s < cfg->nsubgroups; s++) {
		const struct sp_sub_cfg *sub = &cfg->subgroups[s];

		if (sp_sub_sender_rank(sub, member_id) < 0)
			continue;
		lay->hdr_off[s] = off;
		off += ALIGN(sp_hdr_slots(sub->window) * (u32)sizeof(struct sp_hdr), 64);
	}
	lay->size = ALIGN(off, page_size);
}
