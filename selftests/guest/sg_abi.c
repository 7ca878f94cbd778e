// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/spindleN against bad input: wrong sizes, reserved fields and flags,
 * lengths over the maximum, marking slots never reserved, bad pointers,
 * mmap at a wrong offset, length or protection, writes through a read-only
 * mapping; and after all of it the subgroup still works.
 *
 * Two groups, on this guest alone: group 61 (just this member: active at
 * once) and group 62 (this member and one at an address nobody has: it
 * stays connecting, but it has a second sender whose ring maps read-only).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../userspace/lib/libspindle.h"
#include "../ktap.h"
#include "guest.h"

#define G_ACTIVE	61
#define G_WAITING	62
#define WINDOW		4
#define MAX_MSG		256

static int ctl = -1;
static int up_ok;
static char devpath[2][64];	/* [0]: group 61, [1]: group 62 */

static void make_cfg(struct spindle_cfg *c, uint32_t group, int nmembers)
{
	struct spindle_cfg_subgroup *sg = &c->subgroups[0];
	int i;

	memset(c, 0, sizeof(*c));
	c->group_id = group;
	c->self_id = 0;
	c->nmembers = nmembers;
	c->nsubgroups = 1;
	spindle_parse_addr(guest_addr(), 7500 + group, &c->members[0]);
	c->members[0].id = 0;
	if (nmembers > 1) {
		spindle_parse_addr("10.77.0.200", 7500 + group, &c->members[1]);
		c->members[1].id = 1;
	}
	sg->window = WINDOW;
	sg->max_msg = MAX_MSG;
	sg->mode = SPINDLE_MODE_ORDERED;
	sg->nmembers = sg->nsenders = nmembers;
	for (i = 0; i < nmembers; i++)
		sg->members[i] = sg->senders[i] = i;
}

static void note_base_fds(void);

__attribute__((constructor(200))) static void setup(void)
{
	struct spindle_cfg c;
	char err[256];

	if (!guest_addr())
		return;
	ctl = spindle_ctl_open();
	if (ctl < 0)
		return;
	make_cfg(&c, G_ACTIVE, 1);
	if (spindle_up(ctl, &c, NULL, err, sizeof(err)))
		return;
	make_cfg(&c, G_WAITING, 2);
	if (spindle_up(ctl, &c, NULL, err, sizeof(err)))
		return;
	if (spindle_find_device(G_ACTIVE, 0, devpath[0], sizeof(devpath[0])) ||
	    spindle_find_device(G_WAITING, 0, devpath[1], sizeof(devpath[1])))
		return;
	note_base_fds();
	up_ok = 1;
}

/* Where the group's predicate thread (spindle/61) stands: its kernel stack. */
static void dump_thread(void)
{
	char path[64], want[32], line[256];
	struct dirent *de;
	DIR *d = opendir("/proc");
	FILE *f;

	snprintf(want, sizeof(want), "spindle/%d\n", G_ACTIVE);
	while (d && (de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%.20s/comm", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(line, sizeof(line), f) || strcmp(line, want)) {
			fclose(f);
			continue;
		}
		fclose(f);
		snprintf(path, sizeof(path), "/proc/%.20s/stack", de->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			printf("# thread %s", line);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
}

/*
 * The one-member group's engine as the tests left it (debugfs, if
 * mounted): a subgroup here that stops reclaiming and delivering for good
 * may leave nothing in the kernel log; this says where it stood.
 */
static void dump_stats(void)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/spindle/group%d/stats", G_ACTIVE);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("# %s", line);
	fclose(f);
	dump_thread();
}

__attribute__((destructor)) static void teardown(void)
{
	dump_stats();
	if (ctl >= 0) {
		spindle_down(ctl, G_ACTIVE, 1000);
		spindle_down(ctl, G_WAITING, 0);
	}
}

/* the files open when the tests start (fd < 1024): bit fd of base_fds */
static uint64_t base_fds[16];

static void note_base_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int fd;

	while (d && (de = readdir(d))) {
		fd = atoi(de->d_name);
		if (de->d_name[0] != '.' && fd < 1024 && fd != dirfd(d))
			base_fds[fd / 64] |= 1ULL << (fd % 64);
	}
	if (d)
		closedir(d);
}

