/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note OR BSD-2-Clause */
/*
 * Spindle: totally ordered atomic multicast over RDMA.
 *
 * Userspace ABI.  Two kinds of character device:
 *
 *   /dev/spindle_ctl	control: bring groups up and down, read their state.
 *			Every ioctl needs CAP_NET_ADMIN.
 *   /dev/spindleN	one per subgroup this node belongs to.  SPINDLE_IOC_INFO
 *			says which group and subgroup it is and where its rings
 *			are; mmap() maps them; SPINDLE_IOC_SEND publishes
 *			messages built in place; SPINDLE_IOC_RECV takes
 *			deliveries in batches; poll() says which would not block.
 *
 * Argument rules, for every ioctl: the structure starts with __u32 size, the
 * size the caller was built with.  The kernel accepts any size from the
 * first published version of the structure up (fields it does not know of
 * read as zero), fails a larger size whose extra bytes are not all zero
 * with E2BIG, and fails any reserved field or unknown flag bit that is not
 * zero with EINVAL.  Arrays are passed as a pointer (__aligned_u64) and a
 * count; a bad pointer is EFAULT.
 *
 * Sending (see spindle(4), man/spindle.4):
 *   1. SPINDLE_IOC_SEND with .reserve = k hands out up to k consecutive
 *	slots of this node's ring; .first says which (absolute positions:
 *	slot = position % window, at byte (slot * slot_size) of the ring).
 *   2. Build each message in its slot, in the mapping of the send ring.
 *   3. SPINDLE_IOC_SEND with .count = k and .lens marks this file's k
 *	oldest reservations ready (SPINDLE_LEN_VOID gives one up: it goes out
 *	as a null and is never delivered).  One call may mark and reserve.
 *   Or, with no system call under load: map the producer page (offset
 *   SPINDLE_MMAP_PRODUCER) and see struct spindle_producer.
 *   Reservations belong to the open file and are published in ring order:
 *   one not yet marked holds back later ones, from any file.  Closing the
 *   file voids what it still holds.  Threads that send concurrently open
 *   the device once each, or serialise their SEND calls.
 *
 * Receiving: SPINDLE_IOC_RECV returns descriptors of delivered messages
 * (sender rank, offset in that sender's ring, length); the message is read
 * in place through the mapping of that ring.  The next RECV call (or close)
 * releases the previous batch: only then may the slots be reused, so a
 * consumer that does not come back holds every sender back.  A file (open
 * for reading) becomes a consumer with its first SPINDLE_IOC_RECV, which
 * may ask for nothing (max 0), and from then on sees every message
 * delivered until it is closed.  Messages that become deliverable while a
 * subgroup has no consumer wait (up to the window) for one.  Mapping a ring
 * needs a file open for reading; a process that only sends opens O_RDWR
 * and never calls RECV.
 */
#ifndef _UAPI_LINUX_SPINDLE_H
#define _UAPI_LINUX_SPINDLE_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define SPINDLE_ABI_VERSION	1
#define SPINDLE_CTL_DEVICE	"/dev/spindle_ctl"
#define SPINDLE_DEV_PREFIX	"/dev/spindle"

#define SPINDLE_IOC_MAGIC	0xD5

#define SPINDLE_MAX_MEMBERS	32
#define SPINDLE_MAX_SUBGROUPS	32
#define SPINDLE_MAX_WINDOW	4096
#define SPINDLE_MAX_MSG		0x100000	/* 1 MiB */
#define SPINDLE_MAX_BLK_MIB	1024	/* a subgroup's block device */
#define SPINDLE_BLK_MIN_MSG	(512 + 64)	/* a sector and the block header */

#define SPINDLE_SELF_AUTO	0xffffffffU	/* find self from local addresses */
#define SPINDLE_LEN_VOID	0xffffffffU	/* give a reservation up */

/*
 * Either mode delivers a message only once every member has it, so a
 * failure is all or none; they differ in the order across senders.
 */
enum spindle_mode {
	SPINDLE_MODE_ORDERED = 1,	/* round-robin total order */
	SPINDLE_MODE_UNORDERED = 2	/* FIFO per sender, no order across */
};

