// SPDX-License-Identifier: GPL-2.0
/*
 * Peers: one RC connection per pair of members, over in-kernel rdma_cm.
 *
 * The member with the higher id connects, the lower one accepts.  The
 * connect request and reply carry struct spindle_cm_priv: magic, protocol
 * version, group id, both member ids and a hash of the whole configuration;
 * anything else is rejected.  Each attempt is a connection object of its
 * own (conn.h); rdma_cm's handlers only make it, move it on, or take it
 * down, and the events of an id are applied to that id's connection
 * alone, never to whichever one the peer has now.  What a handler must not
 * do (post, wait, tear down) is done by the predicate thread or by the
 * reaper work.
 *
 * A peer's state (enum spindle_peer_state, the uapi's) changes only
 * through spindle_peer_set_state(), under peer_lock:
 *
 *	IDLE -> CONNECTING -> CONNECTED -> READY -> FAILED
 *	CONNECTING -> IDLE	(an attempt failed; the active side retries)
 *	FAILED -> CONNECTING	(a member outside the view comes back)
 *	CONNECTING -> FAILED	(...and that attempt failed)
 *	CONNECTED -> FAILED
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/inet.h>
#include <linux/delay.h>
#include <linux/error-injection.h>
#include <rdma/ib_cm.h>

#include "spindle.h"
#include "group.h"
#include "peer.h"

#define SPINDLE_CONNECT_RETRY_MS	200
#define SPINDLE_REJOIN_RETRY_MS		1000
#define SPINDLE_CM_TIMEOUT_MS		2000
/*
 * Retries of a lost packet and of a receiver not ready: 6, not 7.  rxe
 * reads a retry count of 7 as "retry for ever" (so does the IB spec for
 * rnr_retry), and a dead peer must end in an error completion.
 */
#define SPINDLE_RETRY_COUNT		6

/*
 * Testing only (selftests/mc_lifecycle.sh): hold a connection's failure
 * event this long before handling it.  On a reject rdma_cm moves the QP to
 * the error state just before it calls us, so the flushed completions of
 * an attempt reach the predicate thread before the event does: a
 * completion must never be taken for one of a connection it is not of.
 */
/*
 * Private data of the connect request and reply.  flags: SPINDLE_CM_IN_VIEW
 * says the sender has started a view (it runs one, or is joining one): a
 * member that is still connecting must not start view 1 with it, the group
 * ran on without this incarnation (spindle_group_check_active()).
 */
#define SPINDLE_CM_IN_VIEW	0x1
#define SPINDLE_CM_FLAGS	SPINDLE_CM_IN_VIEW

struct spindle_cm_priv {
	__le32 magic;
	__le16 version;
	__le16 flags;
	__le32 group_id;
	__le32 from_id;
	__le32 to_id;
	__le32 cfg_hash;
};

static const char *const spindle_peer_state_name[] = {
	[SPINDLE_PEER_SELF] = "self",
	[SPINDLE_PEER_IDLE] = "idle",
	[SPINDLE_PEER_CONNECTING] = "connecting",
	[SPINDLE_PEER_CONNECTED] = "connected",
	[SPINDLE_PEER_READY] = "ready",
	[SPINDLE_PEER_FAILED] = "failed",
};

#define SPINDLE_PS(s)	(1U << SPINDLE_PEER_##s)
static const u32 spindle_peer_next[] = {
	[SPINDLE_PEER_IDLE] = SPINDLE_PS(CONNECTING),
	[SPINDLE_PEER_CONNECTING] = SPINDLE_PS(CONNECTING) | SPINDLE_PS(CONNECTED) |
				    SPINDLE_PS(IDLE) | SPINDLE_PS(FAILED),
	[SPINDLE_PEER_CONNECTED] = SPINDLE_PS(READY) | SPINDLE_PS(FAILED),
	[SPINDLE_PEER_READY] = SPINDLE_PS(FAILED),
	[SPINDLE_PEER_FAILED] = SPINDLE_PS(CONNECTING) | SPINDLE_PS(FAILED),
};

