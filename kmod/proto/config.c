// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Validation of a group configuration.  Nothing in it is trusted: it comes
 * from userspace through SPINDLE_CTL_UP.
 */
#include "config.h"

#ifndef __KERNEL__
#include <sys/socket.h>
#else
#include <linux/socket.h>
#endif

int sp_cfg_member_index(const struct sp_group_cfg *cfg, u32 id)
{
	u32 i;

	for (i = 0; i < cfg->nmembers && i < SP_MAX_MEMBERS; i++)
		if (cfg->members[i].id == id)
			return (int)i;
	return -1;
}

static int sp_index_of(const u32 *ids, u32 n, u32 id)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return (int)i;
	return -1;
}

int sp_sub_sender_rank(const struct sp_sub_cfg *sub, u32 id)
{
	return sp_index_of(sub->senders, sub->nsenders, id);
}

int sp_sub_member_pos(const struct sp_sub_cfg *sub, u32 id)
{
	return sp_index_of(sub->members, sub->nmembers, id);
}

static int sp_fail(struct sp_cfg_err *err, enum spindle_cfg_err f, u32 index)
{
	err->field = f;
	err->index = index;
	return -EINVAL;
}

static bool sp_addr_usable(const struct sp_member_cfg *m)
{
	static const u8 zero[16];

	if (m->family == AF_INET) {
		/* not 0.0.0.0, not multicast/broadcast (224.0.0.0 and up) */
		return memcmp(m->addr, zero, 4) && m->addr[0] < 224;
	}
	/* IPv6: not ::, not multicast ff00::/8 */
	return memcmp(m->addr, zero, 16) && m->addr[0] != 0xff;
}

static bool sp_same_endpoint(const struct sp_member_cfg *a,
			     const struct sp_member_cfg *b)
{
	size_t len = a->family == AF_INET ? 4 : 16;

	return a->family == b->family && a->port == b->port &&
	       !memcmp(a->addr, b->addr, len);
}

static int sp_validate_members(const struct sp_group_cfg *cfg,
			       struct sp_cfg_err *err)
{
	u32 i, j;

	if (cfg->nmembers == 0 || cfg->nmembers > SP_MAX_MEMBERS)
		return sp_fail(err, SPINDLE_CFG_E_NMEMBERS, 0);
	for (i = 0; i < cfg->nmembers; i++) {
		const struct sp_member_cfg *m = &cfg->members[i];

		if (m->family != AF_INET && m->family != AF_INET6)
			return sp_fail(err, SPINDLE_CFG_E_MEMBER_FAMILY, i);
		if (!m->port)
			return sp_fail(err, SPINDLE_CFG_E_MEMBER_PORT, i);
		if (!sp_addr_usable(m))
			return sp_fail(err, SPINDLE_CFG_E_MEMBER_ADDR, i);
		for (j = 0; j < i; j++) {
			if (cfg->members[j].id == m->id)
				return sp_fail(err, SPINDLE_CFG_E_MEMBER_ID_DUP, i);
			if (sp_same_endpoint(&cfg->members[j], m))
				return sp_fail(err, SPINDLE_CFG_E_MEMBER_ADDR_DUP, i);
		}
	}
	if (sp_cfg_member_index(cfg, cfg->self_id) < 0)
		return sp_fail(err, SPINDLE_CFG_E_SELF, 0);
	return 0;
}

static int sp_validate_sub(const struct sp_group_cfg *cfg, u32 i,
			   struct sp_cfg_err *err)
{
	const struct sp_sub_cfg *sub = &cfg->subgroups[i];
	u32 j;

	for (j = 0; j < i; j++)
		if (cfg->subgroups[j].id == sub->id)
			return sp_fail(err, SPINDLE_CFG_E_SG_ID_DUP, i);
	if (sub->mode != SP_MODE_ORDERED && sub->mode != SP_MODE_UNORDERED)
		return sp_fail(err, SPINDLE_CFG_E_SG_MODE, i);
	if (sub->window == 0 || sub->window > SP_MAX_WINDOW)
		return sp_fail(err, SPINDLE_CFG_E_SG_WINDOW, i);
	if (sub->max_msg == 0 || sub->max_msg > SP_MAX_MSG)
		return sp_fail(err, SPINDLE_CFG_E_SG_MAX_MSG, i);
	if ((u64)sub->window * sp_sub_slot_size(sub) > SP_MAX_RING_BYTES)
		return sp_fail(err, SPINDLE_CFG_E_SG_RING_SIZE, i);
	/* a block device's copies agree only in one order, a sector a message */
	if (sub->blk_mib && (sub->blk_mib > SP_MAX_BLK_MIB ||
			     sub->mode != SP_MODE_ORDERED || sub->max_msg < SP_BLK_MIN_MSG))
		return sp_fail(err, SPINDLE_CFG_E_SG_BLK, i);
	if (sub->nmembers == 0 || sub->nmembers > cfg->nmembers)
		return sp_fail(err, SPINDLE_CFG_E_SG_NMEMBERS, i);
	for (j = 0; j < sub->nmembers; j++) {
		if (sp_cfg_member_index(cfg, sub->members[j]) < 0 ||
		    sp_index_of(sub->members, j, sub->members[j]) >= 0)
			return sp_fail(err, SPINDLE_CFG_E_SG_MEMBER, i);
	}
	if (sub->nsenders == 0 || sub->nsenders > sub->nmembers)
		return sp_fail(err, SPINDLE_CFG_E_SG_NSENDERS, i);
	for (j = 0; j < sub->nsenders; j++) {
		if (sp_sub_member_pos(sub, sub->senders[j]) < 0 ||
		    sp_index_of(sub->senders, j, sub->senders[j]) >= 0)
			return sp_fail(err, SPINDLE_CFG_E_SG_SENDER, i);
	}
	return 0;
}

/**
 * sp_cfg_validate - check every field of a group configuration
 * @cfg: the configuration, self_id already resolved
 * @err: on failure, which field of which member/subgroup is wrong
 *
 * Return: 0, or -EINVAL with @err filled in.
 */
int sp_cfg_validate(const struct sp_group_cfg *cfg, struct sp_cfg_err *err)
{
	u32 i;
	int ret;

	err->field = SPINDLE_CFG_OK;
	err->index = 0;
	if (!cfg->group_id)
		return sp_fail(err, SPINDLE_CFG_E_GROUP_ID, 0);
	if (cfg->flags & ~SP_GROUP_FLAGS)
		return sp_fail(err, SPINDLE_CFG_E_GROUP_FLAGS, 0);
	ret = sp_validate_members(cfg, err);
	if (ret)
		return ret;
	if (cfg->nsubgroups == 0 || cfg->nsubgroups > SP_MAX_SUBGROUPS)
		return sp_fail(err, SPINDLE_CFG_E_NSUBGROUPS, 0);
	for (i = 0; i < cfg->nsubgroups; i++) {
		ret = sp_validate_sub(cfg, i, err);
		if (ret)
			return ret;
	}
	return 0;
}
