/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the guest-side test programs share: a monotonic clock in seconds,
 * a failure line on stderr that names the program, this guest's address,
 * and writing one of the module's parameters (its testing-only holds).
 */
#ifndef SPINDLE_SELFTESTS_GUEST_H
#define SPINDLE_SELFTESTS_GUEST_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* "PROGRAM: what went wrong" on stderr; returns 1, the exit status */
static inline int __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	return 1;
}

/* This guest's address: word SPINDLE_NODE of SPINDLE_ADDRS, or NULL. */
static inline const char *guest_addr(void)
{
	static char buf[64];
	const char *addrs = getenv("SPINDLE_ADDRS"), *node = getenv("SPINDLE_NODE");
	int k = node ? atoi(node) : 0;
	const char *p = addrs;

	if (!addrs)
		return NULL;
	while (k-- > 0 && p && (p = strchr(p, ' ')))
		p++;
	if (!p)
		return NULL;
	snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(p, " "), p);
	return buf;
}

/*
 * set_param - write @value to /sys/module/spindle/parameters/@name
 * Return: 0, or -1 with errno set (no such parameter: ENOENT).
 */
static inline int set_param(const char *name, const char *value)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "/sys/module/spindle/parameters/%s", name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ret = fputs(value, f) < 0 ? -1 : 0;
	if (fclose(f) != 0)
		ret = -1;
	return ret;
}

#endif
