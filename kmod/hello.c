// SPDX-License-Identifier: GPL-2.0
/*
 * The key exchange on a fresh connection.  Once rdma_cm says it is
 * established, the predicate thread registers the MRs of the connection on
 * its QP and sends a "hello": the address, rkey and length of every chunk
 * of memory the peer may write into, in a fixed order.  The peer's hello is
 * checked against the layout the configuration implies; only when both are
 * through is the connection READY.
 *
 * The addresses in a hello are made up: chunk c of a region is registered
 * at iova (c + 1) << 32 (spindle_mrset_init()), so no kernel address ever
 * leaves this node.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "spindle.h"
#include "group.h"
#include "peer.h"

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

/*
 * What spindle_hello_send() registers (too big for the stack): what the
 * peer writes into (the meta region and a payload ring per subgroup) and
 * what we write from (meta, staging, and a payload ring per subgroup).
 */
struct spindle_hello_sets {
	struct spindle_mrset *sets[3 + 2 * SP_MAX_SUBGROUPS];
	u32 regions[1 + SP_MAX_SUBGROUPS];
};

/* Fill in one hello fragment and the send that carries it. */
static void spindle_hello_frag(struct spindle_conn *conn, u32 i, u32 nents,
			       const struct spindle_hello_ent *ents,
			       struct ib_send_wr *send, struct ib_sge *sge)
{
	struct spindle_group *g = conn->peer->g;
	struct spindle_hello_hdr *h = conn->hello + (size_t)i * SPINDLE_MSG_BUF;
	u32 first = i * SPINDLE_HELLO_PER_MSG;
	u32 cnt = min_t(u32, SPINDLE_HELLO_PER_MSG, nents - first);

	memset(h, 0, sizeof(*h));
	h->magic = cpu_to_le32(SPINDLE_CM_MAGIC);
	h->version = cpu_to_le16(SPINDLE_PROTO_VERSION);
	h->type = cpu_to_le16(SPINDLE_MSG_HELLO);
	h->group_id = cpu_to_le32(g->id);
	h->from_id = cpu_to_le32(g->cfg.self_id);
	h->first = cpu_to_le16(first);
	h->count = cpu_to_le16(cnt);
	h->total = cpu_to_le16(nents);
	memcpy(h + 1, &ents[first], cnt * sizeof(*ents));
	sge->addr = conn->hello_dma + (size_t)i * SPINDLE_MSG_BUF;
	sge->length = sizeof(*h) + cnt * sizeof(*ents);
	sge->lkey = conn->pd->local_dma_lkey;
	send->opcode = IB_WR_SEND;
	send->sg_list = sge;
	send->num_sge = 1;
	send->wr_cqe = &conn->err_cqe;
}

/**
 * spindle_hello_send - post the registrations and the hello
 * @conn: an ESTABLISHED connection (the predicate thread)
 *
 * One signaled request at the end covers the whole set-up.
 * Return: 0 or -errno.
 */
