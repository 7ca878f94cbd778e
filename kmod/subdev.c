// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/spindleN: one character device per subgroup this node is in, a
 * client of the in-kernel API like any other.  The ABI and its rules are in
 * uapi/linux/spindle.h.
 *
 * A file becomes a consumer with its first RECV: from then on the predicate
 * thread appends descriptors to the file's queue, RECV copies them out and
 * holds them until the next RECV or close.  A file that can write may reserve slots; it
 * keeps them in a FIFO, marks them ready oldest first, and voids what is
 * left when it is closed.  Everything a file holds is given back when it
 * goes away, so a process that dies leaves the subgroup going.
 *
 * Mappings: the ring of sender rank r is at offset (r + 1) << 32; this
 * node's own ring may be mapped writable (MAP_SHARED, file open for
 * writing), every other ring only read-only, never upgradable.  Headers and
 * counters are never mapped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/fs.h>
#include <linux/cdev.h>
#include <linux/error-injection.h>
#include <linux/idr.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "spindle.h"
#include "subgroup.h"
#include "region.h"
#include "fault.h"
#include "spindle_compat.h"
#include "trace.h"

#define SPINDLE_MMAP_SHIFT	32

static dev_t spindle_devt;
static struct cdev spindle_cdev;
static DEFINE_MUTEX(spindle_minor_lock);
static DEFINE_IDR(spindle_minors);

struct spindle_range {
	u64 first;
	u32 count;
};

struct spindle_file {
	struct spindle_subgroup *sub;
	struct spindle_consumer *cons;	/* files open for reading */

	/* delivery queue: the kthread appends at tail, RECV takes from head */
	struct mutex recv_lock;
	struct spindle_desc *q;
	u32 qcap;
	u64 qhead;
	u64 qtail;
	u32 held;			/* messages taken by the last RECV, unreleased */

	/* reservations of this file, oldest first */
	struct mutex send_lock;
	struct spindle_range *res;	/* [window] */
	u32 res_head;
	u32 res_n;			/* ranges */
	u32 pending;			/* slots */
};

static u64 spindle_ring_offset(u32 rank)
{
	return (u64)(rank + 1) << SPINDLE_MMAP_SHIFT;
}

/* Consumer callback: the predicate thread, sub->cons_lock held. */
static void spindle_file_deliver(struct spindle_consumer *c, void *priv,
				 const struct spindle_msg *msgs, unsigned int n)
{
	struct spindle_file *f = priv;
	u64 tail = f->qtail;
	unsigned int i;

	lockdep_assert_held(&f->sub->cons_lock);
	for (i = 0; i < n; i++) {
		struct spindle_desc *d;

		/* pairs with the release in RECV: it is done reading the slot */
		if (WARN_ON_ONCE(tail - smp_load_acquire(&f->qhead) >= f->qcap))
			break;
		d = &f->q[tail % f->qcap];
		d->seq = msgs[i].seq;
		d->index = msgs[i].index;
		d->offset = msgs[i].offset;
		d->len = msgs[i].len;
		d->rank = msgs[i].rank;
		d->flags = 0;
		d->sender_id = msgs[i].sender_id;
		d->reserved = 0;
		tail++;
	}
	/* the descriptors are written before the tail that publishes them */
	smp_store_release(&f->qtail, tail);
	wake_up_interruptible(&f->sub->recv_wq);
}

/* A view record travels in a descriptor's place: same size, same flags. */
static_assert(sizeof(struct spindle_view_desc) == sizeof(struct spindle_desc));
static_assert(offsetof(struct spindle_view_desc, rank) ==
	      offsetof(struct spindle_desc, rank));
static_assert(offsetof(struct spindle_view_desc, flags) ==
	      offsetof(struct spindle_desc, flags));