/*
 * A test that fails an ASSERT returns with its files open, and a file
 * holds its reservations: every later test would find the window short.
 * Each test starts by closing what an earlier one left open, so one
 * failure is reported once.
 */
static void close_leftovers(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int fd, n = 0, fds[64];

	while (d && (de = readdir(d)) && n < 64) {
		fd = atoi(de->d_name);
		if (de->d_name[0] == '.' || fd == dirfd(d) ||
		    (fd < 1024 && (base_fds[fd / 64] >> (fd % 64) & 1)))
			continue;
		fds[n++] = fd;
	}
	if (d)
		closedir(d);
	while (n--) {
		kt_diag("closing fd %d, left open by an earlier test", fds[n]);
		close(fds[n]);
	}
}

#define NEED_GROUPS()							\
	do {								\
		if (!up_ok)						\
			SKIP("groups did not come up (SPINDLE_ADDRS?)");	\
		close_leftovers();					\
	} while (0)

/*
 * Wait until the whole window is free again.  What an earlier test sent
 * or voided is published, delivered and reclaimed by the predicate thread
 * in its own time, and a reservation made before then gets fewer slots
 * (the ABI hands out "up to k", rightly): a test that needs k at once
 * waits for them first.
 */
static int whole_window_free(void)
{
	struct spindle_group_status st;
	uint32_t free_slots = 0;
	int i;

	for (i = 0; i < 5000; i++) {
		if (spindle_group_info(ctl, G_ACTIVE, 0, &st) || !st.info.nsubgroups)
			return -1;
		free_slots = st.subgroups[0].free_slots;
		if (free_slots == WINDOW)
			return 0;
		usleep(1000);
	}
	kt_diag("free slots: %u of %u after 5 s", free_slots, WINDOW);
	return -1;
}

static int dev_open(int which, int flags)
{
	return open(devpath[which], flags | O_CLOEXEC);
}

static int send_call(int fd, uint32_t count, const uint32_t *lens, uint32_t reserve,
		     uint32_t flags, struct spindle_send *out)
{
	struct spindle_send s = {
		.size = sizeof(s), .flags = flags, .count = count,
		.lens = (uintptr_t)lens, .reserve = reserve, .timeout_ms = 2000,
	};
	int ret = ioctl(fd, SPINDLE_IOC_SEND, &s);

	if (out)
		*out = s;
	return ret;
}

static int recv_call(int fd, struct spindle_desc *d, uint32_t max, uint32_t timeout_ms)
{
	struct spindle_recv r = {
		.size = sizeof(r), .max = max, .timeout_ms = timeout_ms,
		.descs = (uintptr_t)d,
	};

	return ioctl(fd, SPINDLE_IOC_RECV, &r) < 0 ? -1 : (int)r.count;
}

TEST(info_argument_rules)
{
	struct spindle_info info = { .size = sizeof(info) };
	struct { struct spindle_info i; uint64_t more; } big = { .i.size = sizeof(big), .more = 1 };
	int fd;

	NEED_GROUPS();
	fd = dev_open(0, O_RDWR);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(ioctl(fd, SPINDLE_IOC_INFO, &info), 0);
	EXPECT_EQ(info.window, WINDOW);
	EXPECT_EQ(info.max_msg, MAX_MSG);
	info.size = 0;
	EXPECT_ERRNO(ioctl(fd, SPINDLE_IOC_INFO, &info), EINVAL);
	info.size = 3;
	EXPECT_ERRNO(ioctl(fd, SPINDLE_IOC_INFO, &info), EINVAL);
	EXPECT_ERRNO(ioctl(fd, SPINDLE_IOC_INFO, &big), E2BIG);
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.reserved[2] = 1;
	EXPECT_ERRNO(ioctl(fd, SPINDLE_IOC_INFO, &info), EINVAL);
	EXPECT_ERRNO(ioctl(fd, SPINDLE_IOC_INFO, NULL), EFAULT);
	EXPECT_ERRNO(ioctl(fd, SPINDLE_IOC_INFO, (void *)0xffffffff81000000UL), EFAULT);
	EXPECT_ERRNO(ioctl(fd, _IOWR(SPINDLE_IOC_MAGIC, 0x3f, struct spindle_info), &info), ENOTTY);
	close(fd);
}

