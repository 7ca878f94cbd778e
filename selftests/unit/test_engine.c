// SPDX-License-Identifier: GPL-2.0
/*
 * The multicast engine (kmod/proto/engine.c) on a simulated cluster
 * (sim.h): total order, FIFO, no loss, duplicate or reorder, payload
 * integrity, null-send liveness, quiescence, flow control, and rejection
 * of what a faulty peer writes.
 */
#include "sim.h"
#include "../../kmod/proto/order.h"
#include "../ktap.h"

#define SEEDS 12

static const u32 all3[] = { 0, 1, 2 };
static const u32 all4[] = { 0, 1, 2, 3 };

/* the sender rank of node @n in node @nd's engine */
static u32 rank_of(const struct sim_node *nd, u32 n)
{
	u32 r;

	for (r = 0; r < nd->sg[0].sub.nsenders; r++)
		if (nd->sg[0].rank_node[r] == n)
			return r;
	return ~0U;
}

/* every sender's tags 0..sent-1 delivered in order, exactly once */
static int check_fifo(struct sim *s, u32 node, const u64 *expect, struct kt *_t)
{
	struct sim_node *nd = &s->node[node];
	u32 next[SIM_MAX_NODES] = { 0 };
	u64 i;
	u32 r;

	for (i = 0; i < nd->sg[0].nlog; i++) {
		const struct sim_rec *rec = &nd->sg[0].log[i];

		if (rec->tag != next[rec->rank]) {
			TH_LOG("node %u: sender %u tag %u, expected %u", node,
			       rec->rank, rec->tag, next[rec->rank]);
			return -1;
		}
		next[rec->rank]++;
	}
	for (r = 0; r < nd->sg[0].sub.nsenders; r++)
		if (next[nd->sg[0].rank_node[r]] != expect[r]) {
			TH_LOG("node %u: rank %u delivered %u of %llu", node, r,
			       next[nd->sg[0].rank_node[r]], (unsigned long long)expect[r]);
			return -1;
		}
	(void)_t;
	return 0;
}

/* all logs identical; seq strictly increasing and round-robin */
static int check_total_order(struct sim *s, struct kt *_t)
{
	struct sim_node *n0 = &s->node[0];
	u32 i;
	u64 k;

	for (k = 0; k < n0->sg[0].nlog; k++) {
		const struct sim_rec *rec = &n0->sg[0].log[k];

		if (rec->seq != sp_seq(rank_of(n0, rec->rank), rec->index,
				       n0->sg[0].sub.nsenders) ||
		    (k && rec->seq <= n0->sg[0].log[k - 1].seq)) {
			TH_LOG("node 0: entry %llu breaks round-robin order",
			       (unsigned long long)k);
			return -1;
		}
	}
	for (i = 1; i < s->n; i++) {
		struct sim_node *nd = &s->node[i];

		if (nd->sg[0].nlog != n0->sg[0].nlog) {
			TH_LOG("node %u delivered %llu, node 0 %llu", i,
			       (unsigned long long)nd->sg[0].nlog,
			       (unsigned long long)n0->sg[0].nlog);
			return -1;
		}
		for (k = 0; k < nd->sg[0].nlog; k++)
			if (memcmp(&nd->sg[0].log[k], &n0->sg[0].log[k],
				   sizeof(nd->sg[0].log[k]))) {
				TH_LOG("node %u differs from node 0 at %llu", i,
				       (unsigned long long)k);
				return -1;
			}
	}
	(void)_t;
	return 0;
}

/* run a whole stream; per-sender message counts in @count (by member id) */
static int hold_blocks;	/* % of emits that hold the block back */

