// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The per-subgroup multicast engine.  See engine.h for the memory layout
 * and the calling rules, and the Spindle paper (ICDCS'22) sections II-III
 * for the protocol: every predicate here batches opportunistically (it takes
 * everything there is and never waits for more), null-sends keep a lagging
 * sender from stalling the order, and nothing here posts: sp_sub_emit()
 * describes the writes, and the owner posts them after dropping its locks.
 */
#include "engine.h"
#include "ring.h"
#include "order.h"

static inline struct sp_block *sp_my_block(struct sp_sub *sub)
{
	return sub->blocks[sub->me];
}

/*
 * Store a counter into my block (only this thread writes it): a lazy one
 * (sp_sub_due()) waits for the next push; any other makes one due.
 */
static inline bool sp_blk_lazy(struct sp_sub *sub, __le64 *field, u64 val)
{
	if (le64_to_cpu(*field) == val)
		return false;
	WRITE_ONCE(*field, cpu_to_le64(val));
	sub->blk_ver++;
	return true;
}

static inline bool sp_blk_set(struct sp_sub *sub, __le64 *field, u64 val)
{
	if (!sp_blk_lazy(sub, field, val))
		return false;
	sub->urg_ver = sub->blk_ver;
	return true;
}

static int sp_fault(struct sp_sub *sub, u32 member, const char *what)
{
	if (sub->fault_member < 0) {
		sub->fault_member = (s32)member;
		sub->fault_what = what;
	}
	return -EPROTO;
}

/**
 * sp_sub_init - set up the engine for one subgroup this node belongs to
 * @sub: zeroed or reused engine state
 * @cfg: a validated group configuration
 * @sub_index: which of cfg->subgroups
 *
 * The owner then points sub->blocks[] and sub->hdrs[] at the memory.
 * Return: 0, -EINVAL if self is not a member, -ENOMEM.
 */
int sp_sub_init(struct sp_sub *sub, const struct sp_group_cfg *cfg, u32 sub_index)
{
	const struct sp_sub_cfg *c = &cfg->subgroups[sub_index];
	int me = sp_sub_member_pos(c, cfg->self_id);
	u32 r;

	memset(sub, 0, sizeof(*sub));
	sub->fault_member = -1;
	if (me < 0)
		return -EINVAL;
	sub->nmembers = c->nmembers;
	sub->nsenders = c->nsenders;
	sub->window = c->window;
	sub->hdr_slots = sp_hdr_slots(c->window);
	sub->max_msg = c->max_msg;
	sub->slot_size = sp_sub_slot_size(c);
	sub->mode = c->mode;
	sub->me = (u32)me;
	sub->my_rank = sp_sub_sender_rank(c, cfg->self_id);
	sub->block_size = sp_block_size(c->nsenders);
	sub->log_size = c->window * c->nsenders;
	if (cfg->flags & SP_GROUP_BASELINE) {
		/* one message at a time at every stage, and no nulls */
		sub->max_publish = 1;
		sub->max_receive = 1;
		sub->no_nulls = true;
	}
	for (r = 0; r < c->nmembers; r++)
		sub->member_rank[r] = -1;
	for (r = 0; r < c->nsenders; r++) {
		sub->rank_member[r] = (u32)sp_sub_member_pos(c, c->senders[r]);
		sub->member_rank[sub->rank_member[r]] = (s32)r;
	}

	if (sub->my_rank >= 0) {
		sub->slot_state = sp_zalloc(sub->window);
		sub->slot_len = sp_zalloc(sub->window * sizeof(u32));
		sub->slot_idx = sp_zalloc(sub->window * sizeof(u64));
		sub->hdr_end = sp_zalloc(sub->hdr_slots * sizeof(u64));
		if (!sub->slot_state || !sub->slot_len || !sub->slot_idx ||
		    !sub->hdr_end)
			goto nomem;
	}
	for (r = 0; r < sub->nsenders; r++) {
		sub->rx[r].shadow = sp_zalloc(sub->hdr_slots *
					      sizeof(struct sp_shadow));
		if (!sub->rx[r].shadow)
			goto nomem;
	}
	sub->log = sp_zalloc(sub->log_size * sizeof(struct sp_desc));
	if (!sub->log)
		goto nomem;
	return 0;
nomem:
	sp_sub_destroy(sub);
	return -ENOMEM;
}

/**
 * sp_sub_destroy - free what sp_sub_init() allocated
 * @sub: engine state; safe on a partly initialised one
 */
void sp_sub_destroy(struct sp_sub *sub)
{
	u32 r;

	sp_free(sub->slot_state);
	sp_free(sub->slot_len);
	sp_free(sub->slot_idx);
	sp_free(sub->hdr_end);
	for (r = 0; r < SP_MAX_MEMBERS; r++) {
		sp_free(sub->rx[r].shadow);
		sub->rx[r].shadow = NULL;
	}
	sp_free(sub->log);
	sub->slot_state = NULL;
	sub->slot_len = NULL;
	sub->slot_idx = NULL;
	sub->hdr_end = NULL;
	sub->log = NULL;
}

/* ---- producer side (owner's lock held) ---- */

/**
 * sp_sub_free_slots - payload slots a producer could reserve now
 * @sub: engine state
 */
u32 sp_sub_free_slots(const struct sp_sub *sub)
{
	if (sub->my_rank < 0)
		return 0;
	return sp_ring_free(sub->pay_reserved, sub->pay_freed, sub->window);
}

/**
 * sp_sub_reserve - hand out up to @want consecutive payload slots
 * @sub: engine state
 * @want: slots wanted
 * @first: out: absolute position of the first one
 *
 * Slots are handed out in ring order and published in that order: a
 * reservation that is neither marked ready nor voided holds back the ones
 * after it.  Return: slots reserved, 0 when none is free.
 */
u32 sp_sub_reserve(struct sp_sub *sub, u32 want, u64 *first)
{
	u32 n = min_t(u32, want, sp_sub_free_slots(sub));
	u32 i;

	*first = sub->pay_reserved;
	for (i = 0; i < n; i++)
		sub->slot_state[sp_ring_slot(sub->pay_reserved + i,
					     sub->window)] = SP_SLOT_RESERVED;
	sub->pay_reserved += n;
	return n;
}

static int sp_sub_check_reserved(struct sp_sub *sub, u64 pos)
{
	if (sub->my_rank < 0 || pos < sub->pay_pub || pos >= sub->pay_reserved)
		return -EINVAL;
	if (sub->slot_state[sp_ring_slot(pos, sub->window)] != SP_SLOT_RESERVED)
		return -EINVAL;
	return 0;
}

/**
 * sp_sub_mark_ready - a reserved slot holds a message of @len bytes
 * @sub: engine state
 * @pos: absolute slot position from sp_sub_reserve()
 * @len: payload length, at most max_msg
 *
 * Return: 0, -EINVAL if @pos is not reserved, -EMSGSIZE if @len is too big.
 */
int sp_sub_mark_ready(struct sp_sub *sub, u64 pos, u32 len)
{
	u32 s = sp_ring_slot(pos, sub->window);

	if (sp_sub_check_reserved(sub, pos))
		return -EINVAL;
	if (len > sub->max_msg)
		return -EMSGSIZE;
	sub->slot_len[s] = len;
	sub->slot_state[s] = SP_SLOT_READY;
	return 0;
}

/**
 * sp_sub_void - give up a reservation; the slot goes out as a null message
 * @sub: engine state
 * @pos: absolute slot position from sp_sub_reserve()
 *
 * Return: 0, or -EINVAL if @pos is not reserved.
 */
int sp_sub_void(struct sp_sub *sub, u64 pos)
{
	u32 s = sp_ring_slot(pos, sub->window);

	if (sp_sub_check_reserved(sub, pos))
		return -EINVAL;
	sub->slot_len[s] = 0;
	sub->slot_state[s] = SP_SLOT_VOID;
	return 0;
}

/**
 * sp_sub_reservations_held - does a reservation still wait for its owner?
 * @sub: engine state
 *
 * A slot reserved and not yet marked ready or voided holds back every slot
 * after it.  One marked or voided is nobody's any more, even before the
 * predicate thread publishes it (in ring order, on its next pass).
 * Return: true if a slot between the published ones and the last
 * reservation is still reserved.
 */
bool sp_sub_reservations_held(const struct sp_sub *sub)
{
	u64 pos;

	for (pos = sub->pay_pub; pos < sub->pay_reserved; pos++)
		if (sub->slot_state[sp_ring_slot(pos, sub->window)] == SP_SLOT_RESERVED)
			return true;
	return false;
}

/* ---- predicate thread ---- */

/* Append a header to my ring; the caller checked there is room. */
static void sp_put_hdr(struct sp_sub *sub, u16 kind, u32 len, u16 count)
{
	u32 h = sp_ring_slot(sub->hdr_pub, sub->hdr_slots);
	struct sp_hdr *hdr = &sub->hdrs[sub->my_rank][h];
	struct sp_rx *rx = &sub->rx[sub->my_rank];
	u64 msgs = kind == SP_HDR_NULLS ? count : 1;

	hdr->len = cpu_to_le32(len);
	hdr->count = cpu_to_le16(count);
	hdr->kind = cpu_to_le16(kind);
	/* my own messages are received by me the moment they are published */
	rx->shadow[h].len = len;
	rx->shadow[h].count = count;
	rx->shadow[h].kind = kind;
	rx->hdr_seen++;
	rx->received += msgs;
	if (kind != SP_HDR_NULLS)
		rx->pay_seen++;
	sub->sent += msgs;
	sub->hdr_end[h] = sub->sent;
	sub->hdr_pub++;
}

static bool sp_hdr_room(const struct sp_sub *sub)
{
	return sub->hdr_pub - sub->hdr_freed < sub->hdr_slots;
}

static void sp_update_recv_seq(struct sp_sub *sub)
{
	u64 rcv[SP_MAX_MEMBERS];
	u32 r;

	if (sub->mode != SP_MODE_ORDERED || sub->wedged)
		return;		/* wedged: see sp_sub_receive() */
	for (r = 0; r < sub->nsenders; r++)
		rcv[r] = sub->rx[r].received;
	sp_blk_set(sub, &sp_my_block(sub)->recv_seq,
		   sp_contiguous_seq(rcv, sub->nsenders));
}

/**
 * sp_sub_publish - send predicate: publish every ready slot, then nulls
 * @sub: engine state (owner's lock held: reads what producers marked)
 *
 * Publishes the run of ready (or voided) slots at the head of the ring,
 * however long it is, and then, in ordered mode, the nulls this sender owes
 * (the null-send rule: see sp_null_target()) as one header with a count.
 * Return: number of headers published.
 */
int sp_sub_publish(struct sp_sub *sub)
{
	struct sp_block *blk;
	int work = 0;
	u64 rcv[SP_MAX_MEMBERS];
	u32 r;

	if (sub->my_rank < 0 || sub->wedged)
		return 0;
	while (sub->pay_pub < sub->pay_reserved && sp_hdr_room(sub) &&
	       (!sub->max_publish || work < (int)sub->max_publish)) {
		u32 s = sp_ring_slot(sub->pay_pub, sub->window);
		u8 st = sub->slot_state[s];

		if (st != SP_SLOT_READY && st != SP_SLOT_VOID)
			break;
		sub->slot_idx[s] = sub->sent;
		sub->slot_state[s] = SP_SLOT_PUBLISHED;
		if (st == SP_SLOT_READY) {
			sp_put_hdr(sub, SP_HDR_DATA, sub->slot_len[s], 0);
			sub->stats.msgs_sent++;
		} else {
			sp_put_hdr(sub, SP_HDR_VOID, 0, 0);
			sub->stats.nulls_sent++;
		}
		sub->pay_pub++;
		work++;
	}
	if (work) {
		sub->stats.publish_batches++;
		sp_hist_add(sub->stats.hist_publish, work);
	}

	if (sub->mode == SP_MODE_ORDERED && !sub->no_nulls && sp_hdr_room(sub)) {
		u64 target;

		for (r = 0; r < sub->nsenders; r++)
			rcv[r] = sub->rx[r].received;
		target = sp_null_target(rcv, sub->nsenders, (u32)sub->my_rank);
		if (target > sub->sent) {
			u16 count = (u16)min_t(u64, target - sub->sent,
					       min_t(u32, sub->window, 0xffff));

			sp_put_hdr(sub, SP_HDR_NULLS, 0, count);
			sub->stats.nulls_sent += count;
			sub->stats.null_hdrs++;
			work++;
		}
	}
	if (!work)
		return 0;
	blk = sp_my_block(sub);
	sp_blk_set(sub, &sp_blk_received(blk)[sub->my_rank],
		   sub->rx[sub->my_rank].received);
	sp_update_recv_seq(sub);
	/* the guard goes last: emit orders the writes the same way */
	sp_blk_set(sub, &blk->hdr_pub, sub->hdr_pub);
	return work;
}

/* Decode and check one header a peer wrote; 0 or -EPROTO. */
static int sp_take_hdr(struct sp_sub *sub, u32 rank, u64 h)
{
	struct sp_rx *rx = &sub->rx[rank];
	u32 slot = sp_ring_slot(h, sub->hdr_slots);
	const struct sp_hdr *src = &sub->hdrs[rank][slot];
	struct sp_hdr hdr;
	u32 len;
	u16 count, kind;
	u32 member = sub->rank_member[rank];

	/* one copy: the peer may be rewriting it while we look */
	hdr.len = READ_ONCE(src->len);
	hdr.count = READ_ONCE(src->count);
	hdr.kind = READ_ONCE(src->kind);
	len = le32_to_cpu(hdr.len);
	count = le16_to_cpu(hdr.count);
	kind = le16_to_cpu(hdr.kind);

	switch (kind) {
	case SP_HDR_DATA:
		if (len > sub->max_msg || count)
			return sp_fault(sub, member, "message header");
		break;
	case SP_HDR_VOID:
		if (len || count)
			return sp_fault(sub, member, "void header");
		break;
	case SP_HDR_NULLS:
		if (len || !count || count > sub->window)
			return sp_fault(sub, member, "null header");
		break;
	default:
		return sp_fault(sub, member, "header kind");
	}
	if (kind != SP_HDR_NULLS) {
		/* the sender may not run past slots we have not released */
		if (rx->pay_seen - rx->dl_pay >= sub->window)
			return sp_fault(sub, member, "payload ring overrun");
		rx->pay_seen++;
		if (kind == SP_HDR_DATA)
			sub->stats.msgs_received++;
	}
	rx->shadow[slot].len = len;
	rx->shadow[slot].count = count;
	rx->shadow[slot].kind = kind;
	rx->received += kind == SP_HDR_NULLS ? count : 1;
	rx->hdr_seen = h + 1;
	return 0;
}

/*
 * Read and check the counters of member @m's block that this node uses.
 * Each aligned 64-bit counter is assumed to land whole (as Derecho assumes),
 * but the fields of one block write may land in any order, so each is
 * checked on its own: monotonic, and within what is possible.
 */
static int sp_take_view(struct sp_sub *sub, u32 m)
{
	struct sp_block *b = sub->blocks[m];
	struct sp_seen *v = &sub->seen[m];
	u64 recv_seq = le64_to_cpu(READ_ONCE(b->recv_seq));
	u64 deliv_seq = le64_to_cpu(READ_ONCE(b->deliv_seq));
	u64 rel_me;
	u32 r;

	if (recv_seq < v->recv_seq)
		return sp_fault(sub, m, "recv_seq went backwards");
	if (deliv_seq < v->deliv_seq)
		return sp_fault(sub, m, "deliv_seq went backwards");
	v->recv_seq = recv_seq;
	v->deliv_seq = deliv_seq;
	/* per sender: unordered delivery's stable prefix, a leader's trim */
	for (r = 0; r < sub->nsenders; r++) {
		u64 rc = le64_to_cpu(READ_ONCE(sp_blk_received(b)[r]));

		if (rc < v->received[r])
			return sp_fault(sub, m, "received count went backwards");
		v->received[r] = rc;
	}
	if (sub->my_rank < 0)
		return 0;
	rel_me = le64_to_cpu(READ_ONCE(sp_blk_released(b, sub->nsenders)[sub->my_rank]));
	if (rel_me < v->released_me || rel_me > sub->sent)
		return sp_fault(sub, m, "released count for our messages");
	v->released_me = rel_me;
	return 0;
}

/**
 * sp_sub_receive - receive predicate: take every new header of every sender
 * @sub: engine state
 *
 * For each sender, reads the published count from its block, checks it
 * against what this node has released, and validates every new header into
 * the shadow ring that delivery reads.  Then one update of my block
 * (received counts, recv_seq) for one push.  Also refreshes and checks the
 * other members' counters.
 * Return: headers taken, or -EPROTO (sub->fault_member says who).
 */
int sp_sub_receive(struct sp_sub *sub)
{
	struct sp_block *blk = sp_my_block(sub);
	int work = 0;
	u32 r, m;

	if (sub->fault_member >= 0)
		return -EPROTO;
	for (r = 0; r < sub->nsenders; r++) {
		struct sp_rx *rx = &sub->rx[r];
		u32 member = sub->rank_member[r];
		u64 pub, h;

		if ((s32)r == sub->my_rank ||
		    (sub->max_receive && work >= (int)sub->max_receive))
			continue;
		/*
		 * The guard: acquire, so the headers read below are no older
		 * than the count (the peer wrote them first, on the same QP).
		 */
		pub = le64_to_cpu(smp_load_acquire(&sub->blocks[member]->hdr_pub));
		if (pub == rx->hdr_seen)
			continue;
		if (pub < rx->hdr_seen || pub - rx->dl_hdr > sub->hdr_slots)
			return sp_fault(sub, member, "published header count");
		if (sub->max_receive && pub - rx->hdr_seen > sub->max_receive - work)
			pub = rx->hdr_seen + (sub->max_receive - work);
		work += (int)(pub - rx->hdr_seen);
		for (h = rx->hdr_seen; h < pub; h++)
			if (sp_take_hdr(sub, r, h))
				return -EPROTO;
		/*
		 * Wedged, what I announce stays what I had as I wedged (my
		 * snapshot, which the trim is taken from): a member still
		 * delivering must not count on messages past it.
		 */
		if (!sub->wedged)
			sp_blk_set(sub, &sp_blk_received(blk)[r], rx->received);
	}
	for (m = 0; m < sub->nmembers; m++)
		if (m != sub->me && sp_take_view(sub, m))
			return -EPROTO;
	if (work) {
		sub->stats.receive_batches++;
		sp_hist_add(sub->stats.hist_receive, work);
		sp_update_recv_seq(sub);
	}
	return work;
}

/* Step sender @rank's delivery cursor by one message; true if it is data. */
bool sp_sub_step(struct sp_sub *sub, u32 rank, struct sp_desc *d)
{
	struct sp_rx *rx = &sub->rx[rank];
	const struct sp_shadow *sh =
		&rx->shadow[sp_ring_slot(rx->dl_hdr, sub->hdr_slots)];

	d->rank = rank;
	d->index = rx->dl_idx++;
	sub->dl_passed++;
	if (sh->kind == SP_HDR_NULLS) {
		if (++rx->dl_sub == sh->count) {
			rx->dl_sub = 0;
			rx->dl_hdr++;
		}
		return false;
	}
	rx->dl_hdr++;
	d->pay_pos = rx->dl_pay++;
	d->len = sh->len;
	return sh->kind == SP_HDR_DATA;
}

/* Is sender @rank's next message (one it has received) a data message? */
bool sp_sub_next_is_data(const struct sp_sub *sub, u32 rank)
{
	const struct sp_rx *rx = &sub->rx[rank];

	return rx->shadow[sp_ring_slot(rx->dl_hdr, sub->hdr_slots)].kind == SP_HDR_DATA;
}

/* Keep a delivered data message's descriptor until it is released. */
void sp_sub_log(struct sp_sub *sub, const struct sp_desc *d)
{
	sub->log[sp_ring_slot(sub->dl_descs, sub->log_size)] = *d;
	sub->rx[d->rank].out++;
	sub->dl_descs++;
}

/*
 * Per sender rank, the index below which every message is released: the
 * oldest data message a consumer still holds, or, holding none, every
 * message passed to delivery.  Nulls between two data messages are free
 * once delivery passed them, so they count as released too; a held
 * message pins its own slot, not theirs.  The log is in delivery order,
 * so each rank's oldest held message is its first entry past rel_descs.
 */
static void sp_released_below(const struct sp_sub *sub, u64 *below)
{
	u64 i = sub->rel_descs;
	u32 r, holding = 0;

	for (r = 0; r < sub->nsenders; r++) {
		below[r] = sub->rx[r].out ? U64_MAX : sub->rx[r].dl_idx;
		holding += !!sub->rx[r].out;
	}
	for (; holding && i < sub->dl_descs; i++) {
		const struct sp_desc *d = &sub->log[sp_ring_slot(i, sub->log_size)];

		if (below[d->rank] == U64_MAX) {
			below[d->rank] = d->index;
			holding--;
		}
	}
}

/* Publish what consumers have released into my block: lazily (sp_sub_due()). */
static void sp_update_released(struct sp_sub *sub)
{
	struct sp_block *blk = sp_my_block(sub);
	__le64 *rel = sp_blk_released(blk, sub->nsenders);
	u64 below[SP_MAX_MEMBERS];
	u32 r;

	sp_released_below(sub, below);
	for (r = 0; r < sub->nsenders; r++)
		if (below[r] != U64_MAX && below[r] > le64_to_cpu(rel[r]))
			sp_blk_lazy(sub, &rel[r], below[r]);
	if (sub->mode == SP_MODE_ORDERED) {
		u64 ds = sub->rel_descs == sub->dl_descs ? sub->dl_seq :
			 sub->log[sp_ring_slot(sub->rel_descs, sub->log_size)].seq;

		if (ds > le64_to_cpu(blk->deliv_seq))
			sp_blk_lazy(sub, &blk->deliv_seq, ds);
	}
}

/* Sequence numbers received by every member: the stable prefix. */
static u64 sp_stable_seq(const struct sp_sub *sub)
{
	u64 stable = le64_to_cpu(sub->blocks[sub->me]->recv_seq);
	u32 m;

	for (m = 0; m < sub->nmembers; m++)
		if (m != sub->me && sub->seen[m].recv_seq < stable)
			stable = sub->seen[m].recv_seq;
	return stable;
}

/**
 * sp_sub_deliver - delivery predicate: everything deliverable, in one batch
 * @sub: engine state
 * @out: descriptors of the data messages delivered (nulls are skipped)
 * @max: room in @out
 *
 * Ordered mode delivers, in sequence order, every message that all members
 * have received; unordered mode likewise but FIFO per sender, with no
 * order across senders (so it needs no nulls).  Either way a message is
 * delivered only once every member has it: a failure is then all or none.
 * Descriptors stay valid (and their slots unreused) until released with
 * sp_sub_release(); at most window * nsenders are outstanding.  Nulls are
 * passed whatever @max is: with @max 0 (no consumer) data waits, nulls do
 * not, so a subgroup nobody reads still frees the slots nulls took.
 * Return: number of descriptors written to @out.
 */
u32 sp_sub_deliver(struct sp_sub *sub, struct sp_desc *out, u32 max)
{
	u32 room = sub->log_size - (u32)(sub->dl_descs - sub->rel_descs);
	struct sp_desc d;
	u32 n = 0, r;

	if (max > room)
		max = room;
	if (sub->mode == SP_MODE_ORDERED) {
		u64 stable = sp_stable_seq(sub);

		while (sub->dl_seq < stable) {
			bool data;

			if (n == max && sp_sub_next_is_data(sub, sub->dl_rank))
				break;
			data = sp_sub_step(sub, sub->dl_rank, &d);

			d.seq = sub->dl_seq++;
			if (++sub->dl_rank == sub->nsenders)
				sub->dl_rank = 0;
			if (data) {
				sp_sub_log(sub, &d);
				out[n++] = d;
			}
		}
	} else {
		for (r = 0; r < sub->nsenders; r++) {
			struct sp_rx *rx = &sub->rx[r];
			u64 stable = rx->received;
			u32 m;

			for (m = 0; m < sub->nmembers; m++)
				if (m != sub->me && sub->seen[m].received[r] < stable)
					stable = sub->seen[m].received[r];
			while (rx->dl_idx < stable) {
				if (n == max && sp_sub_next_is_data(sub, r))
					break;
				if (sp_sub_step(sub, r, &d)) {
					d.seq = sp_seq(r, d.index, sub->nsenders);
					sp_sub_log(sub, &d);
					out[n++] = d;
				}
			}
		}
	}
	if (n) {
		sub->stats.msgs_delivered += n;
		sub->stats.deliver_batches++;
		sp_hist_add(sub->stats.hist_deliver, n);
	}
	sp_update_released(sub);
	return n;
}

/**
 * sp_sub_caught_up - has member @m caught up with this node?
 * @sub: engine state
 * @m: member position, not mine
 *
 * True when every write this node owes @m has been queued, @m has
 * received everything this node has, and @m has delivered (and its
 * consumers released) everything this node delivered: ordered, by
 * deliv_seq; unordered, by released[] per sender, read from @m's block as
 * it is.  A member that leaves before its peers caught up makes them
 * change views for nothing, and a peer that has received a message but
 * not yet delivered it when it wedges cannot deliver it without a
 * majority.  A hint for when to leave, read while the predicate thread
 * runs: never a safety decision.
 */
bool sp_sub_caught_up(struct sp_sub *sub, u32 m)
{
	const struct sp_seen *v = &sub->seen[m];
	__le64 *rel;
	u32 r;

	if (sp_sub_has_output(sub, m))
		return false;
	if (sub->mode == SP_MODE_ORDERED &&
	    READ_ONCE(v->deliv_seq) < READ_ONCE(sub->dl_seq))
		return false;
	rel = sp_blk_released(sub->blocks[m], sub->nsenders);
	for (r = 0; r < sub->nsenders; r++) {
		if (READ_ONCE(v->received[r]) < READ_ONCE(sub->rx[r].received))
			return false;
		if (sub->mode == SP_MODE_UNORDERED &&
		    le64_to_cpu(READ_ONCE(rel[r])) < READ_ONCE(sub->rx[r].dl_idx))
			return false;
	}
	return true;
}

/**
 * sp_sub_release - consumers are done with the first @released descriptors
 * @sub: engine state
 * @released: descriptors released in total (monotonic, <= delivered)
 *
 * Advances released[] and deliv_seq in my block, which lets senders reuse
 * the slots once every member has done the same.
 */
void sp_sub_release(struct sp_sub *sub, u64 released)
{
	if (released > sub->dl_descs)
		released = sub->dl_descs;
	while (sub->rel_descs < released) {
		const struct sp_desc *d =
			&sub->log[sp_ring_slot(sub->rel_descs, sub->log_size)];

		sub->rx[d->rank].out--;
		sub->rel_descs++;
	}
	sp_update_released(sub);
}

/**
 * sp_sub_reclaim - flow control: free my slots every member has released
 * @sub: engine state (owner's lock held: producers read pay_freed)
 *
 * Return: number of payload slots and headers freed.
 */
int sp_sub_reclaim(struct sp_sub *sub)
{
	u64 floor;
	int work = 0;
	u32 m;

	if (sub->my_rank < 0)
		return 0;
	floor = le64_to_cpu(sp_blk_released(sp_my_block(sub),
					    sub->nsenders)[sub->my_rank]);
	for (m = 0; m < sub->nmembers; m++)
		if (m != sub->me && sub->seen[m].released_me < floor)
			floor = sub->seen[m].released_me;
	while (sub->pay_freed < sub->pay_pub) {
		u32 s = sp_ring_slot(sub->pay_freed, sub->window);

		if (sub->slot_idx[s] >= floor)
			break;
		sub->slot_state[s] = SP_SLOT_FREE;
		sub->pay_freed++;
		work++;
	}
	while (sub->hdr_freed < sub->hdr_pub &&
	       sub->hdr_end[sp_ring_slot(sub->hdr_freed, sub->hdr_slots)] <= floor) {
		sub->hdr_freed++;
		work++;
	}
	return work;
}

/* Bytes to write for a run of published payload slots: up to the end of the
 * last message, not the unused tail of its slot.
 */
static u32 sp_run_bytes(const struct sp_sub *sub, const struct sp_run *run)
{
	u32 last = run->slot + run->count - 1;

	return (run->count - 1) * sub->slot_size + sub->slot_len[last];
}

/**
 * sp_sub_emit - the writes that bring member @member up to date
 * @sub: engine state
 * @member: member position, not mine
 * @room: work requests its send queue can take now
 * @block_ok: my block may go out now (false while an earlier push of it
 *	to this member is in flight: changes then wait and go out together)
 * @flush: push lazy changes of my block too (sp_sub_due())
 * @out: at least SP_EMIT_MAX entries
 *
 * New slots go out as one write per contiguous run (two at the ring wrap),
 * then their headers likewise, then my block, whose hdr_pub announces them:
 * post them in this order on one QP.  With nothing new to publish, only a
 * changed block goes out, when sp_sub_due() says so.  Emits nothing unless
 * all of it fits in @room.  Data never waits for @block_ok; the block that
 * announces it does.
 * Return: number of writes in @out.
 */
u32 sp_sub_emit(struct sp_sub *sub, u32 member, u32 room, bool block_ok,
		bool flush, struct sp_wr *out)
{
	s32 rank = sub->member_rank[member];
	struct sp_run run[2];
	u32 n = 0, nr, i;

	if (sub->my_rank >= 0 && sub->tx_hdr[member] != sub->hdr_pub) {
		struct sp_run hrun[2];
		u32 nh;

		nr = sp_ring_runs(sub->tx_pay[member],
				  (u32)(sub->pay_pub - sub->tx_pay[member]),
				  sub->window, run);
		nh = sp_ring_runs(sub->tx_hdr[member],
				  (u32)(sub->hdr_pub - sub->tx_hdr[member]),
				  sub->hdr_slots, hrun);
		if (room < nr + nh + 1)
			return 0;
		for (i = 0; i < nr; i++) {
			u32 bytes = sp_run_bytes(sub, &run[i]);

			if (!bytes)
				continue;
			out[n].kind = SP_WR_PAYLOAD;
			out[n].offset = (u64)run[i].slot * sub->slot_size;
			out[n].len = bytes;
			n++;
		}
		for (i = 0; i < nh; i++) {
			out[n].kind = SP_WR_HDR;
			out[n].offset = (u64)hrun[i].slot * sizeof(struct sp_hdr);
			out[n].len = hrun[i].count * sizeof(struct sp_hdr);
			n++;
		}
		sub->tx_pay[member] = sub->pay_pub;
		sub->tx_hdr[member] = sub->hdr_pub;
	} else if (!sp_sub_due(sub, member, flush) || room < 1) {
		return 0;
	}
	if (!block_ok || sub->pushed_ver[member] == sub->blk_ver)
		return n;
	out[n].kind = SP_WR_BLOCK;
	out[n].offset = 0;
	out[n].len = sub->block_size;
	n++;
	sub->pushed_ver[member] = sub->blk_ver;
	if (rank >= 0)
		sub->tx_rel[member] =
			le64_to_cpu(sp_blk_released(sp_my_block(sub), sub->nsenders)[rank]);
	return n;
}
