/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulated cluster's side of the view change (kmod/proto/vc.c): the
 * ops the state machine calls, row pushes, and restarting a node so that
 * it joins again.  Included by sim.h.
 *
 * As the kernel's (kmod/view.c), per configured subgroup: a node puts its
 * received counts in its view area as it wedges; the leader takes each
 * subgroup's trim over the survivors that are members of it, for every
 * subgroup, its own or not, and every member copies the trims of every
 * subgroup from the row it follows; each node delivers up to the trim of
 * the subgroups it is in, and puts in its view area where the new view's
 * numbering starts in every subgroup, for members that join.
 */
#ifndef SPINDLE_SIMVC_H
#define SPINDLE_SIMVC_H

static struct simvc_ctx {
	struct sim *s;
	u32 i;
} simvc_ctx[SIM_MAX_NODES];

#define SIMVC(c) struct sim *s = ((struct simvc_ctx *)(c))->s; \
	u32 i = ((struct simvc_ctx *)(c))->i; \
	struct sim_node *nd = &s->node[i]

/* the engine's member position of node @node in @g, or -1 */
static inline int simvc_pos(const struct sim_sg *g, u32 node)
{
	u32 p;

	for (p = 0; p < g->sub.nmembers; p++)
		if (g->pos_node[p] == node)
			return (int)p;
	return -1;
}

static inline bool simvc_trace(void)
{
	return getenv("SIM_TRACE") != NULL;
}

/* Stop sending; my received counts of every subgroup I am in, for the trim. */
static void simvc_wedge(void *c)
{
	u32 k, r;
	SIMVC(c);

	for (k = 0; k < s->cfg.nsubgroups; k++) {
		struct sim_sg *g = &nd->sg[k];
		struct sim_area *a = &nd->areas[i][k];

		if (!g->in)
			continue;
		g->sub.wedged = true;
		memset(a->rcv, 0, sizeof(a->rcv));
		for (r = 0; r < g->sub.nsenders; r++)
			a->rcv[g->cfg_rank[r]] = g->sub.rx[r].received;
		a->snap_view = nd->vc.view;
	}
	nd->vc.row_ver++;
}

/*
 * As spindle_vc_propose(): each subgroup's trim, the minimum over the
 * survivors that are its members of the counts in their view areas; 0
 * where none of them is.
 */
static int simvc_propose(void *c, sp_mask_t survivors, u64 view, u64 term)
{
	u64 trim[SIM_MAX_NODES];
	u32 k, m, r;
	SIMVC(c);

	if (simvc_trace())
		fprintf(stderr, "node %u proposes view %llu term %llu over %#llx\n", i,
			(unsigned long long)view, (unsigned long long)term,
			(unsigned long long)survivors);
	for (k = 0; k < s->cfg.nsubgroups; k++) {
		u32 n = s->cfg.subgroups[k].nsenders;
		struct sim_area *mine = &nd->areas[i][k];
		bool any = false;

		for (r = 0; r < n; r++)
			trim[r] = ~0ULL;
		for (m = 0; m < s->n; m++) {
			const struct sim_area *a = &nd->areas[m][k];

			if (!sp_mask_has(survivors, m) || !sim_in(s, k, m))
				continue;
			if (a->snap_view != nd->vc.view)
				return -EAGAIN;	/* its wedge has not reached us */
			sp_trim_merge(trim, a->rcv, n);
			any = true;
		}
		for (r = 0; r < n; r++)
			mine->trim[r] = any ? trim[r] : 0;
		if (s->short_trim == i + 1)	/* a faulty leader: half of it */
			for (r = 0; r < n; r++)
				mine->trim[r] /= 2;
		mine->trim_view = view;
		mine->trim_term = term;
	}
	nd->vc.row_ver++;
	return 0;
}

/*
 * As spindle_trim_ok(): can I deliver @a's trim of subgroup @k?  Not more
 * than I received, and, if I stay (@stay), not short of what I delivered.
 */
static bool simvc_trim_ok(struct sim *s, u32 i, u32 k, const struct sim_area *a,
			  bool stay)
{
	const struct sim_sg *g = &s->node[i].sg[k];
	u32 r;

	for (r = 0; g->in && r < g->sub.nsenders; r++) {
		u64 t = a->trim[g->cfg_rank[r]];

		if (t > g->sub.rx[r].received || (stay && t < g->sub.rx[r].dl_idx))
			return false;
	}
	return true;
}

