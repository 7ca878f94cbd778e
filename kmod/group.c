// SPDX-License-Identifier: GPL-2.0
/*
 * Group lifecycle: bring-up from a validated configuration, failure, and
 * teardown.
 *
 * Teardown order matters and is: stop publishing and let what is in flight
 * reach the peers (bounded); destroy the listener (waits out its
 * handlers); take down and reap every connection while the predicate
 * thread still polls the CQ (each QP is drained before it is destroyed,
 * and its MRs go with it); stop the thread; then the CQ, the DMA
 * mappings and the memory.  Subgroup objects and memory regions are
 * reference counted and outlive the group for open files and mappings.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/kthread.h>
#include <linux/crc32.h>
#include <linux/delay.h>
#include <linux/sched/user.h>
#include <linux/sched/signal.h>
#include <linux/cred.h>
#include <linux/error-injection.h>

#include "spindle.h"
#include "group.h"
#include "peer.h"
#include "subgroup.h"
#include "xmit.h"
#include "trace.h"

/*
 * The groups up on this node, and those being taken down (off the first
 * list, so nobody finds them, but still holding their device and id).
 * The lock is held to look groups up and move them, never while one is
 * taken down.
 */
DEFINE_MUTEX(spindle_groups_lock);
LIST_HEAD(spindle_groups);
static LIST_HEAD(spindle_groups_leaving);
static DECLARE_WAIT_QUEUE_HEAD(spindle_groups_left);

/* A group that is up, by id.  Caller holds spindle_groups_lock. */
struct spindle_group *spindle_group_find(u32 id)
{
	struct spindle_group *g;

	lockdep_assert_held(&spindle_groups_lock);
	list_for_each_entry(g, &spindle_groups, node)
		if (g->id == id)
			return g;
	return NULL;
}

/* Is @id up, or still being taken down?  Caller holds spindle_groups_lock. */
bool spindle_group_id_busy(u32 id)
{
	struct spindle_group *g;

	lockdep_assert_held(&spindle_groups_lock);
	if (spindle_group_find(id))
		return true;
	list_for_each_entry(g, &spindle_groups_leaving, node)
		if (g->id == id)
			return true;
	return false;
}

/**
 * spindle_group_leave - take a group off the list, to take it down
 * @g: a group that is up
 *
 * Caller holds spindle_groups_lock; it then calls spindle_group_down()
 * without it.
 */
void spindle_group_leave(struct spindle_group *g)
{
	lockdep_assert_held(&spindle_groups_lock);
	list_move_tail(&g->node, &spindle_groups_leaving);
}

/* Is a group on @ibdev still being taken down? */
static bool spindle_groups_leaving_on(struct ib_device *ibdev)
{
	struct spindle_group *g;
	bool found = false;

	mutex_lock(&spindle_groups_lock);
	list_for_each_entry(g, &spindle_groups_leaving, node)
		found |= g->ibdev == ibdev;
	mutex_unlock(&spindle_groups_lock);
	return found;
}

void spindle_ring_doorbell(struct spindle_group *g)
{
	atomic_set(&g->doorbell, 1);
	if (g->thread)
		wake_up_process(g->thread);
}

/* rxe calls this with its CQ lock held: wake the thread, nothing more */
static void spindle_cq_event(struct ib_cq *cq, void *ctx)
{
	trace_spindle_cq_event(((struct spindle_group *)ctx)->id);
	spindle_ring_doorbell(ctx);
}

/*
 * The CQ itself broke (an overrun): completions were lost, so nothing on
 * it can be trusted.  Maybe from interrupt context: the predicate thread
 * stops this member.  The first event is kept and logged; an overrun
 * reports itself again for every completion it loses.
 */
static void spindle_cq_async_event(struct ib_event *ev, void *ctx)
{
	struct spindle_group *g = ctx;

	if (cmpxchg(&g->cq_event, SPINDLE_CQ_FINE, ev->event) != SPINDLE_CQ_FINE)
		return;
	pr_err("group %u: completion queue: %s\n", g->id, ib_event_msg(ev->event));
	spindle_ring_doorbell(g);
}

