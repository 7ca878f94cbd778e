// SPDX-License-Identifier: GPL-2.0
/*
 * Rows: each member's row header and view area (proto/layout.h), the
 * Shared State Table's row of this protocol.  Mine goes to every peer as
 * one RDMA write, with a crc32, when it changed and the last push landed;
 * the peers' come in, are checked, and tell who is alive.
 *
 * A copy taken while a write lands is seen as torn and taken again on a
 * later pass; a whole copy that breaks the rules (a counter going back, a
 * mask naming strangers) makes its writer a suspect.  A member is
 * suspected when its heartbeat stalls for suspect_ms, when a write to it
 * fails or is flushed, or when rdma_cm reports it gone; the view change
 * (view.c, proto/vc.c) takes it from there.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/crc32.h>
#include <linux/module.h>

#include "group.h"
#include "peer.h"
#include "rows.h"
#include "xmit.h"
#include "proto/view.h"
#include "trace.h"

static unsigned int heartbeat_ms = 100;
module_param(heartbeat_ms, uint, 0644);
MODULE_PARM_DESC(heartbeat_ms, "How often a member bumps and pushes its heartbeat, in milliseconds (default 100)");

static unsigned int suspect_ms = 2000;
module_param(suspect_ms, uint, 0644);
MODULE_PARM_DESC(suspect_ms, "A member whose heartbeat stalls this long is suspected, in milliseconds (default 2000)");

/* The group is ACTIVE: every member is connected; failures now end views. */
void spindle_view_start(struct spindle_group *g)
{
	u64 now = ktime_get_ns();
	u32 i;

	for (i = 0; i < g->cfg.nmembers; i++)
		g->hb_at[i] = now;
	g->hb_next = now;
	WRITE_ONCE(g->vc_on, true);
}

/**
 * spindle_member_lost - a member's connection failed
 * @g: group
 * @idx: member index
 * @why: for the log
 *
 * Context: any.  The predicate thread suspects it on its next pass.
 */
void spindle_member_lost(struct spindle_group *g, u32 idx, const char *why)
{
	if (idx >= g->cfg.nmembers || idx == g->me)
		return;
	if (!test_and_set_bit(idx, &g->lost)) {
		pr_warn("group %u: member %u lost (%s)\n", g->id,
			g->cfg.members[idx].id, why);
		trace_spindle_suspect(g->id, g->cfg.members[idx].id, why);
	}
	spindle_ring_doorbell(g);
}

/**
 * spindle_row_csum - the checksum of a row header and view area
 * @g: group
 * @row: the row (its csum field is left as it is)
 *
 * Return: the value for the csum field, never 0.
 */
u64 spindle_row_csum(struct spindle_group *g, void *row)
{
	struct sp_row_hdr *h = row;
	__le64 saved = h->csum;
	u32 crc;

	h->csum = 0;
	crc = crc32_le(~0U, row, g->row_bytes);
	h->csum = saved;
	return (u64)crc | 1ULL << 32;	/* never 0: 0 is "nothing written" */
}

/*
 * Copy member @m's row and view area into g->row_tmp; false if the copy is
 * torn (a write was landing) or nothing was written yet: take it next pass.
 * Counted either way, for the log of a silent member.
 */
bool spindle_row_take(struct spindle_group *g, u32 m)
{
	struct sp_row_hdr *tmp = g->row_tmp;

	memcpy(tmp, g->in_meta[m]->vaddr, g->row_bytes);
	if (!tmp->csum || le64_to_cpu(tmp->csum) != spindle_row_csum(g, tmp)) {
		g->rows_bad[m]++;
		return false;
	}
	g->rows_taken[m]++;
	g->rows_bad[m] = 0;
	return true;
}

/* Take the peers' rows that changed, checked. */
void spindle_rows_intake(struct spindle_group *g, u64 now)
{
	struct sp_row_hdr *tmp = g->row_tmp;
	u32 m;

	for (m = 0; m < g->cfg.nmembers; m++) {
		const struct sp_row_hdr *src;
		struct sp_row_hdr *acc = &g->rows[m];

		/* a member already lost is not read again (nor logged again) */
		if (m == g->me || test_bit(m, &g->lost) ||
		    (g->vc.phase != SP_VC_JOINING &&
		     !sp_mask_has(g->vc.members | g->vc.next_members, m)))
			continue;
		src = g->in_meta[m]->vaddr;
		if (READ_ONCE(src->csum) == acc->csum &&
		    READ_ONCE(src->heartbeat) == acc->heartbeat)
			continue;
		if (!spindle_row_take(g, m))
			continue;
		if (sp_vc_row_check(acc, tmp, g->cfg.nmembers)) {
			pr_warn_ratelimited("group %u: member %u wrote an invalid row: treating it as failed\n",
					    g->id, g->cfg.members[m].id);
			spindle_member_lost(g, m, "invalid row");
			continue;
		}
		if (tmp->heartbeat != acc->heartbeat || tmp->incarnation != acc->incarnation)
			g->hb_at[m] = now;
		memcpy(g->row_copy[m], tmp, g->row_bytes);
		*acc = *tmp;
	}
}

/*
 * Why member @m looks silent, as far as this member can tell: no row of
 * its landed since the last one taken (its pushes stopped or never
 * reached us), or rows landed that would not read (torn or a bad
 * checksum, again and again), or rows came whose heartbeat stood still.
 */