static int run_stream(struct kt *_t, u32 n, const u32 *senders, u32 ns, u32 mode,
		      u32 window, u32 max_msg, const u64 *count, u64 seed,
		      int void_pct, int lazy)
{
	static struct sim s;
	u64 expect[SIM_MAX_NODES] = { 0 };
	long rounds;
	u32 i, r;
	int ret = -1;

	if (sim_init(&s, n, senders, ns, mode, window, max_msg, seed))
		return -1;
	s.void_pct = void_pct;
	s.hold_blocks = hold_blocks;
	for (r = 0; r < ns; r++) {
		s.node[senders[r]].sg[0].to_send = count[r];
		expect[r] = count[r];
	}
	for (i = 0; i < n; i++)
		s.node[i].sg[0].lazy = lazy;
	rounds = sim_run(&s, 200000);
	if (rounds < 0) {
		TH_LOG("seed %llu: engine fault %ld (member %d: %s)",
		       (unsigned long long)seed, rounds,
		       s.node[0].sg[0].sub.fault_member, s.node[0].sg[0].sub.fault_what);
		goto out;
	}
	for (i = 0; i < n; i++)
		if (check_fifo(&s, i, expect, _t))
			goto out;
	if (mode == SP_MODE_ORDERED && check_total_order(&s, _t))
		goto out;
	ret = 0;
out:
	sim_free(&s);
	return ret;
}

TEST(ordered_all_senders)
{
	u64 cnt[3] = { 300, 300, 300 };
	u64 seed;

	for (seed = 1; seed <= SEEDS; seed++)
		ASSERT_EQ(run_stream(_t, 3, all3, 3, SP_MODE_ORDERED, 8, 64, cnt, seed, 0, 0), 0);
}

TEST(ordered_uneven_senders_need_nulls)
{
	u64 cnt[4] = { 400, 3, 0, 150 };
	u64 seed;

	for (seed = 1; seed <= SEEDS; seed++)
		ASSERT_EQ(run_stream(_t, 4, all4, 4, SP_MODE_ORDERED, 5, 32, cnt, seed, 0, 0), 0);
}

TEST(ordered_half_and_one_sender)
{
	static const u32 half[] = { 1, 3 };
	static const u32 one[] = { 2 };
	u64 cnt[2] = { 250, 250 };
	u64 seed;

	for (seed = 1; seed <= SEEDS; seed++) {
		ASSERT_EQ(run_stream(_t, 4, half, 2, SP_MODE_ORDERED, 7, 100, cnt, seed, 0, 0), 0);
		ASSERT_EQ(run_stream(_t, 4, one, 1, SP_MODE_ORDERED, 7, 100, cnt, seed, 0, 0), 0);
	}
}

TEST(window_of_one)
{
	u64 cnt[3] = { 60, 40, 80 };
	u64 seed;

	for (seed = 1; seed <= SEEDS; seed++)
		ASSERT_EQ(run_stream(_t, 3, all3, 3, SP_MODE_ORDERED, 1, 16, cnt, seed, 0, 0), 0);
}

TEST(unordered_fifo_per_sender)
{
	u64 cnt[4] = { 200, 0, 90, 300 };
	u64 seed;

	for (seed = 1; seed <= SEEDS; seed++)
		ASSERT_EQ(run_stream(_t, 4, all4, 4, SP_MODE_UNORDERED, 6, 48, cnt, seed, 0, 0), 0);
}

TEST(abandoned_reservations_become_nulls)
{
	u64 cnt[3] = { 200, 200, 200 };
	u64 seed;

	for (seed = 1; seed <= SEEDS; seed++) {
		ASSERT_EQ(run_stream(_t, 3, all3, 3, SP_MODE_ORDERED, 6, 40, cnt, seed, 20, 0), 0);
		ASSERT_EQ(run_stream(_t, 3, all3, 3, SP_MODE_UNORDERED, 6, 40, cnt, seed, 20, 0), 0);
	}
}

TEST(slow_consumers_hold_senders_back)
{
	u64 cnt[3] = { 300, 300, 300 };
	u64 seed;

	for (seed = 1; seed <= SEEDS; seed++)
		ASSERT_EQ(run_stream(_t, 3, all3, 3, SP_MODE_ORDERED, 4, 24, cnt, seed, 0, 1), 0);
}

TEST(single_node_group)
{
	static const u32 one[] = { 0 };
	u64 cnt[1] = { 500 };

	ASSERT_EQ(run_stream(_t, 1, one, 1, SP_MODE_ORDERED, 3, 8, cnt, 7, 10, 0), 0);
	ASSERT_EQ(run_stream(_t, 1, one, 1, SP_MODE_UNORDERED, 3, 8, cnt, 7, 0, 1), 0);
}

/*
 * A sender that stops must not stall the others: with sender 1 stalled for
 * the whole run, the others' messages are all delivered, in order, at every
 * node, carried past it by its nulls.
 */
