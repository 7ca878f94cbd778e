/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Ring arithmetic shared by every Spindle ring (slot rings, header rings,
 * delivery queues).
 *
 * Positions are absolute u64 counters that only grow: a producer position
 * @head counts everything ever produced, a consumer position @tail counts
 * everything ever released.  A ring of @size entries holds the positions
 * [tail, head) and is consistent while tail <= head <= tail + size.  The
 * slot of a position is pos % size; sizes need not be powers of two (a
 * window of 100 slots is common).  Counters never wrap in practice (2^64
 * messages), and every check below is written so that a value a remote peer
 * or userspace forged cannot make the arithmetic wrap into a "valid" result.
 */
#ifndef SPINDLE_PROTO_RING_H
#define SPINDLE_PROTO_RING_H

#include "compat.h"

/** struct sp_run - a contiguous run of ring slots */
struct sp_run {
	u32 slot;	/* first slot index, < ring size */
	u32 count;	/* number of slots, >= 1 */
};

/* Slot index of absolute position @pos in a ring of @size (> 0) entries. */
static inline u32 sp_ring_slot(u64 pos, u32 size)
{
	return sp_mod_u64(pos, size);
}

/*
 * sp_ring_lap - the first position at or after @pos whose slot is 0, in a
 * ring of @size (> 0) entries: where a ring's numbering can start again so
 * that a position keeps its slot.  Any size, not only powers of two.
 */
static inline u64 sp_ring_lap(u64 pos, u32 size)
{
	u32 slot = sp_ring_slot(pos, size);

	return slot ? pos - slot + size : pos;
}

/*
 * sp_ring_valid - true when tail <= head <= tail + size.
 * Written without computing tail + size, which a forged tail could overflow.
 */
static inline bool sp_ring_valid(u64 head, u64 tail, u32 size)
{
	return head >= tail && head - tail <= size;
}

/* Free entries of a valid ring. */
static inline u32 sp_ring_free(u64 head, u64 tail, u32 size)
{
	return size - (u32)(head - tail);
}

/*
 * sp_ring_runs - split @n entries starting at @pos into contiguous runs.
 * Returns the number of runs (0 when n == 0, else 1, or 2 at the wrap).
 * @n must not exceed @size.
 */
static inline unsigned int sp_ring_runs(u64 pos, u32 n, u32 size,
					struct sp_run run[2])
{
	u32 first = sp_ring_slot(pos, size);
	u32 to_end = size - first;

	if (n == 0)
		return 0;
	run[0].slot = first;
	if (n <= to_end) {
		run[0].count = n;
		return 1;
	}
	run[0].count = to_end;
	run[1].slot = 0;
	run[1].count = n - to_end;
	return 2;
}

#endif /* SPINDLE_PROTO_RING_H */
