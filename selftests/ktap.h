/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small test harness that prints KTAP (Documentation/dev-tools/ktap.rst),
 * shaped like kselftest_harness.h: TEST(name) { ... } with EXPECT_* that
 * record a failure and ASSERT_* that also end the test, SKIP(reason).
 * One binary per file; main() runs every test in file order, or only those
 * named on the command line.  Exit status: 0 when nothing failed.
 *
 * Each test has a time limit: KT_TIMEOUT_S seconds, TEST_TIMEOUT(name, s)
 * for its own, or KTAP_TIMEOUT_S from the environment for all (0: none).
 * A test that runs past it is reported "not ok ... # TIMEOUT" and the
 * binary exits 1: the hang is named, not left to an outer timeout.
 */
#ifndef SPINDLE_KTAP_H
#define SPINDLE_KTAP_H

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef KT_TIMEOUT_S
#define KT_TIMEOUT_S 300
#endif

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
	unsigned int timeout_s;
};

#define KT_MAX_CASES 256
static struct kt_case kt_cases[KT_MAX_CASES];
static int kt_ncases;

static inline void kt_register(const char *name, kt_fn fn, unsigned int timeout_s)
{
	if (kt_ncases == KT_MAX_CASES) {
		fprintf(stderr, "ktap.h: too many tests\n");
		abort();
	}
	kt_cases[kt_ncases].name = name;
	kt_cases[kt_ncases].fn = fn;
	kt_cases[kt_ncases].timeout_s = timeout_s;
	kt_ncases++;
}

#define TEST_TIMEOUT(tname, secs)					\
	static void tname(struct kt *_t);				\
	__attribute__((constructor)) static void kt_reg_##tname(void)	\
	{ kt_register(#tname, tname, secs); }				\
	static void tname(struct kt *_t)

#define TEST(tname) TEST_TIMEOUT(tname, KT_TIMEOUT_S)

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

/* is the type of @x signed?  (pointers and bool: no) */
#define KT_SIGNED(x)	((__typeof__(x))-1 < (__typeof__(x))1)

/*
 * -1, 0 or 1 as a is below, equal to or above b, by value: each operand
 * keeps its own type's range (as kselftest_harness.h keeps the operands'
 * types), so a u64 at 2^63 or more is not taken for a negative number and
 * a negative int is below every unsigned value.
 */
static inline int kt_cmp(int as, long long ai, unsigned long long au,
			 int bs, long long bi, unsigned long long bu)
{
	if (as && ai < 0)
		return bs && bi < 0 ? (ai > bi) - (ai < bi) : -1;
	if (bs && bi < 0)
		return 1;
	return (au > bu) - (au < bu);
}

/* @v as its type has it: signed or not */
static inline const char *kt_num(char *buf, size_t len, int sgn,
				 long long i, unsigned long long u)
{
	if (sgn)
		snprintf(buf, len, "%lld", i);
	else
		snprintf(buf, len, "%llu", u);
	return buf;
}

#define KT_CMP(a, op, b, on_fail)					\
	do {								\
		__typeof__(a) _a = (a);					\
		__typeof__(b) _b = (b);					\
		int _as = KT_SIGNED(_a), _bs = KT_SIGNED(_b);		\
		long long _ai = (long long)_a, _bi = (long long)_b;	\
		unsigned long long _au = (unsigned long long)_a;	\
		unsigned long long _bu = (unsigned long long)_b;	\
		char _ab[24], _bb[24];					\
		KT_CHECK(kt_cmp(_as, _ai, _au, _bs, _bi, _bu) op 0,	\
			 on_fail, "expected %s %s %s (%s vs %s)",	\
			 #a, #op, #b,					\
			 kt_num(_ab, sizeof(_ab), _as, _ai, _au),	\
			 kt_num(_bb, sizeof(_bb), _bs, _bi, _bu));	\
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

/* what the alarm prints: formatted before the test starts */
static char kt_timeout_msg[256];

static void kt_on_alarm(int sig)
{
	ssize_t r;

	(void)sig;
	r = write(STDOUT_FILENO, kt_timeout_msg, strlen(kt_timeout_msg));
	(void)r;
	_exit(1);
}

/* Run case @c as test number @n, for at most @secs seconds (0: no limit). */
static inline void kt_run_one(const struct kt_case *c, int n, struct kt *t,
			      unsigned int secs)
{
	snprintf(kt_timeout_msg, sizeof(kt_timeout_msg),
		 "# %s: still running after %u s\nnot ok %d %s # TIMEOUT\n",
		 c->name, secs, n, c->name);
	fflush(stdout);
	signal(SIGALRM, kt_on_alarm);
	alarm(secs);
	c->fn(t);
	alarm(0);
}

int main(int argc, char **argv)
{
	int i, n = 0, pass = 0, fail = 0, skip = 0;
	const char *env = getenv("KTAP_TIMEOUT_S");

	for (i = 0; i < kt_ncases; i++)
		n += kt_selected(argc, argv, kt_cases[i].name);
	printf("KTAP version 1\n1..%d\n", n);
	fflush(stdout);
	n = 0;
	for (i = 0; i < kt_ncases; i++) {
		struct kt t = { .name = kt_cases[i].name };

		if (!kt_selected(argc, argv, t.name))
			continue;
		kt_run_one(&kt_cases[i], ++n, &t, env ?
			   (unsigned int)strtoul(env, NULL, 10) :
			   kt_cases[i].timeout_s);
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
