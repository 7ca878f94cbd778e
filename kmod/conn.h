/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One connection to a peer: its rdma_cm id, its own PD and RC QP, the MRs
 * registered on that QP, the keys the peer gave on it, and every completion
 * entry its work requests carry.  A peer has at most one current
 * connection; the ones it had before are torn down beside it.
 *
 * Lifetime (the order nvme-rdma and rtrs use):
 *
 *	made	(connect work or a connect request; receives posted before
 *		 anyone else sees the QP)
 *	  -> CONNECTING -> ESTABLISHED -> HELLO -> READY	(peer_lock)
 *	  -> DOWN	(any context: failed, replaced, removed, torn down)
 *	reaped	(process context, spindle_conn_reap()): the predicate thread
 *		 lets go of it (two passes), the id is disconnected and
 *		 destroyed (no handler runs after that), the QP goes to the
 *		 error state and is drained with marker requests that the
 *		 predicate thread polls, then the QP is destroyed, the MRs
 *		 deregistered (the peer's keys die with them) and the memory
 *		 freed.
 *
 * Completions find their connection through the ib_cqe they carry, never
 * through wc->qp: a completion of a connection that is not the predicate
 * thread's current one is dropped, and no connection is freed before
 * everything it posted has completed.  Only the predicate thread posts on
 * a connection once it is visible, except the drain markers, posted after
 * the thread let go of it.
 */
#ifndef SPINDLE_CONN_H
#define SPINDLE_CONN_H

#include <linux/completion.h>
#include <linux/list.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "proto/config.h"
#include "region.h"

struct spindle_group;
struct spindle_peer;
struct spindle_conn;

/*
 * Writes in flight per connection.  Passes take tens of microseconds and
 * a software device acknowledges in milliseconds, so a pass's writes to a
 * peer (each subgroup's blocks and a row, split at memory chunks) must
 * fit beside many earlier passes' still in flight.  Each entry costs a
 * chain entry and a staging slot (peer->stage); the device must allow one
 * more, for the drain marker (group.c checks max_qp_wr at up); hello.c
 * keeps one write's pieces within half of it.
 */
#define SPINDLE_SQ_DEPTH	512
/*
 * One write in every SIGNAL_EVERY is signaled (and the last of a chain
 * when views change or the group goes down): its completion acknowledges
 * all before it, and a completion per write would cost as much as the
 * write on a software device.
 */
#define SPINDLE_SIGNAL_EVERY	64
#define SPINDLE_RQ_DEPTH	8	/* receives with buffers: the hello */
#define SPINDLE_DOORBELLS	256	/* zero-length receives: doorbells */
#define SPINDLE_MSG_BUF		4096	/* one hello fragment */
/* a connection's completion queue entries, drain markers included */
#define SPINDLE_CONN_CQES	(SPINDLE_SQ_DEPTH + 1 + SPINDLE_RQ_DEPTH + \
				 SPINDLE_DOORBELLS + 1)
/*
 * Connections of one peer alive at once: the current one and one being
 * torn down (a new attempt waits, or is refused, until it is gone).  The
 * CQ has room for all of them.
 */
#define SPINDLE_PEER_CONNS	2

/* rdma_cm contexts start with this so one handler can tell them apart. */
enum spindle_cm_kind { SPINDLE_CM_LISTEN, SPINDLE_CM_CONN };

struct spindle_cm_ctx {
	enum spindle_cm_kind kind;
	struct spindle_group *g;
};

enum spindle_conn_state {
	SPINDLE_CONN_CONNECTING,	/* resolving, or request/reply in flight */
	SPINDLE_CONN_ESTABLISHED,	/* rdma_cm says so; no hello posted yet */
	SPINDLE_CONN_HELLO,		/* our registrations and hello posted */
	SPINDLE_CONN_READY,		/* both hellos through: writes flow */
	SPINDLE_CONN_DOWN,		/* to be reaped */
};

struct spindle_rxbuf {
	struct ib_cqe cqe;
	struct spindle_conn *conn;
	void *buf;
	u64 dma;
};

