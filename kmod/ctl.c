// SPDX-License-Identifier: GPL-2.0
/*
 * Control operations on /dev/spindle_ctl: group up, down and info.
 * Every field that comes in is checked before anything is allocated for
 * it; a rejected configuration is logged with the name of the field, and
 * the field's code and index go back to the caller.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/inetdevice.h>
#include <net/addrconf.h>
#include <net/route.h>

#include "spindle.h"
#include "group.h"
#include "peer.h"
#include "subgroup.h"

static int spindle_cfg_reject(struct spindle_ctl_up *up, u32 field, u32 index,
			      int err)
{
	up->err_field = field;
	up->err_index = index;
	/* only CAP_NET_ADMIN gets here: every rejection is worth its line */
	pr_warn("group %u: configuration rejected: %s (entry %u)\n",
		up->group_id, sp_cfg_err_name(field), index);
	return err;
}

static bool spindle_addr_is_local(const struct sp_member_cfg *m)
{
	if (m->family == AF_INET) {
		__be32 a;

		memcpy(&a, m->addr, 4);
		return inet_addr_type(&init_net, a) == RTN_LOCAL;
	}
#if IS_ENABLED(CONFIG_IPV6)
	{
		struct in6_addr a;

		memcpy(&a, m->addr, 16);
		return ipv6_chk_addr(&init_net, &a, NULL, 0);
	}
#else
	return false;
#endif
}

/* Copy the subgroups in; arrays are bounded before they are copied. */
static int spindle_copy_subgroups(struct spindle_ctl_up *up,
				  struct sp_group_cfg *cfg)
{
	struct spindle_subgroup_cfg usg;
	u32 s;

	for (s = 0; s < up->nsubgroups; s++) {
		struct sp_sub_cfg *sub = &cfg->subgroups[s];
		const void __user *src = u64_to_user_ptr(up->subgroups) +
					 s * sizeof(usg);

		if (copy_from_user(&usg, src, sizeof(usg)))
			return -EFAULT;
		if (usg.flags)
			return spindle_cfg_reject(up, SPINDLE_CFG_E_FLAGS, s, -EINVAL);
		if (!usg.nmembers || usg.nmembers > SP_MAX_MEMBERS)
			return spindle_cfg_reject(up, SPINDLE_CFG_E_SG_NMEMBERS, s, -EINVAL);
		if (!usg.nsenders || usg.nsenders > usg.nmembers)
			return spindle_cfg_reject(up, SPINDLE_CFG_E_SG_NSENDERS, s, -EINVAL);
		sub->id = usg.id;
		sub->window = usg.window;
		sub->max_msg = usg.max_msg;
		sub->mode = usg.mode;
		sub->nmembers = usg.nmembers;
		sub->nsenders = usg.nsenders;
		sub->blk_mib = usg.blk_mib;
		if (copy_from_user(sub->members, u64_to_user_ptr(usg.members),
				   usg.nmembers * sizeof(u32)) ||
		    copy_from_user(sub->senders, u64_to_user_ptr(usg.senders),
				   usg.nsenders * sizeof(u32)))
			return -EFAULT;
	}
	return 0;
}

static int spindle_copy_cfg(struct spindle_ctl_up *up, struct sp_group_cfg *cfg)
{
	struct spindle_member_cfg um;
	u32 i;
	int ret;

	if (up->reserved || up->err_field || up->err_index || up->self_id_out)
		return spindle_cfg_reject(up, SPINDLE_CFG_E_FLAGS, 0, -EINVAL);
	if (!up->nmembers || up->nmembers > SP_MAX_MEMBERS)
		return spindle_cfg_reject(up, SPINDLE_CFG_E_NMEMBERS, 0, -EINVAL);
	if (!up->nsubgroups || up->nsubgroups > SP_MAX_SUBGROUPS)
		return spindle_cfg_reject(up, SPINDLE_CFG_E_NSUBGROUPS, 0, -EINVAL);
	cfg->group_id = up->group_id;
	cfg->flags = up->flags;
	cfg->self_id = up->self_id;
	cfg->nmembers = up->nmembers;
	cfg->nsubgroups = up->nsubgroups;
	for (i = 0; i < up->nmembers; i++) {
		if (copy_from_user(&um, u64_to_user_ptr(up->members) + i * sizeof(um),
				   sizeof(um)))
			return -EFAULT;
		if (um.id == SPINDLE_SELF_AUTO)
			return spindle_cfg_reject(up, SPINDLE_CFG_E_MEMBER_ID_DUP, i, -EINVAL);
		cfg->members[i].id = um.id;
		cfg->members[i].family = um.family;
		cfg->members[i].port = um.port;
		memcpy(cfg->members[i].addr, um.addr, sizeof(um.addr));
		if (um.family == AF_INET)
			memset(cfg->members[i].addr + 4, 0, 12);
	}
	ret = spindle_copy_subgroups(up, cfg);
	if (ret)
		return ret;

	if (cfg->self_id == SPINDLE_SELF_AUTO) {
		int found = -1;

		for (i = 0; i < cfg->nmembers; i++) {
			if ((cfg->members[i].family != AF_INET &&
			     cfg->members[i].family != AF_INET6) ||
			    !spindle_addr_is_local(&cfg->members[i]))
				continue;
			if (found >= 0)
				return spindle_cfg_reject(up, SPINDLE_CFG_E_SELF_AMBIGUOUS,
							  i, -EINVAL);
			found = i;
		}
		if (found < 0)
			return spindle_cfg_reject(up, SPINDLE_CFG_E_SELF, 0, -EADDRNOTAVAIL);
		cfg->self_id = cfg->members[found].id;
	}
	return 0;
}

