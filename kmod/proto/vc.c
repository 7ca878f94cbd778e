// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The view change state machine: see vc.h. */
#include "vc.h"

/* Read a field of a row. */
static inline u64 row_field(const __le64 *f)
{
	return le64_to_cpu(READ_ONCE(*f));
}

/* Write a field of my row; remember to push it. */
static void set_mine(struct sp_vc *vc, __le64 *f, u64 v)
{
	if (row_field(f) == v)
		return;
	WRITE_ONCE(*f, cpu_to_le64(v));
	vc->row_ver++;
}

static const struct sp_row_hdr *row_of(const struct sp_vc *vc,
				       const struct sp_row_hdr *mine,
				       const struct sp_row_hdr *rows, u32 m)
{
	return m == vc->me ? mine : &rows[m];
}

static sp_mask_t sp_conf_mask(u32 nconf)
{
	return nconf >= 64 ? ~0ULL : (1ULL << nconf) - 1;
}

/**
 * sp_vc_init - a member of view @view
 * @vc: state
 * @me: my configured member index
 * @nconf: configured members
 * @view: the installed view (the first one is 1: all configured members)
 * @members: its members
 * @two_member_override: the group's option for groups of two
 */
void sp_vc_init(struct sp_vc *vc, u32 me, u32 nconf, u64 view, sp_mask_t members,
		bool two_member_override)
{
	memset(vc, 0, sizeof(*vc));
	vc->me = me;
	vc->nconf = nconf;
	vc->view = view;
	vc->members = members;
	vc->two_member_override = two_member_override;
	vc->phase = SP_VC_NORMAL;
}

/**
 * sp_vc_init_joining - a member that comes (back) into a running group
 * @vc: state
 * @me: my configured member index
 * @nconf: configured members
 */
void sp_vc_init_joining(struct sp_vc *vc, u32 me, u32 nconf)
{
	sp_vc_init(vc, me, nconf, 0, 0, false);
	vc->phase = SP_VC_JOINING;
}

/**
 * sp_vc_row_init - my row header, as it starts
 * @vc: state
 * @mine: my row header
 * @incarnation: non-zero, different at each start of this member
 */
void sp_vc_row_init(struct sp_vc *vc, struct sp_row_hdr *mine, u64 incarnation)
{
	memset(mine, 0, sizeof(*mine));
	mine->incarnation = cpu_to_le64(incarnation);
	mine->view_id = cpu_to_le64(vc->view);
	mine->view_members = cpu_to_le64(vc->members);
	vc->row_ver++;
}

/**
 * sp_vc_row_check - is @new a possible successor of @old, a peer's row?
 * @old: the last accepted copy (all zero at first)
 * @new: the copy just taken
 * @nconf: configured members
 *
 * Within an incarnation every counter and view id only grows and every
 * mask names configured members only.  A new incarnation starts afresh.
 * One exception: a member that echoed a term, then led with a higher one,
 * takes the committed term once it learns of the commit, so its echo term
 * may go back, but only to the term its row says was committed for the
 * very view it echoes.
 * Return: 0 or -EPROTO.
 */
int sp_vc_row_check(const struct sp_row_hdr *old, const struct sp_row_hdr *new,
		    u32 nconf)
{
	const __le64 *mono_o[] = {
		&old->heartbeat, &old->view_id, &old->wedged, &old->prop_view,
		&old->prop_term, &old->echo_view, &old->commit_view,
		&old->commit_term, &old->drained, &old->ready,
	};
	const __le64 *mono_n[] = {
		&new->heartbeat, &new->view_id, &new->wedged, &new->prop_view,
		&new->prop_term, &new->echo_view, &new->commit_view,
		&new->commit_term, &new->drained, &new->ready,
	};
	const __le64 *masks[] = {
		&new->view_members, &new->suspects, &new->joins, &new->prop_members,
		&new->echo_members, &new->commit_members,
	};
	sp_mask_t conf = sp_conf_mask(nconf);
	u32 i;

	for (i = 0; i < ARRAY_SIZE(masks); i++)
		if (row_field(masks[i]) & ~conf)
			return -EPROTO;
	if (row_field(&new->incarnation) != row_field(&old->incarnation))
		return 0;
	for (i = 0; i < ARRAY_SIZE(mono_o); i++)
		if (row_field(mono_n[i]) < row_field(mono_o[i]))
			return -EPROTO;
	if (row_field(&new->echo_term) < row_field(&old->echo_term) &&
	    (row_field(&new->echo_view) != row_field(&old->echo_view) ||
	     row_field(&new->commit_view) != row_field(&new->echo_view) ||
	     row_field(&new->commit_term) != row_field(&new->echo_term)))
		return -EPROTO;
	return 0;
}

