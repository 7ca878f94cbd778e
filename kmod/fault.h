/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Testing only: phase-exact faults in view changes (fault.c), and holds
 * that keep a window open for a test (fault_hold.c).
 */
#ifndef SPINDLE_FAULT_H
#define SPINDLE_FAULT_H

#include <linux/types.h>

struct spindle_group;
struct dentry;

/* Points of a view change, as this member reaches them. */
enum spindle_fault_point {
	SPINDLE_FAULT_OFF,
	SPINDLE_FAULT_WEDGED,		/* it wedged: a change began */
	SPINDLE_FAULT_PROPOSED,		/* as leader, it proposed a trim */
	SPINDLE_FAULT_ECHOED,		/* it echoed a leader's proposal */
	SPINDLE_FAULT_COMMITTED,	/* it saw (or made) the commit */
	SPINDLE_FAULT_DRAINED,		/* its old-view writes are done */
	SPINDLE_FAULT_READY,		/* it reset for the new view */
	SPINDLE_FAULT_JOINING,		/* a new incarnation, it asks to join */
	SPINDLE_FAULT_NOW,		/* the next pass, in a change or not */
	SPINDLE_FAULT_NPOINTS,
};

/* What it does there. */
enum spindle_fault_action {
	SPINDLE_FAULT_SILENT,		/* nothing more leaves it */
	SPINDLE_FAULT_DIE,		/* silent, then its connections drop */
	SPINDLE_FAULT_STALL,		/* silent for stall_ms, then goes on */
	SPINDLE_FAULT_SHORT,		/* proposed: halve the trim (a faulty leader) */
	SPINDLE_FAULT_NACTIONS,
};

/* Per group: what is armed, and whether it fired (under no lock: one
 * writer, the predicate thread, once armed through debugfs).
 */
struct spindle_fault {
	u32 point;			/* enum spindle_fault_point */
	u32 action;			/* enum spindle_fault_action */
	u32 stall_ms;			/* STALL: for how long */
	bool reached;			/* fires on the next pass */
	bool fired;
	bool dropped;			/* DIE: the connections went down */
	u64 fired_at;			/* ns */
};

/* Holds that keep a window open for a test (fault_hold.c). */
enum spindle_fault_hold {
	SPINDLE_HOLD_SEND,		/* a SEND reserved, not yet recorded */
	SPINDLE_HOLD_UP,		/* a group up: its devices exist */
	SPINDLE_HOLD_ACTIVE,		/* every member connected, not yet active */
	SPINDLE_HOLD_DOWN,		/* a group going down, off the list */
	SPINDLE_HOLD_NPOINTS,
};

#ifdef SPINDLE_TESTING
void spindle_fault_hold(enum spindle_fault_hold h, u32 group);
void spindle_fault_hold_thread(enum spindle_fault_hold h,
			       struct spindle_group *g);
u32 spindle_fault_cq_entries(u32 want, u32 group);
void spindle_fault_cm_delay(void);
u64 spindle_fault_row_hold_ns(void);

void spindle_fault_init(struct spindle_group *g);
void spindle_fault_reached(struct spindle_group *g, enum spindle_fault_point p);
bool spindle_fault_short_trim(struct spindle_group *g);
bool spindle_fault_pass(struct spindle_group *g, u64 now);
void spindle_fault_debugfs(struct spindle_group *g, struct dentry *dir);
#else	/* built without the test hooks (SPINDLE_TESTING=n): none of it */
static inline void spindle_fault_hold(enum spindle_fault_hold h, u32 group) { }
static inline void spindle_fault_hold_thread(enum spindle_fault_hold h,
					     struct spindle_group *g) { }
static inline u32 spindle_fault_cq_entries(u32 want, u32 group) { return want; }
static inline void spindle_fault_cm_delay(void) { }
static inline u64 spindle_fault_row_hold_ns(void) { return 0; }

static inline void spindle_fault_init(struct spindle_group *g) { }
static inline void spindle_fault_reached(struct spindle_group *g,
					 enum spindle_fault_point p) { }
static inline bool spindle_fault_short_trim(struct spindle_group *g) { return false; }
static inline bool spindle_fault_pass(struct spindle_group *g, u64 now) { return false; }
static inline void spindle_fault_debugfs(struct spindle_group *g, struct dentry *dir) { }
#endif

#endif