TEST(send_rejects_bad_arguments)
{
	struct spindle_send s;
	uint32_t lens[1] = { 8 };
	int fd;

	NEED_GROUPS();
	fd = dev_open(0, O_RDWR);
	ASSERT_GE(fd, 0);
	EXPECT_ERRNO(send_call(fd, 0, NULL, 1, 0x80, NULL), EINVAL);	/* unknown flag */
	EXPECT_ERRNO(send_call(fd, 1, lens, 0, 0, NULL), EINVAL);	/* nothing reserved */
	EXPECT_ERRNO(send_call(fd, 0, NULL, WINDOW + 1, 0, NULL), EINVAL);
	s = (struct spindle_send){ .size = sizeof(s), .reserve = 1, .reserved = 7 };
	EXPECT_ERRNO(ioctl(fd, SPINDLE_IOC_SEND, &s), EINVAL);
	s = (struct spindle_send){ .size = sizeof(s), .reserve = 1, .first = 5 };
	EXPECT_ERRNO(ioctl(fd, SPINDLE_IOC_SEND, &s), EINVAL);	/* out fields must be 0 */
	ASSERT_EQ(send_call(fd, 0, NULL, 1, 0, &s), 0);
	EXPECT_EQ(s.reserved_count, 1);
	EXPECT_ERRNO(send_call(fd, 1, (uint32_t *)8, 0, 0, NULL), EFAULT);
	EXPECT_ERRNO(send_call(fd, 2, lens, 0, 0, NULL), EINVAL);	/* holds only 1 */
	ASSERT_EQ(send_call(fd, 0, NULL, 0, 0, &s), 0);
	EXPECT_EQ(s.pending, 1);
	close(fd);	/* the reservation goes out as a null */
}

TEST(length_over_max_marks_nothing)
{
	uint32_t lens[2] = { 10, MAX_MSG + 1 };
	struct spindle_send s;
	int fd;

	NEED_GROUPS();
	fd = dev_open(0, O_RDWR);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(whole_window_free(), 0);
	ASSERT_EQ(send_call(fd, 0, NULL, 2, 0, &s), 0);
	ASSERT_EQ(s.reserved_count, 2);
	EXPECT_ERRNO(send_call(fd, 2, lens, 0, 0, &s), EMSGSIZE);
	ASSERT_EQ(send_call(fd, 0, NULL, 0, 0, &s), 0);
	EXPECT_EQ(s.pending, 2);		/* neither was marked */
	lens[1] = SPINDLE_LEN_VOID;
	lens[0] = SPINDLE_LEN_VOID;
	EXPECT_EQ(send_call(fd, 2, lens, 0, 0, &s), 0);
	EXPECT_EQ(s.pending, 0);
	close(fd);
}

TEST(whole_window_then_more_is_einval)
{
	struct spindle_send s;
	uint32_t lens[WINDOW];
	int fd, i;

	NEED_GROUPS();
	fd = dev_open(0, O_RDWR);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(whole_window_free(), 0);
	ASSERT_EQ(send_call(fd, 0, NULL, WINDOW, 0, &s), 0);
	ASSERT_EQ(s.reserved_count, WINDOW);
	EXPECT_ERRNO(send_call(fd, 0, NULL, 1, 0, NULL), EINVAL);
	for (i = 0; i < WINDOW; i++)
		lens[i] = SPINDLE_LEN_VOID;
	EXPECT_EQ(send_call(fd, WINDOW, lens, 0, 0, &s), 0);
	close(fd);
}

TEST(wrong_open_mode_is_eperm)
{
	struct spindle_desc d[2];
	int rd, wr;

	NEED_GROUPS();
	rd = dev_open(0, O_RDONLY);
	wr = dev_open(0, O_WRONLY);
	ASSERT_GE(rd, 0);
	ASSERT_GE(wr, 0);
	EXPECT_ERRNO(send_call(rd, 0, NULL, 1, 0, NULL), EPERM);
	EXPECT_ERRNO(recv_call(wr, d, 2, 0), EPERM);
	close(rd);
	close(wr);
}

