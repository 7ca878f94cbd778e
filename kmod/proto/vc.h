/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The view change, as a state machine over the members' row headers
 * (struct sp_row_hdr), run by each member on every pass.
 *
 *   NORMAL	the view runs.  A suspicion (heartbeat silent, QP error) or a
 *		join request, of this member's or in any live member's row,
 *		ends it:
 *   WEDGED	nothing more is sent, and nothing more is delivered: a count
 *		that grew after a member's wedge push must not decide a
 *		delivery the trim does not cover.  The leader, the lowest-ranked member
 *		nobody suspects, waits until every survivor has wedged; then it
 *		proposes the next view: its members (the survivors, and those
 *		joining) and, per subgroup, a trim.  If a survivor already holds
 *		an earlier leader's trim it adopts that one (the latest), else it
 *		takes the minimum of the survivors' received counts.  Each member
 *		echoes the proposal (copies the trim into its own blocks); when
 *		every survivor has echoed it, the leader commits.  A commit seen
 *		in any member's row is final.
 *   COMMITTED	deliver up to the trim, then the view record; drain our writes
 *		of the old view (abandoning the members that go);
 *   DRAINED	wait until everyone who stays has drained; reset memory;
 *   READY	wait until everyone is reset; cut off the members the drained
 *		and ready waits skipped (suspected: they may still be in the
 *		old view, and its writes and the new view's must not meet);
 *		install the view: NORMAL.  The next change takes them out.
 *   JOINING	a member that is not in any view: it waits for a commit that
 *		lets it in, then drains (nothing) and resets like the others.
 *   FAILED	no majority, or this member was taken out: it stops.
 *
 * Only a committed trim is applied: by then every survivor echoed it, so
 * any later leader adopts it; trims are never applied in steps (see
 * view.h).  The owner pushes its blocks before its row header, so a row
 * that announces something implies the blocks it refers to.
 */
#ifndef SPINDLE_PROTO_VC_H
#define SPINDLE_PROTO_VC_H

#include "view.h"
#include "layout.h"

enum sp_vc_phase {
	SP_VC_NORMAL,
	SP_VC_WEDGED,
	SP_VC_COMMITTED,
	SP_VC_DRAINED,
	SP_VC_READY,
	SP_VC_JOINING,
	SP_VC_FAILED,
};

/* What the state machine asks of its owner; ctx is the owner's. */
struct sp_vc_ops {
	/* stop sending and delivering in every subgroup */
	void (*wedge)(void *ctx);
	/* put in my blocks the trim over @survivors, for (@view, @term) */
	int (*propose_trim)(void *ctx, sp_mask_t survivors, u64 view, u64 term);
	/* copy member @from's trim for (@view, @term), a view of @members,
	 * into my blocks, tagged (@view, @my_term): 0, -EAGAIN (not there
	 * yet) or -EPROTO (more than I received, or, if I am in @members,
	 * short of what I delivered: a faulty proposer)
	 */
	int (*adopt_trim)(void *ctx, u32 from, u64 view, u64 term, u64 my_term,
			  sp_mask_t members);
	/* deliver up to the trim in my blocks, then the view record of (@view,
	 * @members): 0 when done, -EAGAIN to be called again
	 */
	int (*apply_trim)(void *ctx, u64 view, sp_mask_t members);
	/* are my writes of the old view done?  (members not in @next are
	 * abandoned, within a bounded time)
	 */
	bool (*drain)(void *ctx, sp_mask_t next);
	/* reset memory and engines for (@view, @members): 0, or -EAGAIN while
	 * delivered messages of the old view are still held
	 */
	int (*reset)(void *ctx, u64 view, sp_mask_t members);
	/*
	 * members of the view about to run that the drained and ready waits
	 * skipped (suspected): they may not have reset, so nothing of the new
	 * view may reach them; cut them off before install (the next change
	 * takes them out)
	 */
	void (*fence)(void *ctx, sp_mask_t fenced);
	/* the view runs */
	void (*install)(void *ctx, u64 view, sp_mask_t members);
	/* this member leaves the group: @why */
	void (*fail)(void *ctx, const char *why);
	/* optional, for fault injection: it just entered @phase (its row
	 * says so); true holds it there until the next step
	 */
	bool (*hold)(void *ctx, enum sp_vc_phase phase);
};

struct sp_vc {
	u32 me;				/* my configured member index */
	u32 nconf;			/* configured members */
	bool two_member_override;
	enum sp_vc_phase phase;
	u64 view;			/* installed view (0: none yet) */
	sp_mask_t members;		/* its members */
	sp_mask_t suspects;		/* known suspicions in this view */
	sp_mask_t joins;		/* known join requests */
	sp_mask_t local_suspects;	/* the owner's own findings (any view) */
	sp_mask_t local_joins;		/* members the owner saw ask to join */
	sp_mask_t survivors;		/* of my current proposal (leader) */
	u64 next_view;			/* the committed change */
	sp_mask_t next_members;
	sp_mask_t prev_members;		/* of the view it ends (a joiner's:
					 * as the committer's row said)
					 */
	u64 row_ver;			/* bumped when my row changed: push it */
	const char *fail_why;
};

void sp_vc_init(struct sp_vc *vc, u32 me, u32 nconf, u64 view, sp_mask_t members,
		bool two_member_override);
void sp_vc_init_joining(struct sp_vc *vc, u32 me, u32 nconf);
void sp_vc_row_init(struct sp_vc *vc, struct sp_row_hdr *mine, u64 incarnation);
int sp_vc_step(struct sp_vc *vc, struct sp_row_hdr *mine,
	       const struct sp_row_hdr *rows, const struct sp_vc_ops *ops,
	       void *ctx);
int sp_vc_stop(struct sp_vc *vc, const struct sp_vc_ops *ops, void *ctx,
	       const char *why);
int sp_vc_row_check(const struct sp_row_hdr *old, const struct sp_row_hdr *new,
		    u32 nconf);

/*
 * The members whose failure matters now: the view's, and once a change is
 * committed, the next view's (joiners included) too.
 */
static inline sp_mask_t sp_vc_scope(const struct sp_vc *vc)
{
	switch (vc->phase) {
	case SP_VC_COMMITTED:
	case SP_VC_DRAINED:
	case SP_VC_READY:
		return vc->members | vc->next_members;
	default:
		return vc->members;
	}
}

/* The owner found member @m failed (heartbeat, QP error, disconnect). */
static inline void sp_vc_local_suspect(struct sp_vc *vc, u32 m)
{
	if (m < vc->nconf && m != vc->me && !sp_mask_has(vc->local_suspects, m)) {
		vc->local_suspects |= 1ULL << m;
		vc->row_ver++;
	}
}

/*
 * A new incarnation of member @m connected, asking to join: what was
 * suspected of its old one is settled.
 */
static inline void sp_vc_local_join(struct sp_vc *vc, u32 m)
{
	if (m >= vc->nconf || m == vc->me)
		return;
	vc->local_suspects &= ~(1ULL << m);
	vc->local_joins |= 1ULL << m;
	vc->row_ver++;
}

#endif /* SPINDLE_PROTO_VC_H */
