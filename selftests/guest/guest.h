/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the guest-side test programs share: a monotonic clock in seconds,
 * and a failure line on stderr that names the program.
 */
#ifndef SPINDLE_SELFTESTS_GUEST_H
#define SPINDLE_SELFTESTS_GUEST_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
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

#endif