/* Consumer callback: a view record, in its place in the stream (cons_lock held). */
static void spindle_file_view(struct spindle_consumer *c, void *priv,
			      const struct spindle_view_rec *v)
{
	struct spindle_file *f = priv;
	u64 tail = f->qtail;
	struct spindle_view_desc rec = {
		.view_id = v->view_id,
		.members = v->members,
		.own_delivered = v->own_delivered,
		.nmembers = v->nmembers,
		.rank = SPINDLE_RANK_NONE,
		.flags = SPINDLE_DESC_VIEW,
	};

	lockdep_assert_held(&f->sub->cons_lock);
	/* as in spindle_file_deliver(): RECV is done with the slot */
	if (WARN_ON_ONCE(tail - smp_load_acquire(&f->qhead) >= f->qcap))
		return;
	memcpy(&f->q[tail % f->qcap], &rec, sizeof(rec));
	/* the record is written before the tail that publishes it */
	smp_store_release(&f->qtail, tail + 1);
	wake_up_interruptible(&f->sub->recv_wq);
}

static void spindle_file_state(struct spindle_consumer *c, void *priv,
			       enum spindle_group_state state)
{
	struct spindle_file *f = priv;

	wake_up_interruptible(&f->sub->recv_wq);
}

static const struct spindle_consumer_ops spindle_file_ops = {
	.deliver = spindle_file_deliver,
	.state_change = spindle_file_state,
	.view = spindle_file_view,
};

static u64 spindle_res_pop(struct spindle_file *f);

static int spindle_open(struct inode *inode, struct file *file)
{
	struct spindle_file *f;
	struct spindle_subgroup *sub;
	int ret = -ENOMEM;

	mutex_lock(&spindle_minor_lock);
	sub = idr_find(&spindle_minors, iminor(inode));
	if (sub)
		kref_get(&sub->ref);
	mutex_unlock(&spindle_minor_lock);
	if (!sub)
		return -ENODEV;
	if (spindle_sub_state(sub) == SPINDLE_GROUP_DOWN) {
		ret = -ENODEV;
		goto put;
	}
	ret = spindle_sub_file_open(sub);
	if (ret)
		goto put;
	ret = -ENOMEM;
	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f)
		goto close;
	f->sub = sub;
	mutex_init(&f->recv_lock);
	mutex_init(&f->send_lock);
	if (file->f_mode & FMODE_WRITE && sub->my_rank >= 0) {
		f->res = kvcalloc(sub->cfg.window, sizeof(*f->res), GFP_KERNEL_ACCOUNT);
		if (!f->res)
			goto free;
	}
	file->private_data = f;
	return nonseekable_open(inode, file);
free:
	kfree(f);
close:
	spindle_sub_file_close(sub);
put:
	spindle_subgroup_put(sub);
	return ret;
}

static int spindle_file_release(struct inode *inode, struct file *file)
{
	struct spindle_file *f = file->private_data;
	struct spindle_subgroup *sub = f->sub;

	/* what this file reserved and never marked goes out as nulls */
	while (f->pending)
		spindle_void(sub, spindle_res_pop(f));
	spindle_producer_detach(sub, f);
	if (f->cons)
		spindle_detach(f->cons);
	kvfree(f->q);
	kvfree(f->res);
	kfree(f);
	spindle_sub_file_close(sub);
	spindle_subgroup_put(sub);
	return 0;
}

