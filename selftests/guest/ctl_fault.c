// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/spindle_ctl while a caller's buffer faults: SPINDLE_CTL_GROUP_INFO
 * copies out to memory that a userfaultfd holds (the copy waits until the
 * test resolves the fault), and meanwhile another caller must get the
 * control lock: a second GROUP_INFO, and a DOWN of the very group being
 * reported, must return at once.  (A copy out made under
 * spindle_groups_lock would let one slow page hold every control
 * operation, device removal included.)  Likewise a DOWN held on its way
 * (fault_down_delay_ms: a group down may wait up to a minute for its
 * peers) must hold nobody else: DOWN must not tear the group down under
 * that lock.
 *
 * Needs spindle.ko loaded, root (a userfaultfd that kernel copies wait on)
 * and a kernel with userfaultfd; one-member groups 63 to 67 on this guest.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../userspace/lib/libspindle.h"
#include "../ktap.h"
#include "guest.h"

#define G_INFO		63
#define G_DOWN		64
#define G_HELD		65	/* goes down, held */
#define G_OTHER		66	/* up meanwhile */
#define G_LATE		67	/* comes up meanwhile */
#define HOLD_MS		6000
#define DOWN_HOLD	"fault_down_delay_ms"
#define PROMPT_S	3.0	/* "at once", for a guest under TCG */

/* A one-member group (active at once) on this guest. */
static int group_up(int ctl, uint32_t group)
{
	struct spindle_cfg c;
	struct spindle_cfg_subgroup *sub = &c.subgroups[0];
	char err[256];

	memset(&c, 0, sizeof(c));
	c.group_id = group;
	c.nmembers = 1;
	c.nsubgroups = 1;
	if (!guest_addr() || spindle_parse_addr(guest_addr(), 7500 + group, &c.members[0]))
		return -1;
	sub->window = 4;
	sub->max_msg = 64;
	sub->mode = SPINDLE_MODE_ORDERED;
	sub->nmembers = sub->nsenders = 1;
	return spindle_up(ctl, &c, NULL, err, sizeof(err));
}

/* An anonymous page whose first touch waits on @uffd. */
static void *held_page(int *uffd)
{
	long psz = sysconf(_SC_PAGESIZE);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	void *page;

	*uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (*uffd < 0 || ioctl(*uffd, UFFDIO_API, &api))
		return NULL;
	page = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return NULL;
	reg.range.start = (uintptr_t)page;
	reg.range.len = psz;
	if (ioctl(*uffd, UFFDIO_REGISTER, &reg))
		return NULL;
	return page;
}

/* Wait (up to 10 s) until a fault on @uffd's page is pending. */
static int fault_pending(int uffd)
{
	struct pollfd p = { .fd = uffd, .events = POLLIN };
	struct uffd_msg msg;

	if (poll(&p, 1, 10000) != 1 || read(uffd, &msg, sizeof(msg)) != sizeof(msg))
		return 0;
	return msg.event == UFFD_EVENT_PAGEFAULT;
}

/* Let the waiting copy in: map a zero page there. */
static int fault_resolve(int uffd, void *page)
{
	struct uffdio_zeropage z = {
		.range = { .start = (uintptr_t)page, .len = sysconf(_SC_PAGESIZE) },
	};

	return ioctl(uffd, UFFDIO_ZEROPAGE, &z);
}

struct call {
	int ctl;
	uint32_t group;
	void *members;		/* GROUP_INFO's member array, or NULL */
	int down;		/* DOWN instead of GROUP_INFO */
	int ret, err;
	volatile int done;
	double took;
};

static void *call_fn(void *arg)
{
	struct call *c = arg;
	struct spindle_ctl_group_info gi = {
		.size = sizeof(gi),
		.group_id = c->group,
		.nmembers = 1,
		.member_info_size = sizeof(struct spindle_member_info),
		.members = (uintptr_t)c->members,
	};
	double t0 = now();

	if (c->down) {
		c->ret = spindle_down(c->ctl, c->group, 1000);
	} else {
		if (!c->members)
			gi.nmembers = gi.member_info_size = 0;
		c->ret = ioctl(c->ctl, SPINDLE_CTL_GROUP_INFO, &gi);
	}
	c->err = c->ret ? errno : 0;
	c->took = now() - t0;
	c->done = 1;
	return NULL;
}

/* Has @c returned within @secs? */
static int returns_within(struct call *c, double secs)
{
	double until = now() + secs;

	while (!c->done && now() < until)
		usleep(10000);
	return c->done;
}

/*
 * GROUP_INFO of @group copying out to a held page, and @second (another
 * caller) while it waits: @second must return within PROMPT_S.
 */
