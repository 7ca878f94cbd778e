// SPDX-License-Identifier: GPL-2.0
/*
 * The predicate kthread: one per group.
 *
 * Each pass polls the CQ once, then for every subgroup runs the receive,
 * send (publish), reclaim and delivery predicates of the engine, each of
 * which takes everything there is and never waits for more; the writes they
 * call for are queued per peer and posted as one chain per peer at the end
 * of the pass, after every lock is dropped.
 *
 * While there is work the thread polls, yielding with cond_resched(); after
 * spin_us without work it parks until a doorbell rings: a message marked
 * ready, a consumer releasing, or a completion on the CQ.  Peers' data and
 * headers land silently, but every counter push that announces them is an
 * RDMA write with immediate, which completes on our CQ: so a parked thread
 * wakes for remote changes too, and an idle group costs no CPU.  A parked
 * thread still wakes every idle_ms as a safety net.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/hrtimer.h>
#include <linux/module.h>

#include "spindle.h"
#include "proto/order.h"
#include "proto/pass.h"
#include "proto/sq.h"
#include "proto/view.h"
#include "trace.h"

static unsigned int spin_us = 200;
module_param(spin_us, uint, 0644);
MODULE_PARM_DESC(spin_us, "Microseconds the predicate thread polls without work before it parks (default 200)");

static bool coalesce = true;
module_param(coalesce, bool, 0644);
MODULE_PARM_DESC(coalesce, "Hold a counter push to a peer while the last one is in flight, and send the changes together (default on)");

static unsigned int idle_ms = 100;
module_param(idle_ms, uint, 0644);
MODULE_PARM_DESC(idle_ms, "Longest a parked predicate thread sleeps without a doorbell, in milliseconds (default 100)");

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
static bool spindle_coalesces(const struct spindle_group *g)
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

static u32 spindle_queue_range(struct spindle_peer *peer,
			       const struct spindle_mrset *lset, u64 loff,
			       const struct spindle_rregion *rr, u64 roff, u32 len,
			       bool bell, u32 imm);

/*
 * The staging slot of the next send queue entry: what the NIC reads from
 * it is a snapshot, reused only after that entry completed.
 */
static u64 spindle_stage_off(const struct spindle_peer *peer)
{
	return (u64)sp_sq_stage_slot(peer->kc->sq_posted + peer->chain_len,
				     SPINDLE_SQ_DEPTH) * peer->stage_entry;
}

/* The hostile-peer test (enum spindle_hostile): garble a staged block. */
static void spindle_hostile_block(struct spindle_group *g, struct sp_block *b)
{
	switch (READ_ONCE(g->hostile)) {
	case SPINDLE_HOSTILE_BACKWARDS:
		b->hdr_pub = 0;
		b->recv_seq = 0;
		b->deliv_seq = 0;
		break;
	case SPINDLE_HOSTILE_JUMP:
		b->hdr_pub = cpu_to_le64(le64_to_cpu(b->hdr_pub) + (1ULL << 63));
		b->recv_seq = cpu_to_le64(le64_to_cpu(b->recv_seq) + (1ULL << 63));
		break;
	default:
		break;
	}
}

/* ...or a staged row. */
static void spindle_hostile_row(struct spindle_group *g, struct sp_row_hdr *row)
{
	switch (READ_ONCE(g->hostile)) {
	case SPINDLE_HOSTILE_ROW:
		pr_warn_once("group %u: hostile: a row naming strangers\n", g->id);
		row->suspects = cpu_to_le64(1ULL << 40);
		row->csum = cpu_to_le64(spindle_row_csum(g, row));
		break;
	case SPINDLE_HOSTILE_TORN:
		row->csum = cpu_to_le64(le64_to_cpu(row->csum) ^ 1);
		break;
	default:
		break;
	}
}

/*
 * ...or staged headers: every one of them, so that the first the peer
 * takes is already bad.
 */
static void spindle_hostile_hdrs(struct spindle_group *g, struct sp_hdr *h, u32 n)
{
	u32 mode = READ_ONCE(g->hostile);

	pr_warn_once("group %u: hostile (mode %u): garbling %u headers\n",
		     g->id, mode, n);
	for (; n; n--, h++) {
		switch (mode) {
		case SPINDLE_HOSTILE_LENGTH:
			h->kind = cpu_to_le16(SP_HDR_DATA);
			h->count = 0;
			h->len = cpu_to_le32(U32_MAX);
			break;
		case SPINDLE_HOSTILE_NULLS:
			h->kind = cpu_to_le16(SP_HDR_NULLS);
			h->count = cpu_to_le16(U16_MAX);
			h->len = 0;
			break;
		case SPINDLE_HOSTILE_HDR_TORN:
			h->kind = cpu_to_le16(0x5a5a);
			break;
		default:
			return;
		}
	}
}