/* As spindle_vc_adopt(): every subgroup's trim from @from's view area. */
static int simvc_adopt(void *c, u32 from, u64 view, u64 term, u64 my_term,
		       sp_mask_t members)
{
	u32 k;
	SIMVC(c);

	for (k = 0; k < s->cfg.nsubgroups; k++) {
		const struct sim_area *a = &nd->areas[from][k];

		if (a->trim_view != view || a->trim_term != term)
			return -EAGAIN;
		if (!simvc_trim_ok(s, i, k, a, sp_mask_has(members, i))) {
			if (simvc_trace())
				fprintf(stderr, "node %u: node %u's trim of subgroup %u is not deliverable\n",
					i, from, k);
			if (sp_mask_has(members, i))
				s->refused++;	/* one that stays: never, if @from is correct */
			return -EPROTO;
		}
	}
	if (simvc_trace())
		fprintf(stderr, "node %u adopts from %u view %llu term %llu as %llu\n",
			i, from, (unsigned long long)view, (unsigned long long)term,
			(unsigned long long)my_term);
	for (k = 0; k < s->cfg.nsubgroups; k++) {
		struct sim_area *mine = &nd->areas[i][k];

		memcpy(mine->trim, nd->areas[from][k].trim, sizeof(mine->trim));
		mine->trim_view = view;
		mine->trim_term = my_term;
	}
	nd->vc.row_ver++;
	return 0;
}

/*
 * Atomicity, checked as each record is made, by every member, dead and
 * stopped ones too: view @view has one member set, and in each subgroup
 * one trim (where the view before it ended, sender by sender), whoever
 * applied or installed it.  The first record of a view sets them; one
 * that differs fails the run (-EBADE, what in s->disagree).  @k < 0:
 * the members alone (an install, which applies no trim).
 */
static void simvc_agree(struct sim *s, u32 i, u64 view, sp_mask_t members, int k,
			const u64 *trim, u32 ntrim)
{
	struct sim_vrec *v;
	u32 r;

	if (view >= SIM_MAX_VREC) {
		snprintf(s->disagree, sizeof(s->disagree),
			 "node %u: view %llu, past the %u views compared", i,
			 (unsigned long long)view, SIM_MAX_VREC);
		s->fault = -EBADE;
		return;
	}
	v = &s->vrec[view];
	if (!v->known) {
		v->members = members;
		v->known = 1;
	} else if (v->members != members && !s->disagree[0]) {
		snprintf(s->disagree, sizeof(s->disagree),
			 "node %u recorded view %llu of members %#llx, another of %#llx",
			 i, (unsigned long long)view, (unsigned long long)members,
			 (unsigned long long)v->members);
		s->fault = -EBADE;
	}
	if (k < 0)
		return;
	if (!v->trim_known[k]) {
		memcpy(v->trim[k], trim, ntrim * sizeof(*trim));
		v->trim_known[k] = 1;
		return;
	}
	for (r = 0; r < ntrim; r++) {
		if (v->trim[k][r] == trim[r] || s->disagree[0])
			continue;
		snprintf(s->disagree, sizeof(s->disagree),
			 "node %u ended view %llu of subgroup %d at %llu of sender %u, another at %llu",
			 i, (unsigned long long)view - 1, k, (unsigned long long)trim[r], r,
			 (unsigned long long)v->trim[k][r]);
		s->fault = -EBADE;
	}
}

static void simvc_log_view(struct sim_sg *g, u64 view, sp_mask_t members)
{
	struct sim_rec *rec = sim_log_add(g);

	rec->rank = SIM_VIEW_RANK;
	rec->index = view;
	rec->tag = (u32)members;
	g->view_logged = (int)view;
}

/*
 * As spindle_publish_bases(): where @view's numbering starts in subgroup
 * @k, in my view area, computed from the commit alone; a member of @k that
 * stays has delivered exactly up to the trim, and its engine must agree.
 */
static void simvc_bases(struct sim *s, u32 i, u32 k, u64 view, sp_mask_t members)
{
	struct sim_node *nd = &s->node[i];
	struct sim_sg *g = &nd->sg[k];
	struct sim_area *a = &nd->areas[i][k];
	struct sp_bases next = g->base;
	u32 r;

	sp_sub_next_bases(&s->cfg, k, nd->vc.prev_members, a->trim, &next);
	if (g->in && sp_mask_has(members, i) && g->sub.mode == SP_MODE_ORDERED &&
	    next.seq != g->base.seq + g->sub.dl_seq) {
		fprintf(stderr, "node %u subgroup %u: bases say seq %llu, delivery reached %llu\n",
			i, k, (unsigned long long)next.seq,
			(unsigned long long)(g->base.seq + g->sub.dl_seq));
		s->fault = -EPROTO;
	}
	for (r = 0; r < s->cfg.subgroups[k].nsenders; r++)
		a->base[r] = next.idx[r];
	a->seq_base = next.seq;
	a->base_view = view;
	nd->vc.row_ver++;
}