TEST(stalled_sender_does_not_stall_others)
{
	static struct sim s;
	u64 want = 0;
	u32 i;

	ASSERT_EQ(sim_init(&s, 3, all3, 3, SP_MODE_ORDERED, 4, 32, 99), 0);
	s.node[0].sg[0].to_send = 200;
	s.node[2].sg[0].to_send = 200;
	s.node[1].sg[0].to_send = 1;
	s.node[1].sg[0].stall = 1000000;
	sim_run(&s, 5000);
	for (i = 0; i < 3; i++) {
		want = s.node[i].sg[0].nlog;
		EXPECT_EQ(want, 400);
	}
	EXPECT_GT(s.node[1].sg[0].sub.stats.nulls_sent, 100);
	sim_free(&s);
}

/* With nothing to send, nothing is written: no nulls, no counter pushes. */
TEST(quiescent_when_senders_stop)
{
	static struct sim s;
	u64 writes[3], nulls[3];
	u32 i;

	ASSERT_EQ(sim_init(&s, 3, all3, 3, SP_MODE_ORDERED, 8, 32, 5), 0);
	s.node[0].sg[0].to_send = 100;
	s.node[2].sg[0].to_send = 37;
	ASSERT_GE(sim_run(&s, 100000), 0);
	for (i = 0; i < 3; i++) {
		writes[i] = s.node[i].writes;
		nulls[i] = s.node[i].sg[0].sub.stats.nulls_sent;
		EXPECT_EQ(s.node[i].sg[0].nlog, 137);
	}
	sim_run(&s, 500);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(s.node[i].writes, writes[i]);
		EXPECT_EQ(s.node[i].sg[0].sub.stats.nulls_sent, nulls[i]);
	}
	/* and a burst later is delivered */
	s.node[1].sg[0].to_send = 5;
	ASSERT_GE(sim_run(&s, 100000), 0);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(s.node[i].sg[0].nlog, 142);
	sim_free(&s);
}

/* Batching: under load a publish covers many messages, a null run is one header. */
TEST(batches_and_null_runs)
{
	static struct sim s;
	u32 i;

	ASSERT_EQ(sim_init(&s, 3, all3, 3, SP_MODE_ORDERED, 64, 16, 3), 0);
	s.max_batch = 32;
	s.max_room = 64;
	s.node[0].sg[0].to_send = 3000;
	ASSERT_GE(sim_run(&s, 100000), 0);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(s.node[i].sg[0].nlog, 3000);
	/* one sender: others owe nulls, sent as runs of more than one */
	EXPECT_GT(s.node[1].sg[0].sub.stats.nulls_sent, 2 * s.node[1].sg[0].sub.stats.null_hdrs);
	EXPECT_LT(s.node[0].sg[0].sub.stats.publish_batches, 3000 / 4);
	/*
	 * Sending each message on its own costs 3 writes per peer (payload,
	 * header, counter): 6 per message here.  Batched, under one.
	 */
	EXPECT_LT(s.node[0].writes, 3000);
	sim_free(&s);
}

/* ---- what a faulty or hostile peer writes ---- */

static void hostile_setup(struct sim *s, struct kt *_t)
{
	ASSERT_EQ(sim_init(s, 3, all3, 3, SP_MODE_ORDERED, 4, 32, 11), 0);
	s->node[1].sg[0].to_send = 3;
	ASSERT_GE(sim_run(s, 10000), 0);
	ASSERT_EQ(s->node[0].sg[0].nlog, 3);
}

TEST(hostile_header_length_over_max)
{
	static struct sim s;
	struct sim_node *v = &s.node[0];

	hostile_setup(&s, _t);
	/* node 1 publishes a header claiming more than max_msg */
	v->sg[0].hdrs[1][3 % v->sg[0].sub.hdr_slots].len = cpu_to_le32(33);
	v->sg[0].hdrs[1][3 % v->sg[0].sub.hdr_slots].kind = cpu_to_le16(SP_HDR_DATA);
	v->sg[0].blocks[1]->hdr_pub = cpu_to_le64(4);
	EXPECT_EQ(sp_sub_receive(&v->sg[0].sub), -EPROTO);
	EXPECT_EQ(v->sg[0].sub.fault_member, 1);
	EXPECT_EQ(v->sg[0].nlog, 3);
	/* and it stays faulty */
	EXPECT_EQ(sp_sub_receive(&v->sg[0].sub), -EPROTO);
	sim_free(&s);
}

