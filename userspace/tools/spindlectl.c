// SPDX-License-Identifier: GPL-2.0
/*
 * spindlectl: bring Spindle groups up and down, and show them, in the
 * style of ip(8) and rdma(8): spindlectl [OPTIONS] OBJECT COMMAND [ARGS].
 *
 *   spindlectl group show [GROUP]                 members, states, the view
 *   spindlectl group up FILE                      (also: spindlectl up FILE)
 *   spindlectl group down GROUP [timeout MS]      (also: spindlectl down ...)
 *   spindlectl subgroup show [GROUP [SUBGROUP]]   geometry and counters
 *   spindlectl stats [show] [GROUP [SUBGROUP]]    writes, calls, histograms
 *   spindlectl show [GROUP]                       everything, one block a group
 *   spindlectl version
 *   spindlectl [OBJECT] help
 *
 * -j (JSON) and -h (help) are accepted anywhere on the line.  Objects and
 * commands may be shortened to a unique prefix, except up and down.
 *
 * Exit status: 0 on success, 1 when the operation failed (the message says
 * what to fix), 2 on a usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../lib/libspindle.h"

#ifndef SPINDLE_VERSION
#define SPINDLE_VERSION "unknown"
#endif

#define EXIT_FAIL	1
#define EXIT_USAGE	2

static int json;

/* ---- usage, per object ---- */

static const char usage_main[] =
	"usage: spindlectl [OPTIONS] OBJECT { COMMAND | help }\n"
	"       spindlectl [OPTIONS] { up FILE | down GROUP [timeout MS] | show [GROUP] |\n"
	"                              version | help }\n"
	"where  OBJECT  := { group | subgroup | stats }\n"
	"       OPTIONS := { -j[son] | -h[elp] | -V[ersion] }\n"
	"\n"
	"  group show [GROUP]               members, their states, the installed view\n"
	"  group up FILE                    bring a group up on this node (peers connect\n"
	"                                   in the background)\n"
	"  group down GROUP [timeout MS]    leave it; writes in flight reach the peers first\n"
	"  subgroup show [GROUP [SUBGROUP]] geometry, window use and message counters\n"
	"  stats [show] [GROUP [SUBGROUP]]  RDMA writes, system calls, batch-size histograms\n"
	"  show [GROUP]                     all of the above but stats, one block per group\n"
	"  version                          the loaded module's ABI and RDMA devices\n"
	"\n"
	"  -j   print JSON (anywhere on the line)   -V   print spindlectl's version\n"
	"  Objects and commands may be shortened to a unique prefix (g, sub, st),\n"
	"  except up and down.  'spindlectl OBJECT help' shows one object's usage.\n"
	"  Exit status: 0 ok, 1 the operation failed, 2 usage error.\n";

static const char usage_group[] =
	"usage: spindlectl group show [GROUP]\n"
	"       spindlectl group up FILE\n"
	"       spindlectl group down GROUP [timeout MS]\n"
	"       spindlectl group help\n"
	"  show   each group (or GROUP): state, this node's member id, the installed view\n"
	"         and its members, and every member's address, connection state and\n"
	"         connection attempts\n"
	"  up     bring up the group FILE describes (see spindlectl(8) for the format);\n"
	"         run it on every member, with the same file\n"
	"  down   leave GROUP and tear it down; writes in flight get MS milliseconds\n"
	"         (default 2000, at most 60000) to reach the peers\n"
	"  GROUP is a non-zero number (0x... for hexadecimal).  -j prints JSON.\n";

static const char usage_subgroup[] =
	"usage: spindlectl subgroup show [GROUP [SUBGROUP]]\n"
	"       spindlectl subgroup help\n"
	"  show   every subgroup this node is in (of GROUP; or just SUBGROUP): its\n"
	"         device, mode, window, max_msg, members, senders, this node's sender\n"
	"         rank (-1: it does not send), consumers, window use, messages sent,\n"
	"         received and delivered, nulls, batches, RDMA writes and bytes\n"
	"  -j prints JSON.\n";

