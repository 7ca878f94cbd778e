// SPDX-License-Identifier: GPL-2.0
/*
 * Views (kmod/proto/view.c): the majority rule, a view's configuration,
 * and the ragged trim on the simulated cluster: kill a member at a random
 * moment, let the survivors wedge and deliver up to the trim, and check
 * they agree, and that nothing delivered before is taken back.
 */
#include "sim.h"
#include "../../kmod/proto/view.h"
#include "../../kmod/proto/order.h"
#include "../ktap.h"

#define SEEDS 16

static const u32 all4[] = { 0, 1, 2, 3 };

TEST(majority_rule)
{
	EXPECT_TRUE(sp_view_has_majority(0xf, 0x7, false));	/* 3 of 4 */
	EXPECT_FALSE(sp_view_has_majority(0xf, 0x3, false));	/* 2 of 4 */
	EXPECT_TRUE(sp_view_has_majority(0x7, 0x5, false));	/* 2 of 3 */
	EXPECT_FALSE(sp_view_has_majority(0x7, 0x4, false));	/* 1 of 3 */
	EXPECT_TRUE(sp_view_has_majority(0x1f, 0x13, false));	/* 3 of 5 */
	/* two members: only by choice, and only the lower-ranked one */
	EXPECT_FALSE(sp_view_has_majority(0x3, 0x1, false));
	EXPECT_TRUE(sp_view_has_majority(0x3, 0x1, true));
	EXPECT_FALSE(sp_view_has_majority(0x3, 0x2, true));
	EXPECT_FALSE(sp_view_has_majority(0x7, 0x1, true));	/* not two */
	/* joiners do not count towards the old view's majority */
	EXPECT_FALSE(sp_view_has_majority(0x7, 0x1c, false));
}

TEST(view_configuration_drops_the_departed)
{
	static struct sim s;
	struct sp_group_cfg v;

	ASSERT_EQ(sim_init(&s, 4, all4, 4, SP_MODE_ORDERED, 4, 16, 1), 0);
	sp_view_config(&s.cfg, 0xb, &v);			/* members 0, 1, 3 */
	EXPECT_EQ(v.subgroups[0].nmembers, 3);
	EXPECT_EQ(v.subgroups[0].nsenders, 3);
	EXPECT_EQ(v.subgroups[0].senders[2], 3);		/* order kept */
	sp_view_config(&s.cfg, 0x0, &v);
	EXPECT_EQ(v.subgroups[0].nmembers, 0);
	sim_free(&s);
}

/* The trim as leader @l sees it: min of the survivors' received counts. */
/*
 * Where the numbering stands after a view, from its trim alone: each
 * sender's index goes on after its trim; ordered mode's sequence one past
 * the last message under the trim, in the round-robin order of the
 * senders the view had (here 0, 1 and 3: node 2 left in an earlier view).
 */
TEST(next_bases_from_the_trim)
{
	static struct sim s;
	struct sp_bases b = { .idx = { 10, 20, 30, 40 }, .seq = 100 };
	const u64 trim[] = { 3, 2, 0, 1 };

	ASSERT_EQ(sim_init(&s, 4, all4, 4, SP_MODE_ORDERED, 4, 16, 1), 0);
	sp_sub_next_bases(&s.cfg, 0, 0xb, trim, &b);
	EXPECT_EQ(b.idx[0], 13);
	EXPECT_EQ(b.idx[1], 22);
	EXPECT_EQ(b.idx[2], 30);
	EXPECT_EQ(b.idx[3], 41);
	/* ranks 0, 1, 3 are 0, 1, 2 of 3: sender 0's third at 2 * 3 + 0 */
	EXPECT_EQ(b.seq, 100 + sp_seq(0, 2, 3) + 1);
	/* an empty trim moves nothing */
	sp_sub_next_bases(&s.cfg, 0, 0xb, (const u64[4]){ 0 }, &b);
	EXPECT_EQ(b.seq, 100 + 7);
	/* unordered: no sequence across senders to go on with */
	s.cfg.subgroups[0].mode = SP_MODE_UNORDERED;
	sp_sub_next_bases(&s.cfg, 0, 0xf, trim, &b);
	EXPECT_EQ(b.idx[0], 16);
	EXPECT_EQ(b.seq, 107);
	sim_free(&s);
}

