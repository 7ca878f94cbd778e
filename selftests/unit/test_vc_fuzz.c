// SPDX-License-Identifier: GPL-2.0
/*
 * Random schedules of compound failures on the simulated cluster, with
 * failure detection done as the module does it (kmod/rows.c,
 * spindle_detect()): every member bumps a heartbeat in its row and pushes
 * it; a member in scope (sp_vc_scope(): the view's, and the next view's
 * once a change is committed) whose heartbeat stood still for SUSPECT
 * rounds is suspected; a broken connection is noticed by each peer after
 * a delay of its own, or never (then only the heartbeat tells); a member
 * that installs a view without someone tears its connections to it down.
 *
 * Each schedule: 3 to 7 members in one ordered subgroup, every member
 * sends (the shapes variant: one to three subgroups, each of a random set
 * of the members, node 0 among them or not, with a random non-empty set
 * of them sending, ordered or unordered: fuzz_shape()); one to four
 * events at random rounds, each one of
 *   kill       a member dies (of the writes it had posted, a prefix lands);
 *   stall      a live member stops for 2-3 x SUSPECT rounds while its NIC
 *              goes on (a false suspicion: the others take it out, and it
 *              must find itself out and stop);
 *   partition  the links between a random minority and the rest lose
 *              every write from then on, both ways;
 *   restart    a dead or stopped member that no view holds any more comes
 *              back as a new incarnation and asks to join (half the time
 *              when there is one, and no partition); half the time a
 *              second one comes back in the same round, and both join.
 * Checked, for every schedule:
 *   - no member ever rejects a write or a row (the engine's and the row
 *     checks: a live member is never taken for hostile);
 *   - liveness: the live members that did not stop all end in the same
 *     view, of exactly them, not in the middle of a change, within
 *     MAX_ROUNDS;
 *   - agreement, in every subgroup, between two of its members: they
 *     delivered the same messages in the same order (view records
 *     included) from the later of their first views (unordered: the same
 *     messages of each sender in its order, each in the same view, and the
 *     same view records);
 *   - nothing taken back: what a member of a subgroup that died or stopped
 *     delivered there, from its first view on, is a prefix of what a
 *     member that has been there since then delivered (unordered: per
 *     sender, view by view);
 *   - with kills of fewer than half the members and nothing else, nobody
 *     stopped;
 *   - atomicity, as each record is made (simvc_agree()), by every member,
 *     dead and stopped ones and earlier incarnations too: one member set
 *     per view number, and in each subgroup one trim that ends the view
 *     before it.
 * The late variant runs the same schedules on links as real ones are: now
 * and then a link, or every link out of one node, holds its writes back
 * for up to 2 x SUSPECT rounds and then delivers them in order (a live
 * member may be suspected for it); and a node keeps one row push in flight
 * per peer, the latest row going out when it completed, so that peers
 * skip rows (sim.h).
 * FUZZ_SCHEDULES=N (default 10000), FUZZ_SEED=S (the first seed, default 1);
 * FUZZ_ONEWAY_SCHEDULES=N (default 2000) for the variant whose partition
 * is one link failing in one direction; FUZZ_SHAPE_SCHEDULES=N (default
 * 2000) for the shapes variant; FUZZ_LATE_SCHEDULES=N (default 2000) for
 * the late variant; `make fuzz-views` runs the long one.  A
 * failing schedule prints its seed: FUZZ_SEED=seed FUZZ_SCHEDULES=1
 * SIM_TRACE=1 replays it (in a variant: its count 1, the others' 0).
 *
 * The Makefile builds this file twice: test_vc_fuzz, under UBSan, runs the
 * counts above; test_vc_fuzz_asan (FUZZ_ASAN), under ASan and UBSan, which
 * make a schedule about 3.5 times slower, runs a fifth of each count, from
 * the seed after the last of test_vc_fuzz's: further schedules, each
 * checked for memory errors as well.
 */
#include "sim.h"
#include "../ktap.h"

#define HB_ROUNDS	8	/* a heartbeat every this many rounds */
#define SUSPECT		120	/* rounds of silence before a suspicion */
#define LOST_MAX	60	/* a broken connection is noticed within this */
#define MAX_ROUNDS	40000
#define SETTLED		(3 * SUSPECT)	/* rounds with nothing changing */
#define NEVER		(-1L)
#define LATE_EVERY	256	/* a hold every this many rounds, on average */
#ifdef FUZZ_ASAN
#define FUZZ_SHARE	5	/* the ASan build runs 1/FUZZ_SHARE of each count */
#else
#define FUZZ_ASAN	0
#define FUZZ_SHARE	1
#endif

enum fuzz_event { EV_KILL, EV_STALL, EV_PARTITION, EV_RESTART, EV_KINDS };

