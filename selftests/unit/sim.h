/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A simulated cluster for the unit tests of the protocol core: N nodes,
 * each with its own copy of every member's memory, joined by one in-order
 * write queue per ordered pair of nodes (an RC QP).  Writes are executed
 * one at a time, in a random order across queues, so every interleaving
 * the real transport allows can happen.  Payload and header writes read
 * their source when they execute (as a NIC does); block and row writes
 * read a snapshot taken at post time (as the module does).
 *
 * Subgroups as configured (sim_add_sub(); sim_init() makes one of every
 * node): each a subset of the nodes, with its own senders and mode.  A
 * node has an engine, memory and a log for each subgroup it is in, and
 * none for the others; writes name their subgroup, and go through the one
 * queue of their pair of nodes, rows among them.  Memory is indexed by
 * node; the engine's member positions and sender ranks (which change with
 * the view) are mapped through pos_node/rank_node.  With views on
 * (sim_views()), every node also runs the view change state machine
 * (kmod/proto/vc.c) over row headers sent through the same queues, each
 * with the node's view area of every subgroup, as the kernel's rows.
 *
 * Real links, where a test asks (sim_hold(), s->coalesce): a link may
 * hold its writes back for a while and still deliver them, in order (a
 * transport retry, an RNR wait, a congested fabric, a CPU at either end
 * that stalls); and a node keeps one row push in flight per peer, the
 * latest row going out once it completed (kmod/rows.c), so that a peer
 * skips the rows in between.  Neither draws from the schedule's rng: a
 * schedule without them runs as before.
 *
 * This exercises the protocol logic only; the real transport is tested
 * across QEMU guests.
 */
#ifndef SPINDLE_SIM_H
#define SPINDLE_SIM_H

#include <stdio.h>
#include <stdlib.h>
#include "../../kmod/proto/engine.h"
#include "../../kmod/proto/lazy.h"
#include "../../kmod/proto/order.h"
#include "../../kmod/proto/pass.h"
#include "../../kmod/proto/ring.h"
#include "../../kmod/proto/view.h"
#include "../../kmod/proto/vc.h"

#ifndef SIM_MAX_NODES		/* sim_scale.c runs up to 32 */
#define SIM_MAX_NODES 8
#endif
#define SIM_MAX_SUBS 3
#define SIM_QCAP 1024
#define SIM_WR_ROW 100		/* a row header write, its view area with it */
#define SIM_VIEW_RANK 0xff	/* a view record in a log */
#define SIM_MAX_VREC 128	/* views whose records are compared (simvc.h) */

struct sim_wr {
	int kind;
	u32 sg;			/* the subgroup of an engine write */
	u64 offset;
	u32 len;
	u8 *snap;		/* BLOCK, ROW: contents at post time */
};

struct sim_q {
	struct sim_wr wr[SIM_QCAP];
	u32 head, tail;
};

struct sim_rec {		/* one delivered message, or a view record */
	u64 seq;
	u32 rank;		/* the sender's node, or SIM_VIEW_RANK */
	u64 index;		/* its index among the sender's; the view id */
	u32 len;
	u32 tag;		/* producer's message number; the member mask */
};

/*
 * A member's view area for one subgroup (as kmod/proto/layout.h's, in host
 * order), by configured sender rank: it travels with the row, to every
 * node, members of the subgroup or not.
 */
struct sim_area {
	u64 snap_view;			/* rcv[] is as I wedged in this view */
	u64 trim_view, trim_term;	/* the trim I proposed or hold */
	u64 base_view, seq_base;	/* where base_view's numbering starts */
	u64 rcv[SIM_MAX_NODES];
	u64 trim[SIM_MAX_NODES];
	u64 base[SIM_MAX_NODES];
};

/* what a row write carries */
struct sim_row {
	struct sp_row_hdr hdr;
	struct sim_area area[SIM_MAX_SUBS];
};

