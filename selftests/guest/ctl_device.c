// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/spindle_ctl: the size-versioned ioctl rules and the permission rules.
 * Needs spindle.ko loaded and root.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/spindle.h>

#include "../ktap.h"

static int ctl_open(void)
{
	return open(SPINDLE_CTL_DEVICE, O_RDWR | O_CLOEXEC);
}

TEST(version_reports_abi_and_device)
{
	struct spindle_ctl_version v = { .size = sizeof(v) };
	int fd = ctl_open();

	ASSERT_GE(fd, 0);
	ASSERT_EQ(ioctl(fd, SPINDLE_CTL_VERSION, &v), 0);
	EXPECT_EQ(v.abi_version, SPINDLE_ABI_VERSION);
	EXPECT_EQ(v.size, sizeof(v));
	EXPECT_GE(v.rdma_devices, 1);
	close(fd);
}

TEST(size_too_small_is_einval)
{
	struct spindle_ctl_version v = { .size = 3 };
	int fd = ctl_open();

	ASSERT_GE(fd, 0);
	EXPECT_ERRNO(ioctl(fd, SPINDLE_CTL_VERSION, &v), EINVAL);
	v.size = 0;
	EXPECT_ERRNO(ioctl(fd, SPINDLE_CTL_VERSION, &v), EINVAL);
	close(fd);
}

TEST(larger_struct_needs_zero_tail)
{
	struct {
		struct spindle_ctl_version v;
		uint64_t future;
	} big = { .v.size = sizeof(big) };
	int fd = ctl_open();

	ASSERT_GE(fd, 0);
	EXPECT_EQ(ioctl(fd, SPINDLE_CTL_VERSION, &big), 0);
	EXPECT_EQ(big.v.abi_version, SPINDLE_ABI_VERSION);
	big.v.abi_version = 0;
	big.v.rdma_devices = 0;
	big.v.size = sizeof(big);
	big.future = 1;
	EXPECT_ERRNO(ioctl(fd, SPINDLE_CTL_VERSION, &big), E2BIG);
	close(fd);
}

TEST(reserved_must_be_zero)
{
	struct spindle_ctl_version v = { .size = sizeof(v), .reserved = 1 };
	int fd = ctl_open();

	ASSERT_GE(fd, 0);
	EXPECT_ERRNO(ioctl(fd, SPINDLE_CTL_VERSION, &v), EINVAL);
	close(fd);
}

TEST(bad_pointers_are_efault)
{
	int fd = ctl_open();

	ASSERT_GE(fd, 0);
	EXPECT_ERRNO(ioctl(fd, SPINDLE_CTL_VERSION, NULL), EFAULT);
	EXPECT_ERRNO(ioctl(fd, SPINDLE_CTL_VERSION, (void *)-4096L), EFAULT);
	EXPECT_ERRNO(ioctl(fd, SPINDLE_CTL_VERSION, (void *)0xffffffff81000000UL), EFAULT);
	close(fd);
}

TEST(unknown_ioctl_is_enotty)
{
	int fd = ctl_open();
	unsigned long junk[8] = { 0 };

	ASSERT_GE(fd, 0);
	EXPECT_ERRNO(ioctl(fd, _IOWR(SPINDLE_IOC_MAGIC, 0x7f, junk), junk), ENOTTY);
	EXPECT_ERRNO(ioctl(fd, 0, junk), ENOTTY);
	close(fd);
}

/* Run @fn in a child that has dropped to uid/gid nobody; returns its status. */
static int as_nobody(int (*fn)(int), int fd)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(100);
		_exit(fn(fd));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int nobody_open(int unused)
{
	(void)unused;
	return open(SPINDLE_CTL_DEVICE, O_RDWR) < 0 && errno == EACCES ? 0 : 1;
}

static int nobody_ioctl(int fd)
{
	struct spindle_ctl_version v = { .size = sizeof(v) };

	return ioctl(fd, SPINDLE_CTL_VERSION, &v) < 0 && errno == EPERM ? 0 : 1;
}

TEST(unprivileged_open_is_eacces)
{
	EXPECT_EQ(as_nobody(nobody_open, -1), 0);
}

TEST(unprivileged_ioctl_on_inherited_fd_is_eperm)
{
	int fd = ctl_open();

	ASSERT_GE(fd, 0);
	EXPECT_EQ(as_nobody(nobody_ioctl, fd), 0);
	close(fd);
}