long spindle_ctl_up(void __user *uarg)
{
	struct spindle_ctl_up up;
	struct sp_group_cfg *cfg;
	struct sockaddr_storage self;
	struct spindle_group *g;
	struct sp_cfg_err err;
	int ret;

	ret = spindle_copy_arg(&up, sizeof(up), sizeof(up), uarg);
	if (ret)
		return ret;
	cfg = kzalloc(sizeof(*cfg), GFP_KERNEL);
	if (!cfg)
		return -ENOMEM;
	ret = spindle_copy_cfg(&up, cfg);
	if (ret)
		goto out;
	ret = sp_cfg_validate(cfg, &err);
	if (ret) {
		ret = spindle_cfg_reject(&up, err.field, err.index, -EINVAL);
		goto out;
	}
	spindle_member_sockaddr(&cfg->members[sp_cfg_member_index(cfg, cfg->self_id)],
				&self);
	mutex_lock(&spindle_groups_lock);
	if (spindle_group_id_busy(cfg->group_id)) {
		ret = spindle_cfg_reject(&up, SPINDLE_CFG_E_GROUP_EXISTS, 0, -EEXIST);
	} else {
		ret = spindle_group_up(cfg, &self, &g);
		if (ret == -ENODEV || ret == -EADDRNOTAVAIL)
			ret = spindle_cfg_reject(&up, SPINDLE_CFG_E_NO_DEVICE,
						 sp_cfg_member_index(cfg, cfg->self_id),
						 -ENODEV);
	}
	mutex_unlock(&spindle_groups_lock);
	if (!ret)
		up.self_id_out = cfg->self_id;
out:
	kfree(cfg);
	/* the error field and index go back even when the call fails */
	if (ret != -EFAULT && copy_to_user(uarg, &up, sizeof(up)))
		ret = -EFAULT;
	return ret;
}

long spindle_ctl_down(void __user *uarg)
{
	struct spindle_ctl_down down;
	struct spindle_group *g;
	int ret;

	ret = spindle_copy_arg(&down, sizeof(down), sizeof(down), uarg);
	if (ret)
		return ret;
	if (down.reserved)
		return -EINVAL;
	mutex_lock(&spindle_groups_lock);
	g = spindle_group_find(down.group_id);
	if (g)
		spindle_group_leave(g);
	mutex_unlock(&spindle_groups_lock);
	if (!g)
		return -ENOENT;
	/* without the lock: other groups come and go meanwhile */
	spindle_group_down(g, min(down.timeout_ms, 60000U));
	return 0;
}

static void spindle_fill_sub_info(struct spindle_subgroup *sub,
				  struct spindle_subgroup_info *si)
{
	const struct sp_sub *e = &sub->eng;
	u32 b;

	memset(si, 0, sizeof(*si));
	si->id = sub->id;
	si->minor = sub->minor;
	si->mode = sub->cfg.mode;
	si->window = sub->cfg.window;
	si->max_msg = sub->cfg.max_msg;
	si->slot_size = e->slot_size;
	si->nmembers = sub->cfg.nmembers;
	si->nsenders = sub->cfg.nsenders;
	si->my_rank = sub->my_rank;
	si->consumers = READ_ONCE(sub->nconsumers);
	si->free_slots = sp_sub_free_slots(e);
	si->in_flight = READ_ONCE(e->pay_pub) - READ_ONCE(e->pay_freed);
	si->msgs_sent = READ_ONCE(e->stats.msgs_sent);
	si->nulls_sent = READ_ONCE(e->stats.nulls_sent);
	si->null_runs = READ_ONCE(e->stats.null_hdrs);
	si->msgs_received = READ_ONCE(e->stats.msgs_received);
	si->msgs_delivered = READ_ONCE(e->stats.msgs_delivered);
	si->publish_batches = READ_ONCE(e->stats.publish_batches);
	si->receive_batches = READ_ONCE(e->stats.receive_batches);
	si->deliver_batches = READ_ONCE(e->stats.deliver_batches);
	si->writes_posted = READ_ONCE(sub->writes_posted);
	si->bytes_posted = READ_ONCE(sub->bytes_posted);
	si->send_calls = atomic64_read(&sub->send_calls);
	si->recv_calls = atomic64_read(&sub->recv_calls);
	si->recv_msgs = atomic64_read(&sub->recv_msgs);
	for (b = 0; b < SPINDLE_HIST_BUCKETS; b++) {
		si->hist_publish[b] = READ_ONCE(e->stats.hist_publish[b]);
		si->hist_receive[b] = READ_ONCE(e->stats.hist_receive[b]);
		si->hist_deliver[b] = READ_ONCE(e->stats.hist_deliver[b]);
		si->hist_recv_call[b] = atomic64_read(&sub->hist_recv_call[b]);
	}
}

