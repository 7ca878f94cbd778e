/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The per-subgroup multicast engine: Derecho's SST + small-message multicast
 * with the Spindle optimisations, as plain C with no kernel dependency.
 *
 * Memory, per subgroup, at every member (identical layouts everywhere):
 *
 *   block	one per member: that member's part of its SST row for this
 *		subgroup (struct sp_block).  Each member writes only its own
 *		block and pushes it with RDMA WRITE into the same place at its
 *		peers.
 *   hdr ring	one per sender: hdr_slots headers (struct sp_hdr), one per
 *		published entry: a message in the next payload slot, or a run
 *		of null messages.  Kernel-owned: never mapped to userspace.
 *   payload	one per sender: window slots of slot_size bytes.  The sender's
 *		own ring is where applications build messages in place.
 *
 * A sender publishes by writing payload, then headers, then its block's
 * hdr_pub counter: three RDMA writes on one RC QP, in that order, so a
 * peer that sees the counter sees what it announces.  The guard is never
 * inside the same write as the data it guards (RB2: NICs may place one
 * write's bytes out of order).
 *
 * The owner (the kernel module, or a unit test) provides the memory and the
 * transport, and calls the steps below from one thread, except the
 * producer calls (reserve / mark ready / void), which take the owner's
 * lock, as must sp_sub_publish() and sp_sub_reclaim().  Nothing read from a
 * peer's block or header ring is used before it has been validated; a
 * violation returns -EPROTO with sub->fault_member set.
 */
#ifndef SPINDLE_PROTO_ENGINE_H
#define SPINDLE_PROTO_ENGINE_H

#include "compat.h"
#include "config.h"

/* ---- wire formats: memory that peers write into ---- */

enum sp_hdr_kind {
	SP_HDR_DATA = 1,	/* one message, in the next payload slot */
	SP_HDR_NULLS = 2,	/* @count null messages, no payload slot */
	SP_HDR_VOID = 3,	/* one null message occupying the next slot */
};

struct sp_hdr {
	__le32 len;		/* DATA: payload bytes, <= max_msg; else 0 */
	__le16 count;		/* NULLS: 1..window; else 0 */
	__le16 kind;		/* enum sp_hdr_kind */
};

/*
 * A member's block for one subgroup, in one view.  All counters are
 * monotonic within the view.  Followed by received[nsenders],
 * released[nsenders] and trim[nsenders].  Nothing writes or reads
 * trim_view, trim_term or trim[] any more: the view change's trims travel
 * in each row's view area (layout.h).  They go when the block's layout
 * next changes.
 */
struct sp_block {
	__le64 hdr_pub;		/* headers this member published (sender) */
	__le64 recv_seq;	/* ordered: complete prefix of the total order */
	__le64 deliv_seq;	/* ordered: delivered and released prefix */
	__le64 pay_base;	/* first payload position of this view (sender) */
	__le64 trim_view;	/* unused (above) */
	__le64 trim_term;	/* unused (above) */
	__le64 v[];		/* received[n], released[n], trim[n] */
};

#define SP_BLOCK_FIXED	48

static inline __le64 *sp_blk_received(struct sp_block *b)
{
	return &b->v[0];
}

static inline __le64 *sp_blk_released(struct sp_block *b, u32 nsenders)
{
	return &b->v[nsenders];
}

/* Header ring entries per sender: a data header per slot, and room for as
 * many null runs between them.
 */
static inline u32 sp_hdr_slots(u32 window)
{
	return 2 * window;
}

static inline u32 sp_block_size(u32 nsenders)
{
	return ALIGN(SP_BLOCK_FIXED + 24 * nsenders, 64);
}

/* ---- what the engine hands out ---- */

/* A delivered message. */
struct sp_desc {
	u64 seq;		/* position in the total order (ordered mode) */
	u64 index;		/* the sender's message index */
	u64 pay_pos;		/* absolute payload position in the sender's ring */
	u32 rank;		/* sender rank */
	u32 len;
};

enum sp_wr_kind {
	SP_WR_PAYLOAD,		/* from my payload ring */
	SP_WR_HDR,		/* from my header ring */
	SP_WR_BLOCK,		/* my block (the owner snapshots it) */
};

/* An RDMA write to post: the same offset in my region and in the peer's. */
struct sp_wr {
	u32 kind;		/* enum sp_wr_kind */
	u32 len;
	u64 offset;		/* within the region of that kind */
};

/* Most writes one sp_sub_emit() call produces for one member. */
#define SP_EMIT_MAX	5

/* ---- engine state ---- */

enum sp_slot_state {
	SP_SLOT_FREE = 0,
	SP_SLOT_RESERVED,	/* handed to a producer */
	SP_SLOT_READY,		/* marked ready with a length */
	SP_SLOT_VOID,		/* reservation abandoned: goes out as a null */
	SP_SLOT_PUBLISHED,	/* header written; until every member releases */
};

/* A validated copy of a header: what delivery uses, never the original. */
struct sp_shadow {
	u32 len;
	u16 count;
	u16 kind;
};

/* Receive and delivery state for one sender rank. */
struct sp_rx {
	u64 hdr_seen;		/* headers consumed */
	u64 pay_seen;		/* payload slots consumed */
	u64 received;		/* messages received, nulls included */
	u64 dl_hdr;		/* delivery cursor: header position */
	u64 dl_pay;		/* delivery cursor: payload position */
	u64 dl_idx;		/* messages passed to delivery */
	u32 dl_sub;		/* messages of the current null run passed */
	u32 pad;
	u64 out;		/* delivered data messages not yet released */
	struct sp_shadow *shadow;	/* [hdr_slots] */
};

/* The last values accepted from a member's block. */
struct sp_seen {
	u64 recv_seq;
	u64 deliv_seq;
	u64 released_me;	/* released[my rank] */
	u64 received[SP_MAX_MEMBERS];
	u64 released[SP_MAX_MEMBERS];
};

/* Batch sizes in powers of two: bucket i counts batches of [2^i, 2^(i+1)). */
#define SP_HIST_BUCKETS	SPINDLE_HIST_BUCKETS	/* the uapi's stats arrays */

struct sp_stats {
	u64 msgs_sent;
	u64 nulls_sent;		/* null messages */
	u64 null_hdrs;		/* null runs (headers) */
	u64 msgs_received;	/* data messages from peers */
	u64 msgs_delivered;
	u64 publish_batches;
	u64 receive_batches;
	u64 deliver_batches;
	u64 hist_publish[SP_HIST_BUCKETS];	/* headers per publish */
	u64 hist_receive[SP_HIST_BUCKETS];	/* headers per receive */
	u64 hist_deliver[SP_HIST_BUCKETS];	/* messages per delivery */
};

/* The bucket of a batch of @n: floor(log2(n)), the last one for the rest. */
static inline u32 sp_hist_bucket(u64 n)
{
	u32 b = 0;

	while (n > 1 && b < SP_HIST_BUCKETS - 1) {
		n >>= 1;
		b++;
	}
	return b;
}

static inline void sp_hist_add(u64 *hist, u64 n)
{
	hist[sp_hist_bucket(n)]++;
}

struct sp_sub {
	/* geometry */
	u32 nmembers;
	u32 nsenders;
	u32 window;
	u32 hdr_slots;
	u32 max_msg;
	u32 slot_size;
	u32 mode;
	u32 me;				/* my position in the member list */
	s32 my_rank;			/* my sender rank, -1 if I do not send */
	u32 block_size;
	u32 rank_member[SP_MAX_MEMBERS];	/* member position of each rank */
	s32 member_rank[SP_MAX_MEMBERS];	/* sender rank of each member, or -1 */

	/* memory, set by the owner before the first step */
	struct sp_block *blocks[SP_MAX_MEMBERS];	/* by member position */
	struct sp_hdr *hdrs[SP_MAX_MEMBERS];		/* by sender rank */

	/* producer / sender side */
	u64 pay_reserved;
	u64 pay_pub;
	u64 pay_freed;
	u64 hdr_pub;
	u64 hdr_freed;
	u64 sent;			/* my messages, nulls included */
	u8 *slot_state;			/* [window] enum sp_slot_state */
	u32 *slot_len;			/* [window] */
	u64 *slot_idx;			/* [window] index of the slot's message */
	u64 *hdr_end;			/* [hdr_slots] message count after it */
	u64 tx_hdr[SP_MAX_MEMBERS];	/* headers emitted to each member */
	u64 tx_pay[SP_MAX_MEMBERS];
	u64 pushed_ver[SP_MAX_MEMBERS];	/* blk_ver last pushed to each */
	u64 tx_rel[SP_MAX_MEMBERS];	/* released[its rank] last pushed to each */
	u64 blk_ver;			/* bumped whenever my block changes */
	u64 urg_ver;			/* blk_ver of its last urgent change */

	/* receiver side */
	struct sp_rx rx[SP_MAX_MEMBERS];	/* by sender rank */
	struct sp_seen seen[SP_MAX_MEMBERS];	/* by member position */

	/* delivery */
	u64 dl_seq;			/* ordered: next sequence number */
	u32 dl_rank;			/* = dl_seq % nsenders */
	u32 log_size;
	u64 dl_passed;			/* messages passed, nulls included */
	u64 dl_descs;			/* descriptors delivered */
	u64 rel_descs;			/* descriptors released */
	struct sp_desc *log;		/* [log_size] delivered, unreleased */

	/* limits, for the baseline: 0 is no limit */
	u32 max_publish;		/* headers per sp_sub_publish() */
	u32 max_receive;		/* headers per sp_sub_receive() */
	bool no_nulls;			/* never send nulls */
	bool wedged;			/* view ending: no publishing, received frozen */

	/* error report */
	s32 fault_member;		/* member position, or -1 */
	const char *fault_what;

	struct sp_stats stats;
};

int sp_sub_init(struct sp_sub *sub, const struct sp_group_cfg *cfg, u32 sub_index);
void sp_sub_destroy(struct sp_sub *sub);

/* Producer side: owner's lock held. */
u32 sp_sub_reserve(struct sp_sub *sub, u32 want, u64 *first);
int sp_sub_mark_ready(struct sp_sub *sub, u64 pos, u32 len);
int sp_sub_void(struct sp_sub *sub, u64 pos);
u32 sp_sub_free_slots(const struct sp_sub *sub);
bool sp_sub_reservations_held(const struct sp_sub *sub);

/* Predicate thread. */
int sp_sub_receive(struct sp_sub *sub);
int sp_sub_publish(struct sp_sub *sub);		/* owner's lock held */
u32 sp_sub_deliver(struct sp_sub *sub, struct sp_desc *out, u32 max);
void sp_sub_release(struct sp_sub *sub, u64 released_descs);
int sp_sub_reclaim(struct sp_sub *sub);		/* owner's lock held */
u32 sp_sub_emit(struct sp_sub *sub, u32 member, u32 room, bool block_ok,
		bool flush, struct sp_wr *out);
bool sp_sub_caught_up(struct sp_sub *sub, u32 m);

/* For view.c: the delivery cursor, one message at a time. */
bool sp_sub_step(struct sp_sub *sub, u32 rank, struct sp_desc *d);
bool sp_sub_next_is_data(const struct sp_sub *sub, u32 rank);
void sp_sub_log(struct sp_sub *sub, const struct sp_desc *d);

/* Helpers for owners. */
static inline u64 sp_sub_payload_offset(const struct sp_sub *sub, u64 pay_pos)
{
	return (u64)sp_mod_u64(pay_pos, sub->window) * sub->slot_size;
}

static inline u64 sp_sub_ring_bytes(const struct sp_sub *sub)
{
	return (u64)sub->window * sub->slot_size;
}

/*
 * Does @member lack anything of mine: data, or any change of my block?
 * Lazy changes (sp_sub_due()) included.
 */
static inline bool sp_sub_has_output(const struct sp_sub *sub, u32 member)
{
	return sub->pushed_ver[member] != sub->blk_ver ||
	       (sub->my_rank >= 0 && sub->tx_hdr[member] != sub->hdr_pub);
}

/**
 * sp_sub_due - should emit write to @member now?
 * @sub: engine state
 * @member: member position, not mine
 * @flush: lazy changes too
 *
 * What peers need to make progress goes at once: my data and headers, and
 * the counters that order and deliver them (hdr_pub, received[],
 * recv_seq).  What consumers released (released[], deliv_seq) only lets
 * senders reuse slots: it is lazy, and rides along with the next urgent
 * push.  It goes on its own when @flush (the owner's age limit), and to a
 * sender whose window may be running short for want of it: one that has
 * sent half a window past the releases I last told it, when I have
 * released more since, or to which I have released an eighth of a window
 * (at least 2) more than I told it.  A stream gets its releases as its
 * consumers give them back, since a window filled waits a whole round
 * trip for them; one message in flight lets them ride along (one release
 * a message, told with the next message's count).
 */
static inline bool sp_sub_due(const struct sp_sub *sub, u32 member, bool flush)
{
	s32 r = sub->member_rank[member];
	u64 rel;

	if (sub->my_rank >= 0 && sub->tx_hdr[member] != sub->hdr_pub)
		return true;
	if (sub->pushed_ver[member] == sub->blk_ver)
		return false;
	if (flush || sub->urg_ver > sub->pushed_ver[member])
		return true;
	if (r < 0)
		return false;
	rel = le64_to_cpu(READ_ONCE(sp_blk_released(sub->blocks[sub->me],
						    sub->nsenders)[r]));
	if (rel == sub->tx_rel[member])
		return false;
	return rel - sub->tx_rel[member] >= max_t(u32, sub->window / 8, 2) ||
	       sub->rx[r].received - sub->tx_rel[member] >= max_t(u32, sub->window / 2, 1);
}

#endif /* SPINDLE_PROTO_ENGINE_H */
