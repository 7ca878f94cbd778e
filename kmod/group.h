/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A group: one per SPINDLE_CTL_UP, on the global list until torn down.  It
 * owns the CQ, the listener, the peers, the predicate kthread (thread.c)
 * and the memory regions; its views are view.c's, over rows.c's rows.
 */
#ifndef SPINDLE_GROUP_H
#define SPINDLE_GROUP_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include <linux/spindle.h>
#include "proto/config.h"
#include "proto/lazy.h"
#include "proto/layout.h"
#include "proto/vc.h"
#include "proto/view.h"
#include "conn.h"
#include "fault.h"

struct dentry;
struct spindle_peer;
struct spindle_region;
struct spindle_subgroup;
struct user_struct;

/* g->cq_event while the CQ is sound (ib_event_type has no such value) */
#define SPINDLE_CQ_FINE		(-1)

struct spindle_group {
	struct list_head node;		/* on spindle_groups */
	u32 id;
	struct sp_group_cfg cfg;
	u32 me;				/* my member index */
	u32 cfg_hash;
	enum spindle_group_state state;
	s32 fault_member;		/* member id whose writes we rejected */
	struct spindle_cm_ctx listen_ctx;
	struct rdma_cm_id *listen_id;
	struct ib_device *ibdev;
	struct ib_cq *cq;		/* every connection's, polled by the thread */
	struct list_head zombies;	/* connections that did not drain (peer_lock) */
	int cq_event;			/* SPINDLE_CQ_FINE, or the event that broke the CQ */
	struct ib_wc wc[16];		/* the predicate thread's CQ batch */
	spinlock_t peer_lock;		/* peer states, cm ids, state */
	struct spindle_peer *peers[SP_MAX_MEMBERS];	/* by member index */
	u32 npeers_ready;
	struct spindle_subgroup *subs[SP_MAX_SUBGROUPS];	/* by config index */
	struct sp_meta_layout layout[SP_MAX_MEMBERS];	/* by member index */
	struct spindle_region *out_meta;
	struct spindle_region *in_meta[SP_MAX_MEMBERS];
	struct spindle_region *in_pay[SP_MAX_MEMBERS][SP_MAX_SUBGROUPS];
	struct spindle_region *out_pay[SP_MAX_SUBGROUPS];

	struct task_struct *thread;
	bool thread_stopped;		/* for good: nothing polls the CQ */
	atomic64_t passes;		/* predicate passes run */
	wait_queue_head_t pass_wq;	/* spindle_thread_sync() */
	atomic_t doorbell;
	bool stopping;			/* teardown: stop publishing */
	u64 busy_ns;
	u64 idle_ns;
	u64 pass_max_ns;		/* the longest pass */
	struct sp_lazy lazy;		/* lazy block changes left (thread.c) */
	u64 hist_pass[SP_HIST_BUCKETS];	/* passes by length: log2 of 65.5 us units */
	struct dentry *dbg;

	/* views (view.c): the kthread only, unless said otherwise */
	struct sp_vc vc;
	bool vc_on;			/* running: the group was ACTIVE once */
	u64 view_id;			/* for readers: READ_ONCE */
	u64 view_members;
	unsigned long lost;		/* bit i: member i's connection failed (any context) */
	u32 row_bytes;			/* my row header and view area */
	struct sp_row_hdr rows[SP_MAX_MEMBERS];	/* peers' rows, as accepted */
	void *row_copy[SP_MAX_MEMBERS];	/* peers' rows and areas, as accepted */
	struct sp_bases bases[SP_MAX_SUBGROUPS];	/* this view's, of every subgroup */
	void *row_tmp;
	u64 hb_at[SP_MAX_MEMBERS];	/* ns: when its heartbeat last moved */
	u64 rows_taken[SP_MAX_MEMBERS];	/* rows accepted from it */
	u32 rows_bad[SP_MAX_MEMBERS];	/* reads since, torn or unwritten */
	sp_mask_t hb_scope;		/* whose heartbeats were watched last pass */
	u64 gone_inc[SP_MAX_MEMBERS];	/* incarnation a view took out */
	u64 hb_next;			/* ns: when mine moves next */
	u64 row_gen;			/* bumped when my row or area changes */
	u64 row_gen_vc;			/* vc.row_ver as of row_gen */
	u64 row_csum_gen;		/* row_gen the checksum is of */
	u64 change_start;		/* ns: the running view change began */
	u64 change_conns;		/* conns_made as it began */
	atomic64_t conns_made;		/* connections made so far (conn->born) */
	u32 hostile;			/* enum spindle_hostile (debugfs, tests) */
	u32 hostile_peer;		/* SPINDLE_HOSTILE_FOREIGN_KEY: whom, */
	u32 hostile_rkey;		/* with which key */
	u64 hostile_addr;		/* at which address */
	struct spindle_fault fault;	/* phase-exact faults (debugfs, tests) */

	/* pinned memory, charged to RLIMIT_MEMLOCK of who brought it up */
	size_t pinned;			/* bytes of every region it made */
	struct user_struct *user;	/* charged, or NULL (CAP_IPC_LOCK) */
	unsigned long charged;		/* pages */
};

extern struct mutex spindle_groups_lock;
extern struct list_head spindle_groups;

int spindle_group_up(struct sp_group_cfg *cfg, struct sockaddr_storage *self,
		     struct spindle_group **out);
void spindle_group_down(struct spindle_group *g, unsigned int timeout_ms);
struct spindle_group *spindle_group_find(u32 id);
bool spindle_group_id_busy(u32 id);
void spindle_group_leave(struct spindle_group *g);
void spindle_group_down_all(unsigned int timeout_ms);
void spindle_group_fail(struct spindle_group *g, s32 member_idx,
			const char *why);
void spindle_group_remove_device(struct ib_device *ibdev);
void spindle_ring_doorbell(struct spindle_group *g);
void spindle_group_check_active(struct spindle_group *g);
bool spindle_group_move(struct spindle_group *g, enum spindle_group_state to);
bool spindle_group_owes(struct spindle_group *g, sp_mask_t who, bool lazy);

/* thread.c: the predicate kthread */
int spindle_thread_fn(void *data);
void spindle_thread_sync(struct spindle_group *g);

/* view.c */
int spindle_view_init(struct spindle_group *g);
void spindle_view_free(struct spindle_group *g);
void spindle_view_stop(struct spindle_group *g, const char *why);
int spindle_view_pass(struct spindle_group *g);
bool spindle_view_engines_run(const struct spindle_group *g);
void spindle_sub_init_view(struct spindle_subgroup *sub);
void spindle_view_peer_ready(struct spindle_group *g, u32 idx);
bool spindle_view_joining(struct spindle_group *g);

/* rows.c */
void spindle_view_start(struct spindle_group *g);
void spindle_view_push_rows(struct spindle_group *g);
void spindle_member_lost(struct spindle_group *g, u32 idx, const char *why);
u64 spindle_row_csum(struct spindle_group *g, void *row);

#endif /* SPINDLE_GROUP_H */