/*
 * spindle_peer_set_state - the one place a peer's state changes
 * Context: peer_lock held.  Return: whether the step was legal (and taken).
 */
static bool spindle_peer_set_state(struct spindle_peer *peer,
				   enum spindle_peer_state to)
{
	enum spindle_peer_state from = peer->state;

	lockdep_assert_held(&peer->g->peer_lock);
	if (from < SPINDLE_PEER_IDLE || from > SPINDLE_PEER_FAILED ||
	    !(spindle_peer_next[from] & (1U << to))) {
		WARN_ONCE(1, "spindle: member %u: %s -> %s\n", peer->id,
			  spindle_peer_state_name[from], spindle_peer_state_name[to]);
		return false;
	}
	WRITE_ONCE(peer->state, to);
	return true;
}

void spindle_member_sockaddr(const struct sp_member_cfg *m,
			     struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (m->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(m->port);
		memcpy(&sin->sin_addr, m->addr, 4);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(m->port);
		memcpy(&sin6->sin6_addr, m->addr, 16);
	}
}

static bool spindle_same_host(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (a->sa_family != b->ss_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return ipv6_addr_equal(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr);
}

static void spindle_fill_priv(struct spindle_peer *peer,
			      struct spindle_cm_priv *p)
{
	struct spindle_group *g = peer->g;

	memset(p, 0, sizeof(*p));
	p->magic = cpu_to_le32(SPINDLE_CM_MAGIC);
	p->version = cpu_to_le16(SPINDLE_PROTO_VERSION);
	p->group_id = cpu_to_le32(g->id);
	p->from_id = cpu_to_le32(g->cfg.self_id);
	p->to_id = cpu_to_le32(peer->id);
	p->cfg_hash = cpu_to_le32(g->cfg_hash);
	if (READ_ONCE(g->vc_on))
		p->flags = cpu_to_le16(SPINDLE_CM_IN_VIEW);
}

static void spindle_conn_param(struct spindle_peer *peer, struct spindle_cm_priv *priv,
			       struct rdma_conn_param *param)
{
	spindle_fill_priv(peer, priv);
	memset(param, 0, sizeof(*param));
	param->private_data = priv;
	param->private_data_len = sizeof(*priv);
	param->retry_count = SPINDLE_RETRY_COUNT;
	param->rnr_retry_count = SPINDLE_RETRY_COUNT;
}

/*
 * Check the private data of a connect request or reply from @id's peer;
 * returns the sending member's index, or -1 after logging why (rate
 * limited: this is remote input).  *@in_view: the sender has started a view.
 */
static int spindle_check_priv(struct spindle_group *g, struct rdma_cm_id *id,
			      const void *data, u8 len, bool *in_view)
{
	const struct sockaddr *sa = (struct sockaddr *)&id->route.addr.dst_addr;
	const struct spindle_cm_priv *p = data;
	u32 from;
	int idx;

	if (!data || len < sizeof(*p)) {
		pr_warn_ratelimited("group %u: connection from %pISc rejected: %u bytes of private data\n",
				    g->id, sa, len);
		return -1;
	}
	if (le32_to_cpu(p->magic) != SPINDLE_CM_MAGIC ||
	    le16_to_cpu(p->version) != SPINDLE_PROTO_VERSION) {
		pr_warn_ratelimited("group %u: connection from %pISc rejected: not Spindle protocol %u (magic %#x, version %u)\n",
				    g->id, sa, SPINDLE_PROTO_VERSION,
				    le32_to_cpu(p->magic), le16_to_cpu(p->version));
		return -1;
	}
	if (le16_to_cpu(p->flags) & ~SPINDLE_CM_FLAGS) {
		pr_warn_ratelimited("group %u: connection from %pISc rejected: unknown flags %#x\n",
				    g->id, sa, le16_to_cpu(p->flags));
		return -1;
	}
	*in_view = le16_to_cpu(p->flags) & SPINDLE_CM_IN_VIEW;
	from = le32_to_cpu(p->from_id);
	idx = sp_cfg_member_index(&g->cfg, from);
	if (le32_to_cpu(p->group_id) != g->id || idx < 0 || (u32)idx == g->me ||
	    le32_to_cpu(p->to_id) != g->cfg.self_id) {
		pr_warn_ratelimited("group %u: connection from %pISc rejected: for group %u, from member %u to %u\n",
				    g->id, sa, le32_to_cpu(p->group_id), from,
				    le32_to_cpu(p->to_id));
		return -1;
	}
	if (le32_to_cpu(p->cfg_hash) != g->cfg_hash) {
		pr_warn_ratelimited("group %u: connection from %pISc rejected: member %u has a different configuration (hash %#x, ours %#x)\n",
				    g->id, sa, from, le32_to_cpu(p->cfg_hash), g->cfg_hash);
		return -1;
	}
	return idx;
}

/*
 * Try to connect again after @ms, unless the group is stopping: decided
 * under peer_lock, which teardown takes to set stopping before it cancels
 * the work.
 */
static void spindle_peer_retry(struct spindle_peer *peer, unsigned int ms)
{
	struct spindle_group *g = peer->g;
	unsigned long flags;

	spin_lock_irqsave(&g->peer_lock, flags);
	if (!g->stopping)
		queue_delayed_work(system_wq, &peer->connect_work, msecs_to_jiffies(ms));
	spin_unlock_irqrestore(&g->peer_lock, flags);
}

/* Make @conn the peer's current connection (peer_lock held). */
static void spindle_peer_install(struct spindle_peer *peer, struct spindle_conn *conn)
{
	lockdep_assert_held(&peer->g->peer_lock);
	list_add(&conn->node, &peer->conns);
	peer->nconns++;
	peer->cur = conn;
	peer->connects++;
	if (conn->rejoin)
		peer->rejoin = false;	/* this incarnation is on its way */
	spindle_peer_set_state(peer, SPINDLE_PEER_CONNECTING);
}

/**
 * spindle_peer_conn_gone - the peer's current connection went down
 * @peer: the peer
 * @established: it had been established: the member is lost, whereas a
 *	connection that never was is only an attempt that failed
 * @rejoin: it was an attempt of a member outside the view
 *
 * Context: peer_lock held (spindle_conn_down()).
 */
void spindle_peer_conn_gone(struct spindle_peer *peer, bool established, bool rejoin)
{
	lockdep_assert_held(&peer->g->peer_lock);
	peer->cur = NULL;
	if (established || rejoin) {
		spindle_peer_set_state(peer, SPINDLE_PEER_FAILED);
		peer->rejoin = rejoin && !established;
	} else {
		spindle_peer_set_state(peer, SPINDLE_PEER_IDLE);
	}
}

/**
 * spindle_peer_conn_lost - what follows from spindle_peer_conn_gone()
 * @peer: the peer
 * @why: for the log
 * @established: as for spindle_peer_conn_gone()
 * @rejoin: as for spindle_peer_conn_gone()
 *
 * An attempt is tried again (active side); a member lost ends the view, or
 * fails a group that is still forming.  Context: any, no lock held.
 */
void spindle_peer_conn_lost(struct spindle_peer *peer, const char *why,
			    bool established, bool rejoin)
{
	struct spindle_group *g = peer->g;

	if (!established) {
		/* an attempt: the active side tries again */
		if (peer->active)
			spindle_peer_retry(peer, rejoin ? SPINDLE_REJOIN_RETRY_MS :
					   SPINDLE_CONNECT_RETRY_MS);
		return;
	}
	if (READ_ONCE(g->stopping))
		return;
	if (READ_ONCE(g->vc_on))
		spindle_member_lost(g, peer->idx, why);	/* a view change */
	else
		spindle_group_fail(g, peer->idx, why);	/* still forming */
}

/**
 * spindle_peer_connected - @conn finished its key exchange
 * @peer: the peer
 * @conn: its connection, in state HELLO
 *
 * Return: true if @conn is still the current connection and is now READY.
 */
bool spindle_peer_connected(struct spindle_peer *peer, struct spindle_conn *conn)
{
	struct spindle_group *g = peer->g;
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&g->peer_lock, flags);
	ok = peer->cur == conn && conn->state == SPINDLE_CONN_HELLO &&
	     spindle_conn_set_state(conn, SPINDLE_CONN_READY);
	if (ok)
		spindle_peer_set_state(peer, SPINDLE_PEER_READY);
	spin_unlock_irqrestore(&g->peer_lock, flags);
	return ok;
}

