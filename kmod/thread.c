// SPDX-License-Identifier: GPL-2.0
/*
 * The predicate kthread: one per group.
 *
 * Each pass polls the CQ once, then runs proto/pass.c's pass: the view
 * change's step, my row, and for every subgroup the receive, send
 * (publish), reclaim and delivery predicates of the engine, each of which
 * takes everything there is and never waits for more; the writes they
 * call for are queued per peer and posted as one chain per peer at the
 * end of the pass, after every lock is dropped.  (The baseline, for
 * comparison, posts each step's writes at once, under the subgroup lock.)
 *
 * While there is work the thread polls, yielding with cond_resched(); after
 * spin_us without work it parks until a doorbell rings: a message marked
 * ready, a consumer releasing, or a completion on the CQ.  Peers' data and
 * headers land silently, but every counter push that announces them is an
 * RDMA write with immediate, which completes on our CQ: so a parked thread
 * wakes for remote changes too, and an idle group costs no CPU.  A parked
 * thread still wakes every idle_ms as a safety net.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/hrtimer.h>
#include <linux/module.h>

#include "group.h"
#include "peer.h"
#include "subgroup.h"
#include "xmit.h"
#include "proto/pass.h"
#include "trace.h"

static unsigned int spin_us = 200;
module_param(spin_us, uint, 0644);
MODULE_PARM_DESC(spin_us, "Microseconds the predicate thread polls without work before it parks (default 200)");

static unsigned int idle_ms = 100;
module_param(idle_ms, uint, 0644);
MODULE_PARM_DESC(idle_ms, "Longest a parked predicate thread sleeps without a doorbell, in milliseconds (default 100)");

static unsigned int lazy_ms = 10;
module_param(lazy_ms, uint, 0644);
MODULE_PARM_DESC(lazy_ms, "Longest what consumers released waits to ride along with another push before it goes on its own, in milliseconds; 0 pushes it at once (default 10)");

/* One subgroup's turn in a pass: the context of its sp_pass_ops. */
struct spindle_turn {
	struct spindle_group *g;
	struct spindle_subgroup *sub;
};

static struct spindle_peer *spindle_turn_peer(void *ctx, u32 m)
{
	struct spindle_turn *t = ctx;

	return t->g->peers[t->sub->member_idx[m]];
}

/*
 * The subgroup's lock, around taking, publishing and reclaiming (sparse
 * counts the context; the name in the annotation is for the reader).
 */
static void spindle_turn_lock(void *ctx)
	__acquires(&sub->lock)
{
	spin_lock_bh(&((struct spindle_turn *)ctx)->sub->lock);
}

static void spindle_turn_unlock(void *ctx)
	__releases(&sub->lock)
{
	spin_unlock_bh(&((struct spindle_turn *)ctx)->sub->lock);
}

static u32 spindle_turn_take(void *ctx)
{
	struct spindle_subgroup *sub = ((struct spindle_turn *)ctx)->sub;
	int n = spindle_producer_take(sub);

	if (n)
		trace_spindle_ready(sub->group_id, sub->id, n, true);
	return n;
}

static void spindle_turn_limit(void *ctx)
{
	spindle_producer_limit(((struct spindle_turn *)ctx)->sub);
}

static void spindle_turn_freed(void *ctx, u32 n)
{
	wake_up_all(&((struct spindle_turn *)ctx)->sub->send_wq);
}

static u32 spindle_turn_deliver(void *ctx, u32 max)
{
	return spindle_sub_deliver(((struct spindle_turn *)ctx)->sub, max);
}

static u32 spindle_turn_writes(void *ctx, u32 m)
{
	struct spindle_peer *peer = spindle_turn_peer(ctx, m);

	return spindle_peer_ready(peer) ? spindle_peer_writes(peer) : 0;
}

/* The elastic threshold: one push of the block in flight. */
static bool spindle_turn_block_ok(void *ctx, u32 m)
{
	struct spindle_turn *t = ctx;
	struct spindle_conn *c = spindle_turn_peer(ctx, m)->kc;

	return !spindle_coalesces(t->g) ||
	       c->sq_acked >= c->blk_inflight[t->sub->index];
}

static void spindle_turn_queue(void *ctx, u32 m, const struct sp_wr *w)
{
	spindle_peer_queue(spindle_turn_peer(ctx, m),
			   ((struct spindle_turn *)ctx)->sub, w);
}

/* The baseline's post, at once (spindle_turn_writes() said @m is ready). */
static void spindle_turn_post(void *ctx, u32 m)
{
	spindle_peer_flush(spindle_turn_peer(ctx, m));
}

