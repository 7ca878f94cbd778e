// SPDX-License-Identifier: GPL-2.0
/*
 * Connections: one RC QP per pair of members, over in-kernel rdma_cm.
 *
 * The member with the higher id connects, the lower one accepts.  The
 * connect request and reply carry struct spindle_cm_priv: magic, protocol
 * version, group id, both member ids and a hash of the whole configuration;
 * anything else is rejected.  Once established, each side registers the MRs
 * the other will write into (and its own MRs to write from) on that QP, and
 * sends a "hello": the address, rkey and length of every chunk of memory the
 * peer may write into, in a fixed order.  The hello is checked against the
 * layout the configuration implies; only then does the peer become READY.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/inet.h>
#include <rdma/ib_cm.h>

#include "spindle.h"

#define SPINDLE_CONNECT_RETRY_MS	200
#define SPINDLE_CM_TIMEOUT_MS		2000

/*
 * For RoCE, rdma_cm derives the local ACK timeout from a fixed packet
 * lifetime: 4.096 us * 2^17, over half a second per retransmission after
 * a lost packet.  perftest uses 14 (67 ms); so do we, by default.
 */
static unsigned int ack_timeout = 14;
module_param(ack_timeout, uint, 0644);
MODULE_PARM_DESC(ack_timeout, "Local ACK timeout of the QPs, 4.096 us * 2^ack_timeout (default 14: 67 ms; 0: rdma_cm's choice)");

/* Private data of the connect request and reply. */
struct spindle_cm_priv {
	__le32 magic;
	__le16 version;
	__le16 flags;
	__le32 group_id;
	__le32 from_id;
	__le32 to_id;
	__le32 cfg_hash;
};

enum { SPINDLE_MSG_HELLO = 1 };

/* One hello fragment: this header, then count entries. */
struct spindle_hello_hdr {
	__le32 magic;
	__le16 version;
	__le16 type;
	__le32 group_id;
	__le32 from_id;
	__le16 first;		/* index of the first entry in this fragment */
	__le16 count;
	__le16 total;		/* entries in the whole hello */
	__le16 reserved;
};

struct spindle_hello_ent {
	__le64 iova;
	__le32 rkey;
	__le32 len;
	__le32 region;		/* 0: meta; 1 + s: payload ring of subgroup s */
	__le32 reserved;
};

#define SPINDLE_HELLO_PER_MSG \
	((SPINDLE_MSG_BUF - sizeof(struct spindle_hello_hdr)) / \
	 sizeof(struct spindle_hello_ent))
#define SPINDLE_HELLO_MAX_ENTS	(SPINDLE_RQ_DEPTH * SPINDLE_HELLO_PER_MSG)

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
	p->from_id = cpu_to_le32(g->cfg.members[g->me].id);
	p->to_id = cpu_to_le32(peer->id);
	p->cfg_hash = cpu_to_le32(g->cfg_hash);
}

/*
 * Check the private data of a connect request or reply from @id's peer;
 * returns the sending member's index, or -1 after logging why (rate
 * limited: this is remote input).
 */
