/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel interfaces that changed between the kernels Spindle supports
 * (Documentation/operations.rst, "Supported kernels and their differences"),
 * in one place, keyed on LINUX_VERSION_CODE
 * as out-of-tree drivers and the backports project do.  Code elsewhere uses
 * the newest form; this header gives it to the older kernels.
 *
 *   6.2   the class devnode callback takes a const struct device *
 *   6.3   vma->vm_flags is read-only: vm_flags_set() and vm_flags_clear()
 *   6.10  __assign_str() takes only the field (the source is __string()'s)
 *   6.12  no_llseek is gone: a nonseekable_open() file needs no .llseek
 *   6.9   blk_mq_alloc_disk() takes the queue limits (spindle_blk)
 *   6.11  a queue's write cache and FUA are limits' features (spindle_blk)
 *
 * Behaviour that differs with no change of interface is not here but where
 * it matters; Documentation/operations.rst lists it (soft-RoCE runs its
 * requester and responder in a workqueue from 6.4 on, not a tasklet; on
 * PREEMPT_RT a spinlock_t is a sleeping lock).
 */
#ifndef SPINDLE_COMPAT_H
#define SPINDLE_COMPAT_H

#include <linux/version.h>
#include <linux/mm.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define SPINDLE_DEVNODE_CONST	const
#else
#define SPINDLE_DEVNODE_CONST
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

/* in TP_fast_assign(): expanded there, after each trace stage's own macros */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define spindle_assign_str(dst, src)	__assign_str(dst)
#else
#define spindle_assign_str(dst, src)	__assign_str(dst, src)
#endif

/*
 * spindle_blk's disk: @max_hw_sectors a request, a volatile write cache
 * with FUA, so that flushes reach the driver.  Only where blk-mq.h is
 * included (kmod/blk/).
 */
#ifdef SPINDLE_COMPAT_BLK
static inline struct gendisk *spindle_alloc_disk(struct blk_mq_tag_set *set,
						 unsigned int max_hw_sectors,
						 void *queuedata)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
	struct queue_limits lim = {
		.max_hw_sectors = max_hw_sectors,
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
		.features = BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA,
#endif
	};
	struct gendisk *disk = blk_mq_alloc_disk(set, &lim, queuedata);

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 11, 0)
	if (!IS_ERR(disk))
		blk_queue_write_cache(disk->queue, true, true);
#endif
	return disk;
#else
	struct gendisk *disk = blk_mq_alloc_disk(set, queuedata);

	if (!IS_ERR(disk)) {
		blk_queue_max_hw_sectors(disk->queue, max_hw_sectors);
		blk_queue_write_cache(disk->queue, true, true);
	}
	return disk;
#endif
}
#endif /* SPINDLE_COMPAT_BLK */

#endif /* SPINDLE_COMPAT_H */
