/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Send queue arithmetic of one connection: how many more work requests a
 * pass may queue, and which staging slot a write's snapshot goes to.
 *
 * Positions are absolute counts of work requests: @posted were handed to
 * the device, @chained more wait in this pass's chain, and the device has
 * completed everything below @acked (a signaled completion acknowledges
 * all before it).  One engine write becomes at most @split_max work
 * requests, split at memory region chunk boundaries.
 *
 * A write that is copied before it goes (a block, a row) is copied into
 * the staging slot of its first work request's position, and every one of
 * its pieces reads from there.  That slot comes round again @depth
 * positions later, and the snapshot must not be overwritten before the
 * write's last piece completed, up to @split_max - 1 positions after its
 * first.  So a pass counts its room in whole writes of @split_max (as
 * sp_sq_writes() does): a write starting at q is queued only if q +
 * split_max <= acked + depth, so the write that used the same slot @depth
 * positions earlier, or more, ended at or below @acked.
 */
#ifndef SPINDLE_PROTO_SQ_H
#define SPINDLE_PROTO_SQ_H

#include "ring.h"

/* Send queue entries free: 0 when full, or when the counters disagree. */
static inline u32 sp_sq_room(u64 posted, u32 chained, u64 acked, u32 depth)
{
	u64 used;

	/* no sum below can wrap: each term is below 2^32 once checked */
	if (acked > posted || posted - acked >= depth)
		return 0;
	used = posted - acked + chained;
	return used >= depth ? 0 : depth - (u32)used;
}

/**
 * sp_sq_writes - writes a pass may still queue on a connection
 * @posted: work requests handed to the device
 * @chained: queued in this pass's chain, not yet posted
 * @acked: completed (every position below it)
 * @split_max: most work requests one write becomes (>= 1)
 * @depth: send queue entries, and staging slots
 *
 * The only count a caller queues by: each write it then queues may take up
 * to @split_max entries, and none overwrites a staging slot that a write
 * still in flight reads.
 * Return: whole writes of @split_max entries that fit.
 */
static inline u32 sp_sq_writes(u64 posted, u32 chained, u64 acked,
			       u32 split_max, u32 depth)
{
	return sp_sq_room(posted, chained, acked, depth) / split_max;
}

/* The staging slot of a write whose first work request is at @pos. */
static inline u32 sp_sq_stage_slot(u64 pos, u32 depth)
{
	return sp_ring_slot(pos, depth);
}

#endif /* SPINDLE_PROTO_SQ_H */