static int spindle_check_priv(struct spindle_group *g, struct rdma_cm_id *id,
			      const void *data, u8 len)
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
	from = le32_to_cpu(p->from_id);
	idx = sp_cfg_member_index(&g->cfg, from);
	if (le32_to_cpu(p->group_id) != g->id || idx < 0 || (u32)idx == g->me ||
	    le32_to_cpu(p->to_id) != g->cfg.members[g->me].id) {
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

static void spindle_set_state(struct spindle_peer *peer, int state)
{
	unsigned long flags;

	spin_lock_irqsave(&peer->g->peer_lock, flags);
	peer->state = state;
	spin_unlock_irqrestore(&peer->g->peer_lock, flags);
}

/**
 * spindle_peer_post_bells - post the doorbell receives a peer used up
 * @peer: peer
 *
 * Every counter push a peer makes is an RDMA write with immediate: it
 * consumes one zero-length receive here and completes on our CQ, which is
 * what wakes a parked predicate thread.
 */
void spindle_peer_post_bells(struct spindle_peer *peer)
{
	struct ib_recv_wr wrs[16];
	u32 i, n;
	int ret;

	while (peer->bells_owed) {
		n = min_t(u32, peer->bells_owed, ARRAY_SIZE(wrs));
		for (i = 0; i < n; i++) {
			memset(&wrs[i], 0, sizeof(wrs[i]));
			wrs[i].wr_cqe = &peer->bell_cqe;
			wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
		}
		ret = ib_post_recv(peer->qp, wrs, NULL);
		if (ret) {
			pr_warn_ratelimited("group %u: doorbell receives for member %u: %d\n",
					    peer->g->id, peer->id, ret);
			return;
		}
		peer->bells_owed -= n;
	}
}

void spindle_peer_post_recv(struct spindle_peer *peer, struct spindle_rxbuf *rx)
{
	struct ib_recv_wr wr = {};
	struct ib_sge sge = {
		.addr = rx->dma,
		.length = SPINDLE_MSG_BUF,
		.lkey = peer->g->pd->local_dma_lkey,
	};
	int ret;

	wr.wr_cqe = &rx->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ret = ib_post_recv(peer->qp, &wr, NULL);
	if (ret)
		pr_warn_ratelimited("group %u: post_recv to member %u failed: %d\n",
				    peer->g->id, peer->id, ret);
}

static int spindle_create_qp(struct spindle_peer *peer, struct rdma_cm_id *id)
{
	struct spindle_group *g = peer->g;
	struct ib_qp_init_attr attr = {};
	int i, ret;

	if (id->device != g->ibdev) {
		pr_warn("group %u: member %u is reachable only through another RDMA device\n",
			g->id, peer->id);
		return -ENODEV;
	}
	attr.qp_context = peer;
	attr.send_cq = g->cq;
	attr.recv_cq = g->cq;
	attr.cap.max_send_wr = SPINDLE_SQ_DEPTH;
	attr.cap.max_recv_wr = SPINDLE_RQ_DEPTH + SPINDLE_DOORBELLS;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(id, g->pd, &attr);
	if (ret) {
		pr_warn("group %u: cannot create QP for member %u: %d\n",
			g->id, peer->id, ret);
		return ret;
	}
	if (ack_timeout && ack_timeout < 32)
		rdma_set_ack_timeout(id, ack_timeout);
	peer->qp = id->qp;
	peer->sq_posted = 0;
	peer->sq_acked = 0;
	memset(peer->blk_inflight, 0, sizeof(peer->blk_inflight));
	peer->hello_got = 0;
	peer->hello_sent = false;
	peer->hello_done = false;
	/* the hello buffers first: the peer's hello precedes its pushes */
	for (i = 0; i < SPINDLE_RQ_DEPTH; i++)
		spindle_peer_post_recv(peer, &peer->rx[i]);
	peer->bells_owed = SPINDLE_DOORBELLS;
	spindle_peer_post_bells(peer);
	return 0;
}

static int spindle_peer_mrs(struct spindle_peer *peer);

/* The MRs of a connection, and the keys the peer gave us for it. */
static void spindle_peer_drop_keys(struct spindle_peer *peer)
{
	u32 s;

	spindle_mrset_destroy(&peer->l_meta);
	spindle_mrset_destroy(&peer->l_stage);
	spindle_mrset_destroy(&peer->r_meta);
	for (s = 0; s < SP_MAX_SUBGROUPS; s++) {
		spindle_mrset_destroy(&peer->l_pay[s]);
		spindle_mrset_destroy(&peer->r_pay[s]);
		spindle_rregion_free(&peer->w_pay[s]);
	}
	spindle_rregion_free(&peer->w_meta);
}

/*
 * A member taken out of the view may come back, as a new incarnation of
 * itself: before its next connection, drop what the last one registered
 * and learned (an FRWR MR cannot be registered twice).  Process context;
 * the kthread leaves a peer alone until it is READY again.
 */
static int spindle_peer_rearm(struct spindle_peer *peer)
{
	spindle_peer_drop_keys(peer);
	kfree(peer->hello_ents);
	peer->hello_ents = NULL;
	peer->hello_total = 0;
	peer->row_sent = 0;
	peer->row_vc_sent = 0;
	WRITE_ONCE(peer->rejoin, false);
	pr_info("group %u: member %u may join again\n", peer->g->id, peer->id);
	return spindle_peer_mrs(peer);
}

/**
 * spindle_peer_allow_rejoin - a member left the view: wait for it to return
 * @peer: the peer, FAILED, its QP in the error state
 *
 * The side that connects tries again every second; the other side accepts
 * a new connection from it.
 */
void spindle_peer_allow_rejoin(struct spindle_peer *peer)
{
	if (READ_ONCE(peer->rejoin))
		return;
	WRITE_ONCE(peer->rejoin, true);
	if (peer->active && !READ_ONCE(peer->g->stopping))
		queue_delayed_work(system_wq, &peer->connect_work, HZ);
}

/* Park a failed attempt for the connect work to destroy, and retry. */
static void spindle_retry(struct spindle_peer *peer, const char *why, int status)
{
	struct spindle_group *g = peer->g;
	unsigned long flags;

	spin_lock_irqsave(&g->peer_lock, flags);
	if (peer->cm_id) {
		peer->dead_id = peer->cm_id;
		peer->dead_qp = peer->qp;
		peer->cm_id = NULL;
		peer->qp = NULL;
	}
	peer->state = SPINDLE_PEER_IDLE;
	if (!g->stopping && peer->active)
		queue_delayed_work(system_wq, &peer->connect_work,
				   msecs_to_jiffies(SPINDLE_CONNECT_RETRY_MS));
	spin_unlock_irqrestore(&g->peer_lock, flags);
	pr_debug("group %u: connection to member %u: %s (%d), retrying\n",
		 g->id, peer->id, why, status);
}

static void spindle_destroy_id(struct rdma_cm_id *id, struct ib_qp *qp)
{
	if (!id)
		return;
	if (qp)
		rdma_destroy_qp(id);
	rdma_destroy_id(id);
}

static void spindle_connect_work(struct work_struct *work)
{
	struct spindle_peer *peer = container_of(to_delayed_work(work),
						 struct spindle_peer, connect_work);
	struct spindle_group *g = peer->g;
	struct sockaddr_storage src;
	struct rdma_cm_id *dead_id, *id;
	struct ib_qp *dead_qp;
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&g->peer_lock, flags);
	if (peer->active && READ_ONCE(peer->rejoin) && peer->cm_id) {
		/* the connection of the incarnation that left */
		peer->dead_id = peer->cm_id;
		peer->dead_qp = peer->qp;
		peer->cm_id = NULL;
		peer->qp = NULL;
		peer->state = SPINDLE_PEER_IDLE;
	}
	dead_id = peer->dead_id;
	dead_qp = peer->dead_qp;
	peer->dead_id = NULL;
	peer->dead_qp = NULL;
	spin_unlock_irqrestore(&g->peer_lock, flags);
	spindle_destroy_id(dead_id, dead_qp);

	if (READ_ONCE(g->stopping) || !peer->active)
		return;
	if (READ_ONCE(peer->rejoin) && spindle_peer_rearm(peer)) {
		spindle_retry(peer, "re-registering memory", -ENOMEM);
		return;
	}
	id = rdma_create_id(&init_net, spindle_cm_handler_entry, &peer->ctx,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		spindle_retry(peer, "rdma_create_id", PTR_ERR(id));
		return;
	}
	spin_lock_irqsave(&g->peer_lock, flags);
	peer->cm_id = id;
	peer->state = SPINDLE_PEER_CONNECTING;
	peer->connects++;
	spin_unlock_irqrestore(&g->peer_lock, flags);

	spindle_member_sockaddr(&g->cfg.members[g->me], &src);
	if (src.ss_family == AF_INET)
		((struct sockaddr_in *)&src)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&src)->sin6_port = 0;
	ret = rdma_resolve_addr(id, (struct sockaddr *)&src,
				(struct sockaddr *)&peer->addr,
				SPINDLE_CM_TIMEOUT_MS);
	if (ret)
		spindle_retry(peer, "rdma_resolve_addr", ret);
}

