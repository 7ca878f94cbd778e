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
 * One subgroup (index 0) of the configuration.  Members are nodes 0..n-1,
 * and memory is indexed by node; the engine's member positions and sender
 * ranks (which change with the view) are mapped through pos_node/rank_node.
 * With views on (sim_views()), every node also runs the view change state
 * machine (kmod/proto/vc.c) over row headers sent through the same queues.
 *
 * This exercises the protocol logic only; the real transport is tested
 * across QEMU guests.
 */
#ifndef SPINDLE_SIM_H
#define SPINDLE_SIM_H

#include <stdio.h>
#include <stdlib.h>
#include "../../kmod/proto/engine.h"
#include "../../kmod/proto/pass.h"
#include "../../kmod/proto/ring.h"
#include "../../kmod/proto/view.h"
#include "../../kmod/proto/vc.h"

#define SIM_MAX_NODES 8
#define SIM_QCAP 1024
#define SIM_WR_ROW 100		/* a row header write */
#define SIM_VIEW_RANK 0xff	/* a view record in a log */

struct sim_wr {
	int kind;
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
	u64 index;		/* its index in its view; the view id */
	u32 len;
	u32 tag;		/* producer's message number; the member mask */
};

struct sim_node {
	struct sp_sub sub;
	struct sp_block *blocks[SIM_MAX_NODES];	/* by node */
	struct sp_hdr *hdrs[SIM_MAX_NODES];	/* by node */
	u8 *pay[SIM_MAX_NODES];			/* by node */
	u32 pos_node[SIM_MAX_NODES];		/* engine member position -> node */
	u32 rank_node[SIM_MAX_NODES];		/* engine sender rank -> node */
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
	int dead;		/* killed: no passes, no writes in or out */
	int frozen;		/* stalled: no passes, its NIC works on */
	u64 writes;		/* writes this node posted */
	/* views */
	struct sp_vc vc;
	struct sp_row_hdr rows[SIM_MAX_NODES];	/* mine at [me], copies */
	u64 pushed_row;		/* vc.row_ver last pushed */
	u64 incarnation;
	int failed;		/* the state machine stopped it */
	int view_logged;	/* the view record of the change is in the log */
};

struct sim {
	u32 n;
	struct sp_group_cfg cfg;
	struct sim_node node[SIM_MAX_NODES];
	struct sim_q q[SIM_MAX_NODES][SIM_MAX_NODES];
	u64 rng;
	u32 max_room;		/* send queue room per pass: 1..max_room */
	int fault;		/* first -EPROTO seen */
	int void_pct;		/* % of reservations voided */
	int hold_blocks;	/* % of emits told to hold the block back */
	int max_batch;		/* producer batch */
	int views;		/* nodes run the view change */
	u8 cut[SIM_MAX_NODES][SIM_MAX_NODES];	/* writes a -> b are lost */
};

