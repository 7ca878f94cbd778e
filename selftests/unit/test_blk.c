// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for spindle_blk's messages (kmod/blk/wire.h): the geometry a
 * configuration gives, the headers a sender builds, and the check every
 * member runs on what it delivers: a write put back together in order, and
 * every way a message can be wrong refused, the sender's write with it.
 */
#include "../../kmod/blk/wire.h"
#include "../ktap.h"

/* 16 MiB, 4 KiB of data a message, a window of 16: writes of up to 32 KiB */
#define geom(g)	ASSERT_EQ(sp_blk_geom_init((g), 16, 4096 + SP_BLK_HDR, 16), 0)

/* A sender's message: header and @len bytes of data space. */
struct msg {
	struct sp_blk_hdr h;
	u32 len;
};

static void build(struct msg *m, const struct sp_blk_geom *g, enum sp_blk_type type,
		  u64 sector, u64 nsect, u32 frag, u64 tag)
{
	m->len = SP_BLK_HDR + sp_blk_hdr_fill(&m->h, g, type, sector, nsect, frag, tag);
}

TEST(geometry_follows_the_configuration)
{
	struct sp_blk_geom g;

	geom(&g);
	EXPECT_EQ(g.capacity, 16 * 2048);
	EXPECT_EQ(g.frag_bytes, 4096);
	EXPECT_EQ(g.max_frags, 8);
	EXPECT_EQ(sp_blk_max_sectors(&g), 64);
	EXPECT_EQ(sp_blk_nfrags(&g, 1), 1);
	EXPECT_EQ(sp_blk_nfrags(&g, 8), 1);
	EXPECT_EQ(sp_blk_nfrags(&g, 9), 2);
	/* max_msg not a whole number of sectors past the header: round down */
	ASSERT_EQ(sp_blk_geom_init(&g, 1, 1000 + SP_BLK_HDR, 1), 0);
	EXPECT_EQ(g.frag_bytes, 512);
	EXPECT_EQ(g.max_frags, 1);
	EXPECT_EQ(sp_blk_geom_init(&g, 1, SP_BLK_HDR + 511, 8), -EINVAL);
	EXPECT_EQ(sp_blk_geom_init(&g, 0, 4096, 8), -EINVAL);
	EXPECT_EQ(sizeof(struct sp_blk_hdr), SP_BLK_HDR);
}

TEST(a_write_in_three_fragments_is_whole_at_the_third)
{
	struct sp_blk_geom g;
	struct sp_blk_rx rx = { 0 };
	struct sp_blk_frag f;
	struct msg m;
	u32 i;

	geom(&g);
	for (i = 0; i < 3; i++) {
		build(&m, &g, SP_BLK_WRITE, 100, 20, i, 7);
		ASSERT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_OK);
		EXPECT_EQ(f.type, SP_BLK_WRITE);
		EXPECT_EQ(f.sector, 100);
		EXPECT_EQ(f.off, i * 4096);
		EXPECT_EQ(f.len, i < 2 ? 4096 : 4 * 512);
		EXPECT_EQ(f.last, i == 2);
	}
	EXPECT_EQ(rx.next, 0);
	build(&m, &g, SP_BLK_FLUSH, 0, 0, 0, 8);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_OK);
	EXPECT_EQ(f.type, SP_BLK_FLUSH);
	EXPECT_TRUE(f.last);
}

TEST(a_gap_drops_the_write_in_progress_and_a_new_one_ends_it)
{
	struct sp_blk_geom g;
	struct sp_blk_rx rx = { 0 };
	struct sp_blk_frag f;
	struct msg m;

	geom(&g);
	build(&m, &g, SP_BLK_WRITE, 0, 24, 0, 1);
	ASSERT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_OK);
	build(&m, &g, SP_BLK_WRITE, 0, 24, 2, 1);	/* fragment 1 skipped */
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_E_FRAG);
	build(&m, &g, SP_BLK_WRITE, 0, 24, 1, 1);	/* too late: dropped */
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_E_FRAG);
	build(&m, &g, SP_BLK_WRITE, 0, 24, 0, 2);
	ASSERT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_OK);
	/* a new write begins: the unfinished one is gone, this one is whole */
	build(&m, &g, SP_BLK_WRITE, 8, 8, 0, 3);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_OK);
	EXPECT_TRUE(f.last);
	EXPECT_EQ(f.sector, 8);
	build(&m, &g, SP_BLK_WRITE, 0, 24, 1, 2);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_E_FRAG);
	/* another write's fragment 1 does not continue this one */
	build(&m, &g, SP_BLK_WRITE, 0, 24, 0, 4);
	ASSERT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_OK);
	build(&m, &g, SP_BLK_WRITE, 0, 24, 1, 5);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_E_FRAG);
	/* a flush in the middle of one ends it too */
	build(&m, &g, SP_BLK_WRITE, 0, 24, 0, 6);
	ASSERT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_OK);
	build(&m, &g, SP_BLK_FLUSH, 0, 0, 0, 7);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_OK);
	EXPECT_EQ(rx.next, 0);
	build(&m, &g, SP_BLK_WRITE, 0, 24, 1, 6);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_E_FRAG);
}