/* What spindle_send_hello() registers: too big for the stack. */
struct spindle_hello_sets {
	struct spindle_mrset *sets[2 + 2 * SP_MAX_SUBGROUPS];
	u32 regions[1 + SP_MAX_SUBGROUPS];
};

/* Queue the registrations and the hello on a fresh connection. */
static int spindle_send_hello(struct spindle_peer *peer)
{
	struct spindle_group *g = peer->g;
	struct spindle_hello_sets *hs;
	struct spindle_mrset **sets;
	u32 *regions, nsets = 0, nreg = 0, nents = 0;
	struct spindle_hello_ent *ents = NULL;
	struct ib_reg_wr *regs = NULL;
	struct ib_send_wr *first = NULL, **link = &first;
	struct ib_sge *sges = NULL;
	struct ib_send_wr *sends = NULL;
	u32 i, c, s, nregs = 0, nmsg;
	int ret = -ENOMEM;

	hs = kmalloc(sizeof(*hs), GFP_KERNEL);
	if (!hs)
		return -ENOMEM;
	sets = hs->sets;
	regions = hs->regions;

	/* what we register: everything the peer writes into, everything we
	 * write from towards it
	 */
	sets[nsets++] = &peer->r_meta;
	regions[nreg++] = 0;
	for (s = 0; s < g->cfg.nsubgroups; s++) {
		if (peer->r_pay[s].n) {
			sets[nsets++] = &peer->r_pay[s];
			regions[nreg++] = 1 + s;
		}
	}
	for (i = 0; i < nreg; i++)
		nents += sets[i]->n;
	sets[nsets++] = &peer->l_meta;
	sets[nsets++] = &peer->l_stage;
	for (s = 0; s < g->cfg.nsubgroups; s++)
		if (peer->l_pay[s].n)
			sets[nsets++] = &peer->l_pay[s];
	for (i = 0; i < nsets; i++)
		nregs += sets[i]->n;
	nmsg = DIV_ROUND_UP(nents, SPINDLE_HELLO_PER_MSG);
	if (nents > SPINDLE_HELLO_MAX_ENTS || nmsg + nregs > SPINDLE_SQ_DEPTH / 2) {
		pr_err("group %u: %u memory chunks for member %u: too many\n",
		       g->id, nents, peer->id);
		ret = -E2BIG;
		goto out;
	}

	ents = kcalloc(nents, sizeof(*ents), GFP_KERNEL);
	regs = kcalloc(nregs, sizeof(*regs), GFP_KERNEL);
	sends = kcalloc(nmsg, sizeof(*sends), GFP_KERNEL);
	sges = kcalloc(nmsg, sizeof(*sges), GFP_KERNEL);
	if (!ents || !regs || !sends || !sges)
		goto out;

	nents = 0;
	for (i = 0; i < nreg; i++) {
		for (c = 0; c < sets[i]->n; c++) {
			struct ib_mr *mr = sets[i]->mrs[c];

			ents[nents].iova = cpu_to_le64(mr->iova);
			ents[nents].rkey = cpu_to_le32(mr->rkey);
			ents[nents].len = cpu_to_le32(mr->length);
			ents[nents].region = cpu_to_le32(regions[i]);
			nents++;
		}
	}
	nregs = 0;
	for (i = 0; i < nsets; i++)
		nregs += spindle_mrset_reg_wrs(sets[i], &regs[nregs], &peer->err_cqe);
	for (i = 0; i < nregs; i++) {
		*link = &regs[i].wr;
		link = &regs[i].wr.next;
	}

	for (i = 0; i < nmsg; i++) {
		void *buf = peer->hello + (size_t)i * SPINDLE_MSG_BUF;
		struct spindle_hello_hdr *h = buf;
		u32 first_ent = i * SPINDLE_HELLO_PER_MSG;
		u32 cnt = min_t(u32, SPINDLE_HELLO_PER_MSG, nents - first_ent);

		memset(h, 0, sizeof(*h));
		h->magic = cpu_to_le32(SPINDLE_CM_MAGIC);
		h->version = cpu_to_le16(SPINDLE_PROTO_VERSION);
		h->type = cpu_to_le16(SPINDLE_MSG_HELLO);
		h->group_id = cpu_to_le32(g->id);
		h->from_id = cpu_to_le32(g->cfg.members[g->me].id);
		h->first = cpu_to_le16(first_ent);
		h->count = cpu_to_le16(cnt);
		h->total = cpu_to_le16(nents);
		memcpy(h + 1, &ents[first_ent], cnt * sizeof(*ents));
		sges[i].addr = peer->hello_dma + (size_t)i * SPINDLE_MSG_BUF;
		sges[i].length = sizeof(*h) + cnt * sizeof(*ents);
		sges[i].lkey = g->pd->local_dma_lkey;
		sends[i].opcode = IB_WR_SEND;
		sends[i].sg_list = &sges[i];
		sends[i].num_sge = 1;
		sends[i].wr_cqe = &peer->err_cqe;
		if (i == nmsg - 1) {
			/* one signaled request covers the whole setup */
			sends[i].send_flags = IB_SEND_SIGNALED;
			sends[i].wr_cqe = &peer->hello_sig.cqe;
			peer->hello_sig.acks_to = nregs + nmsg;
		}
		*link = &sends[i];
		link = &sends[i].next;
	}
	peer->sq_posted = nregs + nmsg;
	ib_dma_sync_single_for_device(g->ibdev, peer->hello_dma,
				      (size_t)nmsg * SPINDLE_MSG_BUF, DMA_TO_DEVICE);
	ret = ib_post_send(peer->qp, first, NULL);
	if (ret)
		pr_warn("group %u: cannot post registration/hello to member %u: %d\n",
			g->id, peer->id, ret);
out:
	kfree(hs);
	kfree(ents);
	kfree(regs);
	kfree(sends);
	kfree(sges);
	return ret;
}