/* A term above every term in sight, and mine alone (low bits: my index). */
static u64 sp_vc_new_term(const struct sp_vc *vc, const struct sp_row_hdr *mine,
			  const struct sp_row_hdr *rows)
{
	u64 top = 0;
	u32 m;

	for (m = 0; m < vc->nconf; m++) {
		const struct sp_row_hdr *r = row_of(vc, mine, rows, m);

		top = max_t(u64, top, row_field(&r->prop_term));
		top = max_t(u64, top, row_field(&r->echo_term));
		top = max_t(u64, top, row_field(&r->commit_term));
	}
	return ((top >> 8) + 1) << 8 | vc->me;
}

/*
 * Suspicions and join requests: mine, and every live member's of this
 * view.  Once a change is committed, the members of the next view count
 * too: a joiner that dies before it is ready must be suspected, and a
 * joiner (no view of its own yet) must learn what the members suspect,
 * or the drained and ready waits never end.
 */
static void sp_vc_gossip(struct sp_vc *vc, const struct sp_row_hdr *rows)
{
	sp_mask_t scope = sp_vc_scope(vc);
	sp_mask_t s = vc->suspects | (vc->local_suspects & scope);
	sp_mask_t j = vc->joins | (vc->local_joins & ~scope);
	sp_mask_t before;
	u32 m;

	s &= ~(1ULL << vc->me);		/* nobody suspects himself */
	do {
		before = s;
		for (m = 0; m < vc->nconf; m++) {
			if (m == vc->me || !sp_mask_has(scope & ~s, m) ||
			    row_field(&rows[m].view_id) != vc->view)
				continue;
			s |= row_field(&rows[m].suspects) & scope;
			j |= row_field(&rows[m].joins) & ~scope;
		}
	} while (s != before);
	vc->suspects = s;
	vc->joins = j & ~s;
}

/* Has every member of @who reached @val in field @off of its row? */
static bool sp_vc_all(const struct sp_vc *vc, const struct sp_row_hdr *mine,
		      const struct sp_row_hdr *rows, sp_mask_t who, size_t off,
		      u64 val)
{
	u32 m;

	for (m = 0; m < vc->nconf; m++) {
		const struct sp_row_hdr *r = row_of(vc, mine, rows, m);

		if (sp_mask_has(who, m) &&
		    row_field((const __le64 *)((const u8 *)r + off)) < val)
			return false;
	}
	return true;
}

#define SP_ROW_OFF(f)	offsetof(struct sp_row_hdr, f)

static int sp_vc_fail(struct sp_vc *vc, const struct sp_vc_ops *ops, void *ctx,
		      const char *why)
{
	vc->phase = SP_VC_FAILED;
	vc->fail_why = why;
	ops->fail(ctx, why);
	return 1;
}

/**
 * sp_vc_stop - this member stops for a cause outside the view change
 * @vc: view change state
 * @ops: the glue (->fail is called)
 * @ctx: its context
 * @why: for the log
 *
 * As when it finds itself without a majority: the state machine takes no
 * more steps.  Once; a member that already stopped is left as it is.
 * Return: whether it stopped now.
 */
int sp_vc_stop(struct sp_vc *vc, const struct sp_vc_ops *ops, void *ctx,
	       const char *why)
{
	if (vc->phase == SP_VC_FAILED)
		return 0;
	return sp_vc_fail(vc, ops, ctx, why);
}

