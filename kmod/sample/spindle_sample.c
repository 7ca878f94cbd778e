// SPDX-License-Identifier: GPL-2.0
/*
 * spindle_sample: a kernel consumer of Spindle's exported API, as a storage
 * driver would use it.  Loaded on the members of a group that is up, it
 * sends @count messages of @size bytes (if this node sends in the
 * subgroup), each built in place in its slot, and checks every delivered
 * message: its sender's pattern, FIFO per sender, and (ordered mode)
 * increasing sequence numbers.  Progress is in its read-only parameters:
 *
 *   /sys/module/spindle_sample/parameters/{sent,delivered,errors}
 *
 * With softirq=1 it marks its slots ready and gives deliveries back from a
 * timer, in softirq context, as a driver's completion path would: the API
 * says spindle_mark_ready() and spindle_release() may be called there.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/kthread.h>
#include <linux/jiffies.h>
#include <linux/delay.h>
#include <linux/timer.h>
#include <linux/spindle.h>
#include "spindle_kapi.h"

static uint group = 1;
module_param(group, uint, 0444);
MODULE_PARM_DESC(group, "group id");
static uint subgroup;
module_param(subgroup, uint, 0444);
MODULE_PARM_DESC(subgroup, "subgroup id");
static uint count = 100;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "messages to send");
static uint size = 64;
module_param(size, uint, 0444);
MODULE_PARM_DESC(size, "bytes per message");
static bool softirq;
module_param(softirq, bool, 0444);
MODULE_PARM_DESC(softirq, "mark ready and release from a timer (softirq context)");

static ulong sent;
module_param(sent, ulong, 0444);
MODULE_PARM_DESC(sent, "messages sent so far");
static ulong delivered;
module_param(delivered, ulong, 0444);
MODULE_PARM_DESC(delivered, "messages delivered so far");
static ulong errors;
module_param(errors, ulong, 0444);
MODULE_PARM_DESC(errors, "delivered messages that failed a check");

static struct spindle_subgroup *sub;
static struct spindle_consumer *cons;
static struct task_struct *sender;
static struct spindle_subgroup_attr attr;
static u64 next_k[SPINDLE_MAX_MEMBERS];
static u64 last_seq;

/*
 * softirq=1: the sender thread fills slots and publishes how far it got
 * (filled); the timer marks them ready, and gives back what ->deliver
 * counted (to_release).  Positions are consecutive: one reservation
 * follows the last.
 */
static struct timer_list kick;
static u64 first_pos;
static atomic64_t filled;
static u64 marked;
static atomic_t to_release;
static atomic_t mark_errors;

static u8 sample_byte(u32 rank, u64 k, u32 i)
{
	return (u8)(rank * 131u + (u32)k * 7u + i * 13u);
}

static void sample_deliver(struct spindle_consumer *c, void *priv,
			   const struct spindle_msg *msgs, unsigned int n)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		const struct spindle_msg *m = &msgs[i];
		const u8 *p = m->data;
		bool bad = m->rank >= SPINDLE_MAX_MEMBERS || m->len != size ||
			   (attr.mode == SPINDLE_MODE_ORDERED && delivered &&
			    m->seq <= last_seq);

		for (j = 0; !bad && j < m->len; j++)
			bad = p[j] != sample_byte(m->rank, next_k[m->rank], j);
		if (bad && errors++ < 5)
			pr_warn("bad delivery: seq %llu rank %u index %llu len %u\n",
				m->seq, m->rank, m->index, m->len);
		if (m->rank < SPINDLE_MAX_MEMBERS)
			next_k[m->rank]++;
		last_seq = m->seq;
		WRITE_ONCE(delivered, delivered + 1);
	}
	/* read in place, done at once: give the slots back */
	if (softirq)
		atomic_add(n, &to_release);
	else
		spindle_release(c, n);
}