static void spindle_turn_bad(void *ctx, u32 m, const char *what)
{
	struct spindle_turn *t = ctx;
	u32 bad = t->sub->member_idx[m];

	pr_warn_ratelimited("group %u subgroup %u: member %u wrote an invalid %s: treating it as failed\n",
			    t->g->id, t->sub->id, t->g->cfg.members[bad].id, what);
	spindle_member_lost(t->g, bad, what);
}

static void spindle_turn_received(void *ctx, u32 n)
{
	struct spindle_subgroup *sub = ((struct spindle_turn *)ctx)->sub;

	trace_spindle_recv_batch(sub->group_id, sub->id, n);
}

/* A publish step (sub->lock held): @n positions, @msgs messages, @nulls nulls. */
static void spindle_turn_published(void *ctx, u32 n, u64 msgs, u64 nulls)
{
	struct spindle_subgroup *sub = ((struct spindle_turn *)ctx)->sub;

	lockdep_assert_held(&sub->lock);
	if (n)
		trace_spindle_send_batch(sub->group_id, sub->id, n, msgs);
	if (nulls)
		trace_spindle_null_send(sub->group_id, sub->id, nulls);
}

static const struct sp_pass_ops spindle_turn_ops = {
	.lock = spindle_turn_lock,
	.unlock = spindle_turn_unlock,
	.take = spindle_turn_take,
	.limit = spindle_turn_limit,
	.freed = spindle_turn_freed,
	.deliver = spindle_turn_deliver,
	.writes = spindle_turn_writes,
	.block_ok = spindle_turn_block_ok,
	.queue = spindle_turn_queue,
	.post = spindle_turn_post,
	.bad = spindle_turn_bad,
	.received = spindle_turn_received,
	.published = spindle_turn_published,
};

/*
 * One subgroup's predicates (proto/pass.c).  After a member fails
 * (@failed) nothing new is published, but what the others already sent is
 * still received, delivered and acknowledged: only a member caught writing
 * garbage stops the receive predicate, for good.  The baseline
 * (SPINDLE_GROUP_BASELINE), Derecho before Spindle for comparison, takes
 * the same turn stepwise: one message per step, each step's writes posted
 * at once, one ib_post_send per peer, with the subgroup lock held as the
 * application threads wait on it.  No nulls (sp_sub_init()).
 */
static int spindle_sub_pass(struct spindle_group *g, struct spindle_subgroup *sub,
			    bool failed)
{
	struct spindle_turn t = { .g = g, .sub = sub };
	u32 flags = 0;

	if (failed || READ_ONCE(g->stopping))
		flags |= SP_PASS_NO_PUBLISH;
	if (g->cfg.flags & SP_GROUP_BASELINE)
		flags |= SP_PASS_STEPWISE;
	if (g->lazy.flush || !READ_ONCE(lazy_ms))
		flags |= SP_PASS_FLUSH;
	return sp_sub_pass(&sub->eng, &spindle_turn_ops, &t, flags);
}

static int spindle_group_view(void *ctx)
{
	return spindle_view_pass(ctx);
}

static void spindle_group_rows(void *ctx)
{
	spindle_view_push_rows(ctx);
}

static bool spindle_group_engines_run(void *ctx)
{
	return spindle_view_engines_run(ctx);
}

static int spindle_group_turn(void *ctx, u32 s)
{
	struct spindle_group *g = ctx;

	if (!g->subs[s])
		return 0;
	return spindle_sub_pass(g, g->subs[s],
				READ_ONCE(g->state) == SPINDLE_GROUP_FAILED);
}

static void spindle_group_flush(void *ctx)
{
	spindle_flush_all(ctx);
}

static const struct sp_group_ops spindle_group_ops = {
	.view = spindle_group_view,
	.rows = spindle_group_rows,
	.engines_run = spindle_group_engines_run,
	.turn = spindle_group_turn,
	.flush = spindle_group_flush,
};

static int spindle_pass(struct spindle_group *g)
{
	enum spindle_group_state state;
	int work;
	u32 i;

	atomic_set(&g->doorbell, 0);
	if (unlikely(READ_ONCE(g->cq_event) != SPINDLE_CQ_FINE))
		spindle_view_stop(g, "its completion queue broke");
	/*
	 * Connections as they are now: new ones adopted (their hellos sent,
	 * ready ones taken in), those that went down let go of.
	 */
	for (i = 0; i < g->cfg.nmembers; i++)
		if (i != g->me)
			spindle_peer_refresh(g->peers[i]);
	work = spindle_poll_cq(g);
	state = READ_ONCE(g->state);
	if (state == SPINDLE_GROUP_CONNECTING) {
		spindle_group_check_active(g);
		if (!spindle_view_joining(g))
			return work;
		state = READ_ONCE(g->state);
	}
	if (state != SPINDLE_GROUP_ACTIVE && state != SPINDLE_GROUP_FAILED &&
	    state != SPINDLE_GROUP_VIEW_CHANGE)
		return work;
	return work + sp_group_pass(&spindle_group_ops, g, g->cfg.nsubgroups);
}

