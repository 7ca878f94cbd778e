// SPDX-License-Identifier: GPL-2.0
/*
 * spindle_blk: block devices replicated through Spindle subgroups (blk.h).
 * A module of its own, a client of spindle.ko's exported API as any
 * storage driver would be: loaded only where wanted, and spindle.ko keeps
 * no block code.  Its knobs, written once the group is up:
 *
 *   echo "GROUP SUBGROUP" > /sys/module/spindle_blk/parameters/create
 *	makes /dev/spindle-blkN on that subgroup, of the size its
 *	configuration gives (blk_mib); every member of the subgroup does it,
 *	once in a view (EAGAIN before: sblk_in_view())
 *   echo N > /sys/module/spindle_blk/parameters/remove
 *   cat /sys/module/spindle_blk/parameters/create
 *	one line a device: its subgroup, state and counters
 *
 * The subgroup is the device's alone (SPINDLE_CONSUMER_EXCLUSIVE): while the
 * device is there no other consumer attaches and /dev/spindleN of it does
 * not open, and it is made only where neither is (EBUSY).  A reader there
 * would hold back its deliveries and take writes the device then never
 * had; a writer could forge a header with a device's write number.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/idr.h>
#include <linux/random.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include "blk.h"

#define SBLK_MAX_DEVS	16

static DEFINE_MUTEX(sblk_mutex);	/* the devices */
static DEFINE_IDR(sblk_idr);
static int sblk_major;

static struct sblk *sblk_find(u32 group, u32 subgroup)
{
	struct sblk *b;
	int id;

	lockdep_assert_held(&sblk_mutex);
	idr_for_each_entry(&sblk_idr, b, id)
		if (b->group_id == group && b->subgroup_id == subgroup)
			return b;
	return NULL;
}

static void sblk_free(struct sblk *b)
{
	vfree(b->asm_buf);
	kfree(b->rx);
	vfree(b->store);
	spindle_subgroup_put(b->sub);
	kfree(b);
}

/* What the configuration says of the subgroup, checked again here. */
static int sblk_setup(struct sblk *b)
{
	struct spindle_subgroup_attr *a = &b->attr;
	size_t max;

	spindle_subgroup_attr(b->sub, a);
	if (!a->blk_mib || a->mode != SPINDLE_MODE_ORDERED ||
	    sp_blk_geom_init(&b->geom, a->blk_mib, a->max_msg, a->window)) {
		pr_warn("group %u subgroup %u: no block device in its configuration (blk_mib %u, mode %u, max_msg %u)\n",
			b->group_id, b->subgroup_id, a->blk_mib, a->mode, a->max_msg);
		return -EINVAL;
	}
	if (a->nsenders > SPINDLE_MAX_MEMBERS) {
		pr_warn("group %u subgroup %u: %u senders, at most %u\n",
			b->group_id, b->subgroup_id, a->nsenders, SPINDLE_MAX_MEMBERS);
		return -EINVAL;
	}
	max = (size_t)sp_blk_max_sectors(&b->geom) * SP_BLK_SECTOR;
	b->store = vzalloc(b->geom.capacity * SP_BLK_SECTOR);
	b->rx = kcalloc(a->nsenders, sizeof(*b->rx), GFP_KERNEL);
	b->asm_buf = vmalloc(a->nsenders * max);
	if (!b->store || !b->rx || !b->asm_buf)
		return -ENOMEM;
	return 0;
}

/*
 * A device is made only on a member in a view.  Before its first view a
 * member cannot tell whether it founds the group (its empty copy is the
 * group's) or comes back into a running one (its copy lacks what was
 * written meanwhile: it is told it joined only once it asks to, and only
 * then is its device stale); its reads would be served from a copy no one
 * vouches for.
 */
static int sblk_in_view(struct sblk *b)
{
	switch (b->attr.state) {
	case SPINDLE_GROUP_ACTIVE:
	case SPINDLE_GROUP_VIEW_CHANGE:
		return 0;
	case SPINDLE_GROUP_CONNECTING:
		pr_warn("group %u: not in a view yet (connecting or joining): make the device once it is\n",
			b->group_id);
		return -EAGAIN;
	default:
		pr_warn("group %u: failed or down: no device\n", b->group_id);
		return -ENOTCONN;
	}
}