/* rdma_cm: @conn's id is established. */
static void spindle_conn_established(struct spindle_conn *conn)
{
	struct spindle_peer *peer = conn->peer;
	struct spindle_group *g = peer->g;
	unsigned long flags;

	spin_lock_irqsave(&g->peer_lock, flags);
	if (peer->cur == conn && conn->state == SPINDLE_CONN_CONNECTING) {
		spindle_conn_set_state(conn, SPINDLE_CONN_ESTABLISHED);
		spindle_peer_set_state(peer, SPINDLE_PEER_CONNECTED);
	}
	spin_unlock_irqrestore(&g->peer_lock, flags);
	/* the predicate thread registers and sends the hello */
	spindle_ring_doorbell(g);
}

static void spindle_connect_work(struct work_struct *work)
{
	struct spindle_peer *peer = container_of(to_delayed_work(work),
						 struct spindle_peer, connect_work);
	struct spindle_group *g = peer->g;
	struct sockaddr_storage src;
	struct spindle_conn *conn;
	struct rdma_cm_id *id;
	unsigned long flags;
	bool rejoin, ok;
	int ret;

	spin_lock_irqsave(&g->peer_lock, flags);
	rejoin = peer->state == SPINDLE_PEER_FAILED;
	ok = !g->stopping && peer->active && !peer->cur && (!rejoin || peer->rejoin);
	if (ok && peer->nconns >= SPINDLE_PEER_CONNS) {
		/* the last ones are still being torn down */
		queue_delayed_work(system_wq, &peer->connect_work,
				   msecs_to_jiffies(SPINDLE_CONNECT_RETRY_MS));
		ok = false;
	}
	spin_unlock_irqrestore(&g->peer_lock, flags);
	if (!ok)
		return;

	conn = spindle_conn_alloc(peer, rejoin);
	id = conn ? rdma_create_id(&init_net, spindle_cm_handler_entry, &conn->ctx,
				   RDMA_PS_TCP, IB_QPT_RC) : ERR_PTR(-ENOMEM);
	if (IS_ERR(id)) {
		spindle_conn_free(conn);
		spindle_peer_retry(peer, SPINDLE_REJOIN_RETRY_MS);
		return;
	}
	conn->cm_id = id;
	spin_lock_irqsave(&g->peer_lock, flags);
	ok = !g->stopping && !peer->cur;
	if (ok)
		spindle_peer_install(peer, conn);
	spin_unlock_irqrestore(&g->peer_lock, flags);
	if (!ok) {
		rdma_destroy_id(id);
		conn->cm_id = NULL;
		spindle_conn_free(conn);
		return;
	}

	spindle_member_sockaddr(&g->cfg.members[g->me], &src);
	if (src.ss_family == AF_INET)
		((struct sockaddr_in *)&src)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&src)->sin6_port = 0;
	ret = rdma_resolve_addr(id, (struct sockaddr *)&src,
				(struct sockaddr *)&peer->addr,
				SPINDLE_CM_TIMEOUT_MS);
	if (ret)
		spindle_conn_down(conn, "rdma_resolve_addr failed");
}

