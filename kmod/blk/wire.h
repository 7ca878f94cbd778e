/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * spindle_blk's messages, and the check of each one a member delivers.
 *
 * A write goes out as 1..max_frags messages of one sender, consecutive in
 * its ring: a header, then up to frag_bytes of data (whole sectors).  Every
 * member checks each message against its own geometry and against the
 * fragments of the sender's write it holds (struct sp_blk_rx), and applies
 * the write to its copy when the last fragment is delivered; a flush is a
 * header alone.  A write left unfinished (its sender gave it up, or a view
 * change cut it off) is dropped at the sender's next write or flush, or at
 * the view change.  The check is deterministic: every member delivers the
 * same messages in the same order, so every member refuses the same ones,
 * and the copies stay equal even when a message is bad.
 *
 * Plain C: the unit tests (selftests/unit/test_blk.c) run it in userspace.
 */
#ifndef SPINDLE_BLK_WIRE_H
#define SPINDLE_BLK_WIRE_H

#include "../proto/compat.h"

#define SP_BLK_MAGIC		0x4b425053u	/* "SPBK" */
#define SP_BLK_SECTOR		512u
#define SP_BLK_HDR		64u	/* SPINDLE_BLK_MIN_MSG counts it */
#define SP_BLK_MAX_FRAGS	64u

enum sp_blk_type {
	SP_BLK_WRITE = 1,
	SP_BLK_FLUSH = 2,
};

/* On the wire, little-endian; SP_BLK_HDR bytes. */
struct sp_blk_hdr {
	__le32 magic;
	__le16 type;		/* enum sp_blk_type */
	__le16 nfrag;		/* fragments of this write */
	__le16 frag;		/* this one's index */
	__le16 pad;
	__le32 len;		/* data bytes after the header */
	__le64 sector;		/* the write's first sector */
	__le64 nsect;		/* the write's sectors */
	__le64 capacity;	/* the sender's device, in sectors */
	__le64 tag;		/* the sender's write number */
	__le64 rsvd[2];
};

/* What every member's device looks like (the same configuration). */
struct sp_blk_geom {
	u64 capacity;		/* sectors */
	u32 frag_bytes;		/* data a fragment carries at most */
	u32 max_frags;		/* fragments a write may take */
};

/* One sender's write being put together; next == 0: none. */
struct sp_blk_rx {
	u64 sector;
	u64 nsect;
	u64 tag;
	u64 got;		/* data bytes so far */
	u32 nfrag;
	u32 next;		/* the fragment expected */
};

/* What a message that passed the check asks for. */
struct sp_blk_frag {
	enum sp_blk_type type;
	u64 sector;		/* the write's first sector */
	u64 off;		/* this fragment's bytes into the write */
	u32 len;
	bool last;		/* the write is whole: apply it */
};

enum sp_blk_verdict {
	SP_BLK_OK,
	SP_BLK_E_SHORT,		/* shorter than a header */
	SP_BLK_E_MAGIC,
	SP_BLK_E_TYPE,
	SP_BLK_E_CAPACITY,	/* the sender's device is another size */
	SP_BLK_E_RANGE,		/* sectors beyond the device, or too many */
	SP_BLK_E_FRAG,		/* out of sequence with the sender's write */
	SP_BLK_E_LEN,		/* data length wrong for the header */
};

static inline const char *sp_blk_verdict_name(enum sp_blk_verdict v)
{
	static const char *const names[] = {
		[SP_BLK_OK] = "ok",
		[SP_BLK_E_SHORT] = "shorter than a header",
		[SP_BLK_E_MAGIC] = "bad magic",
		[SP_BLK_E_TYPE] = "unknown type",
		[SP_BLK_E_CAPACITY] = "another device size",
		[SP_BLK_E_RANGE] = "sectors out of range",
		[SP_BLK_E_FRAG] = "fragment out of sequence",
		[SP_BLK_E_LEN] = "length does not match",
	};

	return (unsigned int)v < ARRAY_SIZE(names) ? names[v] : "?";
}

