// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/spindle/group<ID>/stats: the counters spindlectl stats
 * shows, plus what only a developer wants (each peer's connections and
 * writes in flight).  Values are read without locks: a snapshot.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "spindle.h"
#include "group.h"
#include "peer.h"
#include "subgroup.h"
#include "hostile.h"

static struct dentry *spindle_dbg_root;

static void spindle_dbg_hist(struct seq_file *m, const char *name, const u64 *h)
{
	int b;

	seq_printf(m, "    %-9s", name);
	for (b = 0; b < SP_HIST_BUCKETS; b++)
		seq_printf(m, " %llu", READ_ONCE(h[b]));
	seq_puts(m, "\n");
}

static int spindle_dbg_stats_show(struct seq_file *m, void *unused)
{
	struct spindle_group *g = m->private;
	u32 i, s;

	seq_printf(m, "group %u state %d self %u busy_ns %llu idle_ns %llu\n",
		   g->id, READ_ONCE(g->state), g->cfg.self_id,
		   READ_ONCE(g->busy_ns), READ_ONCE(g->idle_ns));
	seq_printf(m, "  passes %lld longest_us %llu\n",
		   (long long)atomic64_read(&g->passes),
		   div_u64(READ_ONCE(g->pass_max_ns), NSEC_PER_USEC));
	spindle_dbg_hist(m, "pass_65us", g->hist_pass);
	for (i = 0; i < g->cfg.nmembers; i++) {
		struct spindle_peer *p = g->peers[i];

		if (i == g->me)
			continue;
		/* connections are the thread's: only what the peer says of them */
		seq_printf(m, "  peer %u state %d connects %u connections %u ready %d in_flight %llu\n",
			   p->id, READ_ONCE(p->state), READ_ONCE(p->connects),
			   READ_ONCE(p->nconns), READ_ONCE(p->kc_ready),
			   READ_ONCE(p->kc_inflight));
	}
	for (s = 0; s < g->cfg.nsubgroups; s++) {
		struct spindle_subgroup *sub = g->subs[s];
		const struct sp_sub *e;

		if (!sub)
			continue;
		e = &sub->eng;
		seq_printf(m, "  subgroup %u: sent %llu nulls %llu received %llu delivered %llu writes %llu bytes %llu\n",
			   sub->id, READ_ONCE(e->stats.msgs_sent),
			   READ_ONCE(e->stats.nulls_sent), READ_ONCE(e->stats.msgs_received),
			   READ_ONCE(e->stats.msgs_delivered), READ_ONCE(sub->writes_posted),
			   READ_ONCE(sub->bytes_posted));
		seq_printf(m, "    writes: payload %llu headers %llu counters %llu\n",
			   READ_ONCE(sub->writes_kind[SP_WR_PAYLOAD]),
			   READ_ONCE(sub->writes_kind[SP_WR_HDR]),
			   READ_ONCE(sub->writes_kind[SP_WR_BLOCK]));
		seq_printf(m, "    reserved %llu published %llu freed %llu headers %llu/%llu dl_seq %llu delivered %llu released %llu\n",
			   READ_ONCE(e->pay_reserved), READ_ONCE(e->pay_pub),
			   READ_ONCE(e->pay_freed), READ_ONCE(e->hdr_pub),
			   READ_ONCE(e->hdr_freed), READ_ONCE(e->dl_seq),
			   READ_ONCE(e->dl_descs), READ_ONCE(e->rel_descs));
		seq_puts(m, "    batch-size histograms, buckets 1 2 4 8 ...\n");
		spindle_dbg_hist(m, "publish", e->stats.hist_publish);
		spindle_dbg_hist(m, "receive", e->stats.hist_receive);
		spindle_dbg_hist(m, "deliver", e->stats.hist_deliver);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(spindle_dbg_stats);

/*
 * For the isolation test: where each peer may write into this node (the
 * first MR of its row and view area on the current connection).  Another
 * peer that tries this key must be refused by the NIC.
 */
static int spindle_dbg_keys_show(struct seq_file *m, void *unused)
{
	struct spindle_group *g = m->private;
	u32 i;

	for (i = 0; i < g->cfg.nmembers; i++) {
		struct spindle_peer *p = g->peers[i];

		if (i == g->me || !READ_ONCE(p->kc_ready))
			continue;
		seq_printf(m, "member %u rkey 0x%x addr 0x%llx\n", p->idx,
			   READ_ONCE(p->kc_rkey), READ_ONCE(p->kc_addr));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(spindle_dbg_keys);

void spindle_debugfs_add(struct spindle_group *g)
{
	char name[24];

	if (IS_ERR_OR_NULL(spindle_dbg_root))
		return;
	snprintf(name, sizeof(name), "group%u", g->id);
	g->dbg = debugfs_create_dir(name, spindle_dbg_root);
	debugfs_create_file("stats", 0400, g->dbg, g, &spindle_dbg_stats_fops);
	debugfs_create_file("keys", 0400, g->dbg, g, &spindle_dbg_keys_fops);
	spindle_hostile_debugfs(g, g->dbg);
	spindle_fault_debugfs(g, g->dbg);
}

void spindle_debugfs_del(struct spindle_group *g)
{
	debugfs_remove_recursive(g->dbg);
	g->dbg = NULL;
}

void spindle_debugfs_init(void)
{
	spindle_dbg_root = debugfs_create_dir("spindle", NULL);
}

void spindle_debugfs_exit(void)
{
	debugfs_remove_recursive(spindle_dbg_root);
}
