// SPDX-License-Identifier: GPL-2.0
/*
 * spindle-bw: multicast bandwidth, shaped like Derecho's bandwidth_test.
 *
 * Every member delivers every message; senders (all, half or one) each send
 * --messages messages of --size bytes (or send for --seconds, then one
 * empty message that says they are done), built in place in the ring
 * (or, with --copy, copied in from a buffer and out into one, as an
 * application that does not build in place would).  Each delivered payload
 * is checked against the pattern its sender wrote.  The run ends when all
 * messages are delivered and prints one JSON line.
 *
 * --log FILE writes every delivered message as the line
 *	seq sender_rank sender_index len crc32c
 * (crc32c of the payload, 8 lowercase hex digits; nulls are not delivered,
 * so not logged): the logs of all members must be identical in ordered
 * mode, and each sender's lines in FIFO order in unordered mode.  The log
 * is flushed at most LOG_FLUSH_S after a delivery, so a guest killed
 * outright loses at most that much of it (left to stdio, a killed guest's
 * log lost its whole unflushed buffer: one subgroup's log came out empty).
 *
 * --timeout S gives the whole run S seconds; --stall S instead gives up only
 * when S seconds pass with no progress (no message delivered here and no
 * slot taken by our sender).  Tests use --stall: a hang fails them, a slow
 * kernel (the debug kernels under TCG) does not, and speed is the
 * benchmarks' to measure.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define LOG_BUF		(64 * 1024)
#define LOG_FLUSH_S	0.1

static struct bench b;
static double t_first_slot, t_last_commit;
static int send_err;
static uint64_t sent_msgs;
static int use_producer = 1;
static int copy_mode;
static double run_seconds;
static uint64_t min_views;	/* --views: the run also outlasts this many */
/* across view changes: the receiver tells the sender */
static volatile int own_end_seen;
static volatile uint64_t views_seen;
static int join_mode;		/* --join: the group ran before us */
static double run_start;	/* when the run began (bench_now()) */
static double stall_s;		/* --stall: give up after this long idle */
static uint64_t progress_ns;	/* last progress; both threads, atomic */

/* progressed: a message was delivered or a slot taken, now */
static void progressed(void)
{
	__atomic_store_n(&progress_ns, (uint64_t)(bench_now() * 1e9), __ATOMIC_RELAXED);
}

/* give_up_at: when the run gives up, by --stall or else by --timeout */
static double give_up_at(void)
{
	if (!stall_s)
		return run_start + b.o.timeout_s;
	return __atomic_load_n(&progress_ns, __ATOMIC_RELAXED) / 1e9 + stall_s;
}

/* timed_out: is it past give_up_at()? */
static int timed_out(void)
{
	return bench_now() >= give_up_at();
}

static void usage(FILE *f)
{
	fprintf(f, "usage: spindle-bw [options]\n%s"
		"  --log FILE           log every delivered message\n"
		"  --seconds S          send for S seconds instead of --messages\n"
		"  --views N            with --seconds: and until N view records came\n"
		"                       (a fault test's streams outlast the change)\n"
		"  --stall S            give up after S seconds without progress,\n"
		"                       not after --timeout's whole-run limit\n"
		"  --copy               copy each message in and out (not in place)\n"
		"  --no-producer        send with SEND system calls, not the producer page\n"
		"  --join               this node joins a running group: each sender's\n"
		"                       first message may come late in its sequence\n",
		bench_common_usage());
}

/*
 * get_slot: wait for a slot until the run gives up; with --stall, each
 * message delivered meanwhile puts that off (the slots free as the others
 * deliver)
 */
static int get_slot(struct spindle_handle *h, void **p)
{
	int ret;

	do {
		int left = (int)((give_up_at() - bench_now()) * 1000);

		ret = spindle_get_slot(h, left > 0 ? left : 0, p);
	} while (ret == -ETIMEDOUT && stall_s && !timed_out());
	if (!ret)
		progressed();
	return ret;
}