static void leader_trim(struct sim *s, u32 l, sp_mask_t survivors, u64 *trim)
{
	struct sp_sub *sub = &s->node[l].sg[0].sub;
	u64 rcv[SIM_MAX_NODES];
	u32 m, r;

	for (r = 0; r < sub->nsenders; r++)
		trim[r] = ~0ULL;
	for (m = 0; m < s->n; m++) {
		if (!sp_mask_has(survivors, m))
			continue;
		for (r = 0; r < sub->nsenders; r++)
			rcv[r] = m == l ? sub->rx[r].received :
				 le64_to_cpu(s->node[l].sg[0].blocks[m]->v[r]);
		sp_trim_merge(trim, rcv, sub->nsenders);
	}
}

/* Survivor i delivers up to @trim (which it must have). */
static int apply_trim(struct sim *s, u32 i, const u64 *trim, struct kt *_t)
{
	struct sp_sub *sub = &s->node[i].sg[0].sub;
	struct sp_desc d[32];
	u32 n, r;

	(void)_t;
	for (r = 0; r < sub->nsenders; r++)
		if (trim[r] > sub->rx[r].received) {
			TH_LOG("node %u lacks messages under the trim", i);
			return -1;
		}
	do {
		n = sp_sub_deliver_trim(sub, trim, d, 32);
		if (sim_record(s, i, 0, d, n))
			return -1;
		sp_sub_release(sub, sub->dl_descs);
	} while (n);
	return 0;
}

/* b's log equals a's (prefix: b is at most as long) */
static int log_prefix(const struct sim_node *a, const struct sim_node *b, int exact)
{
	u64 k;

	if (b->sg[0].nlog > a->sg[0].nlog || (exact && b->sg[0].nlog != a->sg[0].nlog))
		return -1;
	for (k = 0; k < b->sg[0].nlog; k++)
		if (memcmp(&a->sg[0].log[k], &b->sg[0].log[k], sizeof(a->sg[0].log[k])))
			return -1;
	return 0;
}

/* per sender, b's messages are a prefix of a's (unordered) */
static int log_prefix_per_sender(const struct sim_node *a, const struct sim_node *b,
				 u32 nsenders, int exact)
{
	u32 r;

	for (r = 0; r < nsenders; r++) {
		u64 i = 0, j = 0;

		for (;; i++, j++) {
			while (i < a->sg[0].nlog && a->sg[0].log[i].rank != r)
				i++;
			while (j < b->sg[0].nlog && b->sg[0].log[j].rank != r)
				j++;
			if (j == b->sg[0].nlog)
				break;
			if (i == a->sg[0].nlog ||
			    memcmp(&a->sg[0].log[i], &b->sg[0].log[j], sizeof(a->sg[0].log[i])))
				return -1;
		}
		for (; exact && i < a->sg[0].nlog; i++)
			if (a->sg[0].log[i].rank == r)
				return -1;
	}
	return 0;
}

static int agree(struct sim *s, u32 ref, u32 other, int exact)
{
	if (s->node[ref].sg[0].sub.mode == SP_MODE_ORDERED)
		return log_prefix(&s->node[ref], &s->node[other], exact);
	return log_prefix_per_sender(&s->node[ref], &s->node[other],
				     s->node[ref].sg[0].sub.nsenders, exact);
}

/*
 * Kill @victim after @rounds; the survivors wedge, settle, take the
 * leader's trim and deliver up to it.  Their logs must be identical (or,
 * unordered, identical per sender), and the victim's a prefix of theirs.
 */
