// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for send queue arithmetic (kmod/proto/sq.h): the room a pass
 * may fill, and that no staging slot is overwritten while a write that
 * reads it still has a piece in flight.
 */
#include <stdlib.h>
#include "../../kmod/proto/sq.h"
#include "../ktap.h"

TEST(room_counts_entries_writes_count_whole_splits)
{
	EXPECT_EQ(sp_sq_room(0, 0, 0, 512), 512);
	EXPECT_EQ(sp_sq_room(100, 8, 50, 512), 512 - 58);
	EXPECT_EQ(sp_sq_room(612, 0, 100, 512), 0);
	EXPECT_EQ(sp_sq_writes(0, 0, 0, 1, 512), 512);
	EXPECT_EQ(sp_sq_writes(0, 0, 0, 3, 512), 170);
	EXPECT_EQ(sp_sq_writes(605, 0, 100, 4, 512), 1);
	EXPECT_EQ(sp_sq_writes(609, 0, 100, 4, 512), 0);
}

TEST(room_of_inconsistent_or_huge_counters_is_none)
{
	EXPECT_EQ(sp_sq_room(5, 0, 6, 512), 0);
	EXPECT_EQ(sp_sq_room(~0ULL, 0, 0, 512), 0);
	EXPECT_EQ(sp_sq_room(~0ULL, ~0U, ~0ULL - 1, 512), 0);
	EXPECT_EQ(sp_sq_room(~0ULL, 0, ~0ULL, 512), 512);
	EXPECT_EQ(sp_sq_writes(~0ULL, 0, 0, 4, 512), 0);
}

TEST(stage_slot_is_the_position_in_the_ring)
{
	EXPECT_EQ(sp_sq_stage_slot(0, 512), 0);
	EXPECT_EQ(sp_sq_stage_slot(513, 512), 1);
	EXPECT_EQ(sp_sq_stage_slot(1023, 512), 511);
}

/*
 * One connection as xmit.c and view.c drive it: each pass pushes a row
 * (when one write fits), then for each subgroup queues up to the writes
 * that fit at its start, staged (blocks) or not (payload), each of 1..split_max pieces;
 * the chain is posted; then the device completes up to any position (a
 * signaled work request inside a write completes it part-way), slowly, so
 * that the queue runs full.  Every staged
 * write checks that its slot's last user completed all of its pieces.
 */
struct sq_model {
	u32 depth, split_max;
	u64 posted, acked;
	u32 chained;
	u64 *slot_end;		/* [depth]: end of the write staged there */
	u64 staged, writes;
};

static u32 rnd(u32 n)
{
	return (u32)(random() % n);
}

static void sq_queue(struct kt *_t, struct sq_model *m, bool staged)
{
	u32 k = 1 + rnd(m->split_max);
	u64 q = m->posted + m->chained;

	if (staged) {
		u32 s = sp_sq_stage_slot(q, m->depth);

		/* the snapshot overwrites what the slot's last write reads */
		ASSERT_LE(m->slot_end[s], m->acked);
		m->slot_end[s] = q + k;
		m->staged++;
	}
	m->chained += k;
	ASSERT_LE(m->posted + m->chained - m->acked, m->depth);
	m->writes++;
}

static void sq_pass(struct kt *_t, struct sq_model *m, u32 nsub)
{
	u32 s, n, i;

	if (sp_sq_writes(m->posted, m->chained, m->acked, m->split_max,
			 m->depth) && rnd(2))
		sq_queue(_t, m, true);
	for (s = 0; s < nsub; s++) {
		n = sp_sq_writes(m->posted, m->chained, m->acked,
				 m->split_max, m->depth);
		if (rnd(2))	/* often all it may, to run the queue full */
			n = rnd(n + 1);
		for (i = 0; i < n && !_t->failed; i++)
			sq_queue(_t, m, rnd(3) == 0);
	}
	m->posted += m->chained;
	m->chained = 0;
	/* a slow device: completions trickle in, often mid-write */
	if (m->posted > m->acked && rnd(2))
		m->acked += rnd(min_t(u32, m->posted - m->acked,
				      2 * m->split_max) + 1);
}

TEST(staging_slot_not_reused_while_a_split_write_reads_it)
{
	static const u32 depths[] = { 8, 16, 64, 512 };
	u32 seed, d, split, pass;

	for (seed = 1; seed <= 40; seed++)
		for (d = 0; d < ARRAY_SIZE(depths); d++)
			for (split = 1; split <= 4 && 2 * split <= depths[d]; split++) {
				struct sq_model m = {
					.depth = depths[d], .split_max = split,
				};

				srandom(seed * 1000 + d * 10 + split);
				m.slot_end = calloc(m.depth, sizeof(u64));
				ASSERT_NE(m.slot_end, NULL);
				for (pass = 0; pass < 2000; pass++) {
					sq_pass(_t, &m, 1 + rnd(3));
					if (_t->failed) {
						kt_diag("seed %u depth %u split_max %u pass %u",
							seed, m.depth, split, pass);
						free(m.slot_end);
						return;
					}
				}
				EXPECT_GT(m.staged, 0);
				free(m.slot_end);
			}
}