struct spindle_sig {
	struct ib_cqe cqe;
	struct spindle_conn *conn;
	u64 acks_to;			/* its completion: every entry before is done */
};

struct spindle_drain {
	struct ib_cqe cqe;
	struct completion done;
};

struct spindle_conn {
	struct spindle_cm_ctx ctx;
	struct spindle_peer *peer;
	struct list_head node;		/* on peer->conns (peer_lock) */
	enum spindle_conn_state state;	/* peer_lock */
	const char *why;		/* why it went DOWN */
	int qp_event;			/* a fatal QP event, or 0 (any context) */
	const char *fail_later;		/* the thread failed it holding a lock */
	bool rejoin;			/* made for a member outside the view */
	bool peer_in_view;		/* its connect message: SPINDLE_CM_IN_VIEW */
	u64 ready_ns;			/* when the thread found it READY */
	u64 born;			/* its number among the group's connections */
	struct rdma_cm_id *cm_id;
	struct ib_pd *pd;
	struct ib_qp *qp;		/* published under peer_lock, set once */

	/* send queue accounting: the predicate thread only */
	u64 sq_posted;
	u64 sq_acked;
	struct spindle_sig *sigs;	/* [SPINDLE_SQ_DEPTH] */
	struct ib_cqe err_cqe;		/* unsignaled WRs: only errors complete */
	struct ib_cqe bell_cqe;		/* the peer's counter pushes */
	u32 bells_owed;			/* doorbell receives to post again */
	u32 split_max;			/* most WRs one engine write becomes */
	u64 blk_inflight[SP_MAX_SUBGROUPS];	/* sq position after a block push */
	u64 row_sent;			/* g->row_gen last queued */
	u64 row_vc_sent;		/* g->vc.row_ver last queued */
	u64 row_inflight;		/* sq position after my last row push */
	u64 row_due;			/* ns: a newer row has waited since */
	bool row_due_said;		/* and the wait was logged */
	struct spindle_drain sdrain;
	struct spindle_drain rdrain;

	/* MRs registered on this QP: ours to write from, the peer's to write into */
	struct spindle_mrset l_meta;
	struct spindle_mrset l_pay[SP_MAX_SUBGROUPS];
	struct spindle_mrset l_stage;
	struct spindle_mrset r_meta;	/* over in_meta[idx] */
	struct spindle_mrset r_pay[SP_MAX_SUBGROUPS];
	/* where the peer told us to write, on this connection */
	struct spindle_rregion w_meta;
	struct spindle_rregion w_pay[SP_MAX_SUBGROUPS];

	/* key exchange: the predicate thread only, once visible */
	void *hello;
	u64 hello_dma;
	struct spindle_sig hello_sig;
	struct spindle_rxbuf rx[SPINDLE_RQ_DEPTH];
	void *hello_ents;		/* accumulating fragments */
	u32 hello_total;
	u32 hello_got;
	bool hello_done;		/* theirs arrived and checked */
};

bool spindle_conn_set_state(struct spindle_conn *conn, enum spindle_conn_state to);
struct spindle_conn *spindle_conn_alloc(struct spindle_peer *peer, bool rejoin);
int spindle_conn_create_qp(struct spindle_conn *conn, struct rdma_cm_id *id);
void spindle_conn_down(struct spindle_conn *conn, const char *why);
void spindle_conn_fence(struct spindle_conn *conn);
void spindle_conn_fail_later(struct spindle_conn *conn, const char *why);
void spindle_conn_reap(struct spindle_conn *conn);
void spindle_conn_free(struct spindle_conn *conn);
void spindle_conn_post_recv(struct spindle_conn *conn, struct spindle_rxbuf *rx);
void spindle_conn_post_bells(struct spindle_conn *conn);

/* hello.c: the key exchange */
int spindle_hello_send(struct spindle_conn *conn);
int spindle_hello_take(struct spindle_conn *conn, void *buf, u32 len);
int spindle_conn_make_ready(struct spindle_conn *conn);

#endif /* SPINDLE_CONN_H */