static int kill_and_trim(struct kt *_t, u32 mode, u32 victim, long rounds, u64 seed)
{
	static struct sim s;
	sp_mask_t surv = 0xf & ~(1ULL << victim);
	u32 leader = (u32)sp_mask_first(surv), i;
	u64 trim[SIM_MAX_NODES];
	int ret = -1;

	if (sim_init(&s, 4, all4, 4, mode, 5, 24, seed))
		return -1;
	for (i = 0; i < 4; i++)
		s.node[i].sg[0].to_send = 400 + 50 * i;
	s.node[1].sg[0].stall = 20;			/* uneven senders: nulls in play */
	if (sim_run(&s, rounds) < 0)
		goto out;
	sim_kill(&s, victim);
	for (i = 0; i < 4; i++)
		s.node[i].sg[0].sub.wedged = true;
	if (sim_run(&s, 100000) < 0)		/* in-flight writes land */
		goto out;
	leader_trim(&s, leader, surv, trim);
	for (i = 0; i < 4; i++)
		if (i != victim && apply_trim(&s, i, trim, _t))
			goto out;
	for (i = 0; i < 4; i++) {
		if (i == leader)
			continue;
		if (agree(&s, leader, i, i != victim)) {
			TH_LOG("seed %llu victim %u: node %u disagrees with the leader %u",
			       (unsigned long long)seed, victim, i, leader);
			goto out;
		}
	}
	ret = 0;
out:
	sim_free(&s);
	return ret;
}

TEST(one_of_four_killed_survivors_agree_ordered)
{
	u64 seed;

	for (seed = 1; seed <= SEEDS; seed++)
		ASSERT_EQ(kill_and_trim(_t, SP_MODE_ORDERED, seed % 4, 20 + 37 * seed, seed), 0);
}

TEST(one_of_four_killed_survivors_agree_unordered)
{
	u64 seed;

	for (seed = 1; seed <= SEEDS; seed++)
		ASSERT_EQ(kill_and_trim(_t, SP_MODE_UNORDERED, (seed + 1) % 4, 15 + 41 * seed, seed), 0);
}

/*
 * Members wedge one at a time, each putting its received counts in its
 * view area as it does (the snapshot the trim is taken from), while the
 * others go on receiving and delivering.  Nothing anyone delivered may lie
 * past the trim: a wedged member's block must not announce, for others'
 * delivery, more than its snapshot holds.
 */
static int staggered_wedge(struct kt *_t, u32 mode, long rounds, u64 seed)
{
	static struct sim s;
	u64 snap[4][SIM_MAX_NODES], trim[SIM_MAX_NODES];
	u32 i, r, n;
	int ret = -1;

	(void)_t;
	if (sim_init(&s, 4, all4, 4, mode, 5, 24, seed))
		return -1;
	n = s.node[0].sg[0].sub.nsenders;
	for (i = 0; i < 4; i++)
		s.node[i].sg[0].to_send = 400;
	if (sim_run(&s, rounds) < 0)
		goto out;
	for (i = 0; i < 4; i++) {
		struct sp_sub *sub = &s.node[i].sg[0].sub;

		for (r = 0; r < n; r++)
			snap[i][r] = sub->rx[r].received;
		sub->wedged = true;
		if (sim_run(&s, 5 + sim_below(&s, 20)) < 0)
			goto out;
	}
	if (sim_run(&s, 100000) < 0)
		goto out;
	for (r = 0; r < n; r++)
		trim[r] = ~0ULL;
	for (i = 0; i < 4; i++)
		sp_trim_merge(trim, snap[i], n);
	for (i = 0; i < 4; i++)
		if (apply_trim(&s, i, trim, _t))
			goto out;
	for (i = 1; i < 4; i++) {
		if (agree(&s, 0, i, 1)) {
			TH_LOG("seed %llu: node %u delivered past the trim or short of it",
			       (unsigned long long)seed, i);
			goto out;
		}
	}
	ret = 0;
out:
	sim_free(&s);
	return ret;
}