/* Deliver subgroup @k up to my trim, then its view record; 0 or -errno. */
static int simvc_apply_sg(struct sim *s, u32 i, u32 k, u64 view, sp_mask_t members)
{
	struct sim_node *nd = &s->node[i];
	struct sim_sg *g = &nd->sg[k];
	const struct sim_area *a = &nd->areas[i][k];
	u64 trim[SIM_MAX_NODES];
	struct sp_desc d[64];
	u32 n, r;

	if (a->trim_view != view || a->trim_term != le64_to_cpu(nd->rows[i].echo_term)) {
		fprintf(stderr, "node %u: no trim of its own to apply\n", i);
		s->fault = -ENODATA;	/* not a rejected write: its own message */
		return -ENODATA;
	}
	for (r = 0; r < g->sub.nsenders; r++)
		trim[r] = a->trim[g->cfg_rank[r]];
	if (simvc_trace())
		fprintf(stderr, "node %u applies view %llu term %llu to subgroup %u: trim %llu %llu %llu %llu %llu (members %#llx)\n",
			i, (unsigned long long)view, (unsigned long long)a->trim_term, k,
			(unsigned long long)a->trim[0], (unsigned long long)a->trim[1],
			(unsigned long long)a->trim[2], (unsigned long long)a->trim[3],
			(unsigned long long)a->trim[4], (unsigned long long)members);
	do {
		n = sp_sub_deliver_trim(&g->sub, trim, d, 64);
		if (sim_record(s, i, k, d, n))
			return -EIO;
		g->released = g->sub.dl_descs;
		sp_sub_release(&g->sub, g->released);
	} while (n);
	simvc_agree(s, i, view, members, (int)k, trim, g->sub.nsenders);
	simvc_log_view(g, view, members);
	return 0;
}

static int simvc_apply(void *c, u64 view, sp_mask_t members)
{
	u32 k;
	SIMVC(c);

	for (k = 0; k < s->cfg.nsubgroups; k++) {
		if (nd->areas[i][k].base_view == view)
			continue;
		if (nd->sg[k].in && simvc_apply_sg(s, i, k, view, members))
			break;	/* s->fault says why */
		simvc_bases(s, i, k, view, members);
	}
	return 0;
}