static const char *const fuzz_event_name[EV_KINDS] = {
	"kill", "stall", "partition", "restart",
};

/* what one node knows of the others' liveness */
struct fuzz_det {
	u64 hb_seen[SIM_MAX_NODES];	/* last heartbeat read */
	u64 inc_seen[SIM_MAX_NODES];
	long hb_round[SIM_MAX_NODES];	/* when it last changed */
	long lost_at[SIM_MAX_NODES];	/* connection noticed broken, or NEVER */
	sp_mask_t scope;
	u64 view;			/* the view it last installed */
	sp_mask_t members;
	long frozen_until;
	u64 first_view;			/* of this incarnation's log */
};

struct fuzz {
	struct sim s;
	struct fuzz_det det[SIM_MAX_NODES];
	long round;
	u64 seed;
	int kinds;			/* events that happened, as bits */
	u32 kills;
	u32 pairs;			/* restarts of two in one round */
	sp_mask_t hit;			/* nodes an event struck */
	int oneway;			/* a partition cuts one link, one way */
	int shape;			/* subgroups, members, senders, modes drawn */
	int late;			/* links hold writes back; rows coalesce */
	u64 late_rng;			/* the holds' own stream */
	u32 holds;			/* links held back */
	u32 events;			/* events still to come */
	char what[256];			/* the schedule, for the log */
	char why[96];			/* what a check found */
};

static bool live(const struct fuzz *f, u32 i)
{
	return !f->s.node[i].dead && !f->s.node[i].failed;
}

/* node @b notices its connection to @x broke, after a delay or never */
static void fuzz_lose(struct fuzz *f, u32 b, u32 x)
{
	long *at = &f->det[b].lost_at[x];

	if (*at != NEVER)
		return;
	if (sim_below(&f->s, 3) == 0)
		return;		/* only its heartbeat will tell */
	*at = f->round + 1 + (long)sim_below(&f->s, LOST_MAX);
}

/* the connection between @a and @b goes down: nothing more passes */
static void fuzz_cut(struct fuzz *f, u32 a, u32 b)
{
	f->s.cut[a][b] = 1;
	f->s.cut[b][a] = 1;
	fuzz_lose(f, a, b);
	fuzz_lose(f, b, a);
}

/* drop every write queued between @k and anyone */
static void fuzz_flush(struct fuzz *f, u32 k)
{
	struct sim *s = &f->s;
	u32 b;

	for (b = 0; b < s->n; b++) {
		struct sim_q *q[2] = { &s->q[k][b], &s->q[b][k] };
		int d;

		for (d = 0; d < 2; d++)
			while (q[d]->head != q[d]->tail) {
				free(q[d]->wr[q[d]->head % SIM_QCAP].snap);
				q[d]->head++;
			}
	}
}

/* a heartbeat in my row; pushed unless a change of it waits to go out */
static void fuzz_heartbeat(struct fuzz *f, u32 i)
{
	struct sim_node *nd = &f->s.node[i];
	struct sp_row_hdr *mine = &nd->rows[i];
	u32 b;

	mine->heartbeat = cpu_to_le64(le64_to_cpu(mine->heartbeat) + 1);
	if (nd->vc.row_ver != nd->pushed_row)
		return;		/* sim_vc_push() sends it with the change */
	for (b = 0; b < f->s.n; b++)
		if (b != i && !f->s.node[b].dead)
			sim_post_row(&f->s, i, b);
}

/* spindle_detect(), one node, one round */
static void fuzz_detect(struct fuzz *f, u32 i)
{
	struct sim_node *nd = &f->s.node[i];
	struct fuzz_det *d = &f->det[i];
	sp_mask_t scope = sp_vc_scope(&nd->vc);
	u32 m;

	for (m = 0; m < f->s.n; m++) {
		const struct sp_row_hdr *r = &nd->rows[m];

		if (m == i)
			continue;
		if (sp_mask_has(scope & ~d->scope, m) ||
		    le64_to_cpu(r->heartbeat) != d->hb_seen[m] ||
		    le64_to_cpu(r->incarnation) != d->inc_seen[m]) {
			d->hb_round[m] = f->round;
			d->hb_seen[m] = le64_to_cpu(r->heartbeat);
			d->inc_seen[m] = le64_to_cpu(r->incarnation);
		}
		if (!sp_mask_has(scope, m) || sp_mask_has(nd->vc.local_suspects, m))
			continue;
		if ((d->lost_at[m] != NEVER && f->round >= d->lost_at[m]) ||
		    f->round - d->hb_round[m] > SUSPECT) {
			if (getenv("SIM_TRACE"))
				fprintf(stderr, "round %ld: node %u suspects %u\n",
					f->round, i, m);
			sp_vc_local_suspect(&nd->vc, m);
		}
	}
	d->scope = scope;
}

