// SPDX-License-Identifier: GPL-2.0
/*
 * The hostile-peer test mode (hostile.h): garbage written into the peers'
 * memory with the keys they gave this node.  Testing only, set through
 * debugfs; the transport calls in here only while a mode is set, and what
 * is garbled is a staged copy of what the engine meant to send.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/string.h>

#include "group.h"
#include "peer.h"
#include "xmit.h"
#include "hostile.h"

/**
 * spindle_hostile_block - garble a staged counter block
 * @g: group
 * @b: the block's staged copy
 */
void spindle_hostile_block(struct spindle_group *g, struct sp_block *b)
{
	switch (READ_ONCE(g->hostile)) {
	case SPINDLE_HOSTILE_BACKWARDS:
		b->hdr_pub = 0;
		b->recv_seq = 0;
		b->deliv_seq = 0;
		break;
	case SPINDLE_HOSTILE_JUMP:
		b->hdr_pub = cpu_to_le64(le64_to_cpu(b->hdr_pub) + (1ULL << 63));
		b->recv_seq = cpu_to_le64(le64_to_cpu(b->recv_seq) + (1ULL << 63));
		break;
	default:
		break;
	}
}

/* Garble @n headers: every one of them, so the first the peer takes is bad. */
static void spindle_hostile_garble_hdrs(struct spindle_group *g, u32 mode,
					struct sp_hdr *h, u32 n)
{
	pr_warn_once("group %u: hostile (mode %u): garbling %u headers\n",
		     g->id, mode, n);
	for (; n; n--, h++) {
		switch (mode) {
		case SPINDLE_HOSTILE_LENGTH:
			h->kind = cpu_to_le16(SP_HDR_DATA);
			h->count = 0;
			h->len = cpu_to_le32(U32_MAX);
			break;
		case SPINDLE_HOSTILE_NULLS:
			h->kind = cpu_to_le16(SP_HDR_NULLS);
			h->count = cpu_to_le16(U16_MAX);
			h->len = 0;
			break;
		default:	/* SPINDLE_HOSTILE_HDR_TORN */
			h->kind = cpu_to_le16(0x5a5a);
			break;
		}
	}
}

/**
 * spindle_hostile_hdrs - stage a garbled copy of a header write
 * @peer: the peer it goes to
 * @from: the headers as the engine wrote them
 * @len: bytes of the write
 * @to: the staging slot of the write's first send queue entry
 *
 * A mode that garbles headers sends them from a staged copy: as many whole
 * headers as a staging slot holds, and none after them (the peer takes the
 * first one and rejects it; a header write never takes more send queue
 * entries than it would have).
 * Return: the bytes staged at @to, or 0 when the write goes out as it is.
 */
u32 spindle_hostile_hdrs(const struct spindle_peer *peer, const void *from,
			 u32 len, void *to)
{
	u32 mode = READ_ONCE(peer->g->hostile);
	u32 n;

	if (mode < SPINDLE_HOSTILE_LENGTH || mode > SPINDLE_HOSTILE_HDR_TORN ||
	    len % sizeof(struct sp_hdr))
		return 0;
	n = min_t(u32, len, peer->stage_entry / sizeof(struct sp_hdr) *
			    sizeof(struct sp_hdr));
	memcpy(to, from, n);
	spindle_hostile_garble_hdrs(peer->g, mode, to, n / sizeof(struct sp_hdr));
	return n;
}

/* Stage my row at @row naming strangers, checksum right: taken, then rejected. */
static void spindle_hostile_strangers(struct spindle_group *g,
				      struct sp_row_hdr *row)
{
	memcpy(row, g->out_meta->vaddr, g->row_bytes);
	row->suspects = cpu_to_le64(1ULL << 40);
	row->csum = cpu_to_le64(spindle_row_csum(g, row));
}

/*
 * SPINDLE_HOSTILE_FOREIGN_KEY: queue a row naming strangers (checksum
 * right, so that it is taken as the owner's row and rejected) to
 * hostile_peer with the key and address the test found in another
 * member's connection to it, then go silent (SPINDLE_HOSTILE_SILENT:
 * nothing more is queued to anyone, so that this node's own reaction to
 * the refusal, suspecting the peer that refused it, never reaches the
 * others).  Returns whether the row push was taken over.
 */
static bool spindle_hostile_foreign(struct spindle_peer *peer, u64 loff)
{
	struct spindle_group *g = peer->g;
	struct spindle_rchunk ch;
	struct spindle_rregion rr = { .n = 1, .chunks = &ch };
	struct sp_row_hdr *row = peer->stage->vaddr + loff;

	if (READ_ONCE(g->hostile) == SPINDLE_HOSTILE_SILENT)
		return true;
	if (peer->idx != READ_ONCE(g->hostile_peer))
		return false;
	spindle_hostile_strangers(g, row);
	ch.iova = READ_ONCE(g->hostile_addr);
	ch.rkey = READ_ONCE(g->hostile_rkey);
	ch.len = g->row_bytes;
	rr.size = ch.len;
	pr_warn("group %u: hostile: a row naming strangers to member %u with key 0x%x at 0x%llx, then silence\n",
		g->id, peer->id, ch.rkey, ch.iova);
	spindle_queue_range(peer, &peer->kc->l_stage, loff, &rr, 0, ch.len,
			    false, 0);
	WRITE_ONCE(g->hostile, SPINDLE_HOSTILE_SILENT);
	return true;
}

/**
 * spindle_hostile_row - a row push, as the hostile mode has it
 * @peer: a READY peer
 * @loff: the staging slot the push would use
 * @bell: ring the peer's doorbell, as the push would
 *
 * A row naming strangers or torn for good is staged at @loff, and queued
 * as a row push is; the foreign-key mode queues its own row, to its own
 * target, and then nothing more.
 * Return: whether the push was taken over (the caller queues nothing).
 */
bool spindle_hostile_row(struct spindle_peer *peer, u64 loff, bool bell)
{
	struct spindle_group *g = peer->g;
	struct sp_row_hdr *row = peer->stage->vaddr + loff;

	switch (READ_ONCE(g->hostile)) {
	case SPINDLE_HOSTILE_ROW:
		pr_warn_once("group %u: hostile: a row naming strangers\n", g->id);
		spindle_hostile_strangers(g, row);
		break;
	case SPINDLE_HOSTILE_TORN:
		memcpy(row, g->out_meta->vaddr, g->row_bytes);
		row->csum = cpu_to_le64(le64_to_cpu(row->csum) ^ 1);
		break;
	case SPINDLE_HOSTILE_FOREIGN_KEY:
	case SPINDLE_HOSTILE_SILENT:
		return spindle_hostile_foreign(peer, loff);
	default:
		return false;
	}
	spindle_queue_range(peer, &peer->kc->l_stage, loff, &peer->kc->w_meta, 0,
			    g->row_bytes, bell, U32_MAX);
	return true;
}

/**
 * spindle_hostile_debugfs - the files a hostile-peer test sets
 * @g: group
 * @dir: its debugfs directory
 *
 * "hostile" (enum spindle_hostile), and for SPINDLE_HOSTILE_FOREIGN_KEY
 * whom to write ("hostile_peer"), with which key and at which address.
 */
void spindle_hostile_debugfs(struct spindle_group *g, struct dentry *dir)
{
	debugfs_create_u32("hostile", 0600, dir, &g->hostile);
	debugfs_create_u32("hostile_peer", 0600, dir, &g->hostile_peer);
	debugfs_create_x32("hostile_rkey", 0600, dir, &g->hostile_rkey);
	debugfs_create_x64("hostile_addr", 0600, dir, &g->hostile_addr);
}