/* Tear down, in order, every connection of @peer that went DOWN. */
static void spindle_reap_work(struct work_struct *work)
{
	struct spindle_peer *peer = container_of(work, struct spindle_peer, reap_work);
	struct spindle_group *g = peer->g;
	struct spindle_conn *conn, *found;
	unsigned long flags;

	for (;;) {
		found = NULL;
		spin_lock_irqsave(&g->peer_lock, flags);
		list_for_each_entry(conn, &peer->conns, node) {
			if (conn->state == SPINDLE_CONN_DOWN) {
				list_del_init(&conn->node);
				found = conn;
				break;
			}
		}
		spin_unlock_irqrestore(&g->peer_lock, flags);
		if (!found)
			return;
		spindle_conn_reap(found);
		spin_lock_irqsave(&g->peer_lock, flags);
		peer->nconns--;
		spin_unlock_irqrestore(&g->peer_lock, flags);
	}
}

/**
 * spindle_peer_allow_rejoin - a member left the view: wait for it to return
 * @peer: the peer, FAILED, its connection down
 *
 * The side that connects tries again every second; the other side accepts
 * a new connection from it.
 */
void spindle_peer_allow_rejoin(struct spindle_peer *peer)
{
	struct spindle_group *g = peer->g;
	unsigned long flags;
	bool first;

	spin_lock_irqsave(&g->peer_lock, flags);
	first = !peer->rejoin && peer->state == SPINDLE_PEER_FAILED;
	if (first)
		peer->rejoin = true;
	if (first && peer->active && !g->stopping)
		queue_delayed_work(system_wq, &peer->connect_work,
				   msecs_to_jiffies(SPINDLE_REJOIN_RETRY_MS));
	spin_unlock_irqrestore(&g->peer_lock, flags);
}

