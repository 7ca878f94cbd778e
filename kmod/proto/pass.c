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
static int sp_pass_receive(struct sp_sg *e, const struct sp_pass_ops *o,
			   void *ctx)
{
	int ret;

	if (e->fault_member >= 0)
		return 0;
	ret = sp_sg_receive(e);
	if (ret < 0) {
		o->bad(ctx, (u32)e->fault_member, e->fault_what);
		return 0;
	}
	if (ret && o->received)
		o->received(ctx, (u32)ret);
	return ret;
}

/* Send predicate: what producers made ready, then nulls (lock held). */
static int sp_pass_publish(struct sp_sg *e, const struct sp_pass_ops *o,
			   void *ctx)
{
	u64 msgs = e->stats.msgs_sent, nulls = e->stats.nulls_sent;
	int taken = (int)o->take(ctx);
	int ret = sp_sg_publish(e);

	if (o->published && (ret > 0 || e->stats.nulls_sent != nulls))
		o->published(ctx, ret > 0 ? (u32)ret : 0,
			     e->stats.msgs_sent - msgs,
			     e->stats.nulls_sent - nulls);
	return taken + ret;
}

/**
 * sp_sg_queue_all - queue what every ready member lacks
 * @e: engine
 * @o: transport
 * @ctx: its context
 *
 * Payload and headers first, then the counter block when the transport
 * lets it go; never more writes than fit a member's send queue.
 * Return: writes queued.
 */
u32 sp_sg_queue_all(struct sp_sg *e, const struct sp_pass_ops *o, void *ctx)
{
	struct sp_wr w[SP_EMIT_MAX];
	u32 m, i, n, room, queued = 0;

	for (m = 0; m < e->nmembers; m++) {
		if (m == e->me || !sp_sg_has_output(e, m))
			continue;
		room = o->writes(ctx, m);
		if (!room)
			continue;
		n = sp_sg_emit(e, m, room, o->block_ok(ctx, m), w);
		for (i = 0; i < n; i++)
			o->queue(ctx, m, &w[i]);
		queued += n;
	}
	return queued;
}

/**
 * sp_sg_pass - one subgroup's predicates, once
 * @e: engine
 * @o: transport and consumers
 * @ctx: their context
 * @flags: SP_PASS_NO_PUBLISH after a failure or while stopping: nothing
 *	new is published, but what others sent is still received, delivered
 *	and acknowledged, and what changed still goes out
 *
 * A wedged engine delivers nothing: the trim decides what is left.
 * Return: how much moved (0: nothing to do).
 */
int sp_sg_pass(struct sp_sg *e, const struct sp_pass_ops *o, void *ctx,
	       u32 flags)
{
	int work, freed;

	work = sp_pass_receive(e, o, ctx);
	o->lock(ctx);
	if (!(flags & SP_PASS_NO_PUBLISH))
		work += sp_pass_publish(e, o, ctx);
	freed = sp_sg_reclaim(e);
	o->limit(ctx);
	o->unlock(ctx);
	if (freed) {
		work += freed;
		o->freed(ctx, (u32)freed);
	}
	if (!e->wedged)
		work += (int)o->deliver(ctx, e->log_size);
	return work + (int)sp_sg_queue_all(e, o, ctx);
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
