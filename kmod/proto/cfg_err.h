/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What each configuration error code (enum spindle_cfg_err, uapi) is
 * about, in words: the one table the kernel's "configuration rejected"
 * line and libspindle's spindle_cfg_err_name() both print.  Header only,
 * over nothing but the uapi header, so that the library needs no other
 * piece of the protocol core (which is why the includer brings ARRAY_SIZE:
 * the kernel's <linux/kernel.h>, the unit tests' kcompat.h, libspindle's
 * own).
 */
#ifndef SPINDLE_PROTO_CFG_ERR_H
#define SPINDLE_PROTO_CFG_ERR_H

#include <linux/spindle.h>
#ifdef __KERNEL__
#include <linux/kernel.h>
#endif

static inline const char *sp_cfg_err_name(__u32 field)
{
	static const char *const names[] = {
		[SPINDLE_CFG_OK] = "ok",
		[SPINDLE_CFG_E_NMEMBERS] = "number of members",
		[SPINDLE_CFG_E_MEMBER_ID_DUP] = "member id (repeated)",
		[SPINDLE_CFG_E_MEMBER_FAMILY] = "member address family",
		[SPINDLE_CFG_E_MEMBER_PORT] = "member port",
		[SPINDLE_CFG_E_MEMBER_ADDR] = "member address (unspecified or multicast)",
		[SPINDLE_CFG_E_MEMBER_ADDR_DUP] = "member address:port (repeated)",
		[SPINDLE_CFG_E_SELF] = "self (not a member, or no member's address is local)",
		[SPINDLE_CFG_E_NSUBGROUPS] = "number of subgroups",
		[SPINDLE_CFG_E_SG_ID_DUP] = "subgroup id (repeated)",
		[SPINDLE_CFG_E_SG_MODE] = "subgroup mode",
		[SPINDLE_CFG_E_SG_WINDOW] = "subgroup window",
		[SPINDLE_CFG_E_SG_MAX_MSG] = "subgroup max_msg",
		[SPINDLE_CFG_E_SG_RING_SIZE] = "subgroup window * max_msg (ring too large)",
		[SPINDLE_CFG_E_SG_NMEMBERS] = "subgroup members (count)",
		[SPINDLE_CFG_E_SG_MEMBER] = "subgroup members (not a group member, or repeated)",
		[SPINDLE_CFG_E_SG_NSENDERS] = "subgroup senders (count)",
		[SPINDLE_CFG_E_SG_SENDER] = "subgroup senders (not a subgroup member, or repeated)",
		[SPINDLE_CFG_E_GROUP_ID] = "group id",
		[SPINDLE_CFG_E_GROUP_FLAGS] = "group flags (an unknown flag)",
		[SPINDLE_CFG_E_FLAGS] = "flags or reserved fields (not zero)",
		[SPINDLE_CFG_E_GROUP_EXISTS] = "group id (already up on this node)",
		[SPINDLE_CFG_E_SELF_AMBIGUOUS] = "self (several members' addresses are local)",
		[SPINDLE_CFG_E_NO_DEVICE] = "self (no RDMA device has this member's address)",
		[SPINDLE_CFG_E_SG_BLK] = "subgroup blk_mib (too large, or mode or max_msg unfit)",
	};

	if (field >= ARRAY_SIZE(names) || !names[field])
		return "unknown field";
	return names[field];
}

#endif /* SPINDLE_PROTO_CFG_ERR_H */
