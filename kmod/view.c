// SPDX-License-Identifier: GPL-2.0
/*
 * Views in the kernel: the owner's side of the view change that
 * proto/vc.c runs (see vc.h for the phases), over the rows and failure
 * detection of rows.c.
 *
 * Once a member is suspected, the survivors wedge, agree on the ragged
 * trim of every subgroup (from the received counts each one put in its
 * view area as it wedged), deliver up to it, abandon the QPs of the
 * members that go, reset the subgroups' memory and engines for the new
 * membership, and go on.  Users see configured sender ranks, positions and
 * message numbers that go on across views, and a view record in the
 * delivery stream where the change falls.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/slab.h>
#include <linux/module.h>
#include <linux/kthread.h>

#include "group.h"
#include "peer.h"
#include "rows.h"
#include "subgroup.h"
#include "xmit.h"
#include "proto/ring.h"
#include "proto/view.h"
#include "trace.h"

static struct sp_area_entry *spindle_area(struct spindle_group *g, void *row, u32 s)
{
	return row + g->layout[g->me].area_off[s];
}

static struct sp_area_entry *spindle_my_area(struct spindle_group *g, u32 s)
{
	return spindle_area(g, g->out_meta->vaddr, s);
}

static sp_mask_t spindle_all_members(const struct spindle_group *g)
{
	return (1ULL << g->cfg.nmembers) - 1;
}

/**
 * spindle_view_init - view state of a new group: view 1, every member
 * @g: group, its layout and meta regions made
 *
 * Return: 0 or -ENOMEM.
 */
int spindle_view_init(struct spindle_group *g)
{
	u32 i;

	g->row_bytes = g->layout[g->me].row_bytes;
	g->row_tmp = kzalloc(g->row_bytes, GFP_KERNEL);
	if (!g->row_tmp)
		return -ENOMEM;
	for (i = 0; i < g->cfg.nmembers; i++) {
		if (i == g->me)
			continue;
		g->row_copy[i] = kzalloc(g->row_bytes, GFP_KERNEL);
		if (!g->row_copy[i])
			return -ENOMEM;
	}
	sp_vc_init(&g->vc, g->me, g->cfg.nmembers, 1, spindle_all_members(g),
		   g->cfg.flags & SP_GROUP_TWO_MEMBER_OVERRIDE);
	sp_vc_row_init(&g->vc, spindle_my_row(g), ktime_get_real_ns() | 1);
	g->view_id = 1;
	g->view_members = spindle_all_members(g);
	return 0;
}

void spindle_view_free(struct spindle_group *g)
{
	u32 i;

	for (i = 0; i < SP_MAX_MEMBERS; i++)
		kfree(g->row_copy[i]);
	kfree(g->row_tmp);
}

/**
 * spindle_sub_init_view - a subgroup's user-facing numbering, in view 1
 * @sub: subgroup, its engine initialised for the configuration
 */
void spindle_sub_init_view(struct spindle_subgroup *sub)
{
	u32 r;

	sub->my_rank = sub->eng.my_rank;
	for (r = 0; r < SP_MAX_MEMBERS; r++)
		sub->cfg_rank[r] = r;
	sub->view_done = 1;
}

/* ---- the state machine's ops ---- */

static void spindle_vc_wedge(void *ctx)
{
	struct spindle_group *g = ctx;
	u32 s, r;

	g->change_start = ktime_get_ns();
	g->change_conns = atomic64_read(&g->conns_made);
	pr_info("group %u: view %llu ends (suspects %#llx, joins %#llx)\n",
		g->id, g->vc.view, g->vc.suspects | g->vc.local_suspects,
		g->vc.joins);
	trace_spindle_view_change(g->id, "wedge", g->vc.view, g->vc.members, 0);
	spindle_group_move(g, SPINDLE_GROUP_VIEW_CHANGE);
	for (s = 0; s < g->cfg.nsubgroups; s++) {
		struct spindle_subgroup *sub = g->subs[s];
		struct sp_area_entry *a;
		u32 n = g->cfg.subgroups[s].nsenders;

		if (!sub)
			continue;
		a = spindle_my_area(g, s);
		spin_lock_bh(&sub->lock);
		sub->eng.wedged = true;
		for (r = 0; r < n; r++)
			a->v[r] = 0;
		for (r = 0; r < sub->eng.nsenders; r++)
			a->v[sub->cfg_rank[r]] = cpu_to_le64(sub->eng.rx[r].received);
		a->snap_view = cpu_to_le64(g->vc.view);
		spin_unlock_bh(&sub->lock);
	}
	g->vc.row_ver++;
}