TEST(connecting_group_does_not_block_nonblocking_senders)
{
	struct spindle_send s = { .size = sizeof(s), .reserve = 1, .timeout_ms = 200 };
	int fd;

	NEED_GROUPS();
	fd = dev_open(1, O_RDWR);
	ASSERT_GE(fd, 0);
	EXPECT_ERRNO(send_call(fd, 0, NULL, 1, SPINDLE_SEND_NONBLOCK, NULL), EAGAIN);
	EXPECT_ERRNO(ioctl(fd, SPINDLE_IOC_SEND, &s), ETIMEDOUT);
	close(fd);
	fd = dev_open(1, O_RDWR | O_NONBLOCK);
	ASSERT_GE(fd, 0);
	s.reserved_count = 0;
	EXPECT_ERRNO(ioctl(fd, SPINDLE_IOC_SEND, &s), EAGAIN);
	close(fd);
}

TEST(recv_rejects_bad_arguments)
{
	struct spindle_recv r = { .size = sizeof(r), .flags = 1 };
	struct spindle_desc d[2];
	int fd;

	NEED_GROUPS();
	fd = dev_open(0, O_RDWR);
	ASSERT_GE(fd, 0);
	EXPECT_ERRNO(ioctl(fd, SPINDLE_IOC_RECV, &r), EINVAL);
	r.flags = 0;
	r.reserved[1] = 1;
	EXPECT_ERRNO(ioctl(fd, SPINDLE_IOC_RECV, &r), EINVAL);
	EXPECT_ERRNO(recv_call(fd, d, 2, 0), EAGAIN);	/* nothing sent */
	close(fd);
}

/* Send @n messages of @len bytes, byte j of message k = k * 17 + j,
 * numbered from @first (at most a window at a time: nobody releases here).
 */
static int send_msgs(int fd, const struct spindle_handle *h, int first, int n,
		     uint32_t len)
{
	uint32_t lens[WINDOW];
	struct spindle_send s;
	int k, i, batch;

	for (k = 0; k < n; k += batch) {
		batch = n - k < WINDOW ? n - k : WINDOW;
		/* up to batch slots: at least one, as many as are free */
		if (send_call(fd, 0, NULL, batch, 0, &s) || !s.reserved_count) {
			kt_diag("send_msgs: reserving %d at message %d: %s (pending %u)",
				batch, first + k, strerror(errno), s.pending);
			return -1;
		}
		batch = (int)s.reserved_count;
		for (i = 0; i < batch; i++) {
			uint8_t *p = (uint8_t *)h->ring[h->info.my_rank] +
				     ((s.first + i) % h->info.window) * h->info.slot_size;
			uint32_t j;

			for (j = 0; j < len; j++)
				p[j] = (uint8_t)((first + k + i) * 17 + j);
			lens[i] = len;
		}
		if (send_call(fd, batch, lens, 0, 0, NULL))
			return -1;
	}
	return 0;
}

/* Receive @n messages numbered from @first; check send_msgs()'s pattern. */
static int recv_msgs(struct spindle_handle *h, int first, int n, uint32_t len)
{
	int got = 0, r, i;

	while (got < n) {
		r = spindle_recv(h, 2000);
		if (r <= 0)
			return got;
		for (i = 0; i < r; i++, got++) {
			const uint8_t *p = spindle_msg_data(h, &h->descs[i]);
			uint32_t j;

			if (h->descs[i].len != len)
				return -1;
			for (j = 0; j < len; j++)
				if (p[j] != (uint8_t)((first + got) * 17 + j))
					return -1;
		}
	}
	spindle_done(h);	/* give the slots back */
	return got;
}

