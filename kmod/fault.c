// SPDX-License-Identifier: GPL-2.0
/*
 * Testing only: phase-exact faults in view changes.  Root arms one per
 * group through debugfs:
 *
 *	echo "committed die" >/sys/kernel/debug/spindle/group<ID>/fault
 *
 * names a point this member reaches in a view change (enum
 * spindle_fault_point: wedged, proposed, echoed, committed, drained,
 * ready, joining; or now, the next pass) and what it does there:
 *   silent  from then on nothing more leaves it (no row, heartbeat or
 *           message); its connections stay up, so the others must find
 *           it by its heartbeat;
 *   die     silent, and DIE_AFTER_MS later every connection goes down,
 *           as the peers see a host that crashed;
 *   stall MS  silent for MS milliseconds, then it goes on as if nothing
 *           happened: a live member that stopped long enough to be
 *           suspected (a false suspicion: "now stall 6000");
 *   short   (proposed only) a faulty leader: the trim it proposes is half
 *           the right one, short of what its followers delivered, who
 *           must refuse it; otherwise it goes on.  It fires as it
 *           proposes, before the proposal is posted.
 * The fault fires on the predicate pass after the point was reached, so
 * that what the point wrote (a proposal, an echo, a commit) was posted
 * first.  It fires once; "off" disarms one that has not fired.  Reading
 * the file says what is armed and whether it fired.  A one-member group
 * has no view change: arming it is EOPNOTSUPP.
 *
 * A group that gets somewhere before a test can arm its file (a member
 * that comes back joins within milliseconds of coming up) takes its fault
 * from the module parameter fault_new_groups instead, read when the group
 * comes up: the same "POINT ACTION".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "group.h"
#include "peer.h"
#include "hostile.h"
#include "fault.h"

#define DIE_AFTER_MS	200
#define STALL_MAX_MS	600000

/*
 * fault_new_groups, kept under a lock of its own: a group comes up with
 * spindle_groups_lock held, and must not take the parameter lock there.
 * Every module's parameter lock is one lock class, and a parameter write
 * that reaches spindle_groups_lock (spindle_blk's create knob does)
 * would close the cycle (lockdep said so on the debug kernel).
 */
static char fault_new_groups[32];
static DEFINE_SPINLOCK(fault_new_lock);

static int spindle_fault_new_set(const char *val, const struct kernel_param *kp)
{
	if (strlen(val) >= sizeof(fault_new_groups)) {
		pr_warn("fault_new_groups: longer than %zu bytes\n", sizeof(fault_new_groups) - 1);
		return -EINVAL;
	}
	spin_lock(&fault_new_lock);
	strscpy(fault_new_groups, val, sizeof(fault_new_groups));
	spin_unlock(&fault_new_lock);
	return 0;
}

static int spindle_fault_new_get(char *buf, const struct kernel_param *kp)
{
	int n;

	spin_lock(&fault_new_lock);
	n = sysfs_emit(buf, "%s\n", fault_new_groups);
	spin_unlock(&fault_new_lock);
	return n;
}

static const struct kernel_param_ops spindle_fault_new_ops = {
	.set = spindle_fault_new_set,
	.get = spindle_fault_new_get,
};
module_param_cb(fault_new_groups, &spindle_fault_new_ops, NULL, 0644);
MODULE_PARM_DESC(fault_new_groups, "Testing only: arm this phase-exact fault (\"POINT silent|die|short|stall MS\") in every group brought up from now on");

static const char *const spindle_fault_points[SPINDLE_FAULT_NPOINTS] = {
	[SPINDLE_FAULT_OFF] = "off",
	[SPINDLE_FAULT_WEDGED] = "wedged",
	[SPINDLE_FAULT_PROPOSED] = "proposed",
	[SPINDLE_FAULT_ECHOED] = "echoed",
	[SPINDLE_FAULT_COMMITTED] = "committed",
	[SPINDLE_FAULT_DRAINED] = "drained",
	[SPINDLE_FAULT_READY] = "ready",
	[SPINDLE_FAULT_JOINING] = "joining",
	[SPINDLE_FAULT_NOW] = "now",
};

static const char *const spindle_fault_actions[SPINDLE_FAULT_NACTIONS] = {
	[SPINDLE_FAULT_SILENT] = "silent",
	[SPINDLE_FAULT_DIE] = "die",
	[SPINDLE_FAULT_STALL] = "stall",
	[SPINDLE_FAULT_SHORT] = "short",
};

/**
 * spindle_fault_reached - this member reached point @p of a view change
 * @g: group
 * @p: the point
 *
 * Context: the predicate thread.
 */
void spindle_fault_reached(struct spindle_group *g, enum spindle_fault_point p)
{
	struct spindle_fault *f = &g->fault;

	/* pairs with the release in spindle_fault_write() */
	if (smp_load_acquire(&f->point) == p && !f->fired)
		f->reached = true;
}