/* Which field of a configuration SPINDLE_CTL_UP rejected (.err_field). */
enum spindle_cfg_err {
	SPINDLE_CFG_OK = 0,
	SPINDLE_CFG_E_NMEMBERS,
	SPINDLE_CFG_E_MEMBER_ID_DUP,
	SPINDLE_CFG_E_MEMBER_FAMILY,
	SPINDLE_CFG_E_MEMBER_PORT,
	SPINDLE_CFG_E_MEMBER_ADDR,
	SPINDLE_CFG_E_MEMBER_ADDR_DUP,
	SPINDLE_CFG_E_SELF,
	SPINDLE_CFG_E_NSUBGROUPS,
	SPINDLE_CFG_E_SG_ID_DUP,
	SPINDLE_CFG_E_SG_MODE,
	SPINDLE_CFG_E_SG_WINDOW,
	SPINDLE_CFG_E_SG_MAX_MSG,
	SPINDLE_CFG_E_SG_RING_SIZE,
	SPINDLE_CFG_E_SG_NMEMBERS,
	SPINDLE_CFG_E_SG_MEMBER,
	SPINDLE_CFG_E_SG_NSENDERS,
	SPINDLE_CFG_E_SG_SENDER,
	SPINDLE_CFG_E_GROUP_ID,
	SPINDLE_CFG_E_GROUP_FLAGS,	/* an unknown group flag */
	SPINDLE_CFG_E_FLAGS,		/* other flags or reserved fields */
	SPINDLE_CFG_E_GROUP_EXISTS,	/* group_id already up (EEXIST) */
	SPINDLE_CFG_E_SELF_AMBIGUOUS,	/* several members' addresses are local */
	SPINDLE_CFG_E_NO_DEVICE,	/* self's address has no RDMA device */
	SPINDLE_CFG_E_SG_BLK	/* blk_mib too large, or mode or max_msg unfit */
};

/*
 * Group flags (struct spindle_ctl_up .flags).  SPINDLE_GROUP_BASELINE runs
 * the group as Derecho did before Spindle, for comparisons on the same
 * build: one message per RDMA write, a counter push per message received
 * and delivered, no null-sends, writes posted under the subgroup lock.
 */
#define SPINDLE_GROUP_BASELINE	0x1
/*
 * SPINDLE_GROUP_TWO_MEMBER_OVERRIDE: in a view of two members, when one
 * fails the lower-ranked survivor goes on alone (by default it stops: one
 * of two is no majority).  The risk: if the "failure" was a partition,
 * both sides may go on, each believing the other dead, and their histories
 * diverge.  Use it only where a partition cannot happen or does not matter.
 */
#define SPINDLE_GROUP_TWO_MEMBER_OVERRIDE	0x2

/* ---- /dev/spindle_ctl ---- */

/**
 * struct spindle_ctl_version - SPINDLE_CTL_VERSION
 * @size: sizeof(struct spindle_ctl_version)
 * @abi_version: out: SPINDLE_ABI_VERSION of the running module
 * @rdma_devices: out: RDMA devices the module is bound to now
 * @reserved: must be zero
 */
struct spindle_ctl_version {
	__u32 size;
	__u32 abi_version;
	__u32 rdma_devices;
	__u32 reserved;
};

/**
 * struct spindle_member_cfg - one member of a group
 * @id: member id, unique in the group, not SPINDLE_SELF_AUTO
 * @family: AF_INET or AF_INET6
 * @port: rdma_cm port, host byte order
 * @addr: IPv4 address in the first 4 bytes, or IPv6 address
 */
struct spindle_member_cfg {
	__u32 id;
	__u16 family;
	__u16 port;
	__u8 addr[16];
};

/**
 * struct spindle_subgroup_cfg - one subgroup
 * @id: subgroup id, unique in the group
 * @window: slots per sender ring, 1..SPINDLE_MAX_WINDOW
 * @max_msg: largest message in bytes, 1..SPINDLE_MAX_MSG
 * @mode: enum spindle_mode
 * @nmembers: entries in @members
 * @nsenders: entries in @senders
 * @members: pointer to __u32 member ids
 * @senders: pointer to __u32 member ids; the position is the sender rank
 * @flags: must be zero
 * @blk_mib: MiB of the replicated block device (spindle_blk) on this
 *	subgroup, 1..SPINDLE_MAX_BLK_MIB, or 0 for none; it needs mode
 *	ordered and max_msg of at least SPINDLE_BLK_MIN_MSG.  Every member
 *	gives the same, so every copy has the same size.  (Was @reserved,
 *	which had to be zero: a configuration without a device is unchanged.)
 */
struct spindle_subgroup_cfg {
	__u32 id;
	__u32 window;
	__u32 max_msg;
	__u32 mode;
	__u32 nmembers;
	__u32 nsenders;
	__aligned_u64 members;
	__aligned_u64 senders;
	__u32 flags;
	__u32 blk_mib;
};