#define SPINDLE_GS(s)	(1U << SPINDLE_GROUP_##s)
/* the states a group may go to from each */
static const u32 spindle_group_next[] = {
	[SPINDLE_GROUP_CONNECTING] = SPINDLE_GS(ACTIVE) | SPINDLE_GS(VIEW_CHANGE) |
				     SPINDLE_GS(FAILED) | SPINDLE_GS(DOWN),
	[SPINDLE_GROUP_ACTIVE] = SPINDLE_GS(VIEW_CHANGE) | SPINDLE_GS(FAILED) |
				 SPINDLE_GS(DOWN),
	[SPINDLE_GROUP_VIEW_CHANGE] = SPINDLE_GS(VIEW_CHANGE) | SPINDLE_GS(ACTIVE) |
				      SPINDLE_GS(FAILED) | SPINDLE_GS(DOWN),
	[SPINDLE_GROUP_FAILED] = SPINDLE_GS(DOWN),
	[SPINDLE_GROUP_DOWN] = 0,
};

/* May a group in state @from go to @to? */
static bool spindle_group_may(enum spindle_group_state from, enum spindle_group_state to)
{
	return from >= SPINDLE_GROUP_CONNECTING && from <= SPINDLE_GROUP_VIEW_CHANGE &&
	       (spindle_group_next[from] & (1U << to));
}

/*
 * Tell every subgroup's waiters and consumers the group's state, as it is
 * now (two changes that race both end with the latest one told).
 */
static void spindle_group_notify(struct spindle_group *g)
{
	enum spindle_group_state state = READ_ONCE(g->state);
	u32 s;

	for (s = 0; s < g->cfg.nsubgroups; s++) {
		struct spindle_subgroup *sub = g->subs[s];
		struct spindle_consumer *c;

		if (!sub)
			continue;
		WRITE_ONCE(sub->state, state);
		spin_lock(&sub->cons_lock);
		list_for_each_entry(c, &sub->consumers, node)
			if (c->ops->state_change)
				c->ops->state_change(c, c->priv, state);
		spin_unlock(&sub->cons_lock);
		wake_up_all(&sub->send_wq);
		wake_up_all(&sub->recv_wq);
	}
}

/* Move @g to @to if that is a legal step; the caller tells the subgroups. */
static bool spindle_group_step(struct spindle_group *g, enum spindle_group_state to)
{
	lockdep_assert_held(&g->peer_lock);
	if (!spindle_group_may(g->state, to))
		return false;
	WRITE_ONCE(g->state, to);
	return true;
}

/**
 * spindle_group_move - the one place a group's state changes
 * @g: group
 * @to: the state it goes to
 *
 * A group moves only along its legal steps: a failed group, say, never
 * becomes active again, whoever tries to make it so after it failed.
 * Context: any (takes peer_lock); subgroups are told outside it.
 * Return: whether it moved.
 */
bool spindle_group_move(struct spindle_group *g, enum spindle_group_state to)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&g->peer_lock, flags);
	ok = spindle_group_step(g, to);
	spin_unlock_irqrestore(&g->peer_lock, flags);
	if (ok)
		spindle_group_notify(g);
	return ok;
}

/**
 * spindle_group_fail - a member failed or wrote something we rejected
 * @g: group
 * @member_idx: member index, or -1
 * @why: for the log
 *
 * The group stops publishing and receiving; what was already stable is
 * still delivered.  (View changes are what take a group past a failure.)
 */