/* a node installed a view: it drops its connections to those it left out */
static void fuzz_installs(struct fuzz *f, u32 i)
{
	struct sim_node *nd = &f->s.node[i];
	struct fuzz_det *d = &f->det[i];
	u32 x;

	if (nd->vc.phase != SP_VC_NORMAL || nd->vc.view == d->view)
		return;
	for (x = 0; x < f->s.n; x++)
		if (x != i && sp_mask_has(d->members, x) && !sp_mask_has(nd->vc.members, x))
			fuzz_cut(f, i, x);
	if (!d->view)
		d->first_view = nd->vc.view;	/* a joiner's first */
	d->view = nd->vc.view;
	d->members = nd->vc.members;
}

/* "EVENT NODE@ROUND" (or a mask) in the schedule's description */
static void fuzz_note(struct fuzz *f, const char *ev, u32 who)
{
	size_t len = strlen(f->what);

	snprintf(f->what + len, sizeof(f->what) - len, " %s %#x@%ld", ev, who, f->round);
}

static void fuzz_kill(struct fuzz *f, u32 k)
{
	u32 b;

	sim_kill(&f->s, k);
	for (b = 0; b < f->s.n; b++)
		if (b != k)
			fuzz_lose(f, b, k);
	f->kills++;
	fuzz_note(f, "kill", k);
	f->hit |= 1ULL << k;
}

static void fuzz_stall(struct fuzz *f, u32 k)
{
	long len = 2 * SUSPECT + (long)sim_below(&f->s, SUSPECT);

	f->s.node[k].frozen = 1;
	f->det[k].frozen_until = f->round + len;
	fuzz_note(f, "stall", k);
	f->hit |= 1ULL << k;
}

/* the nodes in @side lose every link to the others */
static void fuzz_partition(struct fuzz *f, sp_mask_t side)
{
	u32 a, b;

	for (a = 0; a < f->s.n; a++)
		for (b = 0; b < f->s.n; b++)
			if (sp_mask_has(side, a) && !sp_mask_has(side, b))
				fuzz_cut(f, a, b);
	fuzz_note(f, "partition (mask)", (u32)side);
	/* the smaller side is the one that failed, as the others see it */
	f->hit |= 2 * __builtin_popcountll(side) <= f->s.n ? side :
		  ((1ULL << f->s.n) - 1) & ~side;
}

/*
 * Writes from @a to @b stop landing; @b's to @a still do.  Under RC the
 * writer's queue errors out after its retries (noticed late, or never),
 * and the reader sees the writer's heartbeat stop.
 */
static void fuzz_cut_oneway(struct fuzz *f, u32 a, u32 b)
{
	f->s.cut[a][b] = 1;
	fuzz_lose(f, a, b);
	f->hit |= 1ULL << a;
	fuzz_note(f, "one-way cut (writer)", a);
	fuzz_note(f, "(reader)", b);
}

/* is @k held by no live node's view, with every live node in NORMAL? */
static bool fuzz_may_restart(struct fuzz *f, u32 k)
{
	u32 b;

	if (live(f, k) || f->s.node[k].frozen)
		return false;
	for (b = 0; b < f->s.n; b++) {
		const struct sim_node *nd = &f->s.node[b];

		if (!live(f, b) || b == k)
			continue;
		if (nd->vc.phase != SP_VC_NORMAL || sp_mask_has(nd->vc.members, k))
			return false;
	}
	return true;
}

/* node @i sends in subgroup @k */
static bool fuzz_sends(const struct fuzz *f, u32 k, u32 i)
{
	return sp_sub_sender_rank(&f->s.cfg.subgroups[k], i) >= 0;
}

static void fuzz_restart(struct fuzz *f, u32 k)
{
	struct fuzz_det *d = &f->det[k];
	u32 b, j;

	fuzz_flush(f, k);		/* the old incarnation's QPs are gone */
	for (b = 0; b < f->s.n; b++) {
		/*
		 * It connects to the live members (all of them took its old
		 * incarnation out: fuzz_may_restart()); one that stopped or
		 * died accepts nothing.
		 */
		f->s.cut[k][b] = !live(f, b);
		f->s.cut[b][k] = !live(f, b);
		f->det[b].lost_at[k] = NEVER;
		d->lost_at[b] = NEVER;
		d->hb_round[b] = f->round;
	}
	sim_restart(&f->s, k);
	for (j = 0; j < f->s.cfg.nsubgroups; j++)
		if (fuzz_sends(f, j, k))
			f->s.node[k].sg[j].to_send = 50 + sim_below(&f->s, 200);
	d->view = 0;
	d->members = 0;
	d->scope = 0;
	d->first_view = ~0ULL;	/* until it installs one */
	fuzz_note(f, "restart", k);
}

