/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small test harness that prints KTAP (Documentation/dev-tools/ktap.rst),
 * shaped like kselftest_harness.h: TEST(name) { ... } with EXPECT_* that
 * record a failure and ASSERT_* that also end the test, SKIP(reason).
 * One binary per file; main() runs every test in file order, or only those
 * named on the command line.  Exit status: 0 when nothing failed.
 */
#ifndef SPINDLE_KTAP_H
#define SPINDLE_KTAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kt {
	const char *name;
	int failed;
	int skipped;
	char skip_reason[160];
};

typedef void (*kt_fn)(struct kt *t);

struct kt_case {
	const char *name;
	kt_fn fn;
};

#define KT_MAX_CASES 256
static struct kt_case kt_cases[KT_MAX_CASES];
static int kt_ncases;

static inline void kt_register(const char *name, kt_fn fn)
{
	if (kt_ncases == KT_MAX_CASES) {
		fprintf(stderr, "ktap.h: too many tests\n");
		abort();
	}
	kt_cases[kt_ncases].name = name;
	kt_cases[kt_ncases].fn = fn;
	kt_ncases++;
}

#define TEST(tname)							\
	static void tname(struct kt *_t);				\
	__attribute__((constructor)) static void kt_reg_##tname(void)	\
	{ kt_register(#tname, tname); }					\
	static void tname(struct kt *_t)

__attribute__((format(printf, 1, 2)))
static inline void kt_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

#define TH_LOG(...) kt_diag(__VA_ARGS__)

#define KT_CHECK(cond, on_fail, fmt, ...)				\
	do {								\
		if (!(cond)) {						\
			kt_diag("%s:%d: %s: " fmt, __FILE__, __LINE__,	\
				_t->name, ##__VA_ARGS__);		\
			_t->failed = 1;					\
			on_fail;					\
		}							\
	} while (0)

#define KT_CMP(a, op, b, on_fail)					\
	do {								\
		long long _a = (long long)(a), _b = (long long)(b);	\
		KT_CHECK(_a op _b, on_fail, "expected %s %s %s (%lld vs %lld)", \
			 #a, #op, #b, _a, _b);				\
	} while (0)

#define EXPECT_EQ(a, b)	KT_CMP(a, ==, b, (void)0)
#define EXPECT_NE(a, b)	KT_CMP(a, !=, b, (void)0)
#define EXPECT_LT(a, b)	KT_CMP(a, <, b, (void)0)
#define EXPECT_LE(a, b)	KT_CMP(a, <=, b, (void)0)
#define EXPECT_GT(a, b)	KT_CMP(a, >, b, (void)0)
#define EXPECT_GE(a, b)	KT_CMP(a, >=, b, (void)0)
#define EXPECT_TRUE(c)	KT_CHECK(c, (void)0, "expected %s", #c)
#define EXPECT_FALSE(c)	KT_CHECK(!(c), (void)0, "expected !(%s)", #c)
#define ASSERT_EQ(a, b)	KT_CMP(a, ==, b, return)
#define ASSERT_NE(a, b)	KT_CMP(a, !=, b, return)
#define ASSERT_LT(a, b)	KT_CMP(a, <, b, return)
#define ASSERT_LE(a, b)	KT_CMP(a, <=, b, return)
#define ASSERT_GT(a, b)	KT_CMP(a, >, b, return)
#define ASSERT_GE(a, b)	KT_CMP(a, >=, b, return)
#define ASSERT_TRUE(c)	KT_CHECK(c, return, "expected %s", #c)
#define ASSERT_FALSE(c)	KT_CHECK(!(c), return, "expected !(%s)", #c)

/* errno-returning calls: r < 0 with errno == e */
#define EXPECT_ERRNO(call, e)						\
	do {								\
		long _r = (long)(call);					\
		int _e = errno;						\
		KT_CHECK(_r < 0 && _e == (e), (void)0,			\
			 "%s: expected errno %s, got r=%ld errno=%d (%s)", \
			 #call, #e, _r, _r < 0 ? _e : 0,		\
			 _r < 0 ? strerror(_e) : "success");		\
	} while (0)

#define SKIP(...)							\
	do {								\
		_t->skipped = 1;					\
		snprintf(_t->skip_reason, sizeof(_t->skip_reason), __VA_ARGS__); \
		return;							\
	} while (0)

static inline int kt_selected(int argc, char **argv, const char *name)
{
	int i;

	if (argc <= 1)
		return 1;
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	int i, n = 0, pass = 0, fail = 0, skip = 0;

	for (i = 0; i < kt_ncases; i++)
		n += kt_selected(argc, argv, kt_cases[i].name);
	printf("KTAP version 1\n1..%d\n", n);
	fflush(stdout);
	n = 0;
	for (i = 0; i < kt_ncases; i++) {
		struct kt t = { .name = kt_cases[i].name };

		if (!kt_selected(argc, argv, t.name))
			continue;
		kt_cases[i].fn(&t);
		n++;
		if (t.skipped && !t.failed) {
			printf("ok %d %s # SKIP %s\n", n, t.name, t.skip_reason);
			skip++;
		} else if (t.failed) {
			printf("not ok %d %s\n", n, t.name);
			fail++;
		} else {
			printf("ok %d %s\n", n, t.name);
			pass++;
		}
		fflush(stdout);
	}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       pass, fail, skip);
	return fail ? 1 : 0;
}

#endif /* SPINDLE_KTAP_H */