/*
 * A hostile mode that garbles headers sends them from a staged copy: as
 * many whole headers as a staging slot holds, and none after them (the
 * peer takes the first one and rejects it; a header write never takes
 * more send queue entries than it would have).  Returns the bytes to
 * stage, or 0 when the write goes out as it is.
 */
static u32 spindle_hostile_stages_hdrs(struct spindle_group *g,
				       const struct spindle_peer *peer, u32 len)
{
	u32 mode = READ_ONCE(g->hostile);

	if (likely(mode < SPINDLE_HOSTILE_LENGTH) || mode > SPINDLE_HOSTILE_HDR_TORN ||
	    len % sizeof(struct sp_hdr))
		return 0;
	return min_t(u32, len, peer->stage_entry / sizeof(struct sp_hdr) *
			       sizeof(struct sp_hdr));
}

/**
 * spindle_peer_queue - append one engine write to a peer's chain
 * @peer: a READY peer
 * @sg: the subgroup the write belongs to
 * @w: the write, in region offsets
 *
 * Splits it at MR chunk boundaries on either side.  A block is copied into
 * the staging slot of the send queue entry that carries it, so that what
 * the NIC reads is what the engine meant at this moment.
 */
void spindle_peer_queue(struct spindle_peer *peer, struct spindle_sg *sg,
			const struct sp_wr *w)
{
	struct spindle_conn *c = peer->kc;
	struct spindle_group *g = peer->g;
	const struct sp_meta_layout *lay = &g->layout[g->me];
	const struct spindle_rregion *rr;
	const struct spindle_mrset *lset;
	u32 s = sg->index, len = w->len, n;
	bool bell = w->kind == SP_WR_BLOCK;
	u32 hostile = READ_ONCE(g->hostile);
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
		n = spindle_hostile_stages_hdrs(g, peer, len);
		if (n) {
			void *st = peer->stage->vaddr + spindle_stage_off(peer);

			len = n;
			memcpy(st, g->out_meta->vaddr + loff, len);
			spindle_hostile_hdrs(g, st, len / sizeof(struct sp_hdr));
			lset = &c->l_stage;
			loff = st - peer->stage->vaddr;
		}
		break;
	default:
		lset = &c->l_stage;
		rr = &c->w_meta;
		loff = spindle_stage_off(peer);
		roff = lay->block_off[s];
		memcpy(peer->stage->vaddr + loff, sg->eng.blocks[sg->eng.me], len);
		if (unlikely(hostile))
			spindle_hostile_block(g, peer->stage->vaddr + loff);
		break;
	}

	n = spindle_queue_range(peer, lset, loff, rr, roff, len, bell, s);
	sg->writes_posted += n;
	sg->writes_kind[w->kind] += n;
	sg->bytes_posted += len;
	if (bell && n && spindle_coalesces(g)) {
		/* its completion says when the next push may go */
		if (!(peer->chain[peer->chain_len - 1].wr.send_flags & IB_SEND_SIGNALED))
			spindle_signal(peer, peer->chain_len - 1);
		c->blk_inflight[s] = c->sq_posted + peer->chain_len;
	}
}

/*
 * Append the writes of [loff, loff + len) of @lset to [roff, ...) of @rr,
 * split at MR chunk boundaries; with @bell the last one carries @imm and
 * rings the peer's doorbell.  Returns the writes queued.
 */