static const char usage_stats[] =
	"usage: spindlectl stats [show] [GROUP [SUBGROUP]]\n"
	"       spindlectl stats help\n"
	"  show   the predicate thread's busy and parked time; per subgroup, messages,\n"
	"         RDMA writes per delivered message, SEND/RECV system calls, and\n"
	"         histograms of batch sizes (powers of two)\n"
	"  -j prints JSON.\n";

static void usage_error(const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/* A usage error: what is wrong, and where the usage is. */
static void usage_error(const char *usage, const char *fmt, ...)
{
	const char *obj = usage == usage_group ? "group " : usage == usage_subgroup ?
			  "subgroup " : usage == usage_stats ? "stats " : "";
	va_list ap;

	fprintf(stderr, "spindlectl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'spindlectl %shelp'.\n", obj);
	exit(EXIT_USAGE);
}

static void help(const char *usage) __attribute__((noreturn));

static void help(const char *usage)
{
	fputs(usage, stdout);
	exit(0);
}

/* ---- words and numbers ---- */

/*
 * Which of @words (NULL-terminated) is @w: an exact match, or a unique
 * prefix of one not marked with a leading '!' (those must be written out).
 * -1: none; -2: ambiguous.
 */
static int lookup(const char *w, const char *const *words)
{
	size_t len = strlen(w);
	int i, found = -1;

	for (i = 0; words[i]; i++) {
		const char *name = words[i] + (words[i][0] == '!');

		if (!strcmp(w, name))
			return i;
		if (len && words[i][0] != '!' && !strncmp(w, name, len))
			found = found == -1 ? i : -2;
	}
	return found;
}

/* @w is no word of @words, or the prefix of several: say so (and which). */
static void bad_word(const char *usage, const char *what, const char *w,
		     const char *const *words) __attribute__((noreturn));

static void bad_word(const char *usage, const char *what, const char *w,
		     const char *const *words)
{
	char list[160] = "";
	size_t len = strlen(w), used = 0;
	int i;

	for (i = 0; words[i] && used < sizeof(list); i++) {
		const char *name = words[i] + (words[i][0] == '!');

		if (words[i][0] != '!' && !strncmp(w, name, len))
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
						 used ? ", " : "", name);
	}
	if (lookup(w, words) == -2)
		usage_error(usage, "%s '%s' is ambiguous: %s?", what, w, list);
	usage_error(usage, "unknown %s '%s'", what, w);
}