/**
 * struct spindle_ctl_up - SPINDLE_CTL_UP: configure and start a group
 * @size: sizeof(struct spindle_ctl_up)
 * @group_id: non-zero, unique on this node
 * @self_id: this node's member id, or SPINDLE_SELF_AUTO
 * @flags: SPINDLE_GROUP_* (every member must give the same)
 * @nmembers: entries in @members
 * @nsubgroups: entries in @subgroups
 * @members: pointer to struct spindle_member_cfg[nmembers]
 * @subgroups: pointer to struct spindle_subgroup_cfg[nsubgroups]
 * @err_field: out: on EINVAL/EEXIST/ENODEV, enum spindle_cfg_err
 * @err_index: out: the member or subgroup index it is about
 * @self_id_out: out: the member id this node took
 * @reserved: must be zero
 *
 * Returns once the group is configured; connections form in the
 * background (SPINDLE_CTL_GROUP_INFO shows them; sending waits for them).
 */
struct spindle_ctl_up {
	__u32 size;
	__u32 group_id;
	__u32 self_id;
	__u32 flags;
	__u32 nmembers;
	__u32 nsubgroups;
	__aligned_u64 members;
	__aligned_u64 subgroups;
	__u32 err_field;
	__u32 err_index;
	__u32 self_id_out;
	__u32 reserved;
};

/**
 * struct spindle_ctl_down - SPINDLE_CTL_DOWN: leave and tear down a group
 * @size: sizeof(struct spindle_ctl_down)
 * @group_id: the group
 * @timeout_ms: how long to wait for writes in flight to reach peers
 * @reserved: must be zero
 *
 * Open subgroup devices keep working for what was already delivered and
 * then report ENOTCONN; their mappings stay valid until unmapped.
 */
struct spindle_ctl_down {
	__u32 size;
	__u32 group_id;
	__u32 timeout_ms;
	__u32 reserved;
};

enum spindle_group_state {
	SPINDLE_GROUP_CONNECTING = 1,	/* waiting for every peer */
	SPINDLE_GROUP_ACTIVE = 2,	/* all connected, multicast running */
	SPINDLE_GROUP_FAILED = 3,	/* a peer failed or left: no more sends */
	SPINDLE_GROUP_DOWN = 4,		/* torn down */
	SPINDLE_GROUP_VIEW_CHANGE = 5	/* a member failed: changing views */
};

enum spindle_peer_state {
	SPINDLE_PEER_SELF = 0,
	SPINDLE_PEER_IDLE = 1,
	SPINDLE_PEER_CONNECTING = 2,
	SPINDLE_PEER_CONNECTED = 3,	/* QP up, exchanging region keys */
	SPINDLE_PEER_READY = 4,		/* keys exchanged: writes flow */
	SPINDLE_PEER_FAILED = 5
};

/**
 * struct spindle_member_info - a member, as SPINDLE_CTL_GROUP_INFO reports it
 * @id: member id
 * @state: enum spindle_peer_state
 * @family: AF_INET or AF_INET6
 * @port: port, host byte order
 * @addr: address
 * @connects: connection attempts made to or accepted from it
 * @reserved: zero
 */
struct spindle_member_info {
	__u32 id;
	__u32 state;
	__u16 family;
	__u16 port;
	__u8 addr[16];
	__u32 connects;
	__u32 reserved[3];
};

#define SPINDLE_HIST_BUCKETS	16	/* bucket i: batches of [2^i, 2^(i+1)) */

/**
 * struct spindle_subgroup_info - a subgroup and its counters
 * @id: subgroup id
 * @minor: N of /dev/spindleN
 * @mode: enum spindle_mode
 * @window: slots per sender ring
 * @max_msg: largest message
 * @slot_size: bytes between slots
 * @nmembers: members
 * @nsenders: senders
 * @my_rank: this node's sender rank, -1 if it does not send
 * @consumers: open consumers
 * @free_slots: slots this node could reserve now
 * @in_flight: messages published by this node and not yet released by all
 * @msgs_sent: data messages this node published
 * @nulls_sent: null messages this node published
 * @null_runs: headers those nulls took
 * @msgs_received: data messages received from peers
 * @msgs_delivered: data messages delivered here
 * @publish_batches: send predicate runs that published something
 * @receive_batches: receive predicate runs that took something
 * @deliver_batches: delivery predicate runs that delivered something
 * @writes_posted: RDMA writes posted for this subgroup
 * @bytes_posted: bytes those writes carried
 * @send_calls: SPINDLE_IOC_SEND calls on its device
 * @recv_calls: SPINDLE_IOC_RECV calls on its device
 * @recv_msgs: messages those calls returned
 * @hist_publish: headers per run of the send predicate that published
 * @hist_receive: headers per run of the receive predicate that took some
 * @hist_deliver: messages per run of the delivery predicate that delivered
 * @hist_recv_call: messages per RECV call that returned some
 * @reserved: zero
 */