/* Is configured member @m in subgroup @s? */
static bool spindle_in_sub(const struct spindle_group *g, u32 s, u32 m)
{
	return sp_sub_member_pos(&g->cfg.subgroups[s], g->cfg.members[m].id) >= 0;
}

static void *spindle_row_of(struct spindle_group *g, u32 m)
{
	return m == g->me ? g->out_meta->vaddr : g->row_copy[m];
}

/* Testing only ("proposed short", fault.c): my trims, halved. */
static void spindle_halve_trims(struct spindle_group *g)
{
	u32 s, r;

	for (s = 0; s < g->cfg.nsubgroups; s++) {
		struct sp_area_entry *mine = spindle_my_area(g, s);
		u32 n = g->cfg.subgroups[s].nsenders;

		for (r = 0; r < n; r++)
			mine->v[n + r] = cpu_to_le64(le64_to_cpu(mine->v[n + r]) / 2);
	}
}

static int spindle_vc_propose(void *ctx, sp_mask_t survivors, u64 view, u64 term)
{
	struct spindle_group *g = ctx;
	u32 s, r, m;

	for (s = 0; s < g->cfg.nsubgroups; s++) {
		u32 n = g->cfg.subgroups[s].nsenders;
		struct sp_area_entry *mine = spindle_my_area(g, s);
		u64 trim[SP_MAX_MEMBERS];
		bool any = false;

		for (r = 0; r < n; r++)
			trim[r] = U64_MAX;
		for (m = 0; m < g->cfg.nmembers; m++) {
			struct sp_area_entry *a;
			u64 rcv[SP_MAX_MEMBERS];

			if (!sp_mask_has(survivors, m) || !spindle_in_sub(g, s, m))
				continue;
			a = spindle_area(g, spindle_row_of(g, m), s);
			if (le64_to_cpu(a->snap_view) != g->vc.view)
				return -EAGAIN;	/* its wedge has not reached us */
			for (r = 0; r < n; r++)
				rcv[r] = le64_to_cpu(a->v[r]);
			sp_trim_merge(trim, rcv, n);
			any = true;
		}
		for (r = 0; r < n; r++)
			mine->v[n + r] = cpu_to_le64(any ? trim[r] : 0);
		mine->trim_view = cpu_to_le64(view);
		mine->trim_term = cpu_to_le64(term);
	}
	g->vc.row_ver++;
	pr_info("group %u: proposing view %llu (term %llu) of %#llx\n", g->id,
		view, term, survivors);
	spindle_fault_reached(g, SPINDLE_FAULT_PROPOSED);
	if (spindle_fault_short_trim(g))
		spindle_halve_trims(g);
	return 0;
}

/*
 * Is @a's trim of @sub one I can deliver?  Not more than I received, and,
 * if I stay (@stay), not short of what I delivered: a correct leader's trim
 * is the survivors' least received count, and nobody delivers a message
 * before every member received it.  (One that goes may have delivered more,
 * alone in a subgroup no survivor is in: the trim of nobody's is empty.)
 */
static bool spindle_trim_ok(struct spindle_group *g, struct spindle_subgroup *sub,
			    const struct sp_area_entry *a, bool stay, u32 from)
{
	u32 n = g->cfg.subgroups[sub->index].nsenders, r;

	for (r = 0; r < sub->eng.nsenders; r++) {
		u64 t = le64_to_cpu(a->v[n + sub->cfg_rank[r]]);
		const char *what;

		if (t > sub->eng.rx[r].received)
			what = "more than we received";
		else if (stay && t < sub->eng.rx[r].dl_idx)
			what = "short of what we delivered";
		else
			continue;
		pr_warn("group %u subgroup %u: member %u proposes a trim %s (sender %u: %llu)\n",
			g->id, sub->id, g->cfg.members[from].id, what, r, t);
		return false;
	}
	return true;
}

