/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A pass of the predicate thread, in the order that ships.  The group's
 * (sp_group_pass()): the view change's step, my row, each subgroup's turn,
 * my row again, then every member's chain is posted.  A subgroup's turn
 * (sp_sub_pass()): receive, then (under the subgroup's send lock) take what
 * producers made ready, publish and reclaim; wake the senders; deliver;
 * queue what each member lacks.  The baseline (SP_PASS_STEPWISE) runs the
 * same turn in steps of one message, each step's writes posted at once
 * under the lock.  What is below is a table of operations:
 * the kernel's in thread.c (over xmit.c's ib_verbs transport, rows.c's
 * rows and deliver.c's consumers), the simulation's over a set of queues
 * (selftests/unit/sim.h).
 */
#ifndef SPINDLE_PROTO_PASS_H
#define SPINDLE_PROTO_PASS_H

#include "engine.h"

/**
 * struct sp_pass_ops - what a pass needs from the transport and consumers
 * @lock: take the subgroup's send-side lock (producers reserve under it)
 * @unlock: release it
 * @take: under the lock, mark ready what producers filled; returns the
 *	positions taken
 * @limit: under the lock, after reclaim: tell producers what they may
 *	reserve now
 * @freed: @n slots came free: wake whoever waits to reserve
 * @deliver: hand up to @max messages to consumers; returns how much moved
 * @writes: whole writes that fit member @m's send queue now; 0 when @m is
 *	not ready for writes
 * @block_ok: may a push of the counter block go to @m now (the elastic
 *	threshold: one push in flight)
 * @queue: append write @w for member @m to this pass's chain
 * @post: post member @m's chain now (the baseline's policy only,
 *	SP_PASS_STEPWISE; otherwise the group's @flush posts every chain)
 * @bad: member @m wrote something invalid (@what): it is to be treated as
 *	failed; the pass goes on with what was received
 * @received: optional, for tracing: @n new entries received
 * @published: optional, for tracing: a publish step of @n positions, of
 *	which @msgs messages and @nulls null-sends
 *
 * Every operation gets the caller's @ctx.  Member numbers are the engine's
 * positions (0 .. nmembers - 1).
 */
struct sp_pass_ops {
	void (*lock)(void *ctx);
	void (*unlock)(void *ctx);
	u32 (*take)(void *ctx);
	void (*limit)(void *ctx);
	void (*freed)(void *ctx, u32 n);
	u32 (*deliver)(void *ctx, u32 max);
	u32 (*writes)(void *ctx, u32 m);
	bool (*block_ok)(void *ctx, u32 m);
	void (*queue)(void *ctx, u32 m, const struct sp_wr *w);
	void (*post)(void *ctx, u32 m);
	void (*bad)(void *ctx, u32 m, const char *what);
	void (*received)(void *ctx, u32 n);
	void (*published)(void *ctx, u32 n, u64 msgs, u64 nulls);
};

/* sp_sub_pass() flags */
enum sp_pass_flags {
	SP_PASS_NO_PUBLISH = 1,		/* failed or stopping: nothing new */
	SP_PASS_STEPWISE = 2,		/* the baseline: Derecho before Spindle */
	SP_PASS_FLUSH = 4,		/* lazy block changes go out too */
};

/*
 * Do @flags push lazy changes (sp_sub_due())?  When asked to, when nothing
 * new is published any more (failed, stopping), and in the baseline, which
 * pushes every change as Derecho did.
 */
static inline bool sp_pass_flushes(u32 flags)
{
	return flags & (SP_PASS_FLUSH | SP_PASS_NO_PUBLISH | SP_PASS_STEPWISE);
}

/* Most a stepwise turn moves before the pass goes on to the others. */
#define SP_PASS_STEP_BUDGET	256

int sp_sub_pass(struct sp_sub *e, const struct sp_pass_ops *o, void *ctx,
		u32 flags);

/**
 * struct sp_group_ops - a group's pass, around its subgroups' turns
 * @view: the view change's step (suspicion, proposals, trims); what moved
 * @rows: queue my row to every member that lacks its latest
 * @engines_run: may the engines read and write (a view is installed, and
 *	the group is not between two views)
 * @turn: subgroup @s's turn (sp_sub_pass()); 0 where it has none here
 * @flush: post every member's chain
 */
struct sp_group_ops {
	int (*view)(void *ctx);
	void (*rows)(void *ctx);
	bool (*engines_run)(void *ctx);
	int (*turn)(void *ctx, u32 s);
	void (*flush)(void *ctx);
};

int sp_group_pass(const struct sp_group_ops *o, void *ctx, u32 nsubgroups);

#endif /* SPINDLE_PROTO_PASS_H */