TEST(hostile_null_count_over_window)
{
	static struct sim s;
	struct sim_node *v = &s.node[2];

	hostile_setup(&s, _t);
	v->sg[0].hdrs[1][3].kind = cpu_to_le16(SP_HDR_NULLS);
	v->sg[0].hdrs[1][3].count = cpu_to_le16(5);
	v->sg[0].hdrs[1][3].len = 0;
	v->sg[0].blocks[1]->hdr_pub = cpu_to_le64(4);
	EXPECT_EQ(sp_sub_receive(&v->sg[0].sub), -EPROTO);
	EXPECT_EQ(v->sg[0].sub.fault_member, 1);
	sim_free(&s);
}

TEST(hostile_unknown_header_kind)
{
	static struct sim s;
	struct sim_node *v = &s.node[0];

	hostile_setup(&s, _t);
	v->sg[0].hdrs[1][3].kind = cpu_to_le16(9);
	v->sg[0].blocks[1]->hdr_pub = cpu_to_le64(4);
	EXPECT_EQ(sp_sub_receive(&v->sg[0].sub), -EPROTO);
	sim_free(&s);
}

TEST(hostile_counters_backwards_or_jumping)
{
	static struct sim s;

	hostile_setup(&s, _t);
	s.node[0].sg[0].blocks[1]->hdr_pub = cpu_to_le64(1);		/* was 3 */
	EXPECT_EQ(sp_sub_receive(&s.node[0].sg[0].sub), -EPROTO);
	s.node[2].sg[0].blocks[1]->hdr_pub = cpu_to_le64(3 + (1ULL << 63));
	EXPECT_EQ(sp_sub_receive(&s.node[2].sg[0].sub), -EPROTO);
	EXPECT_EQ(s.node[2].sg[0].sub.fault_member, 1);
	sim_free(&s);

	hostile_setup(&s, _t);
	/* more headers than the ring can hold without overwriting undelivered ones */
	s.node[0].sg[0].blocks[1]->hdr_pub = cpu_to_le64(3 + 2 * 4 + 1);
	EXPECT_EQ(sp_sub_receive(&s.node[0].sg[0].sub), -EPROTO);
	sim_free(&s);

	hostile_setup(&s, _t);
	s.node[0].sg[0].blocks[2]->recv_seq = 0;			/* was > 0 */
	EXPECT_EQ(sp_sub_receive(&s.node[0].sg[0].sub), -EPROTO);
	EXPECT_EQ(s.node[0].sg[0].sub.fault_member, 2);
	sim_free(&s);
}

TEST(hostile_release_of_unsent_messages)
{
	static struct sim s;
	__le64 *rel;

	hostile_setup(&s, _t);
	/* node 0 claims to have released more of node 1's messages than exist */
	rel = &s.node[1].sg[0].blocks[0]->v[3 + 1];
	*rel = cpu_to_le64(1000);
	EXPECT_EQ(sp_sub_receive(&s.node[1].sg[0].sub), -EPROTO);
	EXPECT_EQ(s.node[1].sg[0].sub.fault_member, 0);
	sim_free(&s);
}

TEST(producer_misuse_rejected)
{
	static struct sim s;
	struct sp_sub *sub;
	u64 first;

	ASSERT_EQ(sim_init(&s, 2, all3, 2, SP_MODE_ORDERED, 4, 32, 1), 0);
	sub = &s.node[0].sg[0].sub;
	EXPECT_EQ(sp_sub_mark_ready(sub, 0, 1), -EINVAL);	/* not reserved */
	EXPECT_EQ(sp_sub_reserve(sub, 10, &first), 4);		/* window caps it */
	EXPECT_EQ(first, 0);
	EXPECT_EQ(sp_sub_reserve(sub, 1, &first), 0);
	EXPECT_EQ(sp_sub_mark_ready(sub, 0, 33), -EMSGSIZE);
	EXPECT_EQ(sp_sub_mark_ready(sub, 0, 32), 0);
	EXPECT_EQ(sp_sub_mark_ready(sub, 0, 32), -EINVAL);	/* twice */
	EXPECT_EQ(sp_sub_mark_ready(sub, 4, 1), -EINVAL);	/* beyond */
	EXPECT_EQ(sp_sub_void(sub, 1), 0);
	EXPECT_EQ(sp_sub_void(sub, 1), -EINVAL);
	EXPECT_EQ(sp_sub_free_slots(sub), 0);
	sim_free(&s);
}

