// SPDX-License-Identifier: GPL-2.0
/*
 * spindle_blk's block side: a blk-mq disk whose reads come from the local
 * copy and whose writes and flushes are multicast, built in place in this
 * member's slots.  queue_rq may sleep (BLK_MQ_F_BLOCKING): it waits for
 * slots.  A request's outcome is decided by the consumer side (apply.c),
 * or here when it cannot be sent.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/highmem.h>
#include "blk.h"
#define SPINDLE_COMPAT_BLK
#include "spindle_compat.h"

/* Bytes [@off, @off + @len) of a write request's data into @dst. */
static void sblk_copy_from_rq(struct request *rq, u64 off, u8 *dst, u32 len)
{
	struct req_iterator iter;
	struct bio_vec bv;
	u64 pos = 0;

	rq_for_each_segment(bv, rq, iter) {
		u64 end = pos + bv.bv_len;

		if (end > off && pos < off + len) {
			u32 from = max(off, pos) - pos;
			u32 to = min(end, off + len) - pos;
			u8 *p = bvec_kmap_local(&bv);

			memcpy(dst + (pos + from - off), p + from, to - from);
			kunmap_local(p);
		}
		pos = end;
	}
}

static blk_status_t sblk_read(struct sblk *b, struct request *rq)
{
	const u8 *src = b->store + blk_rq_pos(rq) * SP_BLK_SECTOR;
	struct req_iterator iter;
	struct bio_vec bv;

	rq_for_each_segment(bv, rq, iter) {
		memcpy_to_bvec(&bv, src);
		src += bv.bv_len;
	}
	return BLK_STS_OK;
}

/*
 * Reserve, build and mark every message of one write or flush.  A view
 * change in between ends it: its first messages belonged to the old view.
 * Return: 0 or -errno.
 */
