// SPDX-License-Identifier: GPL-2.0
/*
 * Groups larger than the test bed's guests, in the simulation (scale.h):
 * 16 and 32 members, every one sending in one ordered subgroup, deliver
 * every message in one order (scale.h checks each run), at saturation and
 * at light load; and what Spindle's batching claims, counted rather than
 * timed: fewer writes and passes per message than its own baseline, and no
 * more rounds at light load.  The figures themselves: make sim-scale.
 */
#include "scale.h"
#include "../ktap.h"

static int measure(u32 n, u32 flags, struct scale_cost *c)
{
	memset(c, 0, sizeof(*c));
	if (scale_saturated(n, flags, 40, 1, c) || scale_light(n, flags, 4, 1, c))
		return -1;
	return 0;
}

static int spindle_beats_baseline(struct kt *_t, u32 n)
{
	struct scale_cost sp, base;

	(void)_t;
	if (measure(n, 0, &sp) || measure(n, SP_GROUP_BASELINE, &base))
		return -1;
	TH_LOG("%u members: writes/msg %.2f vs %.2f, busy passes/delivery %.3f vs %.3f, light rounds %.2f vs %.2f",
	       n, sp.payload + sp.hdr + sp.block, base.payload + base.hdr + base.block,
	       sp.busy, base.busy, sp.light, base.light);
	if (sp.payload + sp.hdr + sp.block >= base.payload + base.hdr + base.block ||
	    sp.busy >= base.busy || sp.light > base.light)
		return -1;
	return 0;
}

TEST(sixteen_members_one_order_fewer_writes_than_the_baseline)
{
	ASSERT_EQ(spindle_beats_baseline(_t, 16), 0);
}

TEST(thirty_two_members_one_order_fewer_writes_than_the_baseline)
{
	ASSERT_EQ(spindle_beats_baseline(_t, 32), 0);
}

/*
 * spindle-lat's case, one sender and one message in flight: each message
 * costs the sender's payload, header and block to every peer, 3(n - 1),
 * and each receiver's count to every other member, (n - 1)^2; what
 * consumers released rides along with those (sp_sub_due()).  Pushed on
 * its own, as before, it cost n(n - 1) more: 5.95 writes a message with
 * two members, 125.9 with eight.  The flush when the stream ends adds
 * n(n - 1) writes in all.
 */
TEST(one_sender_releases_ride_along_two_to_eight_members)
{
	static const u32 sizes[] = { 2, 3, 4, 6, 8 };
	u32 z;

	for (z = 0; z < ARRAY_SIZE(sizes); z++) {
		u32 n = sizes[z];
		struct scale_cost c = { 0 };
		double want = (double)(n - 1) * (n + 2);

		ASSERT_EQ(scale_one_sender(n, 0, 40, 1, &c), 0);
		TH_LOG("%u members: %.2f writes a message on its way, %.2f in all (want %.0f)",
		       n, c.one_path, c.one_all, want);
		EXPECT_TRUE(c.one_path <= want + 0.25);
		EXPECT_TRUE(c.one_all <= want + (double)n * (n - 1) / 40 + 0.25);
	}
}

/*
 * Lazy releases never hold a sender: with the age limit's flush turned off
 * and consumers that release only now and then (so a release often comes
 * when nothing else is left to push), a sender whose window is full still
 * gets the releases it needs (half a window behind, sp_sub_due()), and
 * every message is delivered.
 */
TEST(lazy_releases_never_hold_a_sender)
{
	u32 n, i;

	for (n = 2; n <= 4; n++) {
		ASSERT_EQ(scale_start_senders(n, 1, 0, n), 0);
		scale_sim.lazy_passes = ~0U;
		for (i = 0; i < n; i++)
			scale_sim.node[i].sg[0].lazy = 1;
		scale_sim.node[0].sg[0].to_send = 300;
		ASSERT_GE(sim_run(&scale_sim, SCALE_MAX_ROUNDS), 0);
		EXPECT_EQ(scale_logs_agree(n, 300), 0);
		sim_free(&scale_sim);
	}
}
