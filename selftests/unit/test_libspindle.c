// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for libspindle's sending side over a producer page and a ring
 * held in plain memory (userspace/lib/data.c and the inline fast paths of
 * libspindle.h): which positions are handed out, what a commit publishes
 * and in which order, when the doorbell rings, and the error convention.
 * The handle's fd is -1, so any system call the library makes fails with
 * EBADF: a test sees exactly when one was made.
 */
#include <pthread.h>
#include <stdlib.h>

#include "libspindle.h"
#include "../ktap.h"

#define WINDOW	8
#define SLOT	64

struct fake {
	struct spindle_handle h;
	uint8_t ring[WINDOW * SLOT];
	union {
		struct spindle_producer page;
		uint8_t bytes[sizeof(struct spindle_producer) + WINDOW * sizeof(uint32_t)];
	} prod;
	uint32_t lens[WINDOW];
};

/* A handle of rank 0 that sends through the producer page. */
static struct fake *fake_producer(uint64_t limit, uint32_t batch)
{
	struct fake *f = calloc(1, sizeof(*f));

	f->h.fd = -1;
	f->h.info.my_rank = 0;
	f->h.info.window = WINDOW;
	f->h.info.slot_size = SLOT;
	f->h.ring[0] = f->ring;
	f->h.batch = batch;
	f->h.lens = f->lens;
	f->h.prod = &f->prod.page;
	f->h.prod_lens = SPINDLE_PRODUCER_LENS(f->h.prod);
	f->prod.page.limit = limit;
	return f;
}

TEST(producer_hands_out_what_the_kernel_allows_without_a_call)
{
	struct fake *f = fake_producer(WINDOW, 100);
	void *p;
	int i;

	for (i = 0; i < WINDOW; i++) {
		ASSERT_EQ(spindle_get_slot(&f->h, 0, &p), 0);
		EXPECT_TRUE(p == f->ring + i * SLOT);
	}
	/* the limit reached: no wait asked for, so no slot */
	EXPECT_EQ(spindle_get_slot(&f->h, 0, &p), -EAGAIN);
	EXPECT_TRUE(p == NULL);
	/* the kernel frees two more: they wrap to the ring's start */
	f->prod.page.limit = WINDOW + 2;
	ASSERT_EQ(spindle_get_slot(&f->h, 0, &p), 0);
	EXPECT_TRUE(p == f->ring);
	EXPECT_EQ(f->h.wake_calls, 0);
	free(f);
}

TEST(commit_publishes_the_length_then_the_tail)
{
	struct fake *f = fake_producer(WINDOW, 100);
	void *p;

	EXPECT_EQ(spindle_commit(&f->h, 5), -EINVAL);	/* no slot handed out */
	ASSERT_EQ(spindle_get_slot(&f->h, 0, &p), 0);
	ASSERT_EQ(spindle_get_slot(&f->h, 0, &p), 0);
	EXPECT_EQ(spindle_commit(&f->h, 10), 0);
	EXPECT_EQ(f->h.prod_lens[0], 10);
	EXPECT_EQ(f->prod.page.tail, 1);
	EXPECT_EQ(spindle_commit(&f->h, SPINDLE_LEN_VOID), 0);
	EXPECT_EQ(f->h.prod_lens[1], SPINDLE_LEN_VOID);
	EXPECT_EQ(f->prod.page.tail, 2);
	EXPECT_EQ(spindle_commit(&f->h, 3), -EINVAL);	/* both committed */
	free(f);
}

TEST(doorbell_rings_only_when_asked_and_a_batch_waits)
{
	struct fake *f = fake_producer(WINDOW, 2);
	void *p;

	/* the kernel's thread runs (no NEED_WAKEUP): a batch makes no call */
	ASSERT_EQ(spindle_get_slot(&f->h, 0, &p), 0);
	EXPECT_EQ(spindle_commit(&f->h, 1), 0);
	ASSERT_EQ(spindle_get_slot(&f->h, 0, &p), 0);
	EXPECT_EQ(spindle_commit(&f->h, 1), 0);
	EXPECT_EQ(f->h.wake_calls, 0);
	/* it sleeps: what was never rung for is owed, so the next commit rings
	 * (and fd -1 says it did)
	 */
	f->prod.page.flags = SPINDLE_PRODUCER_NEED_WAKEUP;
	ASSERT_EQ(spindle_get_slot(&f->h, 0, &p), 0);
	EXPECT_EQ(spindle_commit(&f->h, 1), -EBADF);
	EXPECT_EQ(f->h.wake_calls, 1);
	/* from that ring on, one commit waits for its batch, the second rings */
	ASSERT_EQ(spindle_get_slot(&f->h, 0, &p), 0);
	EXPECT_EQ(spindle_commit(&f->h, 1), 0);
	EXPECT_EQ(f->h.wake_calls, 1);
	ASSERT_EQ(spindle_get_slot(&f->h, 0, &p), 0);
	EXPECT_EQ(spindle_commit(&f->h, 1), -EBADF);
	EXPECT_EQ(f->h.wake_calls, 2);
	/* nothing new since the last ring: flush makes no call */
	EXPECT_EQ(spindle_flush(&f->h), 0);
	EXPECT_EQ(f->h.wake_calls, 2);
	free(f);
}