void spindle_group_fail(struct spindle_group *g, s32 member_idx,
			const char *why)
{
	unsigned long flags;
	bool first;

	/* a group whose views run fails through the view change instead */
	spin_lock_irqsave(&g->peer_lock, flags);
	first = !g->stopping && g->state != SPINDLE_GROUP_VIEW_CHANGE &&
		spindle_group_step(g, SPINDLE_GROUP_FAILED);
	if (first && member_idx >= 0)
		g->fault_member = g->cfg.members[member_idx].id;
	spin_unlock_irqrestore(&g->peer_lock, flags);
	if (!first)
		return;
	/* a cause of this member's own says so as a view change would */
	if (member_idx < 0)
		pr_warn("group %u: this member stops: %s: no more sends in this group\n",
			g->id, why);
	else
		pr_warn("group %u: member %u failed (%s): no more sends in this group\n",
			g->id, g->cfg.members[member_idx].id, why);
	spindle_group_notify(g);
	spindle_ring_doorbell(g);
}

/* Called by the kthread: all peers READY makes the group ACTIVE. */
void spindle_group_check_active(struct spindle_group *g)
{
	u32 i;

	if (READ_ONCE(g->state) != SPINDLE_GROUP_CONNECTING || READ_ONCE(g->vc_on))
		return;
	for (i = 0; i < g->cfg.nmembers; i++)
		if (i != g->me && READ_ONCE(g->peers[i]->state) != SPINDLE_PEER_READY)
			return;
	/*
	 * A peer that had started a view when it connected to us ran on
	 * without this incarnation: we join (spindle_view_joining(), once its
	 * row is here), never start view 1 on our own.
	 */
	for (i = 0; i < g->cfg.nmembers; i++)
		if (i != g->me && g->peers[i]->kc &&
		    READ_ONCE(g->peers[i]->kc->peer_in_view))
			return;
	spindle_fault_hold_thread(SPINDLE_HOLD_ACTIVE, g);
	if (READ_ONCE(g->cq_event) != SPINDLE_CQ_FINE)
		return;		/* the next pass stops this member */
	if (!spindle_group_move(g, SPINDLE_GROUP_ACTIVE))
		return;		/* it failed meanwhile */
	pr_info("group %u: all %u members connected\n", g->id, g->cfg.nmembers);
	spindle_view_start(g);
}

static struct spindle_region *spindle_alloc_mapped(struct spindle_group *g,
						   size_t size, int *err)
{
	struct spindle_region *reg = spindle_region_alloc(size);

	if (!reg) {
		*err = -ENOMEM;
		return NULL;
	}
	g->pinned += reg->size;
	if (g->cfg.nmembers > 1) {
		*err = spindle_region_dma_map(reg, g->ibdev,
					      g->ibdev->attrs.max_fast_reg_page_list_len);
		if (*err) {
			spindle_region_put(reg);
			return NULL;
		}
	}
	return reg;
}

/* The subgroup object for configuration index @s (this node is a member). */
static int spindle_sub_create(struct spindle_group *g, u32 s)
{
	const struct sp_sub_cfg *sc = &g->cfg.subgroups[s];
	u32 me_id = g->cfg.self_id;
	struct spindle_subgroup *sub;
	u32 m, r;
	int ret;

	sub = kzalloc(sizeof(*sub), GFP_KERNEL);
	if (!sub)
		return -ENOMEM;
	kref_init(&sub->ref);
	spin_lock_init(&sub->lock);
	spin_lock_init(&sub->cons_lock);
	init_waitqueue_head(&sub->send_wq);
	init_waitqueue_head(&sub->recv_wq);
	INIT_LIST_HEAD(&sub->consumers);
	RCU_INIT_POINTER(sub->g, g);
	sub->index = s;
	sub->id = sc->id;
	sub->group_id = g->id;
	sub->self_id = me_id;
	sub->state = g->state;
	sub->minor = -1;
	sub->cfg = *sc;
	g->subs[s] = sub;

	ret = sp_sub_init(&sub->eng, &g->cfg, s);
	if (ret)
		return ret;
	spindle_sub_init_view(sub);
	sub->batch = kvcalloc(sub->eng.log_size, sizeof(*sub->batch), GFP_KERNEL);
	sub->descs = kvcalloc(sub->eng.log_size, sizeof(*sub->descs), GFP_KERNEL);
	if (!sub->batch || !sub->descs)
		return -ENOMEM;

	for (m = 0; m < sc->nmembers; m++) {
		u32 idx = sp_cfg_member_index(&g->cfg, sc->members[m]);
		void *base = idx == g->me ? g->out_meta->vaddr : g->in_meta[idx]->vaddr;

		sub->member_idx[m] = idx;
		sub->eng.blocks[m] = base + g->layout[idx].block_off[s];
	}
	for (r = 0; r < sc->nsenders; r++) {
		u32 idx = sp_cfg_member_index(&g->cfg, sc->senders[r]);
		struct spindle_region **slot = idx == g->me ? &g->out_pay[s] :
					       &g->in_pay[idx][s];
		void *base = idx == g->me ? g->out_meta->vaddr : g->in_meta[idx]->vaddr;

		sub->rank_id[r] = sc->senders[r];
		sub->eng.hdrs[r] = base + g->layout[idx].hdr_off[s];
		*slot = spindle_alloc_mapped(g, sp_sub_ring_bytes(&sub->eng), &ret);
		if (!*slot)
			return ret;
		kref_get(&(*slot)->ref);
		sub->pay[r] = *slot;
	}
	return 0;
}