static u32 spindle_queue_range(struct spindle_peer *peer,
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

/*
 * SPINDLE_HOSTILE_FOREIGN_KEY: queue a row naming strangers (checksum
 * right, so that it is taken as the owner's row and rejected) to
 * hostile_peer with the key and address the test found in another
 * member's connection to it, then go silent (SPINDLE_HOSTILE_SILENT:
 * nothing more is queued to anyone, so that this node's own reaction to
 * the refusal, suspecting the peer that refused it, never reaches the
 * others).  Returns whether the row push was taken over.
 */
static bool spindle_hostile_foreign(struct spindle_peer *peer, u64 loff)
{
	struct spindle_group *g = peer->g;
	struct spindle_rchunk ch;
	struct spindle_rregion rr = { .n = 1, .chunks = &ch };
	struct sp_row_hdr *row = peer->stage->vaddr + loff;

	if (READ_ONCE(g->hostile) == SPINDLE_HOSTILE_SILENT)
		return true;
	if (peer->idx != READ_ONCE(g->hostile_peer))
		return false;
	memcpy(row, g->out_meta->vaddr, g->row_bytes);
	row->suspects = cpu_to_le64(1ULL << 40);
	row->csum = cpu_to_le64(spindle_row_csum(g, row));
	ch.iova = READ_ONCE(g->hostile_addr);
	ch.rkey = READ_ONCE(g->hostile_rkey);
	ch.len = g->row_bytes;
	rr.size = ch.len;
	pr_warn("group %u: hostile: a row naming strangers to member %u with key 0x%x at 0x%llx, then silence\n",
		g->id, peer->id, ch.rkey, ch.iova);
	spindle_queue_range(peer, &peer->kc->l_stage, loff, &rr, 0, ch.len,
			    false, 0);
	WRITE_ONCE(g->hostile, SPINDLE_HOSTILE_SILENT);
	return true;
}

/**
 * spindle_peer_queue_row - append a push of my row header and view area
 * @peer: a READY peer
 * @bell: ring its doorbell (a view change; heartbeats need not)
 *
 * Staged like a block: what the NIC reads is the row of this moment.
 */
void spindle_peer_queue_row(struct spindle_peer *peer, bool bell)
{
	struct spindle_group *g = peer->g;
	u64 loff = spindle_stage_off(peer);

	if (unlikely(READ_ONCE(g->hostile) >= SPINDLE_HOSTILE_FOREIGN_KEY) &&
	    spindle_hostile_foreign(peer, loff))
		return;
	memcpy(peer->stage->vaddr + loff, g->out_meta->vaddr, g->row_bytes);
	if (unlikely(READ_ONCE(g->hostile)))
		spindle_hostile_row(g, peer->stage->vaddr + loff);
	spindle_queue_range(peer, &peer->kc->l_stage, loff, &peer->kc->w_meta, 0,
			    g->row_bytes, bell, U32_MAX);
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
	u32 n = peer->chain_len, i;
	int ret;

	if (!n)
		return 0;
	/* when draining, for teardown or a view change, every chain ends signaled */
	if ((READ_ONCE(peer->g->stopping) || peer->g->vc.phase != SP_VC_NORMAL) &&
	    !(peer->chain[n - 1].wr.send_flags & IB_SEND_SIGNALED))
		spindle_signal(peer, n - 1);
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
	return n;
}

/* Only the predicate thread polls: the batch lives in the group. */
static int spindle_poll_cq(struct spindle_group *g)
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

/* Give back what every consumer released (cons_lock held). */
static void spindle_sg_floor(struct spindle_sg *sg)
{
	struct spindle_consumer *c;
	u64 floor = U64_MAX;

	lockdep_assert_held(&sg->cons_lock);
	if (list_empty(&sg->consumers))
		return;
	list_for_each_entry(c, &sg->consumers, node)
		floor = min_t(u64, floor, atomic64_read(&c->released));
	sp_sg_release(&sg->eng, floor);
}

/*
 * Hand @n engine descriptors to every consumer, in the numbering users
 * see: configured ranks, and indices and sequence numbers that go on
 * across views (cons_lock held).
 */
static void spindle_sg_hand(struct spindle_sg *sg, u32 n)
{
	struct sp_sg *e = &sg->eng;
	struct spindle_consumer *c;
	u32 i;

	lockdep_assert_held(&sg->cons_lock);
	for (i = 0; i < n; i++) {
		const struct sp_desc *d = &sg->descs[i];
		struct spindle_msg *m = &sg->batch[i];
		u32 r = sg->cfg_rank[d->rank];

		m->index = sg->idx_base[r] + d->index;
		m->seq = e->mode == SP_MODE_ORDERED ? sg->seq_base + d->seq :
			 sp_seq(r, m->index, sg->cfg.nsenders);
		m->offset = sp_sg_payload_offset(e, d->pay_pos);
		m->data = sg->pay[r]->vaddr + m->offset;
		m->len = d->len;
		m->rank = r;
		m->sender_id = sg->rank_id[r];
		if ((s32)r == sg->my_rank)
			sg->own_delivered++;
	}
	if (!n)
		return;
	trace_spindle_deliver_batch(sg->group_id, sg->id, sg->batch[0].seq, n);
	list_for_each_entry(c, &sg->consumers, node) {
		WRITE_ONCE(c->given, e->dl_descs);
		c->ops->deliver(c, c->priv, sg->batch, n);
	}
}

/**
 * spindle_sg_deliver_upto - deliver what is left of a view, up to the trim
 * @sg: subgroup, wedged
 * @trim: per engine rank
 *
 * With no consumer, what is delivered is dropped at once.
 * Return: whether everything up to the trim was delivered.
 */
bool spindle_sg_deliver_upto(struct spindle_sg *sg, const u64 *trim)
{
	struct sp_sg *e = &sg->eng;
	bool done = true;
	u32 n, r;

	spin_lock(&sg->cons_lock);
	do {
		spindle_sg_floor(sg);
		if (list_empty(&sg->consumers))
			sp_sg_release(e, e->dl_descs);
		n = sp_sg_deliver_trim(e, trim, sg->descs, e->log_size);
		spindle_sg_hand(sg, n);
		if (list_empty(&sg->consumers))
			sp_sg_release(e, e->dl_descs);
	} while (n);
	for (r = 0; r < e->nsenders; r++)
		if (e->rx[r].dl_idx < trim[r])
			done = false;
	spin_unlock(&sg->cons_lock);
	return done;
}

/**
 * spindle_sg_deliver_view - tell every consumer of the new view
 * @sg: subgroup, its old view delivered up to the trim (or joining)
 * @view: the new view's id
 * @members: its members
 */
void spindle_sg_deliver_view(struct spindle_sg *sg, u64 view, u64 members)
{
	struct spindle_view_rec rec = {
		.view_id = view,
		.members = members,
		.nmembers = sp_mask_count(members),
	};
	struct spindle_consumer *c;

	spin_lock(&sg->cons_lock);
	rec.own_delivered = sg->own_delivered;
	list_for_each_entry(c, &sg->consumers, node)
		if (c->ops->view)
			c->ops->view(c, c->priv, &rec);
	spin_unlock(&sg->cons_lock);
	wake_up_all(&sg->recv_wq);
}

/* Has every consumer given back everything delivered to it? */
bool spindle_sg_quiet(struct spindle_sg *sg)
{
	bool quiet;

	spin_lock(&sg->cons_lock);
	spindle_sg_floor(sg);
	if (list_empty(&sg->consumers))
		sp_sg_release(&sg->eng, sg->eng.dl_descs);
	quiet = sg->eng.dl_descs == sg->eng.rel_descs;
	spin_unlock(&sg->cons_lock);
	return quiet;
}

/* A new engine counts descriptors from 0: so do its consumers. */
void spindle_sg_consumers_reset(struct spindle_sg *sg)
{
	struct spindle_consumer *c;

	spin_lock(&sg->cons_lock);
	list_for_each_entry(c, &sg->consumers, node) {
		WRITE_ONCE(c->given, 0);
		atomic64_set(&c->released, 0);
	}
	spin_unlock(&sg->cons_lock);
}

/*
 * Hand up to @max messages to every consumer; with none, data waits and
 * nulls pass.  Returns whether anything moved.  Not while wedged: the
 * trim decides what is left.
 */
static int spindle_sg_deliver(struct spindle_sg *sg, u32 max)
{
	struct sp_sg *e = &sg->eng;
	u64 before = e->rel_descs;
	u32 n;

	spin_lock(&sg->cons_lock);
	if (list_empty(&sg->consumers)) {
		/*
		 * Nobody holds what was delivered before the last consumer
		 * left; data waits for the next one, nulls pass.
		 */
		u64 passed = e->dl_passed;

		sp_sg_release(e, e->dl_descs);
		sp_sg_deliver(e, sg->descs, 0);
		spin_unlock(&sg->cons_lock);
		return e->rel_descs != before || e->dl_passed != passed;
	}
	spindle_sg_floor(sg);
	n = sp_sg_deliver(e, sg->descs, max);
	spindle_sg_hand(sg, n);
	spin_unlock(&sg->cons_lock);
	return n + (e->rel_descs != before);
}

/* One subgroup's turn in a pass: the context of its sp_pass_ops. */
struct spindle_turn {
	struct spindle_group *g;
	struct spindle_sg *sg;
};

static struct spindle_peer *spindle_turn_peer(void *ctx, u32 m)
{
	struct spindle_turn *t = ctx;

	return t->g->peers[t->sg->member_idx[m]];
}

/* The subgroup's lock, around taking, publishing and reclaiming. */
static void spindle_turn_lock(void *ctx)
	__acquires(&sg->lock)
{
	spin_lock_bh(&((struct spindle_turn *)ctx)->sg->lock);
}

static void spindle_turn_unlock(void *ctx)
	__releases(&sg->lock)
{
	spin_unlock_bh(&((struct spindle_turn *)ctx)->sg->lock);
}

static u32 spindle_turn_take(void *ctx)
{
	return spindle_producer_take(((struct spindle_turn *)ctx)->sg);
}

static void spindle_turn_limit(void *ctx)
{
	spindle_producer_limit(((struct spindle_turn *)ctx)->sg);
}

static void spindle_turn_freed(void *ctx, u32 n)
{
	wake_up_all(&((struct spindle_turn *)ctx)->sg->send_wq);
}

static u32 spindle_turn_deliver(void *ctx, u32 max)
{
	return spindle_sg_deliver(((struct spindle_turn *)ctx)->sg, max);
}

static u32 spindle_turn_writes(void *ctx, u32 m)
{
	struct spindle_peer *peer = spindle_turn_peer(ctx, m);

	return spindle_peer_ready(peer) ? spindle_peer_writes(peer) : 0;
}

/* The elastic threshold: one push of the block in flight. */
static bool spindle_turn_block_ok(void *ctx, u32 m)
{
	struct spindle_turn *t = ctx;
	struct spindle_conn *c = spindle_turn_peer(ctx, m)->kc;

	return !spindle_coalesces(t->g) ||
	       c->sq_acked >= c->blk_inflight[t->sg->index];
}

static void spindle_turn_queue(void *ctx, u32 m, const struct sp_wr *w)
{
	spindle_peer_queue(spindle_turn_peer(ctx, m),
			   ((struct spindle_turn *)ctx)->sg, w);
}

static void spindle_turn_bad(void *ctx, u32 m, const char *what)
{
	struct spindle_turn *t = ctx;
	u32 bad = t->sg->member_idx[m];

	pr_warn_ratelimited("group %u subgroup %u: member %u wrote an invalid %s: treating it as failed\n",
			    t->g->id, t->sg->id, t->g->cfg.members[bad].id, what);
	spindle_member_lost(t->g, bad, what);
}

static void spindle_turn_received(void *ctx, u32 n)
{
	struct spindle_sg *sg = ((struct spindle_turn *)ctx)->sg;

	trace_spindle_recv_batch(sg->group_id, sg->id, n);
}

/* A publish step: @n positions, @msgs messages and @nulls null-sends. */
static void spindle_trace_publish(struct spindle_sg *sg, u32 n, u64 msgs,
				  u64 nulls)
{
	lockdep_assert_held(&sg->lock);
	if (n)
		trace_spindle_send_batch(sg->group_id, sg->id, n, msgs);
	if (nulls)
		trace_spindle_null_send(sg->group_id, sg->id, nulls);
}

static void spindle_turn_published(void *ctx, u32 n, u64 msgs, u64 nulls)
{
	spindle_trace_publish(((struct spindle_turn *)ctx)->sg, n, msgs, nulls);
}

static const struct sp_pass_ops spindle_turn_ops = {
	.lock = spindle_turn_lock,
	.unlock = spindle_turn_unlock,
	.take = spindle_turn_take,
	.limit = spindle_turn_limit,
	.freed = spindle_turn_freed,
	.deliver = spindle_turn_deliver,
	.writes = spindle_turn_writes,
	.block_ok = spindle_turn_block_ok,
	.queue = spindle_turn_queue,
	.bad = spindle_turn_bad,
	.received = spindle_turn_received,
	.published = spindle_turn_published,
};

/* sp_sg_publish(), traced (sg->lock held). */
static int spindle_sg_publish(struct spindle_sg *sg)
{
	struct sp_sg *e = &sg->eng;
	u64 msgs = e->stats.msgs_sent, nulls = e->stats.nulls_sent;
	int ret;

	lockdep_assert_held(&sg->lock);
	ret = sp_sg_publish(e);
	spindle_trace_publish(sg, ret > 0 ? ret : 0, e->stats.msgs_sent - msgs,
			      e->stats.nulls_sent - nulls);
	return ret;
}

/* The baseline's writes: queued for every ready member, posted at once. */
static int spindle_sg_post_now(struct spindle_turn *t)
{
	u32 n = sp_sg_queue_all(&t->sg->eng, &spindle_turn_ops, t), m;

	for (m = 0; n && m < t->sg->eng.nmembers; m++) {
		struct spindle_peer *peer = spindle_turn_peer(t, m);

		if (m != t->sg->eng.me && spindle_peer_ready(peer))
			spindle_peer_flush(peer);
	}
	return n;
}

/*
 * The baseline (SPINDLE_GROUP_BASELINE): Derecho before Spindle, for
 * comparison.  The engine takes one message per step; each step's writes
 * are posted at once, one ib_post_send per peer, with the subgroup lock
 * held as the application threads wait on it.  No nulls.
 */
static int spindle_sg_pass_baseline(struct spindle_group *g, struct spindle_sg *sg,
				    bool failed)
{
	struct spindle_turn t = { .g = g, .sg = sg };
	struct sp_sg *e = &sg->eng;
	int work = 0, step, freed, ret;

	do {
		step = 0;
		spin_lock_bh(&sg->lock);
		if (e->fault_member < 0) {
			ret = sp_sg_receive(e);
			if (ret > 0) {
				trace_spindle_recv_batch(sg->group_id, sg->id, ret);
				step += ret + spindle_sg_post_now(&t);
			}
		}
		if (!failed && !READ_ONCE(g->stopping)) {
			step += spindle_producer_take(sg);
			ret = spindle_sg_publish(sg);
			if (ret)
				step += ret + spindle_sg_post_now(&t);
		}
		freed = sp_sg_reclaim(e);
		spindle_producer_limit(sg);
		spin_unlock_bh(&sg->lock);
		if (freed) {
			step += freed;
			wake_up_all(&sg->send_wq);
		}
		if (!e->wedged && spindle_sg_deliver(sg, 1)) {
			spin_lock_bh(&sg->lock);
			step += 1 + spindle_sg_post_now(&t);
			spin_unlock_bh(&sg->lock);
		}
		work += step;
	} while (step && work < 256);
	if (e->fault_member >= 0 && !failed)
		spindle_member_lost(g, sg->member_idx[e->fault_member], e->fault_what);
	return work;
}

/*
 * One subgroup's predicates (proto/pass.c).  After a member fails
 * (@failed) nothing new is published, but what the others already sent is
 * still received, delivered and acknowledged: only a member caught writing
 * garbage stops the receive predicate, for good.
 */
static int spindle_sg_pass(struct spindle_group *g, struct spindle_sg *sg,
			   bool failed)
{
	struct spindle_turn t = { .g = g, .sg = sg };

	if (g->cfg.flags & SP_GROUP_BASELINE)
		return spindle_sg_pass_baseline(g, sg, failed);
	return sp_sg_pass(&sg->eng, &spindle_turn_ops, &t,
			  failed || READ_ONCE(g->stopping) ?
			  SP_PASS_NO_PUBLISH : 0);
}

/*
 * End of a pass: every ready peer's chain goes out, every doorbell receive
 * used up is posted again, and what is still in flight is noted for
 * readers outside the thread.
 */
static void spindle_flush_all(struct spindle_group *g)
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

static int spindle_group_view(void *ctx)
{
	return spindle_view_pass(ctx);
}

static void spindle_group_rows(void *ctx)
{
	spindle_view_push_rows(ctx);
}

static bool spindle_group_engines_run(void *ctx)
{
	return spindle_view_engines_run(ctx);
}

static int spindle_group_turn(void *ctx, u32 s)
{
	struct spindle_group *g = ctx;

	if (!g->sgs[s])
		return 0;
	return spindle_sg_pass(g, g->sgs[s],
			       READ_ONCE(g->state) == SPINDLE_GROUP_FAILED);
}

static void spindle_group_flush(void *ctx)
{
	spindle_flush_all(ctx);
}

static const struct sp_group_ops spindle_group_ops = {
	.view = spindle_group_view,
	.rows = spindle_group_rows,
	.engines_run = spindle_group_engines_run,
	.turn = spindle_group_turn,
	.flush = spindle_group_flush,
};

static int spindle_pass(struct spindle_group *g)
{
	int work, state;
	u32 i;

	atomic_set(&g->doorbell, 0);
	if (unlikely(READ_ONCE(g->cq_event) != SPINDLE_CQ_FINE))
		spindle_view_stop(g, "its completion queue broke");
	/*
	 * Connections as they are now: new ones adopted (their hellos sent,
	 * ready ones taken in), those that went down let go of.
	 */
	for (i = 0; i < g->cfg.nmembers; i++)
		if (i != g->me)
			spindle_peer_refresh(g->peers[i]);
	work = spindle_poll_cq(g);
	state = READ_ONCE(g->state);
	if (state == SPINDLE_GROUP_CONNECTING) {
		spindle_group_check_active(g);
		if (!spindle_view_joining(g))
			return work;
		state = READ_ONCE(g->state);
	}
	if (state != SPINDLE_GROUP_ACTIVE && state != SPINDLE_GROUP_FAILED &&
	    state != SPINDLE_GROUP_VIEW_CHANGE)
		return work;
	return work + sp_group_pass(&spindle_group_ops, g, g->cfg.nsubgroups);
}

/* Ask (or stop asking) every producer page for a wake-up call. */
static bool spindle_producers_sleep(struct spindle_group *g, bool sleep)
{
	bool more = false;
	u32 s;

	for (s = 0; s < g->cfg.nsubgroups; s++)
		if (g->sgs[s] && spindle_producer_sleep(g->sgs[s], sleep))
			more = true;
	return more;
}

/* Park until a doorbell, a completion, or @ms milliseconds. */
static void spindle_park(struct spindle_group *g, unsigned int ms)
{
	ktime_t t = ms_to_ktime(max(ms, 1U));

	/* producers first: asking them to ring is itself a last look */
	if (!spindle_producers_sleep(g, true)) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!atomic_read(&g->doorbell) && !kthread_should_stop() &&
		    !(g->cq && ib_req_notify_cq(g->cq, IB_CQ_NEXT_COMP |
						IB_CQ_REPORT_MISSED_EVENTS) > 0))
			schedule_hrtimeout_range(&t, NSEC_PER_MSEC, HRTIMER_MODE_REL);
		__set_current_state(TASK_RUNNING);
	}
	spindle_producers_sleep(g, false);
}

