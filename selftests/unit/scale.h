/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulated cluster (sim.h) at up to 32 members, one ordered subgroup
 * in which every member sends (or only member 0: scale_one_sender()), and
 * what its messages cost, counted: the benchmark sim_scale.c prints it
 * against the group size, test_scale.c checks it.  Every run checks that
 * each member delivered every message, in the same order.
 */
#ifndef SPINDLE_SCALE_H
#define SPINDLE_SCALE_H

#define SIM_MAX_NODES 32
#include "sim.h"

#define SCALE_MAX_ROUNDS 10000000L

struct scale_cost {
	double payload, hdr, block;	/* writes per data message */
	double block_bytes;		/* counter bytes per data message */
	double busy;			/* busy passes per delivered message */
	double batch;			/* messages per delivery batch */
	double nulls;			/* nulls per data message */
	double rounds;			/* rounds per data message, saturated */
	double light;			/* rounds to the last delivery, light load */
	double one_path, one_all;	/* one sender: scale_one_sender() */
};

static struct sim scale_sim;
static u32 scale_senders[SIM_MAX_NODES];

/* members 0..n-1, the first @nsenders of them senders */
static int scale_start_senders(u32 n, u32 nsenders, u32 flags, u64 seed)
{
	u32 i;

	for (i = 0; i < n; i++)
		scale_senders[i] = i;
	return sim_init_flags(&scale_sim, n, scale_senders, nsenders, flags,
			      SP_MODE_ORDERED, 16, 64, seed);
}

static int scale_start(u32 n, u32 flags, u64 seed)
{
	return scale_start_senders(n, n, flags, seed);
}

/* every member's log holds @want records, the same ones in the same order */
static int scale_logs_agree(u32 n, u64 want)
{
	u32 i;

	for (i = 0; i < n; i++) {
		const struct sim_sg *g = &scale_sim.node[i].sg[0];

		if (g->nlog != want ||
		    memcmp(g->log, scale_sim.node[0].sg[0].log, want * sizeof(*g->log))) {
			fprintf(stderr, "scale: %u members: member %u delivered %llu of %llu, or in another order\n",
				n, i, (unsigned long long)g->nlog, (unsigned long long)want);
			return -1;
		}
	}
	return 0;
}

/* everyone sends @per messages at once, as fast as the windows let them */
static int scale_saturated(u32 n, u32 flags, u32 per, u64 seed, struct scale_cost *c)
{
	u64 msgs = (u64)n * per, busy = 0, nulls = 0, batches = 0, dl = 0;
	long rounds;
	u32 i;

	if (scale_start(n, flags, seed))
		return -1;
	for (i = 0; i < n; i++)
		scale_sim.node[i].sg[0].to_send = per;
	rounds = sim_run(&scale_sim, SCALE_MAX_ROUNDS);
	if (rounds < 0 || scale_logs_agree(n, msgs))
		return -1;
	for (i = 0; i < n; i++) {
		const struct sp_stats *st = &scale_sim.node[i].sg[0].sub.stats;

		busy += scale_sim.node[i].busy;
		nulls += st->nulls_sent;
		batches += st->deliver_batches;
		dl += st->msgs_delivered;
	}
	c->payload += (double)scale_sim.posted[SP_WR_PAYLOAD] / msgs;
	c->hdr += (double)scale_sim.posted[SP_WR_HDR] / msgs;
	c->block += (double)scale_sim.posted[SP_WR_BLOCK] / msgs;
	c->block_bytes += (double)scale_sim.posted_bytes[SP_WR_BLOCK] / msgs;
	c->busy += (double)busy / (msgs * n);
	c->batch += batches ? (double)dl / batches : 0;
	c->nulls += (double)nulls / msgs;
	c->rounds += (double)rounds / msgs;
	sim_free(&scale_sim);
	return 0;
}

/*
 * Light load, @count times: every member sends one message at once (the
 * baseline sends no nulls: it would wait for ever on a member that sends
 * nothing), and the group settles after; rounds until the last member
 * delivered all of them.
 */
static int scale_light(u32 n, u32 flags, u32 count, u64 seed, struct scale_cost *c)
{
	u64 total = 0;
	u32 m, i;

	if (scale_start(n, flags, seed))
		return -1;
	scale_sim.min_room = 16;	/* an idle group's send queues have room */
	for (m = 1; m <= count; m++) {
		long r = 0;

		for (i = 0; i < n; i++)
			scale_sim.node[i].sg[0].to_send = 1;
		for (;;) {
			for (i = 0; i < n && scale_sim.node[i].sg[0].nlog >= (u64)m * n; i++)
				;
			if (i == n)
				break;
			if (++r > 100000 || sim_run(&scale_sim, 1) < 0) {
				fprintf(stderr, "scale: %u members: turn %u never delivered\n",
					n, m);
				return -1;
			}
		}
		total += (u64)r;
		if (sim_run(&scale_sim, SCALE_MAX_ROUNDS) < 0)	/* settle: counters, nulls */
			return -1;
	}
	if (scale_logs_agree(n, (u64)count * n))
		return -1;
	c->light += (double)total / count;
	sim_free(&scale_sim);
	return 0;
}

/* engine writes of every kind posted so far, by every member */
static inline u64 scale_posted(void)
{
	return scale_sim.posted[SP_WR_PAYLOAD] + scale_sim.posted[SP_WR_HDR] +
	       scale_sim.posted[SP_WR_BLOCK];
}

/*
 * One sender, one message in flight, as bench's spindle-lat runs (member 0
 * the subgroup's only sender, which makes its next message ready as soon
 * as it delivered the last one), @count messages, then the group settles.
 * Per message: the writes every member posted while it was on its way
 * (from ready to its delivery at the sender; the pushes of what consumers
 * released of the message before land in that time too), @c->one_path, and
 * all writes, @c->one_all.  On a soft NIC that shares a vCPU with the rest,
 * each write costs both ends CPU time.
 */
static inline int scale_one_sender(u32 n, u32 flags, u32 count, u64 seed, struct scale_cost *c)
{
	struct sim_sg *g0;
	u64 path = 0, start;
	u32 m;

	if (scale_start_senders(n, 1, flags, seed))
		return -1;
	scale_sim.min_room = 16;
	g0 = &scale_sim.node[0].sg[0];
	for (m = 1; m <= count; m++) {
		long r = 0;

		start = scale_posted();
		g0->to_send = 1;
		while (g0->nlog < m) {
			if (++r > 100000 || sim_run(&scale_sim, 1) < 0) {
				fprintf(stderr, "scale: %u members: message %u never delivered\n",
					n, m);
				return -1;
			}
		}
		path += scale_posted() - start;
	}
	if (sim_run(&scale_sim, SCALE_MAX_ROUNDS) < 0 || scale_logs_agree(n, count))
		return -1;
	c->one_path += (double)path / count;
	c->one_all += (double)scale_posted() / count;
	sim_free(&scale_sim);
	return 0;
}

#endif /* SPINDLE_SCALE_H */