/* A node's part in one subgroup: its engine, memory, producer, consumer. */
struct sim_sg {
	int in;			/* a configured member of the subgroup */
	struct sp_sub sub;
	struct sp_block *blocks[SIM_MAX_NODES];	/* by node */
	struct sp_hdr *hdrs[SIM_MAX_NODES];	/* by node */
	u8 *pay[SIM_MAX_NODES];			/* by node */
	u32 pos_node[SIM_MAX_NODES];		/* engine member position -> node */
	u32 rank_node[SIM_MAX_NODES];		/* engine sender rank -> node */
	u32 cfg_rank[SIM_MAX_NODES];		/* engine -> configured sender rank */
	/* numbering across views, as the kernel's subgroup keeps it */
	struct sp_bases base;	/* kept by every node, in the subgroup or not */
	/* producer */
	u64 to_send;		/* messages this node still has to produce */
	u32 tag;		/* next producer message number */
	u32 voids;		/* reservations abandoned */
	u64 pending_first;	/* reserved, not yet marked */
	u32 pending_n;
	u32 stall;		/* producer sleeps this many rounds */
	/* consumer */
	struct sim_rec *log;
	u64 nlog, caplog;
	u64 released;
	int lazy;		/* release only now and then */
	int view_logged;	/* the view record of the change is in the log */
};

struct sim_node {
	struct sim_sg sg[SIM_MAX_SUBS];	/* by configured subgroup index */
	int dead;		/* killed: no passes, no writes in or out */
	int frozen;		/* stalled: no passes, its NIC works on */
	u64 writes;		/* writes this node posted */
	u64 passes, busy;	/* predicate passes; those that did something */
	struct sp_lazy lazy;	/* lazy block changes left, on a clock of passes */
	/* views */
	struct sp_vc vc;
	struct sp_row_hdr rows[SIM_MAX_NODES];	/* mine at [me], copies */
	struct sim_area areas[SIM_MAX_NODES][SIM_MAX_SUBS];	/* with rows[] */
	u64 pushed_row;		/* vc.row_ver last pushed */
	u64 incarnation;
	int failed;		/* the state machine stopped it */
};

/* what the first member to record view k recorded (simvc_agree()) */
struct sim_vrec {
	sp_mask_t members;
	u64 trim[SIM_MAX_SUBS][SIM_MAX_NODES];	/* by sender rank */
	u8 known;		/* members set */
	u8 trim_known[SIM_MAX_SUBS];
};

struct sim {
	u32 n;
	struct sp_group_cfg cfg;
	struct sim_node node[SIM_MAX_NODES];
	struct sim_q q[SIM_MAX_NODES][SIM_MAX_NODES];
	u64 rng;
	u32 max_room;		/* send queue room per pass: 1..max_room, */
	u32 min_room;		/* but at least this (an idle queue's) */
	int fault;		/* first -EPROTO seen */
	int void_pct;		/* % of reservations voided */
	int hold_blocks;	/* % of emits told to hold the block back */
	int max_batch;		/* producer batch */
	int views;		/* nodes run the view change */
	u32 lazy_passes;	/* lazy changes flushed after this many (0: at once) */
	u32 short_trim;		/* node + 1 that proposes half the trim (0: none) */
	u32 refused;		/* trims refused by a member that stays */
	u8 cut[SIM_MAX_NODES][SIM_MAX_NODES];	/* writes a -> b are lost */
	u8 fenced[SIM_MAX_NODES][SIM_MAX_NODES];	/* b put its QP to a in error */
	int fence_breaks;	/* a's write into it makes a suspect b at once */
	u64 clock;		/* rounds sim_run() ran */
	u64 held_until[SIM_MAX_NODES][SIM_MAX_NODES];	/* writes a -> b wait till */
	int coalesce;		/* one row write in flight per link */
	u8 row_due[SIM_MAX_NODES][SIM_MAX_NODES];	/* a newer row waits for it */
	u64 rows_coalesced;	/* row pushes that a later one replaced */
	u64 posted[SP_WR_BLOCK + 1];	/* engine writes, by enum sp_wr_kind */
	u64 posted_bytes[SP_WR_BLOCK + 1];
	struct sim_vrec vrec[SIM_MAX_VREC];	/* by view number */
	char disagree[160];	/* two records of one view that differ */
};