static long spindle_ioc_info(struct spindle_file *f, void __user *uarg)
{
	struct spindle_subgroup *sub = f->sub;
	struct spindle_info info;
	struct spindle_ring_info ri;
	u32 r, room;
	int ret;

	ret = spindle_copy_arg(&info, sizeof(info), sizeof(info), uarg);
	if (ret)
		return ret;
	if (memchr_inv(info.reserved, 0, sizeof(info.reserved)))
		return -EINVAL;
	room = info.nsenders;
	info.group_id = sub->group_id;
	info.subgroup_id = sub->id;
	info.self_id = sub->self_id;
	info.mode = sub->cfg.mode;
	info.window = sub->cfg.window;
	info.max_msg = sub->cfg.max_msg;
	info.slot_size = sub->eng.slot_size;
	info.nmembers = sub->cfg.nmembers;
	info.nsenders = sub->cfg.nsenders;
	info.my_rank = sub->my_rank;
	info.state = spindle_sub_state(sub);
	info.producer_size = spindle_producer_size(sub);
	for (r = 0; info.rings && r < min(room, sub->cfg.nsenders); r++) {
		memset(&ri, 0, sizeof(ri));
		ri.member_id = sub->rank_id[r];
		ri.flags = (s32)r == sub->my_rank ? SPINDLE_RING_WRITABLE : 0;
		ri.mmap_offset = spindle_ring_offset(r);
		ri.mmap_size = sub->pay[r]->size;
		if (copy_to_user(u64_to_user_ptr(info.rings) + r * sizeof(ri),
				 &ri, sizeof(ri)))
			return -EFAULT;
	}
	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

static void spindle_res_push(struct spindle_file *f, u64 first, u32 n)
{
	u32 w = f->sub->cfg.window;
	struct spindle_range *last = f->res_n ?
		&f->res[(f->res_head + f->res_n - 1) % w] : NULL;

	if (last && last->first + last->count == first) {
		last->count += n;
	} else {
		f->res[(f->res_head + f->res_n) % w].first = first;
		f->res[(f->res_head + f->res_n) % w].count = n;
		f->res_n++;
	}
	f->pending += n;
}

static u64 spindle_res_pop(struct spindle_file *f)
{
	struct spindle_range *r = &f->res[f->res_head];
	u64 pos = r->first++;

	f->pending--;
	if (!--r->count) {
		f->res_head = (f->res_head + 1) % f->sub->cfg.window;
		f->res_n--;
	}
	return pos;
}

/*
 * Were this file's reservations made in a view that has ended?  A view
 * change starts positions past every one the old view handed out, so the
 * oldest one says it (whenever the change happened, even during the
 * SEND that made them).
 */
static bool spindle_res_stale(struct spindle_file *f)
{
	struct spindle_subgroup *sub = f->sub;
	bool stale;

	spin_lock_bh(&sub->lock);
	stale = f->res[f->res_head].first < sub->pos_base;
	spin_unlock_bh(&sub->lock);
	return stale;
}

/* Mark this file's @count oldest reservations with @lens. */
static int spindle_mark(struct spindle_file *f, const u32 *lens, u32 count)
{
	struct spindle_subgroup *sub = f->sub;
	u32 i;
	int ret;

	for (i = 0; i < count; i++)
		if (lens[i] != SPINDLE_LEN_VOID && lens[i] > sub->cfg.max_msg)
			return -EMSGSIZE;
	spin_lock_bh(&sub->lock);
	/* the oldest reservation: stale ones were dropped before we came here */
	ret = spindle_mark_errno(sub, f->res[f->res_head].first);
	for (i = 0; !ret && i < count; i++) {
		u64 pos = spindle_res_pop(f);

		if (lens[i] == SPINDLE_LEN_VOID)
			ret = sp_sub_void(&sub->eng, pos - sub->pos_base);
		else
			ret = sp_sub_mark_ready(&sub->eng, pos - sub->pos_base, lens[i]);
		WARN_ON_ONCE(ret);
	}
	spin_unlock_bh(&sub->lock);
	if (!ret)
		trace_spindle_ready(sub->group_id, sub->id, count, false);
	spindle_sub_kick(sub);
	return ret;
}

static long spindle_ioc_send(struct spindle_file *f, struct file *file,
			     void __user *uarg)
{
	struct spindle_subgroup *sub = f->sub;
	struct spindle_send arg;
	u32 *lens = NULL;
	long timeout;
	int ret, n;

	ret = spindle_copy_arg(&arg, sizeof(arg), sizeof(arg), uarg);
	if (ret)
		return ret;
	atomic64_inc(&sub->send_calls);
	if ((arg.flags & ~SPINDLE_SEND_NONBLOCK) || arg.reserved ||
	    arg.reserved_count || arg.first || arg.pending)
		return -EINVAL;
	if (!(file->f_mode & FMODE_WRITE) || sub->my_rank < 0)
		return -EPERM;
	if (arg.reserve > sub->cfg.window)
		return -EINVAL;

	mutex_lock(&f->send_lock);
	if (f->pending && spindle_res_stale(f)) {
		/* a view change voided them: the engine they were in is gone */
		f->res_head = 0;
		f->res_n = 0;
		f->pending = 0;
		if (arg.count) {
			ret = -ESTALE;
			goto out;
		}
	}
	if (arg.count > f->pending) {
		ret = -EINVAL;
		goto out;
	}
	if (arg.count) {
		lens = memdup_user(u64_to_user_ptr(arg.lens),
				   (size_t)arg.count * sizeof(*lens));
		if (IS_ERR(lens)) {
			ret = PTR_ERR(lens);
			lens = NULL;
			goto out;
		}
		ret = spindle_mark(f, lens, arg.count);
		if (ret)
			goto out;
	}
	if (arg.reserve && f->pending == sub->cfg.window) {
		ret = -EINVAL;	/* it holds every slot: mark some first */
	} else if (arg.reserve) {
		timeout = (arg.flags & SPINDLE_SEND_NONBLOCK) ||
			  (file->f_flags & O_NONBLOCK) ? 0 :
			  msecs_to_jiffies(arg.timeout_ms);
		n = spindle_reserve(sub, min(arg.reserve,
					     sub->cfg.window - f->pending),
				    &arg.first, timeout);
		if (n < 0) {
			ret = n;
			goto out;
		}
		spindle_fault_hold(SPINDLE_HOLD_SEND, sub->group_id);
		spindle_res_push(f, arg.first, n);
		arg.reserved_count = n;
	}
out:
	arg.pending = f->pending;
	mutex_unlock(&f->send_lock);
	kfree(lens);
	if (ret && ret != -EAGAIN && ret != -ETIMEDOUT)
		return ret;
	if (copy_to_user(uarg, &arg, sizeof(arg)))
		return -EFAULT;
	return ret;
}

/* sp_hist_add() for counters several files bump at once */
static void spindle_hist_inc(atomic64_t *hist, u64 n)
{
	atomic64_inc(&hist[sp_hist_bucket(n)]);
}

/* The first RECV makes the file a consumer. */
static int spindle_file_attach(struct spindle_file *f)
{
	struct spindle_consumer_cfg cfg = { .ops = &spindle_file_ops, .priv = f };
	struct spindle_consumer *c;

	/*
	 * Every descriptor the subgroup may have outstanding in any view: the
	 * configured senders' windows (a later view may have more senders
	 * than this one), and view records, which hold no slot.  A view
	 * change waits until consumers gave back the old view's messages, so
	 * a few records at a time is all there can be.
	 */
	f->qcap = f->sub->cfg.window * f->sub->cfg.nsenders + 64;
	f->q = kvcalloc(f->qcap, sizeof(*f->q), GFP_KERNEL_ACCOUNT);
	if (!f->q)
		return -ENOMEM;
	c = spindle_attach(f->sub, &cfg);
	if (IS_ERR(c)) {
		kvfree(f->q);
		f->q = NULL;
		return PTR_ERR(c);
	}
	WRITE_ONCE(f->cons, c);
	return 0;
}

/* Descriptors queued for @f and not yet taken by RECV. */
static u64 spindle_queued(struct spindle_file *f)
{
	/* pairs with the release in spindle_file_deliver() */
	return smp_load_acquire(&f->qtail) - f->qhead;
}

static bool spindle_recv_ready(struct spindle_file *f)
{
	return spindle_queued(f) || spindle_sub_state(f->sub) == SPINDLE_GROUP_DOWN;
}

static long spindle_ioc_recv(struct spindle_file *f, struct file *file,
			     void __user *uarg)
{
	struct spindle_subgroup *sub = f->sub;
	struct spindle_recv arg;
	struct spindle_desc __user *udesc;
	u32 n, first, part;
	long left;
	int ret;

	ret = spindle_copy_arg(&arg, sizeof(arg), sizeof(arg), uarg);
	if (ret)
		return ret;
	atomic64_inc(&sub->recv_calls);
	if (arg.flags || arg.count || arg.pending ||
	    memchr_inv(arg.reserved, 0, sizeof(arg.reserved)))
		return -EINVAL;
	if (!(file->f_mode & FMODE_READ))
		return -EPERM;

	mutex_lock(&f->recv_lock);
	if (!f->cons) {
		ret = spindle_file_attach(f);
		if (ret)
			goto unlock;
	}
	if (f->held) {
		spindle_release(f->cons, f->held);
		f->held = 0;
	}
	ret = 0;
	if (!arg.max)
		goto done;
	if (!spindle_recv_ready(f)) {
		if (!arg.timeout_ms || (file->f_flags & O_NONBLOCK)) {
			ret = -EAGAIN;
		} else {
			left = wait_event_interruptible_timeout(sub->recv_wq,
								spindle_recv_ready(f),
								msecs_to_jiffies(arg.timeout_ms));
			if (left < 0)
				ret = left;
			else if (!left)
				ret = -ETIMEDOUT;
		}
	}
	n = min_t(u64, arg.max, spindle_queued(f));
	if (!n) {
		enum spindle_group_state state = spindle_sub_state(sub);

		if (state == SPINDLE_GROUP_DOWN)
			ret = -ENOTCONN;
		else if (state == SPINDLE_GROUP_FAILED && ret)
			ret = -EIO;
		goto done;
	}
	ret = 0;
	/* entries [qhead, tail) are stable until we release them */
	udesc = u64_to_user_ptr(arg.descs);
	first = f->qhead % f->qcap;
	part = min(n, f->qcap - first);
	if (copy_to_user(udesc, &f->q[first], part * sizeof(*udesc)) ||
	    copy_to_user(udesc + part, &f->q[0], (n - part) * sizeof(*udesc))) {
		ret = -EFAULT;
		goto unlock;
	}
	f->held = 0;
	for (part = 0; part < n; part++)	/* view records hold no slot */
		if (!(f->q[(first + part) % f->qcap].flags & SPINDLE_DESC_VIEW))
			f->held++;
	/* done reading those slots: the predicate thread may refill them */
	smp_store_release(&f->qhead, f->qhead + n);
	atomic64_add(n, &sub->recv_msgs);
	spindle_hist_inc(sub->hist_recv_call, n);
	trace_spindle_consume(sub->group_id, sub->id, n);
	arg.count = n;
done:
	arg.pending = spindle_queued(f);
	if (ret != -EFAULT && copy_to_user(uarg, &arg, sizeof(arg)))
		ret = -EFAULT;
unlock:
	mutex_unlock(&f->recv_lock);
	return ret;
}

/* The producer's doorbell: only the producer rings it. */
static long spindle_ioc_wake(struct spindle_file *f)
{
	struct spindle_subgroup *sub = f->sub;
	int ret = 0;

	spin_lock_bh(&sub->lock);
	if (sub->prod_owner != f)
		ret = -EINVAL;
	else if (sub->prod_broken)
		ret = -EIO;
	else
		ret = spindle_producer_resync(sub);
	spin_unlock_bh(&sub->lock);
	if (!ret)
		spindle_sub_kick(sub);
	return ret;
}

static long spindle_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct spindle_file *f = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case SPINDLE_IOC_INFO:
		return spindle_ioc_info(f, uarg);
	case SPINDLE_IOC_SEND:
		return spindle_ioc_send(f, file, uarg);
	case SPINDLE_IOC_RECV:
		return spindle_ioc_recv(f, file, uarg);
	case SPINDLE_IOC_WAKE:
		return spindle_ioc_wake(f);
	default:
		return -ENOTTY;
	}
}