/* softirq=1: what the thread filled goes out, what was read goes back */
static void sample_kick(struct timer_list *t)
{
	u64 end = atomic64_read_acquire(&filled);
	int n = atomic_xchg(&to_release, 0);

	for (; marked < end; marked++)
		if (spindle_mark_ready(sub, first_pos + marked, size))
			atomic_inc(&mark_errors);
	if (n)
		spindle_release(cons, n);
	mod_timer(&kick, jiffies + 1);
}

static const struct spindle_consumer_ops sample_ops = {
	.deliver = sample_deliver,
};

static const struct spindle_consumer_cfg sample_cfg = {
	.ops = &sample_ops,
};

static int sample_send(void *unused)
{
	u64 k = 0;

	while (k < count && !kthread_should_stop()) {
		u64 first;
		int n, i;
		u32 j;

		n = spindle_reserve(sub, min_t(u64, count - k, attr.window), &first,
				    msecs_to_jiffies(1000));
		if (n == -ETIMEDOUT || n == -EAGAIN || n == -ERESTARTSYS)
			continue;
		if (n < 0) {
			pr_warn("reserve failed: %d\n", n);
			break;
		}
		if (!k)
			first_pos = first;
		if (first != first_pos + k) {
			pr_warn("reservation at %llu, not %llu\n", first, first_pos + k);
			break;
		}
		for (i = 0; i < n; i++, k++) {
			u8 *p = spindle_slot(sub, first + i);

			for (j = 0; j < size; j++)
				p[j] = sample_byte(attr.my_rank, k, j);
			if (softirq) {
				/* the timer marks it: the slot is written first */
				atomic64_set_release(&filled, k + 1);
			} else if (spindle_mark_ready(sub, first + i, size)) {
				pr_warn("mark_ready failed\n");
				goto out;
			}
			WRITE_ONCE(sent, sent + 1);
		}
	}
out:
	while (!kthread_should_stop())
		msleep(20);
	return 0;
}

static int __init sample_init(void)
{
	sub = spindle_subgroup_get(group, subgroup);
	if (!sub) {
		pr_err("no subgroup %u of group %u on this node\n", subgroup, group);
		return -ENODEV;
	}
	spindle_subgroup_attr(sub, &attr);
	if (!size || size > attr.max_msg) {
		spindle_subgroup_put(sub);
		return -EINVAL;
	}
	cons = spindle_attach(sub, &sample_cfg);
	if (IS_ERR(cons)) {
		spindle_subgroup_put(sub);
		return PTR_ERR(cons);
	}
	if (softirq) {
		timer_setup(&kick, sample_kick, 0);
		mod_timer(&kick, jiffies + 1);
	}
	if (attr.my_rank >= 0 && count) {
		sender = kthread_run(sample_send, NULL, "spindle_sample");
		if (IS_ERR(sender)) {
			if (softirq)
				del_timer_sync(&kick);
			spindle_detach(cons);
			spindle_subgroup_put(sub);
			return PTR_ERR(sender);
		}
	}
	pr_info("group %u subgroup %u: rank %d, sending %u messages of %u bytes%s\n",
		group, subgroup, attr.my_rank, attr.my_rank >= 0 ? count : 0, size,
		softirq ? ", marking and releasing in softirq" : "");
	return 0;
}

static void __exit sample_exit(void)
{
	if (sender)
		kthread_stop(sender);
	if (softirq) {
		del_timer_sync(&kick);
		if (atomic_read(&mark_errors))
			pr_warn("%d slots not marked ready\n", atomic_read(&mark_errors));
	}
	spindle_detach(cons);
	spindle_subgroup_put(sub);
	pr_info("sent %lu, delivered %lu, errors %lu\n", sent, delivered, errors);
}

module_init(sample_init);
module_exit(sample_exit);

MODULE_AUTHOR("The Spindle developers");
MODULE_DESCRIPTION("Sample kernel consumer of Spindle's multicast API");
MODULE_LICENSE("GPL");
