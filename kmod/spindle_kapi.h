/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Spindle in-kernel API: totally ordered atomic multicast for kernel code.
 *
 * A group is brought up from userspace (spindlectl up); kernel code then
 * looks up a subgroup it belongs to and:
 *
 *   sends:	spindle_reserve() hands out slots of this node's ring;
 *		build each message in place at spindle_slot(); then
 *		spindle_mark_ready() (or spindle_void() to give it up).
 *		Slots go out in the order they were reserved.
 *   receives:	spindle_attach() registers a consumer whose ->deliver() is
 *		called by the predicate thread with every batch of
 *		delivered messages, in delivery order.  Each message stays
 *		valid, in place, until the consumer gives it back with
 *		spindle_release(); until every consumer on every member has,
 *		its sender cannot reuse the slot.  A consumer that keeps
 *		state built from the messages asks spindle_consumer_whole()
 *		whether it was handed every one.
 *
 * Contexts: spindle_reserve() sleeps unless its timeout is 0;
 * spindle_mark_ready() and spindle_void() may be called from process or
 * softirq context (a driver's completion path); spindle_release() from any
 * context.  None of them sleeps, but on PREEMPT_RT the subgroup's lock is,
 * like every spinlock_t there, a sleeping lock.
 *
 * /dev/spindleN is built on these calls (and counts its open files, which
 * a consumer that holds its subgroup alone keeps out).
 */
#ifndef SPINDLE_KAPI_H
#define SPINDLE_KAPI_H

#include <linux/bits.h>
#include <linux/types.h>
#include <linux/spindle.h>

struct spindle_subgroup;
struct spindle_consumer;

/**
 * struct spindle_msg - one delivered message
 * @seq: position in the total order (ordered mode; unique id otherwise)
 * @index: the sender's message number (nulls included)
 * @data: the payload, in place in the sender's ring; read-only
 * @offset: byte offset of @data in that ring
 * @len: payload bytes
 * @rank: sender rank in the subgroup
 * @sender_id: sender's member id
 */
struct spindle_msg {
	u64 seq;
	u64 index;
	const void *data;
	u64 offset;
	u32 len;
	u32 rank;
	u32 sender_id;
};

/**
 * struct spindle_view_rec - a view change, in order with the messages
 * @view_id: the new view
 * @members: its members: bit i for member i of the configuration
 * @nmembers: how many
 * @own_delivered: data messages this node sent in this subgroup that were
 *	delivered, over all views: the first @own_delivered it sent (in the
 *	order it marked them, voids aside); those after were dropped
 */
struct spindle_view_rec {
	u64 view_id;
	u64 members;
	u32 nmembers;
	u64 own_delivered;
	bool joined;
};

/**
 * struct spindle_consumer_ops - what a consumer is told
 * @deliver: a batch of delivered messages, oldest first.  Called from the
 *	predicate kthread with a spinlock held: it must be fast and must not
 *	sleep.  It may call spindle_release(), and send: spindle_reserve()
 *	with a timeout of 0, spindle_mark_ready(), spindle_void().
 * @state_change: the group changes views, failed or went down (enum
 *	spindle_group_state).  Same context rules as @deliver.
 * @view: optional: a new view, after every message of the old one (every
 *	message delivered before it was delivered at every member of the new
 *	view).  Same context rules as @deliver.  Reservations made before it
 *	are void: spindle_mark_ready() and spindle_void() say -ESTALE; those
 *	made from it on belong to the new view.
 */
struct spindle_consumer_ops {
	void (*deliver)(struct spindle_consumer *c, void *priv,
			const struct spindle_msg *msgs, unsigned int n);
	void (*state_change)(struct spindle_consumer *c, void *priv,
			     enum spindle_group_state state);
	void (*view)(struct spindle_consumer *c, void *priv,
		     const struct spindle_view_rec *v);
};

/*
 * spindle_consumer_cfg.flags:
 * SPINDLE_CONSUMER_EXCLUSIVE: the subgroup is this consumer's alone on
 *	this member: no other consumer attaches and /dev/spindleN of the
 *	subgroup does not open (EBUSY) while it is attached, and it attaches
 *	only where there is neither (EBUSY).  For a consumer whose messages
 *	no one else here may read or send, such as a block device's.  Kernel
 *	code that calls spindle_reserve() without attaching is not kept out,
 *	nor are other members: each holds its own subgroup alone or not.
 */
#define SPINDLE_CONSUMER_EXCLUSIVE	BIT(0)
#define SPINDLE_CONSUMER_FLAGS		SPINDLE_CONSUMER_EXCLUSIVE

/**
 * struct spindle_consumer_cfg - how a consumer attaches
 * @ops: its callbacks; ->deliver is required
 * @priv: passed back to them
 * @flags: SPINDLE_CONSUMER_*; any other bit is refused (EINVAL)
 *
 * Fields that come later mean, when zero, what attaching meant before
 * them: a caller that fills this with a designated initializer keeps
 * building and behaving as it did.
 */
struct spindle_consumer_cfg {
	const struct spindle_consumer_ops *ops;
	void *priv;
	u32 flags;
};

/**
 * struct spindle_subgroup_attr - what a subgroup looks like
 * @group_id: group
 * @subgroup_id: subgroup
 * @self_id: this node's member id
 * @mode: SPINDLE_MODE_ORDERED or SPINDLE_MODE_UNORDERED
 * @window: slots per sender ring
 * @max_msg: largest message
 * @nmembers: members
 * @nsenders: senders
 * @my_rank: this node's sender rank, or -1
 * @state: the group's state
 * @blk_mib: the configuration's block device size (spindle_blk), 0: none
 * @joined: this member came (back) into a running group: what was
 *	delivered before it joined never reached it.  Known once @state has
 *	left SPINDLE_GROUP_CONNECTING (set before that, read after it);
 *	while connecting, a member cannot yet tell a founder from a joiner
 */
struct spindle_subgroup_attr {
	u32 group_id;
	u32 subgroup_id;
	u32 self_id;
	u32 mode;
	u32 window;
	u32 max_msg;
	u32 nmembers;
	u32 nsenders;
	s32 my_rank;
	enum spindle_group_state state;
	u32 blk_mib;
	bool joined;
};

struct spindle_subgroup *spindle_subgroup_get(u32 group_id, u32 subgroup_id);
void spindle_subgroup_put(struct spindle_subgroup *sub);
void spindle_subgroup_attr(struct spindle_subgroup *sub, struct spindle_subgroup_attr *attr);

int spindle_reserve(struct spindle_subgroup *sub, u32 want, u64 *first,
		    long timeout);
void *spindle_slot(struct spindle_subgroup *sub, u64 pos);
int spindle_mark_ready(struct spindle_subgroup *sub, u64 pos, u32 len);
int spindle_void(struct spindle_subgroup *sub, u64 pos);

struct spindle_consumer *spindle_attach(struct spindle_subgroup *sub,
					const struct spindle_consumer_cfg *cfg);
bool spindle_consumer_whole(const struct spindle_consumer *c);
void spindle_release(struct spindle_consumer *c, u32 n);
void spindle_detach(struct spindle_consumer *c);

#endif /* SPINDLE_KAPI_H */