/* The leader: propose, or commit what every survivor echoed. */
static int sp_vc_lead(struct sp_vc *vc, struct sp_row_hdr *mine,
		      const struct sp_row_hdr *rows, const struct sp_vc_ops *ops,
		      void *ctx, sp_mask_t alive)
{
	u64 next = vc->view + 1, term, best_term = 0;
	sp_mask_t members;
	int best = -1, ret;
	u32 m;

	if (row_field(&mine->commit_view) == next ||
	    !sp_vc_all(vc, mine, rows, alive, SP_ROW_OFF(wedged), vc->view))
		return 0;
	if (row_field(&mine->prop_view) != next || vc->survivors != alive) {
		/* a survivor holding an earlier leader's trim: the latest wins */
		for (m = 0; m < vc->nconf; m++) {
			const struct sp_row_hdr *r = row_of(vc, mine, rows, m);

			if (sp_mask_has(alive, m) && row_field(&r->echo_view) == next &&
			    row_field(&r->echo_term) > best_term) {
				best = (int)m;
				best_term = row_field(&r->echo_term);
			}
		}
		term = sp_vc_new_term(vc, mine, rows);
		if (best >= 0) {
			members = row_field(&row_of(vc, mine, rows, best)->echo_members);
			ret = ops->adopt_trim(ctx, best, next, best_term, term, members);
		} else {
			members = alive | vc->joins;
			if (!sp_view_has_majority(vc->members, members,
						  vc->two_member_override))
				return sp_vc_fail(vc, ops, ctx,
						  "no majority of the old view survives");
			ret = ops->propose_trim(ctx, alive, next, term);
		}
		if (ret == -EAGAIN)
			return 0;
		if (ret)
			return sp_vc_fail(vc, ops, ctx, "cannot form the trim");
		/* the trim is in my blocks: now announce it */
		set_mine(vc, &mine->prop_view, next);
		set_mine(vc, &mine->prop_term, term);
		set_mine(vc, &mine->prop_members, members);
		set_mine(vc, &mine->echo_view, next);
		set_mine(vc, &mine->echo_term, term);
		set_mine(vc, &mine->echo_members, members);
		vc->survivors = alive;
		return 1;
	}
	for (m = 0; m < vc->nconf; m++) {
		const struct sp_row_hdr *r = row_of(vc, mine, rows, m);

		if (sp_mask_has(alive, m) &&
		    (row_field(&r->echo_view) != next ||
		     row_field(&r->echo_term) != row_field(&mine->prop_term)))
			return 0;
	}
	set_mine(vc, &mine->commit_view, next);
	set_mine(vc, &mine->commit_term, row_field(&mine->prop_term));
	set_mine(vc, &mine->commit_members, row_field(&mine->prop_members));
	return 1;
}

/* Echo my leader's proposal; learn a commit from anyone. */
static int sp_vc_follow(struct sp_vc *vc, struct sp_row_hdr *mine,
			const struct sp_row_hdr *rows, const struct sp_vc_ops *ops,
			void *ctx, int leader)
{
	u64 next = vc->view + 1, term;
	int ret;
	u32 m;

	for (m = 0; m < vc->nconf; m++) {
		const struct sp_row_hdr *r = row_of(vc, mine, rows, m);

		if (m == vc->me || row_field(&r->commit_view) != next)
			continue;
		/* final: hold exactly the committed trim, then commit too */
		term = row_field(&r->commit_term);
		if (row_field(&mine->echo_term) != term || row_field(&mine->echo_view) != next) {
			ret = ops->adopt_trim(ctx, m, next, term, term,
					      row_field(&r->commit_members));
			if (ret == -EAGAIN)
				return 0;
			if (ret)
				return sp_vc_fail(vc, ops, ctx,
						  "the committed trim is not deliverable");
			set_mine(vc, &mine->echo_view, next);
			set_mine(vc, &mine->echo_term, term);
			set_mine(vc, &mine->echo_members, row_field(&r->commit_members));
		}
		set_mine(vc, &mine->commit_view, next);
		set_mine(vc, &mine->commit_term, term);
		set_mine(vc, &mine->commit_members, row_field(&r->commit_members));
		return 1;
	}
	if (leader < 0 || (u32)leader == vc->me)
		return 0;
	if (row_field(&rows[leader].prop_view) != next)
		return 0;
	term = row_field(&rows[leader].prop_term);
	if (row_field(&mine->echo_view) == next && row_field(&mine->echo_term) == term)
		return 0;
	ret = ops->adopt_trim(ctx, leader, next, term, term,
			      row_field(&rows[leader].prop_members));
	if (ret == -EAGAIN)
		return 0;
	if (ret) {
		/* a leader asking for what we lack is faulty: go past it */
		vc->local_suspects |= 1ULL << leader;
		return 1;
	}
	set_mine(vc, &mine->echo_view, next);
	set_mine(vc, &mine->echo_term, term);
	set_mine(vc, &mine->echo_members, row_field(&rows[leader].prop_members));
	return 1;
}

