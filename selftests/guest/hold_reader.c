// SPDX-License-Identifier: GPL-2.0
/*
 * hold_reader: a reader that subscribed in a smaller view than the one its
 * messages come in must get every one of them.
 *
 *   hold_reader CONFIG READY_FILE GO_FILE HOLD_MS COUNT
 *
 * Subscribes to subgroup 0 of CONFIG's group (up on this node) and creates
 * READY_FILE; the view then has fewer senders than it will have (a member
 * left and comes back).  Once GO_FILE exists (the senders start), it takes
 * nothing for HOLD_MS, so that every sender of the larger view fills its
 * whole window while this file holds the subgroup's flow control back:
 * more descriptors wait for it than the smaller view's log holds.  Then it
 * takes everything, up to COUNT messages from every sender of the view
 * the last record names (60 s at most).  It sends nothing: a sender here
 * would subscribe its own reader late, after this one had taken messages
 * that reader then never sees.  Exit 0 if every one came, in
 * FIFO order per sender; 1, with the reason on stderr, if not.
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

#define MAX_RANKS	64

struct tally {
	const struct spindle_handle *h;
	uint64_t view;		/* the last view record's */
	uint64_t members;	/* in that view: bit i, member i */
	uint64_t got[MAX_RANKS];
	uint64_t next[MAX_RANKS];	/* the lowest index FIFO order allows next */
	uint64_t records;
};

/* Count one descriptor; -1 if it breaks FIFO order per sender. */
static int tally_one(struct tally *t, const struct spindle_desc *d)
{
	struct spindle_view_desc v;

	if (spindle_view_of(d, &v)) {
		t->view = v.view_id;
		t->members = v.members;
		t->records++;
		memset(t->got, 0, sizeof(t->got));
		memset(t->next, 0, sizeof(t->next));
		return 0;
	}
	if (d->rank >= MAX_RANKS)
		return -1;
	/* indexes rise; null sends take some without a message */
	if (t->got[d->rank] && d->index < t->next[d->rank])
		return -1;
	t->next[d->rank] = d->index + 1;
	t->got[d->rank]++;
	return 0;
}

/* Is configured sender rank @r a member of the last record's view? */
static int in_view(const struct tally *t, uint32_t r)
{
	return t->members >> t->h->rings[r].member_id & 1;
}

/* COUNT from every sender of the last record's view, which has one at least */
static int all_came(const struct tally *t, uint64_t count)
{
	uint32_t r, senders = 0;

	if (!t->view)
		return 0;
	for (r = 0; r < t->h->info.nsenders && r < MAX_RANKS; r++) {
		if (!in_view(t, r))
			continue;
		if (t->got[r] < count)
			return 0;
		senders++;
	}
	return senders > 0;
}

static void report(FILE *f, const struct tally *t)
{
	uint32_t r;

	fprintf(f, "view %llu (%llu records), members %#llx, got",
		(unsigned long long)t->view, (unsigned long long)t->records,
		(unsigned long long)t->members);
	for (r = 0; r < t->h->info.nsenders && r < MAX_RANKS; r++)
		if (in_view(t, r))
			fprintf(f, " %llu from rank %u,",
				(unsigned long long)t->got[r], r);
	fprintf(f, "\n");
}

int main(int argc, char **argv)
{
	struct spindle_handle h;
	struct spindle_cfg cfg;
	struct tally t = { .h = &h };
	double deadline;
	uint64_t count;
	long hold_ms;
	char err[256];
	int ret, fd, n, k;

	if (argc != 6) {
		fprintf(stderr, "usage: hold_reader CONFIG READY_FILE GO_FILE HOLD_MS COUNT\n");
		return 2;
	}
	hold_ms = strtol(argv[4], NULL, 10);
	count = strtoull(argv[5], NULL, 10);
	if (hold_ms < 0 || hold_ms > 60000 || !count) {
		fprintf(stderr, "hold_reader: HOLD_MS 0..60000, COUNT 1 or more\n");
		return 2;
	}
	if (spindle_cfg_parse(argv[1], &cfg, err, sizeof(err))) {
		fprintf(stderr, "hold_reader: %s: %s\n", argv[1], err);
		return 2;
	}
	ret = spindle_open(&h, cfg.group_id, cfg.subgroups[0].id, O_RDONLY);
	if (ret)
		return fail("open subgroup 0: %s", strerror(-ret));
	ret = spindle_subscribe(&h);
	if (ret)
		return fail("subscribe: %s", strerror(-ret));
	fd = open(argv[2], O_CREAT | O_WRONLY, 0644);
	if (fd < 0)
		return fail("%s: %s", argv[2], strerror(errno));
	close(fd);

	deadline = now() + 120;
	while (access(argv[3], F_OK))
		if (now() > deadline)
			return fail("no %s in 120 s", argv[3]);
		else
			usleep(20000);
	usleep(hold_ms * 1000);

	deadline = now() + 60;
	while (!all_came(&t, count) && now() < deadline) {
		n = spindle_recv(&h, 1000);
		if (n == -EAGAIN || n == -ETIMEDOUT || n == -EINTR)
			continue;
		if (n < 0)
			return fail("recv: %s", strerror(-n));
		for (k = 0; k < n; k++)
			if (tally_one(&t, &h.descs[k]))
				return fail("rank %u index %llu out of FIFO order",
					    h.descs[k].rank,
					    (unsigned long long)h.descs[k].index);
	}
	ret = all_came(&t, count);
	fprintf(stdout, "hold_reader: ");
	report(stdout, &t);
	spindle_close(&h);
	if (!ret)
		return fail("not all %llu messages of every sender came in 60 s",
			    (unsigned long long)count);
	return 0;
}