TEST(bad_descriptor_pointer_loses_nothing)
{
	struct spindle_handle h;
	int ret;

	NEED_GROUPS();
	ASSERT_EQ(spindle_open_path(&h, devpath[0], O_RDWR), 0);
	EXPECT_ERRNO(recv_call(h.fd, h.descs, 1, 0), EAGAIN);	/* now a consumer */
	ASSERT_EQ(send_msgs(h.fd, &h, 0, 1, 100), 0);
	usleep(100000);
	EXPECT_ERRNO(recv_call(h.fd, NULL, 4, 2000), EFAULT);
	EXPECT_ERRNO(recv_call(h.fd, (struct spindle_desc *)0xffffffff81000000UL, 4, 0), EFAULT);
	ret = recv_msgs(&h, 0, 1, 100);
	EXPECT_EQ(ret, 1);
	spindle_close(&h);
}

TEST(mmap_offset_length_and_sharing)
{
	struct spindle_handle h;
	size_t sz;
	void *p;

	NEED_GROUPS();
	ASSERT_EQ(spindle_open_path(&h, devpath[0], O_RDWR), 0);
	sz = h.rings[0].mmap_size;
	EXPECT_TRUE(mmap(NULL, sz, PROT_READ, MAP_SHARED, h.fd, 0) == MAP_FAILED && errno == EINVAL);
	EXPECT_TRUE(mmap(NULL, sz, PROT_READ, MAP_SHARED, h.fd, (off_t)(1ULL << 32) + 4096) == MAP_FAILED &&
		    errno == EINVAL);
	EXPECT_TRUE(mmap(NULL, sz, PROT_READ, MAP_SHARED, h.fd, (off_t)(5ULL << 32)) == MAP_FAILED &&
		    errno == EINVAL);
	EXPECT_TRUE(mmap(NULL, sz + 4096, PROT_READ, MAP_SHARED, h.fd, (off_t)(1ULL << 32)) == MAP_FAILED &&
		    errno == EINVAL);
	EXPECT_TRUE(mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE, h.fd, (off_t)(1ULL << 32)) == MAP_FAILED &&
		    errno == EINVAL);
	p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, h.fd, (off_t)(1ULL << 32));
	EXPECT_TRUE(p != MAP_FAILED);
	if (p != MAP_FAILED)
		munmap(p, sz);
	spindle_close(&h);
}

/*
 * A file opened read-only is a reader: it maps every ring, its own sender's
 * too, shared and read-only (mmap takes VM_SHARED off such a mapping and
 * leaves VM_MAYSHARE), and takes deliveries; it can never write a ring.
 */
TEST(read_only_file_maps_rings_to_read)
{
	struct spindle_handle h;
	size_t sz;
	void *p;

	NEED_GROUPS();
	ASSERT_EQ(spindle_open_path(&h, devpath[0], O_RDONLY), 0);
	ASSERT_EQ(h.info.my_rank, 0);
	ASSERT_TRUE(h.ring[0] != NULL);
	sz = h.rings[0].mmap_size;
	EXPECT_ERRNO(mprotect(h.ring[0], sz, PROT_READ | PROT_WRITE), EACCES);
	EXPECT_TRUE(mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, h.fd,
			 (off_t)h.rings[0].mmap_offset) == MAP_FAILED && errno == EACCES);
	/* private copies of a ring: never, not even to read */
	p = mmap(NULL, sz, PROT_READ, MAP_PRIVATE, h.fd, (off_t)h.rings[0].mmap_offset);
	EXPECT_TRUE(p == MAP_FAILED && errno == EINVAL);
	if (p != MAP_FAILED)
		munmap(p, sz);
	EXPECT_EQ(spindle_subscribe(&h), 0);
	spindle_close(&h);
}

TEST(other_senders_rings_are_read_only)
{
	struct spindle_handle h;
	size_t sz;
	void *p;

	NEED_GROUPS();
	ASSERT_EQ(spindle_open_path(&h, devpath[1], O_RDWR), 0);
	ASSERT_EQ(h.info.nsenders, 2);
	ASSERT_EQ(h.info.my_rank, 0);
	EXPECT_EQ(h.rings[1].flags & SPINDLE_RING_WRITABLE, 0);
	sz = h.rings[1].mmap_size;
	EXPECT_TRUE(mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, h.fd,
			 (off_t)h.rings[1].mmap_offset) == MAP_FAILED && errno == EACCES);
	p = mmap(NULL, sz, PROT_READ, MAP_SHARED, h.fd, (off_t)h.rings[1].mmap_offset);
	ASSERT_TRUE(p != MAP_FAILED);
	EXPECT_ERRNO(mprotect(p, sz, PROT_READ | PROT_WRITE), EACCES);
	munmap(p, sz);
	spindle_close(&h);
}