/**
 * sp_blk_geom_init - a device's geometry from its subgroup's configuration
 * @g: out
 * @blk_mib: the device's size
 * @max_msg: the subgroup's largest message
 * @window: its slots per sender
 *
 * A write takes at most half the window, so that a sender always has room
 * for the rest of one while the head of its ring waits to be released.
 * Return: 0, or -EINVAL if no sector fits in a message.
 */
static inline int sp_blk_geom_init(struct sp_blk_geom *g, u32 blk_mib, u32 max_msg,
				   u32 window)
{
	if (!blk_mib || max_msg < SP_BLK_HDR + SP_BLK_SECTOR || !window)
		return -EINVAL;
	g->capacity = (u64)blk_mib << (20 - 9);
	g->frag_bytes = (max_msg - SP_BLK_HDR) / SP_BLK_SECTOR * SP_BLK_SECTOR;
	g->max_frags = min_t(u32, max_t(u32, window / 2, 1), SP_BLK_MAX_FRAGS);
	return 0;
}

/* The largest write, in sectors. */
static inline u32 sp_blk_max_sectors(const struct sp_blk_geom *g)
{
	return g->frag_bytes / SP_BLK_SECTOR * g->max_frags;
}

/* Fragments a write of @nsect sectors takes. */
static inline u32 sp_blk_nfrags(const struct sp_blk_geom *g, u64 nsect)
{
	u64 per = g->frag_bytes / SP_BLK_SECTOR;

	return nsect ? (u32)sp_div_u64(nsect + per - 1, per) : 1;
}

/**
 * sp_blk_hdr_fill - the header of one message a sender builds
 * @h: in its slot
 * @g: the sender's geometry
 * @type: write or flush
 * @sector: the write's first sector (0 for a flush)
 * @nsect: its sectors (0 for a flush)
 * @frag: this fragment
 * @tag: the sender's write number
 *
 * Return: data bytes this fragment carries (0 for a flush).
 */
static inline u32 sp_blk_hdr_fill(struct sp_blk_hdr *h, const struct sp_blk_geom *g,
				  enum sp_blk_type type, u64 sector, u64 nsect, u32 frag,
				  u64 tag)
{
	u64 done = (u64)frag * g->frag_bytes;
	u64 bytes = nsect * SP_BLK_SECTOR;
	u32 len = type == SP_BLK_WRITE ?
		  (u32)min_t(u64, bytes - done, g->frag_bytes) : 0;

	memset(h, 0, sizeof(*h));
	h->magic = cpu_to_le32(SP_BLK_MAGIC);
	h->type = cpu_to_le16(type);
	h->nfrag = cpu_to_le16(type == SP_BLK_WRITE ? sp_blk_nfrags(g, nsect) : 1);
	h->frag = cpu_to_le16(frag);
	h->len = cpu_to_le32(len);
	h->sector = cpu_to_le64(sector);
	h->nsect = cpu_to_le64(nsect);
	h->capacity = cpu_to_le64(g->capacity);
	h->tag = cpu_to_le64(tag);
	return len;
}

/* A write's first fragment: its sectors in range, its size in bounds. */
static inline enum sp_blk_verdict sp_blk_check_first(const struct sp_blk_geom *g,
						     u64 sector, u64 nsect, u32 nfrag)
{
	if (!nsect || nsect > sp_blk_max_sectors(g) || sector >= g->capacity ||
	    nsect > g->capacity - sector)
		return SP_BLK_E_RANGE;
	if (nfrag != sp_blk_nfrags(g, nsect))
		return SP_BLK_E_FRAG;
	return SP_BLK_OK;
}

