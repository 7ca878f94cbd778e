/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libspindle: a small C library over the Spindle ABI (linux/spindle.h).
 *
 *   configuration	spindle_cfg_parse() reads the text format
 *			(Documentation/operations.rst, spindlectl(8)),
 *			spindle_up() / spindle_down() / spindle_group_info()
 *			talk to /dev/spindle_ctl.
 *   a subgroup		spindle_open() opens /dev/spindleN for a group and
 *			subgroup and maps every sender's ring.
 *   sending		spindle_get_slot(h, timeout, &p); build the message
 *			at p; spindle_commit(h, len).  Commits are marked ready in
 *			batches; spindle_flush() marks what is pending now.
 *			After spindle_use_producer(), a commit is a store to
 *			the mapped producer page instead: no system call while
 *			the kernel's thread runs; while it sleeps, a wake-up
 *			call once h->batch commits wait, before blocking on a
 *			full ring, and in spindle_flush().
 *			A view change voids the slots handed out before it
 *			(h->stale counts the times): a message built after
 *			the view record must be in a slot taken after it.
 *			The producer page sees to that itself; with SEND
 *			calls, the handle that reads the record drops the
 *			slots it reserved ahead, so send through the handle
 *			that receives.
 *   receiving		spindle_subscribe() makes the file a consumer: from
 *			then on every delivered message waits for it.
 *			n = spindle_recv(h, timeout); h->descs[0..n) describe
 *			the messages, spindle_msg_data() finds them in place;
 *			they stay valid until the next spindle_recv(), which
 *			releases them; spindle_done() releases them without
 *			taking more.  Held messages hold their senders' slots.
 *
 * Every function that can fail returns 0 or a count on success and -errno
 * on failure (errno itself is not the result); where an error needs words,
 * they go into the caller's buffer.  The sending and receiving fast paths
 * are inline below: no call, no system call, while the ring has room.
 */
#ifndef LIBSPINDLE_H
#define LIBSPINDLE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/spindle.h>

#include "barrier.h"

