/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Round-robin total order (Derecho, Spindle section III-B).
 *
 * A subgroup has n senders, ranked 0..n-1 by their place in the subgroup's
 * sender list.  Message M(r, i) is the i-th message (0-based index, nulls
 * included) of the sender with rank r.  Its sequence number is
 *
 *	seq(r, i) = i * n + r
 *
 * so the order is round by round, and by rank within a round.  All counts
 * here are counts, not "last seen" values: "received 5 from r" means indices
 * 0..4 are in, and a sequence count D means sequence numbers 0..D-1.
 */
#ifndef SPINDLE_PROTO_ORDER_H
#define SPINDLE_PROTO_ORDER_H

#include "compat.h"

static inline u64 sp_seq(u32 rank, u64 index, u32 nsenders)
{
	return index * nsenders + rank;
}

static inline void sp_seq_split(u64 seq, u32 nsenders, u32 *rank, u64 *index)
{
	*index = sp_div_u64(seq, nsenders);
	*rank = (u32)(seq - *index * nsenders);
}

/*
 * sp_contiguous_seq - length of the prefix of the total order that is complete
 * given @received[r] messages from each sender r: the first missing sequence
 * number is min over r of seq(r, received[r]).
 */
static inline u64 sp_contiguous_seq(const u64 *received, u32 nsenders)
{
	u64 best = ~0ULL;
	u32 r;

	for (r = 0; r < nsenders; r++) {
		u64 s = sp_seq(r, received[r], nsenders);

		if (s < best)
			best = s;
	}
	return best;
}

/*
 * sp_sender_share - how many messages of sender @rank lie in the first @count
 * sequence numbers: the indices i with i * n + rank < count.
 */
static inline u64 sp_sender_share(u64 count, u32 rank, u32 nsenders)
{
	if (count <= rank)
		return 0;
	return sp_div_u64(count - rank - 1, nsenders) + 1;
}

/*
 * sp_null_target - the null-send rule of Spindle III-B, batched.
 *
 * Sender @me must not let a message it has received be held back by its own
 * next message.  Having received received[r] messages from sender r, its own
 * count must reach received[r] when r ranks above it (its message of that
 * round comes first) and received[r] - 1 when r ranks below it.  Returns the
 * count this sender must reach; the caller sends (target - sent) nulls when
 * that is positive and it has no real message ready to fill the gap.
 */
static inline u64 sp_null_target(const u64 *received, u32 nsenders, u32 me)
{
	u64 target = 0;
	u32 r;

	for (r = 0; r < nsenders; r++) {
		u64 t;

		if (r == me || received[r] == 0)
			continue;
		t = r > me ? received[r] : received[r] - 1;
		if (t > target)
			target = t;
	}
	return target;
}

#endif /* SPINDLE_PROTO_ORDER_H */