/* What GROUP_INFO reports, taken under the lock and copied out after it. */
struct spindle_info_snap {
	struct spindle_member_info mi[SP_MAX_MEMBERS];
	struct spindle_subgroup_info si[SP_MAX_SUBGROUPS];
	u32 nsg;		/* subgroups this node is in */
};

/* Caller holds spindle_groups_lock; nothing here may fault or sleep long. */
static void spindle_snap_info(struct spindle_group *g,
			      struct spindle_ctl_group_info *gi,
			      struct spindle_info_snap *snap)
{
	u32 i, s;

	lockdep_assert_held(&spindle_groups_lock);
	gi->group_id = g->id;
	gi->state = READ_ONCE(g->state);
	gi->self_id = g->cfg.self_id;
	gi->fault_member = READ_ONCE(g->fault_member);
	gi->busy_ns = READ_ONCE(g->busy_ns);
	gi->idle_ns = READ_ONCE(g->idle_ns);
	gi->view_id = READ_ONCE(g->view_id);
	gi->view_members = (u32)READ_ONCE(g->view_members);
	for (i = 0; i < g->cfg.nmembers; i++) {
		struct spindle_member_info *mi = &snap->mi[i];
		const struct sp_member_cfg *m = &g->cfg.members[i];

		mi->id = m->id;
		mi->family = m->family;
		mi->port = m->port;
		memcpy(mi->addr, m->addr, sizeof(mi->addr));
		if (i == g->me) {
			mi->state = SPINDLE_PEER_SELF;
		} else {
			mi->state = READ_ONCE(g->peers[i]->state);
			mi->connects = READ_ONCE(g->peers[i]->connects);
		}
	}
	snap->nsg = 0;
	for (s = 0; s < g->cfg.nsubgroups; s++)
		if (g->subs[s])
			spindle_fill_sub_info(g->subs[s], &snap->si[snap->nsg++]);
}

/* Copy a snapshot out, in the sizes and room the caller gave. */
static int spindle_copy_info(struct spindle_ctl_group_info *gi,
			     const struct spindle_info_snap *snap, u32 nmembers)
{
	size_t msz = min_t(size_t, gi->member_info_size,
			   sizeof(struct spindle_member_info));
	size_t ssz = min_t(size_t, gi->subgroup_info_size,
			   sizeof(struct spindle_subgroup_info));
	u32 i;

	for (i = 0; gi->members && i < min(gi->nmembers, nmembers); i++)
		if (copy_to_user(u64_to_user_ptr(gi->members) +
				 i * gi->member_info_size, &snap->mi[i], msz))
			return -EFAULT;
	for (i = 0; gi->subgroups && i < min(gi->nsubgroups, snap->nsg); i++)
		if (copy_to_user(u64_to_user_ptr(gi->subgroups) +
				 i * gi->subgroup_info_size, &snap->si[i], ssz))
			return -EFAULT;
	gi->nmembers = nmembers;
	gi->nsubgroups = snap->nsg;
	return 0;
}

long spindle_ctl_group_info(void __user *uarg)
{
	struct spindle_ctl_group_info gi, out;
	struct spindle_group *g = NULL, *it;
	struct spindle_info_snap *snap;
	u32 i = 0, nmembers = 0;
	int ret;

	ret = spindle_copy_arg(&gi, sizeof(gi), sizeof(gi), uarg);
	if (ret)
		return ret;
	if (gi.reserved || gi.view_id || gi.view_members ||
	    (gi.members && !gi.member_info_size) ||
	    (gi.subgroups && !gi.subgroup_info_size))
		return -EINVAL;
	/* about 20 KiB: not on the stack */
	snap = kvzalloc(sizeof(*snap), GFP_KERNEL_ACCOUNT);
	if (!snap)
		return -ENOMEM;
	out = gi;
	mutex_lock(&spindle_groups_lock);
	if (gi.group_id) {
		g = spindle_group_find(gi.group_id);
	} else {
		list_for_each_entry(it, &spindle_groups, node) {
			if (i++ == gi.index) {
				g = it;
				break;
			}
		}
	}
	if (g) {
		spindle_snap_info(g, &out, snap);
		nmembers = g->cfg.nmembers;
	}
	mutex_unlock(&spindle_groups_lock);
	/* copy_to_user() may fault and wait: never under the lock */
	ret = g ? spindle_copy_info(&out, snap, nmembers) : -ENOENT;
	kvfree(snap);
	if (ret)
		return ret;
	return copy_to_user(uarg, &out, sizeof(out)) ? -EFAULT : 0;
}
