// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The per-subgroup multicast engine.  See engine.h for the memory layout
 * and the calling rules, and the Spindle paper (ICDCS'22) sections II-III
 * for the protocol: every predicate here batches opportunistically (it takes
 * everything there is and never waits for more), null-sends keep a lagging
 * sender from stalling the order, and nothing here posts: sp_sg_emit()
 * describes the writes, and the owner posts them after dropping its locks.
 */
#include "engine.h"
#include "ring.h"
#include "order.h"

static inline __le64 *sp_blk_received(struct sp_block *b)
{
	return &b->v[0];
}

static inline __le64 *sp_blk_released(struct sp_block *b, u32 nsenders)
{
	return &b->v[nsenders];
}

static inline __le64 *sp_blk_trim(struct sp_block *b, u32 nsenders)
{
	return &b->v[2 * nsenders];
}

static inline struct sp_block *sp_my_block(struct sp_sg *sg)
{
	return sg->blocks[sg->me];
}

/* Store a counter into my block (only this thread writes it). */
static inline bool sp_blk_set(struct sp_sg *sg, __le64 *field, u64 val)
{
	if (le64_to_cpu(*field) == val)
		return false;
	WRITE_ONCE(*field, cpu_to_le64(val));
	sg->blk_ver++;
	return true;
}

static int sp_fault(struct sp_sg *sg, u32 member, const char *what)
{
	if (sg->fault_member < 0) {
		sg->fault_member = (s32)member;
		sg->fault_what = what;
	}
	return -EPROTO;
}

/**
 * sp_sg_init - set up the engine for one subgroup this node belongs to
 * @sg: zeroed or reused engine state
 * @cfg: a validated group configuration
 * @sg_index: which of cfg->subgroups
 *
 * The owner then points sg->blocks[] and sg->hdrs[] at the memory.
 * Return: 0, -EINVAL if self is not a member, -ENOMEM.
 */
int sp_sg_init(struct sp_sg *sg, const struct sp_group_cfg *cfg, u32 sg_index)
{
	const struct sp_sg_cfg *c = &cfg->subgroups[sg_index];
	int me = sp_sg_member_pos(c, cfg->self_id);
	u32 r;

	memset(sg, 0, sizeof(*sg));
	sg->fault_member = -1;
	if (me < 0)
		return -EINVAL;
	sg->nmembers = c->nmembers;
	sg->nsenders = c->nsenders;
	sg->window = c->window;
	sg->hdr_slots = sp_hdr_slots(c->window);
	sg->max_msg = c->max_msg;
	sg->slot_size = sp_sg_slot_size(c);
	sg->mode = c->mode;
	sg->me = (u32)me;
	sg->my_rank = sp_sg_sender_rank(c, cfg->self_id);
	sg->block_size = sp_block_size(c->nsenders);
	sg->log_size = c->window * c->nsenders;
	if (cfg->flags & SP_GROUP_BASELINE) {
		/* one message at a time at every stage, and no nulls */
		sg->max_publish = 1;
		sg->max_receive = 1;
		sg->no_nulls = true;
	}
	for (r = 0; r < c->nsenders; r++)
		sg->rank_member[r] = (u32)sp_sg_member_pos(c, c->senders[r]);

	if (sg->my_rank >= 0) {
		sg->slot_state = sp_zalloc(sg->window);
		sg->slot_len = sp_zalloc(sg->window * sizeof(u32));
		sg->slot_idx = sp_zalloc(sg->window * sizeof(u64));
		sg->hdr_end = sp_zalloc(sg->hdr_slots * sizeof(u64));
		if (!sg->slot_state || !sg->slot_len || !sg->slot_idx ||
		    !sg->hdr_end)
			goto nomem;
	}
	for (r = 0; r < sg->nsenders; r++) {
		sg->rx[r].shadow = sp_zalloc(sg->hdr_slots *
					     sizeof(struct sp_shadow));
		if (!sg->rx[r].shadow)
			goto nomem;
	}
	sg->log = sp_zalloc(sg->log_size * sizeof(struct sp_desc));
	if (!sg->log)
		goto nomem;
	return 0;
nomem:
	sp_sg_destroy(sg);
	return -ENOMEM;
}

/**
 * sp_sg_destroy - free what sp_sg_init() allocated
 * @sg: engine state; safe on a partly initialised one
 */
void sp_sg_destroy(struct sp_sg *sg)
{
	u32 r;

	sp_free(sg->slot_state);
	sp_free(sg->slot_len);
	sp_free(sg->slot_idx);
	sp_free(sg->hdr_end);
	for (r = 0; r < SP_MAX_MEMBERS; r++) {
		sp_free(sg->rx[r].shadow);
		sg->rx[r].shadow = NULL;
	}
	sp_free(sg->log);
	sg->slot_state = NULL;
	sg->slot_len = NULL;
	sg->slot_idx = NULL;
	sg->hdr_end = NULL;
	sg->log = NULL;
}

/* ---- producer side (owner's lock held) ---- */

/**
 * sp_sg_free_slots - payload slots a producer could reserve now
 * @sg: engine state
 */
u32 sp_sg_free_slots(const struct sp_sg *sg)
{
	if (sg->my_rank < 0)
		return 0;
	return sp_ring_free(sg->pay_reserved, sg->pay_freed, sg->window);
}

/**
 * sp_sg_reserve - hand out up to @want consecutive payload slots
 * @sg: engine state
 * @want: slots wanted
 * @first: out: absolute position of the first one
 *
 * Slots are handed out in ring order and published in that order: a
 * reservation that is neither marked ready nor voided holds back the ones
 * after it.  Return: slots reserved, 0 when none is free.
 */
u32 sp_sg_reserve(struct sp_sg *sg, u32 want, u64 *first)
{
	u32 n = min_t(u32, want, sp_sg_free_slots(sg));
	u32 i;

	*first = sg->pay_reserved;
	for (i = 0; i < n; i++)
		sg->slot_state[sp_ring_slot(sg->pay_reserved + i,
					    sg->window)] = SP_SLOT_RESERVED;
	sg->pay_reserved += n;
	return n;
}

static int sp_sg_check_reserved(struct sp_sg *sg, u64 pos)
{
	if (sg->my_rank < 0 || pos < sg->pay_pub || pos >= sg->pay_reserved)
		return -EINVAL;
	if (sg->slot_state[sp_ring_slot(pos, sg->window)] != SP_SLOT_RESERVED)
		return -EINVAL;
	return 0;
}

/**
 * sp_sg_mark_ready - a reserved slot holds a message of @len bytes
 * @sg: engine state
 * @pos: absolute slot position from sp_sg_reserve()
 * @len: payload length, at most max_msg
 *
 * Return: 0, -EINVAL if @pos is not reserved, -EMSGSIZE if @len is too big.
 */
int sp_sg_mark_ready(struct sp_sg *sg, u64 pos, u32 len)
{
	u32 s = sp_ring_slot(pos, sg->window);

	if (sp_sg_check_reserved(sg, pos))
		return -EINVAL;
	if (len > sg->max_msg)
		return -EMSGSIZE;
	sg->slot_len[s] = len;
	sg->slot_state[s] = SP_SLOT_READY;
	return 0;
}

/**
 * sp_sg_void - give up a reservation; the slot goes out as a null message
 * @sg: engine state
 * @pos: absolute slot position from sp_sg_reserve()
 *
 * Return: 0, or -EINVAL if @pos is not reserved.
 */
int sp_sg_void(struct sp_sg *sg, u64 pos)
{
	u32 s = sp_ring_slot(pos, sg->window);

	if (sp_sg_check_reserved(sg, pos))
		return -EINVAL;
	sg->slot_len[s] = 0;
	sg->slot_state[s] = SP_SLOT_VOID;
	return 0;
}

/**
 * sp_sg_reservations_held - does a reservation still wait for its owner?
 * @sg: engine state
 *
 * A slot reserved and not yet marked ready or voided holds back every slot
 * after it.  One marked or voided is nobody's any more, even before the
 * predicate thread publishes it (in ring order, on its next pass).
 * Return: true if a slot between the published ones and the last
 * reservation is still reserved.
 */
bool sp_sg_reservations_held(const struct sp_sg *sg)
{
	u64 pos;

	for (pos = sg->pay_pub; pos < sg->pay_reserved; pos++)
		if (sg->slot_state[sp_ring_slot(pos, sg->window)] == SP_SLOT_RESERVED)
			return true;
	return false;
}

/* ---- predicate thread ---- */

/* Append a header to my ring; the caller checked there is room. */
static void sp_put_hdr(struct sp_sg *sg, u16 kind, u32 len, u16 count)
{
	u32 h = sp_ring_slot(sg->hdr_pub, sg->hdr_slots);
	struct sp_hdr *hdr = &sg->hdrs[sg->my_rank][h];
	struct sp_rx *rx = &sg->rx[sg->my_rank];
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
	sg->sent += msgs;
	sg->hdr_end[h] = sg->sent;
	sg->hdr_pub++;
}

static bool sp_hdr_room(const struct sp_sg *sg)
{
	return sg->hdr_pub - sg->hdr_freed < sg->hdr_slots;
}

static void sp_update_recv_seq(struct sp_sg *sg)
{
	u64 rcv[SP_MAX_MEMBERS];
	u32 r;

	if (sg->mode != SP_MODE_ORDERED || sg->wedged)
		return;		/* wedged: see sp_sg_receive() */
	for (r = 0; r < sg->nsenders; r++)
		rcv[r] = sg->rx[r].received;
	sp_blk_set(sg, &sp_my_block(sg)->recv_seq,
		   sp_contiguous_seq(rcv, sg->nsenders));
}

/**
 * sp_sg_publish - send predicate: publish every ready slot, then nulls
 * @sg: engine state (owner's lock held: reads what producers marked)
 *
 * Publishes the run of ready (or voided) slots at the head of the ring,
 * however long it is, and then, in ordered mode, the nulls this sender owes
 * (the null-send rule: see sp_null_target()) as one header with a count.
 * Return: number of headers published.
 */
int sp_sg_publish(struct sp_sg *sg)
{
	struct sp_block *blk;
	int work = 0;
	u64 rcv[SP_MAX_MEMBERS];
	u32 r;

	if (sg->my_rank < 0 || sg->wedged)
		return 0;
	while (sg->pay_pub < sg->pay_reserved && sp_hdr_room(sg) &&
	       (!sg->max_publish || work < (int)sg->max_publish)) {
		u32 s = sp_ring_slot(sg->pay_pub, sg->window);
		u8 st = sg->slot_state[s];

		if (st != SP_SLOT_READY && st != SP_SLOT_VOID)
			break;
		sg->slot_idx[s] = sg->sent;
		sg->slot_state[s] = SP_SLOT_PUBLISHED;
		if (st == SP_SLOT_READY) {
			sp_put_hdr(sg, SP_HDR_DATA, sg->slot_len[s], 0);
			sg->stats.msgs_sent++;
		} else {
			sp_put_hdr(sg, SP_HDR_VOID, 0, 0);
			sg->stats.nulls_sent++;
		}
		sg->pay_pub++;
		work++;
	}
	if (work) {
		sg->stats.publish_batches++;
		sp_hist_add(sg->stats.hist_publish, work);
	}

	if (sg->mode == SP_MODE_ORDERED && !sg->no_nulls && sp_hdr_room(sg)) {
		u64 target;

		for (r = 0; r < sg->nsenders; r++)
			rcv[r] = sg->rx[r].received;
		target = sp_null_target(rcv, sg->nsenders, (u32)sg->my_rank);
		if (target > sg->sent) {
			u16 count = (u16)min_t(u64, target - sg->sent,
					       min_t(u32, sg->window, 0xffff));

			sp_put_hdr(sg, SP_HDR_NULLS, 0, count);
			sg->stats.nulls_sent += count;
			sg->stats.null_hdrs++;
			work++;
		}
	}
	if (!work)
		return 0;
	blk = sp_my_block(sg);
	sp_blk_set(sg, &sp_blk_received(blk)[sg->my_rank],
		   sg->rx[sg->my_rank].received);
	sp_update_recv_seq(sg);
	/* the guard goes last: emit orders the writes the same way */
	sp_blk_set(sg, &blk->hdr_pub, sg->hdr_pub);
	return work;
}

/* Decode and check one header a peer wrote; 0 or -EPROTO. */
static int sp_take_hdr(struct sp_sg *sg, u32 rank, u64 h)
{
	struct sp_rx *rx = &sg->rx[rank];
	u32 slot = sp_ring_slot(h, sg->hdr_slots);
	const struct sp_hdr *src = &sg->hdrs[rank][slot];
	struct sp_hdr hdr;
	u32 len;
	u16 count, kind;
	u32 member = sg->rank_member[rank];

	/* one copy: the peer may be rewriting it while we look */
	hdr.len = READ_ONCE(src->len);
	hdr.count = READ_ONCE(src->count);
	hdr.kind = READ_ONCE(src->kind);
	len = le32_to_cpu(hdr.len);
	count = le16_to_cpu(hdr.count);
	kind = le16_to_cpu(hdr.kind);

	switch (kind) {
	case SP_HDR_DATA:
		if (len > sg->max_msg || count)
			return sp_fault(sg, member, "message header");
		break;
	case SP_HDR_VOID:
		if (len || count)
			return sp_fault(sg, member, "void header");
		break;
	case SP_HDR_NULLS:
		if (len || !count || count > sg->window)
			return sp_fault(sg, member, "null header");
		break;
	default:
		return sp_fault(sg, member, "header kind");
	}
	if (kind != SP_HDR_NULLS) {
		/* the sender may not run past slots we have not released */
		if (rx->pay_seen - rx->dl_pay >= sg->window)
			return sp_fault(sg, member, "payload ring overrun");
		rx->pay_seen++;
		if (kind == SP_HDR_DATA)
			sg->stats.msgs_received++;
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
static int sp_take_view(struct sp_sg *sg, u32 m)
{
	struct sp_block *b = sg->blocks[m];
	struct sp_view *v = &sg->view[m];
	u64 recv_seq = le64_to_cpu(READ_ONCE(b->recv_seq));
	u64 deliv_seq = le64_to_cpu(READ_ONCE(b->deliv_seq));
	u64 rel_me;
	u32 r;

	if (recv_seq < v->recv_seq)
		return sp_fault(sg, m, "recv_seq went backwards");
	if (deliv_seq < v->deliv_seq)
		return sp_fault(sg, m, "deliv_seq went backwards");
	v->recv_seq = recv_seq;
	v->deliv_seq = deliv_seq;
	/* per sender: unordered delivery's stable prefix, a leader's trim */
	for (r = 0; r < sg->nsenders; r++) {
		u64 rc = le64_to_cpu(READ_ONCE(sp_blk_received(b)[r]));

		if (rc < v->received[r])
			return sp_fault(sg, m, "received count went backwards");
		v->received[r] = rc;
	}
	if (sg->my_rank < 0)
		return 0;
	rel_me = le64_to_cpu(READ_ONCE(sp_blk_released(b, sg->nsenders)[sg->my_rank]));
	if (rel_me < v->released_me || rel_me > sg->sent)
		return sp_fault(sg, m, "released count for our messages");
	v->released_me = rel_me;
	return 0;
}

/**
 * sp_sg_receive - receive predicate: take every new header of every sender
 * @sg: engine state
 *
 * For each sender, reads the published count from its block, checks it
 * against what this node has released, and validates every new header into
 * the shadow ring that delivery reads.  Then one update of my block
 * (received counts, recv_seq) for one push.  Also refreshes and checks the
 * other members' counters.
 * Return: headers taken, or -EPROTO (sg->fault_member says who).
 */
int sp_sg_receive(struct sp_sg *sg)
{
	struct sp_block *blk = sp_my_block(sg);
	int work = 0;
	u32 r, m;

	if (sg->fault_member >= 0)
		return -EPROTO;
	for (r = 0; r < sg->nsenders; r++) {
		struct sp_rx *rx = &sg->rx[r];
		u32 member = sg->rank_member[r];
		u64 pub, h;

		if ((s32)r == sg->my_rank ||
		    (sg->max_receive && work >= (int)sg->max_receive))
			continue;
		/*
		 * The guard: acquire, so the headers read below are no older
		 * than the count (the peer wrote them first, on the same QP).
		 */
		pub = le64_to_cpu(smp_load_acquire(&sg->blocks[member]->hdr_pub));
		if (pub == rx->hdr_seen)
			continue;
		if (pub < rx->hdr_seen || pub - rx->dl_hdr > sg->hdr_slots)
			return sp_fault(sg, member, "published header count");
		if (sg->max_receive && pub - rx->hdr_seen > sg->max_receive - work)
			pub = rx->hdr_seen + (sg->max_receive - work);
		work += (int)(pub - rx->hdr_seen);
		for (h = rx->hdr_seen; h < pub; h++)
			if (sp_take_hdr(sg, r, h))
				return -EPROTO;
		/*
		 * Wedged, what I announce stays what I had as I wedged (my
		 * snapshot, which the trim is taken from): a member still
		 * delivering must not count on messages past it.
		 */
		if (!sg->wedged)
			sp_blk_set(sg, &sp_blk_received(blk)[r], rx->received);
	}
	for (m = 0; m < sg->nmembers; m++)
		if (m != sg->me && sp_take_view(sg, m))
			return -EPROTO;
	if (work) {
		sg->stats.receive_batches++;
		sp_hist_add(sg->stats.hist_receive, work);
		sp_update_recv_seq(sg);
	}
	return work;
}

/* Step sender @rank's delivery cursor by one message; true if it is data. */
bool sp_sg_step(struct sp_sg *sg, u32 rank, struct sp_desc *d)
{
	struct sp_rx *rx = &sg->rx[rank];
	const struct sp_shadow *sh =
		&rx->shadow[sp_ring_slot(rx->dl_hdr, sg->hdr_slots)];

	d->rank = rank;
	d->index = rx->dl_idx++;
	sg->dl_passed++;
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
bool sp_sg_next_is_data(const struct sp_sg *sg, u32 rank)
{
	const struct sp_rx *rx = &sg->rx[rank];

	return rx->shadow[sp_ring_slot(rx->dl_hdr, sg->hdr_slots)].kind == SP_HDR_DATA;
}

/* Keep a delivered data message's descriptor until it is released. */
void sp_sg_log(struct sp_sg *sg, const struct sp_desc *d)
{
	sg->log[sp_ring_slot(sg->dl_descs, sg->log_size)] = *d;
	sg->rx[d->rank].out++;
	sg->dl_descs++;
}

/*
 * Per sender rank, the index below which every message is released: the
 * oldest data message a consumer still holds, or, holding none, every
 * message passed to delivery.  Nulls between two data messages are free
 * once delivery passed them, so they count as released too; a held
 * message pins its own slot, not theirs.  The log is in delivery order,
 * so each rank's oldest held message is its first entry past rel_descs.
 */
static void sp_released_below(const struct sp_sg *sg, u64 *below)
{
	u64 i = sg->rel_descs;
	u32 r, holding = 0;

	for (r = 0; r < sg->nsenders; r++) {
		below[r] = sg->rx[r].out ? U64_MAX : sg->rx[r].dl_idx;
		holding += !!sg->rx[r].out;
	}
	for (; holding && i < sg->dl_descs; i++) {
		const struct sp_desc *d = &sg->log[sp_ring_slot(i, sg->log_size)];

		if (below[d->rank] == U64_MAX) {
			below[d->rank] = d->index;
			holding--;
		}
	}
}

/* Publish what consumers have released into my block. */
static void sp_update_released(struct sp_sg *sg)
{
	struct sp_block *blk = sp_my_block(sg);
	__le64 *rel = sp_blk_released(blk, sg->nsenders);
	u64 below[SP_MAX_MEMBERS];
	u32 r;

	sp_released_below(sg, below);
	for (r = 0; r < sg->nsenders; r++)
		if (below[r] != U64_MAX && below[r] > le64_to_cpu(rel[r]))
			sp_blk_set(sg, &rel[r], below[r]);
	if (sg->mode == SP_MODE_ORDERED) {
		u64 ds = sg->rel_descs == sg->dl_descs ? sg->dl_seq :
			 sg->log[sp_ring_slot(sg->rel_descs, sg->log_size)].seq;

		if (ds > le64_to_cpu(blk->deliv_seq))
			sp_blk_set(sg, &blk->deliv_seq, ds);
	}
}

/* Sequence numbers received by every member: the stable prefix. */
static u64 sp_stable_seq(const struct sp_sg *sg)
{
	u64 stable = le64_to_cpu(sg->blocks[sg->me]->recv_seq);
	u32 m;

	for (m = 0; m < sg->nmembers; m++)
		if (m != sg->me && sg->view[m].recv_seq < stable)
			stable = sg->view[m].recv_seq;
	return stable;
}

/**
 * sp_sg_deliver - delivery predicate: everything deliverable, in one batch
 * @sg: engine state
 * @out: descriptors of the data messages delivered (nulls are skipped)
 * @max: room in @out
 *
 * Ordered mode delivers, in sequence order, every message that all members
 * have received; unordered mode likewise but FIFO per sender, with no
 * order across senders (so it needs no nulls).  Either way a message is
 * delivered only once every member has it: a failure is then all or none.
 * Descriptors stay valid (and their slots unreused) until released with
 * sp_sg_release(); at most window * nsenders are outstanding.  Nulls are
 * passed whatever @max is: with @max 0 (no consumer) data waits, nulls do
 * not, so a subgroup nobody reads still frees the slots nulls took.
 * Return: number of descriptors written to @out.
 */
u32 sp_sg_deliver(struct sp_sg *sg, struct sp_desc *out, u32 max)
{
	u32 room = sg->log_size - (u32)(sg->dl_descs - sg->rel_descs);
	struct sp_desc d;
	u32 n = 0, r;

	if (max > room)
		max = room;
	if (sg->mode == SP_MODE_ORDERED) {
		u64 stable = sp_stable_seq(sg);

		while (sg->dl_seq < stable) {
			bool data;

			if (n == max && sp_sg_next_is_data(sg, sg->dl_rank))
				break;
			data = sp_sg_step(sg, sg->dl_rank, &d);

			d.seq = sg->dl_seq++;
			if (++sg->dl_rank == sg->nsenders)
				sg->dl_rank = 0;
			if (data) {
				sp_sg_log(sg, &d);
				out[n++] = d;
			}
		}
	} else {
		for (r = 0; r < sg->nsenders; r++) {
			struct sp_rx *rx = &sg->rx[r];
			u64 stable = rx->received;
			u32 m;

			for (m = 0; m < sg->nmembers; m++)
				if (m != sg->me && sg->view[m].received[r] < stable)
					stable = sg->view[m].received[r];
			while (rx->dl_idx < stable) {
				if (n == max && sp_sg_next_is_data(sg, r))
					break;
				if (sp_sg_step(sg, r, &d)) {
					d.seq = sp_seq(r, d.index, sg->nsenders);
					sp_sg_log(sg, &d);
					out[n++] = d;
				}
			}
		}
	}
	if (n) {
		sg->stats.msgs_delivered += n;
		sg->stats.deliver_batches++;
		sp_hist_add(sg->stats.hist_deliver, n);
	}
	sp_update_released(sg);
	return n;
}

/**
 * sp_sg_caught_up - has member @m caught up with this node?
 * @sg: engine state
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
bool sp_sg_caught_up(struct sp_sg *sg, u32 m)
{
	const struct sp_view *v = &sg->view[m];
	__le64 *rel;
	u32 r;

	if (sp_sg_has_output(sg, m))
		return false;
	if (sg->mode == SP_MODE_ORDERED &&
	    READ_ONCE(v->deliv_seq) < READ_ONCE(sg->dl_seq))
		return false;
	rel = sp_blk_released(sg->blocks[m], sg->nsenders);
	for (r = 0; r < sg->nsenders; r++) {
		if (READ_ONCE(v->received[r]) < READ_ONCE(sg->rx[r].received))
			return false;
		if (sg->mode == SP_MODE_UNORDERED &&
		    le64_to_cpu(READ_ONCE(rel[r])) < READ_ONCE(sg->rx[r].dl_idx))
			return false;
	}
	return true;
}

/**
 * sp_sg_release - consumers are done with the first @released descriptors
 * @sg: engine state
 * @released: descriptors released in total (monotonic, <= delivered)
 *
 * Advances released[] and deliv_seq in my block, which lets senders reuse
 * the slots once every member has done the same.
 */
void sp_sg_release(struct sp_sg *sg, u64 released)
{
	if (released > sg->dl_descs)
		released = sg->dl_descs;
	while (sg->rel_descs < released) {
		const struct sp_desc *d =
			&sg->log[sp_ring_slot(sg->rel_descs, sg->log_size)];

		sg->rx[d->rank].out--;
		sg->rel_descs++;
	}
	sp_update_released(sg);
}

/**
 * sp_sg_reclaim - flow control: free my slots every member has released
 * @sg: engine state (owner's lock held: producers read pay_freed)
 *
 * Return: number of payload slots and headers freed.
 */
int sp_sg_reclaim(struct sp_sg *sg)
{
	u64 floor;
	int work = 0;
	u32 m;

	if (sg->my_rank < 0)
		return 0;
	floor = le64_to_cpu(sp_blk_released(sp_my_block(sg),
					    sg->nsenders)[sg->my_rank]);
	for (m = 0; m < sg->nmembers; m++)
		if (m != sg->me && sg->view[m].released_me < floor)
			floor = sg->view[m].released_me;
	while (sg->pay_freed < sg->pay_pub) {
		u32 s = sp_ring_slot(sg->pay_freed, sg->window);

		if (sg->slot_idx[s] >= floor)
			break;
		sg->slot_state[s] = SP_SLOT_FREE;
		sg->pay_freed++;
		work++;
	}
	while (sg->hdr_freed < sg->hdr_pub &&
	       sg->hdr_end[sp_ring_slot(sg->hdr_freed, sg->hdr_slots)] <= floor) {
		sg->hdr_freed++;
		work++;
	}
	return work;
}

/**
 * sp_sg_set_trim - put a trim in my block (a leader's proposal, or the one
 *	this member holds)
 * @sg: engine state of the view that ends
 * @view: the view the change leads to
 * @term: which proposal for it
 * @trim: per sender rank
 */
void sp_sg_set_trim(struct sp_sg *sg, u64 view, u64 term, const u64 *trim)
{
	struct sp_block *blk = sp_my_block(sg);
	__le64 *t = sp_blk_trim(blk, sg->nsenders);
	u32 r;

	for (r = 0; r < sg->nsenders; r++)
		WRITE_ONCE(t[r], cpu_to_le64(trim[r]));
	WRITE_ONCE(blk->trim_view, cpu_to_le64(view));
	WRITE_ONCE(blk->trim_term, cpu_to_le64(term));
	sg->blk_ver++;
}

/**
 * sp_sg_read_trim - read the trim in @member's block
 * @sg: engine state
 * @member: member position (mine reads my own block)
 * @view: the view change expected
 * @term: the proposal expected
 * @trim: out, per sender rank
 *
 * Call only after seeing the member's row header announce @view and
 * @term: the row is written after the block, on the same QP, and is the
 * guard for it (the bytes of one write may land in any order).
 * Return: 0; -EAGAIN if that trim is not in the block; -EPROTO if it asks
 * this node to deliver messages it does not have (the member is faulty:
 * it took the trim over the survivors' counts, mine among them).
 */
int sp_sg_read_trim(struct sp_sg *sg, u32 member, u64 view, u64 term, u64 *trim)
{
	struct sp_block *b = sg->blocks[member];
	const __le64 *t = sp_blk_trim(b, sg->nsenders);
	u32 r;

	if (le64_to_cpu(READ_ONCE(b->trim_view)) != view ||
	    le64_to_cpu(READ_ONCE(b->trim_term)) != term)
		return -EAGAIN;
	for (r = 0; r < sg->nsenders; r++) {
		trim[r] = le64_to_cpu(READ_ONCE(t[r]));
		if (trim[r] > sg->rx[r].received)
			return sp_fault(sg, member, "trim beyond what we received");
	}
	return 0;
}

/**
 * sp_sg_member_received - the received counts of @member, as last seen
 * @sg: engine state
 * @member: member position
 * @rcv: out, per sender rank
 */
void sp_sg_member_received(const struct sp_sg *sg, u32 member, u64 *rcv)
{
	u32 r;

	for (r = 0; r < sg->nsenders; r++)
		rcv[r] = member == sg->me ? sg->rx[r].received :
			 sg->view[member].received[r];
}

/* Bytes to write for a run of published payload slots: up to the end of the
 * last message, not the unused tail of its slot.
 */
static u32 sp_run_bytes(const struct sp_sg *sg, const struct sp_run *run)
{
	u32 last = run->slot + run->count - 1;

	return (run->count - 1) * sg->slot_size + sg->slot_len[last];
}

/**
 * sp_sg_emit - the writes that bring member @member up to date
 * @sg: engine state
 * @member: member position, not mine
 * @room: work requests its send queue can take now
 * @block_ok: my block may go out now (false while an earlier push of it
 *	to this member is in flight: changes then wait and go out together)
 * @out: at least SP_EMIT_MAX entries
 *
 * New slots go out as one write per contiguous run (two at the ring wrap),
 * then their headers likewise, then my block, whose hdr_pub announces them:
 * post them in this order on one QP.  With nothing new to publish, only a
 * changed block goes out.  Emits nothing unless all of it fits in @room.
 * Data never waits for @block_ok; the block that announces it does.
 * Return: number of writes in @out.
 */
u32 sp_sg_emit(struct sp_sg *sg, u32 member, u32 room, bool block_ok,
	       struct sp_wr *out)
{
	struct sp_run run[2];
	u32 n = 0, nr, i;

	if (sg->my_rank >= 0 && sg->tx_hdr[member] != sg->hdr_pub) {
		struct sp_run hrun[2];
		u32 nh;

		nr = sp_ring_runs(sg->tx_pay[member],
				  (u32)(sg->pay_pub - sg->tx_pay[member]),
				  sg->window, run);
		nh = sp_ring_runs(sg->tx_hdr[member],
				  (u32)(sg->hdr_pub - sg->tx_hdr[member]),
				  sg->hdr_slots, hrun);
		if (room < nr + nh + 1)
			return 0;
		for (i = 0; i < nr; i++) {
			u32 bytes = sp_run_bytes(sg, &run[i]);

			if (!bytes)
				continue;
			out[n].kind = SP_WR_PAYLOAD;
			out[n].offset = (u64)run[i].slot * sg->slot_size;
			out[n].len = bytes;
			n++;
		}
		for (i = 0; i < nh; i++) {
			out[n].kind = SP_WR_HDR;
			out[n].offset = (u64)hrun[i].slot * sizeof(struct sp_hdr);
			out[n].len = hrun[i].count * sizeof(struct sp_hdr);
			n++;
		}
		sg->tx_pay[member] = sg->pay_pub;
		sg->tx_hdr[member] = sg->hdr_pub;
	} else if (sg->pushed_ver[member] == sg->blk_ver || room < 1) {
		return 0;
	}
	if (!block_ok || sg->pushed_ver[member] == sg->blk_ver)
		return n;
	out[n].kind = SP_WR_BLOCK;
	out[n].offset = 0;
	out[n].len = sg->block_size;
	n++;
	sg->pushed_ver[member] = sg->blk_ver;
	return n;
}