/* A joining member: wait for a commit that lets it in. */
static int sp_vc_join(struct sp_vc *vc, struct sp_row_hdr *mine,
		      const struct sp_row_hdr *rows)
{
	u32 m;

	for (m = 0; m < vc->nconf; m++) {
		u64 cv = row_field(&rows[m].commit_view);
		sp_mask_t cm = row_field(&rows[m].commit_members);

		if (m == vc->me || !cv || !sp_mask_has(cm, vc->me) ||
		    row_field(&rows[m].view_id) != cv - 1)
			continue;
		vc->view = cv - 1;
		vc->next_view = cv;
		vc->next_members = cm;
		vc->prev_members = row_field(&rows[m].view_members);
		set_mine(vc, &mine->commit_view, cv);
		set_mine(vc, &mine->commit_term, row_field(&rows[m].commit_term));
		set_mine(vc, &mine->commit_members, cm);
		set_mine(vc, &mine->drained, cv);	/* it wrote nothing in the old view */
		vc->phase = SP_VC_DRAINED;
		return 1;
	}
	return 0;
}

/* The owner may hold the change where it just entered @phase (tests). */
static bool sp_vc_hold(const struct sp_vc_ops *ops, void *ctx, enum sp_vc_phase phase)
{
	return ops->hold && ops->hold(ctx, phase);
}

/*
 * The steps of a change, one per phase.  Each returns true when it moved
 * on to the next phase, whose step then runs at once; false when the
 * change waits (or stopped), with *work what sp_vc_step() returns.
 */

/* NORMAL, WEDGED: wedge on a suspicion or a join; lead or follow to a commit. */
static bool sp_vc_step_old(struct sp_vc *vc, struct sp_row_hdr *mine,
			   const struct sp_row_hdr *rows,
			   const struct sp_vc_ops *ops, void *ctx, int *work)
{
	sp_mask_t alive;
	int leader;

	if (vc->phase == SP_VC_NORMAL) {
		if (!vc->suspects && !vc->joins)
			return false;
		vc->phase = SP_VC_WEDGED;
		ops->wedge(ctx);
		set_mine(vc, &mine->wedged, vc->view);
		*work = 1;
		if (sp_vc_hold(ops, ctx, SP_VC_WEDGED))
			return false;
	}
	alive = vc->members & ~vc->suspects;
	leader = sp_mask_first(alive);
	/* anyone can see a minority: nobody waits on it */
	if (!sp_view_has_majority(vc->members, alive, vc->two_member_override)) {
		*work = sp_vc_fail(vc, ops, ctx, "no majority of the old view survives");
		return false;
	}
	if (leader >= 0 && (u32)leader == vc->me)
		*work |= sp_vc_lead(vc, mine, rows, ops, ctx, alive);
	if (vc->phase == SP_VC_FAILED) {
		*work = 1;
		return false;
	}
	*work |= sp_vc_follow(vc, mine, rows, ops, ctx, leader);
	if (row_field(&mine->commit_view) != vc->view + 1 || vc->phase == SP_VC_FAILED)
		return false;
	vc->next_view = vc->view + 1;
	vc->next_members = row_field(&mine->commit_members);
	vc->prev_members = vc->members;
	vc->phase = SP_VC_COMMITTED;
	*work = 1;
	return !sp_vc_hold(ops, ctx, SP_VC_COMMITTED);
}

/* COMMITTED: deliver up to the trim, then drain my writes of the old view. */
static bool sp_vc_step_committed(struct sp_vc *vc, struct sp_row_hdr *mine,
				 const struct sp_vc_ops *ops, void *ctx, int *work)
{
	*work = 1;
	if (ops->apply_trim(ctx, vc->next_view, vc->next_members) == -EAGAIN)
		return false;
	if (!sp_mask_has(vc->next_members, vc->me)) {
		*work = sp_vc_fail(vc, ops, ctx, "taken out of the group");
		return false;
	}
	if (!ops->drain(ctx, vc->next_members))
		return false;
	set_mine(vc, &mine->drained, vc->next_view);
	vc->phase = SP_VC_DRAINED;
	return !sp_vc_hold(ops, ctx, SP_VC_DRAINED);
}

