// SPDX-License-Identifier: GPL-2.0
/*
 * up_hup: a file opened on a group that is still coming up, and then fails
 * to, sees it go: poll says POLLHUP and a RECV fails with ENOTCONN.
 *
 *   up_hup GROUP SUBGROUP TIMEOUT_MS
 *
 * Waits (10 s at most) for the subgroup's device to appear, opens it and
 * polls it for up to TIMEOUT_MS.  Run it beside a `spindlectl up` that is
 * held after the devices exist (the module parameter fault_up_delay_ms)
 * and then fails (debugfs fail_function).  Exit 0 if the file saw the
 * group go; 1, with the reason on stderr, if not.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../../userspace/lib/libspindle.h"
#include "guest.h"

int main(int argc, char **argv)
{
	struct spindle_recv r = { .size = sizeof(r) };
	struct spindle_desc d;
	struct pollfd p = { .events = POLLIN | POLLOUT };
	char path[64];
	double t, deadline;
	int n;

	if (argc != 4)
		return fail("usage: up_hup GROUP SUBGROUP TIMEOUT_MS");
	deadline = now() + 10;
	while (spindle_find_device(strtoul(argv[1], NULL, 0), strtoul(argv[2], NULL, 0),
				   path, sizeof(path))) {
		if (now() > deadline)
			return fail("no device of group %s in 10 s", argv[1]);
		usleep(10000);
	}
	p.fd = open(path, O_RDWR);
	if (p.fd < 0)
		return fail("%s: %s", path, strerror(errno));
	t = now();
	n = poll(&p, 1, atoi(argv[3]));
	printf("%s: poll after %.1f s: %d, revents %#x\n", path, now() - t, n, p.revents);
	if (n != 1 || !(p.revents & POLLHUP))
		return fail("the file did not see the group go (POLLHUP)");
	r.descs = (uintptr_t)&d;
	r.max = 1;
	if (ioctl(p.fd, SPINDLE_IOC_RECV, &r) == 0 || errno != ENOTCONN)
		return fail("RECV on it: %s, not ENOTCONN", strerror(errno));
	close(p.fd);
	return 0;
}
