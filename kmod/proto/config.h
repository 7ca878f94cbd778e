/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Group configuration as the protocol core sees it, and its validation.
 *
 * The same validation runs in the kernel (on what SPINDLE_CTL_UP copied in)
 * and in userspace unit tests.  A failure names the offending field with a
 * SPINDLE_CFG_E_* code (uapi; cfg_err.h words it) and the index of the
 * member or subgroup it belongs to, so that both the kernel log line and
 * spindlectl can say exactly what to fix.
 */
#ifndef SPINDLE_PROTO_CONFIG_H
#define SPINDLE_PROTO_CONFIG_H

#include "compat.h"
#include "cfg_err.h"

/* the uapi's limits (cfg_err.h includes it): one definition of each */
#define SP_MAX_MEMBERS		SPINDLE_MAX_MEMBERS
#define SP_MAX_SUBGROUPS	SPINDLE_MAX_SUBGROUPS
#define SP_MAX_WINDOW		SPINDLE_MAX_WINDOW
#define SP_MAX_MSG		SPINDLE_MAX_MSG
#define SP_MAX_BLK_MIB		SPINDLE_MAX_BLK_MIB
#define SP_BLK_MIN_MSG		SPINDLE_BLK_MIN_MSG
#define SP_MAX_RING_BYTES	(64U * 1024U * 1024U)	/* window * slot size */
#define SP_SLOT_ALIGN		64		/* payload slots: whole cache lines */

enum sp_mode {
	SP_MODE_ORDERED = SPINDLE_MODE_ORDERED,		/* round-robin total order */
	SP_MODE_UNORDERED = SPINDLE_MODE_UNORDERED,	/* per-sender FIFO */
};

struct sp_member_cfg {
	u32 id;
	u16 family;		/* AF_INET or AF_INET6 */
	u16 port;		/* host order, != 0 */
	u8 addr[16];		/* IPv4 in the first 4 bytes */
};

struct sp_sub_cfg {
	u32 id;
	u32 window;		/* payload slots per sender */
	u32 max_msg;		/* largest payload in bytes */
	u32 mode;		/* enum sp_mode */
	u32 nmembers;
	u32 nsenders;
	u32 blk_mib;		/* the block device's size, 0: none */
	u32 members[SP_MAX_MEMBERS];	/* member ids, in rank order */
	u32 senders[SP_MAX_MEMBERS];	/* member ids; position = sender rank */
};

/* Group flags: the uapi's SPINDLE_GROUP_* */
#define SP_GROUP_BASELINE	SPINDLE_GROUP_BASELINE	/* pre-Spindle, for comparison */
#define SP_GROUP_TWO_MEMBER_OVERRIDE	SPINDLE_GROUP_TWO_MEMBER_OVERRIDE
#define SP_GROUP_FLAGS		(SP_GROUP_BASELINE | SP_GROUP_TWO_MEMBER_OVERRIDE)

struct sp_group_cfg {
	u32 group_id;
	u32 self_id;		/* id of this node (resolved before validation) */
	u32 flags;		/* SP_GROUP_* */
	u32 nmembers;
	u32 nsubgroups;
	struct sp_member_cfg members[SP_MAX_MEMBERS];
	struct sp_sub_cfg subgroups[SP_MAX_SUBGROUPS];
};

struct sp_cfg_err {
	enum spindle_cfg_err field;	/* uapi: what is wrong */
	u32 index;		/* member or subgroup index the error is about */
};

int sp_cfg_validate(const struct sp_group_cfg *cfg, struct sp_cfg_err *err);

/* Index of member @id in cfg->members, or -1. */
int sp_cfg_member_index(const struct sp_group_cfg *cfg, u32 id);

/* Sender rank of member @id in @sub, or -1 when it does not send there. */
int sp_sub_sender_rank(const struct sp_sub_cfg *sub, u32 id);

/* Position of member @id in @sub's member list, or -1. */
int sp_sub_member_pos(const struct sp_sub_cfg *sub, u32 id);

/* Payload slot stride of a subgroup: max_msg rounded up to whole cache lines. */
static inline u32 sp_sub_slot_size(const struct sp_sub_cfg *sub)
{
	return ALIGN(sub->max_msg, SP_SLOT_ALIGN);
}

#endif /* SPINDLE_PROTO_CONFIG_H */