/*
 * A reservation given up (voided) or marked is nobody's any more, even
 * before a pass publishes it: a producer page may take over the ring then
 * (subdev.c's release voids a closing file's reservations and the next file
 * attaches at once, often before the predicate thread has run).
 */
TEST(marked_or_voided_reservations_are_not_held)
{
	static struct sim s;
	struct sp_sub *sub;
	u64 first;

	ASSERT_EQ(sim_init(&s, 2, all3, 2, SP_MODE_ORDERED, 4, 32, 1), 0);
	sub = &s.node[0].sg[0].sub;
	EXPECT_FALSE(sp_sub_reservations_held(sub));
	ASSERT_EQ(sp_sub_reserve(sub, 3, &first), 3);
	EXPECT_TRUE(sp_sub_reservations_held(sub));
	ASSERT_EQ(sp_sub_void(sub, first), 0);
	ASSERT_EQ(sp_sub_mark_ready(sub, first + 1, 8), 0);
	EXPECT_TRUE(sp_sub_reservations_held(sub));	/* first + 2 still is */
	ASSERT_EQ(sp_sub_void(sub, first + 2), 0);
	EXPECT_FALSE(sp_sub_reservations_held(sub));	/* none published yet */
	EXPECT_EQ(sub->pay_pub, 0);
	EXPECT_EQ(sp_sub_publish(sub), 3);
	EXPECT_FALSE(sp_sub_reservations_held(sub));
	sim_free(&s);
}

/*
 * With no consumer (deliver with room for nothing) data waits, but nulls
 * and given-up reservations pass and free their slots: a subgroup nobody
 * reads must not fill up with nulls.
 */
TEST(nulls_pass_without_consumers_data_waits)
{
	static const u32 one[] = { 0 };
	static struct sim s;
	struct sp_sub *sub;
	struct sp_desc d[4];
	u64 first;
	u32 i;

	ASSERT_EQ(sim_init(&s, 1, one, 1, SP_MODE_ORDERED, 4, 32, 1), 0);
	sub = &s.node[0].sg[0].sub;
	for (i = 0; i < 3; i++) {		/* three rounds of four voids */
		ASSERT_EQ(sp_sub_reserve(sub, 4, &first), 4);
		for (u32 k = 0; k < 4; k++)
			ASSERT_EQ(sp_sub_void(sub, first + k), 0);
		ASSERT_GT(sp_sub_publish(sub), 0);
		EXPECT_EQ(sp_sub_deliver(sub, d, 0), 0);
		EXPECT_EQ(sp_sub_reclaim(sub), 4 + 4);	/* slots and headers */
	}
	ASSERT_EQ(sp_sub_reserve(sub, 2, &first), 2);
	ASSERT_EQ(sp_sub_mark_ready(sub, first, 5), 0);
	ASSERT_EQ(sp_sub_void(sub, first + 1), 0);
	sp_sub_publish(sub);
	EXPECT_EQ(sp_sub_deliver(sub, d, 0), 0);	/* the data waits... */
	EXPECT_EQ(sp_sub_reclaim(sub), 0);	/* ...and holds its slot */
	EXPECT_EQ(sp_sub_deliver(sub, d, 4), 1);	/* a consumer takes it */
	EXPECT_EQ(d[0].len, 5);
	sp_sub_release(sub, 1);
	EXPECT_EQ(sp_sub_reclaim(sub), 2 + 2);
	sim_free(&s);
}

/*
 * Nulls delivered while a consumer holds a later message are released: the
 * consumer pins that message's slot, not the nulls' before it.  (The sg_abi
 * stall: three voids, then one message a consumer took and held, filled a
 * window of four for good; the consumer released it only after its next
 * send, which waited for a slot.)  Ordered and unordered alike.
 */
