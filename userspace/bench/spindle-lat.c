// SPDX-License-Identifier: GPL-2.0
/*
 * spindle-lat: multicast latency, shaped like Derecho's latency_test.
 *
 * Each sender keeps one message in flight: it stamps the time into the
 * message, sends it, and waits for its own delivery of it; the latency is
 * the time from before the slot was taken to that delivery.  Every member
 * delivers every message.  Prints one JSON line with the distribution.
 * --busy-poll polls for deliveries without sleeping, as ib_write_lat
 * polls its completion queue.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *v, uint64_t n, double p)
{
	uint64_t i = (uint64_t)(p * (n - 1) + 0.5);

	return n ? v[i] : 0;
}

int main(int argc, char **argv)
{
	static struct bench b;
	struct spindle_subgroup_info si;
	struct spindle_handle *h;
	uint64_t expected, delivered = 0, sent = 0, nlat = 0, busy_ns;
	double *lat, t_sent = 0, deadline, sum = 0;
	int i, ret, waiting = 0, err = 0, busy = 0;

	bench_defaults(&b.o);
	b.o.messages = 200;
	b.o.size = 64;
	for (i = 1; i < argc; i++) {
		int r = bench_option(&b.o, argc, argv, &i);

		if (r == 1)
			continue;
		if (!strcmp(argv[i], "--busy-poll")) {
			busy = 1;
			continue;
		}
		fprintf(stderr, "usage: spindle-lat [options]\n%s"
			"  --busy-poll          poll for deliveries without sleeping\n",
			bench_common_usage());
		return !strcmp(argv[i], "--help") ? 0 : 2;
	}
	if (b.o.size < sizeof(double))
		b.o.size = sizeof(double);
	bench_setup(&b, "spindle-lat");
	h = &b.h;
	h->batch = 1;
	expected = b.o.messages * h->info.nsenders;
	lat = calloc(b.o.messages + 1, sizeof(*lat));
	deadline = bench_now() + b.o.timeout_s;
	/* a consumer before anything is sent, taking nothing yet */
	ret = spindle_subscribe(h);
	if (ret < 0) {
		fprintf(stderr, "spindle-lat: recv: %s\n", strerror(-ret));
		return 1;
	}
	while (delivered < expected && bench_now() < deadline) {
		int n, k;

		if (h->info.my_rank >= 0 && !waiting && sent < b.o.messages) {
			double now = bench_now();
			void *p;

			ret = spindle_get_slot(h, 10000, &p);

			if (ret == -EAGAIN || ret == -ETIMEDOUT)
				continue;
			if (ret) {
				fprintf(stderr, "spindle-lat: get_slot: %s\n", strerror(-ret));
				err = 1;
				break;
			}
			memset(p, 0, b.o.size);
			memcpy(p, &now, sizeof(now));
			t_sent = now;
			ret = spindle_commit(h, b.o.size);
			if (!ret)
				ret = spindle_flush(h);
			if (ret) {
				fprintf(stderr, "spindle-lat: send: %s\n", strerror(-ret));
				err = 1;
				break;
			}
			sent++;
			waiting = 1;
		}
		n = spindle_recv(h, busy ? 0 : 1000);
		if (n == -EAGAIN || n == -ETIMEDOUT || n == -EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "spindle-lat: recv: %s\n", strerror(-n));
			err = 1;
			break;
		}
		for (k = 0; k < n; k++) {
			if ((int32_t)h->descs[k].rank == h->info.my_rank && waiting) {
				lat[nlat] = bench_now() - t_sent;
				sum += lat[nlat++];
				waiting = 0;
			}
		}
		delivered += n;
	}
	bench_counters(&b, &si, &busy_ns);
	qsort(lat, nlat, sizeof(*lat), cmp_double);
	printf("{\"tool\":\"spindle-lat\",\"node\":%u,\"nodes\":%u,\"senders\":%u,\"size\":%u,"
	       "\"samples\":%" PRIu64 ",\"delivered\":%" PRIu64 ",\"expected\":%" PRIu64
	       ",\"mean_us\":%.1f,\"min_us\":%.1f,\"median_us\":%.1f,\"p90_us\":%.1f,"
	       "\"p99_us\":%.1f,\"max_us\":%.1f,\"busy_poll\":%d,"
	       "\"writes_posted\":%llu,\"writes_per_delivered\":%.4f}\n",
	       b.self_id, h->info.nmembers, h->info.nsenders, b.o.size, nlat, delivered,
	       expected, nlat ? sum / nlat * 1e6 : 0, pct(lat, nlat, 0) * 1e6,
	       pct(lat, nlat, 0.5) * 1e6, pct(lat, nlat, 0.9) * 1e6,
	       pct(lat, nlat, 0.99) * 1e6, nlat ? lat[nlat - 1] * 1e6 : 0, busy,
	       (unsigned long long)si.writes_posted,
	       si.msgs_delivered ? (double)si.writes_posted / si.msgs_delivered : 0.0);
	fflush(stdout);
	free(lat);
	bench_teardown(&b);
	return delivered == expected && !err ? 0 : 1;
}