/**
 * spindle_thread_sync - wait until the predicate thread has let go
 * @g: group
 *
 * Whatever the thread saw before this call, it has finished two passes
 * since: a connection that went DOWN before is no longer its current one,
 * and it posts nothing more on it.  Returns at once if the thread is
 * stopped for good.
 * Context: process context, not the predicate thread.
 */
void spindle_thread_sync(struct spindle_group *g)
{
	s64 seq = atomic64_read(&g->passes);

	if (WARN_ON_ONCE(current == g->thread))
		return;
	while (!READ_ONCE(g->thread_stopped) && g->thread &&
	       atomic64_read(&g->passes) < seq + 2) {
		spindle_ring_doorbell(g);
		wait_event_timeout(g->pass_wq, atomic64_read(&g->passes) >= seq + 2 ||
				   READ_ONCE(g->thread_stopped),
				   msecs_to_jiffies(10));
	}
}

/**
 * spindle_thread_fn - the predicate thread of a group
 * @data: the group
 *
 * Return: 0 when stopped.
 */
int spindle_thread_fn(void *data)
{
	struct spindle_group *g = data;
	u64 last_work = ktime_get_ns();

	while (!kthread_should_stop()) {
		u64 t0 = ktime_get_ns(), t1;
		int work = spindle_pass(g);

		/* a pass is over: spindle_thread_sync() counts them */
		atomic64_inc(&g->passes);
		if (wq_has_sleeper(&g->pass_wq))
			wake_up_all(&g->pass_wq);
		t1 = ktime_get_ns();
		if (work) {
			g->busy_ns += t1 - t0;
			last_work = t1;
			cond_resched();
			continue;
		}
		if (t1 - last_work < (u64)READ_ONCE(spin_us) * NSEC_PER_USEC) {
			g->busy_ns += t1 - t0;
			cond_resched();
			continue;
		}
		spindle_park(g, READ_ONCE(idle_ms));
		g->idle_ns += ktime_get_ns() - t1;
		cond_resched();		/* a park may return at once */
	}
	return 0;
}