/* DRAINED: once everyone who stays has drained, reset memory for the view. */
static bool sp_vc_step_drained(struct sp_vc *vc, struct sp_row_hdr *mine,
			       const struct sp_row_hdr *rows,
			       const struct sp_vc_ops *ops, void *ctx, int *work)
{
	sp_mask_t stay = vc->next_members & ~(vc->local_suspects | vc->suspects);
	sp_mask_t skipped = vc->next_members & ~stay & ~((sp_mask_t)1 << vc->me);

	*work = 1;
	if (!sp_vc_all(vc, mine, rows, stay, SP_ROW_OFF(drained), vc->next_view))
		return false;
	/*
	 * The wait skipped them: they may not have drained, and their
	 * old-view writes may still be on the way.  Cut them off before the
	 * memory those writes would land in is reset for the new view.
	 */
	if (skipped)
		ops->fence(ctx, skipped);
	if (ops->reset(ctx, vc->next_view, vc->next_members) == -EAGAIN)
		return false;
	set_mine(vc, &mine->ready, vc->next_view);
	vc->phase = SP_VC_READY;
	return !sp_vc_hold(ops, ctx, SP_VC_READY);
}

/* READY: once everyone who stays is reset, install the view. */
static int sp_vc_step_ready(struct sp_vc *vc, struct sp_row_hdr *mine,
			    const struct sp_row_hdr *rows,
			    const struct sp_vc_ops *ops, void *ctx)
{
	sp_mask_t stay = vc->next_members & ~(vc->local_suspects | vc->suspects);
	sp_mask_t fenced;

	if (!sp_vc_all(vc, mine, rows, stay, SP_ROW_OFF(ready), vc->next_view))
		return 1;
	vc->view = vc->next_view;
	vc->members = vc->next_members;
	/* who died during the change is suspected in the new view at once */
	vc->suspects &= vc->members;
	/*
	 * What I found of those the change took out is settled: a new
	 * incarnation of one is judged afresh, even before I see it
	 * connect (its join may reach me through the others first).
	 */
	vc->local_suspects &= vc->members;
	vc->joins = 0;
	vc->survivors = 0;
	vc->local_joins &= ~vc->members;
	set_mine(vc, &mine->view_id, vc->view);
	set_mine(vc, &mine->view_members, vc->members);
	set_mine(vc, &mine->suspects, vc->suspects);
	set_mine(vc, &mine->joins, 0);
	vc->phase = SP_VC_NORMAL;
	/* the waits skipped them: they may still be in the old view */
	fenced = vc->members & (vc->suspects | vc->local_suspects);
	if (fenced)
		ops->fence(ctx, fenced);
	ops->install(ctx, vc->view, vc->members);
	return 1;
}

/**
 * sp_vc_step - one step of the view change, on every pass
 * @vc: state
 * @mine: my row header (written here; the owner pushes it when row_ver
 *	changes, after my blocks)
 * @rows: every configured member's row header as last received and
 *	checked with sp_vc_row_check() (my own entry is not used)
 * @ops: the owner's side
 * @ctx: passed to @ops
 *
 * Return: non-zero when something moved.
 */
int sp_vc_step(struct sp_vc *vc, struct sp_row_hdr *mine,
	       const struct sp_row_hdr *rows, const struct sp_vc_ops *ops,
	       void *ctx)
{
	int work = 0;

	if (vc->phase == SP_VC_FAILED)
		return 0;
	if (vc->phase == SP_VC_JOINING) {
		work = sp_vc_join(vc, mine, rows);
		/* a joiner drains nothing: it is drained once it took the commit */
		if (vc->phase == SP_VC_DRAINED && sp_vc_hold(ops, ctx, SP_VC_DRAINED))
			return 1;
		return work;
	}
	/* suspicions travel in every phase: a member may die mid-change */
	sp_vc_gossip(vc, rows);
	set_mine(vc, &mine->suspects, vc->suspects);
	set_mine(vc, &mine->joins, vc->joins);
	switch (vc->phase) {
	case SP_VC_NORMAL:
	case SP_VC_WEDGED:
		if (!sp_vc_step_old(vc, mine, rows, ops, ctx, &work))
			return work;
		fallthrough;
	case SP_VC_COMMITTED:
		if (!sp_vc_step_committed(vc, mine, ops, ctx, &work))
			return work;
		fallthrough;
	case SP_VC_DRAINED:
		if (!sp_vc_step_drained(vc, mine, rows, ops, ctx, &work))
			return work;
		fallthrough;
	case SP_VC_READY:
		return sp_vc_step_ready(vc, mine, rows, ops, ctx);
	case SP_VC_JOINING:
	case SP_VC_FAILED:
		break;
	}
	return work;
}