static inline u64 sim_rand(struct sim *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

static inline u32 sim_below(struct sim *s, u32 n)
{
	return n ? (u32)(sim_rand(s) % n) : 0;
}

/* payload pattern: tag in the first 4 bytes, then bytes derived from it */
static inline u8 sim_byte(u32 node, u32 tag, u32 i)
{
	return (u8)(node * 31 + tag * 7 + i * 13);
}

static inline void sim_fill(u8 *p, u32 len, u32 node, u32 tag)
{
	u32 i;

	for (i = 0; i < len; i++)
		p[i] = i < 4 ? (u8)(tag >> (8 * i)) : sim_byte(node, tag, i);
}

static inline int sim_check(const u8 *p, u32 len, u32 node, u32 *tag)
{
	u32 i, t = 0;

	if (len < 4)
		return 0;
	for (i = 0; i < 4; i++)
		t |= (u32)p[i] << (8 * i);
	for (i = 4; i < len; i++)
		if (p[i] != sim_byte(node, t, i))
			return -1;
	*tag = t;
	return 0;
}

/* (Re)start node i's engine for the view @members of the configuration. */
static inline int sim_engine(struct sim *s, u32 i, sp_mask_t members)
{
	struct sim_node *nd = &s->node[i];
	struct sp_sub *sub = &nd->sub;
	struct sp_group_cfg v;
	const struct sp_sub_cfg *c;
	u32 k;

	sp_view_config(&s->cfg, members, &v);
	v.self_id = i;
	c = &v.subgroups[0];
	sp_sub_destroy(sub);
	if (sp_sub_init(sub, &v, 0))
		return -1;
	for (k = 0; k < c->nmembers; k++) {
		nd->pos_node[k] = c->members[k];
		sub->blocks[k] = nd->blocks[c->members[k]];
	}
	for (k = 0; k < c->nsenders; k++) {
		nd->rank_node[k] = c->senders[k];
		sub->hdrs[k] = nd->hdrs[c->senders[k]];
	}
	return 0;
}

/* Zero node i's copies of everyone's blocks and header rings. */
static inline void sim_wipe(struct sim *s, u32 i)
{
	struct sim_node *nd = &s->node[i];
	u32 k;

	for (k = 0; k < s->n; k++) {
		memset(nd->blocks[k], 0, sp_block_size(SIM_MAX_NODES));
		memset(nd->hdrs[k], 0, sp_hdr_slots(s->cfg.subgroups[0].window) *
		       sizeof(struct sp_hdr));
	}
}

/* members 0..n-1, senders as given; group flags, mode, window, max_msg */
static inline int sim_init_flags(struct sim *s, u32 n, const u32 *senders, u32 nsenders,
				 u32 flags, u32 mode, u32 window, u32 max_msg, u64 seed)
{
	u32 i, r;

	memset(s, 0, sizeof(*s));
	s->n = n;
	s->rng = seed * 2654435761ULL + 88172645463325252ULL;
	s->max_room = 16;
	s->max_batch = 8;
	s->cfg.group_id = 1;
	s->cfg.flags = flags;
	s->cfg.nmembers = n;
	s->cfg.nsubgroups = 1;
	for (i = 0; i < n; i++) {
		s->cfg.members[i].id = i;
		s->cfg.members[i].family = 2;
		s->cfg.members[i].port = 7471;
		s->cfg.members[i].addr[0] = 10;
		s->cfg.members[i].addr[3] = (u8)(i + 1);
		s->cfg.subgroups[0].members[i] = i;
	}
	s->cfg.subgroups[0].id = 0;
	s->cfg.subgroups[0].nmembers = n;
	s->cfg.subgroups[0].nsenders = nsenders;
	for (r = 0; r < nsenders; r++)
		s->cfg.subgroups[0].senders[r] = senders[r];
	s->cfg.subgroups[0].mode = mode;
	s->cfg.subgroups[0].window = window;
	s->cfg.subgroups[0].max_msg = max_msg;

	for (i = 0; i < n; i++) {
		struct sim_node *nd = &s->node[i];
		struct sp_cfg_err err;

		s->cfg.self_id = i;
		if (sp_cfg_validate(&s->cfg, &err))
			return -1;
		for (r = 0; r < n; r++) {
			nd->blocks[r] = calloc(1, sp_block_size(SIM_MAX_NODES));
			nd->hdrs[r] = calloc(sp_hdr_slots(window), sizeof(struct sp_hdr));
			nd->pay[r] = calloc(window, ALIGN(max_msg, SP_SLOT_ALIGN));
		}
		if (sim_engine(s, i, (1ULL << n) - 1))
			return -1;
		nd->caplog = 1024;
		nd->log = calloc(nd->caplog, sizeof(*nd->log));
	}
	s->cfg.self_id = 0;
	return 0;
}

static inline int sim_init(struct sim *s, u32 n, const u32 *senders, u32 nsenders,
			   u32 mode, u32 window, u32 max_msg, u64 seed)
{
	return sim_init_flags(s, n, senders, nsenders, 0, mode, window, max_msg, seed);
}

static inline void sim_free(struct sim *s)
{
	u32 i, r, a, b;

	for (i = 0; i < s->n; i++) {
		struct sim_node *nd = &s->node[i];

		for (r = 0; r < s->n; r++) {
			free(nd->blocks[r]);
			free(nd->hdrs[r]);
			free(nd->pay[r]);
		}
		free(nd->log);
		sp_sub_destroy(&nd->sub);
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

static inline void sim_post(struct sim *s, u32 a, u32 b, int kind, u64 off, u32 len,
			    const void *snap)
{
	struct sim_q *q = &s->q[a][b];
	struct sim_wr *w = &q->wr[q->tail % SIM_QCAP];

	w->kind = kind;
	w->offset = off;
	w->len = len;
	w->snap = NULL;
	if (snap) {
		w->snap = malloc(len);
		memcpy(w->snap, snap, len);
	}
	q->tail++;
	s->node[a].writes++;
}

/* execute the oldest write from a to b */
static inline void sim_exec(struct sim *s, u32 a, u32 b)
{
	struct sim_q *q = &s->q[a][b];
	struct sim_wr *w = &q->wr[q->head % SIM_QCAP];
	struct sim_node *src = &s->node[a], *dst = &s->node[b];

	if (dst->dead || s->cut[a][b]) {	/* nothing lands: dead, or cut off */
		free(w->snap);
		q->head++;
		return;
	}
	switch (w->kind) {
	case SP_WR_PAYLOAD:
		memcpy(dst->pay[a] + w->offset, src->pay[a] + w->offset, w->len);
		break;
	case SP_WR_HDR:
		memcpy((u8 *)dst->hdrs[a] + w->offset, (u8 *)src->hdrs[a] + w->offset, w->len);
		break;
	case SP_WR_BLOCK:
		memcpy(dst->blocks[a], w->snap, w->len);
		break;
	case SIM_WR_ROW:
		if (sp_vc_row_check(&dst->rows[a], (struct sp_row_hdr *)w->snap, s->n)) {
			fprintf(stderr, "node %u: bad row from node %u\n", b, a);
			s->fault = -EPROTO;
		}
		memcpy(&dst->rows[a], w->snap, sizeof(dst->rows[a]));
		break;
	}
	free(w->snap);
	q->head++;
}

/* the producer of node i: reserve, fill, mark ready (or void) */
static inline void sim_produce(struct sim *s, u32 i)
{
	struct sim_node *nd = &s->node[i];
	struct sp_sub *sub = &nd->sub;
	u32 k;

	if (sub->my_rank < 0 || nd->failed || (s->views && nd->vc.phase != SP_VC_NORMAL))
		return;
	if (nd->stall) {
		nd->stall--;
		return;
	}
	if (nd->pending_n) {	/* finish what was reserved last round */
		for (k = 0; k < nd->pending_n; k++) {
			u64 pos = nd->pending_first + k;
			u8 *slot = nd->pay[i] + sp_sub_payload_offset(sub, pos);

			if (s->void_pct && (int)sim_below(s, 100) < s->void_pct) {
				if (sp_sub_void(sub, pos))
					abort();
				nd->voids++;
				nd->to_send++;	/* still owes a real message */
				continue;
			}
			{
				u32 len = 4 + sim_below(s, sub->max_msg - 3);

				sim_fill(slot, len, i, nd->tag++);
				if (sp_sub_mark_ready(sub, pos, len))
					abort();
			}
		}
		nd->pending_n = 0;
	}
	if (nd->to_send) {
		u32 want = 1 + sim_below(s, (u32)s->max_batch);

		if (want > nd->to_send)
			want = (u32)nd->to_send;
		nd->pending_n = sp_sub_reserve(sub, want, &nd->pending_first);
		nd->to_send -= nd->pending_n;
	}
}

/* keep node i's deliveries in its log, checking each payload */
static inline int sim_record(struct sim *s, u32 i, const struct sp_desc *d, u32 n)
{
	struct sim_node *nd = &s->node[i];
	u32 k;

	for (k = 0; k < n; k++) {
		struct sim_rec *rec;
		u32 sender = nd->rank_node[d[k].rank];
		const u8 *p = nd->pay[sender] + sp_sub_payload_offset(&nd->sub, d[k].pay_pos);

		if (nd->nlog == nd->caplog) {
			nd->caplog *= 2;
			nd->log = realloc(nd->log, nd->caplog * sizeof(*nd->log));
		}
		rec = &nd->log[nd->nlog++];
		/* logs are compared whole (memcmp): padding included */
		memset(rec, 0, sizeof(*rec));
		rec->seq = d[k].seq;
		rec->rank = sender;
		rec->index = d[k].index;
		rec->len = d[k].len;
		if (sim_check(p, d[k].len, sender, &rec->tag)) {
			fprintf(stderr, "node %u: corrupt payload from %u index %llu\n",
				i, sender, (unsigned long long)d[k].index);
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
};

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
	struct sim_node *nd = &t->s->node[t->i];
	struct sp_sub *sub = &nd->sub;
	u64 before = sub->rel_descs;
	struct sp_desc d[64];
	u32 n, total = 0;

	if (!nd->lazy || sim_below(t->s, 4) == 0) {
		nd->released = sub->dl_descs;
		sp_sub_release(sub, nd->released);
	}
	do {
		n = sp_sub_deliver(sub, d, max - total < 64 ? max - total : 64);
		if (sim_record(t->s, t->i, d, n))
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
	u32 to = s->node[t->i].pos_node[m], room;

	if (s->node[to].dead)
		return 0;
	room = SIM_QCAP - 8 - sim_qlen(s, t->i, to);
	if (room > 1 + sim_below(s, s->max_room))
		room = 1 + sim_below(s, s->max_room);
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
	struct sim_node *nd = &t->s->node[t->i];

	sim_post(t->s, t->i, nd->pos_node[m], (int)w->kind, w->offset, w->len,
		 w->kind == SP_WR_BLOCK ? (void *)nd->sub.blocks[nd->sub.me] : NULL);
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
	struct sim_node *nd = &t->s->node[t->i];
	struct sp_sub *sub = &nd->sub;
	u32 r;

	fprintf(stderr, "node %u: rejected a write of node %u: %s\n", t->i,
		nd->pos_node[m], what);
	if (getenv("SIM_TRACE"))
		for (r = 0; r < sub->nsenders; r++)
			fprintf(stderr, "  rank %u (node %u): hdr_pub %llu seen %llu dl_hdr %llu (view %llu phase %d)\n",
				r, nd->rank_node[r],
				(unsigned long long)le64_to_cpu(sub->blocks[simvc_pos(nd, nd->rank_node[r])]->hdr_pub),
				(unsigned long long)sub->rx[r].hdr_seen,
				(unsigned long long)sub->rx[r].dl_hdr,
				(unsigned long long)nd->vc.view, nd->vc.phase);
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

static inline int sim_group_turn(void *ctx, u32 sub)
{
	struct sim_turn *t = ctx;

	(void)sub;	/* one subgroup */
	return sp_sub_pass(&t->s->node[t->i].sub, &sim_turn_ops, t,
			   t->s->cfg.flags & SP_GROUP_BASELINE ?
			   SP_PASS_STEPWISE : 0);
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
 * spindle_pass() runs it.  A node that stopped only says so (its
 * connections are down: nothing else leaves it).  A row waits for the
 * block writes before it (sim_vc_push()): the simulation's view glue
 * reads the survivors' snapshots from their blocks, where the kernel's
 * reads them from the view area that travels with the row.
 */
static inline int sim_thread_pass(struct sim *s, u32 i)
{
	struct sim_turn t = { .s = s, .i = i };
	int work;

	if (s->node[i].failed)
		return s->views ? sim_vc_push(s, i) : 0;
	work = sp_group_pass(&sim_group_ops, &t, 1);
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
			if (a != b && sim_qlen(s, a, b)) {
				sim_exec(s, a, b);
				work++;
			}
		}
		for (i = 0; i < s->n; i++)
			work += !s->node[i].dead && !s->node[i].failed &&
				(s->node[i].to_send || s->node[i].pending_n ||
				 s->node[i].stall);
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