TEST(sectors_beyond_the_device_or_too_many_are_refused)
{
	struct sp_blk_geom g;
	struct sp_blk_rx rx = { 0 };
	struct sp_blk_frag f;
	struct msg m;

	geom(&g);
	build(&m, &g, SP_BLK_WRITE, g.capacity - 8, 8, 0, 1);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_OK);
	build(&m, &g, SP_BLK_WRITE, g.capacity - 7, 8, 0, 2);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_E_RANGE);
	build(&m, &g, SP_BLK_WRITE, g.capacity, 1, 0, 3);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_E_RANGE);
	/* sector + nsect wraps around */
	build(&m, &g, SP_BLK_WRITE, 8, 8, 0, 4);
	m.h.nsect = cpu_to_le64(~0ULL - 4);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_E_RANGE);
	build(&m, &g, SP_BLK_WRITE, 0, sp_blk_max_sectors(&g) + 1, 0, 5);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_E_RANGE);
	build(&m, &g, SP_BLK_WRITE, 0, 0, 0, 6);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_E_RANGE);
	EXPECT_EQ(rx.next, 0);
}

TEST(lengths_that_do_not_add_up_are_refused)
{
	struct sp_blk_geom g;
	struct sp_blk_rx rx = { 0 };
	struct sp_blk_frag f;
	struct msg m;

	geom(&g);
	build(&m, &g, SP_BLK_WRITE, 0, 8, 0, 1);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len - 1, &f), SP_BLK_E_LEN);
	m.h.len = cpu_to_le32(4095);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, SP_BLK_HDR + 4095, &f), SP_BLK_E_LEN);
	/* a header that says fewer fragments than its sectors need */
	build(&m, &g, SP_BLK_WRITE, 0, 16, 0, 2);
	m.h.nfrag = cpu_to_le16(1);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_E_FRAG);
	/* a first fragment short of a full one */
	build(&m, &g, SP_BLK_WRITE, 0, 16, 0, 3);
	m.h.len = cpu_to_le32(2048);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, SP_BLK_HDR + 2048, &f), SP_BLK_E_LEN);
	/* the last one short of the write's end */
	build(&m, &g, SP_BLK_WRITE, 0, 12, 0, 4);
	ASSERT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_OK);
	build(&m, &g, SP_BLK_WRITE, 0, 12, 1, 4);
	m.h.len = cpu_to_le32(1024);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, SP_BLK_HDR + 1024, &f), SP_BLK_E_LEN);
	EXPECT_EQ(rx.next, 0);
	build(&m, &g, SP_BLK_FLUSH, 0, 0, 0, 5);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len + 512, &f), SP_BLK_E_LEN);
}

TEST(foreign_or_mismatched_headers_are_refused)
{
	struct sp_blk_geom g, other;
	struct sp_blk_rx rx = { 0 };
	struct sp_blk_frag f;
	struct msg m;

	geom(&g);
	build(&m, &g, SP_BLK_WRITE, 0, 8, 0, 1);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, SP_BLK_HDR - 1, &f), SP_BLK_E_SHORT);
	m.h.magic = cpu_to_le32(0x12345678);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_E_MAGIC);
	build(&m, &g, SP_BLK_WRITE, 0, 8, 0, 1);
	m.h.type = cpu_to_le16(9);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_E_TYPE);
	/* a member configured with another size */
	ASSERT_EQ(sp_blk_geom_init(&other, 32, 4096 + SP_BLK_HDR, 16), 0);
	build(&m, &other, SP_BLK_WRITE, 0, 8, 0, 1);
	EXPECT_EQ(sp_blk_check(&g, &rx, &m.h, m.len, &f), SP_BLK_E_CAPACITY);
	EXPECT_TRUE(!strcmp(sp_blk_verdict_name(SP_BLK_E_CAPACITY), "another device size"));
	EXPECT_TRUE(!strcmp(sp_blk_verdict_name((enum sp_blk_verdict)99), "?"));
}