/*
 * A copy made now is the group's only if this device was handed every
 * write delivered in the subgroup here (spindle_consumer_whole()): not if
 * a device before it (removed, or of a spindle_blk since unloaded) or a
 * reader of /dev/spindleN took some, if a view change dropped some while
 * no device was there, or if this member joined a running group.  Its
 * deliveries may have begun meanwhile: a state only goes forward, so a
 * copy found stale stays stale.
 */
static void sblk_whole_or_stale(struct sblk *b)
{
	bool moved;

	if (spindle_consumer_whole(b->cons))
		return;
	spin_lock(&b->lock);
	moved = sblk_move(b, SBLK_STALE);
	spin_unlock(&b->lock);
	if (!moved)
		return;
	if (b->attr.joined)
		pr_warn("spindle-blk%d: this member joined the running group: its copy lacks the writes made before; every request fails (no state transfer)\n",
			b->index);
	else
		pr_warn("spindle-blk%d: writes were delivered in group %u subgroup %u before this device was made (to an earlier device or a reader, or dropped at a view change with none): its copy lacks them; every request fails (no state transfer)\n",
			b->index, b->group_id, b->subgroup_id);
}

/* The group failed between sblk_in_view() and the attach: told no more. */
static void sblk_recheck(struct sblk *b)
{
	struct spindle_subgroup_attr now;

	spindle_subgroup_attr(b->sub, &now);
	if (now.state != SPINDLE_GROUP_FAILED && now.state != SPINDLE_GROUP_DOWN)
		return;
	spin_lock(&b->lock);
	sblk_move(b, SBLK_FAILED);
	spin_unlock(&b->lock);
}

static int sblk_create(u32 group, u32 subgroup)
{
	struct spindle_consumer_cfg cfg = {
		.ops = &sblk_consumer_ops,
		.flags = SPINDLE_CONSUMER_EXCLUSIVE,	/* its only reader and writer here */
	};
	struct sblk *b;
	int ret;

	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->group_id = group;
	b->subgroup_id = subgroup;
	b->sub = spindle_subgroup_get(group, subgroup);
	if (!b->sub) {
		pr_warn("no subgroup %u of group %u on this member\n", subgroup, group);
		kfree(b);
		return -ENODEV;
	}
	mutex_init(&b->send_lock);
	spin_lock_init(&b->lock);
	INIT_LIST_HEAD(&b->inflight);
	/* a new device's writes are told from an old one's by their tags */
	b->tag_next = get_random_u64();
	ret = sblk_setup(b);
	if (!ret)
		ret = sblk_in_view(b);
	if (ret)
		goto free;
	b->state = SBLK_LIVE;

	mutex_lock(&sblk_mutex);
	ret = -EEXIST;
	if (sblk_find(group, subgroup))
		goto unlock;
	ret = idr_alloc(&sblk_idr, b, 0, SBLK_MAX_DEVS, GFP_KERNEL);
	if (ret < 0)
		goto unlock;
	b->index = ret;
	cfg.priv = b;
	b->cons = spindle_attach(b->sub, &cfg);
	if (IS_ERR(b->cons)) {
		ret = PTR_ERR(b->cons);
		goto remove_id;
	}
	sblk_whole_or_stale(b);
	sblk_recheck(b);
	ret = sblk_disk_add(b, sblk_major);
	if (ret)
		goto detach;
	mutex_unlock(&sblk_mutex);
	pr_info("spindle-blk%d: group %u subgroup %u, %u MiB, writes of up to %u sectors, %s%s\n",
		b->index, group, subgroup, b->attr.blk_mib, sp_blk_max_sectors(&b->geom),
		b->attr.my_rank < 0 ? "read-only (not a sender)" : "read-write",
		READ_ONCE(b->state) == SBLK_STALE ? ", stale" : "");
	return 0;

detach:
	spindle_detach(b->cons);
remove_id:
	idr_remove(&sblk_idr, b->index);
unlock:
	mutex_unlock(&sblk_mutex);
free:
	sblk_free(b);
	return ret;
}