static void *sender(void *arg)
{
	struct spindle_handle *h = &b.h;
	uint32_t rank = (uint32_t)h->info.my_rank;
	double stop = 0;
	int delayed = bench_is_delayed(&b.o, h->info.my_rank, h->info.nsenders);
	uint8_t *src = copy_mode ? malloc(b.o.size) : NULL;
	uint64_t k;

	(void)arg;
	for (k = 0; run_seconds || k < b.o.messages; k++) {
		uint32_t len = b.o.size;
		uint64_t views = views_seen, stale = h->stale;
		void *p;
		int ret;

		if (run_seconds && stop && bench_now() >= stop &&
		    views_seen >= min_views)
			len = 0;		/* the end marker */
		/*
		 * A view change may drop the end marker: the view record
		 * reports it, or (a slot reserved in a view that ended) the
		 * library drops it as stale.  Both are counted from before
		 * the slot is taken: the record may come before the flush
		 * returns.
		 */
		ret = get_slot(h, &p);
		if (ret) {
			send_err = -ret;
			fprintf(stderr, "spindle-bw: sending message %" PRIu64 ": %s\n",
				k, strerror(-ret));
			break;
		}
		if (!t_first_slot) {
			t_first_slot = bench_now();
			stop = t_first_slot + run_seconds;
		}
		if (copy_mode) {
			bench_fill(src, len, rank, k);
			memcpy(p, src, len);
		} else {
			bench_fill(p, len, rank, k);
		}
		ret = spindle_commit(h, len);
		if (!ret && delayed)
			ret = spindle_flush(h);
		if (ret) {
			send_err = -ret;
			fprintf(stderr, "spindle-bw: commit: %s\n", strerror(-ret));
			break;
		}
		if (len)
			sent_msgs++;
		if (run_seconds && !len) {
			ret = spindle_flush(h);
			if (ret) {
				send_err = -ret;
				fprintf(stderr, "spindle-bw: flush: %s\n", strerror(-ret));
				break;
			}
			while (!own_end_seen && !timed_out() &&
			       views == views_seen && stale == h->stale)
				usleep(1000);
			if (own_end_seen || timed_out())
				break;
			continue;
		}
		if (delayed)
			bench_pause(&b.o);
	}
	if (!send_err) {
		int ret = spindle_flush(h);

		if (ret) {
			send_err = -ret;
			fprintf(stderr, "spindle-bw: flush: %s\n", strerror(-ret));
		}
	}
	t_last_commit = bench_now();
	free(src);
	return NULL;
}

/*
 * After a view change a sender's messages past the trim were dropped: its
 * next delivered one may come later in its sequence.  Find where.
 */
static int skip_dropped(const void *p, const struct spindle_desc *d, uint64_t *next)
{
	uint64_t j, span = join_mode ? 1ULL << 24 : 8ULL * b.h.info.window + 64;

	for (j = 1; j <= span; j++) {
		if (!bench_check(p, d->len, d->rank, *next + j)) {
			*next += j;
			return 1;
		}
	}
	return 0;
}

/* Is this the sender's next message (or, after a view change, a later one)? */
static int message_ok(const void *p, const struct spindle_desc *d, uint64_t *next,
		      const uint8_t *resync)
{
	if (d->rank >= b.h.info.nsenders || d->len != b.o.size)
		return 0;
	if (!bench_check(p, d->len, d->rank, next[d->rank]))
		return 1;
	return resync[d->rank] && skip_dropped(p, d, &next[d->rank]);
}

/* Is @member_id bit i of @mask, member i being @ids[i]? */
static int member_in(uint64_t mask, const uint32_t *ids, uint32_t n, uint32_t member_id)
{
	uint32_t i;

	for (i = 0; i < n && i < 64; i++)
		if ((mask >> i & 1) && ids[i] == member_id)
			return 1;
	return 0;
}

/* the view installed when this reader subscribed (0: none yet, joining) */
static uint64_t start_view;

/*
 * A reader that starts in a later view (the group ran on without some
 * senders, or it joined after they left) saw no record of their going: the
 * installed view says who is there to end a run.  Records of that view or
 * earlier, still queued for it, change nothing.
 */
static void view_at_start(struct spindle_handle *h, uint8_t *alive, uint32_t *live)
{
	struct spindle_group_status st;
	uint32_t ids[SPINDLE_MAX_MEMBERS], r, i, n;

	if (spindle_group_info(b.ctl, b.o.group_id, 0, &st) || !st.info.view_id)
		return;
	start_view = st.info.view_id;
	n = st.info.nmembers < SPINDLE_MAX_MEMBERS ? st.info.nmembers : SPINDLE_MAX_MEMBERS;
	for (i = 0; i < n; i++)
		ids[i] = st.members[i].id;
	for (r = 0; r < h->info.nsenders; r++) {
		int in = member_in(st.info.view_members, ids, n, h->rings[r].member_id);

		if (alive[r] && !in) {
			alive[r] = 0;
			(*live)--;
		}
	}
}

