// SPDX-License-Identifier: GPL-2.0
/* Shared by spindle-bw and spindle-lat: group set-up from the environment
 * that scripts/vmcluster provides, or from a configuration file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

void bench_defaults(struct bench_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->group_id = 1;
	o->subgroup_id = 0;
	o->port = 7471;
	o->senders = SENDERS_ALL;
	o->messages = 1000;
	o->size = 1024;
	o->window = 100;
	o->mode = SPINDLE_MODE_ORDERED;
	o->timeout_s = 300;
	o->delayed = SENDERS_ONE;
}

int bench_is_delayed(const struct bench_opts *o, int32_t rank, uint32_t nsenders)
{
	if ((!o->delay_us && !o->sleep_us) || rank < 0)
		return 0;
	switch (o->delayed) {
	case SENDERS_ALL:
		return 1;
	case SENDERS_HALF:
		return (uint32_t)rank >= nsenders / 2;
	default:
		return (uint32_t)rank == nsenders - 1;
	}
}

void bench_pause(const struct bench_opts *o)
{
	if (o->sleep_us) {
		usleep(o->sleep_us);
	} else if (o->delay_us) {
		double until = bench_now() + o->delay_us / 1e6;

		while (bench_now() < until)
			;
	}
}

const char *bench_common_usage(void)
{
	return "  --config FILE        group configuration (default: form one from\n"
	       "                       SPINDLE_NODE / SPINDLE_ADDRS, as in scripts/vmcluster)\n"
	       "  --group ID           group id (default 1)\n"
	       "  --subgroup ID        subgroup id (default 0)\n"
	       "  --port N             rdma_cm port of the formed group (default 7471)\n"
	       "  --senders all|half|one\n"
	       "  --messages N         messages per sender\n"
	       "  --size BYTES         message size (and max_msg of a formed group)\n"
	       "  --window N           slots per sender (formed group)\n"
	       "  --mode ordered|unordered   (formed group)\n"
	       "  --batch N            commits marked per system call\n"
	       "  --delay-us US        busy-wait US microseconds after each send...\n"
	       "  --sleep-us US        ...or sleep, at the --delayed senders\n"
	       "  --delayed one|half|all   which: the last sender, the upper half, all\n"
	       "  --timeout S          give up after S seconds (default 300)\n"
	       "  --keep-up            leave the group up at the end\n"
	       "  --baseline           form the group in baseline mode (pre-Spindle)\n";
}

static int num(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s)
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -1 : 0;
}

int bench_option(struct bench_opts *o, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	uint64_t x;

	if (!strcmp(a, "--keep-up")) {
		o->keep_up = 1;
		return 1;
	}
	if (!strcmp(a, "--baseline")) {
		o->baseline = 1;
		return 1;
	}
	if (strncmp(a, "--", 2) || !v)
		return 0;
	if (!strcmp(a, "--config")) {
		o->config = v;
	} else if (!strcmp(a, "--log")) {
		o->log = v;
	} else if (!strcmp(a, "--senders")) {
		if (!strcmp(v, "all"))
			o->senders = SENDERS_ALL;
		else if (!strcmp(v, "half"))
			o->senders = SENDERS_HALF;
		else if (!strcmp(v, "one"))
			o->senders = SENDERS_ONE;
		else
			return -1;
	} else if (!strcmp(a, "--delayed")) {
		if (!strcmp(v, "all"))
			o->delayed = SENDERS_ALL;
		else if (!strcmp(v, "half"))
			o->delayed = SENDERS_HALF;
		else if (!strcmp(v, "one"))
			o->delayed = SENDERS_ONE;
		else
			return -1;
	} else if (!strcmp(a, "--mode")) {
		if (!strcmp(v, "ordered"))
			o->mode = SPINDLE_MODE_ORDERED;
		else if (!strcmp(v, "unordered"))
			o->mode = SPINDLE_MODE_UNORDERED;
		else
			return -1;
	} else {
		if (num(v, &x))
			return -1;
		if (!strcmp(a, "--group") && x && x <= UINT32_MAX)
			o->group_id = (uint32_t)x;
		else if (!strcmp(a, "--subgroup") && x <= UINT32_MAX)
			o->subgroup_id = (uint32_t)x;
		else if (!strcmp(a, "--port") && x && x < 65536)
			o->port = (uint16_t)x;
		else if (!strcmp(a, "--messages"))
			o->messages = x;
		else if (!strcmp(a, "--size") && x && x <= SPINDLE_MAX_MSG)
			o->size = (uint32_t)x;
		else if (!strcmp(a, "--window") && x && x <= SPINDLE_MAX_WINDOW)
			o->window = (uint32_t)x;
		else if (!strcmp(a, "--timeout") && x)
			o->timeout_s = (uint32_t)x;
		else if (!strcmp(a, "--batch") && x <= SPINDLE_MAX_WINDOW)
			o->batch = (uint32_t)x;
		else if (!strcmp(a, "--delay-us") && x <= 10000000)
			o->delay_us = (uint32_t)x;
		else if (!strcmp(a, "--sleep-us") && x <= 10000000)
			o->sleep_us = (uint32_t)x;
		else
			return -1;
	}
	(*i)++;
	return 1;
}

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* members 0..N-1 at SPINDLE_ADDRS, one subgroup of all of them */
static void cfg_from_env(struct bench *b, const char *tool)
{
	const char *node = getenv("SPINDLE_NODE"), *addrs = getenv("SPINDLE_ADDRS");
	struct spindle_cfg *c = &b->cfg;
	struct spindle_cfg_subgroup *sg = &c->subgroups[0];
	char *copy, *tok, *save;
	uint32_t n = 0, i, nsend;

	if (!node || !addrs) {
		fprintf(stderr, "%s: no --config and no SPINDLE_NODE/SPINDLE_ADDRS\n", tool);
		exit(2);
	}
	memset(c, 0, sizeof(*c));
	c->group_id = b->o.group_id;
	c->flags = b->o.baseline ? SPINDLE_GROUP_BASELINE : 0;
	c->self_id = (uint32_t)atoi(node);
	copy = strdup(addrs);
	for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (n == SPINDLE_MAX_MEMBERS ||
		    spindle_parse_addr(tok, b->o.port, &c->members[n])) {
			fprintf(stderr, "%s: bad SPINDLE_ADDRS entry '%s'\n", tool, tok);
			exit(2);
		}
		c->members[n].id = n;
		n++;
	}
	free(copy);
	c->nmembers = n;
	c->nsubgroups = 1;
	sg->id = b->o.subgroup_id;
	sg->window = b->o.window;
	sg->max_msg = b->o.size;
	sg->mode = b->o.mode;
	sg->nmembers = n;
	nsend = b->o.senders == SENDERS_ALL ? n :
		b->o.senders == SENDERS_HALF ? (n + 1) / 2 : 1;
	sg->nsenders = nsend;
	for (i = 0; i < n; i++)
		sg->members[i] = i;
	for (i = 0; i < nsend; i++)
		sg->senders[i] = i;
}