/* For poll(): may this file's sender fill a slot now? */
static bool spindle_can_fill(struct spindle_file *f)
{
	struct spindle_subgroup *sub = f->sub;
	bool ok;

	spin_lock_bh(&sub->lock);
	if (sub->prod_owner == f)	/* its own tail is only a hint here */
		ok = sub->prod_stale ||
		     READ_ONCE(((struct spindle_producer *)sub->prod_reg->vaddr)->tail) <
		     sub->prod_limit;
	else
		ok = !sub->prod_owner && sp_sub_free_slots(&sub->eng);
	spin_unlock_bh(&sub->lock);
	return ok;
}

static __poll_t spindle_poll(struct file *file, poll_table *wait)
{
	struct spindle_file *f = file->private_data;
	struct spindle_subgroup *sub = f->sub;
	enum spindle_group_state state = spindle_sub_state(sub);
	__poll_t mask = 0;

	poll_wait(file, &sub->recv_wq, wait);
	poll_wait(file, &sub->send_wq, wait);
	if (READ_ONCE(f->cons) && spindle_queued(f))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (f->res && state == SPINDLE_GROUP_ACTIVE && spindle_can_fill(f))
		mask |= EPOLLOUT | EPOLLWRNORM;
	if (state == SPINDLE_GROUP_FAILED)
		mask |= EPOLLERR;
	if (state == SPINDLE_GROUP_DOWN)
		mask |= EPOLLHUP;
	return mask;
}

