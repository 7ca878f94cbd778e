// SPDX-License-Identifier: GPL-2.0
/*
 * The predicate thread's pass (kmod/proto/pass.c), through a transport
 * that records what it is asked to do: the order the kernel ships (rows
 * before a pass's data, and after it), the subgroup lock around taking,
 * publishing and reclaiming, and writes that never announce what has not
 * gone before them.
 */
#include "sim.h"
#include "../ktap.h"

/* What a recording transport saw, one letter per call. */
struct rec {
	char ev[512];
	u32 n;
	bool engines_run;
	struct sim_turn t;	/* the simulated node under it, if any */
	int kinds[64];		/* SP_WR_* of each queued write */
	u32 nkinds;
	u32 max_deliver;	/* the largest @max deliver was called with */
	u32 room;		/* 0, or the send queue room writes() reports */
};

static void rec_ev(void *ctx, char c)
{
	struct rec *r = ctx;

	if (r->n + 1 < sizeof(r->ev))
		r->ev[r->n++] = c;
	r->ev[r->n] = '\0';
}

static int rec_view(void *ctx)
{
	rec_ev(ctx, 'V');
	return 0;
}

static void rec_rows(void *ctx)
{
	rec_ev(ctx, 'R');
}

static bool rec_engines_run(void *ctx)
{
	return ((struct rec *)ctx)->engines_run;
}

static int rec_turn(void *ctx, u32 s)
{
	rec_ev(ctx, (char)('0' + s));
	return 1;
}

static void rec_flush(void *ctx)
{
	rec_ev(ctx, 'F');
}

static const struct sp_group_ops rec_group_ops = {
	.view = rec_view,
	.rows = rec_rows,
	.engines_run = rec_engines_run,
	.turn = rec_turn,
	.flush = rec_flush,
};

TEST(rows_go_before_and_after_the_data_of_a_pass)
{
	struct rec r = { .engines_run = true };

	EXPECT_EQ(sp_group_pass(&rec_group_ops, &r, 3), 3);
	EXPECT_EQ(strcmp(r.ev, "VR012RF"), 0);
	if (strcmp(r.ev, "VR012RF"))
		TH_LOG("pass order: %s", r.ev);
}

TEST(no_data_between_views_but_rows_and_flush)
{
	struct rec r = { .engines_run = false };

	EXPECT_EQ(sp_group_pass(&rec_group_ops, &r, 3), 0);
	EXPECT_EQ(strcmp(r.ev, "VRRF"), 0);
}

/* A subgroup's turn over a simulated node, every call recorded. */
static void rec_lock(void *ctx)
{
	rec_ev(ctx, 'L');
}

static void rec_unlock(void *ctx)
{
	rec_ev(ctx, 'U');
}

static u32 rec_take(void *ctx)
{
	rec_ev(ctx, 'T');
	return 0;
}

static void rec_limit(void *ctx)
{
	rec_ev(ctx, 'M');
}

static void rec_freed(void *ctx, u32 n)
{
	(void)n;
	rec_ev(ctx, 'W');
}

static u32 rec_deliver(void *ctx, u32 max)
{
	struct rec *r = ctx;

	if (max > r->max_deliver)
		r->max_deliver = max;
	rec_ev(ctx, 'D');
	return sim_turn_deliver(&((struct rec *)ctx)->t, max);
}

static u32 rec_writes(void *ctx, u32 m)
{
	struct rec *r = ctx;

	return r->room ? r->room : sim_turn_writes(&r->t, m);
}

static bool rec_block_ok(void *ctx, u32 m)
{
	(void)ctx;
	(void)m;
	return true;
}

static void rec_queue(void *ctx, u32 m, const struct sp_wr *w)
{
	struct rec *r = ctx;

	rec_ev(ctx, 'Q');
	if (r->nkinds < ARRAY_SIZE(r->kinds))
		r->kinds[r->nkinds++] = (int)w->kind;
	sim_turn_queue(&r->t, m, w);
}

static void rec_post(void *ctx, u32 m)
{
	(void)m;
	rec_ev(ctx, 'P');
}

static void rec_bad(void *ctx, u32 m, const char *what)
{
	(void)m;
	(void)what;
	rec_ev(ctx, 'X');
}

