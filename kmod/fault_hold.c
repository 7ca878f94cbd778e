// SPDX-License-Identifier: GPL-2.0
/*
 * Testing only: holds that keep a window open between two steps, so that
 * a test can make something happen inside it (a view change while a SEND
 * records its reservations, a file opened on a group still coming up, a
 * member that fails while its group is about to become active, control
 * calls while a group goes down), and a
 * completion queue small enough to overrun.  Each is a module parameter,
 * 0 (off) unless a test sets it; a hold lasts a minute at most.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>
#include <linux/sched.h>

#include "fault.h"
#include "group.h"

#define HOLD_MAX_MS	60000

static unsigned int fault_send_delay_ms;
module_param(fault_send_delay_ms, uint, 0644);
MODULE_PARM_DESC(fault_send_delay_ms, "Testing only: a SEND that reserved slots waits this long (ms, at most 60000) before it records them, so that a view change comes in between");

static unsigned int fault_up_delay_ms;
module_param(fault_up_delay_ms, uint, 0644);
MODULE_PARM_DESC(fault_up_delay_ms, "Testing only: a group up waits this long (ms, at most 60000) once its devices exist, before its thread and listener, so that files open on a group still coming up");

static unsigned int fault_active_delay_ms;
module_param(fault_active_delay_ms, uint, 0644);
MODULE_PARM_DESC(fault_active_delay_ms, "Testing only: a group whose members all connected waits this long (ms, at most 60000) before it becomes active, so that a member can fail meanwhile");

static unsigned int fault_down_delay_ms;
module_param(fault_down_delay_ms, uint, 0644);
MODULE_PARM_DESC(fault_down_delay_ms, "Testing only: a group going down waits this long (ms, at most 60000) once it has left the list, before it tears down, so that a test sees what waits on it");

static unsigned int fault_cq_entries;
module_param(fault_cq_entries, uint, 0644);
MODULE_PARM_DESC(fault_cq_entries, "Testing only: give each group brought up from now on a completion queue of at most this many entries, so that it overruns (0: as deep as its connections need)");

static unsigned int fault_cm_delay_ms;
module_param(fault_cm_delay_ms, uint, 0644);
MODULE_PARM_DESC(fault_cm_delay_ms, "Testing only: delay the handling of connection failure events (ms, at most 60000)");

static unsigned int fault_row_hold_ms;
module_param(fault_row_hold_ms, uint, 0644);
MODULE_PARM_DESC(fault_row_hold_ms, "Testing only: hold my row back from a member outside the view for this long after it connects (ms)");

static unsigned int *const spindle_holds[SPINDLE_HOLD_NPOINTS] = {
	[SPINDLE_HOLD_SEND] = &fault_send_delay_ms,
	[SPINDLE_HOLD_UP] = &fault_up_delay_ms,
	[SPINDLE_HOLD_ACTIVE] = &fault_active_delay_ms,
	[SPINDLE_HOLD_DOWN] = &fault_down_delay_ms,
};

static const char *const spindle_hold_where[SPINDLE_HOLD_NPOINTS] = {
	[SPINDLE_HOLD_SEND] = "after a SEND reserved",
	[SPINDLE_HOLD_UP] = "once its devices exist",
	[SPINDLE_HOLD_ACTIVE] = "before it becomes active",
	[SPINDLE_HOLD_DOWN] = "going down, off the list",
};

/* How long hold @h lasts now, said in the log when it is on. */
static u32 spindle_hold_ms(enum spindle_fault_hold h, u32 group)
{
	u32 ms = min_t(u32, READ_ONCE(*spindle_holds[h]), HOLD_MAX_MS);

	if (likely(!ms))
		return 0;
	pr_warn("group %u: fault injection: held %u ms %s\n", group, ms,
		spindle_hold_where[h]);
	return ms;
}

/**
 * spindle_fault_hold - wait here as long as a test asks
 * @h: which hold
 * @group: the group's id, for the log
 *
 * Context: process context, not the predicate thread
 * (spindle_fault_hold_thread() is its own): sleeps.
 */
void spindle_fault_hold(enum spindle_fault_hold h, u32 group)
{
	u32 ms = spindle_hold_ms(h, group);

	if (ms)
		msleep_interruptible(ms);
}

/**
 * spindle_fault_hold_thread - a hold in a group's predicate thread
 * @h: which hold
 * @g: the group, whose thread is current
 *
 * The thread is held, not blind: a completion queue that breaks meanwhile
 * ends the hold (spindle_cq_async_event() wakes the thread), so that this
 * member stops for that cause at once, as it would unheld, and not later
 * for whatever its peers did while it slept; kthread_stop() ends it too.
 * Context: the predicate thread: sleeps.
 */
void spindle_fault_hold_thread(enum spindle_fault_hold h,
			       struct spindle_group *g)
{
	unsigned long end = jiffies + msecs_to_jiffies(spindle_hold_ms(h, g->id));

	for (;;) {
		long left = (long)(end - jiffies);

		set_current_state(TASK_INTERRUPTIBLE);
		if (left <= 0 || kthread_should_stop() ||
		    READ_ONCE(g->cq_event) != SPINDLE_CQ_FINE)
			break;
		schedule_timeout(left);
	}
	__set_current_state(TASK_RUNNING);
}

/**
 * spindle_fault_cq_entries - the completion queue a new group gets
 * @want: entries its connections need
 * @group: the group's id, for the log
 *
 * Return: @want, or less when a test asks for an overrun.
 */
u32 spindle_fault_cq_entries(u32 want, u32 group)
{
	u32 cap = READ_ONCE(fault_cq_entries);

	if (likely(!cap || cap >= want))
		return want;
	pr_warn("group %u: fault injection: a completion queue of %u entries\n",
		group, cap);
	return cap;
}

/**
 * spindle_fault_cm_delay - hold a connection's failure event back
 *
 * So that its flushed completions reach the predicate thread first (a
 * test of which connection they are taken for).  Silent: a group forming
 * sees many.
 * Context: the rdma_cm handler: sleeps.
 */
void spindle_fault_cm_delay(void)
{
	u32 ms = min_t(u32, READ_ONCE(fault_cm_delay_ms), HOLD_MAX_MS);

	if (unlikely(ms))
		msleep(ms);
}

/**
 * spindle_fault_row_hold_ns - how long my row is held back from a joiner
 *
 * Return: 0 unless a test asks (then a joiner sees every connection ready
 * before any row, as a loaded one may).
 */
u64 spindle_fault_row_hold_ns(void)
{
	return (u64)READ_ONCE(fault_row_hold_ms) * NSEC_PER_MSEC;
}