static int spindle_vc_adopt(void *ctx, u32 from, u64 view, u64 term, u64 my_term,
			    sp_mask_t members)
{
	struct spindle_group *g = ctx;
	void *row = spindle_row_of(g, from);
	bool stay = sp_mask_has(members, g->me);
	u32 s, r;

	for (s = 0; s < g->cfg.nsubgroups; s++) {
		struct sp_area_entry *a = spindle_area(g, row, s);
		struct spindle_subgroup *sub = g->subs[s];

		if (le64_to_cpu(a->trim_view) != view || le64_to_cpu(a->trim_term) != term)
			return -EAGAIN;
		if (sub && !spindle_trim_ok(g, sub, a, stay, from))
			return -EPROTO;
	}
	for (s = 0; s < g->cfg.nsubgroups; s++) {
		struct sp_area_entry *a = spindle_area(g, row, s);
		struct sp_area_entry *mine = spindle_my_area(g, s);
		u32 n = g->cfg.subgroups[s].nsenders;

		for (r = 0; r < n; r++)
			mine->v[n + r] = a->v[n + r];
		mine->trim_view = cpu_to_le64(view);
		mine->trim_term = cpu_to_le64(my_term);
	}
	g->vc.row_ver++;
	spindle_fault_reached(g, SPINDLE_FAULT_ECHOED);
	return 0;
}

/* The trim of @sub in my area, by engine rank. */
static void spindle_sub_trim(struct spindle_group *g, struct spindle_subgroup *sub, u64 *trim)
{
	struct sp_area_entry *a = spindle_my_area(g, sub->index);
	u32 n = sub->cfg.nsenders, r;

	for (r = 0; r < sub->eng.nsenders; r++)
		trim[r] = le64_to_cpu(a->v[n + sub->cfg_rank[r]]);
}

/*
 * Where @view's numbering starts in subgroup @s (sp_sub_next_bases()), in
 * my view area, for members that join: every member publishes them for
 * every subgroup, so a joiner needs only one that stays.  A member of @s
 * that stays has delivered exactly up to the trim by now (it refused a trim
 * short of its delivery: spindle_trim_ok()), so its engine agrees: said if
 * not, rather than trusted.
 */
static void spindle_publish_bases(struct spindle_group *g, u32 s, u64 view,
				  sp_mask_t members)
{
	struct sp_area_entry *a = spindle_my_area(g, s);
	struct spindle_subgroup *sub = g->subs[s];
	u32 n = g->cfg.subgroups[s].nsenders, r;
	struct sp_bases next = g->bases[s];
	u64 trim[SP_MAX_MEMBERS];

	for (r = 0; r < n; r++)
		trim[r] = le64_to_cpu(a->v[n + r]);
	sp_sub_next_bases(&g->cfg, s, g->vc.prev_members, trim, &next);
	if (sub && sp_mask_has(members, g->me) && sub->eng.mode == SP_MODE_ORDERED &&
	    next.seq != g->bases[s].seq + sub->eng.dl_seq)
		pr_warn("group %u subgroup %u: view %llu's trim ends the sequence at %llu, my delivery at %llu\n",
			g->id, sub->id, view, next.seq, g->bases[s].seq + sub->eng.dl_seq);
	for (r = 0; r < n; r++)
		a->v[2 * n + r] = cpu_to_le64(next.idx[r]);
	a->seq_base = cpu_to_le64(next.seq);
	a->base_view = cpu_to_le64(view);
	g->vc.row_ver++;
}

/*
 * The bases of @view for subgroup @s: mine, or (joining) those of any
 * member that stays from the view before; ERR_PTR(-EAGAIN) while none has
 * reached me.  In it or not, every member that stays publishes them before
 * it says it drained, so a joiner waits on nobody the others do not.
 */