static int parse_u32(const char *s, uint32_t *v)
{
	char *end;
	unsigned long x;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	x = strtoul(s, &end, 0);
	if (errno || *end || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static uint32_t group_arg(const char *s, const char *usage)
{
	uint32_t g;

	if (parse_u32(s, &g) || !g)
		usage_error(usage, "'%s' is not a group id (a non-zero number)", s);
	return g;
}

/* ---- the control device and its errors ---- */

#define HINT_PRIV	" (needs root / CAP_NET_ADMIN)"

static int open_ctl(void)
{
	int fd = spindle_ctl_open();

	if (fd < 0) {
		fprintf(stderr, "spindlectl: %s: %s%s\n", SPINDLE_CTL_DEVICE, strerror(-fd),
			fd == -ENOENT ? " (is spindle.ko loaded? modprobe spindle)" :
			fd == -EACCES || fd == -EPERM ? HINT_PRIV : "");
		exit(EXIT_FAIL);
	}
	return fd;
}

static void no_group(uint32_t group)
{
	fprintf(stderr, "spindlectl: no group %u is up on this node (spindlectl group show lists them)\n",
		group);
}

/* A failed SPINDLE_CTL_* call, other than "no such group". */
static void ctl_error(const char *what, int ret)
{
	fprintf(stderr, "spindlectl: %s: %s%s\n", what, strerror(-ret),
		ret == -EPERM || ret == -EACCES ? HINT_PRIV : "");
}

/* ---- up, down, version ---- */

static int cmd_up(const char *path)
{
	struct spindle_cfg cfg;
	char err[512];
	const char *hint = "";
	uint32_t self;
	int ctl, ret;

	if (spindle_cfg_parse(path, &cfg, err, sizeof(err))) {
		fprintf(stderr, "spindlectl: %s\n", err);
		return EXIT_FAIL;
	}
	ctl = open_ctl();
	ret = spindle_up(ctl, &cfg, &self, err, sizeof(err));
	if (ret) {
		switch (ret) {
		case -EPERM:
		case -EACCES:
			hint = HINT_PRIV;
			break;
		case -ENOMEM:
			hint = " (the group's pinned memory is over RLIMIT_MEMLOCK: raise it with"
			       " ulimit -l or LimitMEMLOCK=, or bring the group up as root; the"
			       " kernel log says how much it needs)";
			break;
		case -EEXIST:
			hint = " (spindlectl group show lists it; spindlectl down takes it down)";
			break;
		case -ENODEV:
			hint = " (rdma link show lists the RDMA devices; for soft-RoCE:"
			       " rdma link add rxe0 type rxe netdev IFACE)";
			break;
		}
		fprintf(stderr, "spindlectl: %s%s\n", err, hint);
		return EXIT_FAIL;
	}
	if (json)
		printf("{\"group\":%u,\"self\":%u}\n", cfg.group_id, self);
	else
		printf("group %u up: this node is member %u\n", cfg.group_id, self);
	return 0;
}

static int cmd_down(int argc, char **argv, const char *usage)
{
	uint32_t group, timeout = 2000;
	char what[32];
	int ctl, ret;

	if (argc < 1)
		usage_error(usage, "down: which group?");
	group = group_arg(argv[0], usage);
	if (argc == 3 && (!strcmp(argv[1], "--timeout") || !strcmp(argv[1], "timeout"))) {
		if (parse_u32(argv[2], &timeout))
			usage_error(usage, "down: timeout '%s' is not a number of milliseconds",
				    argv[2]);
	} else if (argc != 1) {
		usage_error(usage, "down: unexpected '%s'", argv[1]);
	}
	ctl = open_ctl();
	ret = spindle_down(ctl, group, timeout);
	if (ret == -ENOENT) {
		no_group(group);
		return EXIT_FAIL;
	}
	if (ret) {
		snprintf(what, sizeof(what), "down %u", group);
		ctl_error(what, ret);
		return EXIT_FAIL;
	}
	if (!json)
		printf("group %u down\n", group);
	return 0;
}

static int cmd_version(void)
{
	struct spindle_ctl_version v = { .size = sizeof(v) };
	int ctl = open_ctl();

	if (ioctl(ctl, SPINDLE_CTL_VERSION, &v) < 0) {
		ctl_error("version", -errno);
		return EXIT_FAIL;
	}
	if (json)
		printf("{\"abi\":%u,\"rdma_devices\":%u}\n", v.abi_version, v.rdma_devices);
	else
		printf("spindle ABI %u, %u RDMA device(s)\n", v.abi_version, v.rdma_devices);
	return 0;
}

/* ---- reading the groups ---- */

struct groups {
	struct spindle_group_status *st;
	uint32_t n;
};

/* Every group up on this node, or just @group.  0, or EXIT_FAIL (said why). */
static int load_groups(uint32_t group, struct groups *gs)
{
	int ctl = open_ctl(), ret;
	uint32_t idx;

	gs->st = NULL;
	gs->n = 0;
	for (idx = 0;; idx++) {
		struct spindle_group_status *st = realloc(gs->st, (gs->n + 1) * sizeof(*st));

		if (!st) {
			perror("spindlectl");
			exit(EXIT_FAIL);
		}
		gs->st = st;
		ret = spindle_group_info(ctl, group, idx, &st[gs->n]);
		if (ret == -ENOENT && !group)
			break;
		if (ret == -ENOENT) {
			no_group(group);
			return EXIT_FAIL;
		}
		if (ret) {
			ctl_error("reading the groups", ret);
			return EXIT_FAIL;
		}
		gs->n++;
		if (group)
			break;
	}
	close(ctl);
	return 0;
}

static const char *addr_str(const struct spindle_member_info *m, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(m->family, m->addr, a, sizeof(a));
	snprintf(buf, len, m->family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, m->port);
	return buf;
}

static const char *mode_name(uint32_t mode)
{
	return mode == SPINDLE_MODE_ORDERED ? "ordered" : "unordered";
}

static int in_view(const struct spindle_ctl_group_info *gi, uint32_t i)
{
	return i < 32 && (gi->view_members >> i & 1);
}

/* The view's member ids, "0,1,2", or JSON "[0,1,2]" without the brackets. */
static void print_view_members(const struct spindle_group_status *st)
{
	uint32_t i;
	int first = 1;

	for (i = 0; i < st->info.nmembers; i++) {
		if (!in_view(&st->info, i))
			continue;
		printf("%s%u", first ? "" : ",", st->members[i].id);
		first = 0;
	}
	if (first && !json)
		printf("-");
}

/* ---- show: the original all-in-one output ---- */

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
		       s->id, s->minor, mode_name(s->mode),
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

/* One subgroup as a JSON object; @group_id > 0 adds a "group" key first. */
static void subgroup_json(const struct spindle_subgroup_info *s, uint32_t group_id)
{
	printf("{");
	if (group_id)
		printf("\"group\":%u,", group_id);
	printf("\"id\":%u,\"device\":\"/dev/spindle%u\",\"mode\":\"%s\",\"window\":%u,"
	       "\"max_msg\":%u,\"slot_size\":%u,\"members\":%u,\"senders\":%u,\"rank\":%d,"
	       "\"consumers\":%u,\"free_slots\":%u,\"in_flight\":%u,\"msgs_sent\":%llu,"
	       "\"nulls_sent\":%llu,\"null_runs\":%llu,\"msgs_received\":%llu,"
	       "\"msgs_delivered\":%llu,\"publish_batches\":%llu,\"receive_batches\":%llu,"
	       "\"deliver_batches\":%llu,\"writes_posted\":%llu,\"bytes_posted\":%llu}",
	       s->id, s->minor, mode_name(s->mode),
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

static void show_json(const struct spindle_group_status *st)
{
	const struct spindle_ctl_group_info *gi = &st->info;
	char buf[80];
	uint32_t i;

	printf("{\"group\":%u,\"state\":\"%s\",\"self\":%u,\"fault_member\":%d,\"view\":{\"id\":%llu,\"members\":[",
	       gi->group_id, spindle_group_state_name(gi->state), gi->self_id,
	       gi->fault_member, (unsigned long long)gi->view_id);
	print_view_members(st);
	printf("]},\"members\":[");
	for (i = 0; i < gi->nmembers; i++)
		printf("%s{\"id\":%u,\"addr\":\"%s\",\"state\":\"%s\",\"connects\":%u}",
		       i ? "," : "", st->members[i].id,
		       addr_str(&st->members[i], buf, sizeof(buf)),
		       spindle_peer_state_name(st->members[i].state),
		       st->members[i].connects);
	printf("],\"subgroups\":[");
	for (i = 0; i < gi->nsubgroups; i++) {
		printf("%s", i ? "," : "");
		subgroup_json(&st->subgroups[i], 0);
	}
	printf("]}");
}

/* ---- group show ---- */

static void group_text(const struct spindle_group_status *st)
{
	const struct spindle_ctl_group_info *gi = &st->info;
	char buf[80];
	uint32_t i;

	printf("group %u state %s self %u view %llu view_members ", gi->group_id,
	       spindle_group_state_name(gi->state), gi->self_id,
	       (unsigned long long)gi->view_id);
	print_view_members(st);
	if (gi->fault_member >= 0)
		printf(" fault_member %d", gi->fault_member);
	printf("\n");
	for (i = 0; i < gi->nmembers; i++)
		printf("    member %u addr %s state %s connects %u%s\n", st->members[i].id,
		       addr_str(&st->members[i], buf, sizeof(buf)),
		       spindle_peer_state_name(st->members[i].state),
		       st->members[i].connects, in_view(gi, i) ? "" : " not_in_view");
	printf("    subgroups ");
	for (i = 0; i < gi->nsubgroups; i++)
		printf("%s%u", i ? "," : "", st->subgroups[i].id);
	printf("%s\n", gi->nsubgroups ? "" : "-");
}

static void group_json(const struct spindle_group_status *st)
{
	const struct spindle_ctl_group_info *gi = &st->info;
	char buf[80];
	uint32_t i;

	printf("{\"group\":%u,\"state\":\"%s\",\"self\":%u,\"fault_member\":%d,"
	       "\"view\":{\"id\":%llu,\"members\":[",
	       gi->group_id, spindle_group_state_name(gi->state), gi->self_id,
	       gi->fault_member, (unsigned long long)gi->view_id);
	print_view_members(st);
	printf("]},\"members\":[");
	for (i = 0; i < gi->nmembers; i++)
		printf("%s{\"id\":%u,\"addr\":\"%s\",\"state\":\"%s\",\"connects\":%u,\"in_view\":%s}",
		       i ? "," : "", st->members[i].id,
		       addr_str(&st->members[i], buf, sizeof(buf)),
		       spindle_peer_state_name(st->members[i].state),
		       st->members[i].connects, in_view(gi, i) ? "true" : "false");
	printf("],\"subgroup_ids\":[");
	for (i = 0; i < gi->nsubgroups; i++)
		printf("%s%u", i ? "," : "", st->subgroups[i].id);
	printf("]}");
}

/* ---- subgroup show ---- */

static void subgroup_text(uint32_t group_id, const struct spindle_subgroup_info *s)
{
	printf("group %u subgroup %u dev /dev/spindle%u mode %s window %u max_msg %u slot_size %u\n",
	       group_id, s->id, s->minor, mode_name(s->mode), s->window, s->max_msg,
	       s->slot_size);
	printf("    members %u senders %u rank %d consumers %u in_flight %u free_slots %u\n",
	       s->nmembers, s->nsenders, s->my_rank, s->consumers, s->in_flight,
	       s->free_slots);
	printf("    sent %llu nulls %llu null_runs %llu received %llu delivered %llu\n",
	       (unsigned long long)s->msgs_sent, (unsigned long long)s->nulls_sent,
	       (unsigned long long)s->null_runs, (unsigned long long)s->msgs_received,
	       (unsigned long long)s->msgs_delivered);
	printf("    batches publish %llu receive %llu deliver %llu writes %llu bytes %llu\n",
	       (unsigned long long)s->publish_batches,
	       (unsigned long long)s->receive_batches,
	       (unsigned long long)s->deliver_batches,
	       (unsigned long long)s->writes_posted, (unsigned long long)s->bytes_posted);
}

/* Does group @st have subgroup @sg on this node?  Says so when it has not. */
static int has_subgroup(const struct spindle_group_status *st, uint32_t sg)
{
	uint32_t i;

	for (i = 0; i < st->info.nsubgroups; i++)
		if (st->subgroups[i].id == sg)
			return 1;
	fprintf(stderr, "spindlectl: this node is in no subgroup %u of group %u (it is in ",
		sg, st->info.group_id);
	for (i = 0; i < st->info.nsubgroups; i++)
		fprintf(stderr, "%s%u", i ? "," : "subgroups ", st->subgroups[i].id);
	fprintf(stderr, "%s; spindlectl subgroup show %u lists them)\n",
		st->info.nsubgroups ? "" : "none", st->info.group_id);
	return 0;
}

/* ---- stats ---- */

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

/* Counters and histograms: what the benchmarks read.  @sg < 0: all. */
static void stats_one(const struct spindle_group_status *st, int64_t sg)
{
	const struct spindle_ctl_group_info *gi = &st->info;
	double busy = gi->busy_ns / 1e9, idle = gi->idle_ns / 1e9;
	uint32_t i;
	int n = 0;

	if (json)
		printf("{\"group\":%u,\"busy_s\":%.6f,\"idle_s\":%.6f,\"subgroups\":[",
		       gi->group_id, busy, idle);
	else
		printf("group %u: predicate thread busy %.3f s, parked %.3f s\n",
		       gi->group_id, busy, idle);
	for (i = 0; i < gi->nsubgroups; i++) {
		const struct spindle_subgroup_info *s = &st->subgroups[i];
		__u64 msgs = s->msgs_sent + s->msgs_received;

		if (sg >= 0 && s->id != sg)
			continue;
		if (json) {
			printf("%s{\"id\":%u,\"msgs_sent\":%llu,\"msgs_received\":%llu,"
			       "\"msgs_delivered\":%llu,\"nulls_sent\":%llu,\"null_runs\":%llu,"
			       "\"writes_posted\":%llu,\"bytes_posted\":%llu,\"send_calls\":%llu,"
			       "\"recv_calls\":%llu,\"recv_msgs\":%llu,"
			       "\"writes_per_delivered\":%.4f,\"msgs_per_recv_call\":%.2f",
			       n++ ? "," : "", s->id, (unsigned long long)s->msgs_sent,
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

/* ---- the show commands ---- */

enum view { V_ALL, V_GROUP, V_SUBGROUP, V_STATS };

/*
 * [GROUP [SUBGROUP]] of a show command; SUBGROUP only where @max_args is 2.
 * Prints a JSON array (one element per group; per subgroup for V_SUBGROUP)
 * or text.
 */
static int cmd_show(enum view v, int argc, char **argv, int max_args, const char *usage)
{
	uint32_t group = 0, sgid, i, j;
	int64_t sg = -1;
	struct groups gs;
	int n = 0;

	if (argc > max_args)
		usage_error(usage, "unexpected '%s'", argv[max_args]);
	if (argc >= 1)
		group = group_arg(argv[0], usage);
	if (argc >= 2) {
		if (parse_u32(argv[1], &sgid))
			usage_error(usage, "'%s' is not a subgroup id (a number)", argv[1]);
		sg = sgid;
	}
	if (load_groups(group, &gs)) {
		/* what the original show -j printed on an error: an empty array */
		if (json && (v == V_ALL || v == V_STATS))
			printf("[]\n");
		return EXIT_FAIL;
	}
	if (sg >= 0 && gs.n == 1 && !has_subgroup(&gs.st[0], (uint32_t)sg)) {
		free(gs.st);
		return EXIT_FAIL;
	}
	if (json)
		printf("[");
	for (i = 0; i < gs.n; i++) {
		const struct spindle_group_status *st = &gs.st[i];

		switch (v) {
		case V_ALL:
			printf("%s", json && i ? "," : "");
			if (json)
				show_json(st);
			else
				show_text(st);
			break;
		case V_GROUP:
			printf("%s", json && i ? "," : "");
			if (json)
				group_json(st);
			else
				group_text(st);
			break;
		case V_STATS:
			printf("%s", json && i ? "," : "");
			stats_one(st, sg);
			break;
		case V_SUBGROUP:
			for (j = 0; j < st->info.nsubgroups; j++) {
				if (sg >= 0 && st->subgroups[j].id != sg)
					continue;
				if (json) {
					printf("%s", n ? "," : "");
					subgroup_json(&st->subgroups[j], st->info.group_id);
				} else {
					subgroup_text(st->info.group_id, &st->subgroups[j]);
				}
				n++;
			}
			break;
		}
	}
	if (json)
		printf("]\n");
	else if (!gs.n && v == V_ALL)
		printf("no groups\n");	/* what show always printed */
	else if (!gs.n)
		printf("no groups are up on this node (spindlectl up FILE brings one up)\n");
	else if (v == V_SUBGROUP && !n)
		printf("this node is in no subgroup\n");
	free(gs.st);
	return 0;
}

/* ---- objects ---- */

static int obj_group(int argc, char **argv)
{
	static const char *const cmds[] = { "show", "list", "!up", "!down", "help", NULL };

	if (!argc)
		return cmd_show(V_GROUP, 0, NULL, 1, usage_group);
	switch (lookup(argv[0], cmds)) {
	case 0:
	case 1:
		return cmd_show(V_GROUP, argc - 1, argv + 1, 1, usage_group);
	case 2:
		if (argc != 2)
			usage_error(usage_group, "group up: needs one configuration FILE");
		return cmd_up(argv[1]);
	case 3:
		return cmd_down(argc - 1, argv + 1, usage_group);
	case 4:
		help(usage_group);
	}
	bad_word(usage_group, "group command", argv[0], cmds);
}

static int obj_subgroup(int argc, char **argv)
{
	static const char *const cmds[] = { "show", "list", "help", NULL };

	if (!argc)
		return cmd_show(V_SUBGROUP, 0, NULL, 2, usage_subgroup);
	switch (lookup(argv[0], cmds)) {
	case 0:
	case 1:
		return cmd_show(V_SUBGROUP, argc - 1, argv + 1, 2, usage_subgroup);
	case 2:
		help(usage_subgroup);
	}
	bad_word(usage_subgroup, "subgroup command", argv[0], cmds);
}

static int obj_stats(int argc, char **argv)
{
	static const char *const cmds[] = { "show", "help", NULL };

	/* "stats GROUP" is what it always was; "stats show GROUP" too */
	if (argc && (argv[0][0] < '0' || argv[0][0] > '9')) {
		switch (lookup(argv[0], cmds)) {
		case 0:
			argc--;
			argv++;
			break;
		case 1:
			help(usage_stats);
			break;
		default:
			bad_word(usage_stats, "stats command", argv[0], cmds);
		}
	}
	return cmd_show(V_STATS, argc, argv, 2, usage_stats);
}

int main(int argc, char **argv)
{
	static const char *const objs[] = {
		"group", "subgroup", "stats", "show", "!up", "!down", "version", "help", NULL
	};
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int i, n = 0, want_help = 0, dashdash = 0, obj;

	if (!args)
		return EXIT_FAIL;
	/* -j, -h and -V anywhere (up to "--"); everything else is positional */
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (dashdash || a[0] != '-' || !a[1] || !strcmp(a, "--timeout")) {
			args[n++] = argv[i];
		} else if (!strcmp(a, "--")) {
			dashdash = 1;
		} else if (!strcmp(a, "-j") || !strcmp(a, "-json") || !strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "-help") || !strcmp(a, "--help")) {
			want_help = 1;
		} else if (!strcmp(a, "-V") || !strcmp(a, "-Version") || !strcmp(a, "--version")) {
			printf("spindlectl %s\n", SPINDLE_VERSION);
			return 0;
		} else {
			usage_error(usage_main, "unknown option '%s'", a);
		}
	}
	if (!n) {
		if (want_help)
			help(usage_main);
		fputs(usage_main, stderr);
		return EXIT_USAGE;
	}
	obj = lookup(args[0], objs);
	if (want_help) {
		switch (obj) {
		case 0: case 4: case 5:
			help(usage_group);
			break;
		case 1:
			help(usage_subgroup);
			break;
		case 2:
			help(usage_stats);
			break;
		default:
			help(usage_main);
		}
	}
	switch (obj) {
	case 0:
		return obj_group(n - 1, args + 1);
	case 1:
		return obj_subgroup(n - 1, args + 1);
	case 2:
		return obj_stats(n - 1, args + 1);
	case 3:
		return cmd_show(V_ALL, n - 1, args + 1, 1, usage_main);
	case 4:
		if (n != 2)
			usage_error(usage_group, "up: needs one configuration FILE");
		return cmd_up(args[1]);
	case 5:
		return cmd_down(n - 1, args + 1, usage_group);
	case 6:
		if (n != 1)
			usage_error(usage_main, "version: unexpected '%s'", args[1]);
		return cmd_version();
	case 7:
		help(usage_main);
	}
	bad_word(usage_main, "object or command", args[0], objs);
}