struct spindle_subgroup_info {
	__u32 id;
	__u32 minor;
	__u32 mode;
	__u32 window;
	__u32 max_msg;
	__u32 slot_size;
	__u32 nmembers;
	__u32 nsenders;
	__s32 my_rank;
	__u32 consumers;
	__u32 free_slots;
	__u32 in_flight;
	__u64 msgs_sent;
	__u64 nulls_sent;
	__u64 null_runs;
	__u64 msgs_received;
	__u64 msgs_delivered;
	__u64 publish_batches;
	__u64 receive_batches;
	__u64 deliver_batches;
	__u64 writes_posted;
	__u64 bytes_posted;
	__u64 send_calls;
	__u64 recv_calls;
	__u64 recv_msgs;
	__u64 hist_publish[SPINDLE_HIST_BUCKETS];
	__u64 hist_receive[SPINDLE_HIST_BUCKETS];
	__u64 hist_deliver[SPINDLE_HIST_BUCKETS];
	__u64 hist_recv_call[SPINDLE_HIST_BUCKETS];
	__u64 reserved[8];
};

/**
 * struct spindle_ctl_group_info - SPINDLE_CTL_GROUP_INFO
 * @size: sizeof(struct spindle_ctl_group_info)
 * @group_id: in: the group, or 0 for the @index-th group
 * @index: in: with group_id 0, which group (0, 1, ...); ENOENT past the end
 * @state: out: enum spindle_group_state
 * @self_id: out: this node's member id
 * @nmembers: in: room in @members; out: members of the group
 * @nsubgroups: in: room in @subgroups; out: subgroups this node is in
 * @member_info_size: in: sizeof(struct spindle_member_info)
 * @subgroup_info_size: in: sizeof(struct spindle_subgroup_info)
 * @members: pointer to struct spindle_member_info[nmembers], or 0
 * @subgroups: pointer to struct spindle_subgroup_info[nsubgroups], or 0
 * @fault_member: out: member whose writes were rejected, or -1
 * @busy_ns: out: time the predicate thread spent running passes
 * @idle_ns: out: time it spent parked
 * @view_id: out: the installed view (1: the configured members)
 * @view_members: out: its members, bit i for member i of @members
 * @reserved: must be zero
 */
struct spindle_ctl_group_info {
	__u32 size;
	__u32 group_id;
	__u32 index;
	__u32 state;
	__u32 self_id;
	__u32 nmembers;
	__u32 nsubgroups;
	__u32 member_info_size;
	__u32 subgroup_info_size;
	__s32 fault_member;
	__aligned_u64 members;
	__aligned_u64 subgroups;
	__u64 busy_ns;
	__u64 idle_ns;
	__u64 view_id;
	__u32 view_members;
	__u32 reserved;
};

#define SPINDLE_CTL_VERSION	_IOWR(SPINDLE_IOC_MAGIC, 0x00, struct spindle_ctl_version)
#define SPINDLE_CTL_UP		_IOWR(SPINDLE_IOC_MAGIC, 0x01, struct spindle_ctl_up)
#define SPINDLE_CTL_DOWN	_IOW(SPINDLE_IOC_MAGIC, 0x02, struct spindle_ctl_down)
#define SPINDLE_CTL_GROUP_INFO	_IOWR(SPINDLE_IOC_MAGIC, 0x03, struct spindle_ctl_group_info)

/* ---- /dev/spindleN ---- */

#define SPINDLE_RING_WRITABLE	0x1	/* this node's own send ring */