/**
 * spindle_fault_short_trim - should the trim just proposed be cut short?
 * @g: group, right after spindle_fault_reached(g, SPINDLE_FAULT_PROPOSED)
 *
 * Context: the predicate thread.
 * Return: true once, if "proposed short" is armed: it fired.
 */
bool spindle_fault_short_trim(struct spindle_group *g)
{
	struct spindle_fault *f = &g->fault;

	if (!f->reached || f->action != SPINDLE_FAULT_SHORT)
		return false;
	f->reached = false;	/* it goes on: never again */
	f->fired_at = ktime_get_ns();
	WRITE_ONCE(f->fired, true);
	pr_warn("group %u: fault injection: member %u goes short at %s (view %llu, phase %d)\n",
		g->id, g->cfg.self_id, spindle_fault_points[f->point], g->vc.view, g->vc.phase);
	return true;
}

/**
 * spindle_fault_pass - fire a fault whose point was reached
 * @g: group
 * @now: ns
 *
 * Context: the predicate thread, at the start of a view pass.
 * Return: true while this member is silent (the pass does nothing more).
 */
bool spindle_fault_pass(struct spindle_group *g, u64 now)
{
	struct spindle_fault *f = &g->fault;
	u32 i;

	spindle_fault_reached(g, SPINDLE_FAULT_NOW);
	if (likely(!f->reached))
		return false;
	if (!f->fired) {
		WRITE_ONCE(f->fired, true);
		f->fired_at = now;
		WRITE_ONCE(g->hostile, SPINDLE_HOSTILE_SILENT);
		pr_warn("group %u: fault injection: member %u goes %s at %s (view %llu, phase %d)\n",
			g->id, g->cfg.self_id, spindle_fault_actions[f->action],
			spindle_fault_points[f->point], g->vc.view, g->vc.phase);
	}
	if (f->action == SPINDLE_FAULT_STALL &&
	    now - f->fired_at >= (u64)f->stall_ms * NSEC_PER_MSEC) {
		/* it fired: never again */
		f->reached = false;
		WRITE_ONCE(g->hostile, SPINDLE_HOSTILE_OFF);
		pr_warn("group %u: fault injection: member %u goes on after %u ms (view %llu, phase %d)\n",
			g->id, g->cfg.self_id, f->stall_ms, g->vc.view, g->vc.phase);
		return false;
	}
	if (f->action == SPINDLE_FAULT_DIE && !f->dropped &&
	    now - f->fired_at >= DIE_AFTER_MS * NSEC_PER_MSEC) {
		f->dropped = true;
		for (i = 0; i < g->cfg.nmembers; i++)
			if (i != g->me && g->peers[i] && g->peers[i]->kc)
				spindle_conn_down(g->peers[i]->kc, "fault injection: dies");
	}
	return true;
}

static int spindle_fault_show(struct seq_file *m, void *unused)
{
	struct spindle_group *g = m->private;
	struct spindle_fault *f = &g->fault;
	/* pairs with the release in spindle_fault_write(): then the action */
	u32 p = smp_load_acquire(&f->point);

	seq_printf(m, "%s", spindle_fault_points[p]);
	if (p != SPINDLE_FAULT_OFF)
		seq_printf(m, " %s", spindle_fault_actions[READ_ONCE(f->action)]);
	if (p != SPINDLE_FAULT_OFF && READ_ONCE(f->action) == SPINDLE_FAULT_STALL)
		seq_printf(m, " %u", READ_ONCE(f->stall_ms));
	if (p != SPINDLE_FAULT_OFF && READ_ONCE(f->fired))
		seq_puts(m, " (fired)");
	seq_puts(m, "\n");
	return 0;
}

static int spindle_fault_open(struct inode *inode, struct file *file)
{
	return single_open(file, spindle_fault_show, inode->i_private);
}

/* "POINT ACTION", "POINT stall MS" or "off" */
static int spindle_fault_parse(char *buf, u32 *point, u32 *action, u32 *stall_ms)
{
	char *p = strim(buf), *a = p, *ms;
	int i;

	strsep(&a, " \t");
	i = match_string(spindle_fault_points, SPINDLE_FAULT_NPOINTS, p);
	if (i < 0)
		return -EINVAL;
	*point = i;
	*action = SPINDLE_FAULT_SILENT;
	*stall_ms = 0;
	if (*point == SPINDLE_FAULT_OFF)
		return a && *skip_spaces(a) ? -EINVAL : 0;
	if (!a)
		return -EINVAL;
	a = skip_spaces(a);
	ms = a;
	strsep(&ms, " \t");
	i = match_string(spindle_fault_actions, SPINDLE_FAULT_NACTIONS, a);
	if (i < 0)
		return -EINVAL;
	*action = i;
	if (i == SPINDLE_FAULT_SHORT && *point != SPINDLE_FAULT_PROPOSED)
		return -EINVAL;	/* only a proposal has a trim to cut */
	if (i != SPINDLE_FAULT_STALL)
		return ms && *skip_spaces(ms) ? -EINVAL : 0;
	if (!ms || kstrtou32(skip_spaces(ms), 10, stall_ms) ||
	    !*stall_ms || *stall_ms > STALL_MAX_MS)
		return -EINVAL;
	return 0;
}

