// SPDX-License-Identifier: GPL-2.0
/*
 * spindle-counter: a replicated 64-bit register, to watch total order work.
 *
 * Every sender of the subgroup sends --ops operations, each one of
 *	x = x * 3 + k		or	x = x ^ k
 * (k and the kind drawn from the sender's rank and its operation number,
 * so every node can check what it receives).  The two do not commute: the
 * value a node ends with depends on the order it applied them in.  Every
 * node applies what is delivered, in delivery order, and so in an ordered
 * subgroup every node goes through the same states and ends with the same
 * x; in an unordered one they would not.
 *
 * Once a second (--interval) it prints a line of live statistics, and at
 * the end one JSON line: the final state, the operations applied, a hash
 * of the sequence they were applied in, and for contrast the state the
 * same operations give applied sender by sender (state_sender_by_sender).
 * It ends once every sender's --ops operations are applied.  With --log
 * FILE, each applied operation is the line
 *	seq sender_rank op_index op k x_after
 * (op: "mul3add" or "xor"; k and x in hex).
 *
 * A view change (a member failed) ends the run with an error: what the
 * ragged trim dropped is not sent again here.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench/common.h"

#define OP_MAGIC	0x53504354u	/* "SPCT" */
#define X0		0x5350494e444c45ull	/* the initial state: "SPINDLE" */

enum { OP_MUL3ADD, OP_XOR };

struct op {
	uint32_t magic;
	uint16_t kind;
	uint16_t rank;		/* the sender's rank */
	uint64_t index;		/* its operation number, from 0 */
	uint64_t k;
};

static struct bench b;
static double rate;		/* --rate: operations per second per sender; 0: at once */
static uint32_t interval_ms = 1000;
static uint64_t sent;		/* by the sender thread */
static int send_err;

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The operation a sender sends as its @index-th. */
static void op_make(struct op *o, uint32_t rank, uint64_t index)
{
	uint64_t r = mix64(((uint64_t)rank + 1) << 48 ^ index ^ 0x9e3779b97f4a7c15ull);

	o->magic = OP_MAGIC;
	o->kind = (uint16_t)(r >> 63);
	o->rank = (uint16_t)rank;
	o->index = index;
	o->k = mix64(r);
}

static uint64_t op_apply(uint64_t x, const struct op *o)
{
	return o->kind == OP_MUL3ADD ? x * 3 + o->k : x ^ o->k;
}

/* The state the same operations give applied sender by sender, in FIFO order. */
static uint64_t sender_by_sender(uint32_t nsenders)
{
	uint64_t x = X0, i;
	uint32_t r;
	struct op o;

	for (r = 0; r < nsenders; r++) {
		for (i = 0; i < b.o.messages; i++) {
			op_make(&o, r, i);
			x = op_apply(x, &o);
		}
	}
	return x;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: spindle-counter [options]\n"
		"  --ops N              operations per sender (default 1000)\n"
		"  --rate R             operations per second per sender (default: as fast\n"
		"                       as the window allows)\n"
		"  --interval MS        live statistics every MS milliseconds (default 1000;\n"
		"                       0: none)\n"
		"  --log FILE           log every applied operation\n"
		"%s", bench_common_usage());
}

