/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ib_verbs transport under the predicate pass (xmit.c): queueing
 * writes to a peer, posting them as one chain, polling the CQ.
 */
#ifndef SPINDLE_XMIT_H
#define SPINDLE_XMIT_H

#include <linux/types.h>

#include "proto/engine.h"

struct spindle_group;
struct spindle_mrset;
struct spindle_peer;
struct spindle_rregion;
struct spindle_subgroup;

bool spindle_peer_ready(struct spindle_peer *peer);
u32 spindle_peer_writes(const struct spindle_peer *peer);
bool spindle_coalesces(const struct spindle_group *g);
void spindle_peer_queue(struct spindle_peer *peer, struct spindle_subgroup *sub,
			const struct sp_wr *w);
int spindle_peer_flush(struct spindle_peer *peer);
u32 spindle_queue_range(struct spindle_peer *peer,
			const struct spindle_mrset *lset, u64 loff,
			const struct spindle_rregion *rr, u64 roff, u32 len,
			bool bell, u32 imm);
bool spindle_row_landed(const struct spindle_peer *peer);
void spindle_peer_queue_row(struct spindle_peer *peer, bool bell);
int spindle_poll_cq(struct spindle_group *g);
void spindle_flush_all(struct spindle_group *g);

#endif /* SPINDLE_XMIT_H */
