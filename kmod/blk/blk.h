/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spindle_blk: a block device replicated through a Spindle subgroup.
 *
 * Every member of the subgroup keeps a whole copy (a RAM store).  A write
 * is multicast, in one or more messages (wire.h), and applied to the copy
 * of every member when it is delivered, in the subgroup's total order:
 * the copies agree because they apply the same writes in the same order.
 * The submitter's request completes when its own write is delivered here,
 * so an acknowledged write is in every member's copy that is still in the
 * view.  Reads are served from the local copy.
 */
#ifndef SPINDLE_BLK_H
#define SPINDLE_BLK_H

#include <linux/blk-mq.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include "spindle_kapi.h"
#include "wire.h"

/*
 * A device's states; transitions are checked (sblk_move):
 *   LIVE  -> FAILED (the group failed or went down), STALE (its copy
 *            lacks writes delivered here: this member came back into a
 *            running group, or the device was made after deliveries it
 *            never had), DYING
 *   STALE -> FAILED, DYING;  FAILED -> DYING
 * Only LIVE serves I/O; the others fail it with BLK_STS_IOERR.  A STALE
 * device still consumes its deliveries, so that the others go on.
 */
enum sblk_state {
	SBLK_LIVE,
	SBLK_STALE,
	SBLK_FAILED,
	SBLK_DYING,
};

/* A request's part in the device (the blk-mq pdu). */
struct sblk_cmd {
	struct list_head node;		/* on sblk->inflight, then a done list */
	u64 tag;			/* its write number, in every message */
	blk_status_t status;		/* what it completes with */
	bool sending;			/* its sender still reads the request */
	bool decided;			/* status is final */
};

struct sblk {
	int index;			/* /dev/spindle-blkN */
	u32 group_id;
	u32 subgroup_id;
	struct spindle_subgroup *sub;
	struct spindle_consumer *cons;
	struct spindle_subgroup_attr attr;
	struct sp_blk_geom geom;
	u8 *store;			/* the copy: capacity sectors */

	struct blk_mq_tag_set tags;
	struct gendisk *disk;

	struct mutex send_lock;		/* one write's messages at a time */
	u64 tag_next;			/* write numbers (send_lock) */

	/* under lock */
	spinlock_t lock;
	enum sblk_state state;
	struct list_head inflight;	/* being sent or sent, in that order */
	u64 view_gen;			/* views seen: a send spans none */

	/* the predicate thread's (->deliver), no lock */
	struct sp_blk_rx *rx;		/* [nsenders] */
	u8 *asm_buf;			/* [nsenders][max write]: reassembly */

	/* counters, read by the knob */
	atomic64_t applied;		/* writes applied to the copy */
	atomic64_t refused;		/* messages that failed the check */
	atomic64_t failed;		/* requests failed back */
};

/* apply.c: the consumer side */
extern const struct spindle_consumer_ops sblk_consumer_ops;
const char *sblk_state_name(enum sblk_state s);
bool sblk_move(struct sblk *b, enum sblk_state to);
void sblk_fail_all(struct sblk *b, struct list_head *done);
void sblk_end_list(struct list_head *done);

/* disk.c: the block side */
int sblk_disk_add(struct sblk *b, int major);
void sblk_disk_del(struct sblk *b);

#endif /* SPINDLE_BLK_H */
