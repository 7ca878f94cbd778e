// SPDX-License-Identifier: GPL-2.0
/*
 * Connections (conn.h): what one RC connection to a peer owns, how its
 * completions are told apart from those of the connections before it, and
 * how it is torn down: the thread lets go, the id goes, the QP is drained
 * and destroyed, the MRs are deregistered, the memory is freed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/error-injection.h>

#include "group.h"
#include "peer.h"
#include "trace.h"

/*
 * For RoCE, rdma_cm derives the local ACK timeout from a fixed packet
 * lifetime: 4.096 us * 2^19 on 6.1, 2^17 on 6.12, over half a second per
 * retransmission after a lost packet.  perftest uses 14 (67 ms); so do
 * we, by default.
 */
static unsigned int ack_timeout = 14;
module_param(ack_timeout, uint, 0644);
MODULE_PARM_DESC(ack_timeout, "Local ACK timeout of the QPs, 4.096 us * 2^ack_timeout (default 14: 67 ms; 0: rdma_cm's choice)");

/*
 * How long each of a drain's two markers (send and receive queue) may take
 * before its connection is parked until the CQ goes.
 */
#define SPINDLE_DRAIN_TIMEOUT	(10 * HZ)

static const char *const spindle_conn_state_name[] = {
	[SPINDLE_CONN_CONNECTING] = "connecting",
	[SPINDLE_CONN_ESTABLISHED] = "established",
	[SPINDLE_CONN_HELLO] = "hello",
	[SPINDLE_CONN_READY] = "ready",
	[SPINDLE_CONN_DOWN] = "down",
};

/**
 * spindle_conn_set_state - move a connection on, if that is a legal step
 * @conn: the connection
 * @to: the new state
 *
 * Connections only move forward, one step at a time, or go DOWN from
 * anywhere; DOWN is final.  Context: peer_lock held.
 * Return: whether it moved.
 */
bool spindle_conn_set_state(struct spindle_conn *conn, enum spindle_conn_state to)
{
	enum spindle_conn_state from = conn->state;

	lockdep_assert_held(&conn->peer->g->peer_lock);
	if (from == SPINDLE_CONN_DOWN)
		return false;
	if (to != SPINDLE_CONN_DOWN && to != from + 1) {
		WARN_ONCE(1, "spindle: connection %s -> %s\n",
			  spindle_conn_state_name[from], spindle_conn_state_name[to]);
		return false;
	}
	conn->state = to;
	return true;
}

static void spindle_post_recv(struct spindle_conn *conn, struct ib_qp *qp,
			      struct spindle_rxbuf *rx)
{
	struct ib_recv_wr wr = {};
	struct ib_sge sge = {
		.addr = rx->dma,
		.length = SPINDLE_MSG_BUF,
		.lkey = conn->pd->local_dma_lkey,
	};
	int ret;

	ib_dma_sync_single_for_device(conn->peer->g->ibdev, rx->dma,
				      SPINDLE_MSG_BUF, DMA_FROM_DEVICE);
	wr.wr_cqe = &rx->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ret = ib_post_recv(qp, &wr, NULL);
	if (ret)
		pr_warn_ratelimited("group %u: post_recv to member %u failed: %d\n",
				    conn->peer->g->id, conn->peer->id, ret);
}

/* Give a hello buffer back to the QP (the predicate thread). */
void spindle_conn_post_recv(struct spindle_conn *conn, struct spindle_rxbuf *rx)
{
	spindle_post_recv(conn, conn->qp, rx);
}

/*
 * Every counter push a peer makes is an RDMA write with immediate: it
 * consumes one zero-length receive here and completes on our CQ, which is
 * what wakes a parked predicate thread.
 */
static void spindle_post_bells(struct spindle_conn *conn, struct ib_qp *qp)
{
	struct ib_recv_wr wrs[16];
	u32 i, n;
	int ret;

	while (conn->bells_owed) {
		n = min_t(u32, conn->bells_owed, ARRAY_SIZE(wrs));
		for (i = 0; i < n; i++) {
			memset(&wrs[i], 0, sizeof(wrs[i]));
			wrs[i].wr_cqe = &conn->bell_cqe;
			wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
		}
		ret = ib_post_recv(qp, wrs, NULL);
		if (ret) {
			pr_warn_ratelimited("group %u: doorbell receives for member %u: %d\n",
					    conn->peer->g->id, conn->peer->id, ret);
			return;
		}
		conn->bells_owed -= n;
	}
}