/* a random node for which @ok holds, or -1 */
static int fuzz_pick(struct fuzz *f, bool (*ok)(struct fuzz *, u32))
{
	u32 tries;

	for (tries = 0; tries < 32; tries++) {
		u32 k = sim_below(&f->s, f->s.n);

		if (ok(f, k))
			return (int)k;
	}
	return -1;
}

static bool fuzz_live_unfrozen(struct fuzz *f, u32 k)
{
	return live(f, k) && !f->s.node[k].frozen;
}

static void fuzz_event(struct fuzz *f)
{
	enum fuzz_event ev = (enum fuzz_event)sim_below(&f->s, EV_RESTART);
	sp_mask_t side = 0;
	int k, k2;
	u32 want, i;

	/* one that can come back does, half the time */
	if (!(f->kinds & (1 << EV_PARTITION)) && sim_below(&f->s, 2) &&
	    fuzz_pick(f, fuzz_may_restart) >= 0)
		ev = EV_RESTART;

	switch (ev) {
	case EV_KILL:
	case EV_STALL:
		k = fuzz_pick(f, fuzz_live_unfrozen);
		if (k < 0)
			return;
		if (ev == EV_KILL)
			fuzz_kill(f, (u32)k);
		else
			fuzz_stall(f, (u32)k);
		break;
	case EV_PARTITION:
		if (f->kinds & (1 << EV_PARTITION))
			return;		/* one is enough */
		if (f->oneway) {
			k = fuzz_pick(f, fuzz_live_unfrozen);
			k2 = fuzz_pick(f, fuzz_live_unfrozen);
			if (k < 0 || k2 < 0 || k == k2)
				return;
			fuzz_cut_oneway(f, (u32)k, (u32)k2);
			break;
		}
		want = 1 + sim_below(&f->s, (f->s.n - 1) / 2);
		for (i = 0; i < 64 && (u32)__builtin_popcountll(side) < want; i++)
			side |= 1ULL << sim_below(&f->s, f->s.n);
		fuzz_partition(f, side);
		break;
	case EV_RESTART:
		if (f->kinds & (1 << EV_PARTITION))
			return;		/* it could not reach the others */
		k = fuzz_pick(f, fuzz_may_restart);
		if (k < 0)
			return;
		/* half the time, a second one comes back in the same round */
		k2 = sim_below(&f->s, 2) ? fuzz_pick(f, fuzz_may_restart) : -1;
		fuzz_restart(f, (u32)k);
		if (k2 >= 0 && k2 != k) {
			fuzz_restart(f, (u32)k2);
			f->pairs++;
		}
		break;
	default:
		return;
	}
	f->kinds |= 1 << ev;
}

/* one round: the passes, then each node's detection and bookkeeping */
/*
 * The late variant's links: now and then, while events are still to come,
 * a link, or every link out of one node (its NIC), holds its writes back
 * for up to 2 x SUSPECT rounds, and then delivers them in order; a live
 * member may be suspected for it.  Its own stream: the schedule's own
 * draws are the same as without it.
 */
static void fuzz_late(struct fuzz *f)
{
	struct sim *s = &f->s;
	u64 until;
	u32 a, b;

	if (!f->events || sim_xorshift(&f->late_rng) % LATE_EVERY)
		return;
	a = (u32)(sim_xorshift(&f->late_rng) % s->n);
	b = (u32)(sim_xorshift(&f->late_rng) % s->n);
	until = s->clock + 1 + sim_xorshift(&f->late_rng) % (2 * SUSPECT);
	f->holds++;
	if (simvc_trace())
		fprintf(stderr, "round %ld: writes %u -> %s held back until round %llu\n",
			f->round, a, a == b ? "all" : "one", (unsigned long long)until);
	if (a != b) {
		sim_hold(s, a, b, until);
		return;
	}
	for (b = 0; b < s->n; b++)
		if (b != a)
			sim_hold(s, a, b, until);
}

static int fuzz_round(struct fuzz *f)
{
	struct sim *s = &f->s;
	u32 i;

	if (f->late)
		fuzz_late(f);
	if (sim_run(s, 1) < 0 || s->fault)
		return -1;
	f->round++;
	for (i = 0; i < s->n; i++) {
		struct sim_node *nd = &s->node[i];

		if (nd->frozen && f->round >= f->det[i].frozen_until)
			nd->frozen = 0;
		if (nd->dead || nd->frozen)
			continue;
		if (nd->failed) {
			u32 b;

			/* it stopped: its connections go down */
			for (b = 0; b < s->n; b++)
				if (b != i && !s->cut[i][b])
					fuzz_cut(f, i, b);
			continue;
		}
		if (f->round % HB_ROUNDS == i % HB_ROUNDS)
			fuzz_heartbeat(f, i);
		fuzz_detect(f, i);
		fuzz_installs(f, i);
	}
	return 0;
}