TEST(staggered_wedge_nothing_past_the_trim_ordered)
{
	u64 seed;

	for (seed = 1; seed <= SEEDS; seed++)
		ASSERT_EQ(staggered_wedge(_t, SP_MODE_ORDERED, 20 + 23 * seed, seed), 0);
}

TEST(staggered_wedge_nothing_past_the_trim_unordered)
{
	u64 seed;

	for (seed = 1; seed <= SEEDS; seed++)
		ASSERT_EQ(staggered_wedge(_t, SP_MODE_UNORDERED, 20 + 23 * seed, seed), 0);
}

/*
 * A later leader, over fewer survivors and later counts, finds a trim at
 * least as long.  But a trim cannot be applied in steps: delivering up to
 * a shorter one skips the sequence numbers of a sender's messages past it.
 * So survivors apply only a committed trim (every survivor echoed it), and
 * a new leader adopts any echoed trim, the latest leader's first; only
 * when nobody echoed one does it compute its own.
 */
TEST(second_leader_trim_only_grows)
{
	static struct sim s;
	u64 seed;

	for (seed = 1; seed <= SEEDS; seed++) {
		u64 t1[SIM_MAX_NODES], t2[SIM_MAX_NODES];
		u32 i, r;

		ASSERT_EQ(sim_init(&s, 4, all4, 4, SP_MODE_ORDERED, 5, 24, seed), 0);
		for (i = 0; i < 4; i++)
			s.node[i].sg[0].to_send = 300;
		ASSERT_GE(sim_run(&s, 30 + 29 * (long)seed), 0);
		sim_kill(&s, 3);
		for (i = 0; i < 4; i++)
			s.node[i].sg[0].sub.wedged = true;
		ASSERT_GE(sim_run(&s, 3), 0);		/* the first leader looks early */
		leader_trim(&s, 0, 0x7, t1);
		sim_kill(&s, 0);			/* and dies before a commit */
		ASSERT_GE(sim_run(&s, 100000), 0);
		leader_trim(&s, 1, 0x6, t2);		/* nobody echoed t1: its own */
		for (r = 0; r < 4; r++)
			ASSERT_GE(t2[r], t1[r]);
		ASSERT_EQ(apply_trim(&s, 1, t2, _t), 0);
		ASSERT_EQ(apply_trim(&s, 2, t2, _t), 0);
		ASSERT_EQ(agree(&s, 1, 2, 1), 0);
		ASSERT_EQ(agree(&s, 1, 0, 0), 0);	/* the dead: prefixes */
		ASSERT_EQ(agree(&s, 1, 3, 0), 0);
		sim_free(&s);
	}
}

/* The leader dies after its trim was committed: the next one adopts it. */
TEST(committed_trim_is_adopted_by_the_next_leader)
{
	static struct sim s;
	u64 seed;

	for (seed = 1; seed <= SEEDS; seed++) {
		u64 t1[SIM_MAX_NODES];
		u32 i;

		ASSERT_EQ(sim_init(&s, 4, all4, 4, SP_MODE_ORDERED, 5, 24, seed), 0);
		for (i = 0; i < 4; i++)
			s.node[i].sg[0].to_send = 300;
		ASSERT_GE(sim_run(&s, 30 + 31 * (long)seed), 0);
		sim_kill(&s, 3);
		for (i = 0; i < 4; i++)
			s.node[i].sg[0].sub.wedged = true;
		ASSERT_GE(sim_run(&s, 3), 0);
		leader_trim(&s, 0, 0x7, t1);		/* echoed by 0, 1, 2: committed */
		ASSERT_EQ(apply_trim(&s, 2, t1, _t), 0);	/* 2 applies at once */
		sim_kill(&s, 0);
		ASSERT_GE(sim_run(&s, 100000), 0);
		ASSERT_EQ(apply_trim(&s, 1, t1, _t), 0);	/* 1 adopts t1 */
		ASSERT_EQ(agree(&s, 1, 2, 1), 0);
		ASSERT_EQ(agree(&s, 1, 0, 0), 0);
		sim_free(&s);
	}
}
