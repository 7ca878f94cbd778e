/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rows in and out, and failure detection (rows.c), as the view change
 * (view.c) uses them.  The group-wide entry points (spindle_view_start(),
 * spindle_member_lost(), spindle_row_csum(), spindle_view_push_rows())
 * are in group.h with the rest of the view's.
 */
#ifndef SPINDLE_ROWS_H
#define SPINDLE_ROWS_H

#include "group.h"

static inline struct sp_row_hdr *spindle_my_row(struct spindle_group *g)
{
	return g->out_meta->vaddr;
}

/* Copy member @m's row into g->row_tmp (counted): false if torn or unwritten. */
bool spindle_row_take(struct spindle_group *g, u32 m);
/* Take the peers' rows that changed, checked. */
void spindle_rows_intake(struct spindle_group *g, u64 now);
/* Heartbeat mine; suspect the silent and the lost. */
void spindle_detect(struct spindle_group *g, u64 now);

#endif /* SPINDLE_ROWS_H */