static int sblk_send_msgs(struct sblk *b, struct request *rq, struct sblk_cmd *cmd,
			  u64 gen)
{
	enum sp_blk_type type = req_op(rq) == REQ_OP_FLUSH ? SP_BLK_FLUSH : SP_BLK_WRITE;
	u64 sector = type == SP_BLK_WRITE ? blk_rq_pos(rq) : 0;
	u64 nsect = type == SP_BLK_WRITE ? blk_rq_sectors(rq) : 0;
	u32 nfrag = type == SP_BLK_WRITE ? sp_blk_nfrags(&b->geom, nsect) : 1;
	u32 frag = 0;

	while (frag < nfrag) {
		u64 first;
		int n, i, ret = 0;

		n = spindle_reserve(b->sub, nfrag - frag, &first, HZ);
		if (n == -ETIMEDOUT || n == -EAGAIN) {
			if (READ_ONCE(b->state) != SBLK_LIVE || READ_ONCE(b->view_gen) != gen)
				return -EIO;
			continue;	/* the group is busy or changing views */
		}
		if (n < 0)
			return n;
		if (READ_ONCE(b->view_gen) != gen)
			ret = -ESTALE;
		for (i = 0; i < n; i++, frag++) {
			u8 *slot = spindle_slot(b->sub, first + i);
			u32 len;

			if (ret) {
				spindle_void(b->sub, first + i);
				continue;
			}
			len = sp_blk_hdr_fill((struct sp_blk_hdr *)slot, &b->geom, type,
					      sector, nsect, frag, cmd->tag);
			sblk_copy_from_rq(rq, (u64)frag * b->geom.frag_bytes,
					  slot + SP_BLK_HDR, len);
			ret = spindle_mark_ready(b->sub, first + i, SP_BLK_HDR + len);
		}
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * A write or flush: in flight from before its first message is marked, so
 * that its delivery finds it; ended by whoever decides it last.
 */
static void sblk_send(struct sblk *b, struct request *rq)
{
	struct sblk_cmd *cmd = blk_mq_rq_to_pdu(rq);
	LIST_HEAD(done);
	bool end;
	u64 gen;
	int ret;

	mutex_lock(&b->send_lock);
	spin_lock(&b->lock);
	cmd->tag = b->tag_next++;
	cmd->status = BLK_STS_OK;
	cmd->decided = false;
	cmd->sending = true;
	gen = b->view_gen;
	if (b->state == SBLK_LIVE) {
		list_add_tail(&cmd->node, &b->inflight);
		ret = 0;
	} else {
		INIT_LIST_HEAD(&cmd->node);
		cmd->decided = true;
		cmd->status = BLK_STS_IOERR;
		ret = -EIO;
	}
	spin_unlock(&b->lock);
	if (!ret)
		ret = sblk_send_msgs(b, rq, cmd, gen);
	mutex_unlock(&b->send_lock);

	spin_lock(&b->lock);
	cmd->sending = false;
	if (ret && !cmd->decided) {
		list_del_init(&cmd->node);
		cmd->decided = true;
		cmd->status = BLK_STS_IOERR;
		atomic64_inc(&b->failed);
	}
	end = cmd->decided;
	spin_unlock(&b->lock);
	if (ret)
		pr_warn_ratelimited("spindle-blk%d: %s of %u sectors at %llu not sent: %d\n",
				    b->index, req_op(rq) == REQ_OP_FLUSH ? "flush" : "write",
				    blk_rq_sectors(rq), blk_rq_pos(rq), ret);
	if (end)
		blk_mq_end_request(rq, cmd->status);
}

static blk_status_t sblk_queue_rq(struct blk_mq_hw_ctx *hctx,
				  const struct blk_mq_queue_data *bd)
{
	struct sblk *b = hctx->queue->queuedata;
	struct request *rq = bd->rq;
	blk_status_t st;

	blk_mq_start_request(rq);
	if (READ_ONCE(b->state) != SBLK_LIVE)
		return BLK_STS_IOERR;
	switch (req_op(rq)) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		/* (a flush's position means nothing: blk_rq_init() made it -1) */
		if (blk_rq_pos(rq) + blk_rq_sectors(rq) > b->geom.capacity)
			return BLK_STS_IOERR;
		if (req_op(rq) == REQ_OP_WRITE)
			break;
		st = sblk_read(b, rq);
		blk_mq_end_request(rq, st);
		return BLK_STS_OK;
	case REQ_OP_FLUSH:
		break;
	default:
		return BLK_STS_NOTSUPP;
	}
	sblk_send(b, rq);
	return BLK_STS_OK;
}

/* A request waits for its delivery, a view change or the group's end. */
static enum blk_eh_timer_return sblk_timeout(struct request *rq)
{
	struct sblk *b = rq->q->queuedata;

	pr_warn_ratelimited("spindle-blk%d: a request waits for delivery for %u s\n",
			    b->index, rq->timeout / HZ);
	return BLK_EH_RESET_TIMER;
}

static const struct blk_mq_ops sblk_mq_ops = {
	.queue_rq = sblk_queue_rq,
	.timeout = sblk_timeout,
};

static const struct block_device_operations sblk_fops = {
	.owner = THIS_MODULE,
};

/**
 * sblk_disk_add - make /dev/spindle-blkN
 * @b: device, consuming its subgroup already
 * @major: spindle_blk's major; the minor is @b->index
 *
 * Return: 0 or -errno.
 */
int sblk_disk_add(struct sblk *b, int major)
{
	struct gendisk *disk;
	int ret;

	b->tags.ops = &sblk_mq_ops;
	b->tags.nr_hw_queues = 1;
	b->tags.queue_depth = 64;
	b->tags.numa_node = NUMA_NO_NODE;
	b->tags.cmd_size = sizeof(struct sblk_cmd);
	b->tags.flags = BLK_MQ_F_BLOCKING;
	b->tags.driver_data = b;
	ret = blk_mq_alloc_tag_set(&b->tags);
	if (ret)
		return ret;
	disk = spindle_alloc_disk(&b->tags, sp_blk_max_sectors(&b->geom), b);
	if (IS_ERR(disk)) {
		blk_mq_free_tag_set(&b->tags);
		return PTR_ERR(disk);
	}
	disk->major = major;
	disk->first_minor = b->index;
	disk->minors = 1;
	disk->flags |= GENHD_FL_NO_PART;
	disk->fops = &sblk_fops;
	disk->private_data = b;
	snprintf(disk->disk_name, DISK_NAME_LEN, "spindle-blk%d", b->index);
	set_capacity(disk, b->geom.capacity);
	if (b->attr.my_rank < 0)
		set_disk_ro(disk, true);	/* not a sender here */
	ret = add_disk(disk);
	if (ret) {
		put_disk(disk);
		blk_mq_free_tag_set(&b->tags);
		return ret;
	}
	b->disk = disk;
	return 0;
}

/**
 * sblk_disk_del - take /dev/spindle-blkN away
 * @b: device, DYING, its requests all decided
 */
void sblk_disk_del(struct sblk *b)
{
	del_gendisk(b->disk);
	put_disk(b->disk);
	blk_mq_free_tag_set(&b->tags);
}