static void held_copy(struct kt *_t, int ctl, uint32_t group, struct call *second)
{
	struct call first = { .ctl = ctl, .group = group };
	pthread_t a, b;
	int uffd, prompt;

	first.members = held_page(&uffd);
	if (!first.members) {
		if (errno == ENOSYS)
			SKIP("this kernel has no userfaultfd");
		ASSERT_TRUE(first.members != NULL);
	}
	ASSERT_EQ(pthread_create(&a, NULL, call_fn, &first), 0);
	ASSERT_TRUE(fault_pending(uffd));
	ASSERT_EQ(pthread_create(&b, NULL, call_fn, second), 0);
	prompt = returns_within(second, PROMPT_S);
	if (!prompt)
		kt_diag("the second call waited %.0f s and more on a page fault it has nothing to do with",
			PROMPT_S);
	EXPECT_EQ(fault_resolve(uffd, first.members), 0);
	pthread_join(b, NULL);
	pthread_join(a, NULL);
	kt_diag("second call: %d (%s) after %.3f s; the held copy: %d after %.3f s",
		second->ret, strerror(second->err), second->took, first.ret, first.took);
	EXPECT_TRUE(prompt);
	EXPECT_EQ(second->ret, 0);
	/* the held copy reports what it took before, group gone or not */
	EXPECT_EQ(first.ret, 0);
	EXPECT_EQ(((struct spindle_member_info *)first.members)->id, 0);
	close(uffd);
}

TEST(info_waits_on_a_fault_others_do_not)
{
	int ctl = spindle_ctl_open();
	struct call second = { .ctl = ctl, .group = G_INFO };

	ASSERT_GE(ctl, 0);
	ASSERT_EQ(group_up(ctl, G_INFO), 0);
	held_copy(_t, ctl, G_INFO, &second);
	spindle_down(ctl, G_INFO, 1000);
	close(ctl);
}

TEST(group_goes_down_while_its_info_waits_on_a_fault)
{
	int ctl = spindle_ctl_open();
	struct call second = { .ctl = ctl, .group = G_DOWN, .down = 1 };

	ASSERT_GE(ctl, 0);
	ASSERT_EQ(group_up(ctl, G_DOWN), 0);
	held_copy(_t, ctl, G_DOWN, &second);
	EXPECT_ERRNO(spindle_down(ctl, G_DOWN, 1000), ENOENT);
	close(ctl);
}

/* GROUP_INFO of @group (no members copied): 0, or -1 with errno; *@took in s */
static int info_timed(int ctl, uint32_t group, double *took)
{
	struct spindle_ctl_group_info gi = { .size = sizeof(gi), .group_id = group };
	double t0 = now();
	int ret = ioctl(ctl, SPINDLE_CTL_GROUP_INFO, &gi);

	*took = now() - t0;
	return ret;
}

TEST(down_held_others_do_not_wait)
{
	int ctl = spindle_ctl_open();
	struct call down = { .ctl = ctl, .group = G_HELD, .down = 1 };
	double took, slowest = 0, t0;
	char hold[16];
	pthread_t a;
	int gone = 0, held;

	ASSERT_GE(ctl, 0);
	snprintf(hold, sizeof(hold), "%d", HOLD_MS);
	if (set_param(DOWN_HOLD, "0"))
		SKIP("no %s (a module built without its test hooks)", DOWN_HOLD);
	ASSERT_EQ(group_up(ctl, G_OTHER), 0);
	ASSERT_EQ(group_up(ctl, G_HELD), 0);
	ASSERT_EQ(set_param(DOWN_HOLD, hold), 0);
	ASSERT_EQ(pthread_create(&a, NULL, call_fn, &down), 0);
	/* until the DOWN has taken its group off the list, each call timed */
	t0 = now();
	while (!gone && now() - t0 < 2 * PROMPT_S) {
		gone = info_timed(ctl, G_HELD, &took) && errno == ENOENT;
		slowest = took > slowest ? took : slowest;
		usleep(2000);
	}
	held = !down.done;
	EXPECT_EQ(info_timed(ctl, G_OTHER, &took), 0);
	slowest = took > slowest ? took : slowest;
	t0 = now();
	EXPECT_EQ(group_up(ctl, G_LATE), 0);
	took = now() - t0;
	slowest = took > slowest ? took : slowest;
	held &= !down.done;
	pthread_join(a, NULL);
	set_param(DOWN_HOLD, "0");
	kt_diag("the DOWN took %.3f s (held %d ms); meanwhile the slowest other call took %.3f s",
		down.took, HOLD_MS, slowest);
	EXPECT_TRUE(gone);
	EXPECT_TRUE(held);	/* they ran while the DOWN was held */
	/* (KT_CMP compares integers: these are seconds, fractions matter) */
	EXPECT_TRUE(slowest < PROMPT_S);
	EXPECT_EQ(down.ret, 0);
	EXPECT_TRUE(down.took >= HOLD_MS / 1000.0 - 0.5);
	EXPECT_EQ(spindle_down(ctl, G_LATE, 1000), 0);
	EXPECT_EQ(spindle_down(ctl, G_OTHER, 1000), 0);
	close(ctl);
}