/* xorshift64: the next number of the stream whose state is *@x */
static inline u64 sim_xorshift(u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static inline u64 sim_rand(struct sim *s)
{
	return sim_xorshift(&s->rng);
}

/*
 * @x % @n, with a constant divisor for the cluster sizes the simulations
 * run: the same number as a division, without one (two 64-bit divisions
 * a turn made a tenth of the fuzz's time in sim_run()'s random pick of
 * writes to execute)
 */
static inline u32 sim_mod(u64 x, u32 n)
{
	switch (n) {
	case 2: return x % 2;
	case 3: return x % 3;
	case 4: return x % 4;
	case 5: return x % 5;
	case 6: return x % 6;
	case 7: return x % 7;
	case 8: return x % 8;
	case 9: return x % 9;
	default: return x % n;
	}
}

static inline u32 sim_below(struct sim *s, u32 n)
{
	return n ? sim_mod(sim_rand(s), n) : 0;
}

/* Is node @i a configured member of subgroup @k? */
static inline bool sim_in(const struct sim *s, u32 k, u32 i)
{
	return sp_sub_member_pos(&s->cfg.subgroups[k], i) >= 0;
}

/*
 * payload pattern: tag in the first 4 bytes, then bytes derived from it and
 * from @who, the sender's node and subgroup (sim_who())
 */
static inline u32 sim_who(u32 node, u32 k)
{
	return node + SIM_MAX_NODES * k;
}

static inline u8 sim_byte(u32 who, u32 tag, u32 i)
{
	return (u8)(who * 31 + tag * 7 + i * 13);
}

static inline void sim_fill(u8 *p, u32 len, u32 who, u32 tag)
{
	u32 i;

	for (i = 0; i < len; i++)
		p[i] = i < 4 ? (u8)(tag >> (8 * i)) : sim_byte(who, tag, i);
}

static inline int sim_check(const u8 *p, u32 len, u32 who, u32 *tag)
{
	u32 i, t = 0;

	if (len < 4)
		return 0;
	for (i = 0; i < 4; i++)
		t |= (u32)p[i] << (8 * i);
	for (i = 4; i < len; i++)
		if (p[i] != sim_byte(who, t, i))
			return -1;
	*tag = t;
	return 0;
}

/* (Re)start node i's engine of subgroup @k for the view @members. */
static inline int sim_engine(struct sim *s, u32 i, u32 k, sp_mask_t members)
{
	struct sim_sg *g = &s->node[i].sg[k];
	struct sp_sub *sub = &g->sub;
	struct sp_group_cfg v;
	const struct sp_sub_cfg *c;
	u32 m;

	sp_view_config(&s->cfg, members, &v);
	v.self_id = i;
	c = &v.subgroups[k];
	sp_sub_destroy(sub);
	if (sp_sub_init(sub, &v, k))
		return -1;
	for (m = 0; m < c->nmembers; m++) {
		g->pos_node[m] = c->members[m];
		sub->blocks[m] = g->blocks[c->members[m]];
	}
	for (m = 0; m < c->nsenders; m++) {
		g->rank_node[m] = c->senders[m];
		g->cfg_rank[m] = (u32)sp_sub_sender_rank(&s->cfg.subgroups[k],
							 c->senders[m]);
		sub->hdrs[m] = g->hdrs[c->senders[m]];
	}
	return 0;
}

/* Zero node i's copies of everyone's blocks and header rings. */
static inline void sim_wipe(struct sim *s, u32 i)
{
	u32 k, m;

	for (k = 0; k < s->cfg.nsubgroups; k++) {
		struct sim_sg *g = &s->node[i].sg[k];

		for (m = 0; g->in && m < s->n; m++) {
			if (!sim_in(s, k, m))
				continue;
			memset(g->blocks[m], 0, sp_block_size(SIM_MAX_NODES));
			memset(g->hdrs[m], 0, sp_hdr_slots(s->cfg.subgroups[k].window) *
			       sizeof(struct sp_hdr));
		}
	}
}

/* A group of @n nodes, no subgroup yet: group flags, seed. */
static inline void sim_setup(struct sim *s, u32 n, u32 flags, u64 seed)
{
	u32 i;

	memset(s, 0, sizeof(*s));
	s->n = n;
	s->rng = seed * 2654435761ULL + 88172645463325252ULL;
	s->max_room = 16;
	s->max_batch = 8;
	s->lazy_passes = 4;
	s->cfg.group_id = 1;
	s->cfg.flags = flags;
	s->cfg.nmembers = n;
	for (i = 0; i < n; i++) {
		s->cfg.members[i].id = i;
		s->cfg.members[i].family = 2;
		s->cfg.members[i].port = 7471;
		s->cfg.members[i].addr[0] = 10;
		s->cfg.members[i].addr[3] = (u8)(i + 1);
	}
}

/* The next subgroup: its member nodes (in node order), senders as given. */
static inline void sim_add_sub(struct sim *s, sp_mask_t members, const u32 *senders,
			       u32 nsenders, u32 mode, u32 window, u32 max_msg)
{
	struct sp_sub_cfg *c = &s->cfg.subgroups[s->cfg.nsubgroups];
	u32 i, r;

	c->id = s->cfg.nsubgroups++;
	for (i = 0; i < s->n; i++)
		if (sp_mask_has(members, i))
			c->members[c->nmembers++] = i;
	c->nsenders = nsenders;
	for (r = 0; r < nsenders; r++)
		c->senders[r] = senders[r];
	c->mode = mode;
	c->window = window;
	c->max_msg = max_msg;
}

/* node i's memory and engine of subgroup @k */
static inline int sim_start_sg(struct sim *s, u32 i, u32 k)
{
	const struct sp_sub_cfg *c = &s->cfg.subgroups[k];
	struct sim_sg *g = &s->node[i].sg[k];
	u32 m;

	g->in = sim_in(s, k, i);
	if (!g->in)
		return 0;
	for (m = 0; m < s->n; m++) {
		if (!sim_in(s, k, m))
			continue;
		g->blocks[m] = calloc(1, sp_block_size(SIM_MAX_NODES));
		g->hdrs[m] = calloc(sp_hdr_slots(c->window), sizeof(struct sp_hdr));
		g->pay[m] = calloc(c->window, ALIGN(c->max_msg, SP_SLOT_ALIGN));
	}
	if (sim_engine(s, i, k, (1ULL << s->n) - 1))
		return -1;
	g->caplog = 1024;
	g->log = calloc(g->caplog, sizeof(*g->log));
	return 0;
}

/* The configuration set up, every node's subgroups start in view 1. */
static inline int sim_start(struct sim *s)
{
	struct sp_cfg_err err;
	u32 i, k;

	for (i = 0; i < s->n; i++) {
		s->cfg.self_id = i;
		if (sp_cfg_validate(&s->cfg, &err))
			return -1;
		for (k = 0; k < s->cfg.nsubgroups; k++)
			if (sim_start_sg(s, i, k))
				return -1;
	}
	s->cfg.self_id = 0;
	return 0;
}

/* One subgroup of members 0..n-1, senders as given; group flags, mode, window, max_msg */
static inline int sim_init_flags(struct sim *s, u32 n, const u32 *senders, u32 nsenders,
				 u32 flags, u32 mode, u32 window, u32 max_msg, u64 seed)
{
	sim_setup(s, n, flags, seed);
	sim_add_sub(s, (1ULL << n) - 1, senders, nsenders, mode, window, max_msg);
	return sim_start(s);
}

static inline int sim_init(struct sim *s, u32 n, const u32 *senders, u32 nsenders,
			   u32 mode, u32 window, u32 max_msg, u64 seed)
{
	return sim_init_flags(s, n, senders, nsenders, 0, mode, window, max_msg, seed);
}

static inline void sim_free(struct sim *s)
{
	u32 i, k, r, a, b;

	for (i = 0; i < s->n; i++) {
		for (k = 0; k < s->cfg.nsubgroups; k++) {
			struct sim_sg *g = &s->node[i].sg[k];

			for (r = 0; r < s->n; r++) {
				free(g->blocks[r]);
				free(g->hdrs[r]);
				free(g->pay[r]);
			}
			free(g->log);
			sp_sub_destroy(&g->sub);
		}
	}
	for (a = 0; a < s->n; a++)
		for (b = 0; b < s->n; b++)
			while (s->q[a][b].head != s->q[a][b].tail) {
				free(s->q[a][b].wr[s->q[a][b].head % SIM_QCAP].snap);
				s->q[a][b].head++;
			}
}

static inline u32 sim_qlen(struct sim *s, u32 a, u32 b)
{
	return s->q[a][b].tail - s->q[a][b].head;
}

/* a write from a to b: of subgroup @k's memory, or a row (@k unused) */
static inline void sim_post(struct sim *s, u32 a, u32 b, u32 k, int kind, u64 off,
			    u32 len, const void *snap)
{
	struct sim_q *q = &s->q[a][b];
	struct sim_wr *w = &q->wr[q->tail % SIM_QCAP];

	w->kind = kind;
	w->sg = k;
	w->offset = off;
	w->len = len;
	w->snap = NULL;
	if (snap) {
		w->snap = malloc(len);
		memcpy(w->snap, snap, len);
	}
	q->tail++;
	s->node[a].writes++;
	if (kind >= 0 && kind <= SP_WR_BLOCK) {
		s->posted[kind]++;
		s->posted_bytes[kind] += len;
	}
}

/* is a row write from a to b queued (in flight)? */
static inline bool sim_row_queued(const struct sim *s, u32 a, u32 b)
{
	const struct sim_q *q = &s->q[a][b];
	u32 h;

	for (h = q->head; h != q->tail; h++)
		if (q->wr[h % SIM_QCAP].kind == SIM_WR_ROW)
			return true;
	return false;
}

/*
 * node a's row header and view area, to b; with s->coalesce, only once the
 * one in flight completed (sim_rows_due() sends the latest row then)
 */
static inline void sim_post_row(struct sim *s, u32 a, u32 b)
{
	struct sim_node *nd = &s->node[a];
	struct sim_row row;

	if (s->coalesce && sim_row_queued(s, a, b)) {
		s->rows_coalesced += !s->row_due[a][b];
		s->row_due[a][b] = 1;
		return;
	}
	s->row_due[a][b] = 0;
	row.hdr = nd->rows[a];
	memcpy(row.area, nd->areas[a], sizeof(row.area));
	sim_post(s, a, b, 0, SIM_WR_ROW, 0, sizeof(row), &row);
}

/* the rows that waited for the one in flight, once it completed */
static inline void sim_rows_due(struct sim *s)
{
	u32 a, b;

	for (a = 0; a < s->n; a++)
		for (b = 0; b < s->n; b++)
			if (s->row_due[a][b] && !sim_row_queued(s, a, b)) {
				if (s->node[a].dead)
					s->row_due[a][b] = 0;
				else
					sim_post_row(s, a, b);
			}
}

/*
 * hold the writes from a to b back until round @until (later only): they
 * land after it, in order
 */
static inline void sim_hold(struct sim *s, u32 a, u32 b, u64 until)
{
	if (until > s->held_until[a][b])
		s->held_until[a][b] = until;
}

/* the writes from a to b that a hold kept back may land from now on */
static inline void sim_release(struct sim *s, u32 a, u32 b)
{
	s->held_until[a][b] = 0;
}

/* a row from a lands at b */
static inline void sim_land_row(struct sim *s, u32 a, u32 b, const struct sim_row *row)
{
	struct sim_node *dst = &s->node[b];

	if (sp_vc_row_check(&dst->rows[a], &row->hdr, s->n)) {
		fprintf(stderr, "node %u: bad row from node %u\n", b, a);
		s->fault = -EPROTO;
	}
	dst->rows[a] = row->hdr;
	memcpy(dst->areas[a], row->area, sizeof(row->area));
}

/* execute the oldest write from a to b */
static inline void sim_exec(struct sim *s, u32 a, u32 b)
{
	struct sim_q *q = &s->q[a][b];
	struct sim_wr *w = &q->wr[q->head % SIM_QCAP];
	struct sim_sg *src = &s->node[a].sg[w->sg], *dst = &s->node[b].sg[w->sg];

	if (s->node[b].dead || s->cut[a][b]) {	/* nothing lands: dead, or cut off */
		/*
		 * b fenced a (spindle_conn_fence(): its QP to a in the error
		 * state, then down): a's writes are never acknowledged and b
		 * disconnects, so a finds b lost.  With fence_breaks it does
		 * at its first write there (test_vc: a fenced member leaves
		 * the run, which then settles); the fuzz leaves it to its own
		 * model of late (or no) notice and the heartbeat.
		 */
		if (s->fence_breaks && s->fenced[a][b])
			sp_vc_local_suspect(&s->node[a].vc, b);
		free(w->snap);
		q->head++;
		return;
	}
	if (w->kind != SIM_WR_ROW && (!src->in || !dst->in)) {
		fprintf(stderr, "node %u: a write of subgroup %u from node %u: not a member\n",
			b, w->sg, a);
		s->fault = -EPROTO;
	} else {
		switch (w->kind) {
		case SP_WR_PAYLOAD:
			memcpy(dst->pay[a] + w->offset, src->pay[a] + w->offset, w->len);
			break;
		case SP_WR_HDR:
			memcpy((u8 *)dst->hdrs[a] + w->offset,
			       (u8 *)src->hdrs[a] + w->offset, w->len);
			break;
		case SP_WR_BLOCK:
			memcpy(dst->blocks[a], w->snap, w->len);
			break;
		case SIM_WR_ROW:
			sim_land_row(s, a, b, (const struct sim_row *)w->snap);
			break;
		}
	}
	free(w->snap);
	q->head++;
}

/* the producer of node i in subgroup @k: reserve, fill, mark ready (or void) */
static inline void sim_produce_sg(struct sim *s, u32 i, u32 k)
{
	struct sim_sg *g = &s->node[i].sg[k];
	struct sp_sub *sub = &g->sub;
	u32 j;

	if (!g->in || sub->my_rank < 0)
		return;
	if (g->stall) {
		g->stall--;
		return;
	}
	if (g->pending_n) {	/* finish what was reserved last round */
		for (j = 0; j < g->pending_n; j++) {
			u64 pos = g->pending_first + j;
			u8 *slot = g->pay[i] + sp_sub_payload_offset(sub, pos);

			if (s->void_pct && (int)sim_below(s, 100) < s->void_pct) {
				if (sp_sub_void(sub, pos))
					abort();
				g->voids++;
				g->to_send++;	/* still owes a real message */
				continue;
			}
			{
				u32 len = 4 + sim_below(s, sub->max_msg - 3);

				sim_fill(slot, len, sim_who(i, k), g->tag++);
				if (sp_sub_mark_ready(sub, pos, len))
					abort();
			}
		}
		g->pending_n = 0;
	}
	if (g->to_send) {
		u32 want = 1 + sim_below(s, (u32)s->max_batch);

		if (want > g->to_send)
			want = (u32)g->to_send;
		g->pending_n = sp_sub_reserve(sub, want, &g->pending_first);
		g->to_send -= g->pending_n;
	}
}

/* the producers of node i, one per subgroup it sends in */
static inline void sim_produce(struct sim *s, u32 i)
{
	struct sim_node *nd = &s->node[i];
	u32 k;

	if (nd->failed || (s->views && nd->vc.phase != SP_VC_NORMAL))
		return;
	for (k = 0; k < s->cfg.nsubgroups; k++)
		sim_produce_sg(s, i, k);
}

/* Has node i still something to produce, in any subgroup? */
static inline bool sim_producing(const struct sim *s, u32 i)
{
	u32 k;

	for (k = 0; k < s->cfg.nsubgroups; k++) {
		const struct sim_sg *g = &s->node[i].sg[k];

		if (g->to_send || g->pending_n || g->stall)
			return true;
	}
	return false;
}

/* append a record to a log */
static inline struct sim_rec *sim_log_add(struct sim_sg *g)
{
	struct sim_rec *rec;

	if (g->nlog == g->caplog) {
		g->caplog *= 2;
		g->log = realloc(g->log, g->caplog * sizeof(*g->log));
	}
	rec = &g->log[g->nlog++];
	/* logs are compared whole (memcmp): padding included */
	memset(rec, 0, sizeof(*rec));
	return rec;
}

/*
 * keep node i's deliveries of subgroup @k in its log, checking each
 * payload; numbered as the kernel hands them to users (deliver.c): sender
 * indices and the ordered sequence go on across views
 */
static inline int sim_record(struct sim *s, u32 i, u32 k, const struct sp_desc *d, u32 n)
{
	struct sim_sg *g = &s->node[i].sg[k];
	u32 nconf = s->cfg.subgroups[k].nsenders;
	u32 j;

	for (j = 0; j < n; j++) {
		u32 sender = g->rank_node[d[j].rank], r = g->cfg_rank[d[j].rank];
		const u8 *p = g->pay[sender] + sp_sub_payload_offset(&g->sub, d[j].pay_pos);
		struct sim_rec *rec = sim_log_add(g);

		rec->rank = sender;
		rec->index = g->base.idx[r] + d[j].index;
		rec->seq = g->sub.mode == SP_MODE_ORDERED ? g->base.seq + d[j].seq :
			   sp_seq(r, rec->index, nconf);
		rec->len = d[j].len;
		if (sim_check(p, d[j].len, sim_who(sender, k), &rec->tag)) {
			fprintf(stderr, "node %u: corrupt payload from %u index %llu in subgroup %u\n",
				i, sender, (unsigned long long)d[j].index, k);
			s->fault = -EIO;
			return -EIO;
		}
	}
	return 0;
}

#include "simvc.h"

/* The simulation's transport and consumer under proto/pass.c. */
struct sim_turn {
	struct sim *s;
	u32 i;
	u32 k;		/* the subgroup whose turn it is */
};

static inline struct sim_sg *sim_turn_sg(const struct sim_turn *t)
{
	return &t->s->node[t->i].sg[t->k];
}

static inline void sim_turn_nop(void *ctx)
{
	(void)ctx;
}

/* the producer marks ready itself (sim_produce): nothing to take */
static inline u32 sim_turn_take(void *ctx)
{
	(void)ctx;
	return 0;
}

static inline void sim_turn_freed(void *ctx, u32 n)
{
	(void)ctx;
	(void)n;
}

/*
 * The consumer gives back what it was handed before (a lazy one now and
 * then), then takes up to @max more into its log, checking each payload.
 */
static inline u32 sim_turn_deliver(void *ctx, u32 max)
{
	struct sim_turn *t = ctx;
	struct sim_sg *g = sim_turn_sg(t);
	struct sp_sub *sub = &g->sub;
	u64 before = sub->rel_descs;
	struct sp_desc d[64];
	u32 n, total = 0;

	if (!g->lazy || sim_below(t->s, 4) == 0) {
		g->released = sub->dl_descs;
		sp_sub_release(sub, g->released);
	}
	do {
		n = sp_sub_deliver(sub, d, max - total < 64 ? max - total : 64);
		if (sim_record(t->s, t->i, t->k, d, n))
			return total;
		total += n;
	} while (n == 64 && total < max);
	return total + (sub->rel_descs != before);
}

/* whole writes the queue to @m's node takes: 1..max_room, at random */
static inline u32 sim_turn_writes(void *ctx, u32 m)
{
	struct sim_turn *t = ctx;
	struct sim *s = t->s;
	u32 to = sim_turn_sg(t)->pos_node[m], room, free;

	if (s->node[to].dead)
		return 0;
	free = SIM_QCAP - 8 - sim_qlen(s, t->i, to);
	room = free;
	if (room > 1 + sim_below(s, s->max_room))
		room = 1 + sim_below(s, s->max_room);
	if (room < s->min_room)
		room = free < s->min_room ? free : s->min_room;
	return room;
}

static inline bool sim_turn_block_ok(void *ctx, u32 m)
{
	struct sim_turn *t = ctx;

	(void)m;
	return (int)sim_below(t->s, 100) >= t->s->hold_blocks;
}

static inline void sim_turn_queue(void *ctx, u32 m, const struct sp_wr *w)
{
	struct sim_turn *t = ctx;
	struct sim_sg *g = sim_turn_sg(t);

	sim_post(t->s, t->i, g->pos_node[m], t->k, (int)w->kind, w->offset, w->len,
		 w->kind == SP_WR_BLOCK ? (void *)g->sub.blocks[g->sub.me] : NULL);
}

/* a write is in its queue as soon as queued: nothing to post */
static inline void sim_turn_post(void *ctx, u32 m)
{
	(void)ctx;
	(void)m;
}

static inline void sim_turn_bad(void *ctx, u32 m, const char *what)
{
	struct sim_turn *t = ctx;
	struct sim_sg *g = sim_turn_sg(t);
	struct sp_sub *sub = &g->sub;
	u32 r;

	fprintf(stderr, "node %u: rejected a write of node %u in subgroup %u: %s\n",
		t->i, g->pos_node[m], t->k, what);
	if (getenv("SIM_TRACE"))
		for (r = 0; r < sub->nsenders; r++)
			fprintf(stderr, "  rank %u (node %u): hdr_pub %llu seen %llu dl_hdr %llu (view %llu phase %d)\n",
				r, g->rank_node[r],
				(unsigned long long)le64_to_cpu(sub->blocks[sub->rank_member[r]]->hdr_pub),
				(unsigned long long)sub->rx[r].hdr_seen,
				(unsigned long long)sub->rx[r].dl_hdr,
				(unsigned long long)t->s->node[t->i].vc.view,
				t->s->node[t->i].vc.phase);
	t->s->fault = -EPROTO;
}

static const struct sp_pass_ops sim_turn_ops = {
	.lock = sim_turn_nop,
	.unlock = sim_turn_nop,
	.take = sim_turn_take,
	.limit = sim_turn_nop,
	.freed = sim_turn_freed,
	.deliver = sim_turn_deliver,
	.writes = sim_turn_writes,
	.block_ok = sim_turn_block_ok,
	.queue = sim_turn_queue,
	.post = sim_turn_post,
	.bad = sim_turn_bad,
};

/* The simulated node's side of sp_group_pass(). */
static inline int sim_group_view(void *ctx)
{
	struct sim_turn *t = ctx;

	return t->s->views ? sim_vc_pass(t->s, t->i) : 0;
}

static inline void sim_group_rows(void *ctx)
{
	struct sim_turn *t = ctx;

	if (t->s->views)
		sim_vc_push(t->s, t->i);
}

/* As spindle_view_engines_run(): no view yet, or between views: no engine. */
static inline bool sim_group_engines_run(void *ctx)
{
	struct sim_turn *t = ctx;
	enum sp_vc_phase ph = t->s->node[t->i].vc.phase;

	return !t->s->views || ph == SP_VC_NORMAL || ph == SP_VC_WEDGED ||
	       ph == SP_VC_COMMITTED;
}

/* subgroup @k's turn; none where this node is not a member */
static inline int sim_group_turn(void *ctx, u32 k)
{
	struct sim_turn *t = ctx;

	if (!t->s->node[t->i].sg[k].in)
		return 0;
	t->k = k;
	return sp_sub_pass(&sim_turn_sg(t)->sub, &sim_turn_ops, t,
			   (t->s->cfg.flags & SP_GROUP_BASELINE ? SP_PASS_STEPWISE : 0) |
			   (t->s->node[t->i].lazy.flush || !t->s->lazy_passes ?
			    SP_PASS_FLUSH : 0));
}

/* writes are in their queues as soon as queued: nothing to post */
static inline void sim_group_flush(void *ctx)
{
	(void)ctx;
}

static const struct sp_group_ops sim_group_ops = {
	.view = sim_group_view,
	.rows = sim_group_rows,
	.engines_run = sim_group_engines_run,
	.turn = sim_group_turn,
	.flush = sim_group_flush,
};

/*
 * One pass of node i's predicate thread: proto/pass.c's, as the kernel's
 * spindle_pass() runs it.  Lazy changes go out once lazy_passes passes
 * old (proto/lazy.h), as the kernel's do once lazy_ms old.  A node that stopped only says so (its
 * connections are down: nothing else leaves it).  A row waits for the
 * block writes due before it (sim_vc_push()).
 */
static inline int sim_thread_pass(struct sim *s, u32 i)
{
	struct sim_turn t = { .s = s, .i = i };
	int work;

	if (s->node[i].failed)
		return s->views ? sim_vc_push(s, i) : 0;
	work = sp_group_pass(&sim_group_ops, &t, s->cfg.nsubgroups);
	s->node[i].passes++;
	sp_lazy_after_pass(&s->node[i].lazy, sim_engines_owe(s, i, true), s->node[i].passes,
			   s->lazy_passes);
	s->node[i].busy += work > 0;
	return s->fault ? s->fault : work;
}

/*
 * Kill node @k: it takes no more steps; of the writes it had posted, a
 * random prefix per QP still lands (they were on the wire), the rest is
 * lost; writes to it are dropped.
 */
static inline void sim_kill(struct sim *s, u32 k)
{
	u32 b;

	s->node[k].dead = 1;
	for (b = 0; b < s->n; b++) {
		struct sim_q *q = &s->q[k][b];
		u32 keep = sim_below(s, q->tail - q->head + 1);

		while (q->tail - q->head > keep) {
			q->tail--;
			free(q->wr[q->tail % SIM_QCAP].snap);
		}
	}
}

/* run until nothing moves for a while; returns rounds run or -errno */
static inline long sim_run(struct sim *s, long max_rounds)
{
	long round, idle = 0;

	for (round = 0; round < max_rounds; round++) {
		u32 i, a, b, k;
		int work = 0;

		for (i = 0; i < s->n; i++)
			if (!s->node[i].dead && !s->node[i].frozen)
				sim_produce(s, i);
		for (i = 0; i < s->n; i++) {
			int w = s->node[i].dead || s->node[i].frozen ? 0 : sim_thread_pass(s, i);

			if (w < 0)
				return w;
			work += w;
		}
		if (s->fault)
			return s->fault;
		/* execute a random number of queued writes in random order */
		for (k = 0; k < 4 * s->n * s->n; k++) {
			a = sim_below(s, s->n);
			b = sim_below(s, s->n);
			if (a != b && sim_qlen(s, a, b) && s->clock >= s->held_until[a][b]) {
				sim_exec(s, a, b);
				work++;
			}
		}
		if (s->coalesce)
			sim_rows_due(s);
		s->clock++;
		for (i = 0; i < s->n; i++)
			work += !s->node[i].dead && !s->node[i].failed &&
				sim_producing(s, i);
		for (a = 0; a < s->n; a++)
			for (b = 0; b < s->n; b++)
				work += sim_qlen(s, a, b) != 0;
		idle = work ? 0 : idle + 1;
		if (idle > 3 * s->n + 10)
			return round;
	}
	return round;
}

#endif /* SPINDLE_SIM_H */