int spindle_hello_send(struct spindle_conn *conn)
{
	struct spindle_group *g = conn->peer->g;
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

	/* what the peer writes into, then what we write from towards it */
	sets[nsets++] = &conn->r_meta;
	regions[nreg++] = 0;
	for (s = 0; s < g->cfg.nsubgroups; s++) {
		if (conn->r_pay[s].n) {
			sets[nsets++] = &conn->r_pay[s];
			regions[nreg++] = 1 + s;
		}
	}
	for (i = 0; i < nreg; i++)
		nents += sets[i]->n;
	sets[nsets++] = &conn->l_meta;
	sets[nsets++] = &conn->l_stage;
	for (s = 0; s < g->cfg.nsubgroups; s++)
		if (conn->l_pay[s].n)
			sets[nsets++] = &conn->l_pay[s];
	for (i = 0; i < nsets; i++)
		nregs += sets[i]->n;
	nmsg = DIV_ROUND_UP(nents, SPINDLE_HELLO_PER_MSG);
	if (nents > SPINDLE_HELLO_MAX_ENTS || nmsg + nregs > SPINDLE_SQ_DEPTH / 2) {
		pr_err("group %u: %u memory chunks for member %u: too many\n",
		       g->id, nents, conn->peer->id);
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
		nregs += spindle_mrset_reg_wrs(sets[i], &regs[nregs], &conn->err_cqe);
	for (i = 0; i < nregs; i++) {
		*link = &regs[i].wr;
		link = &regs[i].wr.next;
	}
	for (i = 0; i < nmsg; i++) {
		spindle_hello_frag(conn, i, nents, ents, &sends[i], &sges[i]);
		*link = &sends[i];
		link = &sends[i].next;
	}
	sends[nmsg - 1].send_flags = IB_SEND_SIGNALED;
	sends[nmsg - 1].wr_cqe = &conn->hello_sig.cqe;
	conn->hello_sig.acks_to = nregs + nmsg;
	conn->sq_posted = nregs + nmsg;
	ib_dma_sync_single_for_device(g->ibdev, conn->hello_dma,
				      (size_t)nmsg * SPINDLE_MSG_BUF, DMA_TO_DEVICE);
	ret = ib_post_send(conn->qp, first, NULL);
	if (ret)
		pr_warn("group %u: cannot post registration/hello to member %u: %d\n",
			g->id, conn->peer->id, ret);
out:
	kfree(hs);
	kfree(ents);
	kfree(regs);
	kfree(sends);
	kfree(sges);
	return ret;
}

/* Expected size of region @r of what @peer gives us to write into. */
static u64 spindle_expected_region(struct spindle_peer *peer, u32 r)
{
	struct spindle_group *g = peer->g;
	const struct sp_sub_cfg *sc;
	u32 me_id = g->cfg.self_id;

	if (r == 0)
		return g->layout[g->me].size;
	if (r - 1 >= g->cfg.nsubgroups)
		return 0;
	sc = &g->cfg.subgroups[r - 1];
	if (sp_sub_sender_rank(sc, me_id) < 0 || sp_sub_member_pos(sc, peer->id) < 0)
		return 0;
	return PAGE_ALIGN((u64)sc->window * sp_sub_slot_size(sc));
}

/* The whole hello is in: check it against the layout, keep its keys. */
static int spindle_hello_complete(struct spindle_conn *conn)
{
	struct spindle_peer *peer = conn->peer;
	struct spindle_group *g = peer->g;
	const struct spindle_hello_ent *all = conn->hello_ents;
	u32 i = 0, r, n;

	for (r = 0; r <= g->cfg.nsubgroups; r++) {
		u64 want = spindle_expected_region(peer, r), have = 0;
		struct spindle_rregion *rr = r ? &conn->w_pay[r - 1] : &conn->w_meta;
		u32 start = i;

		while (i < conn->hello_total && le32_to_cpu(all[i].region) == r)
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
			const struct spindle_hello_ent *e = &all[start + n];

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
	return i == conn->hello_total ? 0 : -EPROTO;
}

/**
 * spindle_hello_take - take one fragment of a peer's hello
 * @conn: the connection it came on (the predicate thread's current one)
 * @buf: the message
 * @len: its length
 *
 * Everything in it is checked: framing, group and member, fragment order,
 * and at the end that the chunks add up to exactly the regions the
 * configuration says this node writes into at that peer.
 * Return: 0, or -errno after taking the connection down.
 */
int spindle_hello_take(struct spindle_conn *conn, void *buf, u32 len)
{
	const struct spindle_hello_hdr *h = buf;
	struct spindle_peer *peer = conn->peer;
	struct spindle_group *g = peer->g;
	u32 first, count, total;
	int ret = -EPROTO;

	if (conn->hello_done || len < sizeof(*h) ||
	    le32_to_cpu(h->magic) != SPINDLE_CM_MAGIC ||
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
	    first != conn->hello_got || total > SPINDLE_HELLO_MAX_ENTS ||
	    first + count > total || (first && total != conn->hello_total))
		goto bad;
	if (!first) {
		conn->hello_ents = kcalloc(total, sizeof(struct spindle_hello_ent),
					   GFP_KERNEL);
		if (!conn->hello_ents) {
			ret = -ENOMEM;
			goto bad;
		}
		conn->hello_total = total;
	}
	memcpy((struct spindle_hello_ent *)conn->hello_ents + first, h + 1,
	       count * sizeof(struct spindle_hello_ent));
	conn->hello_got += count;
	if (conn->hello_got < total)
		return 0;
	ret = spindle_hello_complete(conn);
	kfree(conn->hello_ents);
	conn->hello_ents = NULL;
	if (ret)
		goto bad;
	conn->hello_done = true;
	return 0;
bad:
	pr_warn_ratelimited("group %u: bad key exchange message from member %u (%d)\n",
			    g->id, peer->id, ret);
	spindle_conn_down(conn, "bad key exchange");
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
 * spindle_conn_make_ready - both hellos are through: writes may flow
 * @conn: the predicate thread's current connection, in state HELLO
 *
 * Return: 0, or -errno after taking the connection down.
 */
int spindle_conn_make_ready(struct spindle_conn *conn)
{
	struct spindle_peer *peer = conn->peer;
	struct spindle_group *g = peer->g;
	u32 s, split;

	split = spindle_pieces(peer->stage_entry, peer->stage->chunk_bytes,
			       &conn->w_meta);
	for (s = 0; s < g->cfg.nsubgroups; s++) {
		const struct sp_sub_cfg *sc = &g->cfg.subgroups[s];

		if (g->layout[g->me].hdr_off[s] == SP_NO_OFFSET || !conn->w_pay[s].n)
			continue;
		split = max(split, spindle_pieces(sp_hdr_slots(sc->window) *
						  sizeof(struct sp_hdr),
						  g->out_meta->chunk_bytes,
						  &conn->w_meta));
		split = max(split, spindle_pieces(conn->w_pay[s].size,
						  g->out_pay[s]->chunk_bytes,
						  &conn->w_pay[s]));
	}
	if (split * SP_EMIT_MAX > SPINDLE_SQ_DEPTH / 2) {
		pr_err("group %u: member %u registered its memory in chunks too small for our rings\n",
		       g->id, peer->id);
		spindle_conn_down(conn, "memory chunks too small");
		return -E2BIG;
	}
	conn->split_max = split;
	if (!spindle_peer_connected(peer, conn))
		return -ENOTCONN;
	pr_info("group %u: member %u ready\n", g->id, peer->id);
	return 0;
}