TEST(write_through_read_only_mapping_is_sigsegv)
{
	struct spindle_handle h;
	struct spindle_info info = { .size = sizeof(info) };
	int status;
	pid_t pid;

	NEED_GROUPS();
	ASSERT_EQ(spindle_open_path(&h, devpath[1], O_RDWR), 0);
	pid = fork();
	if (pid == 0) {
		*(volatile char *)h.ring[1] = 1;
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
	EXPECT_EQ(((volatile char *)h.ring[1])[0], 0);
	EXPECT_EQ(ioctl(h.fd, SPINDLE_IOC_INFO, &info), 0);
	spindle_close(&h);
}

TEST(closing_with_reservations_does_not_stall)
{
	struct spindle_handle h;
	struct spindle_send s;
	int fd;

	NEED_GROUPS();
	fd = dev_open(0, O_RDWR);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(whole_window_free(), 0);
	ASSERT_EQ(send_call(fd, 0, NULL, 3, 0, &s), 0);
	ASSERT_EQ(s.reserved_count, 3);
	close(fd);
	ASSERT_EQ(spindle_open_path(&h, devpath[0], O_RDWR), 0);
	EXPECT_ERRNO(recv_call(h.fd, h.descs, 1, 0), EAGAIN);
	ASSERT_EQ(send_msgs(h.fd, &h, 0, 2, 33), 0);
	EXPECT_EQ(recv_msgs(&h, 0, 2, 33), 2);
	EXPECT_ERRNO(recv_call(h.fd, h.descs, 4, 200), ETIMEDOUT);	/* no nulls delivered */
	spindle_close(&h);
}

TEST(subgroup_still_works_after_all_that)
{
	struct spindle_handle h;
	int k;

	NEED_GROUPS();
	ASSERT_EQ(spindle_open_path(&h, devpath[0], O_RDWR), 0);
	EXPECT_ERRNO(recv_call(h.fd, h.descs, 1, 0), EAGAIN);
	for (k = 0; k < 24; k += WINDOW) {
		ASSERT_EQ(send_msgs(h.fd, &h, k, WINDOW, MAX_MSG), 0);
		ASSERT_EQ(recv_msgs(&h, k, WINDOW, MAX_MSG), WINDOW);
	}
	spindle_close(&h);
}

/*
 * A process killed while it holds reservations and a delivered message it
 * never released leaves nothing behind: the others go on at full window.
 */
TEST(killed_process_leaves_nothing_behind)
{
	struct spindle_handle h;
	int status, pipefd[2], k;
	char c;
	pid_t pid;

	NEED_GROUPS();
	ASSERT_EQ(pipe(pipefd), 0);
	pid = fork();
	if (pid == 0) {
		struct spindle_handle ch;
		struct spindle_send s;

		if (spindle_open_path(&ch, devpath[0], O_RDWR) ||
		    recv_call(ch.fd, ch.descs, 1, 0) != -1 ||	/* attach */
		    send_msgs(ch.fd, &ch, 0, 1, 10) ||
		    recv_call(ch.fd, ch.descs, 1, 2000) != 1 ||	/* holds it */
		    send_call(ch.fd, 0, NULL, 2, 0, &s) || s.reserved_count != 2)
			_exit(1);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ(read(pipefd[0], &c, 1), 1);		/* the child is set */
	kill(pid, SIGKILL);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFSIGNALED(status));
	close(pipefd[0]);
	ASSERT_EQ(spindle_open_path(&h, devpath[0], O_RDWR), 0);
	EXPECT_ERRNO(recv_call(h.fd, h.descs, 1, 0), EAGAIN);
	for (k = 0; k < 3 * WINDOW; k += WINDOW) {
		ASSERT_EQ(send_msgs(h.fd, &h, k, WINDOW, 64), 0);
		ASSERT_EQ(recv_msgs(&h, k, WINDOW, 64), WINDOW);
	}
	spindle_close(&h);
}

/* ---- the producer page ---- */

static void *map_producer(struct spindle_handle *h, int prot, int flags, size_t len)
{
	return mmap(NULL, len, prot, flags, h->fd, SPINDLE_MMAP_PRODUCER);
}

TEST(producer_page_mapping_rules)
{
	struct spindle_handle h, other;
	struct spindle_send s;
	size_t sz;
	void *p, *q;
	int ro;

	NEED_GROUPS();
	ASSERT_EQ(spindle_open_path(&h, devpath[0], O_RDWR), 0);
	sz = h.info.producer_size;
	ASSERT_GT(sz, 0);
	EXPECT_TRUE(map_producer(&h, PROT_READ, MAP_SHARED, sz) == MAP_FAILED && errno == EINVAL);
	EXPECT_TRUE(map_producer(&h, PROT_READ | PROT_WRITE, MAP_PRIVATE, sz) == MAP_FAILED &&
		    errno == EINVAL);
	EXPECT_TRUE(map_producer(&h, PROT_READ | PROT_WRITE, MAP_SHARED, sz + 4096) == MAP_FAILED &&
		    errno == EINVAL);
	ro = dev_open(0, O_RDONLY);
	ASSERT_GE(ro, 0);
	EXPECT_TRUE(mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0) == MAP_FAILED &&
		    errno == EACCES);
	close(ro);
	p = map_producer(&h, PROT_READ | PROT_WRITE, MAP_SHARED, sz);
	ASSERT_TRUE(p != MAP_FAILED);
	q = map_producer(&h, PROT_READ | PROT_WRITE, MAP_SHARED, sz);	/* same file: fine */
	EXPECT_TRUE(q != MAP_FAILED);
	ASSERT_EQ(spindle_open_path(&other, devpath[0], O_RDWR), 0);
	EXPECT_TRUE(map_producer(&other, PROT_READ | PROT_WRITE, MAP_SHARED, sz) == MAP_FAILED &&
		    errno == EBUSY);
	EXPECT_ERRNO(send_call(other.fd, 0, NULL, 1, 0, &s), EBUSY);
	EXPECT_ERRNO(ioctl(other.fd, SPINDLE_IOC_WAKE), EINVAL);	/* not the producer */
	spindle_close(&other);
	if (q != MAP_FAILED)
		munmap(q, sz);
	munmap(p, sz);
	spindle_close(&h);	/* the role goes with the file */
	ASSERT_EQ(spindle_open_path(&h, devpath[0], O_RDWR), 0);
	EXPECT_EQ(send_call(h.fd, 0, NULL, 1, 0, &s), 0);
	EXPECT_EQ(s.reserved_count, 1);
	spindle_close(&h);
}