/* A view record: log it; the senders that left will not end their runs. */
static void view_record(struct spindle_handle *h, const struct spindle_view_desc *v,
			FILE *log, uint8_t *alive, uint8_t *ended, uint8_t *resync,
			uint64_t *next, uint32_t *live, uint32_t *ends)
{
	uint32_t ids[SPINDLE_MAX_MEMBERS], r, i, first = 1;

	views_seen++;
	if (log) {
		fprintf(log, "view %llu ", (unsigned long long)v->view_id);
		for (i = 0; i < b.cfg.nmembers && i < 64; i++) {
			if (!((v->members >> i) & 1))
				continue;
			fprintf(log, "%s%u", first ? "" : ",", b.cfg.members[i].id);
			first = 0;
		}
		fprintf(log, "\n");
	}
	for (i = 0; i < b.cfg.nmembers && i < SPINDLE_MAX_MEMBERS; i++)
		ids[i] = b.cfg.members[i].id;
	for (r = 0; r < h->info.nsenders; r++) {
		int in = member_in(v->members, ids, i, h->rings[r].member_id);

		if (v->view_id <= start_view) {
			/* known when this reader started */
		} else if (alive[r] && !in) {
			alive[r] = 0;
			(*live)--;
			*ends -= ended[r];
		} else if (!alive[r] && in) {
			/* it came back, a new incarnation: its messages start over */
			alive[r] = 1;
			(*live)++;
			ended[r] = 0;
			next[r] = 0;
		}
		resync[r] = 1;
	}
}

static void print_hist(const char *name, const __u64 *h)
{
	int i;

	printf(",\"%s\":[", name);
	for (i = 0; i < SPINDLE_HIST_BUCKETS; i++)
		printf("%s%llu", i ? "," : "", (unsigned long long)h[i]);
	printf("]");
}

static uint64_t thread_busy_ns;

