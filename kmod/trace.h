/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of spindle.ko (trace.c defines them).  Enough to rebuild a
 * timeline of a group: what each pass of the predicate thread published,
 * received and delivered, per subgroup, how views changed, and where one
 * message spends its time on the way (the events at the end).
 *
 *   echo 1 > /sys/kernel/tracing/events/spindle/enable
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM spindle

#if !defined(SPINDLE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SPINDLE_TRACE_H

#include <linux/tracepoint.h>

#include "spindle_compat.h"

/* One sp_sub_publish(): headers published, and the data messages among them. */
TRACE_EVENT(spindle_send_batch,
	    TP_PROTO(u32 group, u32 subgroup, u32 hdrs, u32 msgs),
	    TP_ARGS(group, subgroup, hdrs, msgs),
	    TP_STRUCT__entry(__field(u32, group)
			     __field(u32, subgroup)
			     __field(u32, hdrs)
			     __field(u32, msgs)
	    ),
	    TP_fast_assign(__entry->group = group;
			   __entry->subgroup = subgroup;
			   __entry->hdrs = hdrs;
			   __entry->msgs = msgs;
	    ),
	    TP_printk("group=%u subgroup=%u hdrs=%u msgs=%u",
		      __entry->group, __entry->subgroup, __entry->hdrs,
		      __entry->msgs)
);

/* One sp_sub_publish() that sent nulls: voided slots and null runs. */
TRACE_EVENT(spindle_null_send,
	    TP_PROTO(u32 group, u32 subgroup, u32 nulls),
	    TP_ARGS(group, subgroup, nulls),
	    TP_STRUCT__entry(__field(u32, group)
			     __field(u32, subgroup)
			     __field(u32, nulls)
	    ),
	    TP_fast_assign(__entry->group = group;
			   __entry->subgroup = subgroup;
			   __entry->nulls = nulls;
	    ),
	    TP_printk("group=%u subgroup=%u nulls=%u",
		      __entry->group, __entry->subgroup, __entry->nulls)
);

/* One sp_sub_receive(): headers taken from the peers. */
TRACE_EVENT(spindle_recv_batch,
	    TP_PROTO(u32 group, u32 subgroup, u32 hdrs),
	    TP_ARGS(group, subgroup, hdrs),
	    TP_STRUCT__entry(__field(u32, group)
			     __field(u32, subgroup)
			     __field(u32, hdrs)
	    ),
	    TP_fast_assign(__entry->group = group;
			   __entry->subgroup = subgroup;
			   __entry->hdrs = hdrs;
	    ),
	    TP_printk("group=%u subgroup=%u hdrs=%u",
		      __entry->group, __entry->subgroup, __entry->hdrs)
);

/* Messages handed to the consumers at once; seq is the first one's. */
TRACE_EVENT(spindle_deliver_batch,
	    TP_PROTO(u32 group, u32 subgroup, u64 seq, u32 msgs),
	    TP_ARGS(group, subgroup, seq, msgs),
	    TP_STRUCT__entry(__field(u32, group)
			     __field(u32, subgroup)
			     __field(u64, seq)
			     __field(u32, msgs)
	    ),
	    TP_fast_assign(__entry->group = group;
			   __entry->subgroup = subgroup;
			   __entry->seq = seq;
			   __entry->msgs = msgs;
	    ),
	    TP_printk("group=%u subgroup=%u seq=%llu msgs=%u",
		      __entry->group, __entry->subgroup, __entry->seq,
		      __entry->msgs)
);

/* A member is suspected (or its connection reported lost). */
TRACE_EVENT(spindle_suspect,
	    TP_PROTO(u32 group, u32 member, const char *reason),
	    TP_ARGS(group, member, reason),
	    TP_STRUCT__entry(__field(u32, group)
			     __field(u32, member)
			     __string(reason, reason)
	    ),
	    TP_fast_assign(__entry->group = group;
			   __entry->member = member;
			   spindle_assign_str(reason, reason);
	    ),
	    TP_printk("group=%u member=%u reason=%s",
		      __entry->group, __entry->member, __get_str(reason))
);

/*
 * A step of a view change: "wedge" (the view that ends), "install" (the
 * new view, after ms) or "fail" (this member stops, after ms).
 */
TRACE_EVENT(spindle_view_change,
	    TP_PROTO(u32 group, const char *phase, u64 view, u64 members, u64 ms),
	    TP_ARGS(group, phase, view, members, ms),
	    TP_STRUCT__entry(__field(u32, group)
			     __string(phase, phase)
			     __field(u64, view)
			     __field(u64, members)
			     __field(u64, ms)
	    ),
	    TP_fast_assign(__entry->group = group;
			   spindle_assign_str(phase, phase);
			   __entry->view = view;
			   __entry->members = members;
			   __entry->ms = ms;
	    ),
	    TP_printk("group=%u phase=%s view=%llu members=%#llx ms=%llu",
		      __entry->group, __get_str(phase), __entry->view,
		      __entry->members, __entry->ms)
);