/*
 * Charge the group's memory (it stays resident, and processes map it) to
 * RLIMIT_MEMLOCK of the user who brings it up, as io_uring does for its
 * rings; CAP_IPC_LOCK is exempt.
 */
static int spindle_account(struct spindle_group *g)
{
	unsigned long pages = PAGE_ALIGN(g->pinned) >> PAGE_SHIFT;
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct user_struct *user;
	unsigned long cur, new;

	if (capable(CAP_IPC_LOCK))
		return 0;
	user = get_uid(current_user());
	do {
		cur = atomic_long_read(&user->locked_vm);
		new = cur + pages;
		if (new > limit) {
			pr_warn("group %u: needs %lu KiB of locked memory; RLIMIT_MEMLOCK allows %lu KiB, %lu KiB already in use\n",
				g->id, pages << (PAGE_SHIFT - 10),
				limit << (PAGE_SHIFT - 10), cur << (PAGE_SHIFT - 10));
			free_uid(user);
			return -ENOMEM;
		}
	} while (atomic_long_cmpxchg(&user->locked_vm, cur, new) != cur);
	g->user = user;
	g->charged = pages;
	return 0;
}

static void spindle_unaccount(struct spindle_group *g)
{
	if (!g->user)
		return;
	atomic_long_sub(g->charged, &g->user->locked_vm);
	free_uid(g->user);
	g->user = NULL;
}

/* Every member must run the same configuration: all of it but self_id. */
static u32 spindle_cfg_hash(const struct sp_group_cfg *cfg)
{
	const size_t self = offsetof(struct sp_group_cfg, self_id);
	const u32 zero = 0;
	u32 crc;

	crc = crc32_le(~0U, (const u8 *)cfg, self);
	crc = crc32_le(crc, (const u8 *)&zero, sizeof(zero));
	return crc32_le(crc, (const u8 *)cfg + self + sizeof(zero),
			sizeof(*cfg) - self - sizeof(zero));
}

