// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libspindle: the configuration file format (Documentation/operations.rst,
 * spindlectl(8)) and its errors.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "libspindle.h"
#include "lib.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#include "../../kmod/proto/cfg_err.h"	/* the kernel's words for each code */

#define DEFAULT_PORT	7471
#define DEFAULT_WINDOW	100
#define DEFAULT_MAX_MSG	1024

const char *spindle_cfg_err_name(uint32_t field)
{
	return sp_cfg_err_name(field);	/* the kernel's log line's words */
}

int libspindle_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int libspindle_parse_u32(const char *s, uint32_t *out)
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
	if (port && (libspindle_parse_u32(port, &p) || !p || p > 65535))
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
		if (*n == SPINDLE_MAX_MEMBERS || libspindle_parse_u32(tok, &ids[*n]))
			return -1;
		(*n)++;
	}
	return *n ? 0 : -1;
}

/**
 * spindle_cfg_parse_text - parse a group configuration (Documentation/operations.rst)
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
			return libspindle_fail(err, errlen, "line %u: too long", lineno);
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
			if (nt != 2 || libspindle_parse_u32(tok[1], &cfg->group_id) || !cfg->group_id)
				return libspindle_fail(err, errlen, "line %u: group: expected a non-zero id", lineno);
		} else if (!strcmp(tok[0], "baseline")) {
			if (nt != 2 || (strcmp(tok[1], "yes") && strcmp(tok[1], "no")))
				return libspindle_fail(err, errlen, "line %u: baseline: expected 'yes' or 'no'", lineno);
			cfg->flags = !strcmp(tok[1], "yes") ? cfg->flags | SPINDLE_GROUP_BASELINE :
				     cfg->flags & ~SPINDLE_GROUP_BASELINE;
		} else if (!strcmp(tok[0], "two_member_override")) {
			if (nt != 2 || (strcmp(tok[1], "yes") && strcmp(tok[1], "no")))
				return libspindle_fail(err, errlen, "line %u: two_member_override: expected 'yes' or 'no'", lineno);
			cfg->flags = !strcmp(tok[1], "yes") ?
				     cfg->flags | SPINDLE_GROUP_TWO_MEMBER_OVERRIDE :
				     cfg->flags & ~SPINDLE_GROUP_TWO_MEMBER_OVERRIDE;
		} else if (!strcmp(tok[0], "self")) {
			if (nt != 2 || (strcmp(tok[1], "auto") &&
					(libspindle_parse_u32(tok[1], &cfg->self_id) ||
					 cfg->self_id == SPINDLE_SELF_AUTO)))
				return libspindle_fail(err, errlen, "line %u: self: expected a member id or 'auto'", lineno);
			if (!strcmp(tok[1], "auto"))
				cfg->self_id = SPINDLE_SELF_AUTO;
		} else if (!strcmp(tok[0], "member")) {
			struct spindle_member_cfg *m;
			uint32_t port = DEFAULT_PORT;

			if (cfg->nmembers == SPINDLE_MAX_MEMBERS)
				return libspindle_fail(err, errlen, "line %u: more than %d members", lineno,
					    SPINDLE_MAX_MEMBERS);
			m = &cfg->members[cfg->nmembers];
			if (nt < 3 || nt > 4 || libspindle_parse_u32(tok[1], &m->id) ||
			    m->id == SPINDLE_SELF_AUTO)
				return libspindle_fail(err, errlen, "line %u: member: expected 'member ID ADDRESS[:PORT]'", lineno);
			if (nt == 4 && (libspindle_parse_u32(tok[3], &port) || !port || port > 65535))
				return libspindle_fail(err, errlen, "line %u: member %u: bad port '%s'", lineno, m->id, tok[3]);
			if (spindle_parse_addr(tok[2], (uint16_t)port, m))
				return libspindle_fail(err, errlen, "line %u: member %u: bad address '%s'", lineno, m->id, tok[2]);
			cfg->nmembers++;
		} else if (!strcmp(tok[0], "subgroup")) {
			struct spindle_cfg_subgroup *sg;
			int k;

			if (cfg->nsubgroups == SPINDLE_MAX_SUBGROUPS)
				return libspindle_fail(err, errlen, "line %u: more than %d subgroups", lineno,
					    SPINDLE_MAX_SUBGROUPS);
			s = cfg->nsubgroups;
			sg = &cfg->subgroups[s];
			if (nt < 2 || libspindle_parse_u32(tok[1], &sg->id) || nt % 2)
				return libspindle_fail(err, errlen, "line %u: subgroup: expected 'subgroup ID [KEY VALUE]...'", lineno);
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
					bad = libspindle_parse_u32(val, &sg->window);
				else if (!strcmp(key, "max_msg"))
					bad = libspindle_parse_u32(val, &sg->max_msg);
				else if (!strcmp(key, "blk_mib"))
					bad = libspindle_parse_u32(val, &sg->blk_mib);
				else if (!strcmp(key, "mode")) {
					if (!strcmp(val, "ordered"))
						sg->mode = SPINDLE_MODE_ORDERED;
					else if (!strcmp(val, "unordered"))
						sg->mode = SPINDLE_MODE_UNORDERED;
					else
						bad = 1;
				} else {
					return libspindle_fail(err, errlen, "line %u: subgroup %u: unknown key '%s'",
						    lineno, sg->id, key);
				}
				if (bad)
					return libspindle_fail(err, errlen, "line %u: subgroup %u: bad %s '%s'",
						    lineno, sg->id, key, val);
			}
			cfg->nsubgroups++;
		} else {
			return libspindle_fail(err, errlen, "line %u: unknown keyword '%s'", lineno, tok[0]);
		}
	}
	if (!cfg->group_id)
		return libspindle_fail(err, errlen, "no 'group ID' line");
	if (!cfg->nmembers)
		return libspindle_fail(err, errlen, "no 'member' lines");
	if (!cfg->nsubgroups)
		return libspindle_fail(err, errlen, "no 'subgroup' lines");
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
		return libspindle_fail(err, errlen, "%s: %s", path, strerror(errno)), -errno;
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