static struct sp_area_entry *spindle_bases_of(struct spindle_group *g, u32 s,
					      u64 view, sp_mask_t members)
{
	struct sp_area_entry *a = spindle_my_area(g, s);
	sp_mask_t stay = members & g->vc.prev_members;
	u32 m;

	if (le64_to_cpu(a->base_view) == view)
		return a;
	for (m = 0; m < g->cfg.nmembers; m++) {
		if (m == g->me || !sp_mask_has(stay, m))
			continue;
		a = spindle_area(g, g->row_copy[m], s);
		if (le64_to_cpu(a->base_view) == view)
			return a;
	}
	return ERR_PTR(-EAGAIN);
}

static int spindle_vc_apply(void *ctx, u64 view, sp_mask_t members)
{
	struct spindle_group *g = ctx;
	int ret = 0;
	u32 s;

	for (s = 0; s < g->cfg.nsubgroups; s++) {
		struct spindle_subgroup *sub = g->subs[s];
		u64 trim[SP_MAX_MEMBERS];

		if (le64_to_cpu(spindle_my_area(g, s)->base_view) == view)
			continue;
		if (sub) {
			spindle_sub_trim(g, sub, trim);
			if (!spindle_sub_deliver_upto(sub, trim)) {
				ret = -EAGAIN;
				continue;
			}
			/* the record waits for the install: see spindle_vc_install() */
			sub->view_done = view;
		}
		spindle_publish_bases(g, s, view, members);
	}
	return ret;
}

/*
 * Stop writing to @peer and refuse its writes: the connection it had when
 * this change began goes down and is reaped (QP drained and destroyed,
 * MRs and with them every key it had deregistered).  It may come back as
 * a new incarnation, on a connection made since, which is left alone.
 */
static void spindle_abandon(struct spindle_group *g, struct spindle_peer *peer)
{
	if (peer->kc && peer->kc->born <= g->change_conns)
		spindle_conn_down(peer->kc, "removed from the view");
	spindle_peer_allow_rejoin(peer);
}

static bool spindle_vc_drain(void *ctx, sp_mask_t next)
{
	struct spindle_group *g = ctx;
	bool done = true;
	u32 i;

	for (i = 0; i < g->cfg.nmembers; i++) {
		struct spindle_peer *peer = g->peers[i];

		if (i == g->me || !peer)
			continue;
		if (!sp_mask_has(next, i)) {
			spindle_abandon(g, peer);
			continue;
		}
		if (spindle_peer_ready(peer) && peer->kc->sq_acked != peer->kc->sq_posted)
			done = false;
	}
	return done && !spindle_group_owes(g, next, false);
}

/* Point a (new) engine at the memory of the members it has. */
static void spindle_sub_wire(struct spindle_group *g, struct spindle_subgroup *sub,
			     const struct sp_sub_cfg *vc, struct sp_sub *e)
{
	u32 m, r;

	for (m = 0; m < vc->nmembers; m++) {
		u32 idx = sp_cfg_member_index(&g->cfg, vc->members[m]);
		void *base = idx == g->me ? g->out_meta->vaddr : g->in_meta[idx]->vaddr;

		sub->member_idx[m] = idx;
		e->blocks[m] = base + g->layout[idx].block_off[sub->index];
	}
	for (r = 0; r < vc->nsenders; r++) {
		u32 idx = sp_cfg_member_index(&g->cfg, vc->senders[r]);
		void *base = idx == g->me ? g->out_meta->vaddr : g->in_meta[idx]->vaddr;

		sub->cfg_rank[r] = sp_sub_sender_rank(&sub->cfg, vc->senders[r]);
		e->hdrs[r] = base + g->layout[idx].hdr_off[sub->index];
	}
}

/* The bases of subgroup @s from view area @b: those of the view to come. */
static void spindle_take_bases(struct spindle_group *g, u32 s, const struct sp_area_entry *b)
{
	u32 n = g->cfg.subgroups[s].nsenders, r;

	for (r = 0; r < n; r++)
		g->bases[s].idx[r] = le64_to_cpu(b->v[2 * n + r]);
	g->bases[s].seq = le64_to_cpu(b->seq_base);
}

