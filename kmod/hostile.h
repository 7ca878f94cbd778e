/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Testing only, through debugfs (root): make this node a hostile peer that
 * writes garbage into its peers' memory with the keys they gave it
 * (selftests/host/views.sh).  Its peers must reject it, log once, and take
 * it out of the view.  The transport (xmit.c) calls in here only while a
 * mode is set; what is garbled is always a staged copy, never the memory
 * the engine reads.
 */
#ifndef SPINDLE_HOSTILE_H
#define SPINDLE_HOSTILE_H

#include <linux/compiler.h>
#include <linux/types.h>

struct dentry;
struct spindle_group;
struct spindle_peer;
struct sp_block;

enum spindle_hostile {
	SPINDLE_HOSTILE_OFF,
	SPINDLE_HOSTILE_BACKWARDS,	/* counters go back to 0 */
	SPINDLE_HOSTILE_JUMP,		/* counters jump by 2^63 */
	SPINDLE_HOSTILE_ROW,		/* a row naming strangers (checksum right) */
	SPINDLE_HOSTILE_TORN,		/* rows torn for good (checksum wrong) */
	SPINDLE_HOSTILE_LENGTH,		/* message headers: length over max */
	SPINDLE_HOSTILE_NULLS,		/* null headers: count over the window */
	SPINDLE_HOSTILE_HDR_TORN,	/* headers torn mid-write: kind garbled */
	/*
	 * A row naming strangers written once to member hostile_peer with a
	 * key it gave somebody else (hostile_rkey at hostile_addr), then
	 * silence.
	 */
	SPINDLE_HOSTILE_FOREIGN_KEY,
	SPINDLE_HOSTILE_SILENT,		/* (what FOREIGN_KEY turns into) */
};

#ifdef SPINDLE_TESTING
/* The group's mode: SPINDLE_HOSTILE_OFF unless a test set one (debugfs). */
#define spindle_hostile_mode(g)	READ_ONCE((g)->hostile)

void spindle_hostile_block(struct spindle_group *g, struct sp_block *b);
u32 spindle_hostile_hdrs(const struct spindle_peer *peer, const void *from,
			 u32 len, void *to);
bool spindle_hostile_row(struct spindle_peer *peer, u64 loff, bool bell);
void spindle_hostile_debugfs(struct spindle_group *g, struct dentry *dir);
#else	/* built without the test hooks (SPINDLE_TESTING=n): never hostile */
#define spindle_hostile_mode(g)	((void)(g), SPINDLE_HOSTILE_OFF)

static inline void spindle_hostile_block(struct spindle_group *g, struct sp_block *b) { }
static inline u32 spindle_hostile_hdrs(const struct spindle_peer *peer,
				       const void *from, u32 len, void *to)
{
	return 0;
}

static inline bool spindle_hostile_row(struct spindle_peer *peer, u64 loff, bool bell)
{
	return false;
}

static inline void spindle_hostile_debugfs(struct spindle_group *g, struct dentry *dir) { }
#endif

#endif /* SPINDLE_HOSTILE_H */