static void spindle_vm_open(struct vm_area_struct *vma)
{
	struct spindle_region *reg = vma->vm_private_data;

	kref_get(&reg->ref);
}

static void spindle_vm_close(struct vm_area_struct *vma)
{
	spindle_region_put(vma->vm_private_data);
}

static const struct vm_operations_struct spindle_vm_ops = {
	.open = spindle_vm_open,
	.close = spindle_vm_close,
};

/* Map the producer page, making this file the subgroup's producer. */
static int spindle_mmap_producer(struct spindle_file *f, struct vm_area_struct *vma)
{
	struct spindle_subgroup *sub = f->sub;
	unsigned long len = vma->vm_end - vma->vm_start;
	struct spindle_region *reg;
	int ret;

	if (!f->res || !(vma->vm_flags & VM_SHARED) ||
	    !(vma->vm_flags & VM_WRITE) || len > spindle_producer_size(sub))
		return -EINVAL;
	ret = spindle_producer_attach(sub, f);
	if (ret)
		return ret;
	spin_lock_bh(&sub->lock);
	reg = sub->prod_reg;
	kref_get(&reg->ref);
	spin_unlock_bh(&sub->lock);
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	ret = remap_vmalloc_range(vma, reg->vaddr, 0);
	if (ret) {
		spindle_region_put(reg);
		return ret;
	}
	vma->vm_private_data = reg;
	vma->vm_ops = &spindle_vm_ops;
	return 0;
}