/*
 * Established: register and send our hello from here (the CM's context);
 * the kthread makes the peer READY once this is posted and the peer's hello
 * has arrived, in whichever order those happen.
 */
static void spindle_established(struct spindle_peer *peer)
{
	struct spindle_group *g = peer->g;
	int ret;

	spindle_set_state(peer, SPINDLE_PEER_CONNECTED);
	ret = spindle_send_hello(peer);
	if (ret) {
		spindle_peer_lost(peer, "key exchange failed");
		return;
	}
	/* pairs with the kthread's acquire: sq_posted is set before this */
	smp_store_release(&peer->hello_sent, true);
	spindle_ring_doorbell(g);
	pr_info("group %u: connected to member %u\n", g->id, peer->id);
}

/*
 * The connection to @peer is gone.  Even while the group is being torn
 * down the peer is marked failed, so that the drain does not wait for
 * completions that will never come.
 */
void spindle_peer_lost(struct spindle_peer *peer, const char *why)
{
	struct spindle_group *g = peer->g;

	spindle_set_state(peer, SPINDLE_PEER_FAILED);
	if (READ_ONCE(g->stopping))
		return;
	if (READ_ONCE(g->vc_on))
		spindle_member_lost(g, peer->idx, why);	/* a view change */
	else
		spindle_group_fail(g, peer->idx, why);	/* still forming */
}

/* A completion for the current QP that did not succeed: the QP is in error. */
static void spindle_wc_error(struct spindle_peer *peer, struct ib_wc *wc,
			     const char *what)
{
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn_ratelimited("group %u: %s to member %u failed: %s\n",
				    peer->g->id, what, peer->id,
				    ib_wc_status_msg(wc->status));
	spindle_peer_lost(peer, ib_wc_status_msg(wc->status));
}

