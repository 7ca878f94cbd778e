// SPDX-License-Identifier: GPL-2.0
/*
 * spindlectl: bring Spindle groups up and down, and show them.
 *
 *   spindlectl up FILE
 *   spindlectl down GROUP [--timeout MS]
 *   spindlectl [-j] show [GROUP]
 *   spindlectl [-j] stats [GROUP]
 *   spindlectl version
 *
 * Exit status: 0 on success, 1 when the kernel refused (the message says
 * what to fix), 2 on a usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "../lib/libspindle.h"

static int json;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: spindlectl up FILE\n"
		"       spindlectl down GROUP [--timeout MS]\n"
		"       spindlectl [-j] show [GROUP]\n"
		"       spindlectl [-j] stats [GROUP]\n"
		"       spindlectl version\n"
		"  -j  print JSON\n");
}

static int open_ctl(void)
{
	int fd = spindle_ctl_open();

	if (fd < 0) {
		fprintf(stderr, "spindlectl: %s: %s%s\n", SPINDLE_CTL_DEVICE,
			strerror(-fd), fd == -ENOENT ?
			" (is spindle.ko loaded?)" : fd == -EACCES ?
			" (needs root / CAP_NET_ADMIN)" : "");
		exit(1);
	}
	return fd;
}

static int cmd_up(const char *path)
{
	struct spindle_cfg cfg;
	char err[512];
	uint32_t self;
	int ctl, ret;

	if (spindle_cfg_parse(path, &cfg, err, sizeof(err))) {
		fprintf(stderr, "spindlectl: %s\n", err);
		return 1;
	}
	ctl = open_ctl();
	ret = spindle_up(ctl, &cfg, &self, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "spindlectl: %s\n", err);
		return 1;
	}
	if (json)
		printf("{\"group\":%u,\"self\":%u}\n", cfg.group_id, self);
	else
		printf("group %u up: this node is member %u\n", cfg.group_id, self);
	return 0;
}

static int parse_id(const char *s, uint32_t *v)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(s, &end, 0);
	if (errno || *end || !*s || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static int cmd_down(int argc, char **argv)
{
	uint32_t group, timeout = 2000;
	int ctl, ret;

	if (argc < 1 || parse_id(argv[0], &group)) {
		usage(stderr);
		return 2;
	}
	if (argc == 3 && !strcmp(argv[1], "--timeout")) {
		if (parse_id(argv[2], &timeout)) {
			usage(stderr);
			return 2;
		}
	} else if (argc != 1) {
		usage(stderr);
		return 2;
	}
	ctl = open_ctl();
	ret = spindle_down(ctl, group, timeout);
	if (ret) {
		fprintf(stderr, "spindlectl: down %u: %s\n", group, strerror(-ret));
		return 1;
	}
	if (!json)
		printf("group %u down\n", group);
	return 0;
}

static const char *addr_str(const struct spindle_member_info *m, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(m->family, m->addr, a, sizeof(a));
	snprintf(buf, len, m->family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, m->port);
	return buf;
}

static void show_text(const struct spindle_group_status *st)
{
	const struct spindle_ctl_group_info *gi = &st->info;
	char buf[80];
	uint32_t i;

	printf("group %u: %s, self %u", gi->group_id,
	       spindle_group_state_name(gi->state), gi->self_id);
	if (gi->fault_member >= 0)
		printf(", failed member %d", gi->fault_member);
	printf("\n  view %llu:", (unsigned long long)gi->view_id);
	for (i = 0; i < gi->nmembers && i < 32; i++)
		if (gi->view_members >> i & 1)
			printf(" %u", st->members[i].id);
	printf("\n");
	for (i = 0; i < gi->nmembers; i++)
		printf("  member %u %s %s connects %u\n", st->members[i].id,
		       addr_str(&st->members[i], buf, sizeof(buf)),
		       spindle_peer_state_name(st->members[i].state),
		       st->members[i].connects);
	for (i = 0; i < gi->nsubgroups; i++) {
		const struct spindle_subgroup_info *s = &st->subgroups[i];

		printf("  subgroup %u /dev/spindle%u %s window %u max_msg %u members %u senders %u rank %d consumers %u\n",
		       s->id, s->minor,
		       s->mode == SPINDLE_MODE_ORDERED ? "ordered" : "unordered",
		       s->window, s->max_msg, s->nmembers, s->nsenders, s->my_rank,
		       s->consumers);
		printf("    window use %u/%u free %u; sent %llu nulls %llu (%llu runs) received %llu delivered %llu\n",
		       s->in_flight, s->window, s->free_slots,
		       (unsigned long long)s->msgs_sent, (unsigned long long)s->nulls_sent,
		       (unsigned long long)s->null_runs, (unsigned long long)s->msgs_received,
		       (unsigned long long)s->msgs_delivered);
		printf("    batches: publish %llu receive %llu deliver %llu; writes %llu bytes %llu\n",
		       (unsigned long long)s->publish_batches,
		       (unsigned long long)s->receive_batches,
		       (unsigned long long)s->deliver_batches,
		       (unsigned long long)s->writes_posted,
		       (unsigned long long)s->bytes_posted);
	}
}

static void show_json(const struct spindle_group_status *st)
{
	const struct spindle_ctl_group_info *gi = &st->info;
	char buf[80];
	uint32_t i;
	int first;

	printf("{\"group\":%u,\"state\":\"%s\",\"self\":%u,\"fault_member\":%d,\"view\":{\"id\":%llu,\"members\":[",
	       gi->group_id, spindle_group_state_name(gi->state), gi->self_id,
	       gi->fault_member, (unsigned long long)gi->view_id);
	for (i = 0, first = 1; i < gi->nmembers && i < 32; i++) {
		if (!(gi->view_members >> i & 1))
			continue;
		printf("%s%u", first ? "" : ",", st->members[i].id);
		first = 0;
	}
	printf("]},\"members\":[");
	for (i = 0; i < gi->nmembers; i++)
		printf("%s{\"id\":%u,\"addr\":\"%s\",\"state\":\"%s\",\"connects\":%u}",
		       i ? "," : "", st->members[i].id,
		       addr_str(&st->members[i], buf, sizeof(buf)),
		       spindle_peer_state_name(st->members[i].state),
		       st->members[i].connects);
	printf("],\"subgroups\":[");
	for (i = 0; i < gi->nsubgroups; i++) {
		const struct spindle_subgroup_info *s = &st->subgroups[i];

		printf("%s{\"id\":%u,\"device\":\"/dev/spindle%u\",\"mode\":\"%s\",\"window\":%u,"
		       "\"max_msg\":%u,\"slot_size\":%u,\"members\":%u,\"senders\":%u,\"rank\":%d,"
		       "\"consumers\":%u,\"free_slots\":%u,\"in_flight\":%u,\"msgs_sent\":%llu,"
		       "\"nulls_sent\":%llu,\"null_runs\":%llu,\"msgs_received\":%llu,"
		       "\"msgs_delivered\":%llu,\"publish_batches\":%llu,\"receive_batches\":%llu,"
		       "\"deliver_batches\":%llu,\"writes_posted\":%llu,\"bytes_posted\":%llu}",
		       i ? "," : "", s->id, s->minor,
		       s->mode == SPINDLE_MODE_ORDERED ? "ordered" : "unordered",
		       s->window, s->max_msg, s->slot_size, s->nmembers, s->nsenders,
		       s->my_rank, s->consumers, s->free_slots, s->in_flight,
		       (unsigned long long)s->msgs_sent, (unsigned long long)s->nulls_sent,
		       (unsigned long long)s->null_runs, (unsigned long long)s->msgs_received,
		       (unsigned long long)s->msgs_delivered,
		       (unsigned long long)s->publish_batches,
		       (unsigned long long)s->receive_batches,
		       (unsigned long long)s->deliver_batches,
		       (unsigned long long)s->writes_posted,
		       (unsigned long long)s->bytes_posted);
	}
	printf("]}");
}

static void print_hist_text(const char *name, const __u64 *h)
{
	int b, last = -1;

	for (b = 0; b < SPINDLE_HIST_BUCKETS; b++)
		if (h[b])
			last = b;
	printf("    %-15s", name);
	if (last < 0)
		printf(" -");
	for (b = 0; b <= last; b++)
		printf(" %s%u:%llu", b == SPINDLE_HIST_BUCKETS - 1 ? ">=" : "",
		       1u << b, (unsigned long long)h[b]);
	printf("\n");
}

static void print_hist_json(const char *name, const __u64 *h)
{
	int b;

	printf(",\"%s\":[", name);
	for (b = 0; b < SPINDLE_HIST_BUCKETS; b++)
		printf("%s%llu", b ? "," : "", (unsigned long long)h[b]);
	printf("]");
}

static double ratio(__u64 a, __u64 b)
{
	return b ? (double)a / (double)b : 0.0;
}

/* Counters and histograms: what the benchmarks read. */
static void stats_one(const struct spindle_group_status *st)
{
	const struct spindle_ctl_group_info *gi = &st->info;
	double busy = gi->busy_ns / 1e9, idle = gi->idle_ns / 1e9;
	uint32_t i;

	if (json)
		printf("{\"group\":%u,\"busy_s\":%.6f,\"idle_s\":%.6f,\"subgroups\":[",
		       gi->group_id, busy, idle);
	else
		printf("group %u: predicate thread busy %.3f s, parked %.3f s\n",
		       gi->group_id, busy, idle);
	for (i = 0; i < gi->nsubgroups; i++) {
		const struct spindle_subgroup_info *s = &st->subgroups[i];
		__u64 msgs = s->msgs_sent + s->msgs_received;

		if (json) {
			printf("%s{\"id\":%u,\"msgs_sent\":%llu,\"msgs_received\":%llu,"
			       "\"msgs_delivered\":%llu,\"nulls_sent\":%llu,\"null_runs\":%llu,"
			       "\"writes_posted\":%llu,\"bytes_posted\":%llu,\"send_calls\":%llu,"
			       "\"recv_calls\":%llu,\"recv_msgs\":%llu,"
			       "\"writes_per_delivered\":%.4f,\"msgs_per_recv_call\":%.2f",
			       i ? "," : "", s->id, (unsigned long long)s->msgs_sent,
			       (unsigned long long)s->msgs_received,
			       (unsigned long long)s->msgs_delivered,
			       (unsigned long long)s->nulls_sent, (unsigned long long)s->null_runs,
			       (unsigned long long)s->writes_posted,
			       (unsigned long long)s->bytes_posted,
			       (unsigned long long)s->send_calls, (unsigned long long)s->recv_calls,
			       (unsigned long long)s->recv_msgs,
			       ratio(s->writes_posted, s->msgs_delivered),
			       ratio(s->recv_msgs, s->recv_calls));
			print_hist_json("hist_publish", s->hist_publish);
			print_hist_json("hist_receive", s->hist_receive);
			print_hist_json("hist_deliver", s->hist_deliver);
			print_hist_json("hist_recv_call", s->hist_recv_call);
			printf("}");
			continue;
		}
		printf("  subgroup %u: sent %llu received %llu delivered %llu nulls %llu in %llu runs\n",
		       s->id, (unsigned long long)s->msgs_sent,
		       (unsigned long long)s->msgs_received, (unsigned long long)s->msgs_delivered,
		       (unsigned long long)s->nulls_sent, (unsigned long long)s->null_runs);
		printf("    RDMA writes %llu (%.4f per delivered message), %llu bytes\n",
		       (unsigned long long)s->writes_posted,
		       ratio(s->writes_posted, s->msgs_delivered),
		       (unsigned long long)s->bytes_posted);
		printf("    system calls: SEND %llu, RECV %llu (%.2f messages per RECV, %.3f calls per message)\n",
		       (unsigned long long)s->send_calls, (unsigned long long)s->recv_calls,
		       ratio(s->recv_msgs, s->recv_calls),
		       ratio(s->send_calls + s->recv_calls, msgs));
		printf("    batch sizes (size:count, powers of two):\n");
		print_hist_text("send", s->hist_publish);
		print_hist_text("receive", s->hist_receive);
		print_hist_text("delivery", s->hist_deliver);
		print_hist_text("per RECV call", s->hist_recv_call);
	}
	if (json)
		printf("]}");
}

