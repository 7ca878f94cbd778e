/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How long lazy changes of a node's blocks (sp_sub_due(): what consumers
 * released) may wait to ride along with another push before a pass
 * flushes them (SP_PASS_FLUSH).  The owner asks after every pass, with
 * its clock: the kernel's thread in nanoseconds, the simulation in passes.
 */
#ifndef SPINDLE_PROTO_LAZY_H
#define SPINDLE_PROTO_LAZY_H

#include "compat.h"

struct sp_lazy {
	u64 since;		/* when a pass first left some; 0: none left */
	bool flush;		/* the next pass flushes them */
};

/**
 * sp_lazy_after_pass - a pass is over: when must the next one run?
 * @l: the node's state
 * @left: the pass left lazy changes unpushed
 * @now: the owner's clock, never 0
 * @limit: how long they may wait, on that clock
 *
 * Return: how long the owner may wait for the next pass on that clock (it
 * may run sooner): 0 when it must run at once to flush, U64_MAX when
 * nothing waits.  What a flushing pass left waits for room in a send queue
 * or for a push in flight to complete, which wakes the owner anyway: it is
 * no reason to poll, so the wait is then U64_MAX too.
 */
static inline u64 sp_lazy_after_pass(struct sp_lazy *l, bool left, u64 now,
				     u64 limit)
{
	if (!left) {
		l->since = 0;
		l->flush = false;
		return U64_MAX;
	}
	if (!l->since)
		l->since = now;
	if (now - l->since < limit)
		return l->since + limit - now;
	if (l->flush)
		return U64_MAX;
	l->flush = true;
	return 0;
}

#endif /* SPINDLE_PROTO_LAZY_H */
