// SPDX-License-Identifier: GPL-2.0
/*
 * The ib_verbs transport under the predicate pass (proto/pass.c): what a
 * peer's send queue takes now, the engine's writes appended to its chain
 * (split at memory region chunks, blocks and rows copied to a staging
 * slot first), and one ib_post_send() per peer at the end of a pass.
 * Completions are polled here too.  While the hostile-peer test mode is
 * set, what is staged goes through hostile.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "group.h"
#include "peer.h"
#include "subgroup.h"
#include "xmit.h"
#include "hostile.h"
#include "proto/sq.h"
#include "trace.h"

static bool coalesce = true;
module_param(coalesce, bool, 0644);
MODULE_PARM_DESC(coalesce, "Hold a counter push to a peer while the last one is in flight, and send the changes together (default on)");

/* May writes to @peer be queued (the predicate thread; others: a hint)? */
bool spindle_peer_ready(struct spindle_peer *peer)
{
	return peer && READ_ONCE(peer->kc_ready);
}

/*
 * Writes this pass may still queue to @peer (@peer is ready): whole writes
 * of split_max entries, so that no staging slot comes round while a write
 * that reads it is in flight (proto/sq.h).
 */
u32 spindle_peer_writes(const struct spindle_peer *peer)
{
	const struct spindle_conn *c = peer->kc;

	return sp_sq_writes(c->sq_posted, peer->chain_len, c->sq_acked,
			    c->split_max, SPINDLE_SQ_DEPTH);
}

/* Does @g coalesce counter pushes?  Not the baseline. */
bool spindle_coalesces(const struct spindle_group *g)
{
	return READ_ONCE(coalesce) && !(g->cfg.flags & SP_GROUP_BASELINE);
}

/* Mark chain entry @i signaled; the completion acknowledges all before it. */
static void spindle_signal(struct spindle_peer *peer, u32 i)
{
	u64 pos = peer->kc->sq_posted + i;
	struct spindle_sig *sig = &peer->kc->sigs[pos % SPINDLE_SQ_DEPTH];

	sig->acks_to = pos + 1;
	peer->chain[i].wr.send_flags |= IB_SEND_SIGNALED;
	peer->chain[i].wr.wr_cqe = &sig->cqe;
}

/*
 * Make the chain's last entry signaled (if it is not already); return the
 * send queue position after it, which its completion acknowledges.
 */
static u64 spindle_signal_last(struct spindle_peer *peer)
{
	u32 last = peer->chain_len - 1;

	if (!(peer->chain[last].wr.send_flags & IB_SEND_SIGNALED))
		spindle_signal(peer, last);
	return peer->kc->sq_posted + peer->chain_len;
}

/*
 * The staging slot of the next send queue entry: what the NIC reads from
 * it is a snapshot, reused only after that entry completed.
 */
static u64 spindle_stage_off(const struct spindle_peer *peer)
{
	return (u64)sp_sq_stage_slot(peer->kc->sq_posted + peer->chain_len,
				     SPINDLE_SQ_DEPTH) * peer->stage_entry;
}

/**
 * spindle_peer_queue - append one engine write to a peer's chain
 * @peer: a READY peer
 * @sub: the subgroup the write belongs to
 * @w: the write, in region offsets
 *
 * Splits it at MR chunk boundaries on either side.  A block is copied into
 * the staging slot of the send queue entry that carries it, so that what
 * the NIC reads is what the engine meant at this moment.
 */