static int spindle_peer_event(struct spindle_peer *peer, struct rdma_cm_id *id,
			      struct rdma_cm_event *ev)
{
	struct spindle_group *g = peer->g;
	struct rdma_conn_param param = {};
	struct spindle_cm_priv priv;
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = spindle_create_qp(peer, id);
		if (!ret)
			ret = rdma_resolve_route(id, SPINDLE_CM_TIMEOUT_MS);
		if (ret)
			spindle_retry(peer, "address resolved", ret);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		spindle_fill_priv(peer, &priv);
		param.private_data = &priv;
		param.private_data_len = sizeof(priv);
		param.retry_count = 7;
		param.rnr_retry_count = 7;
		ret = rdma_connect_locked(id, &param);
		if (ret)
			spindle_retry(peer, "rdma_connect", ret);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (peer->active &&
		    spindle_check_priv(g, id, ev->param.conn.private_data,
				       ev->param.conn.private_data_len) != (int)peer->idx) {
			spindle_peer_lost(peer, "bad connect reply");
			break;
		}
		spindle_established(peer);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		if (peer->active)
			spindle_retry(peer, rdma_event_msg(ev->event), ev->status);
		else
			spindle_set_state(peer, SPINDLE_PEER_IDLE);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		if (peer->state >= SPINDLE_PEER_CONNECTED)
			spindle_peer_lost(peer, rdma_event_msg(ev->event));
		break;
	default:
		break;
	}
	return 0;
}

/* A connect request on the listener; returns non-zero to refuse it. */
static int spindle_connect_request(struct spindle_group *g, struct rdma_cm_id *id,
				   struct rdma_cm_event *ev)
{
	struct sockaddr *from = (struct sockaddr *)&id->route.addr.dst_addr;
	struct rdma_conn_param param = {};
	struct spindle_cm_priv priv;
	struct spindle_peer *peer;
	unsigned long flags;
	bool rejoin;
	int idx, ret;

	idx = spindle_check_priv(g, id, ev->param.conn.private_data,
				 ev->param.conn.private_data_len);
	if (idx < 0)
		goto reject;
	peer = g->peers[idx];
	if (!peer)	/* cannot happen: the group listens once its peers exist */
		goto reject;
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
	rejoin = peer->state == SPINDLE_PEER_FAILED && READ_ONCE(peer->rejoin);
	if (g->stopping || (peer->state >= SPINDLE_PEER_CONNECTED && !rejoin)) {
		spin_unlock_irqrestore(&g->peer_lock, flags);
		pr_warn_ratelimited("group %u: second connection from member %u refused\n",
				    g->id, peer->id);
		goto reject;
	}
	if (peer->cm_id) {	/* an earlier attempt, or the incarnation that left */
		peer->dead_id = peer->cm_id;
		peer->dead_qp = peer->qp;
		queue_delayed_work(system_wq, &peer->connect_work, 0);
	}
	peer->cm_id = id;
	peer->qp = NULL;
	peer->state = SPINDLE_PEER_CONNECTING;
	peer->connects++;
	spin_unlock_irqrestore(&g->peer_lock, flags);

	if (rejoin && spindle_peer_rearm(peer)) {
		ret = -ENOMEM;
		goto unpark;
	}
	id->context = &peer->ctx;
	ret = spindle_create_qp(peer, id);
	if (ret)
		goto unpark;
	spindle_fill_priv(peer, &priv);
	param.private_data = &priv;
	param.private_data_len = sizeof(priv);
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	ret = rdma_accept(id, &param);
	if (ret) {
		rdma_destroy_qp(id);
		goto unpark;
	}
	return 0;
unpark:
	spin_lock_irqsave(&g->peer_lock, flags);
	if (peer->cm_id == id) {
		peer->cm_id = NULL;
		peer->qp = NULL;
		peer->state = SPINDLE_PEER_IDLE;
	}
	spin_unlock_irqrestore(&g->peer_lock, flags);
	return ret;
reject:
	rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	return -ECONNREFUSED;
}

int spindle_cm_handler_entry(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct spindle_cm_ctx *ctx = id->context;

	if (ctx->kind == SPINDLE_CM_LISTEN) {
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			return spindle_connect_request(ctx->g, id, ev);
		return 0;
	}
	return spindle_peer_event(container_of(ctx, struct spindle_peer, ctx),
				  id, ev);
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
	if (!id->device) {
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
 * Return: 0 or -errno.
 */
int spindle_listen(struct spindle_group *g)
{
	int ret = rdma_listen(g->listen_id, 32);

	if (ret)
		pr_warn("group %u: cannot listen: %d\n", g->id, ret);
	return ret;
}

static void spindle_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct spindle_rxbuf *rx = container_of(wc->wr_cqe, struct spindle_rxbuf, cqe);
	struct spindle_peer *peer = rx->peer;

	if (wc->qp != peer->qp)
		return;		/* flushed from a connection attempt long gone */
	if (wc->status != IB_WC_SUCCESS) {
		spindle_wc_error(peer, wc, "receive");
		return;
	}
	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM) {	/* a doorbell took it */
		spindle_peer_post_recv(peer, rx);
		return;
	}
	ib_dma_sync_single_for_cpu(peer->g->ibdev, rx->dma, SPINDLE_MSG_BUF,
				   DMA_FROM_DEVICE);
	if (spindle_peer_process_hello(peer, rx->buf, wc->byte_len))
		return;
	spindle_peer_post_recv(peer, rx);
}

static void spindle_bell_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct spindle_peer *peer = container_of(wc->wr_cqe, struct spindle_peer, bell_cqe);

	if (wc->qp != peer->qp)
		return;
	if (wc->status != IB_WC_SUCCESS)
		spindle_wc_error(peer, wc, "doorbell");
	else
		peer->bells_owed++;	/* posted again at the end of the pass */
}

