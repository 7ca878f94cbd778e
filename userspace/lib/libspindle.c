// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* libspindle: see libspindle.h. */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libspindle.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#include "../../kmod/proto/cfg_err.h"	/* the kernel's words for each code */

/* spindle_view_of() copies a record out of a descriptor's place */
_Static_assert(sizeof(struct spindle_view_desc) == sizeof(struct spindle_desc),
	       "a view record is one descriptor long");

#define DEFAULT_PORT	7471
#define DEFAULT_WINDOW	100
#define DEFAULT_MAX_MSG	1024

const char *spindle_cfg_err_name(uint32_t field)
{
	return sp_cfg_err_name(field);	/* the kernel's log line's words */
}

__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/**
 * spindle_parse_addr - "a.b.c.d", "a.b.c.d:port", "[v6]:port" or "v6"
 * @s: text
 * @default_port: port when none is given
 * @m: out: family, addr and port
 */
int spindle_parse_addr(const char *s, uint16_t default_port,
		       struct spindle_member_cfg *m)
{
	char buf[128];
	char *host = buf, *port = NULL;
	uint32_t p = default_port;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	if (buf[0] == '[') {
		char *close = strchr(buf, ']');

		if (!close)
			return -EINVAL;
		*close = 0;
		host = buf + 1;
		if (close[1] == ':')
			port = close + 2;
		else if (close[1])
			return -EINVAL;
	} else if (strchr(buf, '.') && strchr(buf, ':')) {
		port = strchr(buf, ':');
		*port++ = 0;
	}
	if (port && (parse_u32(port, &p) || !p || p > 65535))
		return -EINVAL;
	memset(m->addr, 0, sizeof(m->addr));
	if (inet_pton(AF_INET, host, m->addr) == 1)
		m->family = AF_INET;
	else if (inet_pton(AF_INET6, host, m->addr) == 1)
		m->family = AF_INET6;
	else
		return -EINVAL;
	m->port = (uint16_t)p;
	return 0;
}

/* "0,1,2" or "all" into ids; all = every member of @cfg */
static int parse_list(const char *s, uint32_t *ids, uint32_t *n, int *all)
{
	char buf[512], *tok, *save;

	*n = 0;
	*all = 0;
	if (!strcmp(s, "all")) {
		*all = 1;
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == SPINDLE_MAX_MEMBERS || parse_u32(tok, &ids[*n]))
			return -1;
		(*n)++;
	}
	return *n ? 0 : -1;
}

/**
 * spindle_cfg_parse_text - parse a group configuration (format: README)
 * @text: the configuration
 * @cfg: out
 * @err: out: "line N: what is wrong"
 * @errlen: size of @err
 */