/* Fail what is left, stop consuming, take the disk away (sblk_mutex). */
static void sblk_destroy(struct sblk *b)
{
	LIST_HEAD(done);

	lockdep_assert_held(&sblk_mutex);
	spin_lock(&b->lock);
	sblk_move(b, SBLK_DYING);
	spin_unlock(&b->lock);
	/* no more callbacks once detached; a send in progress sees DYING */
	spindle_detach(b->cons);
	spin_lock(&b->lock);
	sblk_fail_all(b, &done);
	spin_unlock(&b->lock);
	sblk_end_list(&done);
	sblk_disk_del(b);
	idr_remove(&sblk_idr, b->index);
	pr_info("spindle-blk%d: removed (writes applied %lld, refused %lld, failed %lld)\n",
		b->index, atomic64_read(&b->applied), atomic64_read(&b->refused),
		atomic64_read(&b->failed));
	sblk_free(b);
}

static int sblk_param_create(const char *val, const struct kernel_param *kp)
{
	u32 group, subgroup;

	if (!sblk_major)
		return -EBUSY;	/* as a load parameter: write it once loaded */
	if (sscanf(val, "%u %u", &group, &subgroup) != 2) {
		pr_warn("create: expected \"GROUP SUBGROUP\"\n");
		return -EINVAL;
	}
	return sblk_create(group, subgroup);
}

static int sblk_param_list(char *buf, const struct kernel_param *kp)
{
	struct sblk *b;
	int id, len = 0;

	mutex_lock(&sblk_mutex);
	idr_for_each_entry(&sblk_idr, b, id)
		len += sysfs_emit_at(buf, len,
				     "spindle-blk%d group %u subgroup %u state %s applied %lld refused %lld failed %lld\n",
				     b->index, b->group_id, b->subgroup_id,
				     sblk_state_name(READ_ONCE(b->state)),
				     atomic64_read(&b->applied), atomic64_read(&b->refused),
				     atomic64_read(&b->failed));
	mutex_unlock(&sblk_mutex);
	return len;
}

static int sblk_param_remove(const char *val, const struct kernel_param *kp)
{
	struct sblk *b;
	int index;

	if (!sblk_major)
		return -EBUSY;
	if (kstrtoint(val, 10, &index)) {
		pr_warn("remove: expected a device number\n");
		return -EINVAL;
	}
	mutex_lock(&sblk_mutex);
	b = idr_find(&sblk_idr, index);
	if (b)
		sblk_destroy(b);
	mutex_unlock(&sblk_mutex);
	return b ? 0 : -ENODEV;
}

static const struct kernel_param_ops sblk_create_ops = {
	.set = sblk_param_create,
	.get = sblk_param_list,
};
module_param_cb(create, &sblk_create_ops, NULL, 0600);
MODULE_PARM_DESC(create, "write \"GROUP SUBGROUP\" to make a device; read: the devices");

static const struct kernel_param_ops sblk_remove_ops = {
	.set = sblk_param_remove,
};
module_param_cb(remove, &sblk_remove_ops, NULL, 0200);
MODULE_PARM_DESC(remove, "write a device number to take it away");

static int __init sblk_init(void)
{
	int major = register_blkdev(0, "spindle-blk");

	if (major < 0)
		return major;
	sblk_major = major;
	return 0;
}

static void __exit sblk_exit(void)
{
	struct sblk *b;
	int id;

	mutex_lock(&sblk_mutex);
	idr_for_each_entry(&sblk_idr, b, id)
		sblk_destroy(b);
	mutex_unlock(&sblk_mutex);
	idr_destroy(&sblk_idr);
	unregister_blkdev(sblk_major, "spindle-blk");
}

module_init(sblk_init);
module_exit(sblk_exit);

MODULE_AUTHOR("The Spindle developers");
MODULE_DESCRIPTION("Block devices replicated in total order through Spindle");
MODULE_LICENSE("GPL");