/* a joiner that can reach no live member (all stopped, or cut off) */
static bool fuzz_orphan(struct fuzz *f, u32 j)
{
	u32 m;

	if (f->s.node[j].vc.phase != SP_VC_JOINING)
		return false;
	for (m = 0; m < f->s.n; m++)
		if (m != j && live(f, m) && f->s.node[m].vc.phase != SP_VC_JOINING &&
		    !f->s.cut[j][m])
			return false;
	return true;
}

/* Has node @i messages still to send, in any subgroup? */
static bool fuzz_owes(const struct fuzz *f, u32 i)
{
	u32 k;

	for (k = 0; k < f->s.cfg.nsubgroups; k++)
		if (f->s.node[i].sg[k].to_send || f->s.node[i].sg[k].pending_n)
			return true;
	return false;
}

/*
 * The live members: all in one view of exactly them, changes done.  (A
 * member that came back and can reach no live member, because they all
 * stopped or a partition cut it off, has nobody to join: it waits, as it
 * would in the module, and is left out.)
 */
static bool fuzz_settled(struct fuzz *f)
{
	struct sim *s = &f->s;
	sp_mask_t alive = 0, members = 0;
	u64 view = 0;
	u32 i;

	for (i = 0; i < s->n; i++) {
		if (s->node[i].frozen)
			return false;
		if (live(f, i) && !fuzz_orphan(f, i))
			alive |= 1ULL << i;
	}
	if (!alive)
		return true;
	for (i = 0; i < s->n; i++) {
		const struct sim_node *nd = &s->node[i];

		if (!sp_mask_has(alive, i))
			continue;
		if (nd->vc.phase != SP_VC_NORMAL || fuzz_owes(f, i))
			return false;
		if (!view) {
			view = nd->vc.view;
			members = nd->vc.members;
		}
		if (nd->vc.view != view || nd->vc.members != members)
			return false;
	}
	return members == alive;
}

/* the part of @nd's log from the start of view @v (whole log: v <= 1) */
static u64 fuzz_from(const struct sim_sg *nd, u64 v)
{
	u64 k;

	if (v <= 1)
		return 0;
	for (k = 0; k < nd->nlog; k++)
		if (nd->log[k].rank == SIM_VIEW_RANK && nd->log[k].index == v)
			return k + 1;
	return nd->nlog;	/* it never got there */
}

/* @b's log from view @v is (a prefix of, when @prefix) @a's from @v */
static bool fuzz_agree(const struct sim_sg *a, const struct sim_sg *b, u64 v,
		       bool prefix)
{
	u64 ka = fuzz_from(a, v), kb = fuzz_from(b, v);
	u64 na = a->nlog - ka, nb = b->nlog - kb;

	if (nb > na || (!prefix && nb != na))
		return false;
	return !memcmp(&a->log[ka], &b->log[kb], nb * sizeof(*a->log));
}

/* from @k, the next entry of @rank in @nd's log; *@views counts the view records passed */
static u64 fuzz_next(const struct sim_sg *nd, u64 k, u32 rank, u64 *views)
{
	for (; k < nd->nlog && nd->log[k].rank != rank; k++)
		*views += nd->log[k].rank == SIM_VIEW_RANK;
	return k;
}

/*
 * Unordered: from view @v, each sender's messages in @b's log are (a
 * prefix of, when @prefix) its messages in @a's, each delivered in the
 * same view; and so are the view records.
 */
static bool fuzz_agree_unordered(const struct sim_sg *a, const struct sim_sg *b,
				 u64 v, bool prefix)
{
	u32 r;

	for (r = 0; r <= SIM_MAX_NODES; r++) {
		u32 rank = r < SIM_MAX_NODES ? r : SIM_VIEW_RANK;
		u64 i = fuzz_from(a, v), j = fuzz_from(b, v), va = 0, vb = 0;

		for (;; i++, j++) {
			i = fuzz_next(a, i, rank, &va);
			j = fuzz_next(b, j, rank, &vb);
			if (j == b->nlog)
				break;
			if (i == a->nlog || va != vb ||
			    memcmp(&a->log[i], &b->log[j], sizeof(a->log[i])))
				return false;
		}
		if (!prefix && fuzz_next(a, i, rank, &va) != a->nlog)
			return false;
	}
	return true;
}