static int spindle_vc_reset(void *ctx, u64 view, sp_mask_t members)
{
	struct spindle_group *g = ctx;
	struct sp_group_cfg *vcfg;
	struct sp_sub *fresh[SP_MAX_SUBGROUPS] = {};
	struct sp_sub *old = NULL;
	u32 s, i;
	int ret = 0;

	/* what the old view delivered must be given back first */
	for (s = 0; s < g->cfg.nsubgroups; s++)
		if ((g->subs[s] && !spindle_sub_quiet(g->subs[s])) ||
		    IS_ERR(spindle_bases_of(g, s, view, members)))
			return -EAGAIN;
	vcfg = kmalloc(sizeof(*vcfg), GFP_KERNEL);
	old = kmalloc(sizeof(*old), GFP_KERNEL);
	if (!vcfg || !old) {
		kfree(vcfg);
		kfree(old);
		return -EAGAIN;
	}
	sp_view_config(&g->cfg, members, vcfg);
	vcfg->self_id = g->cfg.self_id;
	for (s = 0; s < g->cfg.nsubgroups && !ret; s++) {
		if (!g->subs[s])
			continue;
		fresh[s] = kzalloc(sizeof(*fresh[s]), GFP_KERNEL);
		ret = fresh[s] ? sp_sub_init(fresh[s], vcfg, s) : -ENOMEM;
	}
	if (ret) {
		for (s = 0; s < g->cfg.nsubgroups; s++) {
			if (fresh[s])
				sp_sub_destroy(fresh[s]);
			kfree(fresh[s]);
		}
		kfree(vcfg);
		kfree(old);
		return -EAGAIN;
	}
	/* every writer of the old view is done: wipe all but the rows */
	memset(g->out_meta->vaddr + g->row_bytes, 0, g->out_meta->size - g->row_bytes);
	for (i = 0; i < g->cfg.nmembers; i++)
		if (i != g->me)
			memset(g->in_meta[i]->vaddr + g->row_bytes, 0,
			       g->in_meta[i]->size - g->row_bytes);
	for (s = 0; s < g->cfg.nsubgroups; s++)
		spindle_take_bases(g, s, spindle_bases_of(g, s, view, members));
	for (s = 0; s < g->cfg.nsubgroups; s++) {
		struct spindle_subgroup *sub = g->subs[s];

		if (!sub)
			continue;
		spin_lock_bh(&sub->lock);
		*old = sub->eng;
		sub->base = g->bases[s];
		spindle_sub_wire(g, sub, &vcfg->subgroups[s], fresh[s]);
		/* every user position keeps its slot: the window need not be 2^n */
		sub->pos_base = sp_ring_lap(sub->pos_base + old->pay_reserved, sub->cfg.window);
		fresh[s]->stats = old->stats;
		sub->eng = *fresh[s];
		spindle_producer_reset(sub);
		spin_unlock_bh(&sub->lock);
		spindle_sub_consumers_reset(sub);
		sp_sub_destroy(old);
		kfree(fresh[s]);
	}
	kfree(vcfg);
	kfree(old);
	return 0;
}

static void spindle_vc_install(void *ctx, u64 view, sp_mask_t members)
{
	struct spindle_group *g = ctx;
	u32 i;

	/*
	 * The view record, only now that the new engines are in place: a
	 * consumer may send as soon as it reads it, and what it sends must
	 * belong to the new view (delivered at the trim, the record let a
	 * sender fill the old view's ring, whose contents the reset then
	 * dropped unreported).  Nothing is delivered between the trim and
	 * here, so the record still falls between the two views' messages.
	 */
	for (i = 0; i < g->cfg.nsubgroups; i++) {
		if (g->subs[i]) {
			spindle_sub_deliver_view(g->subs[i], view, members);
			g->subs[i]->view_done = view;
		}
	}
	for (i = 0; i < g->cfg.nmembers; i++) {
		g->hb_at[i] = ktime_get_ns();	/* a fresh start for the timeout */
		if (i == g->me || !sp_mask_has(g->vc.prev_members & ~members, i))
			continue;
		/*
		 * Taken out: what was found of it is settled (its connection
		 * was abandoned in the drain); a new incarnation is judged
		 * afresh, from its own connection and rows.
		 */
		g->gone_inc[i] = le64_to_cpu(g->rows[i].incarnation);
		clear_bit(i, &g->lost);
	}
	WRITE_ONCE(g->view_id, view);
	WRITE_ONCE(g->view_members, members);
	pr_info("group %u: view %llu installed: members %#llx, after %llu ms\n",
		g->id, view, members,
		(ktime_get_ns() - g->change_start) / NSEC_PER_MSEC);
	trace_spindle_view_change(g->id, "install", view, members,
				  (ktime_get_ns() - g->change_start) / NSEC_PER_MSEC);
	spindle_group_move(g, SPINDLE_GROUP_ACTIVE);
}