static inline enum sp_blk_verdict sp_blk_check_write(const struct sp_blk_geom *g,
						     struct sp_blk_rx *rx,
						     const struct sp_blk_hdr *h, u32 dlen,
						     struct sp_blk_frag *f)
{
	u64 sector = le64_to_cpu(h->sector), nsect = le64_to_cpu(h->nsect);
	u64 tag = le64_to_cpu(h->tag);
	u32 nfrag = le16_to_cpu(h->nfrag), frag = le16_to_cpu(h->frag);
	u32 len = le32_to_cpu(h->len);
	enum sp_blk_verdict v;

	if (frag == 0) {
		/* a write of the sender's still unfinished ends here, dropped */
		rx->next = 0;
		v = sp_blk_check_first(g, sector, nsect, nfrag);
		if (v)
			return v;
		*rx = (struct sp_blk_rx){ .sector = sector, .nsect = nsect, .tag = tag,
					  .nfrag = nfrag };
	} else if (frag != rx->next || nfrag != rx->nfrag || sector != rx->sector ||
		   nsect != rx->nsect || tag != rx->tag) {
		return SP_BLK_E_FRAG;
	}
	if (len != dlen || !len || len % SP_BLK_SECTOR || len > g->frag_bytes ||
	    len > rx->nsect * SP_BLK_SECTOR - rx->got)
		return SP_BLK_E_LEN;
	f->last = frag + 1 == rx->nfrag;
	if (f->last && rx->got + len != rx->nsect * SP_BLK_SECTOR)
		return SP_BLK_E_LEN;
	if (!f->last && len != g->frag_bytes)
		return SP_BLK_E_LEN;
	f->type = SP_BLK_WRITE;
	f->sector = rx->sector;
	f->off = rx->got;
	f->len = len;
	rx->got += len;
	rx->next = f->last ? 0 : frag + 1;
	return SP_BLK_OK;
}

static inline enum sp_blk_verdict sp_blk_check_flush(struct sp_blk_rx *rx,
						     const struct sp_blk_hdr *h, u32 mlen,
						     struct sp_blk_frag *f)
{
	rx->next = 0;		/* as a new write: an unfinished one is dropped */
	if (mlen != SP_BLK_HDR || le32_to_cpu(h->len) || le16_to_cpu(h->nfrag) != 1 ||
	    le16_to_cpu(h->frag))
		return SP_BLK_E_LEN;
	f->type = SP_BLK_FLUSH;
	f->sector = 0;
	f->off = 0;
	f->len = 0;
	f->last = true;
	return SP_BLK_OK;
}

/**
 * sp_blk_check - check one delivered message of a sender
 * @g: this member's geometry
 * @rx: that sender's write being put together
 * @h: a copy of the message's header (the slot is the sender's memory)
 * @mlen: the message's length
 * @f: out: what it asks, when it passes
 *
 * A message that fails drops the sender's write in progress as well: what
 * its other fragments carried is never applied anywhere.
 * Return: SP_BLK_OK or what is wrong with it.
 */
static inline enum sp_blk_verdict sp_blk_check(const struct sp_blk_geom *g,
					       struct sp_blk_rx *rx,
					       const struct sp_blk_hdr *h, u32 mlen,
					       struct sp_blk_frag *f)
{
	enum sp_blk_verdict v;

	if (mlen < SP_BLK_HDR)
		v = SP_BLK_E_SHORT;
	else if (le32_to_cpu(h->magic) != SP_BLK_MAGIC)
		v = SP_BLK_E_MAGIC;
	else if (le64_to_cpu(h->capacity) != g->capacity)
		v = SP_BLK_E_CAPACITY;
	else if (le16_to_cpu(h->type) == SP_BLK_WRITE)
		v = sp_blk_check_write(g, rx, h, mlen - SP_BLK_HDR, f);
	else if (le16_to_cpu(h->type) == SP_BLK_FLUSH)
		v = sp_blk_check_flush(rx, h, mlen, f);
	else
		v = SP_BLK_E_TYPE;
	if (v)
		rx->next = 0;
	return v;
}

#endif /* SPINDLE_BLK_WIRE_H */