static void spindle_err_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct spindle_peer *peer = container_of(wc->wr_cqe, struct spindle_peer, err_cqe);

	if (wc->qp == peer->qp && wc->status != IB_WC_SUCCESS)
		spindle_wc_error(peer, wc, "request");
}

static void spindle_sig_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct spindle_sig *sig = container_of(wc->wr_cqe, struct spindle_sig, cqe);
	struct spindle_peer *peer = sig->peer;

	if (wc->qp != peer->qp)
		return;
	if (wc->status != IB_WC_SUCCESS) {
		spindle_wc_error(peer, wc, "write");
		return;
	}
	if (sig->acks_to > peer->sq_acked)
		peer->sq_acked = sig->acks_to;
}

/* Expected size of region @r of what @peer gives us to write into. */
static u64 spindle_expected_region(struct spindle_peer *peer, u32 r)
{
	struct spindle_group *g = peer->g;
	const struct sp_sg_cfg *sc;
	u32 me_id = g->cfg.members[g->me].id;

	if (r == 0)
		return g->layout[g->me].size;
	if (r - 1 >= g->cfg.nsubgroups)
		return 0;
	sc = &g->cfg.subgroups[r - 1];
	if (sp_sg_sender_rank(sc, me_id) < 0 || sp_sg_member_pos(sc, peer->id) < 0)
		return 0;
	return PAGE_ALIGN((u64)sc->window * sp_sg_slot_size(sc));
}

static int spindle_hello_complete(struct spindle_peer *peer)
{
	struct spindle_group *g = peer->g;
	u32 i = 0, r, n;

	for (r = 0; r <= g->cfg.nsubgroups; r++) {
		u64 want = spindle_expected_region(peer, r), have = 0;
		struct spindle_rregion *rr = r ? &peer->w_pay[r - 1] : &peer->w_meta;
		u32 start = i;

		while (i < peer->hello_total && le32_to_cpu(((struct spindle_hello_ent *)
		       peer->hello_ents)[i].region) == r)
			i++;
		n = i - start;
		if (!want) {
			if (n)
				return -EPROTO;
			continue;
		}
		rr->chunks = kcalloc(n, sizeof(*rr->chunks), GFP_KERNEL);
		if (!rr->chunks)
			return -ENOMEM;
		rr->n = n;
		for (n = 0; n < rr->n; n++) {
			const struct spindle_hello_ent *e =
				&((struct spindle_hello_ent *)peer->hello_ents)[start + n];

			rr->chunks[n].iova = le64_to_cpu(e->iova);
			rr->chunks[n].rkey = le32_to_cpu(e->rkey);
			rr->chunks[n].len = le32_to_cpu(e->len);
			if (!rr->chunks[n].len)
				return -EPROTO;
			have += rr->chunks[n].len;
		}
		rr->size = have;
		if (have != want)
			return -EPROTO;
	}
	return i == peer->hello_total ? 0 : -EPROTO;
}

/**
 * spindle_peer_process_hello - take one fragment of a peer's hello
 * @peer: the peer
 * @buf: the message
 * @len: its length
 *
 * Everything in it is checked: framing, group and member, fragment order,
 * and at the end that the chunks add up to exactly the regions the
 * configuration says this node writes into at that peer.
 * Return: 0, or -errno after failing the group.
 */
int spindle_peer_process_hello(struct spindle_peer *peer, void *buf, u32 len)
{
	const struct spindle_hello_hdr *h = buf;
	struct spindle_group *g = peer->g;
	u32 first, count, total;
	int ret = -EPROTO;

	if (len < sizeof(*h) || le32_to_cpu(h->magic) != SPINDLE_CM_MAGIC ||
	    le16_to_cpu(h->version) != SPINDLE_PROTO_VERSION ||
	    le16_to_cpu(h->type) != SPINDLE_MSG_HELLO ||
	    le32_to_cpu(h->group_id) != g->id ||
	    le32_to_cpu(h->from_id) != peer->id)
		goto bad;
	first = le16_to_cpu(h->first);
	count = le16_to_cpu(h->count);
	total = le16_to_cpu(h->total);
	if (!count || count > SPINDLE_HELLO_PER_MSG ||
	    len != sizeof(*h) + count * sizeof(struct spindle_hello_ent) ||
	    first != peer->hello_got || total > SPINDLE_HELLO_MAX_ENTS ||
	    first + count > total || (first && total != peer->hello_total))
		goto bad;
	if (!first) {
		kfree(peer->hello_ents);
		peer->hello_ents = kcalloc(total, sizeof(struct spindle_hello_ent),
					   GFP_KERNEL);
		if (!peer->hello_ents) {
			ret = -ENOMEM;
			goto bad;
		}
		peer->hello_total = total;
	}
	memcpy((struct spindle_hello_ent *)peer->hello_ents + first, h + 1,
	       count * sizeof(struct spindle_hello_ent));
	peer->hello_got += count;
	if (peer->hello_got < total)
		return 0;
	ret = spindle_hello_complete(peer);
	kfree(peer->hello_ents);
	peer->hello_ents = NULL;
	if (ret)
		goto bad;
	peer->hello_done = true;
	return 0;
bad:
	pr_warn_ratelimited("group %u: bad key exchange message from member %u (%d)\n",
			    g->id, peer->id, ret);
	spindle_peer_lost(peer, "bad key exchange");
	return ret;
}