/*
 * The predicate thread, at the start of every pass: adopt the current
 * connection once it has a QP; send its hello once it is established; make
 * it READY once both hellos are through.
 */
void spindle_peer_refresh(struct spindle_peer *peer)
{
	struct spindle_group *g = peer->g;
	enum spindle_conn_state st = SPINDLE_CONN_DOWN;
	struct spindle_conn *c;
	unsigned long flags;

	spin_lock_irqsave(&g->peer_lock, flags);
	c = peer->cur;
	if (c && !c->qp)
		c = NULL;	/* its handler is still making the QP */
	if (c)
		st = c->state;
	spin_unlock_irqrestore(&g->peer_lock, flags);
	if (c != peer->kc) {
		peer->kc = c;
		peer->chain_len = 0;
		peer->chain_rows = 0;
	}
	peer->kc_ready = c && st == SPINDLE_CONN_READY;
	if (c && READ_ONCE(c->qp_event)) {
		spindle_conn_down(c, ib_event_msg(READ_ONCE(c->qp_event)));
		return;
	}
	if (c && c->fail_later) {
		spindle_conn_down(c, c->fail_later);
		return;
	}
	if (!c || st == SPINDLE_CONN_READY)
		return;
	if (st == SPINDLE_CONN_ESTABLISHED) {
		if (spindle_hello_send(c)) {
			spindle_conn_down(c, "key exchange failed");
			return;
		}
		spin_lock_irqsave(&g->peer_lock, flags);
		if (c->state == SPINDLE_CONN_ESTABLISHED)
			spindle_conn_set_state(c, SPINDLE_CONN_HELLO);
		st = c->state;
		spin_unlock_irqrestore(&g->peer_lock, flags);
		pr_info("group %u: connected to member %u\n", g->id, peer->id);
	}
	if (st == SPINDLE_CONN_HELLO && c->hello_done && !spindle_conn_make_ready(c)) {
		WRITE_ONCE(peer->kc_rkey, c->r_meta.mrs[0]->rkey);
		WRITE_ONCE(peer->kc_addr, c->r_meta.mrs[0]->iova);
		c->ready_ns = ktime_get_ns();
		peer->kc_ready = true;
		spindle_view_peer_ready(g, peer->idx);
	}
}