void spindle_peer_queue(struct spindle_peer *peer, struct spindle_subgroup *sub,
			const struct sp_wr *w)
{
	struct spindle_conn *c = peer->kc;
	struct spindle_group *g = peer->g;
	const struct sp_meta_layout *lay = &g->layout[g->me];
	const struct spindle_rregion *rr;
	const struct spindle_mrset *lset;
	u32 s = sub->index, len = w->len, n;
	bool bell = w->kind == SP_WR_BLOCK;
	u32 hostile = spindle_hostile_mode(g);
	u64 loff, roff;

	if (unlikely(hostile == SPINDLE_HOSTILE_SILENT))
		return;
	switch (w->kind) {
	case SP_WR_PAYLOAD:
		lset = &c->l_pay[s];
		rr = &c->w_pay[s];
		loff = w->offset;
		roff = w->offset;
		break;
	case SP_WR_HDR:
		lset = &c->l_meta;
		rr = &c->w_meta;
		loff = lay->hdr_off[s] + w->offset;
		roff = loff;
		if (unlikely(hostile)) {
			u64 st = spindle_stage_off(peer);

			n = spindle_hostile_hdrs(peer, g->out_meta->vaddr + loff,
						 len, peer->stage->vaddr + st);
			if (n) {
				len = n;
				lset = &c->l_stage;
				loff = st;
			}
		}
		break;
	default:
		lset = &c->l_stage;
		rr = &c->w_meta;
		loff = spindle_stage_off(peer);
		roff = lay->block_off[s];
		memcpy(peer->stage->vaddr + loff, sub->eng.blocks[sub->eng.me], len);
		if (unlikely(hostile))
			spindle_hostile_block(g, peer->stage->vaddr + loff);
		break;
	}

	n = spindle_queue_range(peer, lset, loff, rr, roff, len, bell, s);
	sub->writes_posted += n;
	sub->writes_kind[w->kind] += n;
	sub->bytes_posted += len;
	if (bell && n && spindle_coalesces(g)) {
		/* its completion says when the next push may go */
		c->blk_inflight[s] = spindle_signal_last(peer);
	}
}

/**
 * spindle_queue_range - append the writes of a range to a peer's chain
 * @peer: a READY peer
 * @lset: the local memory regions
 * @loff: where in them the range starts
 * @rr: the peer's region
 * @roff: where in it
 * @len: bytes
 * @bell: the last write carries @imm and rings the peer's doorbell
 * @imm: its immediate data
 *
 * Splits the range at MR chunk boundaries on either side.
 * Return: the writes queued.
 */
u32 spindle_queue_range(struct spindle_peer *peer,
			const struct spindle_mrset *lset, u64 loff,
			const struct spindle_rregion *rr, u64 roff, u32 len,
			bool bell, u32 imm)
{
	u32 queued = 0;

	while (len) {
		u32 i = peer->chain_len, n, rkey = 0;
		struct ib_sge *sge = &peer->chain_sge[i];
		struct ib_rdma_wr *wr = &peer->chain[i];
		u64 raddr = 0;

		if (WARN_ON_ONCE(i >= SPINDLE_SQ_DEPTH))
			break;
		n = spindle_mrset_sge(lset, loff, len, sge);
		if (n)
			n = spindle_rregion_addr(rr, roff, n, &raddr, &rkey);
		if (WARN_ON_ONCE(!n)) {
			spindle_conn_fail_later(peer->kc, "write outside a region");
			break;
		}
		sge->length = n;
		memset(wr, 0, sizeof(*wr));
		wr->wr.opcode = IB_WR_RDMA_WRITE;
		if (bell && n == len) {
			/* the counters: ring the peer's doorbell as they land */
			wr->wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
			wr->wr.ex.imm_data = cpu_to_be32(imm);
		}
		wr->wr.sg_list = sge;
		wr->wr.num_sge = 1;
		wr->wr.wr_cqe = &peer->kc->err_cqe;
		wr->remote_addr = raddr;
		wr->rkey = rkey;
		peer->chain_len++;
		if ((peer->kc->sq_posted + peer->chain_len) % SPINDLE_SIGNAL_EVERY == 0)
			spindle_signal(peer, i);
		loff += n;
		roff += n;
		len -= n;
		queued++;
	}
	return queued;
}

/**
 * spindle_row_landed - has my last row push to @peer completed?
 * @peer: a READY peer
 *
 * One row push in flight per peer, as with counter blocks: the next one
 * carries whatever changed meanwhile.  Rows are pushed for heartbeats
 * every heartbeat_ms, quiet group or not; a stream of them behind a send
 * queue that does not move would keep the provider busy for nothing, and
 * soft-RoCE since 6.8 (one task runs requester and completer) pushes its
 * retransmit timer out on every post: a queue waiting for an ACK that was
 * lost would never time out and retransmit while we went on posting.
 */
bool spindle_row_landed(const struct spindle_peer *peer)
{
	return peer->kc->sq_acked >= peer->kc->row_inflight;
}