/**
 * spindle_conn_post_bells - post the doorbell receives the peer used up
 * @conn: the predicate thread's current connection
 */
void spindle_conn_post_bells(struct spindle_conn *conn)
{
	spindle_post_bells(conn, conn->qp);
}

/* Is @conn the predicate thread's current connection of its peer? */
static bool spindle_conn_current(struct spindle_conn *conn)
{
	return conn->peer->kc == conn;
}

/* A completion for the current connection that did not succeed: it is gone. */
static void spindle_wc_error(struct spindle_conn *conn, struct ib_wc *wc,
			     const char *what)
{
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn_ratelimited("group %u: %s to member %u failed: %s\n",
				    conn->peer->g->id, what, conn->peer->id,
				    ib_wc_status_msg(wc->status));
	spindle_conn_down(conn, ib_wc_status_msg(wc->status));
}

/*
 * A receive on a connection the thread has not adopted yet: the peer's
 * hello can come in between this pass's refresh, which found no QP yet,
 * and its CQ poll (an accepting side installs the connection, accepts,
 * and the peer sends at once).  Dropped, it would never be posted again
 * and the connection would stay in HELLO: adopt it now if it is the
 * peer's current one.
 */
static bool spindle_conn_adopt(struct spindle_conn *conn)
{
	if (READ_ONCE(conn->state) == SPINDLE_CONN_DOWN)
		return false;
	spindle_peer_refresh(conn->peer);
	return spindle_conn_current(conn);
}

/* Completion handlers: the predicate thread, from spindle_poll_cq(). */

static void spindle_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct spindle_rxbuf *rx = container_of(wc->wr_cqe, struct spindle_rxbuf, cqe);
	struct spindle_conn *conn = rx->conn;

	if (!spindle_conn_current(conn) && !spindle_conn_adopt(conn))
		return;		/* a connection being torn down */
	if (wc->status != IB_WC_SUCCESS) {
		spindle_wc_error(conn, wc, "receive");
		return;
	}
	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM) {	/* a doorbell took it */
		trace_spindle_doorbell(conn->peer->g->id, conn->peer->id,
				       be32_to_cpu(wc->ex.imm_data));
		spindle_conn_post_recv(conn, rx);
		return;
	}
	ib_dma_sync_single_for_cpu(conn->peer->g->ibdev, rx->dma, SPINDLE_MSG_BUF,
				   DMA_FROM_DEVICE);
	if (spindle_hello_take(conn, rx->buf, wc->byte_len))
		return;
	spindle_conn_post_recv(conn, rx);
}

static void spindle_bell_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct spindle_conn *conn = container_of(wc->wr_cqe, struct spindle_conn, bell_cqe);

	if (!spindle_conn_current(conn))
		return;
	if (wc->status != IB_WC_SUCCESS) {
		spindle_wc_error(conn, wc, "doorbell");
		return;
	}
	conn->bells_owed++;	/* posted again at the end of the pass */
	trace_spindle_doorbell(conn->peer->g->id, conn->peer->id,
			       be32_to_cpu(wc->ex.imm_data));
}

static void spindle_err_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct spindle_conn *conn = container_of(wc->wr_cqe, struct spindle_conn, err_cqe);

	if (spindle_conn_current(conn) && wc->status != IB_WC_SUCCESS)
		spindle_wc_error(conn, wc, "request");
}

static void spindle_sig_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct spindle_sig *sig = container_of(wc->wr_cqe, struct spindle_sig, cqe);
	struct spindle_conn *conn = sig->conn;

	if (!spindle_conn_current(conn))
		return;
	if (wc->status != IB_WC_SUCCESS) {
		spindle_wc_error(conn, wc, "write");
		return;
	}
	if (sig->acks_to > conn->sq_acked)
		conn->sq_acked = sig->acks_to;
}

static void spindle_drain_done(struct ib_cq *cq, struct ib_wc *wc)
{
	complete(&container_of(wc->wr_cqe, struct spindle_drain, cqe)->done);
}

/*
 * The RDMA device reports the QP broken (rxe: never; an HCA: may, from
 * interrupt context).  The predicate thread takes the connection down.
 */