/*
 * The events along one message, for the latency breakdown
 * (bench/breakdown): marked ready, published (spindle_send_batch), posted,
 * the peer's doorbell, received, its counters back, delivered, consumed.
 */

/* Messages marked ready: found on the producer page by the thread, or by a call. */
TRACE_EVENT(spindle_ready,
	    TP_PROTO(u32 group, u32 subgroup, u32 msgs, bool page),
	    TP_ARGS(group, subgroup, msgs, page),
	    TP_STRUCT__entry(__field(u32, group)
			     __field(u32, subgroup)
			     __field(u32, msgs)
			     __field(bool, page)
	    ),
	    TP_fast_assign(__entry->group = group;
			   __entry->subgroup = subgroup;
			   __entry->msgs = msgs;
			   __entry->page = page;
	    ),
	    TP_printk("group=%u subgroup=%u msgs=%u by=%s",
		      __entry->group, __entry->subgroup, __entry->msgs,
		      __entry->page ? "page" : "call")
);

/*
 * One chain posted to a member: its writes, the doorbells among them, and
 * the row pushes among them (heartbeats and view changes, not messages).
 */
TRACE_EVENT(spindle_post,
	    TP_PROTO(u32 group, u32 member, u32 wrs, u32 bells, u32 rows),
	    TP_ARGS(group, member, wrs, bells, rows),
	    TP_STRUCT__entry(__field(u32, group)
			     __field(u32, member)
			     __field(u32, wrs)
			     __field(u32, bells)
			     __field(u32, rows)
	    ),
	    TP_fast_assign(__entry->group = group;
			   __entry->member = member;
			   __entry->wrs = wrs;
			   __entry->bells = bells;
			   __entry->rows = rows;
	    ),
	    TP_printk("group=%u member=%u wrs=%u bells=%u rows=%u",
		      __entry->group, __entry->member, __entry->wrs,
		      __entry->bells, __entry->rows)
);

/* The completion queue's event: it had a completion, and was armed. */
TRACE_EVENT(spindle_cq_event,
	    TP_PROTO(u32 group),
	    TP_ARGS(group),
	    TP_STRUCT__entry(__field(u32, group)),
	    TP_fast_assign(__entry->group = group;),
	    TP_printk("group=%u", __entry->group)
);

/* The predicate thread back from a park of @ns nanoseconds. */
TRACE_EVENT(spindle_wake,
	    TP_PROTO(u32 group, u64 ns),
	    TP_ARGS(group, ns),
	    TP_STRUCT__entry(__field(u32, group)
			     __field(u64, ns)
	    ),
	    TP_fast_assign(__entry->group = group;
			   __entry->ns = ns;
	    ),
	    TP_printk("group=%u ns=%llu", __entry->group, __entry->ns)
);

/*
 * A member's doorbell, polled from the completion queue: its counters
 * landed.  @imm as the peer wrote it: a subgroup's index, or U32_MAX for a
 * row (not checked here: nothing else reads it).
 */
TRACE_EVENT(spindle_doorbell,
	    TP_PROTO(u32 group, u32 member, u32 imm),
	    TP_ARGS(group, member, imm),
	    TP_STRUCT__entry(__field(u32, group)
			     __field(u32, member)
			     __field(u32, imm)
	    ),
	    TP_fast_assign(__entry->group = group;
			   __entry->member = member;
			   __entry->imm = imm;
	    ),
	    TP_printk("group=%u member=%u imm=%u",
		      __entry->group, __entry->member, __entry->imm)
);

/* RECV handed a process @msgs entries of a subgroup's delivery queue. */
TRACE_EVENT(spindle_consume,
	    TP_PROTO(u32 group, u32 subgroup, u32 msgs),
	    TP_ARGS(group, subgroup, msgs),
	    TP_STRUCT__entry(__field(u32, group)
			     __field(u32, subgroup)
			     __field(u32, msgs)
	    ),
	    TP_fast_assign(__entry->group = group;
			   __entry->subgroup = subgroup;
			   __entry->msgs = msgs;
	    ),
	    TP_printk("group=%u subgroup=%u msgs=%u",
		      __entry->group, __entry->subgroup, __entry->msgs)
);

#endif /* SPINDLE_TRACE_H */

/* out of tree: trace.c is built with -I$(src) (kmod/Kbuild) */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