static const struct sp_pass_ops rec_ops = {
	.lock = rec_lock,
	.unlock = rec_unlock,
	.take = rec_take,
	.limit = rec_limit,
	.freed = rec_freed,
	.deliver = rec_deliver,
	.writes = rec_writes,
	.block_ok = rec_block_ok,
	.queue = rec_queue,
	.post = rec_post,
	.bad = rec_bad,
};

static const u32 two[] = { 0, 1 };

/* node 0 of two, with @n messages marked ready; @flags: SP_GROUP_* */
static void two_nodes_flags(struct kt *_t, struct sim *s, struct rec *r,
			    u32 n, u32 flags)
{
	ASSERT_EQ(sim_init_flags(s, 2, two, 2, flags, SP_MODE_ORDERED, 8, 64, 1), 0);
	s->node[0].sg[0].to_send = n;
	sim_produce(s, 0);	/* reserve */
	sim_produce(s, 0);	/* fill and mark ready */
	r->t.s = s;
	r->t.i = 0;
}

static void two_nodes(struct kt *_t, struct sim *s, struct rec *r, u32 n)
{
	two_nodes_flags(_t, s, r, n, 0);
}

TEST(turn_takes_publishes_and_reclaims_under_the_lock)
{
	static struct sim s;
	struct rec r = { 0 };

	two_nodes(_t, &s, &r, 3);
	if (_t->failed)
		return;
	EXPECT_GT(sp_sub_pass(&s.node[0].sg[0].sub, &rec_ops, &r, 0), 0);
	/* lock, take, limit, unlock; deliver; then the writes */
	EXPECT_EQ(strncmp(r.ev, "LTMUD", 5), 0);
	EXPECT_GT(r.nkinds, 0);
	if (strncmp(r.ev, "LTMUD", 5))
		TH_LOG("turn: %s", r.ev);
	/* Spindle's writes wait for the group's flush, after every lock */
	EXPECT_EQ(strchr(r.ev, 'P'), NULL);
	EXPECT_EQ(r.max_deliver, s.node[0].sg[0].sub.log_size);
	sim_free(&s);
}

TEST(turn_writes_payload_before_the_headers_that_announce_it)
{
	static struct sim s;
	struct rec r = { 0 };
	u32 k, first_hdr = ~0U, last_pay = 0, block = 0;

	two_nodes(_t, &s, &r, 3);
	if (_t->failed)
		return;
	sp_sub_pass(&s.node[0].sg[0].sub, &rec_ops, &r, 0);
	ASSERT_GT(r.nkinds, 0);
	for (k = 0; k < r.nkinds; k++) {
		if (r.kinds[k] == SP_WR_PAYLOAD)
			last_pay = k;
		if (r.kinds[k] == SP_WR_HDR && first_hdr == ~0U)
			first_hdr = k;
		if (r.kinds[k] == SP_WR_BLOCK)
			block = k;
	}
	ASSERT_NE(first_hdr, ~0U);
	EXPECT_LT(last_pay, first_hdr);
	EXPECT_EQ(block, r.nkinds - 1);	/* the counters last */
	sim_free(&s);
}

TEST(turn_after_a_failure_publishes_nothing_new)
{
	static struct sim s;
	struct rec r = { 0 };
	u32 k;

	two_nodes(_t, &s, &r, 3);
	if (_t->failed)
		return;
	sp_sub_pass(&s.node[0].sg[0].sub, &rec_ops, &r, SP_PASS_NO_PUBLISH);
	EXPECT_EQ(strchr(r.ev, 'T'), NULL);
	for (k = 0; k < r.nkinds; k++)
		EXPECT_NE(r.kinds[k], SP_WR_HDR);
	EXPECT_EQ(s.node[0].sg[0].sub.hdr_pub, 0);
	sim_free(&s);
}

TEST(wedged_turn_delivers_nothing)
{
	static struct sim s;
	struct rec r = { 0 };

	two_nodes(_t, &s, &r, 3);
	if (_t->failed)
		return;
	s.node[0].sg[0].sub.wedged = true;
	sp_sub_pass(&s.node[0].sg[0].sub, &rec_ops, &r, 0);
	EXPECT_EQ(strchr(r.ev, 'D'), NULL);
	sim_free(&s);
}

/*
 * The baseline's policy: the same turn in steps of one message; what a
 * step queues is posted before the lock is dropped (Derecho's way: the
 * application threads wait on that lock), and one message is delivered
 * per step.  A turn steps on while it moves: three messages, three
 * publish steps in one turn.
 */