static void spindle_silent_log(struct spindle_group *g, u32 m, u64 now)
{
	const struct sp_row_hdr *src = g->in_meta[m]->vaddr;

	pr_warn("group %u: member %u silent for %u ms: suspected (rows taken %llu; in memory heartbeat %llu, taken %llu; %u unreadable reads since)\n",
		g->id, g->cfg.members[m].id,
		(u32)((now - g->hb_at[m]) / NSEC_PER_MSEC), g->rows_taken[m],
		le64_to_cpu(READ_ONCE(src->heartbeat)),
		le64_to_cpu(g->rows[m].heartbeat), g->rows_bad[m]);
}

/*
 * Heartbeat mine; suspect the silent and the lost, of the members whose
 * failure matters now (sp_vc_scope(): once a change is committed, those
 * joining too).  A member coming into scope starts with a fresh timeout:
 * a joiner's row was not read before.
 */
void spindle_detect(struct spindle_group *g, u64 now)
{
	u64 limit = (u64)READ_ONCE(suspect_ms) * NSEC_PER_MSEC;
	sp_mask_t scope = sp_vc_scope(&g->vc);
	u32 m;

	for (m = 0; m < g->cfg.nmembers; m++)
		if (sp_mask_has(scope & ~g->hb_scope, m))
			g->hb_at[m] = now;
	g->hb_scope = scope;

	if (now >= g->hb_next) {
		struct sp_row_hdr *mine = spindle_my_row(g);

		mine->heartbeat = cpu_to_le64(le64_to_cpu(mine->heartbeat) + 1);
		g->row_gen++;
		g->hb_next = now + (u64)max(READ_ONCE(heartbeat_ms), 1U) * NSEC_PER_MSEC;
	}
	for (m = 0; m < g->cfg.nmembers; m++) {
		if (m == g->me || !sp_mask_has(scope, m) ||
		    sp_mask_has(g->vc.local_suspects, m))
			continue;
		/*
		 * A joiner whose connection here is up but whose row has not
		 * come yet (it learns the group ran on from our rows first,
		 * which may take a while): alive while it stays connected.
		 */
		if (!sp_mask_has(g->vc.members, m) && spindle_peer_ready(g->peers[m]) &&
		    le64_to_cpu(g->rows[m].incarnation) == g->gone_inc[m])
			g->hb_at[m] = now;
		if (test_bit(m, &g->lost)) {
			trace_spindle_suspect(g->id, g->cfg.members[m].id,
					      "connection lost");
			sp_vc_local_suspect(&g->vc, m);
		} else if (now - g->hb_at[m] > limit) {
			spindle_silent_log(g, m, now);
			trace_spindle_suspect(g->id, g->cfg.members[m].id,
					      "heartbeat silent");
			sp_vc_local_suspect(&g->vc, m);
		}
	}
}

/*
 * fault_row_hold_ms: is my row held back from @peer, a member outside the
 * view that connected less than that long ago?  (A joiner then sees every
 * connection ready before any row, as a loaded one may.)
 */
static bool spindle_row_held(struct spindle_group *g, struct spindle_peer *peer)
{
	u64 hold = spindle_fault_row_hold_ns();

	return unlikely(hold) && !sp_mask_has(g->vc.members, peer->idx) &&
	       ktime_get_ns() - peer->kc->ready_ns < hold;
}

/*
 * My latest row waits for room in @peer's send queue, or for my last row
 * push to complete.  Rows go first in a pass, so a wait of a second means
 * the queue does not move: say so once (the peer will soon suspect us of
 * silence).
 */
static void spindle_row_waits(struct spindle_group *g, struct spindle_peer *peer)
{
	struct spindle_conn *c = peer->kc;
	u64 now = ktime_get_ns();

	if (!c->row_due) {
		c->row_due = now;
		return;
	}
	if (c->row_due_said || now - c->row_due < NSEC_PER_SEC)
		return;
	c->row_due_said = true;
	pr_warn_ratelimited("group %u: my row has waited %llu ms for the send queue to member %u (posted %llu, acked %llu, last row push at %llu)\n",
			    g->id, (now - c->row_due) / NSEC_PER_MSEC, peer->id,
			    c->sq_posted, c->sq_acked, c->row_inflight);
}

/* Queue my row and view area to every peer that lacks its latest. */
void spindle_view_push_rows(struct spindle_group *g)
{
	struct sp_row_hdr *mine = spindle_my_row(g);
	u32 i;

	if (!READ_ONCE(g->vc_on))
		return;
	if (g->vc.row_ver != g->row_gen_vc) {
		g->row_gen++;
		g->row_gen_vc = g->vc.row_ver;
	}
	for (i = 0; i < g->cfg.nmembers; i++) {
		struct spindle_peer *peer = g->peers[i];

		if (i == g->me || !spindle_peer_ready(peer) ||
		    peer->kc->row_sent == g->row_gen ||
		    spindle_row_held(g, peer))
			continue;
		if (!spindle_peer_writes(peer) || !spindle_row_landed(peer)) {
			spindle_row_waits(g, peer);
			continue;
		}
		peer->kc->row_due = 0;
		peer->kc->row_due_said = false;
		if (g->row_csum_gen != g->row_gen) {
			mine->csum = cpu_to_le64(spindle_row_csum(g, mine));
			g->row_csum_gen = g->row_gen;
		}
		/* a view change rings the peer's doorbell; a heartbeat need not */
		spindle_peer_queue_row(peer, peer->kc->row_vc_sent != g->vc.row_ver);
		peer->kc->row_sent = g->row_gen;
		peer->kc->row_vc_sent = g->vc.row_ver;
	}
}
