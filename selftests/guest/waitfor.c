// SPDX-License-Identifier: GPL-2.0
/*
 * waitfor: the tests' and the test bed's waits, in one process each.
 *
 *   waitfor [-t SECONDS] PATH...          until every PATH exists
 *   waitfor [-t SECONDS] -n COUNT DIR     until DIR holds COUNT entries
 *                                         (names not starting with a dot)
 *   waitfor [-t SECONDS] -f TEXT FILE     until FILE's first 4 KiB hold TEXT
 *   waitfor [-t SECONDS] -k TEXT          until a kernel log line holds
 *                                         TEXT (the lines since the last
 *                                         `dmesg -C` count, as for
 *                                         `dmesg | grep`)
 *
 * SECONDS (default 120; 0: no limit) bounds the wait.  Exit 0 once it
 * holds, 1 when SECONDS passed first, 2 on a usage error.
 *
 * Why not a shell loop: under TCG a process start costs a guest 50 ms and
 * more of its vCPU, so a `sleep 0.2` loop took a fifth of it while the
 * guest "waited", and two guests on a host core slowed the one the others
 * waited for.  Files the host or another guest makes on a 9p folder send
 * no inotify event here, so the paths are polled: every 50 ms at first,
 * then less and less often, until every 250 ms (a poll is a stat, a
 * readdir or a read, 9p round trips that cost a TCG guest 4 ms of its
 * vCPU: polled every 50 ms, a guest that only waited took 8% of a host
 * core); the kernel log is read from /dev/kmsg, which blocks.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define POLL_MIN_MS	50
#define POLL_MAX_MS	250

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * sleep *MS (no longer than the LEFT s of the limit), and make the next
 * nap half as long again, up to the most
 */
static void nap(long *ms, double left)
{
	long n = left * 1000 < *ms ? (long)(left * 1000) + 1 : *ms;
	struct timespec ts = { 0, n * 1000000L };

	nanosleep(&ts, NULL);
	*ms = *ms * 3 / 2 > POLL_MAX_MS ? POLL_MAX_MS : *ms * 3 / 2;
}

static int usage(void)
{
	fprintf(stderr, "usage: waitfor [-t SECONDS] PATH...\n"
		"       waitfor [-t SECONDS] -n COUNT DIR\n"
		"       waitfor [-t SECONDS] -f TEXT FILE\n"
		"       waitfor [-t SECONDS] -k TEXT\n");
	return 2;
}

static int all_exist(char **paths, int n)
{
	struct stat st;
	int i;

	for (i = 0; i < n; i++)
		if (stat(paths[i], &st))
			return 0;
	return 1;
}

/* entries of DIR not starting with a dot (a shell glob's "*"); -1: none */
static long count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static int file_holds(const char *path, const char *text)
{
	char buf[4096];
	ssize_t len;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	return strstr(buf, text) != NULL;
}

/*
 * kmsg_holds: read /dev/kmsg from the first record after the last clear
 * (SEEK_DATA, as dmesg does) until one holds TEXT (1), or END passed (0).
 * A record's text follows the first ';' of its "prefix;" header; a reader
 * that fell behind gets EPIPE and goes on.
 */
static int kmsg_holds(const char *text, double end)
{
	char rec[8192];
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd < 0) {
		perror("waitfor: /dev/kmsg");
		return 0;
	}
	lseek(fd, 0, SEEK_DATA);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double left = end - now_s();
		ssize_t len;
		char *msg;

		if (left <= 0)
			break;
		len = read(fd, rec, sizeof(rec) - 1);
		if (len < 0 && errno == EAGAIN) {
			poll(&p, 1, left > 1 ? 1000 : (int)(left * 1000) + 1);
			continue;
		}
		if (len < 0 && errno == EPIPE)
			continue;
		if (len <= 0)
			break;
		rec[len] = '\0';
		msg = strchr(rec, ';');
		if (msg && strstr(msg + 1, text)) {
			close(fd);
			return 1;
		}
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	double limit = 120, end;
	long count = -1, ms;
	const char *text = NULL, *kmsg = NULL;
	char *stop;
	int c, ok;

	while ((c = getopt(argc, argv, "t:n:f:k:")) != -1) {
		switch (c) {
		case 't':
			limit = strtod(optarg, &stop);
			if (*stop || !(limit >= 0 && limit <= 86400))
				return usage();
			break;
		case 'n':
			count = strtol(optarg, &stop, 10);
			if (*stop || count < 0 || count > INT_MAX)
				return usage();
			break;
		case 'f':
			text = optarg;
			break;
		case 'k':
			kmsg = optarg;
			break;
		default:
			return usage();
		}
	}
	argc -= optind;
	argv += optind;
	/* one mode: -k alone; -n or -f with one path; else the paths */
	if (kmsg)
		ok = !argc && count < 0 && !text;
	else if (count >= 0 || text)
		ok = argc == 1 && !(count >= 0 && text);
	else
		ok = argc >= 1;
	if (!ok)
		return usage();

	end = limit ? now_s() + limit : HUGE_VAL;
	ms = POLL_MIN_MS;
	if (kmsg)
		return kmsg_holds(kmsg, end) ? 0 : 1;
	for (;;) {
		if (count >= 0 ? count_entries(argv[0]) >= count :
		    text ? file_holds(argv[0], text) : all_exist(argv, argc))
			return 0;
		if (now_s() >= end)
			return 1;
		nap(&ms, end - now_s());
	}
}