int main(int argc, char **argv)
{
	uint64_t next[SPINDLE_MAX_MEMBERS] = { 0 }, delivered = 0, bytes = 0;
	uint64_t expected, bad = 0, seconds_arg;
	double t_first = 0, t_last = 0, secs;
	struct spindle_subgroup_info si;
	struct spindle_handle *h;
	uint32_t ends = 0, live = 0, rk;
	uint8_t ended[SPINDLE_MAX_MEMBERS] = { 0 }, resync[SPINDLE_MAX_MEMBERS] = { 0 };
	uint8_t alive[SPINDLE_MAX_MEMBERS] = { 0 };
	uint8_t *dst = NULL;
	pthread_t th;
	FILE *log = NULL;
	double log_flushed = 0;
	int i, sending, ret, err = 0;

	bench_defaults(&b.o);
	for (i = 1; i < argc; i++) {
		int r = bench_option(&b.o, argc, argv, &i);

		if (r == 1)
			continue;
		if (!strcmp(argv[i], "--copy")) {
			copy_mode = 1;
		} else if (!strcmp(argv[i], "--join")) {
			join_mode = 1;
		} else if (!strcmp(argv[i], "--no-producer")) {
			use_producer = 0;
		} else if (!strcmp(argv[i], "--seconds") && i + 1 < argc &&
			   sscanf(argv[i + 1], "%" SCNu64, &seconds_arg) == 1 && seconds_arg) {
			run_seconds = (double)seconds_arg;
			i++;
		} else if (!strcmp(argv[i], "--stall") && i + 1 < argc &&
			   sscanf(argv[i + 1], "%lf", &stall_s) == 1 && stall_s > 0) {
			i++;
		} else if (!strcmp(argv[i], "--views") && i + 1 < argc &&
			   sscanf(argv[i + 1], "%" SCNu64, &min_views) == 1) {
			i++;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "spindle-bw: bad option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (b.o.log) {
		log = fopen(b.o.log, "w");
		if (!log || setvbuf(log, NULL, _IOFBF, LOG_BUF)) {
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
	if (min_views && !run_seconds) {
		fprintf(stderr, "spindle-bw: --views needs --seconds\n");
		return 2;
	}
	if (run_seconds && (b.cfg.flags & SPINDLE_GROUP_BASELINE) &&
	    h->info.mode == SPINDLE_MODE_ORDERED && h->info.nsenders > 1) {
		/* senders stop at different counts: only nulls fill the gap */
		fprintf(stderr, "spindle-bw: --seconds needs null-sends; an ordered baseline group has none: use --messages\n");
		return 2;
	}
	if (copy_mode)
		dst = malloc(h->info.max_msg);
	expected = run_seconds ? UINT64_MAX : b.o.messages * h->info.nsenders;
	run_start = bench_now();
	progressed();
	sending = h->info.my_rank >= 0 && (b.o.messages || run_seconds);
	if (sending && use_producer) {
		ret = spindle_use_producer(h);
		if (ret) {
			fprintf(stderr, "spindle-bw: producer page: %s\n", strerror(-ret));
			return 1;
		}
	}

	/* become a consumer before anything is sent, taking nothing yet */
	ret = spindle_subscribe(h);
	if (ret < 0) {
		fprintf(stderr, "spindle-bw: recv: %s\n", strerror(-ret));
		return 1;
	}
	if (sending && pthread_create(&th, NULL, sender, NULL)) {
		perror("spindle-bw: pthread_create");
		return 1;
	}
	for (rk = 0; rk < h->info.nsenders; rk++) {
		alive[rk] = 1;
		resync[rk] = join_mode;
	}
	live = h->info.nsenders;
	view_at_start(h, alive, &live);
	while (delivered < expected && !timed_out() &&
	       (!run_seconds || ends < live)) {
		int n = spindle_recv(h, 1000), k;

		if (n == -EAGAIN || n == -ETIMEDOUT || n == -EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "spindle-bw: recv after %" PRIu64 " messages: %s\n",
				delivered, strerror(-n));
			err = 1;
			break;
		}
		if (n && !t_first)
			t_first = bench_now();
		if (n)
			progressed();
		for (k = 0; k < n; k++) {
			const struct spindle_desc *d = &h->descs[k];
			struct spindle_view_desc v;
			const void *p;
			int repeat = 0;

			if (spindle_view_of(d, &v)) {
				view_record(h, &v, log, alive, ended, resync, next, &live, &ends);
				delivered--;	/* not a message */
				continue;
			}
			p = spindle_msg_data(h, d);
			if (copy_mode) {
				memcpy(dst, p, d->len <= h->info.max_msg ? d->len : 0);
				p = dst;
			}
			if (run_seconds && !d->len) {
				/*
				 * A sender whose end marker a view change may
				 * have dropped sends another: only the first is
				 * logged, or each log would end wherever its
				 * last batch happened to (a copy can come after
				 * every sender ended).
				 */
				if (d->rank < SPINDLE_MAX_MEMBERS) {
					repeat = ended[d->rank];
					if (!repeat)
						ends += alive[d->rank];
					ended[d->rank] = 1;
				}
				delivered -= repeat;	/* not a message */
				if ((int32_t)d->rank == h->info.my_rank)
					own_end_seen = 1;
				if (d->rank < SPINDLE_MAX_MEMBERS)
					next[d->rank]--;	/* not data */
			} else if (!message_ok(p, d, next, resync)) {
				if (bad++ < 5)
					fprintf(stderr, "spindle-bw: bad message seq %llu rank %u index %llu len %u (expected data #%" PRIu64 ")\n",
						(unsigned long long)d->seq, d->rank,
						(unsigned long long)d->index, d->len,
						d->rank < SPINDLE_MAX_MEMBERS ? next[d->rank] : 0);
			}
			if (d->rank < SPINDLE_MAX_MEMBERS) {
				next[d->rank]++;
				resync[d->rank] = 0;
			}
			if (log && !repeat)
				fprintf(log, "%llu %u %llu %u %08x\n",
					(unsigned long long)d->seq, d->rank,
					(unsigned long long)d->index, d->len,
					spindle_crc32c(0, p, d->len));
			bytes += d->len;
		}
		delivered += n;
		if (n)
			t_last = bench_now();
		if (log && n && t_last - log_flushed >= LOG_FLUSH_S) {
			fflush(log);
			log_flushed = t_last;
		}
	}
	if (sending)
		pthread_join(th, NULL);
	spindle_done(h);
	bench_counters(&b, &si, &thread_busy_ns);
	if (t_first_slot && (!t_first || t_first_slot < t_first))
		t_first = t_first_slot;
	secs = t_last > t_first ? t_last - t_first : 0;
	if (run_seconds)
		for (rk = 0; rk < h->info.nsenders; rk++)
			delivered -= ended[rk];
	printf("{\"tool\":\"spindle-bw\",\"node\":%u,\"nodes\":%u,\"senders\":%u,\"mode\":\"%s\","
	       "\"baseline\":%d,\"producer\":%d,\"copy\":%d,\"size\":%u,\"window\":%u,"
	       "\"messages_per_sender\":%" PRIu64 ",\"delivered\":%" PRIu64 ",\"expected\":%" PRIu64
	       ",\"bytes\":%" PRIu64 ",\"seconds\":%.6f,\"MBps\":%.3f,\"msgs_per_sec\":%.1f,"
	       "\"sent\":%" PRIu64 ",\"send_seconds\":%.6f,\"send_calls\":%" PRIu64
	       ",\"wake_calls\":%" PRIu64 ",\"window_waits\":%" PRIu64
	       ",\"window_wait_s\":%.6f"
	       ",\"recv_calls\":%" PRIu64 ",\"syscalls_per_sent\":%.4f,\"msgs_per_recv\":%.2f,"
	       "\"writes_posted\":%llu,\"writes_per_delivered\":%.4f,\"nulls_sent\":%llu,"
	       "\"bad_messages\":%" PRIu64 ",\"delayed\":%d,\"thread_busy_s\":%.6f,"
	       "\"thread_us_per_delivered\":%.3f",
	       b.self_id, h->info.nmembers, h->info.nsenders,
	       h->info.mode == SPINDLE_MODE_ORDERED ? "ordered" : "unordered",
	       (b.cfg.flags & SPINDLE_GROUP_BASELINE) ? 1 : 0, h->prod ? 1 : 0, copy_mode,
	       b.o.size, h->info.window, run_seconds ? 0 : b.o.messages, delivered,
	       run_seconds ? delivered : expected, bytes, secs,
	       secs > 0 ? bytes / secs / 1e6 : 0.0, secs > 0 ? delivered / secs : 0.0,
	       sent_msgs, t_last_commit > t_first_slot ? t_last_commit - t_first_slot : 0.0,
	       h->send_calls, h->wake_calls, h->window_waits, h->window_wait_ns / 1e9,
	       h->recv_calls,
	       sent_msgs ? (double)(h->send_calls + h->wake_calls) / sent_msgs : 0.0,
	       si.recv_calls ? (double)si.recv_msgs / si.recv_calls : 0.0,
	       (unsigned long long)si.writes_posted,
	       si.msgs_delivered ? (double)si.writes_posted / si.msgs_delivered : 0.0,
	       (unsigned long long)si.nulls_sent, bad,
	       bench_is_delayed(&b.o, h->info.my_rank, h->info.nsenders),
	       thread_busy_ns / 1e9,
	       si.msgs_delivered ? thread_busy_ns / 1e3 / si.msgs_delivered : 0.0);
	print_hist("hist_publish", si.hist_publish);
	print_hist("hist_receive", si.hist_receive);
	print_hist("hist_deliver", si.hist_deliver);
	print_hist("hist_recv_call", si.hist_recv_call);
	printf("}\n");
	fflush(stdout);
	if (log)
		fclose(log);
	free(dst);
	bench_teardown(&b);
	if (!run_seconds && delivered < expected && !err)
		fprintf(stderr, "spindle-bw: timed out (%s): %" PRIu64 " of %" PRIu64 " delivered\n",
			stall_s ? "no progress for --stall" : "--timeout", delivered, expected);
	if (run_seconds && ends != live && !err)
		fprintf(stderr, "spindle-bw: stopped with %u of %u live senders ended (%s)\n",
			ends, live, timed_out() ? "timed out" : "count mismatch");
	if (bad)
		fprintf(stderr, "spindle-bw: %" PRIu64 " bad messages\n", bad);
	if (run_seconds)
		return ends == live && !bad && !send_err && !err ? 0 : 1;
	return delivered == expected && !bad && !send_err && !err ? 0 : 1;
}
