// SPDX-License-Identifier: GPL-2.0
/*
 * stale_send: a reservation that a view change voided while SEND made it
 * is stale once, and the file sends again right after.
 *
 *   stale_send CONFIG READY_FILE DELAY_MS
 *
 * Run on one member of CONFIG's group (up on this node, subgroup 0 sent
 * by all).  For its first SEND it sets the module parameter
 * fault_send_delay_ms to DELAY_MS: a SEND that reserved slots then waits
 * that long before it records them.  Once READY_FILE is made, another
 * member leaves, so that the view changes during that wait.  The SEND
 * returns one reservation of the old view; marking it must fail with
 * ESTALE; a new reservation must then mark without error, and its message
 * must be delivered (in the new view).
 * Exit 0 if so; 1, with the reason on stderr, if not.  (When SEND recorded
 * the view of its reservations after that wait, the stale one looked
 * current: every later SEND that marked said ESTALE, for ever.)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../../userspace/lib/libspindle.h"
#include "guest.h"

#define MSG_LEN		64
#define MSG		"stale_send: sent after the change"
#define KNOB		"fault_send_delay_ms"

static int set_delay(const char *ms)
{
	return set_param(KNOB, ms) ? fail(KNOB ": %s", strerror(errno)) : 0;
}

/* SEND: mark @count (with MSG_LEN each), then reserve @reserve. */
static int send_call(struct spindle_handle *h, uint32_t count, uint32_t reserve,
		     uint64_t *first)
{
	uint32_t lens[1] = { MSG_LEN };
	struct spindle_send a = {
		.size = sizeof(a), .count = count, .reserve = reserve,
		.lens = (uintptr_t)lens, .timeout_ms = 30000,
	};

	if (ioctl(h->fd, SPINDLE_IOC_SEND, &a))
		return -errno;
	if (reserve && a.reserved_count != reserve)
		return -ENOSPC;
	if (first)
		*first = a.first;
	return 0;
}

static int view_of(int ctl, uint32_t group, uint64_t *view)
{
	static struct spindle_group_status st;
	int ret = spindle_group_info(ctl, group, 0, &st);

	*view = st.info.view_id;
	return ret;
}

/* 0 once MSG was delivered after a view record (30 s at most); else 1 */
static int delivered(struct spindle_handle *h)
{
	double deadline = now() + 30;
	int records = 0;

	while (now() < deadline) {
		int n = spindle_recv(h, 1000), k;

		if (n == -EAGAIN || n == -ETIMEDOUT || n == -EINTR)
			continue;
		if (n < 0)
			return fail("RECV: %s", strerror(-n));
		for (k = 0; k < n; k++) {
			const struct spindle_desc *d = &h->descs[k];

			if (d->flags & SPINDLE_DESC_VIEW) {
				records++;
				continue;
			}
			/* any member's bytes: compared within the length only */
			if (d->len == MSG_LEN &&
			    !memcmp(spindle_msg_data(h, d), MSG, sizeof(MSG)))
				return records ? 0 :
				       fail("the message came before the view record");
		}
	}
	return fail("the message sent after the change was not delivered in 30 s");
}

int main(int argc, char **argv)
{
	struct spindle_handle h;
	struct spindle_cfg cfg;
	uint64_t first, again, v0, v1;
	char err[256], *slot;
	int ctl, ret;
	double t;

	if (argc != 4)
		return fail("usage: stale_send CONFIG READY_FILE DELAY_MS");
	if (spindle_cfg_parse(argv[1], &cfg, err, sizeof(err)))
		return fail("%s", err);
	ctl = spindle_ctl_open();
	if (ctl < 0)
		return fail("control device: %s", strerror(errno));
	ret = spindle_open(&h, cfg.group_id, cfg.subgroups[0].id, O_RDWR);
	if (ret)
		return fail("open: %s", strerror(-ret));
	/* a consumer from the start, so that the message is seen */
	ret = spindle_subscribe(&h);
	if (ret)
		return fail("subscribe: %s", strerror(-ret));
	if (view_of(ctl, cfg.group_id, &v0))
		return fail("group info: %s", strerror(errno));
	if (set_delay(argv[3]))
		return 1;
	/* the member that leaves waits a second after this */
	if (close(open(argv[2], O_CREAT | O_WRONLY, 0644)))
		return fail("%s: %s", argv[2], strerror(errno));
	t = now();
	ret = send_call(&h, 0, 1, &first);
	if (set_delay("0"))
		return 1;
	if (ret)
		return fail("reserving: %s", strerror(-ret));
	if (view_of(ctl, cfg.group_id, &v1))
		return fail("group info: %s", strerror(errno));
	printf("reserved %llu in view %llu; the SEND took %.1f s; now view %llu\n",
	       (unsigned long long)first, (unsigned long long)v0, now() - t,
	       (unsigned long long)v1);
	if (v1 == v0)
		return fail("no view change came during the SEND (still view %llu): no test",
			    (unsigned long long)v0);

	ret = send_call(&h, 1, 0, NULL);
	if (ret != -ESTALE)
		return fail("marking the voided reservation: %s, not ESTALE",
			    ret ? strerror(-ret) : "success");
	ret = send_call(&h, 0, 1, &again);
	if (ret)
		return fail("reserving again: %s", strerror(-ret));
	slot = (char *)h.ring[h.info.my_rank] + (again % h.info.window) * h.info.slot_size;
	memset(slot, 0, MSG_LEN);
	memcpy(slot, MSG, sizeof(MSG));
	ret = send_call(&h, 1, 0, NULL);
	if (ret)
		return fail("marking the new reservation %llu: %s (the first one was %llu)",
			    (unsigned long long)again, strerror(-ret),
			    (unsigned long long)first);
	if (delivered(&h))
		return 1;
	printf("ESTALE once, then %llu sent and delivered\n", (unsigned long long)again);
	spindle_close(&h);
	return 0;
}