int spindle_cfg_parse_text(const char *text, struct spindle_cfg *cfg,
			   char *err, size_t errlen)
{
	int all_members[SPINDLE_MAX_SUBGROUPS] = { 0 };
	int all_senders[SPINDLE_MAX_SUBGROUPS] = { 0 };
	const char *p = text;
	unsigned int lineno = 0;
	uint32_t s, i;

	memset(cfg, 0, sizeof(*cfg));
	cfg->self_id = SPINDLE_SELF_AUTO;
	while (*p) {
		char line[1024], *tok[40], *save, *hash;
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		int nt = 0;

		lineno++;
		if (len >= sizeof(line))
			return fail(err, errlen, "line %u: too long", lineno);
		memcpy(line, p, len);
		line[len] = 0;
		p += len + (nl ? 1 : 0);
		hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		for (tok[nt] = strtok_r(line, " \t\r", &save); tok[nt] && nt < 39;
		     tok[++nt] = strtok_r(NULL, " \t\r", &save))
			;
		if (!nt)
			continue;
		if (!strcmp(tok[0], "group")) {
			if (nt != 2 || parse_u32(tok[1], &cfg->group_id) || !cfg->group_id)
				return fail(err, errlen, "line %u: group: expected a non-zero id", lineno);
		} else if (!strcmp(tok[0], "baseline")) {
			if (nt != 2 || (strcmp(tok[1], "yes") && strcmp(tok[1], "no")))
				return fail(err, errlen, "line %u: baseline: expected 'yes' or 'no'", lineno);
			cfg->flags = !strcmp(tok[1], "yes") ? cfg->flags | SPINDLE_GROUP_BASELINE :
				     cfg->flags & ~SPINDLE_GROUP_BASELINE;
		} else if (!strcmp(tok[0], "two_member_override")) {
			if (nt != 2 || (strcmp(tok[1], "yes") && strcmp(tok[1], "no")))
				return fail(err, errlen, "line %u: two_member_override: expected 'yes' or 'no'", lineno);
			cfg->flags = !strcmp(tok[1], "yes") ?
				     cfg->flags | SPINDLE_GROUP_TWO_MEMBER_OVERRIDE :
				     cfg->flags & ~SPINDLE_GROUP_TWO_MEMBER_OVERRIDE;
		} else if (!strcmp(tok[0], "self")) {
			if (nt != 2 || (strcmp(tok[1], "auto") &&
					(parse_u32(tok[1], &cfg->self_id) ||
					 cfg->self_id == SPINDLE_SELF_AUTO)))
				return fail(err, errlen, "line %u: self: expected a member id or 'auto'", lineno);
			if (!strcmp(tok[1], "auto"))
				cfg->self_id = SPINDLE_SELF_AUTO;
		} else if (!strcmp(tok[0], "member")) {
			struct spindle_member_cfg *m;
			uint32_t port = DEFAULT_PORT;

			if (cfg->nmembers == SPINDLE_MAX_MEMBERS)
				return fail(err, errlen, "line %u: more than %d members", lineno,
					    SPINDLE_MAX_MEMBERS);
			m = &cfg->members[cfg->nmembers];
			if (nt < 3 || nt > 4 || parse_u32(tok[1], &m->id) ||
			    m->id == SPINDLE_SELF_AUTO)
				return fail(err, errlen, "line %u: member: expected 'member ID ADDRESS[:PORT]'", lineno);
			if (nt == 4 && (parse_u32(tok[3], &port) || !port || port > 65535))
				return fail(err, errlen, "line %u: member %u: bad port '%s'", lineno, m->id, tok[3]);
			if (spindle_parse_addr(tok[2], (uint16_t)port, m))
				return fail(err, errlen, "line %u: member %u: bad address '%s'", lineno, m->id, tok[2]);
			cfg->nmembers++;
		} else if (!strcmp(tok[0], "subgroup")) {
			struct spindle_cfg_subgroup *sg;
			int k;

			if (cfg->nsubgroups == SPINDLE_MAX_SUBGROUPS)
				return fail(err, errlen, "line %u: more than %d subgroups", lineno,
					    SPINDLE_MAX_SUBGROUPS);
			s = cfg->nsubgroups;
			sg = &cfg->subgroups[s];
			if (nt < 2 || parse_u32(tok[1], &sg->id) || nt % 2)
				return fail(err, errlen, "line %u: subgroup: expected 'subgroup ID [KEY VALUE]...'", lineno);
			sg->window = DEFAULT_WINDOW;
			sg->max_msg = DEFAULT_MAX_MSG;
			sg->mode = SPINDLE_MODE_ORDERED;
			all_members[s] = all_senders[s] = 1;
			for (k = 2; k < nt; k += 2) {
				const char *key = tok[k], *val = tok[k + 1];
				int bad = 0;

				if (!strcmp(key, "members"))
					bad = parse_list(val, sg->members, &sg->nmembers, &all_members[s]);
				else if (!strcmp(key, "senders"))
					bad = parse_list(val, sg->senders, &sg->nsenders, &all_senders[s]);
				else if (!strcmp(key, "window"))
					bad = parse_u32(val, &sg->window);
				else if (!strcmp(key, "max_msg"))
					bad = parse_u32(val, &sg->max_msg);
				else if (!strcmp(key, "mode")) {
					if (!strcmp(val, "ordered"))
						sg->mode = SPINDLE_MODE_ORDERED;
					else if (!strcmp(val, "unordered"))
						sg->mode = SPINDLE_MODE_UNORDERED;
					else
						bad = 1;
				} else {
					return fail(err, errlen, "line %u: subgroup %u: unknown key '%s'",
						    lineno, sg->id, key);
				}
				if (bad)
					return fail(err, errlen, "line %u: subgroup %u: bad %s '%s'",
						    lineno, sg->id, key, val);
			}
			cfg->nsubgroups++;
		} else {
			return fail(err, errlen, "line %u: unknown keyword '%s'", lineno, tok[0]);
		}
	}
	if (!cfg->group_id)
		return fail(err, errlen, "no 'group ID' line");
	if (!cfg->nmembers)
		return fail(err, errlen, "no 'member' lines");
	if (!cfg->nsubgroups)
		return fail(err, errlen, "no 'subgroup' lines");
	for (s = 0; s < cfg->nsubgroups; s++) {
		struct spindle_cfg_subgroup *sg = &cfg->subgroups[s];

		if (all_members[s]) {
			sg->nmembers = cfg->nmembers;
			for (i = 0; i < cfg->nmembers; i++)
				sg->members[i] = cfg->members[i].id;
		}
		if (all_senders[s]) {
			sg->nsenders = sg->nmembers;
			memcpy(sg->senders, sg->members, sizeof(sg->senders));
		}
	}
	return 0;
}