static void spindle_qp_event(struct ib_event *ev, void *ctx)
{
	struct spindle_conn *conn = ctx;

	switch (ev->event) {
	case IB_EVENT_COMM_EST:
	case IB_EVENT_SQ_DRAINED:
	case IB_EVENT_QP_LAST_WQE_REACHED:
		break;
	default:
		pr_warn_ratelimited("group %u: QP of member %u: %s\n",
				    conn->peer->g->id, conn->peer->id,
				    ib_event_msg(ev->event));
		WRITE_ONCE(conn->qp_event, ev->event);
		spindle_ring_doorbell(conn->peer->g);
		break;
	}
}

/* The MRs of a connection: what the peer writes into, what we write from. */
static int spindle_conn_mrs(struct spindle_conn *conn)
{
	struct spindle_peer *peer = conn->peer;
	struct spindle_group *g = peer->g;
	u32 me_id = g->cfg.self_id, idx = peer->idx, s;
	int ret;

	ret = spindle_mrset_init(&conn->l_meta, g->out_meta, conn->pd,
				 IB_ACCESS_LOCAL_WRITE);
	if (!ret)
		ret = spindle_mrset_init(&conn->l_stage, peer->stage, conn->pd,
					 IB_ACCESS_LOCAL_WRITE);
	if (!ret)
		ret = spindle_mrset_init(&conn->r_meta, g->in_meta[idx], conn->pd,
					 IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	for (s = 0; !ret && s < g->cfg.nsubgroups; s++) {
		const struct sp_sub_cfg *sc = &g->cfg.subgroups[s];

		if (sp_sub_member_pos(sc, peer->id) < 0 || sp_sub_member_pos(sc, me_id) < 0)
			continue;
		if (g->out_pay[s])
			ret = spindle_mrset_init(&conn->l_pay[s], g->out_pay[s],
						 conn->pd, IB_ACCESS_LOCAL_WRITE);
		if (g->in_pay[idx][s] && !ret)
			ret = spindle_mrset_init(&conn->r_pay[s], g->in_pay[idx][s],
						 conn->pd, IB_ACCESS_LOCAL_WRITE |
						 IB_ACCESS_REMOTE_WRITE);
	}
	return ret;
}

/* Receive buffers for the peer's hello, and ours to send from. */
static int spindle_conn_buffers(struct spindle_conn *conn)
{
	struct ib_device *ibdev = conn->peer->g->ibdev;
	u32 i;

	for (i = 0; i < SPINDLE_RQ_DEPTH; i++) {
		struct spindle_rxbuf *rx = &conn->rx[i];

		rx->conn = conn;
		rx->cqe.done = spindle_rx_done;
		/* kmalloc, not vmalloc: 6.12's rxe takes DMA addresses as linear */
		rx->buf = kmalloc(SPINDLE_MSG_BUF, GFP_KERNEL);
		if (!rx->buf)
			return -ENOMEM;
		rx->dma = ib_dma_map_single(ibdev, rx->buf, SPINDLE_MSG_BUF,
					    DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(ibdev, rx->dma)) {
			kfree(rx->buf);
			rx->buf = NULL;
			return -EIO;
		}
	}
	conn->hello = kmalloc(SPINDLE_RQ_DEPTH * SPINDLE_MSG_BUF, GFP_KERNEL);
	if (!conn->hello)
		return -ENOMEM;
	conn->hello_dma = ib_dma_map_single(ibdev, conn->hello,
					    SPINDLE_RQ_DEPTH * SPINDLE_MSG_BUF,
					    DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, conn->hello_dma)) {
		kfree(conn->hello);
		conn->hello = NULL;
		return -EIO;
	}
	return 0;
}

/**
 * spindle_conn_alloc - everything a new connection needs but its id and QP
 * @peer: the peer
 * @rejoin: it is made for a member outside the view (a new incarnation)
 *
 * Its own PD, so that no other peer's QP can use the keys it gives out;
 * fresh MRs (an FRWR MR is registered once); hello buffers.  A caller
 * whose allocation failed retries later (selftests/fail_inject.sh makes it
 * fail through fail_function).
 * Context: process context.
 * Return: the connection, in state CONNECTING, on no list yet; or NULL.
 */
struct spindle_conn *spindle_conn_alloc(struct spindle_peer *peer, bool rejoin)
{
	struct spindle_group *g = peer->g;
	struct spindle_conn *conn;
	u32 i;

