// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libspindle: a subgroup's device: its mapped rings, sending (SEND calls or
 * the producer page) and receiving.  The fast paths of spindle_get_slot()
 * and spindle_commit() are inline in libspindle.h; what they cannot do
 * without waiting or a system call is here.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "libspindle.h"

/* spindle_view_of() copies a record out of a descriptor's place */
_Static_assert(sizeof(struct spindle_view_desc) == sizeof(struct spindle_desc),
	       "a view record is one descriptor long");

int spindle_open_path(struct spindle_handle *h, const char *path, int oflags)
{
	uint32_t r;
	int prot_own;

	memset(h, 0, sizeof(*h));
	h->fd = open(path, oflags | O_CLOEXEC);
	if (h->fd < 0)
		return -errno;
	h->info.size = sizeof(h->info);
	h->info.nsenders = SPINDLE_MAX_MEMBERS;
	h->info.rings = (uintptr_t)h->rings;
	if (ioctl(h->fd, SPINDLE_IOC_INFO, &h->info) < 0)
		goto fail;
	prot_own = (oflags & O_ACCMODE) == O_RDWR ? PROT_READ | PROT_WRITE : PROT_READ;
	for (r = 0; r < h->info.nsenders; r++) {
		int prot = h->rings[r].flags & SPINDLE_RING_WRITABLE ? prot_own : PROT_READ;

		h->ring[r] = mmap(NULL, h->rings[r].mmap_size, prot, MAP_SHARED,
				  h->fd, (off_t)h->rings[r].mmap_offset);
		if (h->ring[r] == MAP_FAILED) {
			h->ring[r] = NULL;
			goto fail;
		}
	}
	h->batch = h->info.window / 4 ? h->info.window / 4 : 1;
	h->lens = calloc(h->info.window, sizeof(*h->lens));
	h->max_descs = h->info.window * h->info.nsenders;
	h->descs = calloc(h->max_descs, sizeof(*h->descs));
	if (!h->lens || !h->descs) {
		errno = ENOMEM;
		goto fail;
	}
	return 0;
fail:
	r = errno;
	spindle_close(h);
	return -(int)r;
}

int spindle_open(struct spindle_handle *h, uint32_t group_id,
		 uint32_t subgroup_id, int oflags)
{
	char path[64];
	int ret = spindle_find_device(group_id, subgroup_id, path, sizeof(path));

	if (ret)
		return ret;
	return spindle_open_path(h, path, oflags);
}

void spindle_close(struct spindle_handle *h)
{
	uint32_t r;

	for (r = 0; r < SPINDLE_MAX_MEMBERS; r++)
		if (h->ring[r])
			munmap(h->ring[r], h->rings[r].mmap_size);
	if (h->prod)
		munmap(h->prod, h->info.producer_size);
	if (h->fd >= 0)
		close(h->fd);
	free(h->lens);
	free(h->descs);
	memset(h, 0, sizeof(*h));
	h->fd = -1;
}

/**
 * spindle_use_producer - send through the mapped producer page
 * @h: handle of a subgroup this node sends in, opened O_RDWR
 *
 * The file becomes the subgroup's only producer: no other file of it can
 * reserve slots while it is open.
 * Return: 0, -EBUSY (another file sends, or this one holds reservations),
 * or another -errno.
 */
int spindle_use_producer(struct spindle_handle *h)
{
	void *p;

	if (h->info.my_rank < 0 || !h->info.producer_size)
		return -EPERM;
	if (h->prod)
		return 0;
	spindle_flush(h);
	if (h->res_left)
		return -EBUSY;
	p = mmap(NULL, h->info.producer_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 h->fd, SPINDLE_MMAP_PRODUCER);
	if (p == MAP_FAILED)
		return -errno;
	h->prod = p;
	h->prod_lens = SPINDLE_PRODUCER_LENS(h->prod);
	h->prod_tail = spindle_smp_load_acquire(&h->prod->tail);
	h->prod_next = h->prod_tail;
	h->prod_rung = h->prod_tail;
	return 0;
}

/*
 * Producer page: a view change voided what the page held (its messages
 * past the trim were dropped: the view record says how many of ours were
 * delivered).  Go on from where the kernel says.
 */
static int producer_resync(struct spindle_handle *h)
{
	h->prod_tail = spindle_smp_load_acquire(&h->prod->tail);
	h->prod_next = h->prod_tail;
	h->prod_rung = h->prod_tail;
	h->stale++;
	return 0;
}