/**
 * spindle_peer_queue_row - append a push of my row header and view area
 * @peer: a READY peer whose last row push landed (spindle_row_landed())
 * @bell: ring its doorbell (a view change; heartbeats need not)
 *
 * Staged like a block: what the NIC reads is the row of this moment.  The
 * push is signaled: its completion says when the next one may go.
 */
void spindle_peer_queue_row(struct spindle_peer *peer, bool bell)
{
	struct spindle_group *g = peer->g;
	struct spindle_conn *c = peer->kc;
	u64 loff = spindle_stage_off(peer);

	if (unlikely(spindle_hostile_mode(g)) && spindle_hostile_row(peer, loff, bell))
		return;
	u32 n;

	memcpy(peer->stage->vaddr + loff, g->out_meta->vaddr, g->row_bytes);
	n = spindle_queue_range(peer, &c->l_stage, loff, &c->w_meta, 0,
				g->row_bytes, bell, U32_MAX);
	if (!n)
		return;
	peer->chain_rows += n;
	c->row_inflight = spindle_signal_last(peer);
}

/*
 * The chain just posted, for the tracepoint: its writes, the doorbells
 * among them, and how many were row pushes (heartbeats, view changes).
 */
static void spindle_trace_post(const struct spindle_peer *peer, u32 n,
			       u32 rows)
{
	u32 i, bells = 0;

	for (i = 0; i < n; i++)
		bells += peer->chain[i].wr.opcode == IB_WR_RDMA_WRITE_WITH_IMM;
	trace_spindle_post(peer->g->id, peer->id, n, bells, rows);
}

/**
 * spindle_peer_flush - post a peer's chain with one ib_post_send()
 * @peer: a READY peer
 *
 * Return: number of writes posted, or -errno after failing the peer.
 */
int spindle_peer_flush(struct spindle_peer *peer)
{
	const struct ib_send_wr *bad = NULL;
	struct spindle_conn *c = peer->kc;
	u32 n = peer->chain_len, rows = peer->chain_rows, i;
	int ret;

	if (!n)
		return 0;
	peer->chain_rows = 0;
	/* when draining, for teardown or a view change, every chain ends signaled */
	if (READ_ONCE(peer->g->stopping) || peer->g->vc.phase != SP_VC_NORMAL)
		spindle_signal_last(peer);
	for (i = 0; i + 1 < n; i++)
		peer->chain[i].wr.next = &peer->chain[i + 1].wr;
	peer->chain[n - 1].wr.next = NULL;
	ret = ib_post_send(c->qp, &peer->chain[0].wr, &bad);
	peer->chain_len = 0;
	if (ret) {
		for (i = 0; i < n && bad != &peer->chain[i].wr; i++)
			;
		c->sq_posted += i;
		pr_warn_ratelimited("group %u: posting to member %u failed: %d\n",
				    peer->g->id, peer->id, ret);
		spindle_conn_fail_later(c, "post_send failed");
		return ret;
	}
	c->sq_posted += n;
	if (trace_spindle_post_enabled())
		spindle_trace_post(peer, n, rows);
	return n;
}

/* Only the predicate thread polls: the batch lives in the group. */
int spindle_poll_cq(struct spindle_group *g)
{
	struct ib_wc *wc = g->wc;
	int n, i, total = 0;

	if (!g->cq)
		return 0;
	while (total < 256 && (n = ib_poll_cq(g->cq, ARRAY_SIZE(g->wc), wc)) > 0) {
		for (i = 0; i < n; i++)
			wc[i].wr_cqe->done(g->cq, &wc[i]);
		total += n;
	}
	return total;
}

/*
 * End of a pass: every ready peer's chain goes out, every doorbell receive
 * used up is posted again, and what is still in flight is noted for
 * readers outside the thread.
 */
void spindle_flush_all(struct spindle_group *g)
{
	u32 i;

	for (i = 0; i < g->cfg.nmembers; i++) {
		struct spindle_peer *peer = g->peers[i];
		struct spindle_conn *c;

		if (i == g->me || !peer->kc)
			continue;
		c = peer->kc;
		if (c->bells_owed)
			spindle_conn_post_bells(c);
		if (peer->kc_ready)
			spindle_peer_flush(peer);
		WRITE_ONCE(peer->kc_inflight, c->sq_posted - c->sq_acked);
	}
}

