/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Spindle internal declarations shared by the files of spindle.ko.
 *
 * Objects and their lifetimes:
 *
 *   spindle_group	one per SPINDLE_CTL_UP; on the global list until
 *			torn down.  Owns the PD, the CQ, the listener, the
 *			peers, the predicate kthread and the memory regions.
 *   spindle_peer	one per other member: its rdma_cm id and RC QP, the
 *			MRs it writes into or we write from, the keys it gave.
 *   spindle_sg		one per subgroup this node is in: the protocol engine
 *			(kmod/proto/engine.c), its consumers and /dev/spindleN.
 *			Reference counted: open files outlive the group.
 *   spindle_region	page-aligned vmalloc_user memory, DMA-mapped for the
 *			group's device.  Reference counted: mmaps outlive it.
 *
 * Locks, outermost first:
 *   spindle_groups_lock (mutex)	the group list; control operations
 *   sg->cons_lock (spinlock)		the consumer list; consumers' callbacks
 *					run under it and may send
 *   sg->lock (spinlock, BHs off)	the engine's producer state; senders
 *					take it from process or softirq context
 *   group->peer_lock (spinlock, IRQs off) peer state changes from the CM
 * sg->g is read under RCU (spindle_sg_kick() may run anywhere): the group
 * is freed a grace period after every subgroup let go of it.
 * The predicate kthread is the only one that polls the CQ, runs the
 * engine's predicates and posts writes.  It posts after dropping every
 * lock, except in the baseline (SPINDLE_GROUP_BASELINE, Derecho's way,
 * kept for comparison), which posts each step's writes under sg->lock.
 */
#ifndef SPINDLE_INTERNAL_H
#define SPINDLE_INTERNAL_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/kref.h>
#include <linux/rcupdate.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/socket.h>
#include <linux/scatterlist.h>
#include <linux/device.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include <linux/spindle.h>
#include "spindle_kapi.h"
#include "proto/config.h"
#include "proto/engine.h"
#include "proto/layout.h"
#include "proto/vc.h"
#include "region.h"
#include "conn.h"
#include "fault.h"

#define SPINDLE_PROTO_VERSION	1
#define SPINDLE_CM_MAGIC	0x53504e44	/* "SPND" */
#define SPINDLE_MAX_MINORS	256
/* g->cq_event while the CQ is sound (ib_event_type has no such value) */
#define SPINDLE_CQ_FINE		(-1)

/* ---- peers (peer.c) and their connections (conn.h) ---- */

struct spindle_peer {
	struct spindle_group *g;
	u32 idx;			/* member index in the configuration */
	u32 id;				/* member id */
	struct sockaddr_storage addr;
	bool active;			/* we connect, it accepts */
	int state;			/* enum spindle_peer_state (peer_lock) */
	u32 connects;			/* connections made or accepted (peer_lock) */
	bool rejoin;			/* left the view: may come back (peer_lock) */
	struct spindle_conn *cur;	/* the current connection, or NULL (peer_lock) */
	struct list_head conns;		/* connections not yet reaped (peer_lock) */
	u32 nconns;
	struct delayed_work connect_work;	/* the active side's attempts */
	struct work_struct reap_work;	/* tears down what went DOWN */

	/* the predicate thread's, refreshed at the start of every pass */
	struct spindle_conn *kc;	/* cur, once it has a QP */
	bool kc_ready;			/* kc is READY: writes may be queued (any reader) */
	u64 kc_inflight;		/* kc's writes not yet completed (any reader) */
	u32 kc_rkey;			/* debugfs "keys" (tests): what kc lets the */
	u64 kc_addr;			/* peer write first (any reader) */

	/* the writes of one predicate pass, posted as one chain */
	struct ib_rdma_wr *chain;	/* [SPINDLE_SQ_DEPTH] */
	struct ib_sge *chain_sge;
	u32 chain_len;
	struct spindle_region *stage;	/* snapshots of blocks being pushed */
	u32 stage_entry;
};