static int spindle_conn_event(struct spindle_conn *conn, struct rdma_cm_id *id,
			      struct rdma_cm_event *ev)
{
	struct spindle_peer *peer = conn->peer;
	struct spindle_group *g = peer->g;
	struct rdma_conn_param param;
	struct spindle_cm_priv priv;
	bool in_view;
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (READ_ONCE(conn->state) == SPINDLE_CONN_DOWN)
			break;	/* the reaper destroys the id */
		ret = spindle_conn_create_qp(conn, id);
		if (!ret)
			ret = rdma_resolve_route(id, SPINDLE_CM_TIMEOUT_MS);
		if (ret)
			spindle_conn_down(conn, "address resolved, but no QP or route");
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (READ_ONCE(conn->state) == SPINDLE_CONN_DOWN)
			break;
		spindle_conn_param(peer, &priv, &param);
		ret = rdma_connect_locked(id, &param);
		if (ret)
			spindle_conn_down(conn, "rdma_connect failed");
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (peer->active &&
		    spindle_check_priv(g, id, ev->param.conn.private_data,
				       ev->param.conn.private_data_len,
				       &in_view) != (int)peer->idx) {
			spindle_conn_down(conn, "bad connect reply");
			break;
		}
		if (peer->active)
			WRITE_ONCE(conn->peer_in_view, in_view);
		spindle_conn_established(conn);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		spindle_fault_cm_delay();
		/* the reaper destroys the id: never from its own handler */
		spindle_conn_down(conn, rdma_event_msg(ev->event));
		break;
	default:
		break;
	}
	return 0;
}

/* A connect request on the listener may be taken now (peer_lock held). */
static bool spindle_may_accept(struct spindle_peer *peer, bool *rejoin)
{
	lockdep_assert_held(&peer->g->peer_lock);
	*rejoin = peer->state == SPINDLE_PEER_FAILED && peer->rejoin;
	if (peer->g->stopping || peer->nconns >= SPINDLE_PEER_CONNS)
		return false;
	/* a first attempt, one replacing an attempt, or a member coming back */
	return peer->state == SPINDLE_PEER_IDLE ||
	       peer->state == SPINDLE_PEER_CONNECTING || *rejoin;
}

/* A connect request on the listener; returns non-zero to refuse it. */
static int spindle_connect_request(struct spindle_group *g, struct rdma_cm_id *id,
				   struct rdma_cm_event *ev)
{
	struct sockaddr *from = (struct sockaddr *)&id->route.addr.dst_addr;
	struct spindle_conn *conn, *old = NULL;
	struct rdma_conn_param param;
	struct spindle_cm_priv priv;
	struct spindle_peer *peer;
	unsigned long flags;
	bool rejoin, ok, in_view;
	int idx;

	idx = spindle_check_priv(g, id, ev->param.conn.private_data,
				 ev->param.conn.private_data_len, &in_view);
	if (idx < 0)
		goto reject;
	peer = g->peers[idx];
	if (peer->active) {
		pr_warn_ratelimited("group %u: member %u connected to us, but we connect to it\n",
				    g->id, peer->id);
		goto reject;
	}
	if (!spindle_same_host(from, &peer->addr)) {
		pr_warn_ratelimited("group %u: connection claiming member %u comes from %pISc, not %pISc\n",
				    g->id, peer->id, from, &peer->addr);
		goto reject;
	}
	spin_lock_irqsave(&g->peer_lock, flags);
	ok = spindle_may_accept(peer, &rejoin);
	spin_unlock_irqrestore(&g->peer_lock, flags);
	if (!ok)
		goto refused;

