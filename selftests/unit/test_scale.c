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
