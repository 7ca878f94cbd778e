// SPDX-License-Identifier: GPL-2.0
/*
 * spindle-bw: multicast bandwidth, shaped like Derecho's bandwidth_test.
 *
 * Every member delivers every message; senders (all, half or one) each send
 * --messages messages of --size bytes, built in place in the ring.  Each
 * delivered payload is checked against the pattern its sender wrote.  The
 * run ends when all messages are delivered and prints one JSON line.
 *
 * --log FILE writes every delivered message as the line
 *	seq sender_rank sender_index len crc32c
 * (crc32c of the payload, 8 lowercase hex digits; nulls are not delivered,
 * so not logged): the logs of all members must be identical in ordered
 * mode, and each sender's lines in FIFO order in unordered mode.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static struct bench b;
static double t_first_slot;
static int send_err;

static void usage(FILE *f)
{
	fprintf(f, "usage: spindle-bw [options]\n%s"
		"  --log FILE           log every delivered message\n",
		bench_common_usage());
}

static void *sender(void *arg)
{
	struct spindle_handle *h = &b.h;
	uint32_t rank = (uint32_t)h->info.my_rank;
	double deadline = bench_now() + b.o.timeout_s;
	int delayed = bench_is_delayed(&b.o, h->info.my_rank, h->info.nsenders);
	uint64_t k;

	(void)arg;
	for (k = 0; k < b.o.messages; k++) {
		int left = (int)((deadline - bench_now()) * 1000);
		void *p = spindle_get_slot(h, left > 0 ? left : 0);

		if (!p) {
			send_err = errno;
			fprintf(stderr, "spindle-bw: sending message %" PRIu64 ": %s\n",
				k, strerror(errno));
			return NULL;
		}
		if (!t_first_slot)
			t_first_slot = bench_now();
		bench_fill(p, b.o.size, rank, k);
		if (spindle_commit(h, b.o.size) || (delayed && spindle_flush(h))) {
			send_err = errno;
			perror("spindle-bw: commit");
			return NULL;
		}
		if (delayed)
			bench_pause(&b.o);
	}
	if (spindle_flush(h)) {
		send_err = errno;
		perror("spindle-bw: flush");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t next[SPINDLE_MAX_MEMBERS] = { 0 }, delivered = 0, bytes = 0;
	uint64_t expected, bad = 0;
	double t0, t_first = 0, t_last = 0, deadline, secs;
	struct spindle_handle *h;
	pthread_t th;
	FILE *log = NULL;
	int i, sending, ret, err = 0;

	bench_defaults(&b.o);
	for (i = 1; i < argc; i++) {
		int r = bench_option(&b.o, argc, argv, &i);

		if (r == 1)
			continue;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		fprintf(stderr, "spindle-bw: bad option '%s'\n", argv[i]);
		usage(stderr);
		return 2;
	}
	if (b.o.log) {
		log = fopen(b.o.log, "w");
		if (!log) {
			perror(b.o.log);
			return 1;
		}
	}
	bench_setup(&b, "spindle-bw");
	h = &b.h;
	if (b.o.size > h->info.max_msg) {
		fprintf(stderr, "spindle-bw: --size %u over the subgroup's max_msg %u\n",
			b.o.size, h->info.max_msg);
		return 2;
	}
	expected = b.o.messages * h->info.nsenders;
	t0 = bench_now();
	deadline = t0 + b.o.timeout_s;

	/* become a consumer before anything is sent */
	ret = spindle_recv(h, 0);
	if (ret < 0 && ret != -EAGAIN) {
		fprintf(stderr, "spindle-bw: recv: %s\n", strerror(-ret));
		return 1;
	}
	sending = h->info.my_rank >= 0 && b.o.messages;
	if (sending && pthread_create(&th, NULL, sender, NULL)) {
		perror("spindle-bw: pthread_create");
		return 1;
	}
	while (delivered < expected && bench_now() < deadline) {
		int n = spindle_recv(h, 1000), k;

		if (n == -EAGAIN || n == -ETIMEDOUT || n == -EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "spindle-bw: recv after %" PRIu64 " of %" PRIu64 ": %s\n",
				delivered, expected, strerror(-n));
			err = 1;
			break;
		}
		if (n && !t_first)
			t_first = bench_now();
		for (k = 0; k < n; k++) {
			const struct spindle_desc *d = &h->descs[k];
			const void *p = spindle_msg_data(h, d);

			if (d->rank >= h->info.nsenders || d->len != b.o.size ||
			    bench_check(p, d->len, d->rank, next[d->rank])) {
				if (bad++ < 5)
					fprintf(stderr, "spindle-bw: bad message seq %llu rank %u index %llu len %u (expected data #%" PRIu64 ")\n",
						(unsigned long long)d->seq, d->rank,
						(unsigned long long)d->index, d->len,
						d->rank < SPINDLE_MAX_MEMBERS ? next[d->rank] : 0);
			}
			if (d->rank < SPINDLE_MAX_MEMBERS)
				next[d->rank]++;
			if (log)
				fprintf(log, "%llu %u %llu %u %08x\n",
					(unsigned long long)d->seq, d->rank,
					(unsigned long long)d->index, d->len,
					spindle_crc32c(0, p, d->len));
			bytes += d->len;
		}
		delivered += n;
		if (n)
			t_last = bench_now();
	}
	if (sending)
		pthread_join(th, NULL);
	if (t_first_slot && (!t_first || t_first_slot < t_first))
		t_first = t_first_slot;
	secs = t_last > t_first ? t_last - t_first : 0;
	printf("{\"tool\":\"spindle-bw\",\"node\":%u,\"nodes\":%u,\"senders\":%u,\"mode\":\"%s\","
	       "\"size\":%u,\"window\":%u,\"messages_per_sender\":%" PRIu64 ",\"delivered\":%" PRIu64
	       ",\"expected\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"seconds\":%.6f,\"MBps\":%.3f,"
	       "\"msgs_per_sec\":%.1f,\"send_calls\":%" PRIu64 ",\"recv_calls\":%" PRIu64
	       ",\"bad_messages\":%" PRIu64 ",\"delayed\":%d}\n",
	       b.self_id, h->info.nmembers, h->info.nsenders,
	       h->info.mode == SPINDLE_MODE_ORDERED ? "ordered" : "unordered",
	       b.o.size, h->info.window, b.o.messages, delivered, expected, bytes, secs,
	       secs > 0 ? bytes / secs / 1e6 : 0.0, secs > 0 ? delivered / secs : 0.0,
	       h->send_calls, h->recv_calls, bad,
	       bench_is_delayed(&b.o, h->info.my_rank, h->info.nsenders));
	fflush(stdout);
	if (log)
		fclose(log);
	bench_teardown(&b);
	if (delivered < expected && !err)
		fprintf(stderr, "spindle-bw: timed out: %" PRIu64 " of %" PRIu64 " delivered\n",
			delivered, expected);
	return delivered == expected && !bad && !send_err && !err ? 0 : 1;
}