static int spindle_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct spindle_file *f = file->private_data;
	struct spindle_subgroup *sub = f->sub;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	unsigned long len = vma->vm_end - vma->vm_start;
	struct spindle_region *reg;
	u64 r;
	int ret;

	if (off == SPINDLE_MMAP_PRODUCER)
		return spindle_mmap_producer(f, vma);
	r = (off >> SPINDLE_MMAP_SHIFT) - 1;
	if (off & ((1ULL << SPINDLE_MMAP_SHIFT) - 1) || r >= sub->cfg.nsenders) {
		pr_debug("mmap of subgroup %u at bad offset %#llx\n", sub->id, off);
		return -EINVAL;
	}
	reg = sub->pay[r];
	/*
	 * Shared mappings only.  VM_MAYSHARE, not VM_SHARED: mmap() takes
	 * VM_SHARED off a shared mapping of a file opened read-only, a
	 * reader's.
	 */
	if (len > reg->size || !(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if ((s64)r != sub->my_rank) {
		/* another sender's ring: never writable, not even later */
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		vm_flags_clear(vma, VM_MAYWRITE);
	}
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	ret = remap_vmalloc_range(vma, reg->vaddr, 0);
	if (ret)
		return ret;
	vma->vm_private_data = reg;
	vma->vm_ops = &spindle_vm_ops;
	spindle_vm_open(vma);
	return 0;
}

static const struct file_operations spindle_fops = {
	.owner = THIS_MODULE,
	.open = spindle_open,
	.release = spindle_file_release,
	.unlocked_ioctl = spindle_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = spindle_mmap,
	.poll = spindle_poll,
	/* no .llseek: nonseekable_open() makes lseek() fail with ESPIPE */
};

static ssize_t group_id_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct spindle_subgroup *sub = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", sub->group_id);
}
static DEVICE_ATTR_RO(group_id);