	conn = kzalloc(sizeof(*conn), GFP_KERNEL_ACCOUNT);
	if (!conn)
		return NULL;
	conn->ctx.kind = SPINDLE_CM_CONN;
	conn->ctx.g = g;
	conn->peer = peer;
	conn->rejoin = rejoin;
	conn->born = atomic64_inc_return(&g->conns_made);
	conn->state = SPINDLE_CONN_CONNECTING;
	INIT_LIST_HEAD(&conn->node);
	conn->err_cqe.done = spindle_err_done;
	conn->bell_cqe.done = spindle_bell_done;
	conn->hello_sig.cqe.done = spindle_sig_done;
	conn->hello_sig.conn = conn;
	conn->sdrain.cqe.done = spindle_drain_done;
	conn->rdrain.cqe.done = spindle_drain_done;
	init_completion(&conn->sdrain.done);
	init_completion(&conn->rdrain.done);
	conn->sigs = kcalloc(SPINDLE_SQ_DEPTH, sizeof(*conn->sigs), GFP_KERNEL_ACCOUNT);
	if (!conn->sigs)
		goto fail;
	for (i = 0; i < SPINDLE_SQ_DEPTH; i++) {
		conn->sigs[i].cqe.done = spindle_sig_done;
		conn->sigs[i].conn = conn;
	}
	conn->pd = ib_alloc_pd(g->ibdev, 0);
	if (IS_ERR(conn->pd)) {
		conn->pd = NULL;
		goto fail;
	}
	if (spindle_conn_buffers(conn) || spindle_conn_mrs(conn))
		goto fail;
	return conn;
fail:
	pr_warn_ratelimited("group %u: no memory for a connection to member %u\n",
			    g->id, peer->id);
	spindle_conn_free(conn);
	return NULL;
}

ALLOW_ERROR_INJECTION(spindle_conn_alloc, NULL);

/*
 * spindle_conn_new_qp - rdma_create_qp(), alone so that fail_function can
 * make it fail (fail_inject.sh: qp_create_fails_quietly)
 */
static noinline int spindle_conn_new_qp(struct rdma_cm_id *id, struct ib_pd *pd,
					struct ib_qp_init_attr *attr)
{
	return rdma_create_qp(id, pd, attr);
}

ALLOW_ERROR_INJECTION(spindle_conn_new_qp, ERRNO);

/*
 * A QP that cannot be made fails the attempt, and the active side tries
 * again every SPINDLE_CONNECT_RETRY_MS for as long as that lasts: the log
 * gets the first failure of such a streak and its end, not every try.
 */
static void spindle_qp_failed(struct spindle_peer *peer, const char *why, int err)
{
	if (atomic_inc_return(&peer->qp_fails) == 1)
		pr_warn("group %u: cannot create QP for member %u: %s (%d); retried, and logged again once one is made\n",
			peer->g->id, peer->id, why, err);
}

static void spindle_qp_made(struct spindle_peer *peer)
{
	int fails = atomic_xchg(&peer->qp_fails, 0);

	if (fails)
		pr_info("group %u: QP for member %u created after %d failed tries\n",
			peer->g->id, peer->id, fails);
}

/**
 * spindle_conn_create_qp - the connection's QP, on @id, receives posted
 * @conn: a connection that has no QP
 * @id: its rdma_cm id (the handler of an event of @id calls this)
 *
 * The QP is published to the predicate thread only once its receives are
 * posted: after that only the thread posts on it.
 * Return: 0 or -errno.
 */
int spindle_conn_create_qp(struct spindle_conn *conn, struct rdma_cm_id *id)
{
	struct spindle_peer *peer = conn->peer;
	struct spindle_group *g = peer->g;
	struct ib_qp_init_attr attr = {};
	unsigned long flags;
	u32 i, timeout;
	int ret;

	if (id->device != g->ibdev) {
		spindle_qp_failed(peer, "reachable only through another RDMA device",
				  -ENODEV);
		return -ENODEV;
	}
	attr.qp_context = conn;
	attr.event_handler = spindle_qp_event;
	attr.send_cq = g->cq;
	attr.recv_cq = g->cq;
	/* one more of each for the drain markers */
	attr.cap.max_send_wr = SPINDLE_SQ_DEPTH + 1;
	attr.cap.max_recv_wr = SPINDLE_RQ_DEPTH + SPINDLE_DOORBELLS + 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	ret = spindle_conn_new_qp(id, conn->pd, &attr);
	if (ret) {
		spindle_qp_failed(peer, "rdma_create_qp failed", ret);
		return ret;
	}
	spindle_qp_made(peer);
	timeout = READ_ONCE(ack_timeout);
	if (timeout && timeout < 32)
		rdma_set_ack_timeout(id, timeout);
	/* the hello buffers first: the peer's hello precedes its pushes */
	for (i = 0; i < SPINDLE_RQ_DEPTH; i++)
		spindle_post_recv(conn, id->qp, &conn->rx[i]);
	conn->bells_owed = SPINDLE_DOORBELLS;
	spindle_post_bells(conn, id->qp);
	/* now the predicate thread may see it, and post on it */
	spin_lock_irqsave(&g->peer_lock, flags);
	conn->qp = id->qp;
	spin_unlock_irqrestore(&g->peer_lock, flags);
	return 0;
}