static void spindle_group_free(struct spindle_group *g)
{
	struct spindle_conn *conn, *tmp;
	u32 i, s;

	if (g->cq)
		ib_destroy_cq(g->cq);
	/* nothing can name them once the CQ is gone */
	list_for_each_entry_safe(conn, tmp, &g->zombies, node)
		spindle_conn_free(conn);
	for (i = 0; i < SP_MAX_MEMBERS; i++)
		spindle_peer_free(g->peers[i]);
	for (s = 0; s < SP_MAX_SUBGROUPS; s++) {
		struct spindle_subgroup *sub = g->subs[s];

		if (!sub)
			continue;
		spindle_subdev_del(sub);
		spin_lock_bh(&sub->lock);
		RCU_INIT_POINTER(sub->g, NULL);
		spin_unlock_bh(&sub->lock);
		spindle_subgroup_put(sub);
	}
	/* spindle_sub_kick() may still be looking at the group */
	synchronize_rcu();
	/* regions: drop the group's references; DMA mappings go with the device */
	for (s = 0; s < SP_MAX_SUBGROUPS; s++) {
		if (g->out_pay[s])
			spindle_region_dma_unmap(g->out_pay[s]);
		spindle_region_put(g->out_pay[s]);
		for (i = 0; i < SP_MAX_MEMBERS; i++) {
			if (g->in_pay[i][s])
				spindle_region_dma_unmap(g->in_pay[i][s]);
			spindle_region_put(g->in_pay[i][s]);
		}
	}
	for (i = 0; i < SP_MAX_MEMBERS; i++)
		spindle_region_put(g->in_meta[i]);
	spindle_region_put(g->out_meta);
	/* nothing of it is on its device any more */
	if (!list_empty(&g->node)) {
		mutex_lock(&spindle_groups_lock);
		list_del(&g->node);
		mutex_unlock(&spindle_groups_lock);
		wake_up_all(&spindle_groups_left);
	}
	spindle_view_free(g);
	spindle_unaccount(g);
	if (g->thread)
		put_task_struct(g->thread);
	kfree(g);
}

/*
 * What the group needs of its device: fast registration, and queues deep
 * enough for every connection it may have at once.  Sets *cqe.
 */
static int spindle_device_fits(struct spindle_group *g, u32 npeers, u32 *cqe)
{
	const struct ib_device_attr *a = &g->ibdev->attrs;
	u32 want = npeers * SPINDLE_PEER_CONNS * SPINDLE_CONN_CQES + 16;
	const char *lack = NULL;

	/* every counter push is a write with immediate: the peer's doorbell */
	if (rdma_protocol_iwarp(g->ibdev, g->listen_id->port_num))
		lack = "RDMA write with immediate (iWARP has none)";
	else if (!(a->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) ||
		 !a->max_fast_reg_page_list_len)
		lack = "fast memory registration";
	else if (a->max_qp_wr < SPINDLE_SQ_DEPTH + 1 ||
		 a->max_qp_wr < SPINDLE_RQ_DEPTH + SPINDLE_DOORBELLS + 1)
		lack = "deep enough queue pairs";
	else if (a->max_cqe < npeers * SPINDLE_CONN_CQES + 16)
		lack = "a completion queue this deep";
	else if (a->max_pd < npeers * SPINDLE_PEER_CONNS ||
		 a->max_qp < npeers * SPINDLE_PEER_CONNS)
		lack = "enough PDs and QPs";
	if (lack) {
		pr_warn("group %u: %s lacks %s for %u peers\n", g->id,
			dev_name(&g->ibdev->dev), lack, npeers);
		return -EOPNOTSUPP;
	}
	if (want > (u32)a->max_cqe) {
		pr_warn("group %u: %s completion queues hold %d entries, not %u: reconnections must not pile up\n",
			g->id, dev_name(&g->ibdev->dev), a->max_cqe, want);
		want = a->max_cqe;
	}
	*cqe = spindle_fault_cq_entries(want, g->id);
	return 0;
}

/*
 * The group's predicate thread, created stopped: spindle_group_up() wakes
 * it once the group is on the list.  g->thread is set only on success, so
 * nothing (a doorbell from a CQ event) ever sees an error pointer there.
 * Noinline and injectable: debugfs fail_function makes it fail
 * (selftests/fail_inject.sh).
 */
static noinline int spindle_thread_create(struct spindle_group *g)
{
	struct task_struct *thread;

	thread = kthread_create(spindle_thread_fn, g, "spindle/%u", g->id);
	if (IS_ERR(thread))
		return PTR_ERR(thread);
	get_task_struct(thread);
	g->thread = thread;
	return 0;
}

ALLOW_ERROR_INJECTION(spindle_thread_create, ERRNO);