#ifdef __cplusplus
extern "C" {
#endif

struct spindle_cfg_subgroup {
	uint32_t id;
	uint32_t window;
	uint32_t max_msg;
	uint32_t mode;
	uint32_t nmembers;
	uint32_t nsenders;
	uint32_t members[SPINDLE_MAX_MEMBERS];
	uint32_t senders[SPINDLE_MAX_MEMBERS];
	uint32_t blk_mib;		/* spindle_blk's device, MiB; 0: none */
};

struct spindle_cfg {
	uint32_t group_id;
	uint32_t flags;			/* SPINDLE_GROUP_* */
	uint32_t self_id;		/* SPINDLE_SELF_AUTO by default */
	uint32_t nmembers;
	uint32_t nsubgroups;
	struct spindle_member_cfg members[SPINDLE_MAX_MEMBERS];
	struct spindle_cfg_subgroup subgroups[SPINDLE_MAX_SUBGROUPS];
};

int spindle_cfg_parse(const char *path, struct spindle_cfg *cfg,
		      char *err, size_t errlen);
int spindle_cfg_parse_text(const char *text, struct spindle_cfg *cfg,
			   char *err, size_t errlen);
const char *spindle_cfg_err_name(uint32_t field);
int spindle_parse_addr(const char *s, uint16_t default_port,
		       struct spindle_member_cfg *m);

int spindle_ctl_open(void);
int spindle_up(int ctl, const struct spindle_cfg *cfg, uint32_t *self_id,
	       char *err, size_t errlen);
int spindle_down(int ctl, uint32_t group_id, uint32_t timeout_ms);

struct spindle_group_status {
	struct spindle_ctl_group_info info;
	struct spindle_member_info members[SPINDLE_MAX_MEMBERS];
	struct spindle_subgroup_info subgroups[SPINDLE_MAX_SUBGROUPS];
};

int spindle_group_info(int ctl, uint32_t group_id, uint32_t index,
		       struct spindle_group_status *st);
const char *spindle_group_state_name(uint32_t state);
const char *spindle_peer_state_name(uint32_t state);

/* Find /dev/spindleN of a group's subgroup (through sysfs). */
int spindle_find_device(uint32_t group_id, uint32_t subgroup_id,
			char *path, size_t len);

struct spindle_handle {
	int fd;
	struct spindle_info info;
	struct spindle_ring_info rings[SPINDLE_MAX_MEMBERS];
	void *ring[SPINDLE_MAX_MEMBERS];	/* mapped rings, by sender rank */
	/* sending */
	uint64_t res_next;			/* next reserved slot to hand out */
	uint32_t res_left;			/* reserved, not yet handed out */
	uint32_t batch;				/* commits marked per call */
	uint32_t ncommit;			/* committed, not yet marked */
	uint32_t *lens;				/* [window] */
	uint64_t send_calls;
	uint64_t wake_calls;
	uint64_t stale;				/* view changes that voided sends */
	/* the producer page, after spindle_use_producer() */
	struct spindle_producer *prod;
	uint32_t *prod_lens;
	uint64_t prod_next;			/* positions handed out */
	uint64_t prod_tail;			/* positions committed */
	uint64_t prod_rung;			/* prod_tail at the last wake-up call */
	/* receiving */
	struct spindle_desc *descs;
	uint32_t max_descs;
	uint64_t recv_calls;
	/* the producer page's window found full, and the time spent waiting */
	uint64_t window_waits;
	uint64_t window_wait_ns;
};

int spindle_open(struct spindle_handle *h, uint32_t group_id,
		 uint32_t subgroup_id, int oflags);
int spindle_open_path(struct spindle_handle *h, const char *path, int oflags);
void spindle_close(struct spindle_handle *h);

int spindle_use_producer(struct spindle_handle *h);
int spindle_flush(struct spindle_handle *h);

/* the slow paths of the two below: not for callers */
int __spindle_get_slot_slow(struct spindle_handle *h, int timeout_ms, void **slot);
int __spindle_producer_ring(struct spindle_handle *h);

/* Byte address of ring position @pos of this node's own ring. */
static inline void *__spindle_slot_at(const struct spindle_handle *h, uint64_t pos)
{
	return (char *)h->ring[h->info.my_rank] + (pos % h->info.window) * h->info.slot_size;
}

/**
 * spindle_get_slot - the next slot to build a message in
 * @h: handle of a subgroup this node sends in, opened O_RDWR
 * @timeout_ms: how long to wait for a free slot; -1 forever
 * @slot: out: max_msg bytes to build the message in (NULL on failure)
 *
 * Return: 0; -EAGAIN or -ETIMEDOUT (no free slot in time), -EPERM (this
 * node does not send here), -EIO / -ENOTCONN (the group failed / is down).
 */
static inline int spindle_get_slot(struct spindle_handle *h, int timeout_ms, void **slot)
{
	/* producer page: a position the kernel already allows */
	if (h->prod && spindle_smp_load_acquire(&h->prod->limit) > h->prod_next) {
		*slot = __spindle_slot_at(h, h->prod_next++);
		return 0;
	}
	/* SEND calls: a slot reserved ahead */
	if (!h->prod && h->res_left) {
		h->res_left--;
		*slot = __spindle_slot_at(h, h->res_next++);
		return 0;
	}
	return __spindle_get_slot_slow(h, timeout_ms, slot);
}

/**
 * spindle_commit - the last slot from spindle_get_slot() holds @len bytes
 * @h: handle
 * @len: message length, or SPINDLE_LEN_VOID to give the slot up
 *
 * Commits are marked ready h->batch at a time, and by spindle_flush().
 * Return: 0, -EINVAL (no slot handed out), or the -errno of the SEND call
 * or wake-up call that marked the batch.
 */
static inline int spindle_commit(struct spindle_handle *h, uint32_t len)
{
	if (h->prod) {
		if (h->prod_tail == h->prod_next)
			return -EINVAL;
		h->prod_lens[h->prod_tail % h->info.window] = len;
		h->prod_tail++;
		/* the slot and its length before the tail the kernel reads */
		spindle_smp_store_release(&h->prod->tail, h->prod_tail);
		if (h->prod_tail - h->prod_rung >= h->batch)
			return __spindle_producer_ring(h);
		return 0;
	}
	if (h->ncommit >= h->info.window)
		return -EINVAL;		/* more commits than slots */
	h->lens[h->ncommit++] = len;
	if (h->ncommit >= h->batch)
		return spindle_flush(h);
	return 0;
}

int spindle_subscribe(struct spindle_handle *h);
int spindle_recv(struct spindle_handle *h, int timeout_ms);
int spindle_done(struct spindle_handle *h);

static inline const void *spindle_msg_data(const struct spindle_handle *h,
					   const struct spindle_desc *d)
{
	return (const char *)h->ring[d->rank] + d->offset;
}

/*
 * A view record among the descriptors RECV returned: 1 and *@v filled in
 * if @d is one (SPINDLE_DESC_VIEW), else 0.  The record is copied out, as
 * the uapi says, rather than read through a cast pointer.
 */
static inline int spindle_view_of(const struct spindle_desc *d,
				  struct spindle_view_desc *v)
{
	if (!(d->flags & SPINDLE_DESC_VIEW))
		return 0;
	memcpy(v, d, sizeof(*v));
	return 1;
}

uint32_t spindle_crc32c(uint32_t crc, const void *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* LIBSPINDLE_H */