/* subgroup @k's logs of nodes @a and @b, by its mode's rule */
static bool fuzz_agree_mode(const struct fuzz *f, u32 k, u32 a, u32 b, u64 v, bool prefix)
{
	const struct sim_sg *ga = &f->s.node[a].sg[k], *gb = &f->s.node[b].sg[k];

	if (f->s.cfg.subgroups[k].mode == SP_MODE_UNORDERED)
		return fuzz_agree_unordered(ga, gb, v, prefix);
	return fuzz_agree(ga, gb, v, prefix);
}
/* the agreement checks of one subgroup, over its members */
static const char *fuzz_check_sg(struct fuzz *f, u32 k)
{
	struct sim *s = &f->s;
	u32 a, b;

	for (a = 0; a < s->n; a++) {
		for (b = 0; b < s->n; b++) {
			const struct fuzz_det *da = &f->det[a], *db = &f->det[b];
			u64 v = max_t(u64, da->first_view, db->first_view);

			if (a == b || !sim_in(s, k, a) || !sim_in(s, k, b))
				continue;
			/* (a joiner with nobody to join has no log to compare) */
			if (!live(f, a) || s->node[a].vc.phase == SP_VC_JOINING)
				continue;
			if (live(f, b) && s->node[b].vc.phase == SP_VC_JOINING)
				continue;
			if (live(f, b) && !fuzz_agree_mode(f, k, a, b, v, false))
				return "two live members delivered different messages";
			/* b died or stopped: a must have been there since b began */
			if (!live(f, b) && da->first_view <= db->first_view &&
			    !fuzz_agree_mode(f, k, a, b, db->first_view, true))
				return "a member delivered what a live one did not";
		}
	}
	return NULL;
}

static const char *fuzz_check(struct fuzz *f)
{
	struct sim *s = &f->s;
	const char *bad;
	u32 a, k;

	for (k = 0; k < s->cfg.nsubgroups; k++) {
		bad = fuzz_check_sg(f, k);
		if (bad) {
			snprintf(f->why, sizeof(f->why), "subgroup %u: %s", k, bad);
			return f->why;
		}
	}
	if (f->kinds == 1 << EV_KILL && 2 * f->kills < s->n && !f->holds)
		for (a = 0; a < s->n; a++)
			if (!s->node[a].dead && s->node[a].failed)
				return "a member stopped with a majority alive";
	return NULL;
}

static void fuzz_dump(struct fuzz *f)
{
	u32 i, k;

	for (i = 0; i < f->s.n; i++) {
		const struct sim_node *nd = &f->s.node[i];
		char logs[64] = "";

		for (k = 0; k < f->s.cfg.nsubgroups; k++)
			if (nd->sg[k].in)
				snprintf(logs + strlen(logs), sizeof(logs) - strlen(logs),
					 " %u:%llu", k, (unsigned long long)nd->sg[k].nlog);
		TH_LOG("  node %u:%s%s%s phase %d view %llu members %#llx suspects %#llx/%#llx logs%s",
		       i, nd->dead ? " dead" : "", nd->failed ? " stopped" : "",
		       nd->frozen ? " frozen" : "", nd->vc.phase,
		       (unsigned long long)nd->vc.view,
		       (unsigned long long)nd->vc.members,
		       (unsigned long long)nd->vc.local_suspects,
		       (unsigned long long)nd->vc.suspects, logs);
	}
}

/*
 * The shapes variant's subgroups for @n members, from the seed alone
 * (sim_setup() seeds the schedule's rng): one to three, each of every
 * member one time in four, else of a random non-empty set of them (node 0
 * among them or not), its senders a random non-empty subset of its
 * members, ordered or unordered.
 */
static void fuzz_shape(struct fuzz *f, u32 n, u64 seed)
{
	u64 x = seed * 0x9e3779b97f4a7c15ULL | 1;
	sp_mask_t all = (1ULL << n) - 1;
	u32 k, nsubs = 1 + (u32)(sim_xorshift(&x) % SIM_MAX_SUBS);

	for (k = 0; k < nsubs; k++) {
		sp_mask_t members = all, senders;
		u32 snd[SIM_MAX_NODES], ns = 0, i, mode;

		if (sim_xorshift(&x) % 4)
			members &= sim_xorshift(&x);
		if (!members)
			members = 1ULL << (sim_xorshift(&x) % n);
		senders = members & sim_xorshift(&x);
		if (!senders)
			senders = 1ULL << sp_mask_first(members);
		for (i = 0; i < n; i++)
			if (sp_mask_has(senders, i))
				snd[ns++] = i;
		mode = sim_xorshift(&x) & 1 ? SP_MODE_UNORDERED : SP_MODE_ORDERED;
		sim_add_sub(&f->s, members, snd, ns, mode, 8, 24);
	}
}

/* the schedule's subgroups, for the log: "{members/senders mode}..." */
static void fuzz_note_shape(struct fuzz *f)
{
	const struct sp_group_cfg *c = &f->s.cfg;
	u32 k, j;

	for (k = 0; k < c->nsubgroups; k++) {
		const struct sp_sub_cfg *g = &c->subgroups[k];
		sp_mask_t m = 0, snd = 0;
		size_t len = strlen(f->what);

		for (j = 0; j < g->nmembers; j++)
			m |= 1ULL << g->members[j];
		for (j = 0; j < g->nsenders; j++)
			snd |= 1ULL << g->senders[j];
		snprintf(f->what + len, sizeof(f->what) - len, " {%#llx/%#llx %s}",
			 (unsigned long long)m, (unsigned long long)snd,
			 g->mode == SP_MODE_UNORDERED ? "unordered" : "ordered");
	}
	strncat(f->what, ",", sizeof(f->what) - strlen(f->what) - 1);
}