static void *sender(void *arg)
{
	struct spindle_handle *h = &b.h;
	uint32_t rank = (uint32_t)h->info.my_rank;
	double t0 = bench_now(), deadline = t0 + b.o.timeout_s;
	uint64_t i;

	(void)arg;
	for (i = 0; i < b.o.messages; i++) {
		int left = (int)((deadline - bench_now()) * 1000);
		void *p;
		int ret;

		if (rate) {
			double wait = t0 + i / rate - bench_now();

			if (wait > 0)
				usleep((useconds_t)(wait * 1e6));
		}
		ret = spindle_get_slot(h, left > 0 ? left : 0, &p);
		if (ret) {
			send_err = -ret;
			fprintf(stderr, "spindle-counter: sending operation %" PRIu64 ": %s\n",
				i, strerror(-ret));
			break;
		}
		op_make(p, rank, i);
		ret = spindle_commit(h, sizeof(struct op));
		if (!ret && rate)
			ret = spindle_flush(h);
		if (ret) {
			send_err = -ret;
			fprintf(stderr, "spindle-counter: commit: %s\n", strerror(-ret));
			break;
		}
		__atomic_store_n(&sent, i + 1, __ATOMIC_RELAXED);
	}
	if (!send_err) {
		int ret = spindle_flush(h);

		if (ret) {
			send_err = -ret;
			fprintf(stderr, "spindle-counter: flush: %s\n", strerror(-ret));
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t next[SPINDLE_MAX_MEMBERS] = { 0 };
	uint64_t x = X0, seqhash = 0, applied = 0, expected, bad = 0, views = 0;
	uint64_t last_applied = 0;
	double t_start, t_last, t_first = 0, t_done = 0, deadline, secs;
	struct spindle_handle *h;
	FILE *log = NULL;
	pthread_t th;
	int i, sending, ret, err = 0;

	bench_defaults(&b.o);
	b.o.size = 64;		/* max_msg of a group formed from the environment */
	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;
		int r;

		if (!strcmp(argv[i], "--ops") && v) {
			errno = 0;
			b.o.messages = strtoull(v, &end, 0);
			if (errno || *end || !*v || *v == '-') {
				fprintf(stderr, "spindle-counter: bad --ops '%s'\n", v);
				return 2;
			}
			i++;
			continue;
		} else if (!strcmp(argv[i], "--rate") && v) {
			rate = strtod(v, &end);
			if (*end || rate < 0 || rate > 1e7) {
				fprintf(stderr, "spindle-counter: bad --rate '%s'\n", v);
				return 2;
			}
			i++;
			continue;
		} else if (!strcmp(argv[i], "--interval") && v) {
			interval_ms = (uint32_t)strtoul(v, &end, 0);
			if (*end || !*v) {
				fprintf(stderr, "spindle-counter: bad --interval '%s'\n", v);
				return 2;
			}
			i++;
			continue;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		r = bench_option(&b.o, argc, argv, &i);
		if (r != 1) {
			fprintf(stderr, "spindle-counter: bad option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);	/* the live lines, into a file too */
	if (b.o.log) {
		log = fopen(b.o.log, "w");
		if (!log) {
			perror(b.o.log);
			return 1;
		}
	}
	bench_setup(&b, "spindle-counter");
	h = &b.h;
	if (h->info.max_msg < sizeof(struct op)) {
		fprintf(stderr, "spindle-counter: subgroup %u's max_msg %u is under the %zu bytes of an operation\n",
			b.o.subgroup_id, h->info.max_msg, sizeof(struct op));
		return 2;
	}
	if (h->info.mode != SPINDLE_MODE_ORDERED)
		fprintf(stderr, "spindle-counter: subgroup %u is unordered: the nodes' states will differ (that is what total order prevents)\n",
			b.o.subgroup_id);
	expected = b.o.messages * h->info.nsenders;
	sending = h->info.my_rank >= 0 && b.o.messages;
	if (sending) {
		ret = spindle_use_producer(h);
		if (ret) {
			fprintf(stderr, "spindle-counter: producer page: %s\n", strerror(-ret));
			return 1;
		}
	}
	/* become a consumer before anything is sent, taking nothing yet */
	ret = spindle_subscribe(h);
	if (ret < 0) {
		fprintf(stderr, "spindle-counter: recv: %s\n", strerror(-ret));
		return 1;
	}
	if (sending && pthread_create(&th, NULL, sender, NULL)) {
		perror("spindle-counter: pthread_create");
		return 1;
	}
	t_start = t_last = bench_now();
	deadline = t_start + b.o.timeout_s;
	while (applied < expected && !err) {
		double now = bench_now();
		int n, k;

		if (now >= deadline) {
			fprintf(stderr, "spindle-counter: timed out: %" PRIu64 " of %" PRIu64 " operations applied\n",
				applied, expected);
			err = 1;
			break;
		}
		n = spindle_recv(h, 200);
		if (n < 0 && n != -EAGAIN && n != -ETIMEDOUT && n != -EINTR) {
			fprintf(stderr, "spindle-counter: recv after %" PRIu64 " operations: %s\n",
				applied, strerror(-n));
			err = 1;
			break;
		}
		for (k = 0; k < n; k++) {
			const struct spindle_desc *d = &h->descs[k];
			struct spindle_view_desc v;
			struct op want;

			if (spindle_view_of(d, &v)) {
				fprintf(stderr, "spindle-counter: view %llu installed (%u members): a member failed, stopping\n",
					(unsigned long long)v.view_id, v.nmembers);
				views++;
				err = 1;
				break;
			}
			if (d->rank >= h->info.nsenders || d->len != sizeof(want)) {
				bad++;
				continue;
			}
			/* a message, its rank checked above: its ring may be read */
			op_make(&want, d->rank, next[d->rank]);
			if (memcmp(spindle_msg_data(h, d), &want, sizeof(want))) {
				if (bad++ < 5)
					fprintf(stderr, "spindle-counter: unexpected operation seq %llu from rank %u (expected its #%" PRIu64 ")\n",
						(unsigned long long)d->seq, d->rank, next[d->rank]);
				continue;
			}
			next[d->rank]++;
			x = op_apply(x, &want);
			seqhash = mix64(seqhash ^ mix64((uint64_t)want.rank << 48 ^ want.index) ^ want.k);
			applied++;
			if (log)
				fprintf(log, "%llu %u %" PRIu64 " %s %016" PRIx64 " %016" PRIx64 "\n",
					(unsigned long long)d->seq, d->rank, want.index,
					want.kind == OP_MUL3ADD ? "mul3add" : "xor", want.k, x);
		}
		now = bench_now();
		if (n > 0 && !t_first)
			t_first = now;
		if (applied == expected)
			t_done = now;
		if (interval_ms && (now - t_last >= interval_ms / 1e3 || applied == expected)) {
			printf("[%6.1fs] node %u: sent %" PRIu64 "/%" PRIu64 "  applied %" PRIu64 "/%" PRIu64
			       "  %.0f ops/s  state %016" PRIx64 "  seq %016" PRIx64 "\n",
			       now - t_start, b.self_id, __atomic_load_n(&sent, __ATOMIC_RELAXED),
			       sending ? b.o.messages : 0, applied, expected,
			       now > t_last ? (applied - last_applied) / (now - t_last) : 0.0,
			       x, seqhash);
			t_last = now;
			last_applied = applied;
		}
	}
	if (sending)
		pthread_join(th, NULL);
	spindle_done(h);
	secs = t_done > t_first ? t_done - t_first : 0;
	printf("{\"tool\":\"spindle-counter\",\"node\":%u,\"nodes\":%u,\"subgroup\":%u,"
	       "\"senders\":%u,\"mode\":\"%s\",\"ops_per_sender\":%" PRIu64 ",\"sent\":%" PRIu64
	       ",\"applied\":%" PRIu64 ",\"expected\":%" PRIu64 ",\"state\":\"%016" PRIx64
	       "\",\"seq_hash\":\"%016" PRIx64 "\",\"state_sender_by_sender\":\"%016" PRIx64
	       "\",\"seconds\":%.3f,\"ops_per_sec\":%.1f,"
	       "\"bad_ops\":%" PRIu64 ",\"views\":%" PRIu64 "}\n",
	       b.self_id, h->info.nmembers, b.o.subgroup_id, h->info.nsenders,
	       h->info.mode == SPINDLE_MODE_ORDERED ? "ordered" : "unordered",
	       b.o.messages, sent, applied, expected, x, seqhash,
	       sender_by_sender(h->info.nsenders), secs,
	       secs > 0 ? applied / secs : 0.0, bad, views);
	if (log)
		fclose(log);
	bench_teardown(&b);
	return applied == expected && !bad && !send_err && !err ? 0 : 1;
}