/* Producer page: ring the kernel's thread if it sleeps and there is news. */
static int producer_ring(struct spindle_handle *h)
{
	/*
	 * The tail before the flag: the kernel sets the flag, then reads the
	 * tail (pairs with the full barrier in spindle_producer_sleep()).
	 */
	spindle_smp_mb();
	if (h->prod_tail == h->prod_rung ||
	    !(spindle_read_once(&h->prod->flags) &
	      SPINDLE_PRODUCER_NEED_WAKEUP))
		return 0;
	h->prod_rung = h->prod_tail;
	h->wake_calls++;
	if (ioctl(h->fd, SPINDLE_IOC_WAKE) < 0)
		return errno == ESTALE ? producer_resync(h) : -errno;
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Producer page: wait until position prod_next may be filled. */
static int producer_wait_room(struct spindle_handle *h, int timeout_ms)
{
	struct pollfd pfd = { .fd = h->fd, .events = POLLOUT };
	int spins = 0;

	while (spindle_smp_load_acquire(&h->prod->limit) <= h->prod_next) {
		uint32_t flags = spindle_read_once(&h->prod->flags);

		if (flags & SPINDLE_PRODUCER_BROKEN)
			return -EIO;
		if (flags & SPINDLE_PRODUCER_STALE) {
			h->wake_calls++;
			if (ioctl(h->fd, SPINDLE_IOC_WAKE) == 0 || errno != ESTALE)
				continue;
			producer_resync(h);
			continue;
		}
		if (++spins < 64)
			continue;
		if (spins == 64) {
			int ret = producer_ring(h);

			if (ret)
				return ret;
		}
		if (!timeout_ms)
			return -EAGAIN;
		if (poll(&pfd, 1, timeout_ms) <= 0)
			return -ETIMEDOUT;
		if (pfd.revents & (POLLERR | POLLHUP))
			return pfd.revents & POLLHUP ? -ENOTCONN : -EIO;
	}
	return 0;
}

/* producer_wait_room(), counting the waits on a full window and their time */
static int producer_wait(struct spindle_handle *h, int timeout_ms)
{
	uint64_t t0;
	int ret;

	if (spindle_smp_load_acquire(&h->prod->limit) > h->prod_next)
		return 0;
	h->window_waits++;
	t0 = mono_ns();
	ret = producer_wait_room(h, timeout_ms);
	h->window_wait_ns += mono_ns() - t0;
	return ret;
}

/* One SEND call: mark what is committed, reserve up to @want more. */
static int send_call(struct spindle_handle *h, uint32_t want, int timeout_ms)
{
	struct spindle_send s;
	int ret = 0;

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.count = h->ncommit;
	s.lens = (uintptr_t)h->lens;
	s.reserve = want;
	s.timeout_ms = timeout_ms < 0 ? 0x7fffffff : (uint32_t)timeout_ms;
	h->send_calls++;
	if (ioctl(h->fd, SPINDLE_IOC_SEND, &s) < 0)
		ret = -errno;
	if (ret == -ESTALE) {
		/* a view change voided our reservations and what we built in
		 * them: start over with fresh ones
		 */
		h->ncommit = 0;
		h->res_left = 0;
		h->stale++;
		s.count = 0;
		ret = ioctl(h->fd, SPINDLE_IOC_SEND, &s) < 0 ? -errno : 0;
	}
	if (ret && ret != -EAGAIN && ret != -ETIMEDOUT)
		return ret;
	h->ncommit = 0;		/* the marking part happened */
	if (s.reserved_count) {
		h->res_next = s.first;
		h->res_left = s.reserved_count;
	}
	return ret;
}

/*
 * spindle_get_slot()'s slow path: wait for room (producer page) or reserve
 * more slots (SEND), then hand out the next.
 */
int __spindle_get_slot_slow(struct spindle_handle *h, int timeout_ms, void **slot)
{
	int ret;

	*slot = NULL;
	if (h->info.my_rank < 0 || !h->ring[h->info.my_rank])
		return -EPERM;
	if (h->prod) {
		ret = producer_wait(h, timeout_ms);
		if (ret)
			return ret;
		*slot = __spindle_slot_at(h, h->prod_next++);
		return 0;
	}
	if (!h->res_left) {
		ret = send_call(h, h->info.window, timeout_ms);
		if (!h->res_left)
			return ret ? ret : -EAGAIN;
	}
	h->res_left--;
	*slot = __spindle_slot_at(h, h->res_next++);
	return 0;
}

/* spindle_commit()'s slow path: the producer page's doorbell, if due. */
int __spindle_producer_ring(struct spindle_handle *h)
{
	return producer_ring(h);
}

int spindle_flush(struct spindle_handle *h)
{
	if (h->prod)
		return producer_ring(h);
	if (!h->ncommit)
		return 0;
	return send_call(h, 0, 0);
}

/**
 * spindle_subscribe - become a consumer, taking no message
 * @h: handle opened for reading
 *
 * From this call on, every message the subgroup delivers waits for this
 * file.  (spindle_recv() subscribes too, but may return messages at once:
 * a caller that only wants to subscribe must not throw them away.)
 * Return: 0 or -errno.
 */
int spindle_subscribe(struct spindle_handle *h)
{
	return spindle_done(h);
}

/*
 * A view record voids the reservations made before it (uapi/linux/spindle.h):
 * the slots this handle reserved ahead and has not handed out yet are no
 * longer ours.  Handing one out would put a message the caller builds
 * after reading the record into the old view, to be dropped with it.
 * What was committed in them before the record is the old view's, and
 * goes as SEND says (ESTALE: dropped).
 */
static void drop_stale_reservations(struct spindle_handle *h, uint32_t n)
{
	uint32_t k;

	for (k = 0; k < n; k++)
		if (h->descs[k].flags & SPINDLE_DESC_VIEW)
			h->res_left = 0;
}

/**
 * spindle_recv - release the last batch and take the next
 * @h: handle opened for reading
 * @timeout_ms: wait for the first message; 0 not at all; -1 forever
 *
 * The first call makes this file a consumer.
 * Return: messages in h->descs, or -errno (-EAGAIN/-ETIMEDOUT: none came).
 */
int spindle_recv(struct spindle_handle *h, int timeout_ms)
{
	struct spindle_recv r;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.max = h->max_descs;
	r.timeout_ms = timeout_ms < 0 ? 0x7fffffff : (uint32_t)timeout_ms;
	r.descs = (uintptr_t)h->descs;
	h->recv_calls++;
	if (ioctl(h->fd, SPINDLE_IOC_RECV, &r) < 0)
		return -errno;
	if (h->res_left)
		drop_stale_reservations(h, r.count);
	return (int)r.count;
}

/**
 * spindle_done - release the last batch without taking more
 * @h: handle
 *
 * Return: 0 or -errno.
 */
int spindle_done(struct spindle_handle *h)
{
	struct spindle_recv r;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	h->recv_calls++;
	return ioctl(h->fd, SPINDLE_IOC_RECV, &r) < 0 ? -errno : 0;
}