/*
 * Members of the view about to run that the drained wait (before the
 * reset) or the ready wait (at install) skipped, suspected: they may
 * still be in the old view, so nothing of the new one may land in their
 * memory, nor theirs in ours.  Their QPs stop taking writes at once and
 * their connections go down; the next change takes them out.
 */
static void spindle_vc_fence(void *ctx, sp_mask_t fenced)
{
	struct spindle_group *g = ctx;
	u32 i;

	for (i = 0; i < g->cfg.nmembers; i++) {
		struct spindle_peer *peer = g->peers[i];

		if (i == g->me || !sp_mask_has(fenced, i) || !peer || !peer->kc)
			continue;
		pr_info("group %u: member %u is suspected as view %llu is set up: cut off\n",
			g->id, peer->id, g->vc.next_view);
		spindle_conn_fence(peer->kc);
		spindle_conn_down(peer->kc, "suspected as the view began");
	}
}

static void spindle_vc_fail(void *ctx, const char *why)
{
	struct spindle_group *g = ctx;
	u32 i;

	pr_warn("group %u: this member stops: %s\n", g->id, why);
	trace_spindle_view_change(g->id, "fail", g->vc.view, g->vc.members,
				  (ktime_get_ns() - g->change_start) / NSEC_PER_MSEC);
	spindle_group_move(g, SPINDLE_GROUP_FAILED);
	/*
	 * It writes nothing more in this group: its connections go down at
	 * once, or the NIC goes on retrying writes into peers that moved on
	 * (soft RoCE did so from softirq until the CPU locked up).
	 */
	for (i = 0; i < g->cfg.nmembers; i++) {
		struct spindle_peer *peer = g->peers[i];

		if (i != g->me && peer && peer->kc)
			spindle_conn_down(peer->kc, "this member stops");
	}
}

/* Phase-exact fault injection (fault.c): hold where the armed point is. */
static bool spindle_vc_hold(void *ctx, enum sp_vc_phase phase)
{
	static const enum spindle_fault_point point[] = {
		[SP_VC_WEDGED] = SPINDLE_FAULT_WEDGED,
		[SP_VC_COMMITTED] = SPINDLE_FAULT_COMMITTED,
		[SP_VC_DRAINED] = SPINDLE_FAULT_DRAINED,
		[SP_VC_READY] = SPINDLE_FAULT_READY,
	};
	struct spindle_group *g = ctx;

	if ((unsigned int)phase < ARRAY_SIZE(point) && point[phase])
		spindle_fault_reached(g, point[phase]);
	return g->fault.reached;
}

static const struct sp_vc_ops spindle_vc_ops = {
	.wedge = spindle_vc_wedge,
	.propose_trim = spindle_vc_propose,
	.adopt_trim = spindle_vc_adopt,
	.apply_trim = spindle_vc_apply,
	.drain = spindle_vc_drain,
	.reset = spindle_vc_reset,
	.fence = spindle_vc_fence,
	.install = spindle_vc_install,
	.fail = spindle_vc_fail,
	.hold = spindle_vc_hold,
};

/**
 * spindle_view_pass - the view side of one predicate pass
 * @g: an ACTIVE group (or one changing views)
 *
 * Return: non-zero when something moved.
 */
