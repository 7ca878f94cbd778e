// SPDX-License-Identifier: GPL-2.0
/*
 * What a delivered message costs as the group grows, counted exactly: the
 * simulated cluster (sim.h) runs the shipped predicate pass (proto/pass.c,
 * engine.c) for 2 to 32 members, one ordered subgroup in which everyone
 * sends, Spindle beside its own baseline (SP_GROUP_BASELINE: no batching,
 * no nulls), and prints per data message: the RDMA writes posted by kind
 * (payload, header, the counters block) and the counter bytes, the
 * predicate passes that did something, and the mean delivery batch; then
 * at light load (one message from every member at once, the group idle
 * before) the simulated rounds until the last member delivered them; and,
 * with one sender and one message in flight (spindle-lat's case), the
 * writes every member posted per message while it was on its way and in
 * all.  A round is one pass of every member and most of the writes in
 * flight landing: it counts hops, not time.
 *
 *   build/unit/sim_scale [MESSAGES_PER_SENDER [SEEDS]]   (make sim-scale)
 *
 * Every run checks what the unit tests do: each member delivered every
 * message, in the same order.  A failed check exits 1.
 */
#include "scale.h"

static const u32 sizes[] = { 2, 3, 4, 6, 8, 12, 16, 24, 32 };

static void print_row(u32 n, const char *what, const struct scale_cost *c, u32 seeds)
{
	double k = seeds;

	printf("%3u  %-8s %7.2f %7.2f %7.2f %9.1f %7.3f %6.1f %6.3f %7.3f %6.2f %8.2f %7.2f\n",
	       n, what, c->payload / k, c->hdr / k, c->block / k, c->block_bytes / k,
	       c->busy / k, c->batch / k, c->nulls / k, c->rounds / k, c->light / k,
	       c->one_path / k, c->one_all / k);
}

int main(int argc, char **argv)
{
	u32 per = argc > 1 ? (u32)strtoul(argv[1], NULL, 0) : 200;
	u32 seeds = argc > 2 ? (u32)strtoul(argv[2], NULL, 0) : 3;
	u32 z, f, seed;

	if (!per || !seeds) {
		fprintf(stderr, "usage: sim_scale [MESSAGES_PER_SENDER [SEEDS]]\n");
		return 2;
	}
	printf("# per data message (one ordered subgroup, all send, window 16, up to 64 B; %u messages a sender, %u seeds):\n"
	       "#   writes posted by kind (payload, hdr, block), counter bytes, busy passes per delivery,\n"
	       "#   messages per delivery batch, nulls, rounds (saturated); rounds to the last delivery (light load: one message a member);\n"
	       "#   one sender, one message in flight (spindle-lat): writes per message by every member while it was on its way, and in all\n",
	       per, seeds);
	printf("  n  flavour  payload     hdr   block  blk_bytes    busy  batch  nulls  rounds  light  one_path one_all\n");
	for (z = 0; z < ARRAY_SIZE(sizes); z++) {
		for (f = 0; f < 2; f++) {
			u32 flags = f ? SP_GROUP_BASELINE : 0;
			struct scale_cost c = { 0 };

			for (seed = 1; seed <= seeds; seed++)
				if (scale_saturated(sizes[z], flags, per, seed, &c) ||
				    scale_light(sizes[z], flags, 20, seed, &c) ||
				    scale_one_sender(sizes[z], flags, 20, seed, &c))
					return 1;
			print_row(sizes[z], f ? "baseline" : "spindle", &c, seeds);
			fflush(stdout);
		}
	}
	return 0;
}
