// SPDX-License-Identifier: GPL-2.0
/* Unit tests for ring and sequence arithmetic (kmod/proto/ring.h, order.h). */
#include "../../kmod/proto/ring.h"
#include "../../kmod/proto/order.h"
#include "../../kmod/proto/engine.h"
#include "../ktap.h"

TEST(ring_slot_wraps_at_any_size)
{
	EXPECT_EQ(sp_ring_slot(0, 100), 0);
	EXPECT_EQ(sp_ring_slot(99, 100), 99);
	EXPECT_EQ(sp_ring_slot(100, 100), 0);
	EXPECT_EQ(sp_ring_slot(1234567, 1), 0);
	EXPECT_EQ(sp_ring_slot(~0ULL, 7), (u32)(~0ULL % 7));
}

/*
 * A new view's numbering of a producer ring starts at a lap (kmod/view.c),
 * so that every position keeps its slot: at a multiple of the window,
 * whatever the window.  The kernel's round_up() is for powers of two only:
 * with a window of 100 it turned 1913 into 1916, and every slot after a
 * view change was read 16 places off the one the process wrote.
 */
TEST(ring_lap_is_a_multiple_of_any_size)
{
	static const u32 sizes[] = { 1, 2, 7, 16, 24, 48, 100, 500, 4096 };
	u32 z;
	u64 pos;

	EXPECT_EQ(sp_ring_lap(1913, 100), 2000);
	EXPECT_EQ(sp_ring_lap(2000, 100), 2000);
	EXPECT_EQ(sp_ring_lap(0, 100), 0);
	EXPECT_EQ(sp_ring_lap(1, 24), 24);
	for (z = 0; z < ARRAY_SIZE(sizes); z++) {
		for (pos = 0; pos < 3 * sizes[z] + 5; pos++) {
			u64 lap = sp_ring_lap(pos, sizes[z]);

			EXPECT_EQ(sp_ring_slot(lap, sizes[z]), 0);
			EXPECT_TRUE(lap >= pos && lap - pos < sizes[z]);
		}
	}
}

TEST(ring_runs_split_at_wrap)
{
	struct sp_run run[2];

	EXPECT_EQ(sp_ring_runs(5, 0, 10, run), 0);
	ASSERT_EQ(sp_ring_runs(5, 5, 10, run), 1);
	EXPECT_EQ(run[0].slot, 5);
	EXPECT_EQ(run[0].count, 5);
	ASSERT_EQ(sp_ring_runs(15, 6, 10, run), 2);
	EXPECT_EQ(run[0].slot, 5);
	EXPECT_EQ(run[0].count, 5);
	EXPECT_EQ(run[1].slot, 0);
	EXPECT_EQ(run[1].count, 1);
	/* a whole ring starting mid-way */
	ASSERT_EQ(sp_ring_runs(1003, 100, 100, run), 2);
	EXPECT_EQ(run[0].count + run[1].count, 100);
	/* window of one */
	ASSERT_EQ(sp_ring_runs(77, 1, 1, run), 1);
	EXPECT_EQ(run[0].slot, 0);
}

TEST(ring_runs_cover_every_slot_once)
{
	u32 size, n;
	u64 pos;

	for (size = 1; size <= 17; size++)
		for (pos = 0; pos < 3 * size; pos++)
			for (n = 0; n <= size; n++) {
				unsigned char seen[17] = { 0 };
				struct sp_run run[2];
				unsigned int k, nr, i, total = 0;

				nr = sp_ring_runs(pos, n, size, run);
				for (k = 0; k < nr; k++) {
					ASSERT_GT(run[k].count, 0);
					ASSERT_LE(run[k].slot + run[k].count, size);
					for (i = 0; i < run[k].count; i++)
						seen[run[k].slot + i]++;
					total += run[k].count;
				}
				ASSERT_EQ(total, n);
				for (i = 0; i < n; i++)
					ASSERT_EQ(seen[sp_ring_slot(pos + i, size)], 1);
			}
}