/* Ask (or stop asking) every producer page for a wake-up call. */
static bool spindle_producers_sleep(struct spindle_group *g, bool sleep)
{
	bool more = false;
	u32 s;

	for (s = 0; s < g->cfg.nsubgroups; s++)
		if (g->subs[s] && spindle_producer_sleep(g->subs[s], sleep))
			more = true;
	return more;
}

/* Park until a doorbell, a completion, or @ms milliseconds. */
static void spindle_park(struct spindle_group *g, unsigned int ms)
{
	ktime_t t = ms_to_ktime(max(ms, 1U));

	/* producers first: asking them to ring is itself a last look */
	if (!spindle_producers_sleep(g, true)) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!atomic_read(&g->doorbell) && !kthread_should_stop() &&
		    !(g->cq && ib_req_notify_cq(g->cq, IB_CQ_NEXT_COMP |
						IB_CQ_REPORT_MISSED_EVENTS) > 0))
			schedule_hrtimeout_range(&t, NSEC_PER_MSEC, HRTIMER_MODE_REL);
		__set_current_state(TASK_RUNNING);
	}
	spindle_producers_sleep(g, false);
}

/**
 * spindle_thread_sync - wait until the predicate thread has let go
 * @g: group
 *
 * Whatever the thread saw before this call, it has finished two passes
 * since: a connection that went DOWN before is no longer its current one,
 * and it posts nothing more on it.  Returns at once if the thread is
 * stopped for good.
 * Context: process context, not the predicate thread.
 */
void spindle_thread_sync(struct spindle_group *g)
{
	s64 seq = atomic64_read(&g->passes);

	if (WARN_ON_ONCE(current == g->thread))
		return;
	while (!READ_ONCE(g->thread_stopped) && g->thread &&
	       atomic64_read(&g->passes) < seq + 2) {
		spindle_ring_doorbell(g);
		wait_event_timeout(g->pass_wq, atomic64_read(&g->passes) >= seq + 2 ||
				   READ_ONCE(g->thread_stopped),
				   msecs_to_jiffies(10));
	}
}

/*
 * After a pass: lazy changes of the engines' blocks left (sp_sub_due())
 * go out in a pass of their own once lazy_ms old (proto/lazy.h).
 * Returns how long the thread may park: @idle, or less to flush in time;
 * 0 when the next pass must not wait.
 */
static unsigned int spindle_lazy_wait(struct spindle_group *g, u64 now,
				      unsigned int idle)
{
	bool left = spindle_group_owes(g, ~(sp_mask_t)0, true);
	u64 ns = sp_lazy_after_pass(&g->lazy, left, now,
				    (u64)READ_ONCE(lazy_ms) * NSEC_PER_MSEC);

	if (ns == U64_MAX)
		return idle;
	return min_t(u64, idle, DIV_ROUND_UP_ULL(ns, NSEC_PER_MSEC));
}

/*
 * A pass's length, for debugfs: a long one holds back the soft NIC's
 * ACKs as much as our own work (its subgroup turns run with bottom halves
 * off).
 */
static void spindle_pass_timed(struct spindle_group *g, u64 ns)
{
	if (ns > g->pass_max_ns)
		WRITE_ONCE(g->pass_max_ns, ns);
	sp_hist_add(g->hist_pass, ns >> 16);
}

/**
 * spindle_thread_fn - the predicate thread of a group
 * @data: the group
 *
 * Return: 0 when stopped.
 */
int spindle_thread_fn(void *data)
{
	struct spindle_group *g = data;
	u64 last_work = ktime_get_ns();

	while (!kthread_should_stop()) {
		u64 t0 = ktime_get_ns(), t1, parked;
		int work = spindle_pass(g);
		unsigned int wait;

		/* a pass is over: spindle_thread_sync() counts them */
		atomic64_inc(&g->passes);
		if (wq_has_sleeper(&g->pass_wq))
			wake_up_all(&g->pass_wq);
		t1 = ktime_get_ns();
		spindle_pass_timed(g, t1 - t0);
		wait = spindle_lazy_wait(g, t1, READ_ONCE(idle_ms));
		if (work) {
			g->busy_ns += t1 - t0;
			last_work = t1;
			cond_resched();
			continue;
		}
		if (!wait || t1 - last_work < (u64)READ_ONCE(spin_us) * NSEC_PER_USEC) {
			g->busy_ns += t1 - t0;
			cond_resched();
			continue;
		}
		spindle_park(g, wait);
		parked = ktime_get_ns() - t1;
		trace_spindle_wake(g->id, parked);
		g->idle_ns += parked;
		cond_resched();		/* a park may return at once */
	}
	return 0;
}