/* ---- subgroups (sg.c, sgdev.c) ---- */

struct spindle_consumer {
	struct list_head node;		/* on sg->consumers */
	struct spindle_sg *sg;
	const struct spindle_consumer_ops *ops;
	void *priv;
	atomic64_t released;		/* absolute descriptor count */
	u64 given;			/* absolute count handed to it */
};

struct spindle_sg {
	struct kref ref;
	struct spindle_group __rcu *g;	/* NULL once the group is gone (RCU) */
	u32 index;			/* in the configuration */
	u32 id;
	u32 group_id;
	u32 self_id;
	int state;			/* enum spindle_group_state */
	int minor;
	struct device *dev;
	struct sp_sg eng;
	struct sp_sg_cfg cfg;
	spinlock_t lock;		/* producer state of eng; g */
	wait_queue_head_t send_wq;	/* free slots, state changes */
	wait_queue_head_t recv_wq;	/* deliveries, state changes */

	spinlock_t cons_lock;		/* consumers and their queues */
	struct list_head consumers;
	u32 nconsumers;
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
	u64 pos_base;			/* user position of engine position 0 */
	u64 idx_base[SP_MAX_MEMBERS];	/* by configured rank: index of 0 */
	u64 seq_base;			/* ordered: seq of this view's first */
	u64 view_done;			/* view whose trim was applied */
	u64 own_delivered;		/* my data messages delivered, all views */
	bool prod_stale;		/* a view change voided the page */