TEST(held_message_does_not_pin_the_nulls_before_it)
{
	static const u32 one[] = { 0 };
	static const u32 modes[] = { SP_MODE_ORDERED, SP_MODE_UNORDERED };
	static struct sim s;
	struct sp_desc d[4];
	struct sp_sub *sub;
	u64 first;
	u32 m, k;

	for (m = 0; m < 2; m++) {
		ASSERT_EQ(sim_init(&s, 1, one, 1, modes[m], 4, 32, 1), 0);
		sub = &s.node[0].sg[0].sub;
		ASSERT_EQ(sp_sub_reserve(sub, 3, &first), 3);
		for (k = 0; k < 3; k++)
			ASSERT_EQ(sp_sub_void(sub, first + k), 0);
		ASSERT_EQ(sp_sub_reserve(sub, 1, &first), 1);
		ASSERT_EQ(sp_sub_mark_ready(sub, first, 7), 0);
		ASSERT_GT(sp_sub_publish(sub), 0);
		EXPECT_EQ(sp_sub_deliver(sub, d, 4), 1);	/* a consumer holds it */
		EXPECT_EQ(sp_sub_reclaim(sub), 3 + 3);	/* the voids' slots and headers */
		EXPECT_EQ(sp_sub_free_slots(sub), 3);
		sp_sub_release(sub, 1);
		EXPECT_EQ(sp_sub_reclaim(sub), 1 + 1);
		EXPECT_EQ(sp_sub_free_slots(sub), 4);
		sim_free(&s);
	}
}

/*
 * One step of node @i that takes and publishes and pushes, but delivers
 * nothing (a member whose consumer has not come yet, or whose thread has
 * not run its delivery predicate), then every queued write lands.
 */
static void step_without_delivery(struct sim *s, u32 i)
{
	struct sp_sub *sub = &s->node[i].sg[0].sub;
	struct sp_wr w[SP_EMIT_MAX];
	u32 m, k, n, a, b;

	sp_sub_receive(sub);
	sp_sub_publish(sub);
	sp_sub_reclaim(sub);
	for (m = 0; m < sub->nmembers; m++) {
		if (m == sub->me)
			continue;
		n = sp_sub_emit(sub, m, 64, true, true, w);
		for (k = 0; k < n; k++)
			sim_post(s, i, s->node[i].sg[0].pos_node[m], 0, (int)w[k].kind,
				 w[k].offset, w[k].len,
				 w[k].kind == SP_WR_BLOCK ? (void *)sub->blocks[sub->me] : NULL);
	}
	for (a = 0; a < s->n; a++)
		for (b = 0; b < s->n; b++)
			while (a != b && sim_qlen(s, a, b))
				sim_exec(s, a, b);
}

/*
 * A member that leaves must wait until the others delivered what it
 * delivered, not only received it (unordered too): a peer that has
 * received a message but not delivered it when the sender goes is wedged
 * with it, and if a second member goes as well it has no majority and
 * stops with EIO, the message never delivered (cluster unordered_one_max_w1,
 * 6.1: 199 of 200 at one reader).
 */
TEST(caught_up_means_delivered_not_only_received)
{
	static const u32 one[] = { 0 };
	static const u32 modes[] = { SP_MODE_ORDERED, SP_MODE_UNORDERED };
	static struct sim s;
	u32 md, k, i;

	for (md = 0; md < 2; md++) {
		ASSERT_EQ(sim_init(&s, 3, one, 1, modes[md], 4, 32, 7), 0);
		s.node[0].sg[0].to_send = 3;
		ASSERT_GE(sim_run(&s, 10000), 0);	/* all delivered, released */
		for (i = 1; i < 3; i++)
			EXPECT_TRUE(sp_sub_caught_up(&s.node[0].sg[0].sub, i));
		s.node[0].sg[0].to_send = 2;
		while (s.node[0].sg[0].to_send || s.node[0].sg[0].pending_n)
			sim_produce(&s, 0);
		for (k = 0; k < 6; k++) {	/* node 1 receives, delivers nothing */
			sim_thread_pass(&s, 0);
			sim_thread_pass(&s, 2);
			step_without_delivery(&s, 1);
		}
		/* node 0 knows node 1 has both, and delivered them itself */
		EXPECT_EQ(s.node[0].sg[0].sub.seen[1].received[0], 5);
		EXPECT_EQ(s.node[0].sg[0].sub.rx[0].dl_idx, 5);
		EXPECT_EQ(s.node[1].sg[0].sub.rx[0].dl_idx, 3);
		EXPECT_FALSE(sp_sub_caught_up(&s.node[0].sg[0].sub, 1));
		ASSERT_GE(sim_run(&s, 10000), 0);	/* now everyone delivers */
		for (i = 1; i < 3; i++)
			EXPECT_TRUE(sp_sub_caught_up(&s.node[0].sg[0].sub, i));
		sim_free(&s);
	}
}