/* one schedule: 0, or -1 after logging why */
static int fuzz_one(struct fuzz *f, u64 seed)
{
	struct sim *s = &f->s;
	long next_event, quiet = 0;
	u32 i, k, n, events;
	const char *bad = NULL;
	int oneway = f->oneway, shape = f->shape, late = f->late;

	memset(f, 0, sizeof(*f));
	f->oneway = oneway;
	f->shape = shape;
	f->late = late;
	f->late_rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	f->seed = seed;
	n = 3 + (u32)(seed * 7919 % 5);
	sim_setup(s, n, 0, seed);
	if (shape) {
		fuzz_shape(f, n, seed);
	} else {
		u32 all[SIM_MAX_NODES];

		for (i = 0; i < n; i++)
			all[i] = i;
		sim_add_sub(s, (1ULL << n) - 1, all, n, SP_MODE_ORDERED, 8, 24);
	}
	if (sim_start(s))
		return -1;
	sim_views(s, false);
	s->coalesce = late;
	events = 1 + sim_below(s, 4);
	for (i = 0; i < n; i++) {
		for (k = 0; k < s->cfg.nsubgroups; k++)
			if (fuzz_sends(f, k, i))
				s->node[i].sg[k].to_send = 100 + sim_below(s, 300);
		f->det[i].first_view = 1;
		f->det[i].view = 1;
		f->det[i].members = (1ULL << n) - 1;
		memset(f->det[i].lost_at, 0xff, sizeof(f->det[i].lost_at));
	}
	snprintf(f->what, sizeof(f->what), "seed %llu: %u members,",
		 (unsigned long long)seed, n);
	if (shape)
		fuzz_note_shape(f);
	next_event = 5 + (long)sim_below(s, 150);
	while (f->round < MAX_ROUNDS) {
		f->events = events;
		if (events && f->round >= next_event) {
			fuzz_event(f);
			events--;
			next_event = f->round + 1 + (long)sim_below(s, 3 * SUSPECT);
		}
		if (fuzz_round(f)) {
			bad = s->disagree[0] ? s->disagree :
			      s->fault == -ENODATA ? "a survivor had no trim of its own to apply" :
			      s->fault == -EIO ? "a delivered payload was corrupt" :
			      "a write or a row was rejected";
			break;
		}
		quiet = !events && fuzz_settled(f) ? quiet + 1 : 0;
		if (quiet > SETTLED)
			break;
	}
	if (!bad && quiet <= SETTLED)
		bad = "the live members never settled in one view";
	if (!bad)
		bad = fuzz_check(f);
	/* every leader here is correct: none of its trims may be refused */
	if (!bad && s->refused)
		bad = "a correct leader's trim was refused";
	if (bad) {
		TH_LOG("%s (round %ld): %s", f->what, f->round, bad);
		fuzz_dump(f);
	}
	sim_free(s);
	return bad ? -1 : 0;
}

/* what the shapes variant drew, over its schedules */
struct fuzz_shapes {
	u64 nsubs[SIM_MAX_SUBS + 1];
	u64 without0;		/* a subgroup without node 0 */
	u64 struck0;		/* ...and node 0 struck */
	u64 unordered;		/* an unordered subgroup */
	u64 ordered_too;	/* ...beside an ordered one */
	u64 some;		/* a subgroup where not every member sends */
	u64 outside;		/* a node in no subgroup */
};

static void fuzz_count_shape(const struct fuzz *f, struct fuzz_shapes *c)
{
	const struct sp_group_cfg *cfg = &f->s.cfg;
	sp_mask_t in_any = 0;
	bool without0 = false, unord = false, ord = false, some = false;
	u32 k, i;

	for (k = 0; k < cfg->nsubgroups; k++) {
		const struct sp_sub_cfg *g = &cfg->subgroups[k];

		without0 |= !sim_in(&f->s, k, 0);
		unord |= g->mode == SP_MODE_UNORDERED;
		ord |= g->mode == SP_MODE_ORDERED;
		some |= g->nsenders != g->nmembers;
		for (i = 0; i < g->nmembers; i++)
			in_any |= 1ULL << g->members[i];
	}
	c->nsubs[cfg->nsubgroups]++;
	c->without0 += without0;
	c->struck0 += without0 && sp_mask_has(f->hit, 0);
	c->unordered += unord;
	c->ordered_too += unord && ord;
	c->some += some;
	c->outside += in_any != (1ULL << f->s.n) - 1;
}