static bool simvc_drain(void *c, sp_mask_t next)
{
	u32 b, k;
	SIMVC(c);

	for (b = 0; b < s->n; b++) {
		struct sim_q *q = &s->q[i][b];

		for (k = 0; k < s->cfg.nsubgroups; k++) {
			const struct sim_sg *g = &nd->sg[k];
			int p = g->in ? simvc_pos(g, b) : -1;

			if (b != i && p >= 0 && sp_mask_has(next, b) && !s->node[b].dead &&
			    sp_sub_due(&g->sub, (u32)p, false))
				return false;	/* still to write */
		}
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

/*
 * As spindle_bases_of(): the bases of @view for subgroup @k, mine or (a
 * joiner's) those of any member that stays from the view before, in the
 * subgroup or not; -EAGAIN while none has reached me.
 */
static int simvc_bases_of(struct sim *s, u32 i, u32 k, u64 view, sp_mask_t members,
			  const struct sim_area **out)
{
	struct sim_node *nd = &s->node[i];
	sp_mask_t stay = members & nd->vc.prev_members;
	u32 m;

	*out = &nd->areas[i][k];
	if ((*out)->base_view == view)
		return 0;
	for (m = 0; m < s->n; m++) {
		if (m == i || !sp_mask_has(stay, m))
			continue;
		*out = &nd->areas[m][k];
		if ((*out)->base_view == view)
			return 0;
	}
	return -EAGAIN;
}

/* node i's subgroup @k restarts for (@view, @members) */
static void simvc_reset_sg(struct sim *s, u32 i, u32 k, sp_mask_t members)
{
	struct sim_sg *g = &s->node[i].sg[k];

	g->to_send += g->pending_n;	/* reserved, never marked: redo */
	g->pending_n = 0;
	if (sim_engine(s, i, k, members))
		s->fault = -ENOMEM;
	g->released = 0;
}

static int simvc_reset(void *c, u64 view, sp_mask_t members)
{
	const struct sim_area *b[SIM_MAX_SUBS];
	u32 k;
	SIMVC(c);

	for (k = 0; k < s->cfg.nsubgroups; k++) {
		const struct sim_sg *g = &nd->sg[k];

		if ((g->in && g->sub.dl_descs != g->sub.rel_descs) ||
		    simvc_bases_of(s, i, k, view, members, &b[k]))
			return -EAGAIN;
	}
	sim_wipe(s, i);
	for (k = 0; k < s->cfg.nsubgroups; k++) {
		struct sim_sg *g = &nd->sg[k];
		u32 r;

		for (r = 0; r < s->cfg.subgroups[k].nsenders; r++)
			g->base.idx[r] = b[k]->base[r];
		g->base.seq = b[k]->seq_base;
		if (g->in)
			simvc_reset_sg(s, i, k, members);
	}
	return 0;
}

/* members the waits skipped: their connections to this node go down */
static void simvc_fence(void *c, sp_mask_t fenced)
{
	u32 x;
	SIMVC(c);

	(void)nd;
	for (x = 0; x < s->n; x++) {
		struct sim_q *q = &s->q[i][x];

		if (!sp_mask_has(fenced, x))
			continue;
		if (simvc_trace())
			fprintf(stderr, "node %u fences %u\n", i, x);
		s->cut[i][x] = 1;
		s->cut[x][i] = 1;
		s->fenced[x][i] = 1;
		while (q->head != q->tail) {
			free(q->wr[q->head % SIM_QCAP].snap);
			q->head++;
		}
	}
}

/* a joiner applied no trim: its view records come here */
static void simvc_install(void *c, u64 view, sp_mask_t members)
{
	u32 k;
	SIMVC(c);

	simvc_agree(s, i, view, members, -1, NULL, 0);
	for (k = 0; k < s->cfg.nsubgroups; k++)
		if (nd->sg[k].in && nd->sg[k].view_logged != (int)view)
			simvc_log_view(&nd->sg[k], view, members);
}

static void simvc_fail(void *c, const char *why)
{
	SIMVC(c);

	(void)s;
	(void)i;
	(void)why;
	nd->failed = 1;
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

/*
 * Has node i writes of its engines still to go out to live nodes: what is
 * due (sp_sub_due()), or with @lazy any change at all?  The kernel's
 * spindle_group_owes().
 */
static inline bool sim_engines_owe(const struct sim *s, u32 i, bool lazy)
{
	const struct sim_node *nd = &s->node[i];
	u32 k, m;

	for (k = 0; k < s->cfg.nsubgroups; k++) {
		const struct sim_sg *g = &nd->sg[k];

		for (m = 0; g->in && m < g->sub.nmembers; m++)
			if (m != g->sub.me && !s->node[g->pos_node[m]].dead &&
			    (lazy ? sp_sub_has_output(&g->sub, m) :
			     sp_sub_due(&g->sub, m, false)))
				return true;
	}
	return false;
}

/* Push my row when it changed, once the blocks it refers to went out. */
static inline int sim_vc_push(struct sim *s, u32 i)
{
	struct sim_node *nd = &s->node[i];
	u32 b;

	if (nd->vc.row_ver == nd->pushed_row)	/* a member that stops says so too */
		return 0;
	/*
	 * A drained or joining engine has nothing more to write; a node that
	 * stopped writes nothing more (it takes no more passes) and must
	 * still say so.
	 */
	if (!nd->failed && nd->vc.phase != SP_VC_DRAINED &&
	    nd->vc.phase != SP_VC_JOINING && sim_engines_owe(s, i, false))
		return 0;
	for (b = 0; b < s->n; b++)
		if (b != i && !s->node[b].dead)
			sim_post_row(s, i, b);
	nd->pushed_row = nd->vc.row_ver;
	return 1;
}

/* a new incarnation of node k: nothing of its old one in subgroup @j */
static inline void sim_restart_sg(struct sim *s, u32 k, u32 j)
{
	struct sim_sg *g = &s->node[k].sg[j];

	if (!g->in)
		return;
	g->nlog = 0;
	g->to_send = 0;
	g->pending_n = 0;
	g->view_logged = 0;
	/* it holds nothing its old one was handed */
	g->released = g->sub.dl_descs;
	sp_sub_release(&g->sub, g->released);
}

/*
 * Restart killed node @k: it comes back empty, asking to join; every live
 * node sees it connect (its join request) and sends it its row.
 */
static inline void sim_restart(struct sim *s, u32 k)
{
	struct sim_node *nd = &s->node[k];
	u32 b, j;

	nd->dead = 0;
	nd->failed = 0;
	nd->incarnation++;
	for (j = 0; j < s->cfg.nsubgroups; j++)
		sim_restart_sg(s, k, j);
	memset(nd->rows, 0, sizeof(nd->rows));
	memset(nd->areas, 0, sizeof(nd->areas));
	sim_wipe(s, k);
	sp_vc_init_joining(&nd->vc, k, s->n);
	sp_vc_row_init(&nd->vc, &nd->rows[k], nd->incarnation);
	for (b = 0; b < s->n; b++) {
		s->fenced[k][b] = 0;	/* new connections, */
		s->fenced[b][k] = 0;	/* no QP in the error state */
		if (b == k || s->node[b].dead)
			continue;
		sp_vc_local_join(&s->node[b].vc, k);
	}
}

#endif /* SPINDLE_SIMVC_H */