/**
 * spindle_conn_down - a connection is done with: failed, replaced or removed
 * @conn: the connection
 * @why: for the log
 *
 * The first call wins.  If it was the peer's current connection, the peer
 * learns it lost its connection (a view change, or the group failing while
 * it forms); the reaper tears the connection down.
 * Context: any.
 */
void spindle_conn_down(struct spindle_conn *conn, const char *why)
{
	struct spindle_peer *peer = conn->peer;
	struct spindle_group *g = peer->g;
	enum spindle_conn_state was;
	unsigned long flags;
	bool cur;

	bool established = false, rejoin = conn->rejoin;

	spin_lock_irqsave(&g->peer_lock, flags);
	was = conn->state;
	if (!spindle_conn_set_state(conn, SPINDLE_CONN_DOWN)) {
		spin_unlock_irqrestore(&g->peer_lock, flags);
		return;
	}
	conn->why = why;
	cur = peer->cur == conn;
	if (cur) {
		established = was >= SPINDLE_CONN_ESTABLISHED;
		spindle_peer_conn_gone(peer, established, rejoin);
	}
	spin_unlock_irqrestore(&g->peer_lock, flags);
	pr_debug("group %u: connection to member %u (%s) down: %s\n", g->id,
		 peer->id, spindle_conn_state_name[was], why);
	/* @conn may be freed from here on */
	queue_work(system_long_wq, &peer->reap_work);
	if (cur)
		spindle_peer_conn_lost(peer, why, established, rejoin);
	spindle_ring_doorbell(g);
}

/**
 * spindle_conn_fence - the peer's writes stop landing here, now
 * @conn: the predicate thread's connection to a member the view change
 *	cuts off (peer->kc: its QP lives until the thread let go of it)
 *
 * The QP goes to the error state at once, so that no write of the peer's
 * still on the way (a late one of the old view) lands in the memory the
 * caller is about to reset; spindle_conn_down() and the reap tear the
 * connection down after.
 * Context: the predicate thread (ib_modify_qp() may sleep).
 */
void spindle_conn_fence(struct spindle_conn *conn)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	int ret;

	ret = ib_modify_qp(conn->qp, &attr, IB_QP_STATE);
	if (ret)
		pr_warn("group %u: member %u: its QP did not go to the error state (%d)\n",
			conn->peer->g->id, conn->peer->id, ret);
}

/**
 * spindle_conn_fail_later - the predicate thread found @conn broken
 * @conn: its current connection
 * @why: for the log
 *
 * Called where the thread may hold a subgroup's lock (the baseline posts
 * under it): the connection goes down at the start of the next pass, with
 * no lock held, so that peer_lock and the group's state change never nest
 * inside a subgroup's lock.
 */
void spindle_conn_fail_later(struct spindle_conn *conn, const char *why)
{
	if (!conn->fail_later)
		conn->fail_later = why;
	/* no more writes to it in this pass */
	WRITE_ONCE(conn->peer->kc_ready, false);
	spindle_ring_doorbell(conn->peer->g);
}

/*
 * Move the QP to the error state and wait until a marker on each queue,
 * posted after everything else, has completed: then nothing of this QP is
 * left in the CQ, or will ever be (ib_drain_qp(), with a bound, for a CQ
 * that the predicate thread polls).  Not when the CQ broke: its
 * completions are lost, the markers' too (-EIO at once, not a timeout).
 */
