// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A pass of the predicate thread, and one subgroup's turn in it (pass.h).
 */
#include "pass.h"

/*
 * Receive predicate.  A member caught writing garbage is reported once and
 * stops it for good (the engine keeps fault_member): what the others wrote
 * before is still delivered and acknowledged.
 */
static int sp_pass_receive(struct sp_sub *e, const struct sp_pass_ops *o,
			   void *ctx)
{
	int ret;

	if (e->fault_member >= 0)
		return 0;
	ret = sp_sub_receive(e);
	if (ret < 0) {
		o->bad(ctx, (u32)e->fault_member, e->fault_what);
		return 0;
	}
	if (ret && o->received)
		o->received(ctx, (u32)ret);
	return ret;
}

/* Send predicate: what producers made ready, then nulls (lock held). */
static int sp_pass_publish(struct sp_sub *e, const struct sp_pass_ops *o,
			   void *ctx)
{
	u64 msgs = e->stats.msgs_sent, nulls = e->stats.nulls_sent;
	int taken = (int)o->take(ctx);
	int ret = sp_sub_publish(e);

	if (o->published && (ret > 0 || e->stats.nulls_sent != nulls))
		o->published(ctx, ret > 0 ? (u32)ret : 0,
			     e->stats.msgs_sent - msgs,
			     e->stats.nulls_sent - nulls);
	return taken + ret;
}

/*
 * Queue what every ready member is due (sp_sub_due(); with @flush, lazy
 * changes too): payload and headers first, then the counter block when the
 * transport lets it go, never more writes than fit a member's send queue;
 * with @now (the baseline) post each member's chain as soon as it is
 * queued.  Returns the writes queued.
 */
static u32 sp_pass_queue(struct sp_sub *e, const struct sp_pass_ops *o,
			 void *ctx, bool now, bool flush)
{
	struct sp_wr w[SP_EMIT_MAX];
	u32 m, i, n, room, queued = 0;

	for (m = 0; m < e->nmembers; m++) {
		if (m == e->me || !sp_sub_due(e, m, flush))
			continue;
		room = o->writes(ctx, m);
		if (!room)
			continue;
		n = sp_sub_emit(e, m, room, o->block_ok(ctx, m), flush, w);
		for (i = 0; i < n; i++)
			o->queue(ctx, m, &w[i]);
		if (now && n)
			o->post(ctx, m);
		queued += n;
	}
	return queued;
}

/* Is any member due something of mine (sp_pass_queue() would emit)? */
static bool sp_pass_owes(struct sp_sub *e, bool flush)
{
	u32 m;

	for (m = 0; m < e->nmembers; m++)
		if (m != e->me && sp_sub_due(e, m, flush))
			return true;
	return false;
}

/*
 * One step of a turn.  Spindle's (@flags without SP_PASS_STEPWISE): each
 * predicate takes everything there is, and the writes are queued at the
 * end, to be posted after every lock is dropped.  The baseline's
 * (SP_PASS_STEPWISE): the engine moves one message per predicate
 * (sp_sub_init() limits it), each predicate that moved posts its writes at
 * once, under the subgroup's lock, and one message is delivered.
 */
static int sp_pass_step(struct sp_sub *e, const struct sp_pass_ops *o,
			void *ctx, u32 flags)
{
	bool now = flags & SP_PASS_STEPWISE, flush = sp_pass_flushes(flags);
	int work, n, freed;

	n = sp_pass_receive(e, o, ctx);
	work = n;
	o->lock(ctx);
	if (now && n)
		work += (int)sp_pass_queue(e, o, ctx, true, flush);
	if (!(flags & SP_PASS_NO_PUBLISH)) {
		n = sp_pass_publish(e, o, ctx);
		work += n;
		if (now && n)
			work += (int)sp_pass_queue(e, o, ctx, true, flush);
	}
	freed = sp_sub_reclaim(e);
	o->limit(ctx);
	o->unlock(ctx);
	if (freed) {
		work += freed;
		o->freed(ctx, (u32)freed);
	}
	if (!e->wedged) {
		n = (int)o->deliver(ctx, now ? 1 : e->log_size);
		work += n;
		if (now && n) {
			o->lock(ctx);
			work += (int)sp_pass_queue(e, o, ctx, true, flush);
			o->unlock(ctx);
		}
	}
	/*
	 * Whatever is still owed: Spindle queues everything here; the
	 * baseline only what found no room in a send queue when its step
	 * moved (nothing else may move again to send it).
	 */
	if (!now) {
		work += (int)sp_pass_queue(e, o, ctx, false, flush);
	} else if (sp_pass_owes(e, flush)) {
		o->lock(ctx);
		work += (int)sp_pass_queue(e, o, ctx, true, flush);
		o->unlock(ctx);
	}
	return work;
}

/**
 * sp_sub_pass - one subgroup's predicates, once
 * @e: engine
 * @o: transport and consumers
 * @ctx: their context
 * @flags: SP_PASS_NO_PUBLISH after a failure or while stopping: nothing
 *	new is published, but what others sent is still received, delivered
 *	and acknowledged, and what changed still goes out;
 *	SP_PASS_STEPWISE for the baseline: steps of one message, each
 *	posted at once, repeated while they move (up to SP_PASS_STEP_BUDGET);
 *	SP_PASS_FLUSH when the owner's lazy changes are old enough: push them
 *	(both others imply it)
 *
 * A wedged engine delivers nothing: the trim decides what is left.
 * Return: how much moved (0: nothing to do).
 */
int sp_sub_pass(struct sp_sub *e, const struct sp_pass_ops *o, void *ctx,
		u32 flags)
{
	int work = 0, step;

	do {
		step = sp_pass_step(e, o, ctx, flags);
		work += step;
	} while ((flags & SP_PASS_STEPWISE) && step &&
		 work < SP_PASS_STEP_BUDGET);
	return work;
}

/**
 * sp_group_pass - one pass of a group's predicate thread
 * @o: the group's side
 * @ctx: its context
 * @nsubgroups: subgroups configured
 *
 * Return: how much moved (0: nothing to do).
 */
int sp_group_pass(const struct sp_group_ops *o, void *ctx, u32 nsubgroups)
{
	int work = o->view(ctx);
	u32 s;

	/*
	 * Rows first: a heartbeat or a view change must not wait behind a
	 * stream that fills the send queues (it would be suspected, or a
	 * hostile row read seconds late).  Again after the subgroups, for
	 * what they changed.
	 */
	o->rows(ctx);
	for (s = 0; s < nsubgroups && o->engines_run(ctx); s++)
		work += o->turn(ctx, s);
	o->rows(ctx);
	o->flush(ctx);
	return work;
}