	conn = spindle_conn_alloc(peer, rejoin);
	if (!conn)
		goto reject;
	conn->cm_id = id;
	conn->peer_in_view = in_view;
	if (spindle_conn_create_qp(conn, id)) {
		conn->cm_id = NULL;
		spindle_conn_free(conn);
		goto reject;
	}
	id->context = &conn->ctx;
	spin_lock_irqsave(&g->peer_lock, flags);
	ok = spindle_may_accept(peer, &rejoin) && rejoin == conn->rejoin;
	if (ok) {
		old = peer->cur;	/* an attempt this one replaces */
		if (old) {
			spindle_conn_set_state(old, SPINDLE_CONN_DOWN);
			old->why = "replaced by a new attempt";
			peer->cur = NULL;
		}
		spindle_peer_install(peer, conn);
	}
	spin_unlock_irqrestore(&g->peer_lock, flags);
	if (!ok) {
		/* nobody saw it: undo it here, and rdma_cm destroys the id */
		id->context = &g->listen_ctx;
		rdma_destroy_qp(id);
		conn->qp = NULL;
		conn->cm_id = NULL;
		spindle_conn_free(conn);
		goto refused;
	}
	if (old)
		queue_work(system_long_wq, &peer->reap_work);
	spindle_conn_param(peer, &priv, &param);
	if (rdma_accept(id, &param))
		spindle_conn_down(conn, "rdma_accept failed");
	return 0;
refused:
	pr_warn_ratelimited("group %u: connection from member %u refused: it is %s\n",
			    g->id, g->cfg.members[idx].id,
			    spindle_peer_state_name[READ_ONCE(g->peers[idx]->state)]);
reject:
	rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	return -ECONNREFUSED;
}

/* The listener's device goes away under it (see spindle_bind()). */
static int spindle_listen_removal(struct spindle_group *g)
{
	pr_warn("group %u: its RDMA device is going away under its listener\n", g->id);
	spindle_group_fail(g, -1, "RDMA device removed");
	/* non-zero: rdma_cm destroys the listener, unless teardown has it */
	return xchg(&g->listen_id, NULL) ? 1 : 0;
}

int spindle_cm_handler_entry(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct spindle_cm_ctx *ctx = id->context;

	if (ctx->kind == SPINDLE_CM_LISTEN) {
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			return spindle_connect_request(ctx->g, id, ev);
		if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
			return spindle_listen_removal(ctx->g);
		return 0;
	}
	return spindle_conn_event(container_of(ctx, struct spindle_conn, ctx), id, ev);
}

/**
 * spindle_bind - bind the group's listener to this member's address
 * @g: group
 * @self: this member's address and port
 *
 * Fixes which RDMA device the group uses.  Nothing is accepted until
 * spindle_listen(): a request must never meet a half-built group.
 * Return: 0 or -errno (-ENODEV: no RDMA device has that address).
 */