static int spindle_conn_drain(struct spindle_conn *conn)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct ib_rdma_wr swr = {
		.wr = {
			.opcode = IB_WR_RDMA_WRITE,
			.wr_cqe = &conn->sdrain.cqe,
			.send_flags = IB_SEND_SIGNALED,
		},
	};
	struct ib_recv_wr rwr = { .wr_cqe = &conn->rdrain.cqe };
	int ret;

	ret = ib_modify_qp(conn->qp, &attr, IB_QP_STATE);
	if (ret)
		return ret;
	if (READ_ONCE(conn->peer->g->cq_event) != SPINDLE_CQ_FINE)
		return -EIO;
	ret = ib_post_send(conn->qp, &swr.wr, NULL);
	if (!ret)
		ret = ib_post_recv(conn->qp, &rwr, NULL);
	if (ret)
		return ret;
	spindle_ring_doorbell(conn->peer->g);
	if (!wait_for_completion_timeout(&conn->sdrain.done, SPINDLE_DRAIN_TIMEOUT) ||
	    !wait_for_completion_timeout(&conn->rdrain.done, SPINDLE_DRAIN_TIMEOUT))
		return -ETIMEDOUT;
	return 0;
}

/**
 * spindle_conn_reap - tear down a connection that went DOWN
 * @conn: the connection, off every list
 *
 * In the order of the kernel's RDMA drivers: the predicate thread lets go
 * of it; disconnect and destroy the id (no handler of it runs after that);
 * drain the QP (its completions are all polled); destroy the QP; then the
 * MRs go, and with them every key the peer had on this connection.
 * Context: process context; the predicate thread must be running, or be
 * stopped for good.
 */
void spindle_conn_reap(struct spindle_conn *conn)
{
	struct spindle_group *g = conn->peer->g;
	int ret = 0;

	WARN_ON_ONCE(READ_ONCE(conn->state) != SPINDLE_CONN_DOWN);
	pr_debug("group %u: reaping a connection to member %u (%s)\n", g->id,
		 conn->peer->id, conn->why ?: "down");
	spindle_thread_sync(g);
	if (conn->cm_id) {
		rdma_disconnect(conn->cm_id);
		rdma_destroy_id(conn->cm_id);
		conn->cm_id = NULL;
	}
	if (conn->qp) {
		ret = spindle_conn_drain(conn);
		if (ret)
			pr_warn("group %u: the QP of member %u did not drain (%d): its memory is kept until the group goes\n",
				g->id, conn->peer->id, ret);
		ib_destroy_qp(conn->qp);
		conn->qp = NULL;
	}
	if (ret) {
		/* completions may still name it: freed after the CQ */
		spin_lock_irq(&g->peer_lock);
		list_add(&conn->node, &g->zombies);
		spin_unlock_irq(&g->peer_lock);
		return;
	}
	spindle_conn_free(conn);
}

/**
 * spindle_conn_free - free a connection that has no id or QP
 * @conn: the connection, or NULL
 */
void spindle_conn_free(struct spindle_conn *conn)
{
	struct ib_device *ibdev;
	u32 i, s;

	if (!conn)
		return;
	ibdev = conn->peer->g->ibdev;
	spindle_mrset_destroy(&conn->l_meta);
	spindle_mrset_destroy(&conn->l_stage);
	spindle_mrset_destroy(&conn->r_meta);
	for (s = 0; s < SP_MAX_SUBGROUPS; s++) {
		spindle_mrset_destroy(&conn->l_pay[s]);
		spindle_mrset_destroy(&conn->r_pay[s]);
		spindle_rregion_free(&conn->w_pay[s]);
	}
	spindle_rregion_free(&conn->w_meta);
	for (i = 0; i < SPINDLE_RQ_DEPTH; i++) {
		if (!conn->rx[i].buf)
			continue;
		ib_dma_unmap_single(ibdev, conn->rx[i].dma, SPINDLE_MSG_BUF,
				    DMA_FROM_DEVICE);
		kfree(conn->rx[i].buf);
	}
	if (conn->hello) {
		ib_dma_unmap_single(ibdev, conn->hello_dma,
				    SPINDLE_RQ_DEPTH * SPINDLE_MSG_BUF, DMA_TO_DEVICE);
		kfree(conn->hello);
	}
	if (conn->pd)
		ib_dealloc_pd(conn->pd);
	kfree(conn->hello_ents);
	kfree(conn->sigs);
	kfree(conn);
}