/* fill @n messages through the producer page, numbered from @first */
static int produce(struct spindle_handle *h, int first, int n, uint32_t len)
{
	int k;
	uint32_t j;

	for (k = 0; k < n; k++) {
		uint8_t *p;

		if (spindle_get_slot(h, 2000, (void **)&p))
			return -1;
		for (j = 0; j < len; j++)
			p[j] = (uint8_t)((first + k) * 17 + j);
		if (spindle_commit(h, len))
			return -1;
	}
	return spindle_flush(h);
}

/*
 * A file closes with a reservation (its release voids it) and another file
 * maps the producer page at once, before the predicate thread has run to
 * publish the void.  The void holds nothing back: the page is this file's.
 * SCHED_FIFO keeps the predicate thread off this guest's one CPU from the
 * close until the mapping is done, as a busy guest often did by chance.
 */
TEST(producer_attaches_before_a_void_is_published)
{
	struct sched_param fifo = { .sched_priority = 1 }, other = { 0 };
	struct spindle_handle h;
	struct spindle_send s;
	int ret, fifo_ret;

	NEED_GROUPS();
	ASSERT_EQ(spindle_open_path(&h, devpath[0], O_RDWR), 0);
	ASSERT_EQ(send_call(h.fd, 0, NULL, 1, 0, &s), 0);
	ASSERT_EQ(s.reserved_count, 1);
	fifo_ret = sched_setscheduler(0, SCHED_FIFO, &fifo);
	spindle_close(&h);
	ret = spindle_open_path(&h, devpath[0], O_RDWR);
	if (!ret)
		ret = spindle_use_producer(&h);
	sched_setscheduler(0, SCHED_OTHER, &other);
	EXPECT_EQ(fifo_ret, 0);
	ASSERT_EQ(ret, 0);
	EXPECT_ERRNO(recv_call(h.fd, h.descs, 1, 0), EAGAIN);
	ASSERT_EQ(produce(&h, 0, 2, 40), 0);
	EXPECT_EQ(recv_msgs(&h, 0, 2, 40), 2);
	EXPECT_ERRNO(recv_call(h.fd, h.descs, 4, 200), ETIMEDOUT);	/* the void is no message */
	spindle_close(&h);
}