int spindle_view_pass(struct spindle_group *g)
{
	u64 now = ktime_get_ns();
	int work = 0, i;

	if (!READ_ONCE(g->vc_on) || READ_ONCE(g->stopping) ||
	    spindle_fault_pass(g, now))
		return 0;
	spindle_rows_intake(g, now);
	spindle_detect(g, now);
	/*
	 * The state machine says it moved while it waits on others, too:
	 * only a new phase or a row change is work (waiting must not spin).
	 */
	for (i = 0; i < 8; i++) {
		enum sp_vc_phase phase = g->vc.phase;
		u64 ver = g->vc.row_ver;

		sp_vc_step(&g->vc, spindle_my_row(g), g->rows, &spindle_vc_ops, g);
		if (phase != g->vc.phase)
			pr_debug("group %u: view change: phase %d -> %d\n", g->id,
				 phase, g->vc.phase);
		if (g->fault.reached)
			break;	/* held where it is: the fault fires next pass */
		if (phase == g->vc.phase && ver == g->vc.row_ver)
			break;
		work = 1;
	}
	return work;
}

/**
 * spindle_view_stop - this member stops, for a cause of its own
 * @g: group
 * @why: for the log (its completion queue broke, say)
 *
 * As when it finds itself without a majority: no more sends in this
 * group, and its connections go down so that the others see it go at
 * once.  A group still forming fails as it does when a member fails
 * (spindle_group_fail()).  Once; later calls do nothing.
 * Context: the predicate thread.
 */
void spindle_view_stop(struct spindle_group *g, const char *why)
{
	if (READ_ONCE(g->vc_on))
		sp_vc_stop(&g->vc, &spindle_vc_ops, g, why);
	else
		spindle_group_fail(g, -1, why);
}

/* May the engines run?  Not between the drain and the reset. */
bool spindle_view_engines_run(const struct spindle_group *g)
{
	switch (g->vc.phase) {
	case SP_VC_NORMAL:
	case SP_VC_WEDGED:
	case SP_VC_COMMITTED:
		return true;
	default:
		return false;
	}
}

/**
 * spindle_view_peer_ready - a peer's connection is up (again)
 * @g: group
 * @idx: its member index
 *
 * A member outside the view that connects is a new incarnation asking to
 * join: the next view change takes it in, in order with the messages.
 */
void spindle_view_peer_ready(struct spindle_group *g, u32 idx)
{
	if (!READ_ONCE(g->vc_on) || sp_mask_has(g->vc.members, idx))
		return;
	clear_bit(idx, &g->lost);
	pr_info("group %u: member %u asks to join\n", g->id, g->cfg.members[idx].id);
	sp_vc_local_join(&g->vc, idx);
}

/* Whatever this member delivers from now on lacks the group's history. */
static void spindle_view_mark_joined(struct spindle_group *g)
{
	u32 s;

	for (s = 0; s < g->cfg.nsubgroups; s++)
		if (g->subs[s])
			WRITE_ONCE(g->subs[s]->joined, true);
	/* before the state that follows: spindle_subgroup_attr() */
	smp_wmb();
}

/**
 * spindle_view_joining - is this member coming into a running group?
 * @g: a group still connecting
 *
 * A connected peer whose row shows a view that began without us means the
 * group ran on without us: join it rather than wait for every member.
 * Return: true when this member now asks to join.
 */
bool spindle_view_joining(struct spindle_group *g)
{
	u32 m;

	if (READ_ONCE(g->vc_on))
		return false;
	for (m = 0; m < g->cfg.nmembers; m++) {
		struct sp_row_hdr *row;
		u64 view, members;

		if (m == g->me || !spindle_peer_ready(g->peers[m]))
			continue;
		if (!spindle_row_take(g, m))
			continue;
		row = g->row_tmp;
		view = le64_to_cpu(row->view_id);
		members = le64_to_cpu(row->view_members);
		if (!view || (view == 1 && sp_mask_has(members, g->me)))
			continue;
		pr_info("group %u: member %u is in view %llu: joining\n", g->id,
			g->cfg.members[m].id, view);
		sp_vc_init_joining(&g->vc, g->me, g->cfg.nmembers);
		spindle_view_mark_joined(g);
		sp_vc_row_init(&g->vc, spindle_my_row(g), ktime_get_real_ns() | 1);
		spindle_view_start(g);
		g->change_start = ktime_get_ns();
		spindle_group_move(g, SPINDLE_GROUP_VIEW_CHANGE);
		spindle_fault_reached(g, SPINDLE_FAULT_JOINING);
		return true;
	}
	return false;
}