static int cmd_show(int argc, char **argv, int stats)
{
	struct spindle_group_status st;
	uint32_t group = 0, idx;
	int ctl, ret, n = 0;

	if (argc > 1 || (argc == 1 && (parse_id(argv[0], &group) || !group))) {
		usage(stderr);
		return 2;
	}
	ctl = open_ctl();
	if (json)
		printf("[");
	for (idx = 0;; idx++) {
		ret = spindle_group_info(ctl, group, idx, &st);
		if (ret == -ENOENT && (!group || n))
			break;
		if (ret) {
			if (json)
				printf("]\n");
			fprintf(stderr, "spindlectl: show %u: %s\n", group,
				ret == -ENOENT ? "no such group" : strerror(-ret));
			return 1;
		}
		if (json)
			printf("%s", n ? "," : "");
		if (stats)
			stats_one(&st);
		else if (json)
			show_json(&st);
		else
			show_text(&st);
		n++;
		if (group)
			break;
	}
	if (json)
		printf("]\n");
	else if (!n)
		printf("no groups\n");
	return 0;
}

static int cmd_version(void)
{
	struct spindle_ctl_version v = { .size = sizeof(v) };
	int ctl = open_ctl();

	if (ioctl(ctl, SPINDLE_CTL_VERSION, &v) < 0) {
		perror("spindlectl: version");
		return 1;
	}
	if (json)
		printf("{\"abi\":%u,\"rdma_devices\":%u}\n", v.abi_version, v.rdma_devices);
	else
		printf("spindle ABI %u, %u RDMA device(s)\n", v.abi_version, v.rdma_devices);
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1;

	while (i < argc && argv[i][0] == '-') {
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
		i++;
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[i], "up") && i + 2 == argc)
		return cmd_up(argv[i + 1]);
	if (!strcmp(argv[i], "down"))
		return cmd_down(argc - i - 1, argv + i + 1);
	if (!strcmp(argv[i], "show"))
		return cmd_show(argc - i - 1, argv + i + 1, 0);
	if (!strcmp(argv[i], "stats"))
		return cmd_show(argc - i - 1, argv + i + 1, 1);
	if (!strcmp(argv[i], "version") && i + 1 == argc)
		return cmd_version();
	usage(stderr);
	return 2;
}