TEST(producer_page_sends_without_system_calls)
{
	struct spindle_handle h;
	uint64_t calls;
	int k;

	NEED_GROUPS();
	ASSERT_EQ(spindle_open_path(&h, devpath[0], O_RDWR), 0);
	ASSERT_EQ(spindle_use_producer(&h), 0);
	EXPECT_ERRNO(recv_call(h.fd, h.descs, 1, 0), EAGAIN);
	calls = h.send_calls;
	for (k = 0; k < 5 * WINDOW; k += WINDOW) {
		ASSERT_EQ(produce(&h, k, WINDOW, 100), 0);
		ASSERT_EQ(recv_msgs(&h, k, WINDOW, 100), WINDOW);
	}
	EXPECT_EQ(h.send_calls, calls);			/* no SEND at all */
	EXPECT_LE(h.wake_calls, 5 * WINDOW);		/* at most one per message */
	kt_diag("20 messages: %llu wake-up calls", (unsigned long long)h.wake_calls);
	spindle_close(&h);
}

/* A bad tail or length stops the producer; the subgroup goes on. */
static void producer_misbehaves(struct kt *_t, int bad_tail)
{
	struct spindle_handle h;
	struct spindle_producer *pp;
	int k;

	NEED_GROUPS();
	ASSERT_EQ(spindle_open_path(&h, devpath[0], O_RDWR), 0);
	ASSERT_EQ(spindle_use_producer(&h), 0);
	pp = h.prod;
	if (bad_tail) {
		__atomic_store_n(&pp->tail, pp->head + WINDOW + 3, __ATOMIC_RELEASE);
	} else {
		SPINDLE_PRODUCER_LENS(pp)[pp->head % WINDOW] = MAX_MSG + 1;
		__atomic_store_n(&pp->tail, pp->head + 1, __ATOMIC_RELEASE);
	}
	ioctl(h.fd, SPINDLE_IOC_WAKE);
	for (k = 0; k < 100 && !(__atomic_load_n(&pp->flags, __ATOMIC_ACQUIRE) &
				  SPINDLE_PRODUCER_BROKEN); k++)
		usleep(10000);
	EXPECT_TRUE(pp->flags & SPINDLE_PRODUCER_BROKEN);
	EXPECT_ERRNO(ioctl(h.fd, SPINDLE_IOC_WAKE), EIO);
	spindle_close(&h);
	/* another producer sends fine, and nothing bad was delivered */
	ASSERT_EQ(spindle_open_path(&h, devpath[0], O_RDWR), 0);
	ASSERT_EQ(spindle_use_producer(&h), 0);
	EXPECT_ERRNO(recv_call(h.fd, h.descs, 1, 0), EAGAIN);
	ASSERT_EQ(produce(&h, 0, 2, 50), 0);
	EXPECT_EQ(recv_msgs(&h, 0, 2, 50), 2);
	EXPECT_ERRNO(recv_call(h.fd, h.descs, 4, 200), ETIMEDOUT);
	spindle_close(&h);
}

TEST(producer_bad_tail_breaks_only_the_producer)
{
	producer_misbehaves(_t, 1);
}

TEST(producer_bad_length_breaks_only_the_producer)
{
	producer_misbehaves(_t, 0);
}
