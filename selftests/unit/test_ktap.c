// SPDX-License-Identifier: GPL-2.0
/*
 * The harness itself (selftests/ktap.h): comparisons by value whatever the
 * operands' types, and a test that runs past its time limit named as such.
 */
#include <stdint.h>
#include <sys/wait.h>
#include "../ktap.h"

/* the checks are run on a test record of their own: they must fail it */
static void u64_above_2_63_is_above_one(struct kt *_t)
{
	EXPECT_LT((uint64_t)1 << 63, (uint64_t)1);
}

static void all_ones_is_not_minus_one(struct kt *_t)
{
	EXPECT_EQ(~0ULL, -1);
}

static void minus_one_is_below_zero_unsigned(struct kt *_t)
{
	EXPECT_GE(-1, 0U);
}

static int fails(void (*fn)(struct kt *))
{
	struct kt inner = { .name = "inner" };

	fn(&inner);
	return inner.failed;
}

TEST(comparisons_go_by_value)
{
	uint64_t big = (uint64_t)1 << 63;

	ASSERT_GT(big, (uint64_t)1);
	ASSERT_GT(big + 5, big);
	ASSERT_NE(~0ULL, -1);
	ASSERT_LT(-1, 0U);
	ASSERT_LT(-2LL, -1);
	ASSERT_EQ((uint32_t)7, 7);
	ASSERT_TRUE(fails(u64_above_2_63_is_above_one));
	ASSERT_TRUE(fails(all_ones_is_not_minus_one));
	ASSERT_TRUE(fails(minus_one_is_below_zero_unsigned));
}

static void sleeps(struct kt *_t)
{
	(void)_t;
	sleep(5);
}

TEST(a_test_past_its_limit_is_reported)
{
	const struct kt_case c = { .name = "sleeper", .fn = sleeps, .timeout_s = 1 };
	char out[512] = "";
	int fd[2], st;
	ssize_t len;
	pid_t pid;

	ASSERT_EQ(pipe(fd), 0);
	fflush(stdout);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct kt t = { .name = c.name };

		dup2(fd[1], STDOUT_FILENO);
		kt_run_one(&c, 3, &t, c.timeout_s);
		_exit(0);		/* not reached: the alarm ends it */
	}
	close(fd[1]);
	len = read(fd[0], out, sizeof(out) - 1);
	close(fd[0]);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT_GT(len, 0);
	out[len] = 0;
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	ASSERT_TRUE(strstr(out, "not ok 3 sleeper # TIMEOUT") != NULL);
}