/*
 * The producer page: mmap(offset SPINDLE_MMAP_PRODUCER, size
 * spindle_info.producer_size, PROT_READ | PROT_WRITE, MAP_SHARED) by a
 * sender's file opened O_RDWR makes that file the subgroup's only
 * producer (EBUSY if another file sends).  Then, for each message:
 *
 *	wait until tail < limit (poll() POLLOUT, or spin on limit);
 *	build it in the slot of position tail (slot = tail % window);
 *	SPINDLE_PRODUCER_LENS(page)[tail % window] = length;
 *	store tail + 1 to tail (a release store), then a full barrier;
 *	if flags & SPINDLE_PRODUCER_NEED_WAKEUP: ioctl(SPINDLE_IOC_WAKE).
 *
 * The predicate thread takes new positions while it runs, checking the
 * tail and every length; it sets NEED_WAKEUP (then a full barrier, then
 * reads tail again) before it sleeps.  A bad tail or length sets
 * SPINDLE_PRODUCER_BROKEN, is logged, and nothing more is taken: close
 * the file.  head and limit are the kernel's: writing them changes nothing.
 */
#define SPINDLE_MMAP_PRODUCER		0
#define SPINDLE_PRODUCER_NEED_WAKEUP	0x1
#define SPINDLE_PRODUCER_BROKEN		0x2
/*
 * SPINDLE_PRODUCER_STALE: a view change voided what the page held and set
 * limit to 0; SPINDLE_IOC_WAKE fails once with ESTALE after setting tail
 * and head to the first position of the new view: read tail again.
 */
#define SPINDLE_PRODUCER_STALE		0x4

struct spindle_producer {
	__u64 tail;		/* process: positions before it are ready */
	__u64 pad0[7];
	__u64 head;		/* kernel: positions it has taken */
	__u64 limit;		/* kernel: positions before it may be filled */
	__u32 flags;		/* kernel: SPINDLE_PRODUCER_* */
	__u32 pad1;
	__u64 pad2[5];
};

/* Then __u32 lens[window], the process's: the length at each position. */
#define SPINDLE_PRODUCER_LENS(page) \
	((__u32 *)((char *)(page) + sizeof(struct spindle_producer)))

/**
 * struct spindle_ring_info - where a sender's ring is mapped
 * @member_id: the sender
 * @flags: SPINDLE_RING_WRITABLE for this node's own ring
 * @mmap_offset: the offset to pass to mmap()
 * @mmap_size: bytes to map (whole pages)
 */
struct spindle_ring_info {
	__u32 member_id;
	__u32 flags;
	__u64 mmap_offset;
	__u64 mmap_size;
};

/**
 * struct spindle_info - SPINDLE_IOC_INFO
 * @size: sizeof(struct spindle_info)
 * @group_id: out
 * @subgroup_id: out
 * @self_id: out: this node's member id
 * @mode: out: enum spindle_mode
 * @window: out: slots per ring
 * @max_msg: out: largest message
 * @slot_size: out: bytes between slots
 * @nmembers: out
 * @nsenders: in: room in @rings; out: senders (ring i is sender rank i)
 * @my_rank: out: this node's sender rank, -1 if it does not send
 * @state: out: enum spindle_group_state
 * @producer_size: out: bytes of the producer page mapping (0: not a sender)
 * @rings: pointer to struct spindle_ring_info[nsenders], or 0
 * @reserved: must be zero
 */
struct spindle_info {
	__u32 size;
	__u32 group_id;
	__u32 subgroup_id;
	__u32 self_id;
	__u32 mode;
	__u32 window;
	__u32 max_msg;
	__u32 slot_size;
	__u32 nmembers;
	__u32 nsenders;
	__s32 my_rank;
	__u32 state;
	__aligned_u64 rings;
	__u32 producer_size;
	__u32 reserved[3];
};

#define SPINDLE_SEND_NONBLOCK	0x1	/* reserve: EAGAIN, never wait */

/**
 * struct spindle_send - SPINDLE_IOC_SEND: mark ready, then reserve
 * @size: sizeof(struct spindle_send)
 * @flags: SPINDLE_SEND_*
 * @count: in: reservations of this file to mark ready, oldest first
 * @reserve: in: slots wanted next (0: none)
 * @lens: pointer to __u32[count]: length of each, or SPINDLE_LEN_VOID
 * @timeout_ms: in: how long a reservation may wait for a free slot
 *	(0: not at all; the file's O_NONBLOCK also means not at all)
 * @reserved_count: out: slots reserved (0 < reserved_count <= reserve)
 * @first: out: absolute position of the first reserved slot
 * @pending: out: reservations this file holds now
 * @reserved: must be zero
 *
 * EBUSY: another file (or this one) is the subgroup's producer.
 * Errors: EINVAL (count over what the file holds, bad flags, or a
 * reservation while the file already holds the whole window), EMSGSIZE
 * (a length over max_msg: nothing is marked), EPERM (this node does not send
 * here, or the file was not opened for writing), EAGAIN / ETIMEDOUT (no
 * free slot: the marking part still happened), ENOTCONN / EIO (the group is
 * down / failed).
 */