TEST(ring_validity_resists_forged_counters)
{
	EXPECT_TRUE(sp_ring_valid(10, 10, 4));
	EXPECT_TRUE(sp_ring_valid(14, 10, 4));
	EXPECT_FALSE(sp_ring_valid(15, 10, 4));
	EXPECT_FALSE(sp_ring_valid(9, 10, 4));
	/* tail near 2^64: tail + size would overflow */
	EXPECT_FALSE(sp_ring_valid(3, ~0ULL - 1, 8));
	EXPECT_TRUE(sp_ring_valid(~0ULL, ~0ULL - 1, 8));
	EXPECT_FALSE(sp_ring_valid(1ULL << 63, 0, 100));
	EXPECT_EQ(sp_ring_free(14, 10, 16), 12);
	EXPECT_EQ(sp_ring_free(26, 10, 16), 0);
}

TEST(seq_roundtrip)
{
	u32 n, r, rr;
	u64 i, ii;

	for (n = 1; n <= 9; n++)
		for (r = 0; r < n; r++)
			for (i = 0; i < 50; i++) {
				sp_seq_split(sp_seq(r, i, n), n, &rr, &ii);
				ASSERT_EQ(rr, r);
				ASSERT_EQ(ii, i);
			}
	EXPECT_EQ(sp_seq(2, 7, 3), 23);
}

TEST(contiguous_prefix_is_first_missing_seq)
{
	u64 rcv[3] = { 0, 0, 0 };

	EXPECT_EQ(sp_contiguous_seq(rcv, 3), 0);
	rcv[0] = 1;
	EXPECT_EQ(sp_contiguous_seq(rcv, 3), 1);	/* seq 1 = M(1,0) missing */
	rcv[2] = 5;
	EXPECT_EQ(sp_contiguous_seq(rcv, 3), 1);
	rcv[1] = 1;
	EXPECT_EQ(sp_contiguous_seq(rcv, 3), 3);	/* M(0,1) = seq 3 missing */
	rcv[0] = 4;
	rcv[1] = 4;
	EXPECT_EQ(sp_contiguous_seq(rcv, 3), 12);	/* all of rounds 0..3 */
}

/* brute force: the contiguous prefix and the per-sender share agree */
TEST(share_matches_brute_force)
{
	u32 n, r;
	u64 count;

	for (n = 1; n <= 6; n++)
		for (r = 0; r < n; r++)
			for (count = 0; count < 40; count++) {
				u64 expect = 0, s;

				for (s = 0; s < count; s++)
					if (s % n == r)
						expect++;
				ASSERT_EQ(sp_sender_share(count, r, n), expect);
			}
}

/*
 * The null rule, checked against its definition: after receiving M(r, k),
 * every own index l with seq(me, l) < seq(r, k) must have been sent.
 */
TEST(null_target_matches_definition)
{
	u32 n, me, r;
	u64 k;

	for (n = 1; n <= 5; n++)
		for (me = 0; me < n; me++)
			for (r = 0; r < n; r++)
				for (k = 0; k < 8; k++) {
					u64 rcv[5] = { 0 }, need = 0, l;

					if (r == me)
						continue;
					rcv[r] = k + 1;	/* received M(r, 0..k) */
					for (l = 0; l < 20; l++)
						if (sp_seq(me, l, n) < sp_seq(r, k, n))
							need = l + 1;
					ASSERT_EQ(sp_null_target(rcv, n, me), need);
				}
}

TEST(null_target_quiescent_without_messages)
{
	u64 rcv[4] = { 0, 0, 0, 0 };

	EXPECT_EQ(sp_null_target(rcv, 4, 0), 0);
	EXPECT_EQ(sp_null_target(rcv, 4, 3), 0);
	rcv[3] = 0;
	rcv[0] = 1;	/* the lowest rank's M(0,0) needs nobody's null */
	EXPECT_EQ(sp_null_target(rcv, 4, 1), 0);
	EXPECT_EQ(sp_null_target(rcv, 4, 3), 0);
}

TEST(histogram_buckets_are_powers_of_two)
{
	u64 h[SP_HIST_BUCKETS] = { 0 };

	sp_hist_add(h, 1);
	sp_hist_add(h, 2);
	sp_hist_add(h, 3);
	sp_hist_add(h, 4);
	sp_hist_add(h, 1023);
	sp_hist_add(h, 1024);
	sp_hist_add(h, ~0ULL);
	EXPECT_EQ(h[0], 1);
	EXPECT_EQ(h[1], 2);
	EXPECT_EQ(h[2], 1);
	EXPECT_EQ(h[9], 1);
	EXPECT_EQ(h[10], 1);
	EXPECT_EQ(h[SP_HIST_BUCKETS - 1], 1);
}