/* Most pieces a write of up to @len bytes splits into at chunk boundaries. */
static u32 spindle_pieces(u64 len, u32 local_chunk, const struct spindle_rregion *rr)
{
	u32 rmin = U32_MAX, c;

	for (c = 0; c < rr->n; c++)
		rmin = min(rmin, rr->chunks[c].len);
	return DIV_ROUND_UP_ULL(len, local_chunk) + DIV_ROUND_UP_ULL(len, rmin) + 1;
}

/**
 * spindle_peer_make_ready - both hellos are through: writes may flow
 * @peer: a CONNECTED peer whose hello is complete and ours posted
 *
 * Called by the kthread.  Return: 0, or -errno after failing the group.
 */
int spindle_peer_make_ready(struct spindle_peer *peer)
{
	struct spindle_group *g = peer->g;
	u32 s, split;

	split = spindle_pieces(peer->stage_entry, peer->stage->chunk_bytes,
			       &peer->w_meta);
	for (s = 0; s < g->cfg.nsubgroups; s++) {
		const struct sp_sg_cfg *sc = &g->cfg.subgroups[s];

		if (g->layout[g->me].hdr_off[s] == SP_NO_OFFSET || !peer->w_pay[s].n)
			continue;
		split = max(split, spindle_pieces(sp_hdr_slots(sc->window) *
						  sizeof(struct sp_hdr),
						  g->out_meta->chunk_bytes,
						  &peer->w_meta));
		split = max(split, spindle_pieces(peer->w_pay[s].size,
						  g->out_pay[s]->chunk_bytes,
						  &peer->w_pay[s]));
	}
	if (split * SP_EMIT_MAX > SPINDLE_SQ_DEPTH / 2) {
		pr_err("group %u: member %u registered its memory in chunks too small for our rings\n",
		       g->id, peer->id);
		spindle_peer_lost(peer, "memory chunks too small");
		return -E2BIG;
	}
	peer->split_max = split;
	peer->chain_cap = SPINDLE_SQ_DEPTH;
	kfree(peer->chain);
	kfree(peer->chain_sge);
	peer->chain = kcalloc(peer->chain_cap, sizeof(*peer->chain), GFP_KERNEL);
	peer->chain_sge = kcalloc(peer->chain_cap, sizeof(*peer->chain_sge), GFP_KERNEL);
	if (!peer->chain || !peer->chain_sge) {
		spindle_peer_lost(peer, "out of memory");
		return -ENOMEM;
	}
	peer->chain_len = 0;
	spindle_set_state(peer, SPINDLE_PEER_READY);
	pr_info("group %u: member %u ready\n", g->id, peer->id);
	return 0;
}

/**
 * spindle_peer_init - allocate what a peer needs before connecting
 * @g: group with its PD, CQ and regions set up
 * @idx: member index
 *
 * Return: 0 or -errno.
 */
int spindle_peer_init(struct spindle_group *g, u32 idx)
{
	const struct sp_member_cfg *m = &g->cfg.members[idx];
	u32 me_id = g->cfg.members[g->me].id;
	struct spindle_peer *peer;
	u32 i, s, max_block = 64;
	int ret;

	peer = kzalloc(sizeof(*peer), GFP_KERNEL);
	if (!peer)
		return -ENOMEM;
	g->peers[idx] = peer;
	peer->g = g;
	peer->idx = idx;
	peer->id = m->id;
	peer->ctx.kind = SPINDLE_CM_PEER;
	peer->ctx.g = g;
	peer->active = me_id > m->id;
	peer->state = SPINDLE_PEER_IDLE;
	spindle_member_sockaddr(m, &peer->addr);
	INIT_DELAYED_WORK(&peer->connect_work, spindle_connect_work);
	peer->err_cqe.done = spindle_err_done;
	peer->bell_cqe.done = spindle_bell_done;
	peer->hello_sig.cqe.done = spindle_sig_done;
	peer->hello_sig.peer = peer;

	peer->nsigs = SPINDLE_SQ_DEPTH;
	peer->sigs = kcalloc(peer->nsigs, sizeof(*peer->sigs), GFP_KERNEL);
	if (!peer->sigs)
		return -ENOMEM;
	for (i = 0; i < peer->nsigs; i++) {
		peer->sigs[i].cqe.done = spindle_sig_done;
		peer->sigs[i].peer = peer;
	}

	for (i = 0; i < SPINDLE_RQ_DEPTH; i++) {
		struct spindle_rxbuf *rx = &peer->rx[i];

		rx->peer = peer;
		rx->cqe.done = spindle_rx_done;
		rx->buf = kmalloc(SPINDLE_MSG_BUF, GFP_KERNEL);
		if (!rx->buf)
			return -ENOMEM;
		rx->dma = ib_dma_map_single(g->ibdev, rx->buf, SPINDLE_MSG_BUF,
					    DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(g->ibdev, rx->dma)) {
			kfree(rx->buf);
			rx->buf = NULL;
			return -EIO;
		}
	}
	peer->hello = kmalloc(SPINDLE_RQ_DEPTH * SPINDLE_MSG_BUF, GFP_KERNEL);
	if (!peer->hello)
		return -ENOMEM;
	peer->hello_dma = ib_dma_map_single(g->ibdev, peer->hello,
					    SPINDLE_RQ_DEPTH * SPINDLE_MSG_BUF,
					    DMA_TO_DEVICE);
	if (ib_dma_mapping_error(g->ibdev, peer->hello_dma)) {
		kfree(peer->hello);
		peer->hello = NULL;
		return -EIO;
	}

	/* block and row snapshots: one entry per send queue slot */
	for (s = 0; s < g->cfg.nsubgroups; s++)
		max_block = max(max_block, sp_block_size(g->cfg.subgroups[s].nsenders));
	peer->stage_entry = max(max_block, g->row_bytes);
	peer->stage = spindle_region_alloc((size_t)SPINDLE_SQ_DEPTH * peer->stage_entry);
	if (!peer->stage)
		return -ENOMEM;
	g->pinned += peer->stage->size;
	ret = spindle_region_dma_map(peer->stage, g->ibdev,
				     g->ibdev->attrs.max_fast_reg_page_list_len);
	if (ret)
		return ret;

	return spindle_peer_mrs(peer);
}

