/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A peer: one other member of a group, and the connection to it that the
 * predicate thread writes through (conn.h has the connections themselves).
 */
#ifndef SPINDLE_PEER_H
#define SPINDLE_PEER_H

#include <linux/list.h>
#include <linux/socket.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include <linux/spindle.h>
#include "proto/config.h"
#include "conn.h"

struct spindle_group;
struct spindle_region;

struct spindle_peer {
	struct spindle_group *g;
	u32 idx;			/* member index in the configuration */
	u32 id;				/* member id */
	struct sockaddr_storage addr;
	bool active;			/* we connect, it accepts */
	enum spindle_peer_state state;	/* peer_lock */
	u32 connects;			/* connections made or accepted (peer_lock) */
	bool rejoin;			/* left the view: may come back (peer_lock) */
	struct spindle_conn *cur;	/* the current connection, or NULL (peer_lock) */
	struct list_head conns;		/* connections not yet reaped (peer_lock) */
	u32 nconns;
	atomic_t qp_fails;		/* QP creations failed since one was made */
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
	u32 chain_rows;			/* of them, row pushes (tracing) */
	struct spindle_region *stage;	/* snapshots of blocks being pushed */
	u32 stage_entry;
};

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

#endif /* SPINDLE_PEER_H */