/*
 * The baseline (SP_GROUP_BASELINE): one message at a time at every stage
 * and no nulls.  Still totally ordered, but every message costs its own
 * payload, header and counter writes to every peer.
 */
TEST(baseline_one_at_a_time_still_ordered)
{
	static struct sim s;
	u64 expect[3] = { 200, 200, 200 };
	u32 i;

	ASSERT_EQ(sim_init_flags(&s, 3, all3, 3, SP_GROUP_BASELINE, SP_MODE_ORDERED,
				 16, 32, 4), 0);
	s.max_batch = 16;
	s.max_room = 64;
	for (i = 0; i < 3; i++)
		s.node[i].sg[0].to_send = 200;
	ASSERT_GE(sim_run(&s, 200000), 0);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(check_fifo(&s, i, expect, _t), 0);
	ASSERT_EQ(check_total_order(&s, _t), 0);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(s.node[i].sg[0].sub.stats.nulls_sent, 0);
		EXPECT_EQ(s.node[i].sg[0].sub.stats.publish_batches, 200);	/* one each */
		EXPECT_GE(s.node[i].writes, 200 * 2 * 3);	/* 3 writes, 2 peers */
	}
	sim_free(&s);
}

/*
 * Coalesced pushes: data goes out at once but the block that announces it
 * is held back at random, as while an earlier push is in flight.  The
 * order, FIFO and contents must not change.
 */
TEST(held_back_blocks_change_nothing)
{
	u64 cnt[4] = { 300, 40, 300, 0 };
	u64 seed;

	hold_blocks = 60;
	for (seed = 1; seed <= SEEDS; seed++) {
		ASSERT_EQ(run_stream(_t, 4, all4, 4, SP_MODE_ORDERED, 6, 40, cnt, seed, 10, 0), 0);
		ASSERT_EQ(run_stream(_t, 4, all4, 4, SP_MODE_UNORDERED, 6, 40, cnt, seed, 0, 1), 0);
	}
	hold_blocks = 0;
}

/*
 * What consumers released is lazy (sp_sub_due()), but not without bound.
 * A receiver whose consumer gave back an eighth of the window since the
 * sender last heard goes to it on its own, even when nothing urgent
 * changed and the sender is not yet half a window past: on a test bed
 * where one release round trip takes longer than a stream takes to fill
 * its window, every release held back shrinks the window.  One message's
 * release (light load) still waits to ride along.
 */
TEST(an_eighth_of_a_window_released_goes_at_once)
{
	static struct sim s;
	static const u32 one[] = { 0 };
	struct sp_sub *rx;
	__le64 *rel;

	ASSERT_EQ(sim_init(&s, 2, one, 1, SP_MODE_ORDERED, 64, 32, 1), 0);
	s.node[0].sg[0].to_send = 20;
	ASSERT_GE(sim_run(&s, 200000), 0);
	rx = &s.node[1].sg[0].sub;
	ASSERT_EQ(rx->rx[0].received, 20);
	ASSERT_EQ(rx->tx_rel[0], 20);	/* all told: quiescent */
	ASSERT_FALSE(sp_sub_due(rx, 0, false));

	/* 30 more received and delivered, nothing urgent left to push */
	rel = sp_blk_released(rx->blocks[rx->me], rx->nsenders);
	rx->rx[0].received = 50;
	rx->blk_ver++;
	rx->urg_ver = rx->pushed_ver[0];
	*rel = cpu_to_le64(21);
	EXPECT_FALSE(sp_sub_due(rx, 0, false));		/* rides along */
	*rel = cpu_to_le64(27);
	EXPECT_FALSE(sp_sub_due(rx, 0, false));		/* 7 of 8 */
	*rel = cpu_to_le64(28);
	EXPECT_TRUE(sp_sub_due(rx, 0, false));		/* 64 / 8 */
	/* half a window sent past what it heard: any release goes */
	*rel = cpu_to_le64(21);
	rx->rx[0].received = 52;
	EXPECT_TRUE(sp_sub_due(rx, 0, false));
	sim_free(&s);
}