/* The MRs of a peer's connection: what it writes into, what we write from. */
static int spindle_peer_mrs(struct spindle_peer *peer)
{
	struct spindle_group *g = peer->g;
	const struct sp_member_cfg *m = &g->cfg.members[peer->idx];
	u32 me_id = g->cfg.members[g->me].id, idx = peer->idx, s;
	int ret;

	ret = spindle_mrset_init(&peer->l_meta, g->out_meta, g->pd,
				 IB_ACCESS_LOCAL_WRITE);
	if (!ret)
		ret = spindle_mrset_init(&peer->l_stage, peer->stage, g->pd,
					 IB_ACCESS_LOCAL_WRITE);
	if (!ret)
		ret = spindle_mrset_init(&peer->r_meta, g->in_meta[idx], g->pd,
					 IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	for (s = 0; !ret && s < g->cfg.nsubgroups; s++) {
		const struct sp_sg_cfg *sc = &g->cfg.subgroups[s];

		if (sp_sg_member_pos(sc, m->id) < 0 || sp_sg_member_pos(sc, me_id) < 0)
			continue;
		if (g->out_pay[s] && !ret)
			ret = spindle_mrset_init(&peer->l_pay[s], g->out_pay[s],
						 g->pd, IB_ACCESS_LOCAL_WRITE);
		if (g->in_pay[idx][s] && !ret)
			ret = spindle_mrset_init(&peer->r_pay[s], g->in_pay[idx][s],
						 g->pd, IB_ACCESS_LOCAL_WRITE |
						 IB_ACCESS_REMOTE_WRITE);
	}
	return ret;
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
 * spindle_peer_destroy - disconnect and free a peer (the kthread is stopped)
 * @peer: peer, or NULL
 */
void spindle_peer_destroy(struct spindle_peer *peer)
{
	struct spindle_group *g;
	struct rdma_cm_id *id, *dead_id;
	struct ib_qp *qp, *dead_qp;
	unsigned long flags;

	if (!peer)
		return;
	g = peer->g;
	cancel_delayed_work_sync(&peer->connect_work);
	spin_lock_irqsave(&g->peer_lock, flags);
	id = peer->cm_id;
	qp = peer->qp;
	dead_id = peer->dead_id;
	dead_qp = peer->dead_qp;
	peer->cm_id = NULL;
	peer->dead_id = NULL;
	spin_unlock_irqrestore(&g->peer_lock, flags);
	if (id && qp)
		rdma_disconnect(id);
	spindle_destroy_id(id, qp);
	spindle_destroy_id(dead_id, dead_qp);
	peer->qp = NULL;
}

/* After the CQ is gone: MRs, buffers. */
void spindle_peer_free(struct spindle_peer *peer)
{
	struct spindle_group *g;
	u32 i;

	if (!peer)
		return;
	g = peer->g;
	spindle_peer_drop_keys(peer);
	spindle_region_put(peer->stage);
	for (i = 0; i < SPINDLE_RQ_DEPTH; i++) {
		if (!peer->rx[i].buf)
			continue;
		ib_dma_unmap_single(g->ibdev, peer->rx[i].dma, SPINDLE_MSG_BUF,
				    DMA_FROM_DEVICE);
		kfree(peer->rx[i].buf);
	}
	if (peer->hello) {
		ib_dma_unmap_single(g->ibdev, peer->hello_dma,
				    SPINDLE_RQ_DEPTH * SPINDLE_MSG_BUF, DMA_TO_DEVICE);
		kfree(peer->hello);
	}
	kfree(peer->hello_ents);
	kfree(peer->sigs);
	kfree(peer->chain);
	kfree(peer->chain_sge);
	kfree(peer);
}
