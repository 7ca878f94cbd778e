// SPDX-License-Identifier: GPL-2.0
/*
 * spindle_blk's consumer side: every delivered message is checked
 * (wire.h) and applied to the copy in delivery order; this member's own
 * requests complete when their last message is delivered here; a view
 * change or the group's failure fails back what will not be delivered.
 * It all runs in the predicate kthread with the subgroup's consumer lock
 * held: nothing here sleeps.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "blk.h"

const char *sblk_state_name(enum sblk_state s)
{
	static const char *const names[] = {
		[SBLK_LIVE] = "live",
		[SBLK_STALE] = "stale",
		[SBLK_FAILED] = "failed",
		[SBLK_DYING] = "dying",
	};

	return (unsigned int)s < ARRAY_SIZE(names) ? names[s] : "?";
}

/**
 * sblk_move - change a device's state
 * @b: device, lock held
 * @to: the new state
 *
 * States only go forward (blk.h); a move back or to the same state is
 * not made.
 * Return: whether the state changed.
 */
bool sblk_move(struct sblk *b, enum sblk_state to)
{
	lockdep_assert_held(&b->lock);
	if (to <= b->state)
		return false;
	pr_info("spindle-blk%d: %s -> %s\n", b->index, sblk_state_name(b->state),
		sblk_state_name(to));
	b->state = to;
	return true;
}

/*
 * The request's outcome is decided (lock held): it leaves the in-flight
 * list, and ends at once unless its sender is still building it, which
 * then ends it (its data is still being read from the request).
 */
static void sblk_decide(struct sblk *b, struct sblk_cmd *cmd, blk_status_t status,
			struct list_head *done)
{
	lockdep_assert_held(&b->lock);
	list_del_init(&cmd->node);
	cmd->status = status;
	cmd->decided = true;
	if (status != BLK_STS_OK)
		atomic64_inc(&b->failed);
	if (!cmd->sending)
		list_add_tail(&cmd->node, done);
}

/* Every request in flight fails (lock held). */
void sblk_fail_all(struct sblk *b, struct list_head *done)
{
	struct sblk_cmd *cmd, *tmp;

	lockdep_assert_held(&b->lock);
	list_for_each_entry_safe(cmd, tmp, &b->inflight, node)
		sblk_decide(b, cmd, BLK_STS_IOERR, done);
}

/* End what was decided, outside the device's lock. */
void sblk_end_list(struct list_head *done)
{
	struct sblk_cmd *cmd, *tmp;

	list_for_each_entry_safe(cmd, tmp, done, node) {
		list_del_init(&cmd->node);
		blk_mq_end_request(blk_mq_rq_from_pdu(cmd), cmd->status);
	}
}

/*
 * My write (or flush) @tag was delivered here, whole: it is done, and so
 * is every one sent before it that is still in flight, which will not be
 * (its messages were refused, or dropped by a later write of mine).
 */
static void sblk_own_done(struct sblk *b, u64 tag, struct list_head *done)
{
	struct sblk_cmd *cmd, *tmp;

	spin_lock(&b->lock);
	list_for_each_entry_safe(cmd, tmp, &b->inflight, node) {
		bool mine = cmd->tag == tag;

		sblk_decide(b, cmd, mine ? BLK_STS_OK : BLK_STS_IOERR, done);
		if (mine)
			break;
	}
	spin_unlock(&b->lock);
}

/* Copy a checked fragment in; a whole write goes to the copy. */
static void sblk_apply(struct sblk *b, u32 rank, const struct sp_blk_frag *f,
		       const u8 *data)
{
	size_t max = (size_t)sp_blk_max_sectors(&b->geom) * SP_BLK_SECTOR;
	u8 *dst = b->store + f->sector * SP_BLK_SECTOR;
	u8 *buf = b->asm_buf + rank * max;

	if (f->last && !f->off) {
		memcpy(dst, data, f->len);	/* one fragment: straight in */
	} else {
		memcpy(buf + f->off, data, f->len);
		if (!f->last)
			return;
		memcpy(dst, buf, f->off + f->len);
	}
	atomic64_inc(&b->applied);
}

/* One delivered message; true when it ends a write or flush of mine. */
static bool sblk_take(struct sblk *b, const struct spindle_msg *m, u64 *tag)
{
	struct sp_blk_hdr h = {};
	struct sp_blk_frag f;
	enum sp_blk_verdict v;

	if (m->rank >= b->attr.nsenders) {
		atomic64_inc(&b->refused);
		return false;
	}
	/* the header, once: the slot is in memory the sender writes */
	memcpy(&h, m->data, min_t(u32, m->len, sizeof(h)));
	v = sp_blk_check(&b->geom, &b->rx[m->rank], &h, m->len, &f);
	if (v) {
		atomic64_inc(&b->refused);
		pr_warn_ratelimited("spindle-blk%d: message %llu of member %u refused: %s\n",
				    b->index, m->seq, m->sender_id, sp_blk_verdict_name(v));
		return false;
	}
	if (f.type == SP_BLK_WRITE)
		sblk_apply(b, m->rank, &f, (const u8 *)m->data + SP_BLK_HDR);
	*tag = le64_to_cpu(h.tag);
	return f.last && (s32)m->rank == b->attr.my_rank;
}

static void sblk_deliver(struct spindle_consumer *c, void *priv,
			 const struct spindle_msg *msgs, unsigned int n)
{
	struct sblk *b = priv;
	LIST_HEAD(done);
	unsigned int i;
	u64 tag;

	/* a stale copy takes nothing: the others need only the release */
	for (i = 0; READ_ONCE(b->state) != SBLK_STALE && i < n; i++)
		if (sblk_take(b, &msgs[i], &tag))
			sblk_own_done(b, tag, &done);
	spindle_release(c, n);
	sblk_end_list(&done);
}

/*
 * A new view.  Every message of the old one was delivered before this:
 * a write of mine still in flight was cut off at the trim and fails, and
 * a write in progress from any sender ends here unfinished, at every
 * member alike.  (A member that came back into a running group knows it
 * before its device is made: sblk_whole_or_stale().)
 */
static void sblk_view(struct spindle_consumer *c, void *priv,
		      const struct spindle_view_rec *v)
{
	struct sblk *b = priv;
	LIST_HEAD(done);
	u32 r;

	for (r = 0; r < b->attr.nsenders; r++)
		b->rx[r].next = 0;
	spin_lock(&b->lock);
	b->view_gen++;
	sblk_fail_all(b, &done);
	spin_unlock(&b->lock);
	if (!list_empty(&done))
		pr_info("spindle-blk%d: view %llu: writes cut off at the trim fail\n",
			b->index, v->view_id);
	sblk_end_list(&done);
}

static void sblk_state_change(struct spindle_consumer *c, void *priv,
			      enum spindle_group_state state)
{
	struct sblk *b = priv;
	LIST_HEAD(done);

	if (state != SPINDLE_GROUP_FAILED && state != SPINDLE_GROUP_DOWN)
		return;
	spin_lock(&b->lock);
	sblk_move(b, SBLK_FAILED);
	sblk_fail_all(b, &done);
	spin_unlock(&b->lock);
	sblk_end_list(&done);
}

const struct spindle_consumer_ops sblk_consumer_ops = {
	.deliver = sblk_deliver,
	.view = sblk_view,
	.state_change = sblk_state_change,
};