TEST(broken_page_fails_the_wait_with_eio)
{
	struct fake *f = fake_producer(0, 100);
	void *p;

	f->prod.page.flags = SPINDLE_PRODUCER_BROKEN;
	EXPECT_EQ(spindle_get_slot(&f->h, -1, &p), -EIO);
	EXPECT_TRUE(p == NULL);
	free(f);
}

TEST(send_mode_hands_out_reserved_slots_and_bounds_commits)
{
	struct fake *f = fake_producer(0, 100);
	void *p;
	int i;

	f->h.prod = NULL;
	f->h.res_next = 6;		/* as a SEND call reserved them */
	f->h.res_left = WINDOW;
	for (i = 0; i < WINDOW; i++) {
		ASSERT_EQ(spindle_get_slot(&f->h, 0, &p), 0);
		EXPECT_TRUE(p == f->ring + ((6 + i) % WINDOW) * SLOT);
		EXPECT_EQ(spindle_commit(&f->h, (uint32_t)i), 0);
	}
	EXPECT_EQ(f->h.ncommit, WINDOW);
	/* more commits than slots: refused, lens[] not overrun */
	EXPECT_EQ(spindle_commit(&f->h, 1), -EINVAL);
	/* out of reservations: the SEND call is made (and fails on fd -1) */
	EXPECT_EQ(spindle_get_slot(&f->h, 0, &p), -EBADF);
	EXPECT_EQ(f->h.send_calls, 1);
	free(f);
}

TEST(a_node_that_does_not_send_gets_eperm)
{
	struct fake *f = fake_producer(WINDOW, 100);
	volatile int none = -1;	/* from INFO at run time, as in a real handle */
	void *p = f;

	f->h.prod = NULL;
	f->h.info.my_rank = none;
	EXPECT_EQ(spindle_get_slot(&f->h, 0, &p), -EPERM);
	EXPECT_TRUE(p == NULL);
	free(f);
}

TEST(view_of_copies_a_record_and_skips_a_message)
{
	struct spindle_desc d[2];
	struct spindle_view_desc v, in = {
		.view_id = 7, .members = 0x5, .own_delivered = 123, .nmembers = 2,
		.rank = SPINDLE_RANK_NONE, .flags = SPINDLE_DESC_VIEW,
	};

	memset(d, 0, sizeof(d));
	memcpy(&d[1], &in, sizeof(in));
	d[0].len = 9;
	EXPECT_EQ(spindle_view_of(&d[0], &v), 0);
	ASSERT_EQ(spindle_view_of(&d[1], &v), 1);
	EXPECT_EQ(v.view_id, 7);
	EXPECT_EQ(v.members, 0x5);
	EXPECT_EQ(v.own_delivered, 123);
	EXPECT_EQ(v.nmembers, 2);
	EXPECT_EQ(d[1].rank, SPINDLE_RANK_NONE);	/* where a descriptor has it */
}

static void *crc_thread(void *arg)
{
	*(uint32_t *)arg = spindle_crc32c(0, "123456789", 9);
	return NULL;
}

TEST(crc32c_check_value_from_racing_first_calls)
{
	pthread_t t[4];
	uint32_t got[4];
	int i;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, crc_thread, &got[i]), 0);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(got[i], 0xe3069283U);		/* the standard check value */
	}
}

TEST(config_text_gives_a_subgroup_its_block_device)
{
	static struct spindle_cfg cfg;
	char err[128];

	ASSERT_EQ(spindle_cfg_parse_text("group 4\nmember 0 10.0.0.1\n"
					 "subgroup 2 max_msg 4160 blk_mib 16\n"
					 "subgroup 3\n", &cfg, err, sizeof(err)), 0);
	EXPECT_EQ(cfg.subgroups[0].blk_mib, 16);
	EXPECT_EQ(cfg.subgroups[0].max_msg, 4160);
	EXPECT_EQ(cfg.subgroups[1].blk_mib, 0);
	EXPECT_EQ(spindle_cfg_parse_text("group 4\nmember 0 10.0.0.1\n"
					 "subgroup 2 blk_mib lots\n", &cfg, err, sizeof(err)), -EINVAL);
	EXPECT_TRUE(strstr(err, "bad blk_mib") != NULL);
}