	/* the producer page (producer.c), under lock */
	struct spindle_region *prod_reg;
	const void *prod_owner;		/* the file that holds it */
	u64 prod_tail;			/* positions taken from it */
	u64 prod_limit;			/* last limit written to it */
	bool prod_broken;
	u32 rank_id[SP_MAX_MEMBERS];	/* member id of each rank */
	u32 member_idx[SP_MAX_MEMBERS];	/* group member index by sg position */

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

/* The subgroup's group, sg->lock held: NULL once the group is gone. */
static inline struct spindle_group *spindle_sg_group(struct spindle_sg *sg)
{
	return rcu_dereference_protected(sg->g, lockdep_is_held(&sg->lock));
}

int spindle_sg_state(struct spindle_sg *sg);
int spindle_state_errno(int state);
int spindle_mark_errno(struct spindle_sg *sg, u64 pos);
void spindle_sg_kick(struct spindle_sg *sg);

/* producer.c */
size_t spindle_producer_size(const struct spindle_sg *sg);
int spindle_producer_attach(struct spindle_sg *sg, const void *owner);
void spindle_producer_detach(struct spindle_sg *sg, const void *owner);
int spindle_producer_take(struct spindle_sg *sg);
void spindle_producer_limit(struct spindle_sg *sg);
bool spindle_producer_sleep(struct spindle_sg *sg, bool sleep);
void spindle_producer_reset(struct spindle_sg *sg);
int spindle_producer_resync(struct spindle_sg *sg);

/* sgdev.c */
int spindle_sgdev_init(void);
void spindle_sgdev_exit(void);
int spindle_sgdev_add(struct spindle_sg *sg);
void spindle_sgdev_del(struct spindle_sg *sg);

/* ---- groups (group.c) ---- */

struct spindle_group {
	struct list_head node;		/* on spindle_groups */
	u32 id;
	struct sp_group_cfg cfg;
	u32 me;				/* my member index */
	u32 cfg_hash;
	int state;			/* enum spindle_group_state */
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
	struct spindle_sg *sgs[SP_MAX_SUBGROUPS];	/* by config index */
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
bool spindle_group_move(struct spindle_group *g, int to);

/* peer.c */
int spindle_bind(struct spindle_group *g, struct sockaddr_storage *self);
int spindle_listen(struct spindle_group *g);
int spindle_peer_init(struct spindle_group *g, u32 idx);
void spindle_peer_start(struct spindle_peer *peer);
void spindle_peer_stop(struct spindle_peer *peer, const char *why);
void spindle_peer_free(struct spindle_peer *peer);
void spindle_peer_allow_rejoin(struct spindle_peer *peer);
void spindle_peer_refresh(struct spindle_peer *peer);
int spindle_cm_handler_entry(struct rdma_cm_id *id, struct rdma_cm_event *ev);
void spindle_member_sockaddr(const struct sp_member_cfg *m,
			     struct sockaddr_storage *ss);
bool spindle_peer_connected(struct spindle_peer *peer, struct spindle_conn *conn);
void spindle_peer_conn_gone(struct spindle_peer *peer, bool established, bool rejoin);
void spindle_peer_conn_lost(struct spindle_peer *peer, const char *why,
			    bool established, bool rejoin);

/* thread.c: the predicate kthread */
int spindle_thread_fn(void *data);
void spindle_thread_sync(struct spindle_group *g);

/* xmit.c: the ib_verbs transport under the pass */
bool spindle_peer_ready(struct spindle_peer *peer);
u32 spindle_peer_writes(const struct spindle_peer *peer);
bool spindle_coalesces(const struct spindle_group *g);
void spindle_peer_queue(struct spindle_peer *peer, struct spindle_sg *sg,
			const struct sp_wr *w);
int spindle_peer_flush(struct spindle_peer *peer);
u32 spindle_queue_range(struct spindle_peer *peer,
			const struct spindle_mrset *lset, u64 loff,
			const struct spindle_rregion *rr, u64 roff, u32 len,
			bool bell, u32 imm);
void spindle_peer_queue_row(struct spindle_peer *peer, bool bell);
int spindle_poll_cq(struct spindle_group *g);
void spindle_flush_all(struct spindle_group *g);

/* deliver.c: handing batches to consumers */
int spindle_sg_deliver(struct spindle_sg *sg, u32 max);
bool spindle_sg_deliver_upto(struct spindle_sg *sg, const u64 *trim);
void spindle_sg_deliver_view(struct spindle_sg *sg, u64 view, u64 members);
bool spindle_sg_quiet(struct spindle_sg *sg);
void spindle_sg_consumers_reset(struct spindle_sg *sg);

/* view.c */
int spindle_view_init(struct spindle_group *g);
void spindle_view_free(struct spindle_group *g);
void spindle_view_start(struct spindle_group *g);
void spindle_view_stop(struct spindle_group *g, const char *why);
int spindle_view_pass(struct spindle_group *g);
bool spindle_view_engines_run(const struct spindle_group *g);
void spindle_view_push_rows(struct spindle_group *g);
void spindle_member_lost(struct spindle_group *g, u32 idx, const char *why);
u64 spindle_row_csum(struct spindle_group *g, void *row);
void spindle_sg_init_view(struct spindle_sg *sg);
void spindle_view_peer_ready(struct spindle_group *g, u32 idx);
bool spindle_view_joining(struct spindle_group *g);

/* debugfs.c */
void spindle_debugfs_init(void);
void spindle_debugfs_exit(void);
void spindle_debugfs_add(struct spindle_group *g);
void spindle_debugfs_del(struct spindle_group *g);

/* main.c */
struct spindle_ibdev {
	struct list_head node;		/* on spindle_devices */
	struct ib_device *ibdev;
};

extern struct mutex spindle_devices_lock;
extern struct list_head spindle_devices;
unsigned int spindle_nr_devices(void);
bool spindle_device_present(struct ib_device *ibdev);

/*
 * Copy a size-versioned ioctl argument (first field: __u32 size) in from
 * userspace: see the rules at the top of uapi/linux/spindle.h.
 */
int spindle_copy_arg(void *dst, size_t ksize, size_t min_size,
		     const void __user *uarg);

/* ctl.c */
long spindle_ctl_up(void __user *uarg);
long spindle_ctl_down(void __user *uarg);
long spindle_ctl_group_info(void __user *uarg);

#endif /* SPINDLE_INTERNAL_H */