TEST(baseline_turn_posts_each_step_under_the_lock)
{
	static struct sim s;
	struct rec r = { 0 };
	bool locked = false, unposted = false;
	u32 k;

	two_nodes_flags(_t, &s, &r, 3, SP_GROUP_BASELINE);
	if (_t->failed)
		return;
	EXPECT_GT(sp_sub_pass(&s.node[0].sg[0].sub, &rec_ops, &r, SP_PASS_STEPWISE), 0);
	EXPECT_EQ(s.node[0].sg[0].sub.stats.publish_batches, 3);
	EXPECT_EQ(r.max_deliver, 1);
	ASSERT_GT(r.nkinds, 0);
	for (k = 0; k < r.n; k++) {
		switch (r.ev[k]) {
		case 'L':
			locked = true;
			break;
		case 'Q':
			EXPECT_TRUE(locked);
			unposted = true;
			break;
		case 'P':
			EXPECT_TRUE(locked);
			unposted = false;
			break;
		case 'U':
			EXPECT_FALSE(unposted);
			locked = false;
			break;
		}
	}
	EXPECT_FALSE(unposted);
	if (_t->failed)
		TH_LOG("turn: %s", r.ev);
	sim_free(&s);
}

/*
 * The baseline queues a step's writes as the step moves.  A message whose
 * writes found no room in the send queue then (payload, header and the
 * block that announces them go together) must go out on a later pass that
 * has room, though nothing else moves: else it waits for ever, the peer
 * with it (sim_scale: two members, one message each, seed 2).
 */
TEST(baseline_sends_later_what_found_no_room)
{
	static struct sim s;
	struct rec r = { 0 };
	struct sp_sub *e = &s.node[0].sg[0].sub;

	two_nodes_flags(_t, &s, &r, 1, SP_GROUP_BASELINE);
	if (_t->failed)
		return;
	r.room = 1;
	EXPECT_GT(sp_sub_pass(e, &rec_ops, &r, SP_PASS_STEPWISE), 0);
	EXPECT_EQ(e->hdr_pub, 1);
	EXPECT_EQ(r.nkinds, 0);		/* published, but no room to send it */
	r.room = 16;
	EXPECT_GT(sp_sub_pass(e, &rec_ops, &r, SP_PASS_STEPWISE), 0);
	EXPECT_EQ(e->tx_hdr[1], 1);
	ASSERT_GE(r.nkinds, 2);
	EXPECT_EQ(r.kinds[0], SP_WR_PAYLOAD);
	EXPECT_EQ(r.kinds[1], SP_WR_HDR);
	if (_t->failed)
		TH_LOG("turn: %s", r.ev);
	sim_free(&s);
}

/*
 * Lazy changes (proto/lazy.h): they wait up to the limit, then one pass
 * flushes them; what that pass could not push (a send queue full, a push
 * in flight) waits for the completion that wakes the thread anyway, not
 * for a thread polling with nothing to do.
 */
TEST(lazy_changes_flush_once_old_and_never_make_the_thread_poll)
{
	struct sp_lazy l = { 0 };

	EXPECT_EQ(sp_lazy_after_pass(&l, false, 50, 10), U64_MAX);
	EXPECT_EQ(sp_lazy_after_pass(&l, true, 100, 10), 10);
	EXPECT_FALSE(l.flush);
	EXPECT_EQ(sp_lazy_after_pass(&l, true, 105, 10), 5);
	EXPECT_EQ(sp_lazy_after_pass(&l, true, 110, 10), 0);
	EXPECT_TRUE(l.flush);
	/* the flushing pass left some: no reason to poll */
	EXPECT_EQ(sp_lazy_after_pass(&l, true, 111, 10), U64_MAX);
	EXPECT_TRUE(l.flush);
	EXPECT_EQ(sp_lazy_after_pass(&l, true, 500, 10), U64_MAX);
	/* all out: the next ones wait their own limit */
	EXPECT_EQ(sp_lazy_after_pass(&l, false, 501, 10), U64_MAX);
	EXPECT_FALSE(l.flush);
	EXPECT_EQ(sp_lazy_after_pass(&l, true, 600, 10), 10);
	EXPECT_FALSE(l.flush);
	/* no limit: flush after the first pass that left some */
	l = (struct sp_lazy){ 0 };
	EXPECT_EQ(sp_lazy_after_pass(&l, true, 700, 0), 0);
	EXPECT_TRUE(l.flush);
}