int spindle_bind(struct spindle_group *g, struct sockaddr_storage *self)
{
	struct rdma_cm_id *id;
	int ret;

	g->listen_ctx.kind = SPINDLE_CM_LISTEN;
	g->listen_ctx.g = g;
	id = rdma_create_id(&init_net, spindle_cm_handler_entry, &g->listen_ctx,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = rdma_bind_addr(id, (struct sockaddr *)self);
	if (ret) {
		pr_warn_ratelimited("group %u: cannot bind %pISpc: %d\n", g->id, self,
				    ret);
		goto fail;
	}
	if (!id->device || !spindle_device_present(id->device)) {
		pr_warn("group %u: no RDMA device has address %pISc\n", g->id, self);
		ret = -ENODEV;
		goto fail;
	}
	g->listen_id = id;
	g->ibdev = id->device;
	return 0;
fail:
	rdma_destroy_id(id);
	return ret;
}

/**
 * spindle_listen - start accepting the peers' connection requests
 * @g: a group whose peers, memory and thread all exist
 *
 * The last step of a group up; injectable (fail_function), as
 * selftests/fail_inject.sh does.
 * Return: 0 or -errno.
 */
int spindle_listen(struct spindle_group *g)
{
	int ret = rdma_listen(g->listen_id, 32);

	if (ret)
		pr_warn("group %u: cannot listen: %d\n", g->id, ret);
	return ret;
}

ALLOW_ERROR_INJECTION(spindle_listen, ERRNO);

/**
 * spindle_peer_init - allocate what a peer needs before connecting
 * @g: group with its CQ and regions set up
 * @idx: member index
 *
 * The MRs and buffers of a connection are made with each connection.
 * Return: 0 or -errno.
 */
int spindle_peer_init(struct spindle_group *g, u32 idx)
{
	const struct sp_member_cfg *m = &g->cfg.members[idx];
	u32 me_id = g->cfg.self_id;
	struct spindle_peer *peer;
	u32 s, max_block = 64;

	peer = kzalloc(sizeof(*peer), GFP_KERNEL);
	if (!peer)
		return -ENOMEM;
	g->peers[idx] = peer;
	peer->g = g;
	peer->idx = idx;
	peer->id = m->id;
	peer->active = me_id > m->id;
	peer->state = SPINDLE_PEER_IDLE;
	INIT_LIST_HEAD(&peer->conns);
	spindle_member_sockaddr(m, &peer->addr);
	INIT_DELAYED_WORK(&peer->connect_work, spindle_connect_work);
	INIT_WORK(&peer->reap_work, spindle_reap_work);
	peer->chain = kcalloc(SPINDLE_SQ_DEPTH, sizeof(*peer->chain), GFP_KERNEL);
	peer->chain_sge = kcalloc(SPINDLE_SQ_DEPTH, sizeof(*peer->chain_sge), GFP_KERNEL);
	if (!peer->chain || !peer->chain_sge)
		return -ENOMEM;

	/* block and row snapshots: one entry per send queue slot */
	for (s = 0; s < g->cfg.nsubgroups; s++)
		max_block = max(max_block, sp_block_size(g->cfg.subgroups[s].nsenders));
	peer->stage_entry = max(max_block, g->row_bytes);
	peer->stage = spindle_region_alloc((size_t)SPINDLE_SQ_DEPTH * peer->stage_entry);
	if (!peer->stage)
		return -ENOMEM;
	g->pinned += peer->stage->size;
	return spindle_region_dma_map(peer->stage, g->ibdev,
				      g->ibdev->attrs.max_fast_reg_page_list_len);
}

/**
 * spindle_peer_start - begin connecting (active side); the passive side
 * waits for the peer's request on the listener
 * @peer: peer
 */
void spindle_peer_start(struct spindle_peer *peer)
{
	if (peer->active)
		queue_delayed_work(system_wq, &peer->connect_work, 0);
}

/**
 * spindle_peer_stop - take every connection of a peer down and reap it
 * @peer: peer, or NULL; its group is stopping (no new connection is made)
 * @why: for the log
 *
 * Context: process context, with the predicate thread still running (the
 * drains need its polling) or never started.
 */
void spindle_peer_stop(struct spindle_peer *peer, const char *why)
{
	struct spindle_group *g;
	struct spindle_conn *conn;
	unsigned long flags;

	if (!peer)
		return;
	g = peer->g;
	cancel_delayed_work_sync(&peer->connect_work);
	spin_lock_irqsave(&g->peer_lock, flags);
	list_for_each_entry(conn, &peer->conns, node) {
		if (spindle_conn_set_state(conn, SPINDLE_CONN_DOWN))
			conn->why = why;
	}
	peer->cur = NULL;
	spin_unlock_irqrestore(&g->peer_lock, flags);
	cancel_work_sync(&peer->reap_work);
	spindle_reap_work(&peer->reap_work);
	WARN_ON_ONCE(peer->nconns);
}

/**
 * spindle_peer_free - free a stopped peer (the CQ is gone)
 * @peer: peer, or NULL
 */
void spindle_peer_free(struct spindle_peer *peer)
{
	if (!peer)
		return;
	spindle_region_put(peer->stage);
	kfree(peer->chain);
	kfree(peer->chain_sge);
	kfree(peer);
}
