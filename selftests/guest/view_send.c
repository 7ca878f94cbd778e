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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../userspace/lib/libspindle.h"
#include "guest.h"

#define MSG_LEN		64

/* how long A holds the old view's message before it lets go */
#define HOLD_S		8

static int recv_some(struct spindle_handle *h, int timeout_ms)
{
	int n = spindle_recv(h, timeout_ms);

	return n == -EAGAIN || n == -ETIMEDOUT || n == -EINTR ? 0 : n;
}

/* A walk through what RECV hands out, one descriptor at a time. */
struct walk {
	struct spindle_handle *h;
	int k, n;
};

/*
 * The next descriptor: from the batch in hand, or from one new RECV (which
 * releases that batch) of up to @wait_ms.  NULL when none came, or with
 * *@err set when RECV failed: the caller decides how long to go on (and
 * what else to do between tries).
 */
static const struct spindle_desc *walk_next(struct walk *w, int wait_ms, int *err)
{
	*err = 0;
	if (w->k >= w->n) {
		w->n = recv_some(w->h, wait_ms);
		w->k = 0;
		if (w->n < 0) {
			*err = -w->n;
			w->n = 0;
		}
		if (w->n <= 0)
			return NULL;
	}
	return &w->h->descs[w->k++];
}

/* Send one message of MSG_LEN bytes saying @what. */
static int send_one(struct spindle_handle *h, const char *what, uint64_t view)
{
	void *p;
	int ret = spindle_get_slot(h, 10000, &p);

	if (ret)
		return ret;
	memset(p, 0, MSG_LEN);
	snprintf(p, MSG_LEN, "%s %llu from rank %d", what,
		 (unsigned long long)view, h->info.my_rank);
	ret = spindle_commit(h, MSG_LEN);
	return ret ? ret : spindle_flush(h);
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
	struct walk w = { .h = &b };
	const struct spindle_desc *d = NULL;
	struct spindle_view_desc rec;
	struct spindle_cfg cfg;
	uint64_t view = 0, want = 0, got = 0;
	int producer, held = 1, held_at_record, ret, fd, r;
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
	while (!view) {
		if (held && now() >= release) {
			spindle_close(&a);
			held = 0;
		}
		if (now() >= deadline)
			return fail("no view record came in 60 s");
		d = walk_next(&w, 100, &ret);
		if (ret)
			return fail("recv: %s", strerror(ret));
		if (d && spindle_view_of(d, &rec))
			view = rec.view_id;
	}
	held_at_record = held;
	/* senders of the new view: bit i, member i of the configuration */
	for (r = 0; r < (int)b.info.nsenders; r++)
		if (rec.members >> b.rings[r].member_id & 1)
			want |= 1ULL << r;
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
	while (got != want && now() < deadline) {
		d = walk_next(&w, 1000, &ret);
		if (ret)
			return fail("recv: %s", strerror(ret));
		if (!d)
			continue;
		if (spindle_view_of(d, &rec))
			return fail("another view record: view %llu",
				    (unsigned long long)rec.view_id);
		if (d->rank < 64 && says(&b, d, "after view"))
			got |= 1ULL << d->rank;
	}
	fprintf(got == want ? stdout : stderr,
		"view_send: view %llu (its record came %s the old view's message was let go): delivered after the record from ranks %#llx of %#llx (own rank %d; the library saw %llu stale sends)\n",
		(unsigned long long)view, held_at_record ? "before" : "after",
		(unsigned long long)got, (unsigned long long)want, b.info.my_rank,
		(unsigned long long)b.stale);
	spindle_close(&b);
	return got == want ? 0 : 1;
}