/**
 * spindle_fault_init - arm what fault_new_groups says in a new group
 * @g: a group coming up
 */
void spindle_fault_init(struct spindle_group *g)
{
	u32 point, action, stall_ms;
	char buf[32];

	spin_lock(&fault_new_lock);
	strscpy(buf, fault_new_groups, sizeof(buf));
	spin_unlock(&fault_new_lock);
	/* "echo >" leaves a newline: nothing armed, as for "" */
	if (!*strim(buf))
		return;
	if (spindle_fault_parse(buf, &point, &action, &stall_ms)) {
		pr_warn("group %u: fault_new_groups: want \"POINT silent|die|short|stall MS\" or \"off\"\n",
			g->id);
		return;
	}
	if (point != SPINDLE_FAULT_OFF && g->cfg.nmembers < 2) {
		pr_warn("group %u: fault_new_groups: a one-member group has no view change: not armed\n",
			g->id);
		return;
	}
	g->fault.action = action;
	g->fault.stall_ms = stall_ms;
	g->fault.point = point;
	if (point != SPINDLE_FAULT_OFF)
		pr_warn("group %u: fault injection armed: %s %s\n", g->id,
			spindle_fault_points[point], spindle_fault_actions[action]);
}

static ssize_t spindle_fault_write(struct file *file, const char __user *ubuf,
				   size_t len, loff_t *ppos)
{
	struct spindle_group *g = file_inode(file)->i_private;
	struct spindle_fault *f = &g->fault;
	u32 point, action, stall_ms;
	char buf[32];
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	ret = spindle_fault_parse(buf, &point, &action, &stall_ms);
	if (ret) {
		pr_warn("group %u: fault: want \"POINT silent|die|short|stall MS\" or \"off\"\n",
			g->id);
		return ret;
	}
	if (point != SPINDLE_FAULT_OFF && g->cfg.nmembers < 2) {
		pr_warn("group %u: fault: a one-member group has no view change\n", g->id);
		return -EOPNOTSUPP;
	}
	/* one fault per group; the thread reads it with no lock */
	if (READ_ONCE(f->fired) ||
	    (point != SPINDLE_FAULT_OFF && READ_ONCE(f->point) != SPINDLE_FAULT_OFF))
		return -EBUSY;
	WRITE_ONCE(f->action, action);
	WRITE_ONCE(f->stall_ms, stall_ms);
	/* the action before the point: the thread acquires the point */
	smp_store_release(&f->point, point);
	return len;
}

static const struct file_operations spindle_fault_fops = {
	.owner = THIS_MODULE,
	.open = spindle_fault_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = spindle_fault_write,
};

/*
 * "qp_event": the device reports an async event on this member's current
 * connection to member ID: echo "ID EVENT" (enum ib_event_type: 1 is
 * IB_EVENT_QP_FATAL).  Soft-RoCE raises no fatal QP event of its own
 * (selftests/mc_qp_event.sh).  The event goes through the QP's own
 * handler pointer, as a driver raises it: a QP made without a handler
 * gets nothing.  Under peer_lock, so the connection cannot be reaped
 * meanwhile; an HCA raises these from interrupt context anyway.
 */
static ssize_t spindle_qp_event_write(struct file *file, const char __user *ubuf,
				      size_t len, loff_t *ppos)
{
	struct spindle_group *g = file_inode(file)->i_private;
	struct spindle_peer *peer;
	struct ib_event ev = {};
	unsigned long flags;
	u32 id, event;
	char buf[32];
	int idx, ret = -ENOTCONN;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%u %u", &id, &event) != 2 || event > 31)
		return -EINVAL;
	idx = sp_cfg_member_index(&g->cfg, id);
	if (idx < 0 || (u32)idx == g->me)
		return -ENOENT;
	peer = g->peers[idx];
	spin_lock_irqsave(&g->peer_lock, flags);
	if (peer->cur && peer->cur->qp) {
		struct ib_qp *qp = peer->cur->qp;

		ev.device = qp->device;
		ev.element.qp = qp;
		ev.event = event;
		pr_warn("group %u: fault injection: %s on the QP of member %u\n",
			g->id, ib_event_msg(event), id);
		if (qp->event_handler)
			qp->event_handler(&ev, qp->qp_context);
		ret = 0;
	}
	spin_unlock_irqrestore(&g->peer_lock, flags);
	return ret ? ret : len;
}

static const struct file_operations spindle_qp_event_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = spindle_qp_event_write,
	.llseek = noop_llseek,
};

/**
 * spindle_fault_debugfs - add the group's "fault" and "qp_event" files
 * @g: group
 * @dir: its debugfs directory
 */
void spindle_fault_debugfs(struct spindle_group *g, struct dentry *dir)
{
	debugfs_create_file("fault", 0600, dir, g, &spindle_fault_fops);
	debugfs_create_file("qp_event", 0200, dir, g, &spindle_qp_event_fops);
}