void bench_setup(struct bench *b, const char *tool)
{
	char err[512];
	int ret;

	if (b->o.config) {
		if (spindle_cfg_parse(b->o.config, &b->cfg, err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", tool, err);
			exit(2);
		}
		b->o.group_id = b->cfg.group_id;
	} else {
		cfg_from_env(b, tool);
	}
	b->ctl = spindle_ctl_open();
	if (b->ctl < 0) {
		fprintf(stderr, "%s: %s: %s\n", tool, SPINDLE_CTL_DEVICE, strerror(-b->ctl));
		exit(1);
	}
	ret = spindle_up(b->ctl, &b->cfg, &b->self_id, err, sizeof(err));
	if (ret == -EEXIST) {
		b->brought_up = 0;	/* brought up before us (spindlectl up) */
	} else if (ret) {
		fprintf(stderr, "%s: %s\n", tool, err);
		exit(1);
	} else {
		b->brought_up = 1;
	}
	ret = spindle_open(&b->h, b->o.group_id, b->o.subgroup_id, O_RDWR);
	if (ret) {
		fprintf(stderr, "%s: group %u subgroup %u: %s\n", tool, b->o.group_id,
			b->o.subgroup_id, strerror(-ret));
		exit(1);
	}
	b->self_id = b->h.info.self_id;
	if (b->o.batch)
		b->h.batch = b->o.batch;
}

void bench_teardown(struct bench *b)
{
	spindle_close(&b->h);
	if (b->brought_up && !b->o.keep_up)
		spindle_down(b->ctl, b->o.group_id, 5000);
	close(b->ctl);
}

void bench_fill(void *p, uint32_t len, uint32_t rank, uint64_t k)
{
	uint8_t *b = p;
	uint32_t i;

	for (i = 0; i < len; i++)
		b[i] = bench_byte(rank, k, i);
}

int bench_check(const void *p, uint32_t len, uint32_t rank, uint64_t k)
{
	const uint8_t *b = p;
	uint32_t i;

	for (i = 0; i < len; i++)
		if (b[i] != bench_byte(rank, k, i))
			return -1;
	return 0;
}

void bench_counters(struct bench *b, struct spindle_subgroup_info *out,
		    uint64_t *busy_ns)
{
	struct spindle_group_status st;
	uint32_t i;

	memset(out, 0, sizeof(*out));
	*busy_ns = 0;
	if (spindle_group_info(b->ctl, b->o.group_id, 0, &st))
		return;
	*busy_ns = st.info.busy_ns;
	for (i = 0; i < st.info.nsubgroups; i++)
		if (st.subgroups[i].id == b->o.subgroup_id)
			*out = st.subgroups[i];
}
