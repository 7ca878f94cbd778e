/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulated cluster's side of the view change (kmod/proto/vc.c): the
 * ops the state machine calls, row header pushes, and restarting a node
 * so that it joins again.  Included by sim.h.
 */
#ifndef SPINDLE_SIMVC_H
#define SPINDLE_SIMVC_H

static struct simvc_ctx {
	struct sim *s;
	u32 i;
} simvc_ctx[SIM_MAX_NODES];

#define SIMVC(c) struct sim *s = ((struct simvc_ctx *)(c))->s; \
	u32 i = ((struct simvc_ctx *)(c))->i; \
	struct sim_node *nd = &s->node[i]; \
	struct sp_sub *sub = &nd->sub

/* the engine's member position of node @node, or -1 */
static inline int simvc_pos(struct sim_node *nd, u32 node)
{
	u32 p;

	for (p = 0; p < nd->sub.nmembers; p++)
		if (nd->pos_node[p] == node)
			return (int)p;
	return -1;
}

static void simvc_wedge(void *c)
{
	SIMVC(c);

	(void)s;
	(void)i;
	sub->wedged = true;
}

/*
 * As the kernel's spindle_vc_propose() reads each survivor's snapshot from
 * the memory its rows land in (not what the engine last parsed): the
 * received counts in the survivors' blocks, frozen since they wedged and
 * written before the row that says so.
 */
static int simvc_propose(void *c, sp_mask_t survivors, u64 view, u64 term)
{
	u64 trim[SIM_MAX_NODES], rcv[SIM_MAX_NODES];
	u32 p, r;
	SIMVC(c);

	if (getenv("SIM_TRACE"))
		fprintf(stderr, "node %u proposes view %llu term %llu over %#llx\n", i,
			(unsigned long long)view, (unsigned long long)term,
			(unsigned long long)survivors);

	(void)s;
	(void)i;
	for (p = 0; p < sub->nsenders; p++)
		trim[p] = ~0ULL;
	for (p = 0; p < sub->nmembers; p++) {
		if (!sp_mask_has(survivors, nd->pos_node[p]))
			continue;
		for (r = 0; r < sub->nsenders; r++)
			rcv[r] = le64_to_cpu(sub->blocks[p]->v[r]);
		sp_trim_merge(trim, rcv, sub->nsenders);
	}
	sp_sub_set_trim(sub, view, term, trim);
	return 0;
}

static int simvc_adopt(void *c, u32 from, u64 view, u64 term, u64 my_term)
{
	u64 trim[SIM_MAX_NODES];
	int p, ret;
	SIMVC(c);

	(void)s;
	(void)i;
	p = simvc_pos(nd, from);
	if (p < 0)
		return -EPROTO;
	ret = sp_sub_read_trim(sub, (u32)p, view, term, trim);
	if (getenv("SIM_TRACE"))
		fprintf(stderr, "node %u adopts from %u view %llu term %llu as %llu: %d (%llu %llu %llu %llu %llu)\n",
			i, from, (unsigned long long)view, (unsigned long long)term,
			(unsigned long long)my_term, ret, (unsigned long long)trim[0],
			(unsigned long long)trim[1], (unsigned long long)trim[2],
			(unsigned long long)trim[3], (unsigned long long)trim[4]);
	if (ret)
		return ret;
	sp_sub_set_trim(sub, view, my_term, trim);
	return 0;
}

static void simvc_log_view(struct sim_node *nd, u64 view, sp_mask_t members)
{
	struct sim_rec *rec;

	if (nd->nlog == nd->caplog) {
		nd->caplog *= 2;
		nd->log = realloc(nd->log, nd->caplog * sizeof(*nd->log));
	}
	rec = &nd->log[nd->nlog++];
	memset(rec, 0, sizeof(*rec));
	rec->rank = SIM_VIEW_RANK;
	rec->index = view;
	rec->tag = (u32)members;
	nd->view_logged = (int)view;
}

static int simvc_apply(void *c, u64 view, sp_mask_t members)
{
	u64 trim[SIM_MAX_NODES];
	struct sp_desc d[64];
	u32 n;
	SIMVC(c);

	if (nd->view_logged == (int)view)
		return 0;
	if (sp_sub_read_trim(sub, sub->me, view, le64_to_cpu(nd->rows[i].echo_term), trim)) {
		fprintf(stderr, "node %u: no trim of its own to apply\n", i);
		s->fault = -ENODATA;	/* not a rejected write: its own message */
		return 0;
	}
	if (getenv("SIM_TRACE"))
		fprintf(stderr, "node %u applies view %llu term %llu trim %llu %llu %llu %llu %llu (members %#llx)\n",
			i, (unsigned long long)view,
			(unsigned long long)le64_to_cpu(nd->rows[i].echo_term),
			(unsigned long long)trim[0], (unsigned long long)trim[1],
			(unsigned long long)trim[2], (unsigned long long)trim[3],
			(unsigned long long)trim[4], (unsigned long long)members);
	do {
		n = sp_sub_deliver_trim(sub, trim, d, 64);
		if (sim_record(s, i, d, n))
			return 0;
		nd->released = sub->dl_descs;
		sp_sub_release(sub, nd->released);
	} while (n);
	simvc_log_view(nd, view, members);
	return 0;
}