/* A group of @cfg, CONNECTING, with nothing made yet. */
static struct spindle_group *spindle_group_alloc(const struct sp_group_cfg *cfg)
{
	struct spindle_group *g = kzalloc(sizeof(*g), GFP_KERNEL);

	if (!g)
		return NULL;
	INIT_LIST_HEAD(&g->node);
	g->cfg = *cfg;
	g->id = cfg->group_id;
	g->me = sp_cfg_member_index(cfg, cfg->self_id);
	g->cfg_hash = spindle_cfg_hash(cfg);
	g->fault_member = -1;
	g->cq_event = SPINDLE_CQ_FINE;
	g->state = SPINDLE_GROUP_CONNECTING;
	spin_lock_init(&g->peer_lock);
	INIT_LIST_HEAD(&g->zombies);
	init_waitqueue_head(&g->pass_wq);
	atomic_set(&g->doorbell, 0);
	return g;
}

/* The completion queue every connection shares (none for a group of one). */
static int spindle_group_cq(struct spindle_group *g, u32 npeers)
{
	struct ib_cq_init_attr attr = {};
	int ret;

	if (!npeers)
		return 0;
	ret = spindle_device_fits(g, npeers, &attr.cqe);
	if (ret)
		return ret;
	g->cq = ib_create_cq(g->ibdev, spindle_cq_event, spindle_cq_async_event,
			     g, &attr);
	if (IS_ERR(g->cq)) {
		ret = PTR_ERR(g->cq);
		g->cq = NULL;
	}
	return ret;
}

/* Every member's row and view area: mine to push, the others' to read. */
static int spindle_group_meta(struct spindle_group *g)
{
	const struct sp_group_cfg *cfg = &g->cfg;
	struct spindle_region **r;
	int ret = 0;
	u32 i;

	for (i = 0; i < cfg->nmembers; i++) {
		sp_meta_layout(cfg, cfg->members[i].id, &g->layout[i], PAGE_SIZE);
		r = i == g->me ? &g->out_meta : &g->in_meta[i];
		*r = spindle_alloc_mapped(g, g->layout[i].size, &ret);
		if (!*r)
			return ret;
	}
	return 0;
}

/* The view state, the subgroups this node is in, and a peer per member. */
static int spindle_group_parts(struct spindle_group *g)
{
	const struct sp_group_cfg *cfg = &g->cfg;
	u32 i, s;
	int ret;

	ret = spindle_view_init(g);
	if (ret)
		return ret;
	for (s = 0; s < cfg->nsubgroups; s++) {
		if (sp_sub_member_pos(&cfg->subgroups[s], cfg->self_id) < 0)
			continue;
		ret = spindle_sub_create(g, s);
		if (ret)
			return ret;
	}
	for (i = 0; i < cfg->nmembers; i++) {
		if (i == g->me)
			continue;
		ret = spindle_peer_init(g, i);
		if (ret)
			return ret;
	}
	return 0;
}

