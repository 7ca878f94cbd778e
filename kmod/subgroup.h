/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A subgroup this node is in: its protocol engine (proto/engine.c), its
 * consumers (the in-kernel API of spindle_kapi.h, and /dev/spindleN's
 * files), its producer page.  Reference counted: open files outlive the
 * group.
 */
#ifndef SPINDLE_SUBGROUP_H
#define SPINDLE_SUBGROUP_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "spindle_kapi.h"
#include "proto/config.h"
#include "proto/engine.h"
#include "proto/view.h"

struct device;
struct spindle_group;
struct spindle_region;

struct spindle_consumer {
	struct list_head node;		/* on sub->consumers */
	struct spindle_subgroup *sub;
	const struct spindle_consumer_ops *ops;
	void *priv;
	atomic64_t released;		/* absolute descriptor count */
	u64 given;			/* absolute count handed to it */
	bool missed;			/* data was delivered before it came */
	bool exclusive;			/* it holds the subgroup alone */
};

struct spindle_subgroup {
	struct kref ref;
	struct spindle_group __rcu *g;	/* NULL once the group is gone (RCU) */
	u32 index;			/* in the configuration */
	u32 id;
	u32 group_id;
	u32 self_id;
	enum spindle_group_state state;	/* the group's, as last told */
	int minor;
	struct device *dev;
	struct sp_sub eng;
	struct sp_sub_cfg cfg;
	spinlock_t lock;		/* producer state of eng; g */
	wait_queue_head_t send_wq;	/* free slots, state changes */
	wait_queue_head_t recv_wq;	/* deliveries, state changes */

	spinlock_t cons_lock;		/* consumers and their queues */
	struct list_head consumers;
	u32 nconsumers;
	u32 nfiles;			/* open files of /dev/spindleN */
	bool exclusive;			/* a consumer holds it alone */
	struct spindle_msg *batch;	/* [log_size], the kthread only */
	struct sp_desc *descs;		/* [log_size], the kthread only */

	struct spindle_region *pay[SP_MAX_MEMBERS];	/* by configured rank */

	/*
	 * Views.  The engine is rebuilt for each view, with the members and
	 * senders that remain; users see configured sender ranks, positions
	 * and message numbers that go on across views (all under lock).
	 */
	s32 my_rank;			/* configured sender rank, or -1 */
	u32 cfg_rank[SP_MAX_MEMBERS];	/* configured rank of each engine rank */
	u64 pos_base;			/* user position of engine position 0: a lap */
	struct sp_bases base;		/* the group's bases of this subgroup */
	u64 view_done;			/* view whose trim was applied */
	u64 own_delivered;		/* my data messages delivered, all views */
	u64 handed;			/* data delivered, all views: to the
					 * consumers, or dropped at a trim with
					 * none (cons_lock)
					 */
	bool joined;			/* came into a running group: no history */
	bool prod_stale;		/* a view change voided the page */

	/* the producer page (producer.c), under lock */
	struct spindle_region *prod_reg;
	const void *prod_owner;		/* the file that holds it */
	u64 prod_tail;			/* positions taken from it */
	u64 prod_limit;			/* last limit written to it */
	bool prod_broken;
	u32 rank_id[SP_MAX_MEMBERS];	/* member id of each rank */
	u32 member_idx[SP_MAX_MEMBERS];	/* group member index by sub position */

	/* counters kept outside the engine */
	u64 writes_posted;
	u64 bytes_posted;
	u64 writes_kind[3];		/* by enum sp_wr_kind */
	atomic64_t send_calls;
	atomic64_t recv_calls;
	atomic64_t recv_msgs;
	atomic64_t hist_recv_call[SP_HIST_BUCKETS];
	atomic64_t pending_release;	/* bumped by consumers: recompute */
};

/* The subgroup's group, sub->lock held: NULL once the group is gone. */
static inline struct spindle_group *spindle_sub_group(struct spindle_subgroup *sub)
{
	return rcu_dereference_protected(sub->g, lockdep_is_held(&sub->lock));
}

enum spindle_group_state spindle_sub_state(struct spindle_subgroup *sub);
int spindle_state_errno(enum spindle_group_state state);
int spindle_mark_errno(struct spindle_subgroup *sub, u64 pos);
void spindle_sub_kick(struct spindle_subgroup *sub);
int spindle_sub_file_open(struct spindle_subgroup *sub);
void spindle_sub_file_close(struct spindle_subgroup *sub);

/* producer.c */
size_t spindle_producer_size(const struct spindle_subgroup *sub);
int spindle_producer_attach(struct spindle_subgroup *sub, const void *owner);
void spindle_producer_detach(struct spindle_subgroup *sub, const void *owner);
int spindle_producer_take(struct spindle_subgroup *sub);
void spindle_producer_limit(struct spindle_subgroup *sub);
bool spindle_producer_sleep(struct spindle_subgroup *sub, bool sleep);
void spindle_producer_reset(struct spindle_subgroup *sub);
int spindle_producer_resync(struct spindle_subgroup *sub);

/* subdev.c */
int spindle_subdev_init(void);
void spindle_subdev_exit(void);
int spindle_subdev_add(struct spindle_subgroup *sub);
void spindle_subdev_del(struct spindle_subgroup *sub);

/* deliver.c: handing batches to consumers */
int spindle_sub_deliver(struct spindle_subgroup *sub, u32 max);
bool spindle_sub_deliver_upto(struct spindle_subgroup *sub, const u64 *trim);
void spindle_sub_deliver_view(struct spindle_subgroup *sub, u64 view, u64 members);
bool spindle_sub_quiet(struct spindle_subgroup *sub);
void spindle_sub_consumers_reset(struct spindle_subgroup *sub);

#endif /* SPINDLE_SUBGROUP_H */
