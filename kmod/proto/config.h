/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Group configuration as the protocol core sees it, and its validation.
 *
 * The same validation runs in the kernel (on what SPINDLE_CTL_UP copied in)
 * and in userspace unit tests.  A failure names the offending field with an
 * SP_CFG_E_* code and the index of the member or subgroup it belongs to, so
 * that both the kernel log line and spindlectl can say exactly what to fix.
 */
#ifndef SPINDLE_PROTO_CONFIG_H
#define SPINDLE_PROTO_CONFIG_H

#include "compat.h"

#define SP_MAX_MEMBERS		32
#define SP_MAX_SUBGROUPS	32
#define SP_MAX_WINDOW		4096
#define SP_MAX_MSG		(1024U * 1024U)
#define SP_MAX_RING_BYTES	(64U * 1024U * 1024U)	/* window * slot size */
#define SP_SLOT_ALIGN		64		/* payload slots: whole cache lines */

enum sp_mode {
	SP_MODE_ORDERED = 1,	/* round-robin total order, delivered when stable */
	SP_MODE_UNORDERED = 2,	/* per-sender FIFO, delivered when stable */
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
	u32 members[SP_MAX_MEMBERS];	/* member ids, in rank order */
	u32 senders[SP_MAX_MEMBERS];	/* member ids; position = sender rank */
};

/* Group flags (uapi: SPINDLE_GROUP_*). */
#define SP_GROUP_BASELINE	0x1	/* pre-Spindle behaviour, for comparison */
#define SP_GROUP_TWO_MEMBER_OVERRIDE	0x2	/* see the uapi header */
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

/* Which field a configuration error is about (uapi: SPINDLE_CFG_E_*). */
enum sp_cfg_err_field {
	SP_CFG_OK = 0,
	SP_CFG_E_NMEMBERS,		/* nmembers 0 or over SP_MAX_MEMBERS */
	SP_CFG_E_MEMBER_ID_DUP,		/* members[i].id repeats an earlier id */
	SP_CFG_E_MEMBER_FAMILY,		/* members[i].family not AF_INET/AF_INET6 */
	SP_CFG_E_MEMBER_PORT,		/* members[i].port is 0 */
	SP_CFG_E_MEMBER_ADDR,		/* members[i].addr unspecified/multicast */
	SP_CFG_E_MEMBER_ADDR_DUP,	/* members[i] repeats an address:port */
	SP_CFG_E_SELF,			/* self_id is not a member */
	SP_CFG_E_NSUBGROUPS,		/* nsubgroups 0 or over SP_MAX_SUBGROUPS */
	SP_CFG_E_SUB_ID_DUP,		/* subgroups[i].id repeats */
	SP_CFG_E_SUB_MODE,		/* subgroups[i].mode unknown */
	SP_CFG_E_SUB_WINDOW,		/* subgroups[i].window 0 or too big */
	SP_CFG_E_SUB_MAX_MSG,		/* subgroups[i].max_msg 0 or too big */
	SP_CFG_E_SUB_RING_SIZE,		/* window * slot size too big */
	SP_CFG_E_SUB_NMEMBERS,		/* subgroups[i].nmembers 0 or too many */
	SP_CFG_E_SUB_MEMBER,		/* subgroups[i] names a non-member or twice */
	SP_CFG_E_SUB_NSENDERS,		/* subgroups[i].nsenders 0 or too many */
	SP_CFG_E_SUB_SENDER,		/* a sender that is not a subgroup member, or twice */
	SP_CFG_E_GROUP_ID,		/* group_id 0 */
	SP_CFG_E_FLAGS,			/* an unknown flag */
	SP_CFG_E_MAX
};

struct sp_cfg_err {
	enum sp_cfg_err_field field;
	u32 index;		/* member or subgroup index the error is about */
};

int sp_cfg_validate(const struct sp_group_cfg *cfg, struct sp_cfg_err *err);
const char *sp_cfg_err_name(enum sp_cfg_err_field field);

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