/* A /dev/spindleN for each of its subgroups. */
static int spindle_group_devices(struct spindle_group *g)
{
	u32 s;
	int ret;

	for (s = 0; s < g->cfg.nsubgroups; s++) {
		if (!g->subs[s])
			continue;
		ret = spindle_subdev_add(g->subs[s]);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The thread, then the listener: from then on requests may arrive, and
 * everything they touch exists.  On failure nothing of either is left.
 */
static int spindle_group_run(struct spindle_group *g)
{
	int ret;

	ret = spindle_thread_create(g);
	if (ret)
		return ret;
	ret = spindle_listen(g);
	if (ret) {
		kthread_stop(g->thread);
		WRITE_ONCE(g->thread_stopped, true);
	}
	return ret;
}

/* Up and on the list: the thread runs, the active sides connect. */
static void spindle_group_go(struct spindle_group *g)
{
	u32 i;

	if (g->cfg.nmembers == 1)
		spindle_group_move(g, SPINDLE_GROUP_ACTIVE);
	list_add_tail(&g->node, &spindle_groups);
	spindle_fault_init(g);
	spindle_debugfs_add(g);
	wake_up_process(g->thread);
	for (i = 0; i < g->cfg.nmembers; i++)
		if (i != g->me)
			spindle_peer_start(g->peers[i]);
	pr_info("group %u up: member %u of %u, %u subgroup(s), on %s\n", g->id,
		g->cfg.self_id, g->cfg.nmembers, g->cfg.nsubgroups,
		dev_name(&g->ibdev->dev));
}

/**
 * spindle_group_up - create a group from a validated configuration
 * @cfg: the configuration, self_id resolved and validated
 * @self: this member's address
 * @out: the group
 *
 * Caller holds spindle_groups_lock and checked that the id is free.
 * Return: 0 or -errno; -ENODEV when no RDMA device has @self.
 */
int spindle_group_up(struct sp_group_cfg *cfg, struct sockaddr_storage *self,
		     struct spindle_group **out)
{
	struct spindle_group *g;
	int ret;

	lockdep_assert_held(&spindle_groups_lock);
	g = spindle_group_alloc(cfg);
	if (!g)
		return -ENOMEM;
	ret = spindle_bind(g, self);
	if (!ret)
		ret = spindle_group_cq(g, cfg->nmembers - 1);
	if (!ret)
		ret = spindle_group_meta(g);
	if (!ret)
		ret = spindle_group_parts(g);
	if (!ret)
		ret = spindle_account(g);
	if (!ret)
		ret = spindle_group_devices(g);
	if (!ret) {
		spindle_fault_hold(SPINDLE_HOLD_UP, g->id);
		ret = spindle_group_run(g);
	}
	if (ret)
		goto fail;
	spindle_group_go(g);
	*out = g;
	return 0;
fail:
	/* no connection was made: nothing to drain */
	WRITE_ONCE(g->stopping, true);
	WRITE_ONCE(g->thread_stopped, true);
	/* files opened on its devices meanwhile see it go (POLLHUP, ENOTCONN) */
	spindle_group_move(g, SPINDLE_GROUP_DOWN);
	if (g->listen_id)
		rdma_destroy_id(g->listen_id);
	spindle_group_free(g);
	return ret;
}

/**
 * spindle_group_owes - has a subgroup still something to push?
 * @g: group
 * @who: to which members (indices), of those whose connection is ready
 * @lazy: count lazy changes of the engines' blocks too (sp_sub_due()):
 *	what consumers released, which the others need only to reuse slots
 *
 * Return: whether any subgroup's engine has output for one of them.
 */
bool spindle_group_owes(struct spindle_group *g, sp_mask_t who, bool lazy)
{
	u32 s, m;

	for (s = 0; s < g->cfg.nsubgroups; s++) {
		struct spindle_subgroup *sub = g->subs[s];

		for (m = 0; sub && m < sub->eng.nmembers; m++) {
			u32 idx = sub->member_idx[m];

			if (m != sub->eng.me && sp_mask_has(who, idx) &&
			    spindle_peer_ready(g->peers[idx]) &&
			    (lazy ? sp_sub_has_output(&sub->eng, m) :
			     sp_sub_due(&sub->eng, m, false)))
				return true;
		}
	}
	return false;
}

/* Nothing left to push and every posted write completed. */
static bool spindle_group_drained(struct spindle_group *g)
{
	u32 i;

	if (spindle_group_owes(g, ~(sp_mask_t)0, true))
		return false;
	for (i = 0; i < g->cfg.nmembers; i++) {
		struct spindle_peer *peer = g->peers[i];

		if (i != g->me && spindle_peer_ready(peer) &&
		    READ_ONCE(peer->kc_inflight))
			return false;
	}
	return true;
}

/*
 * Have the others caught up with this node (sp_sub_caught_up(), in every
 * subgroup, with every peer still connected)?  Read while the kthread
 * runs: a hint, re-read until it holds.
 */
static bool spindle_group_settled(struct spindle_group *g)
{
	u32 s, m;

	if (READ_ONCE(g->state) != SPINDLE_GROUP_ACTIVE)
		return true;
	for (s = 0; s < g->cfg.nsubgroups; s++) {
		struct spindle_subgroup *sub = g->subs[s];

		if (!sub)
			continue;
		for (m = 0; m < sub->eng.nmembers; m++)
			if (m != sub->eng.me &&
			    spindle_peer_ready(g->peers[sub->member_idx[m]]) &&
			    !sp_sub_caught_up(&sub->eng, m))
				return false;
	}
	return true;
}

/**
 * spindle_group_down - tear a group down
 * @g: group, taken off the list with spindle_group_leave()
 * @timeout_ms: how long the others may take to catch up with this node,
 *	and its writes in flight to reach them
 */
void spindle_group_down(struct spindle_group *g, unsigned int timeout_ms)
{
	unsigned long deadline, flags;
	struct rdma_cm_id *id;
	u32 i;

	spindle_fault_hold(SPINDLE_HOLD_DOWN, g->id);
	deadline = jiffies + msecs_to_jiffies(timeout_ms);
	/* leave once the others have what this node has (within the timeout) */
	while (!spindle_group_settled(g) && time_before(jiffies, deadline)) {
		spindle_ring_doorbell(g);
		usleep_range(1000, 2000);
	}
	spindle_debugfs_del(g);
	spin_lock_irqsave(&g->peer_lock, flags);
	WRITE_ONCE(g->stopping, true);
	spin_unlock_irqrestore(&g->peer_lock, flags);
	spindle_ring_doorbell(g);
	while (!spindle_group_drained(g) && time_before(jiffies, deadline)) {
		spindle_ring_doorbell(g);
		usleep_range(500, 1000);
	}
	/* no request is handled after this (unless rdma_cm took it already) */
	id = xchg(&g->listen_id, NULL);
	if (id)
		rdma_destroy_id(id);
	/* every connection drained while the thread still polls the CQ */
	for (i = 0; i < SP_MAX_MEMBERS; i++)
		spindle_peer_stop(g->peers[i], "group down");
	kthread_stop(g->thread);	/* we hold a reference on the task */
	WRITE_ONCE(g->thread_stopped, true);
	spindle_group_move(g, SPINDLE_GROUP_DOWN);
	pr_info("group %u down\n", g->id);
	spindle_group_free(g);
}

/* The first group that is up on @ibdev (any device if NULL), taken off the list. */
static struct spindle_group *spindle_group_take(struct ib_device *ibdev)
{
	struct spindle_group *g, *found = NULL;

	mutex_lock(&spindle_groups_lock);
	list_for_each_entry(g, &spindle_groups, node) {
		if (!ibdev || g->ibdev == ibdev) {
			found = g;
			spindle_group_leave(g);
			break;
		}
	}
	mutex_unlock(&spindle_groups_lock);
	return found;
}

/**
 * spindle_group_remove_device - an RDMA device is going away
 * @ibdev: the device, no longer on the ib_client's list
 *
 * Every group on it is torn down, and those others were taking down are
 * waited for, before the RDMA core goes on.
 */
void spindle_group_remove_device(struct ib_device *ibdev)
{
	struct spindle_group *g;

	while ((g = spindle_group_take(ibdev))) {
		pr_warn("group %u: RDMA device %s removed\n", g->id,
			dev_name(&ibdev->dev));
		spindle_group_down(g, 0);
	}
	wait_event(spindle_groups_left, !spindle_groups_leaving_on(ibdev));
}

/**
 * spindle_group_down_all - take every group down (module unload)
 * @timeout_ms: as for spindle_group_down()
 */
void spindle_group_down_all(unsigned int timeout_ms)
{
	struct spindle_group *g;

	while ((g = spindle_group_take(NULL)))
		spindle_group_down(g, timeout_ms);
}
