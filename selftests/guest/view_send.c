// SPDX-License-Identifier: GPL-2.0
/*
 * view_send: a message sent after the view record belongs to the new view.
 *
 *   view_send CONFIG READY_FILE [--no-producer]
 *
 * Run on every member of CONFIG's group (up on this node) but one, which
 * leaves once READY_FILE exists on all of them.  Two files of subgroup 0:
 * the sender B and a reader A.  Each member sends one message through B;
 * A takes it and holds it: the old view may not end (its engine may not be
 * reset) while a delivered message is held.  B waits (60 s at most) for
 * the view record; A lets go of its message after HOLD_S, or as soon as B
 * has sent.  Right after the record B sends one message (through the
 * producer page, or with SEND calls) and waits (30 s at most) until every
 * sender of the new view had one delivered after the record, its own
 * among them.  The record's contract (uapi/linux/spindle.h): no message
 * after it belongs to the old view, so no message sent after it may be
 * dropped by that view's end.  Exit 0 if so; 1, with the reason on
 * stderr, if not.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../userspace/lib/libspindle.h"

#define MSG_LEN		64

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "view_send: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	return 1;
}

/* how long A holds the old view's message before it lets go */
#define HOLD_S		8

static int recv_some(struct spindle_handle *h, int timeout_ms)
{
	int n = spindle_recv(h, timeout_ms);

	return n == -EAGAIN || n == -ETIMEDOUT || n == -EINTR ? 0 : n;
}

/* Send one message of MSG_LEN bytes saying @what. */
static int send_one(struct spindle_handle *h, const char *what, uint64_t view)
{
	char *p = spindle_get_slot(h, 10000);

	if (!p)
		return -errno;
	memset(p, 0, MSG_LEN);
	snprintf(p, MSG_LEN, "%s %llu from rank %d", what,
		 (unsigned long long)view, h->info.my_rank);
	if (spindle_commit(h, MSG_LEN) || spindle_flush(h))
		return -errno;
	return 0;
}

/* Is descriptor @d a message saying @what? */
static int says(const struct spindle_handle *h, const struct spindle_desc *d,
		const char *what)
{
	if (d->flags & SPINDLE_DESC_VIEW || d->len != MSG_LEN)
		return 0;
	return !strncmp(spindle_msg_data(h, d), what, strlen(what));
}

/* A takes B's first message and keeps holding it. */
static int hold_own(struct spindle_handle *a, int rank)
{
	double deadline = now() + 30;
	int n, k;

	while (now() < deadline) {
		n = recv_some(a, 1000);
		if (n < 0)
			return n;
		for (k = 0; k < n; k++)
			if (a->descs[k].rank == rank && says(a, &a->descs[k], "before"))
				return 0;
	}
	return -ETIMEDOUT;
}

int main(int argc, char **argv)
{
	struct spindle_handle a, b;
	struct spindle_cfg cfg;
	uint64_t view = 0, want = 0, got = 0;
	int producer, held = 1, held_at_record = 0, n, k, ret, fd;
	double deadline, release;
	char err[256];

	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "--no-producer"))) {
		fprintf(stderr, "usage: view_send CONFIG READY_FILE [--no-producer]\n");
		return 2;
	}
	producer = argc == 3;
	if (spindle_cfg_parse(argv[1], &cfg, err, sizeof(err))) {
		fprintf(stderr, "view_send: %s: %s\n", argv[1], err);
		return 2;
	}
	ret = spindle_open(&b, cfg.group_id, cfg.subgroups[0].id, O_RDWR);
	if (!ret)
		ret = spindle_open(&a, cfg.group_id, cfg.subgroups[0].id, O_RDONLY);
	if (ret)
		return fail("open subgroup 0: %s", strerror(-ret));
	if (b.info.my_rank < 0)
		return fail("this node does not send in subgroup 0");
	if (producer && (ret = spindle_use_producer(&b)))
		return fail("producer page: %s", strerror(-ret));
	ret = spindle_subscribe(&b);
	if (!ret)
		ret = spindle_subscribe(&a);
	if (ret)
		return fail("subscribe: %s", strerror(-ret));
	ret = send_one(&b, "before", 1);
	if (!ret)
		ret = hold_own(&a, b.info.my_rank);
	if (ret)
		return fail("the message before the change: %s", strerror(-ret));
	fd = open(argv[2], O_CREAT | O_WRONLY, 0644);
	if (fd < 0)
		return fail("%s: %s", argv[2], strerror(errno));
	close(fd);

	/* B: up to the record; A lets go after HOLD_S */
	release = now() + HOLD_S;
	deadline = now() + 60;
	for (k = n = 0; !view; k++) {
		if (held && now() >= release) {
			spindle_close(&a);
			held = 0;
		}
		if (k >= n) {
			if (now() >= deadline)
				return fail("no view record came in 60 s");
			n = recv_some(&b, 100);
			if (n < 0)
				return fail("recv: %s", strerror(-n));
			k = -1;
			continue;
		}
		if (b.descs[k].flags & SPINDLE_DESC_VIEW)
			view = b.descs[k].seq;
	}
	held_at_record = held;
	/* senders of the new view: bit i, member i of the configuration */
	for (ret = 0; ret < (int)b.info.nsenders; ret++)
		if (b.descs[k - 1].index >> b.rings[ret].member_id & 1)
			want |= 1ULL << ret;
	if (!(want >> b.info.my_rank & 1))
		return fail("this node (rank %d) is not in view %llu", b.info.my_rank,
			    (unsigned long long)view);
	/* B still holds the batch with the record: send now */
	ret = send_one(&b, "after view", view);
	if (ret)
		return fail("send after the record: %s", strerror(-ret));
	if (held)
		spindle_close(&a);

	deadline = now() + 30;
	for (; got != want; k++) {
		if (k >= n) {
			if (now() >= deadline)
				break;
			n = recv_some(&b, 1000);
			if (n < 0)
				return fail("recv: %s", strerror(-n));
			k = -1;
			continue;
		}
		if (b.descs[k].flags & SPINDLE_DESC_VIEW)
			return fail("another view record: view %llu",
				    (unsigned long long)b.descs[k].seq);
		if (b.descs[k].rank < 64 && says(&b, &b.descs[k], "after view"))
			got |= 1ULL << b.descs[k].rank;
	}
	fprintf(got == want ? stdout : stderr,
		"view_send: view %llu (its record came %s the old view's message was let go): delivered after the record from ranks %#llx of %#llx (own rank %d; the library saw %llu stale sends)\n",
		(unsigned long long)view, held_at_record ? "before" : "after",
		(unsigned long long)got, (unsigned long long)want, b.info.my_rank,
		(unsigned long long)b.stale);
	spindle_close(&b);
	return got == want ? 0 : 1;
}