int spindle_cfg_parse(const char *path, struct spindle_cfg *cfg,
		      char *err, size_t errlen)
{
	char *text;
	long n;
	FILE *f = fopen(path, "r");
	int ret;

	if (!f)
		return fail(err, errlen, "%s: %s", path, strerror(errno)), -errno;
	text = malloc(1 << 20);
	if (!text) {
		fclose(f);
		return -ENOMEM;
	}
	n = (long)fread(text, 1, (1 << 20) - 1, f);
	fclose(f);
	text[n] = 0;
	ret = spindle_cfg_parse_text(text, cfg, err, errlen);
	if (ret && err && errlen) {
		char tmp[512];

		snprintf(tmp, sizeof(tmp), "%s: %s", path, err);
		snprintf(err, errlen, "%s", tmp);
	}
	free(text);
	return ret;
}

int spindle_ctl_open(void)
{
	int fd = open(SPINDLE_CTL_DEVICE, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/**
 * spindle_up - bring a group up on this node
 * @ctl: from spindle_ctl_open()
 * @cfg: configuration
 * @self_id: out (may be NULL): the member id this node took
 * @err: out: the field the kernel rejected, in words
 * @errlen: size of @err
 */
int spindle_up(int ctl, const struct spindle_cfg *cfg, uint32_t *self_id,
	       char *err, size_t errlen)
{
	struct spindle_subgroup_cfg sgs[SPINDLE_MAX_SUBGROUPS];
	struct spindle_ctl_up up;
	uint32_t s;

	memset(&up, 0, sizeof(up));
	memset(sgs, 0, sizeof(sgs));
	up.size = sizeof(up);
	up.group_id = cfg->group_id;
	up.flags = cfg->flags;
	up.self_id = cfg->self_id;
	up.nmembers = cfg->nmembers;
	up.nsubgroups = cfg->nsubgroups;
	up.members = (uintptr_t)cfg->members;
	up.subgroups = (uintptr_t)sgs;
	for (s = 0; s < cfg->nsubgroups && s < SPINDLE_MAX_SUBGROUPS; s++) {
		sgs[s].id = cfg->subgroups[s].id;
		sgs[s].window = cfg->subgroups[s].window;
		sgs[s].max_msg = cfg->subgroups[s].max_msg;
		sgs[s].mode = cfg->subgroups[s].mode;
		sgs[s].nmembers = cfg->subgroups[s].nmembers;
		sgs[s].nsenders = cfg->subgroups[s].nsenders;
		sgs[s].members = (uintptr_t)cfg->subgroups[s].members;
		sgs[s].senders = (uintptr_t)cfg->subgroups[s].senders;
	}
	if (ioctl(ctl, SPINDLE_CTL_UP, &up) < 0) {
		int e = errno;

		if (up.err_field >= SPINDLE_CFG_E_SG_ID_DUP &&
		    up.err_field <= SPINDLE_CFG_E_SG_SENDER)
			fail(err, errlen, "group %u: %s: subgroup %u (id %u): %s", cfg->group_id,
			     strerror(e), up.err_index,
			     up.err_index < cfg->nsubgroups ? cfg->subgroups[up.err_index].id : 0,
			     spindle_cfg_err_name(up.err_field));
		else if (up.err_field >= SPINDLE_CFG_E_MEMBER_ID_DUP &&
			 up.err_field <= SPINDLE_CFG_E_MEMBER_ADDR_DUP)
			fail(err, errlen, "group %u: %s: member %u (id %u): %s", cfg->group_id,
			     strerror(e), up.err_index,
			     up.err_index < cfg->nmembers ? cfg->members[up.err_index].id : 0,
			     spindle_cfg_err_name(up.err_field));
		else if (up.err_field)
			fail(err, errlen, "group %u: %s: %s", cfg->group_id, strerror(e),
			     spindle_cfg_err_name(up.err_field));
		else
			fail(err, errlen, "group %u: %s", cfg->group_id, strerror(e));
		return -e;
	}
	if (self_id)
		*self_id = up.self_id_out;
	return 0;
}

int spindle_down(int ctl, uint32_t group_id, uint32_t timeout_ms)
{
	struct spindle_ctl_down d = {
		.size = sizeof(d), .group_id = group_id, .timeout_ms = timeout_ms,
	};

	return ioctl(ctl, SPINDLE_CTL_DOWN, &d) < 0 ? -errno : 0;
}

int spindle_group_info(int ctl, uint32_t group_id, uint32_t index,
		       struct spindle_group_status *st)
{
	memset(st, 0, sizeof(*st));
	st->info.size = sizeof(st->info);
	st->info.group_id = group_id;
	st->info.index = index;
	st->info.nmembers = SPINDLE_MAX_MEMBERS;
	st->info.nsubgroups = SPINDLE_MAX_SUBGROUPS;
	st->info.member_info_size = sizeof(st->members[0]);
	st->info.subgroup_info_size = sizeof(st->subgroups[0]);
	st->info.members = (uintptr_t)st->members;
	st->info.subgroups = (uintptr_t)st->subgroups;
	return ioctl(ctl, SPINDLE_CTL_GROUP_INFO, &st->info) < 0 ? -errno : 0;
}

const char *spindle_group_state_name(uint32_t state)
{
	switch (state) {
	case SPINDLE_GROUP_CONNECTING: return "connecting";
	case SPINDLE_GROUP_ACTIVE: return "active";
	case SPINDLE_GROUP_FAILED: return "failed";
	case SPINDLE_GROUP_DOWN: return "down";
	case SPINDLE_GROUP_VIEW_CHANGE: return "view-change";
	default: return "unknown";
	}
}

const char *spindle_peer_state_name(uint32_t state)
{
	switch (state) {
	case SPINDLE_PEER_SELF: return "self";
	case SPINDLE_PEER_IDLE: return "idle";
	case SPINDLE_PEER_CONNECTING: return "connecting";
	case SPINDLE_PEER_CONNECTED: return "connected";
	case SPINDLE_PEER_READY: return "ready";
	case SPINDLE_PEER_FAILED: return "failed";
	default: return "unknown";
	}
}

static int read_sysfs_u32(const char *dir, const char *name, uint32_t *v)
{
	char path[512], buf[32];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/class/spindle/%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return ok ? parse_u32(buf, v) : -1;
}

int spindle_find_device(uint32_t group_id, uint32_t subgroup_id,
			char *path, size_t len)
{
	DIR *d = opendir("/sys/class/spindle");
	struct dirent *e;
	int ret = -ENOENT;

	if (!d)
		return -ENOENT;
	while ((e = readdir(d))) {
		uint32_t g, s;

		if (strncmp(e->d_name, "spindle", 7) ||
		    read_sysfs_u32(e->d_name, "group_id", &g) ||
		    read_sysfs_u32(e->d_name, "subgroup_id", &s))
			continue;
		if (g == group_id && s == subgroup_id) {
			snprintf(path, len, "/dev/%s", e->d_name);
			ret = 0;
			break;
		}
	}
	closedir(d);
	return ret;
}

int spindle_open_path(struct spindle_handle *h, const char *path, int oflags)
{
	uint32_t r;
	int prot_own;

	memset(h, 0, sizeof(*h));
	h->fd = open(path, oflags | O_CLOEXEC);
	if (h->fd < 0)
		return -errno;
	h->info.size = sizeof(h->info);
	h->info.nsenders = SPINDLE_MAX_MEMBERS;
	h->info.rings = (uintptr_t)h->rings;
	if (ioctl(h->fd, SPINDLE_IOC_INFO, &h->info) < 0)
		goto fail;
	prot_own = (oflags & O_ACCMODE) == O_RDWR ? PROT_READ | PROT_WRITE : PROT_READ;
	for (r = 0; r < h->info.nsenders; r++) {
		int prot = h->rings[r].flags & SPINDLE_RING_WRITABLE ? prot_own : PROT_READ;

		h->ring[r] = mmap(NULL, h->rings[r].mmap_size, prot, MAP_SHARED,
				  h->fd, (off_t)h->rings[r].mmap_offset);
		if (h->ring[r] == MAP_FAILED) {
			h->ring[r] = NULL;
			goto fail;
		}
	}
	h->batch = h->info.window / 4 ? h->info.window / 4 : 1;
	h->lens = calloc(h->info.window, sizeof(*h->lens));
	h->max_descs = h->info.window * h->info.nsenders;
	h->descs = calloc(h->max_descs, sizeof(*h->descs));
	if (!h->lens || !h->descs) {
		errno = ENOMEM;
		goto fail;
	}
	return 0;
fail:
	r = errno;
	spindle_close(h);
	return -(int)r;
}

int spindle_open(struct spindle_handle *h, uint32_t group_id,
		 uint32_t subgroup_id, int oflags)
{
	char path[64];
	int ret = spindle_find_device(group_id, subgroup_id, path, sizeof(path));

	if (ret)
		return ret;
	return spindle_open_path(h, path, oflags);
}

void spindle_close(struct spindle_handle *h)
{
	uint32_t r;

	for (r = 0; r < SPINDLE_MAX_MEMBERS; r++)
		if (h->ring[r])
			munmap(h->ring[r], h->rings[r].mmap_size);
	if (h->prod)
		munmap(h->prod, h->info.producer_size);
	if (h->fd >= 0)
		close(h->fd);
	free(h->lens);
	free(h->descs);
	memset(h, 0, sizeof(*h));
	h->fd = -1;
}

/**
 * spindle_use_producer - send through the mapped producer page
 * @h: handle of a subgroup this node sends in, opened O_RDWR
 *
 * The file becomes the subgroup's only producer: no other file of it can
 * reserve slots while it is open.
 * Return: 0, -EBUSY (another file sends, or this one holds reservations),
 * or another -errno.
 */
int spindle_use_producer(struct spindle_handle *h)
{
	void *p;

	if (h->info.my_rank < 0 || !h->info.producer_size)
		return -EPERM;
	if (h->prod)
		return 0;
	spindle_flush(h);
	if (h->res_left)
		return -EBUSY;
	p = mmap(NULL, h->info.producer_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 h->fd, SPINDLE_MMAP_PRODUCER);
	if (p == MAP_FAILED)
		return -errno;
	h->prod = p;
	h->prod_lens = SPINDLE_PRODUCER_LENS(h->prod);
	h->prod_tail = __atomic_load_n(&h->prod->tail, __ATOMIC_ACQUIRE);
	h->prod_next = h->prod_tail;
	h->prod_rung = h->prod_tail;
	return 0;
}

/*
 * Producer page: a view change voided what the page held (its messages
 * past the trim were dropped: the view record says how many of ours were
 * delivered).  Go on from where the kernel says.
 */
static int producer_resync(struct spindle_handle *h)
{
	h->prod_tail = __atomic_load_n(&h->prod->tail, __ATOMIC_ACQUIRE);
	h->prod_next = h->prod_tail;
	h->prod_rung = h->prod_tail;
	h->stale++;
	return 0;
}

/* Producer page: ring the kernel's thread if it sleeps and there is news. */
static int producer_ring(struct spindle_handle *h)
{
	/* the tail before the flag: the kernel sets the flag, then reads it */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (h->prod_tail == h->prod_rung ||
	    !(__atomic_load_n(&h->prod->flags, __ATOMIC_RELAXED) &
	      SPINDLE_PRODUCER_NEED_WAKEUP))
		return 0;
	h->prod_rung = h->prod_tail;
	h->wake_calls++;
	if (ioctl(h->fd, SPINDLE_IOC_WAKE) < 0)
		return errno == ESTALE ? producer_resync(h) : -errno;
	return 0;
}

/* Producer page: wait until position prod_next may be filled. */
static int producer_wait(struct spindle_handle *h, int timeout_ms)
{
	struct pollfd pfd = { .fd = h->fd, .events = POLLOUT };
	int spins = 0;

	while (__atomic_load_n(&h->prod->limit, __ATOMIC_ACQUIRE) <= h->prod_next) {
		uint32_t flags = __atomic_load_n(&h->prod->flags, __ATOMIC_RELAXED);

		if (flags & SPINDLE_PRODUCER_BROKEN)
			return -EIO;
		if (flags & SPINDLE_PRODUCER_STALE) {
			h->wake_calls++;
			if (ioctl(h->fd, SPINDLE_IOC_WAKE) == 0 || errno != ESTALE)
				continue;
			producer_resync(h);
			continue;
		}
		if (++spins < 64)
			continue;
		if (spins == 64 && producer_ring(h))
			return -errno;
		if (!timeout_ms)
			return -EAGAIN;
		if (poll(&pfd, 1, timeout_ms) <= 0)
			return -ETIMEDOUT;
		if (pfd.revents & (POLLERR | POLLHUP))
			return pfd.revents & POLLHUP ? -ENOTCONN : -EIO;
	}
	return 0;
}

/* One SEND call: mark what is committed, reserve up to @want more. */
static int send_call(struct spindle_handle *h, uint32_t want, int timeout_ms)
{
	struct spindle_send s;
	int ret = 0;

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.count = h->ncommit;
	s.lens = (uintptr_t)h->lens;
	s.reserve = want;
	s.timeout_ms = timeout_ms < 0 ? 0x7fffffff : (uint32_t)timeout_ms;
	h->send_calls++;
	if (ioctl(h->fd, SPINDLE_IOC_SEND, &s) < 0)
		ret = -errno;
	if (ret == -ESTALE) {
		/* a view change voided our reservations and what we built in
		 * them: start over with fresh ones
		 */
		h->ncommit = 0;
		h->res_left = 0;
		h->stale++;
		s.count = 0;
		ret = ioctl(h->fd, SPINDLE_IOC_SEND, &s) < 0 ? -errno : 0;
	}
	if (ret && ret != -EAGAIN && ret != -ETIMEDOUT)
		return ret;
	h->ncommit = 0;		/* the marking part happened */
	if (s.reserved_count) {
		h->res_next = s.first;
		h->res_left = s.reserved_count;
	}
	return ret;
}

/**
 * spindle_get_slot - the next slot to build a message in
 * @h: handle of a subgroup this node sends in, opened O_RDWR
 * @timeout_ms: how long to wait for a free slot; -1 forever
 *
 * Return: pointer to max_msg bytes, or NULL with errno set.
 */
void *spindle_get_slot(struct spindle_handle *h, int timeout_ms)
{
	uint64_t pos;

	if (h->info.my_rank < 0 || !h->ring[h->info.my_rank]) {
		errno = EPERM;
		return NULL;
	}
	if (h->prod) {
		int ret = producer_wait(h, timeout_ms);

		if (ret) {
			errno = -ret;
			return NULL;
		}
		pos = h->prod_next++;
		return (char *)h->ring[h->info.my_rank] +
		       (pos % h->info.window) * h->info.slot_size;
	}
	if (!h->res_left) {
		int ret = send_call(h, h->info.window, timeout_ms);

		if (!h->res_left) {
			errno = ret ? -ret : EAGAIN;
			return NULL;
		}
	}
	pos = h->res_next++;
	h->res_left--;
	return (char *)h->ring[h->info.my_rank] +
	       (pos % h->info.window) * h->info.slot_size;
}

/**
 * spindle_commit - the last slot from spindle_get_slot() holds @len bytes
 * @h: handle
 * @len: message length, or SPINDLE_LEN_VOID to give the slot up
 *
 * Commits are marked ready h->batch at a time, and by spindle_flush().
 */
int spindle_commit(struct spindle_handle *h, uint32_t len)
{
	if (h->prod) {
		if (h->prod_tail == h->prod_next)
			return -EINVAL;		/* no slot handed out */
		h->prod_lens[h->prod_tail % h->info.window] = len;
		h->prod_tail++;
		/* the slot and its length before the tail */
		__atomic_store_n(&h->prod->tail, h->prod_tail, __ATOMIC_RELEASE);
		if (h->prod_tail - h->prod_rung >= h->batch)
			return producer_ring(h);
		return 0;
	}
	h->lens[h->ncommit++] = len;
	if (h->ncommit >= h->batch)
		return spindle_flush(h);
	return 0;
}

int spindle_flush(struct spindle_handle *h)
{
	if (h->prod)
		return producer_ring(h);
	if (!h->ncommit)
		return 0;
	return send_call(h, 0, 0);
}

/**
 * spindle_subscribe - become a consumer, taking no message
 * @h: handle opened for reading
 *
 * From this call on, every message the subgroup delivers waits for this
 * file.  (spindle_recv() subscribes too, but may return messages at once:
 * a caller that only wants to subscribe must not throw them away.)
 * Return: 0 or -errno.
 */
int spindle_subscribe(struct spindle_handle *h)
{
	return spindle_done(h);
}

/*
 * A view record voids the reservations made before it (uapi/linux/spindle.h):
 * the slots this handle reserved ahead and has not handed out yet are no
 * longer ours.  Handing one out would put a message the caller builds
 * after reading the record into the old view, to be dropped with it.
 * What was committed in them before the record is the old view's, and
 * goes as SEND says (ESTALE: dropped).
 */
static void drop_stale_reservations(struct spindle_handle *h, uint32_t n)
{
	uint32_t k;

	for (k = 0; k < n; k++)
		if (h->descs[k].flags & SPINDLE_DESC_VIEW)
			h->res_left = 0;
}

/**
 * spindle_recv - release the last batch and take the next
 * @h: handle opened for reading
 * @timeout_ms: wait for the first message; 0 not at all; -1 forever
 *
 * The first call makes this file a consumer.
 * Return: messages in h->descs, or -errno (-EAGAIN/-ETIMEDOUT: none came).
 */
int spindle_recv(struct spindle_handle *h, int timeout_ms)
{
	struct spindle_recv r;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.max = h->max_descs;
	r.timeout_ms = timeout_ms < 0 ? 0x7fffffff : (uint32_t)timeout_ms;
	r.descs = (uintptr_t)h->descs;
	h->recv_calls++;
	if (ioctl(h->fd, SPINDLE_IOC_RECV, &r) < 0)
		return -errno;
	if (h->res_left)
		drop_stale_reservations(h, r.count);
	return (int)r.count;
}

/**
 * spindle_done - release the last batch without taking more
 * @h: handle
 *
 * Return: 0 or -errno.
 */
int spindle_done(struct spindle_handle *h)
{
	struct spindle_recv r;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	h->recv_calls++;
	return ioctl(h->fd, SPINDLE_IOC_RECV, &r) < 0 ? -errno : 0;
}

/* CRC-32C (Castagnoli), as in iSCSI and ext4: reflected 0x82F63B78. */
uint32_t spindle_crc32c(uint32_t crc, const void *buf, size_t len)
{
	static uint32_t table[256];
	const unsigned char *p = buf;
	uint32_t i, j;

	if (!table[1]) {
		for (i = 0; i < 256; i++) {
			uint32_t c = i;

			for (j = 0; j < 8; j++)
				c = c & 1 ? (c >> 1) ^ 0x82F63B78U : c >> 1;
			table[i] = c;
		}
	}
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