static u64 env_u64(const char *name, u64 def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

/* @count schedules from @first: how many failed, logged with what they had */
static u64 fuzz_many(struct fuzz *f, u64 first, u64 count)
{
	u64 seed, failed = 0, pairs = 0, three = 0, seven = 0, kinds[EV_KINDS] = { 0 };
	u64 holds = 0, held = 0, coalesced = 0;
	struct fuzz_shapes c = { { 0 } };
	int e;

	for (seed = first; seed < first + count; seed++) {
		if (fuzz_one(f, seed))
			failed++;
		for (e = 0; e < EV_KINDS; e++)
			kinds[e] += !!(f->kinds & (1 << e));
		pairs += !!f->pairs;
		three += __builtin_popcountll(f->hit) >= 3;
		seven += f->s.n == 7;
		holds += f->holds;
		held += !!f->holds;
		coalesced += f->s.rows_coalesced;
		fuzz_count_shape(f, &c);
	}
	TH_LOG("%llu schedules from seed %llu: %llu failed; with %s %llu, %s %llu, %s %llu, %s %llu (two at once %llu); 3 or more members struck %llu; 7 members %llu",
	       (unsigned long long)count, (unsigned long long)first,
	       (unsigned long long)failed,
	       fuzz_event_name[0], (unsigned long long)kinds[0],
	       fuzz_event_name[1], (unsigned long long)kinds[1],
	       f->oneway ? "one-way cut" : fuzz_event_name[2], (unsigned long long)kinds[2],
	       fuzz_event_name[3], (unsigned long long)kinds[3],
	       (unsigned long long)pairs, (unsigned long long)three,
	       (unsigned long long)seven);
	if (f->late)
		TH_LOG("late links: %llu holds in %llu schedules; %llu row pushes replaced by a later one",
		       (unsigned long long)holds, (unsigned long long)held,
		       (unsigned long long)coalesced);
	if (f->shape)
		TH_LOG("shapes: 1/2/3 subgroups %llu/%llu/%llu; one without node 0 %llu (node 0 struck %llu); unordered %llu (beside ordered %llu); not every member a sender %llu; a node in none %llu",
		       (unsigned long long)c.nsubs[1], (unsigned long long)c.nsubs[2],
		       (unsigned long long)c.nsubs[3], (unsigned long long)c.without0,
		       (unsigned long long)c.struck0, (unsigned long long)c.unordered,
		       (unsigned long long)c.ordered_too, (unsigned long long)c.some,
		       (unsigned long long)c.outside);
	return failed;
}

/*
 * A variant's schedules: @count_env of them (default @def, a fifth in the
 * ASan build) from FUZZ_SEED (default 1; in the ASan build @def + 1)
 */
static u64 fuzz_variant(struct fuzz *f, const char *count_env, u64 def)
{
	return fuzz_many(f, env_u64("FUZZ_SEED", FUZZ_ASAN ? def + 1 : 1),
			 env_u64(count_env, def / FUZZ_SHARE));
}

TEST_TIMEOUT(random_compound_failures, 900)
{
	static struct fuzz f;

	ASSERT_EQ(fuzz_variant(&f, "FUZZ_SCHEDULES", 10000), 0);
}

/*
 * The same schedules, but where one had a partition a single link fails
 * in one direction: a member whose writes to one peer stop landing while
 * that peer's writes to it still do (FUZZ_ONEWAY_SCHEDULES, default 2000).
 */
TEST_TIMEOUT(random_failures_with_a_one_way_cut, 900)
{
	static struct fuzz f;

	f.oneway = 1;
	ASSERT_EQ(fuzz_variant(&f, "FUZZ_ONEWAY_SCHEDULES", 2000), 0);
}

/*
 * The same schedules in other shapes: one to three subgroups of random
 * members (subgroups without the leader among them), random senders,
 * ordered or unordered (FUZZ_SHAPE_SCHEDULES, default 2000).
 */
TEST_TIMEOUT(random_failures_in_other_shapes, 900)
{
	static struct fuzz f;

	f.shape = 1;
	ASSERT_EQ(fuzz_variant(&f, "FUZZ_SHAPE_SCHEDULES", 2000), 0);
}

/*
 * The same schedules on real links: now and then a link, or every link
 * out of a node, holds its writes back for up to 2 x SUSPECT rounds and
 * then delivers them, in order; and a node keeps one row push in flight
 * per peer, so peers skip rows (FUZZ_LATE_SCHEDULES, default 2000).
 */
TEST_TIMEOUT(random_failures_on_late_links, 900)
{
	static struct fuzz f;

	f.late = 1;
	ASSERT_EQ(fuzz_variant(&f, "FUZZ_LATE_SCHEDULES", 2000), 0);
}