static bool simvc_drain(void *c, sp_mask_t next)
{
	u32 b;
	SIMVC(c);

	for (b = 0; b < s->n; b++) {
		struct sim_q *q = &s->q[i][b];
		int p = simvc_pos(nd, b);

		if (b != i && p >= 0 && sp_mask_has(next, b) && !s->node[b].dead &&
		    sp_sub_has_output(sub, (u32)p))
			return false;	/* still to write */

		if (!sim_qlen(s, i, b))
			continue;
		if (sp_mask_has(next, b))
			return false;
		while (q->head != q->tail) {	/* abandoned */
			free(q->wr[q->head % SIM_QCAP].snap);
			q->head++;
		}
	}
	return true;
}

static int simvc_reset(void *c, u64 view, sp_mask_t members)
{
	SIMVC(c);

	(void)view;
	if (sub->dl_descs != sub->rel_descs)
		return -EAGAIN;
	nd->to_send += nd->pending_n;	/* reserved, never marked: redo */
	nd->pending_n = 0;
	sim_wipe(s, i);
	if (sim_engine(s, i, members))
		s->fault = -ENOMEM;
	nd->released = 0;
	return 0;
}

/* members the waits skipped: their connections to this node go down */
static void simvc_fence(void *c, sp_mask_t fenced)
{
	u32 x;
	SIMVC(c);

	(void)sub;
	for (x = 0; x < s->n; x++) {
		struct sim_q *q = &s->q[i][x];

		if (!sp_mask_has(fenced, x))
			continue;
		if (getenv("SIM_TRACE"))
			fprintf(stderr, "node %u fences %u\n", i, x);
		s->cut[i][x] = 1;
		s->cut[x][i] = 1;
		while (q->head != q->tail) {
			free(q->wr[q->head % SIM_QCAP].snap);
			q->head++;
		}
	}
	(void)nd;
}

/* a joiner applied no trim: its view record comes here */
static void simvc_install(void *c, u64 view, sp_mask_t members)
{
	SIMVC(c);

	(void)s;
	(void)sub;
	if (nd->view_logged != (int)view)
		simvc_log_view(nd, view, members);
}

static void simvc_fail(void *c, const char *why)
{
	SIMVC(c);

	(void)s;
	(void)sub;
	(void)why;
	nd->failed = 1;
	(void)i;
}

static const struct sp_vc_ops simvc_ops = {
	.wedge = simvc_wedge,
	.propose_trim = simvc_propose,
	.adopt_trim = simvc_adopt,
	.apply_trim = simvc_apply,
	.drain = simvc_drain,
	.reset = simvc_reset,
	.fence = simvc_fence,
	.install = simvc_install,
	.fail = simvc_fail,
};

/* Every node runs the view change from view 1 (all members). */
static inline void sim_views(struct sim *s, bool two_member_override)
{
	u32 i;

	s->views = 1;
	for (i = 0; i < s->n; i++) {
		struct sim_node *nd = &s->node[i];

		simvc_ctx[i].s = s;
		simvc_ctx[i].i = i;
		nd->incarnation = 1;
		sp_vc_init(&nd->vc, i, s->n, 1, (1ULL << s->n) - 1, two_member_override);
		sp_vc_row_init(&nd->vc, &nd->rows[i], nd->incarnation);
	}
}

static inline int sim_vc_pass(struct sim *s, u32 i)
{
	struct sim_node *nd = &s->node[i];

	return sp_vc_step(&nd->vc, &nd->rows[i], nd->rows, &simvc_ops, &simvc_ctx[i]);
}

/* Push my row when it changed, once the blocks it refers to went out. */
static inline int sim_vc_push(struct sim *s, u32 i)
{
	struct sim_node *nd = &s->node[i];
	u32 m, b;

	if (nd->vc.row_ver == nd->pushed_row)	/* a member that stops says so too */
		return 0;
	/* a drained or joining engine has nothing more to write */
	for (m = 0; nd->vc.phase != SP_VC_DRAINED &&
	     nd->vc.phase != SP_VC_JOINING && m < nd->sub.nmembers; m++)
		if (m != nd->sub.me && !s->node[nd->pos_node[m]].dead &&
		    sp_sub_has_output(&nd->sub, m))
			return 0;
	for (b = 0; b < s->n; b++)
		if (b != i && !s->node[b].dead)
			sim_post(s, i, b, SIM_WR_ROW, 0, sizeof(nd->rows[i]), &nd->rows[i]);
	nd->pushed_row = nd->vc.row_ver;
	return 1;
}

/*
 * Restart killed node @k: it comes back empty, asking to join; every live
 * node sees it connect (its join request) and sends it its row.
 */
static inline void sim_restart(struct sim *s, u32 k)
{
	struct sim_node *nd = &s->node[k];
	u32 b;

	nd->dead = 0;
	nd->failed = 0;
	nd->incarnation++;
	nd->nlog = 0;
	nd->to_send = 0;
	nd->pending_n = 0;
	nd->view_logged = 0;
	/* a new incarnation holds nothing its old one was handed */
	nd->released = nd->sub.dl_descs;
	sp_sub_release(&nd->sub, nd->released);
	memset(nd->rows, 0, sizeof(nd->rows));
	sim_wipe(s, k);
	sp_vc_init_joining(&nd->vc, k, s->n);
	sp_vc_row_init(&nd->vc, &nd->rows[k], nd->incarnation);
	for (b = 0; b < s->n; b++) {
		if (b == k || s->node[b].dead)
			continue;
		sp_vc_local_join(&s->node[b].vc, k);
	}
}

#endif /* SPINDLE_SIMVC_H */