static ssize_t subgroup_id_show(struct device *dev, struct device_attribute *attr,
				char *buf)
{
	struct spindle_subgroup *sub = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", sub->id);
}
static DEVICE_ATTR_RO(subgroup_id);

static struct attribute *spindle_dev_attrs[] = {
	&dev_attr_group_id.attr,
	&dev_attr_subgroup_id.attr,
	NULL,
};
ATTRIBUTE_GROUPS(spindle_dev);

static char *spindle_devnode(SPINDLE_DEVNODE_CONST struct device *dev, umode_t *mode)
{
	if (mode)
		*mode = 0660;
	return NULL;
}

static struct class spindle_class = {
	.name = "spindle",
	.devnode = spindle_devnode,
};

/**
 * spindle_subdev_add - create /dev/spindleN for a subgroup
 * @sub: subgroup
 *
 * Injectable (fail_function): a group up that fails with some of its
 * devices made, in selftests/fail_inject.sh.
 * Return: 0 or -errno.
 */
int spindle_subdev_add(struct spindle_subgroup *sub)
{
	struct device *dev;
	int minor;

	mutex_lock(&spindle_minor_lock);
	minor = idr_alloc(&spindle_minors, sub, 0, SPINDLE_MAX_MINORS, GFP_KERNEL);
	mutex_unlock(&spindle_minor_lock);
	if (minor < 0)
		return minor;
	sub->minor = minor;
	dev = device_create_with_groups(&spindle_class, NULL,
					MKDEV(MAJOR(spindle_devt), minor), sub,
					spindle_dev_groups, "spindle%d", minor);
	if (IS_ERR(dev)) {
		spindle_subdev_del(sub);
		return PTR_ERR(dev);
	}
	sub->dev = dev;
	return 0;
}

ALLOW_ERROR_INJECTION(spindle_subdev_add, ERRNO);

void spindle_subdev_del(struct spindle_subgroup *sub)
{
	if (sub->minor < 0)
		return;
	if (sub->dev)
		device_destroy(&spindle_class, MKDEV(MAJOR(spindle_devt), sub->minor));
	mutex_lock(&spindle_minor_lock);
	idr_remove(&spindle_minors, sub->minor);
	mutex_unlock(&spindle_minor_lock);
	sub->dev = NULL;
	sub->minor = -1;
}

int spindle_subdev_init(void)
{
	int ret;

	ret = alloc_chrdev_region(&spindle_devt, 0, SPINDLE_MAX_MINORS, "spindle");
	if (ret)
		return ret;
	ret = class_register(&spindle_class);
	if (ret)
		goto unregister;
	cdev_init(&spindle_cdev, &spindle_fops);
	spindle_cdev.owner = THIS_MODULE;
	ret = cdev_add(&spindle_cdev, spindle_devt, SPINDLE_MAX_MINORS);
	if (ret)
		goto destroy;
	return 0;
destroy:
	class_unregister(&spindle_class);
unregister:
	unregister_chrdev_region(spindle_devt, SPINDLE_MAX_MINORS);
	return ret;
}

void spindle_subdev_exit(void)
{
	cdev_del(&spindle_cdev);
	class_unregister(&spindle_class);
	unregister_chrdev_region(spindle_devt, SPINDLE_MAX_MINORS);
	idr_destroy(&spindle_minors);
}