struct spindle_send {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 reserve;
	__aligned_u64 lens;
	__u32 timeout_ms;
	__u32 reserved_count;
	__u64 first;
	__u32 pending;
	__u32 reserved;
};

/**
 * struct spindle_desc - a delivered message
 * @seq: position in the total order (ordered mode; unique id otherwise)
 * @index: the sender's message number, nulls included
 * @offset: byte offset of the message in the sender's ring mapping
 * @len: bytes
 * @rank: sender rank (which ring)
 * @flags: zero, or SPINDLE_DESC_VIEW
 * @sender_id: the sender's member id
 * @reserved: zero
 *
 * Sender ranks, ring offsets and message indices stay what they were
 * across view changes: a sender's messages are numbered on from where the
 * last view's trim left them, and @seq goes on growing.
 *
 * An entry whose @flags has SPINDLE_DESC_VIEW is not a message but a view
 * record: read it as struct spindle_view_desc (below).
 */
#define SPINDLE_DESC_VIEW	0x1

struct spindle_desc {
	__u64 seq;
	__u64 index;
	__u64 offset;
	__u32 len;
	__u16 rank;
	__u16 flags;
	__u32 sender_id;
	__u32 reserved;
};

/**
 * struct spindle_view_desc - a view record, in the stream of descriptors
 * @view_id: the new view
 * @members: its members: bit i for member i of the configuration, as
 *	SPINDLE_CTL_GROUP_INFO lists them
 * @own_delivered: the number of data messages this node sent in this
 *	subgroup that were delivered, over all views: the first
 *	@own_delivered it marked ready (voids aside) were; those after were
 *	dropped at the trim, and are the sender's to send again if they matter
 * @nmembers: how many members the new view has
 * @rank: SPINDLE_RANK_NONE (no sender's ring)
 * @flags: SPINDLE_DESC_VIEW
 * @reserved: zero
 *
 * RECV writes one into its array of struct spindle_desc where a view change
 * falls: every message before it was delivered at every member of the new
 * view, none after it belongs to the old one.  It has the size of a
 * descriptor, and @rank and @flags where a descriptor has them: test an
 * entry's flags for SPINDLE_DESC_VIEW, then copy the entry into one of
 * these (memcpy; libspindle: spindle_view_of()).  Reservations held across
 * a view change are void: SEND says ESTALE and hands out fresh ones.  The
 * record comes once the new view is in place: slots reserved (or producer
 * page positions filled) after it was read belong to the new view.
 */
struct spindle_view_desc {
	__u64 view_id;
	__u64 members;
	__u64 own_delivered;
	__u32 nmembers;
	__u16 rank;
	__u16 flags;
	__u32 reserved[2];
};

#define SPINDLE_RANK_NONE	0xffff

/**
 * struct spindle_recv - SPINDLE_IOC_RECV: release the last batch, take more
 * @size: sizeof(struct spindle_recv)
 * @flags: must be zero
 * @max: in: room in @descs (0: only release)
 * @timeout_ms: in: how long to wait for the first message (0: not at all;
 *	the file's O_NONBLOCK also means not at all)
 * @descs: pointer to struct spindle_desc[max]
 * @count: out: descriptors written
 * @pending: out: deliveries still queued for this file after this batch
 * @reserved: must be zero
 *
 * Errors: EAGAIN / ETIMEDOUT (nothing arrived), ENOTCONN (group down and
 * nothing left), EIO (group failed and nothing left), EPERM (not opened
 * for reading).
 */
struct spindle_recv {
	__u32 size;
	__u32 flags;
	__u32 max;
	__u32 timeout_ms;
	__aligned_u64 descs;
	__u32 count;
	__u32 pending;
	__u32 reserved[2];
};

#define SPINDLE_IOC_INFO	_IOWR(SPINDLE_IOC_MAGIC, 0x20, struct spindle_info)
#define SPINDLE_IOC_SEND	_IOWR(SPINDLE_IOC_MAGIC, 0x21, struct spindle_send)
#define SPINDLE_IOC_RECV	_IOWR(SPINDLE_IOC_MAGIC, 0x22, struct spindle_recv)
#define SPINDLE_IOC_WAKE	_IO(SPINDLE_IOC_MAGIC, 0x23)	/* the producer's doorbell */

#endif /* _UAPI_LINUX_SPINDLE_H */
