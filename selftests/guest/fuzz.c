// SPDX-License-Identifier: GPL-2.0
/*
 * A fuzzer of the whole userspace ABI: /dev/spindle_ctl, /dev/spindleN
 * ioctls, their mappings (rings and the producer page), and the file and
 * memory operations around them, from several threads at once.
 *
 *   build/selftests/fuzz [--seed N] [--iterations N] [--threads N]
 *                        [--addr A] [--trace] [TEST...]
 *
 * --seed        default: from the clock; printed first ("# seed N") so a
 *               failure can be replayed: every thread draws from its own
 *               generator, seeded from N, so with --threads 1 the same
 *               operations come again (but for what the kernel's answers
 *               feed back); with more, the interleaving differs.  A failed
 *               phase prints the replay line and each thread's last 32
 *               operations.
 * --iterations  system calls to make in all (default 20000, a few seconds),
 *               shared by the phases: fuzz_ctl 14%, fuzz_subgroup_ioctls
 *               26%, fuzz_mmap 22%, fuzz_producer_page 12%, fuzz_fd_races
 *               14%, fuzz_group_churn 12%
 * --threads     threads per phase (default 4)
 * --addr        this node's address (default: SPINDLE_ADDRS/SPINDLE_NODE as
 *               scripts/vmcluster sets them, else the first IPv4 address up)
 * --trace       print every operation on stderr before it is made
 * FUZZ_STALL_TEST=1 in the environment: thread 0 makes one RECV that waits
 *               for ever (on a subgroup nobody sends in), to see the stall
 *               detector report it and interrupt it
 *
 * Needs spindle.ko loaded and root (CAP_NET_ADMIN); without the module every
 * test is skipped (exit 4).  It brings up group FUZZ_GID (this node alone:
 * active at once, three subgroups) and group WAIT_GID (this node and one at
 * an address nobody has: it stays connecting; one subgroup where this node
 * does not send, one where the other sender's ring maps read-only).  The
 * phases, each from --threads threads sharing a pool of descriptors:
 *   fuzz_ctl             SPINDLE_CTL_* with random sizes, fields, pointers;
 *                        configurations near-valid with mutations (some
 *                        come up, on ids 1..8 and others; never a DOWN of
 *                        our groups), random ioctl numbers
 *   fuzz_subgroup_ioctls INFO/SEND/RECV/WAKE the same way, poll, epoll,
 *                        read/write/lseek, O_NONBLOCK flips, signals
 *   fuzz_mmap            mmap of every offset, length, prot and flag mix,
 *                        MAP_FIXED, touches, mprotect, mremap (shrink, grow,
 *                        move, MREMAP_FIXED/DONTUNMAP), munmap of pieces,
 *                        madvise, mincore, mlock, /proc/self/mem, fork
 *   fuzz_producer_page   the producer page: legal and garbage tails and
 *                        lengths, the kernel's own fields overwritten, WAKE
 *   fuzz_fd_races        all of it at once, with close/dup3 races
 *   fuzz_group_churn     two groups brought up and down in a loop while the
 *                        others use their devices, sysfs and debugfs files
 * After every phase it checks that the module still works: on a fresh file
 * of each subgroup of FUZZ_GID a message sent through SEND and one through
 * the producer page are delivered with the right bytes, every slot comes
 * back (free_slots == window, no consumer, nothing in flight), no anomaly
 * was seen (the kernel returning what the ABI rules out, e.g. a writable
 * mapping of another sender's ring), no system call stalled for 20 s, and
 * the kernel log (read from /dev/kmsg) has no BUG/WARNING/Oops/KASAN/UBSAN/
 * general protection line.  At the end it brings the groups down and checks
 * that the module's vmalloc'ed regions and its reference count are back
 * where they were.
 *
 * The fuzzer keeps itself safe: every access to a mapped ring goes through
 * a SIGSEGV/SIGBUS handler (the kernel may refuse or zap a mapping); every
 * pointer it hands the kernel either cannot be written at all (NULL, low,
 * kernel, non-canonical, PROT_NONE, read-only) or has room behind it for
 * what the kernel may write there; it maps nothing over memory it does not
 * own (MAP_FIXED and MREMAP_FIXED only into a per-thread reservation); and
 * it never issues the ioctls of the types 'f', 'X' and 0x94 (the VFS's
 * own: FS_IOC_SETFLAGS, FIFREEZE, FICLONE...) nor MADV_HWPOISON.
 */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../userspace/lib/libspindle.h"

/* ktap.h brings main(); ours parses the options first, then calls it */
int ktap_main(int argc, char **argv);
/*
 * No time limit per phase: --iterations sets its length (a long run's
 * phases take many minutes), and the stall detector names a stuck call.
 */
#define KT_TIMEOUT_S 0
#define main ktap_main
#include "../ktap.h"
#undef main

#ifdef SPINDLE_DESC_VIEW
#define DESC_VIEW	SPINDLE_DESC_VIEW
#define STATE_MAX	SPINDLE_GROUP_VIEW_CHANGE
#else
#define DESC_VIEW	0
#define STATE_MAX	SPINDLE_GROUP_DOWN
#endif

#define FUZZ_GID	0x5f1d2a01u	/* never drawn at random (see pick_gid) */
#define WAIT_GID	0x5f1d2a02u
#define FUZZ_PORT	7391
#define WAIT_PORT	7392
#define NOBODY_ADDR	"10.77.0.200"
#define CHURN_GID	0x5f1d2a10u	/* and + 1: brought up and down in a loop */
#define NCHURN		4		/* their devices: 2 groups * 2 subgroups */

#define MAXTHR		64
#define POOL		16		/* shared file descriptor slots */
#define MAXDEV		16
#define AREA		(64 * 1024)	/* buf, aux, none: each followed by a guard */
#define NFIX		8		/* MAP_FIXED / MREMAP_FIXED targets */
#define FIXSLOT		(64 * 1024)
#define MAXMP		48		/* mappings per thread */
#define MAXKIDS		8
#define MAXERR		160
#define TRACE_N		32
#define TRACE_LEN	120
#define PG		4096UL

enum { PH_CTL, PH_SG, PH_MMAP, PH_PROD, PH_MIX, PH_CHURN, NPH };
static const char *const phase_name[NPH] = {
	"fuzz_ctl", "fuzz_subgroup_ioctls", "fuzz_mmap", "fuzz_producer_page",
	"fuzz_fd_races", "fuzz_group_churn",
};
static const int phase_share[NPH] = { 14, 26, 22, 12, 14, 12 };

/* ---- options and global state ---- */

static uint64_t opt_seed;
static long opt_iters = 20000;
static int opt_threads = 4;
static int opt_trace;
static const char *opt_addr;

struct dev {
	char path[64];
	int is_ctl;
	unsigned int minor;
	uint32_t gid, sgid;
	struct spindle_info info;
	struct spindle_ring_info rings[SPINDLE_MAX_MEMBERS];
};

static struct dev devs[MAXDEV];
static int ndevs;		/* devs[0] is the control device */
static int nstatic;		/* then the fuzzed groups' devices, then churn ones */
static uint32_t logmax = 64;	/* most descriptors one RECV can return */

static int ctl = -1;		/* the control file of setup and checks */
static int kmsg = -1;
static int up_ok, up_wait_ok;
static char up_err[256];
static char self_addr[64];
static struct spindle_member_cfg self_member;

static _Atomic uint64_t pool[POOL];	/* 0, or fd + 1 | dev << 32 | oflags << 48 */
static _Atomic long phase_calls;
static long phase_budget;
static _Atomic unsigned long hist[MAXERR];	/* [0]: success, [e]: errno e */
static _Atomic unsigned long st_faults, st_forks, st_kid_bad, st_anom;
static _Atomic unsigned long st_extra_up, st_prod_garbage;
static _Atomic unsigned long st_marked, st_descs;	/* SEND marked, RECV returned */
static _Atomic uint32_t live_mask;		/* extra groups 1..8 brought up */
static _Atomic uint32_t live_other[8];		/* other extra groups */
static pthread_mutex_t note_lock = PTHREAD_MUTEX_INITIALIZER;
static char notes[8][200];
static int nnotes;
static int cur_phase;

struct mp {
	uintptr_t a;
	size_t len;
	int dev;
	int slot;
	uint64_t off;
};

struct thr {
	int idx;
	pthread_t tid;
	uint64_t rng;
	int in_child;
	uint8_t *area;		/* buf | guard | aux | guard | none (PROT_NONE) */
	uint8_t *buf, *aux, *none;
	uint8_t *ro, *ro_rw;	/* one memfd's two pages: read-only and RW views */
	uint8_t *fix;		/* NFIX * FIXSLOT reserved PROT_NONE */
	int memfd;		/* /proc/self/mem */
	struct mp mp[MAXMP];
	int nmp;
	pid_t kids[MAXKIDS];
	int nkids;
	uint32_t pend[POOL];
	uint8_t stage[16384];	/* place_arg()'s copy */
	pid_t ktid;
	_Atomic int done;
	char trace[TRACE_N][TRACE_LEN];
	unsigned int ntrace;
};

static struct thr thr[MAXTHR];
static pthread_barrier_t start_line;
static _Atomic unsigned long st_churn_up, st_churn_down, st_signals;

/* ---- random numbers ---- */

static uint64_t rnd(struct thr *t)
{
	uint64_t z = (t->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t rn(struct thr *t, uint32_t n)
{
	return n ? (uint32_t)(rnd(t) % n) : 0;
}

static int chance(struct thr *t, int pct)
{
	return (int)rn(t, 100) < pct;
}

static const uint32_t interesting[] = {
	0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 33, 63, 64, 127, 128, 255, 256,
	257, 1000, 4095, 4096, 4097, 0x7fff, 0x8000, 0xffff, 0x10000, 0xfffff,
	0x100000, 0x100001, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
};
#define NINTERESTING (sizeof(interesting) / sizeof(interesting[0]))

static uint32_t ival(struct thr *t)
{
	return chance(t, 80) ? interesting[rn(t, NINTERESTING)] : (uint32_t)rnd(t);
}

/* a word for garbage: never an address of this process (see the header) */
static uint64_t garbage64(struct thr *t)
{
	switch (rn(t, 8)) {
	case 0: case 1: case 2: return 0;
	case 3: case 4: return rn(t, 256);
	case 5: return ival(t);
	case 6: return (uint64_t)ival(t) << 32 | ival(t);
	default: return rnd(t);
	}
}

static uint32_t gen_timeout(struct thr *t)
{
	int r = rn(t, 100);

	if (r < 60)
		return 0;
	if (r < 85)
		return 1 + rn(t, 5);
	if (r < 97)
		return 5 + rn(t, 20);
	return 40 + rn(t, 20);
}

/* ---- accounting ---- */

static long rec(long r)
{
	int e = errno;

	atomic_fetch_add_explicit(&phase_calls, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&hist[r < 0 ? (e > 0 && e < MAXERR ? e : MAXERR - 1) : 0],
				  1, memory_order_relaxed);
	errno = e;
	return r;
}

static void *recp(void *p)
{
	rec(p == MAP_FAILED ? -1 : 0);
	return p;
}

static int budget_left(void)
{
	return atomic_load_explicit(&phase_calls, memory_order_relaxed) < phase_budget;
}

__attribute__((format(printf, 2, 3)))
static void tr(struct thr *t, const char *fmt, ...)
{
	char *line = t->trace[t->ntrace++ % TRACE_N];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, TRACE_LEN, fmt, ap);
	va_end(ap);
	if (opt_trace && !t->in_child)
		fprintf(stderr, "[%d] %s\n", t->idx, line);
}

static void dump_trace(struct thr *t)
{
	unsigned int i, n = t->ntrace < TRACE_N ? t->ntrace : TRACE_N;

	kt_diag("thread %d, last %u operations:", t->idx, n);
	for (i = t->ntrace - n; i != t->ntrace; i++)
		kt_diag("  [%d] %s", t->idx, t->trace[i % TRACE_N]);
}

/* Something the kernel did that the ABI rules out. */
__attribute__((format(printf, 2, 3)))
static void anomaly(struct thr *t, const char *fmt, ...)
{
	va_list ap;

	atomic_fetch_add(&st_anom, 1);
	if (t->in_child)
		return;
	pthread_mutex_lock(&note_lock);
	if (nnotes < 8) {
		int n = snprintf(notes[nnotes], sizeof(notes[0]), "thread %d: ", t->idx);

		va_start(ap, fmt);
		vsnprintf(notes[nnotes] + n, sizeof(notes[0]) - n, fmt, ap);
		va_end(ap);
		nnotes++;
	}
	pthread_mutex_unlock(&note_lock);
}

/* ---- own accesses to mapped memory, which may fault ---- */

static __thread sigjmp_buf probe_jb;
static __thread volatile sig_atomic_t probe_armed;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	static const char msg[] = "fuzz: fault outside a probe\n";

	(void)si;
	(void)uc;
	if (probe_armed) {
		probe_armed = 0;
		siglongjmp(probe_jb, sig);
	}
	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing to do */
	}
	signal(sig, SIG_DFL);	/* returns to the fault: dies of it */
}

/* memcpy that survives SIGSEGV/SIGBUS on either side: 0 or -1 */
static int probe_copy(void *dst, const void *src, size_t n)
{
	if (sigsetjmp(probe_jb, 0)) {
		atomic_fetch_add_explicit(&st_faults, 1, memory_order_relaxed);
		return -1;
	}
	probe_armed = 1;
	memcpy(dst, src, n);
	probe_armed = 0;
	return 0;
}

/* a release store of a u64 that survives a fault: 0 or -1 */
static int probe_store64(uint64_t *p, uint64_t v)
{
	if (sigsetjmp(probe_jb, 0)) {
		atomic_fetch_add_explicit(&st_faults, 1, memory_order_relaxed);
		return -1;
	}
	probe_armed = 1;
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	probe_armed = 0;
	return 0;
}

/* ---- pointers handed to the kernel ---- */

enum {
	PK_VALID, PK_MIS, PK_EDGE, PK_NULL, PK_LOW, PK_KERN, PK_KTEXT,
	PK_NONCANON, PK_HIGHBIT, PK_NONE, PK_RO, PK_MAP, PK_N
};
static const char *const pk_name[PK_N] = {
	"valid", "misaligned", "edge", "NULL", "low", "kernel", "ktext",
	"noncanonical", "highbit", "protnone", "readonly", "mapping",
};

struct uptr {
	uint8_t *p;	/* what the kernel gets */
	uint8_t *fill;	/* where to write so that p shows it, or NULL */
	size_t fillroom;
	size_t room;	/* bytes from p the kernel may write; SIZE_MAX: none at all */
	int kind;
};

/* a mapping of this thread with @need bytes at some offset */
static struct mp *pick_mp(struct thr *t, size_t need)
{
	int i, k;

	if (!t->nmp)
		return NULL;
	for (k = 0, i = rn(t, t->nmp); k < t->nmp; k++, i = (i + 1) % t->nmp)
		if (t->mp[i].len >= need)
			return &t->mp[i];
	return NULL;
}

/*
 * A pointer for @need bytes into @base (AREA bytes, a guard after it), or a
 * bad one with @bad_pct percent chance.
 */
static struct uptr gen_ptr(struct thr *t, uint8_t *base, size_t need, int bad_pct)
{
	struct uptr u = { 0 };
	size_t off;
	struct mp *m;

	if (need > AREA - 64)
		need = AREA - 64;
	u.kind = chance(t, bad_pct) ? (int)rn(t, PK_N) : PK_VALID;
	switch (u.kind) {
	case PK_MIS:
		off = 1 + rn(t, 7) + 8 * rn(t, 4);
		if (off + need <= AREA)
			goto inside;
		/* fall through */
	case PK_VALID:
		off = 8 * rn(t, 8);
		if (off + need > AREA)
			off = 0;
inside:
		u.p = base + off;
		u.fill = u.p;
		u.fillroom = AREA - off;
		u.room = AREA - off + AREA;	/* and the guard */
		break;
	case PK_EDGE:
		off = AREA - (need > 1 ? 1 + rn(t, need - 1) : 1);
		u.p = base + off;
		u.fill = u.p;
		u.fillroom = AREA - off;
		u.room = AREA - off + AREA;
		break;
	case PK_NULL:
		u.room = SIZE_MAX;
		break;
	case PK_LOW:
		u.p = (uint8_t *)(uintptr_t)(chance(t, 50) ? 0x10 : 0x1000 + rn(t, 64));
		u.room = SIZE_MAX;
		break;
	case PK_KERN:
		u.p = (uint8_t *)0xffff888000000000UL + 8 * rn(t, 512);
		u.room = SIZE_MAX;
		break;
	case PK_KTEXT:
		u.p = (uint8_t *)0xffffffff81000000UL;
		u.room = SIZE_MAX;
		break;
	case PK_NONCANON:
		u.p = (uint8_t *)(1UL << 47);
		u.room = SIZE_MAX;
		break;
	case PK_HIGHBIT:
		u.p = (uint8_t *)(chance(t, 50) ? 0x8000000000000000UL : ~0UL - 4095);
		u.room = SIZE_MAX;
		break;
	case PK_NONE:
		u.p = t->none + 8 * rn(t, 64) + (chance(t, 20) ? 1 : 0);
		u.room = SIZE_MAX;
		break;
	case PK_RO:
		off = chance(t, 70) ? 8 * rn(t, 16) : PG - need % PG;
		if (off + need > 2 * PG)
			off = 0;
		u.p = t->ro + off;
		u.fill = t->ro_rw + off;
		u.fillroom = 2 * PG - off;
		u.room = SIZE_MAX;
		break;
	case PK_MAP:
		m = pick_mp(t, 1);
		if (!m) {
			u.kind = PK_NULL;
			u.room = SIZE_MAX;
			break;
		}
		off = m->len > need ? rn(t, (uint32_t)(m->len - need + 1)) & ~7UL : 0;
		u.p = (uint8_t *)m->a + off;
		u.fill = u.p;	/* through probe_copy(): it may be read-only */
		u.fillroom = m->len - off;
		u.room = m->len - off;
		break;
	}
	return u;
}

static int kernel_can_write(const struct uptr *u)
{
	return u->room != SIZE_MAX;
}

static int readable(const struct uptr *u)
{
	return u->kind == PK_VALID || u->kind == PK_MIS;
}

/* elements of @stride bytes (@elem written of each) that fit in u->room */
static uint32_t clamp_cnt(const struct uptr *u, uint32_t cnt, size_t stride, size_t elem)
{
	size_t fit;

	if (!kernel_can_write(u) || !cnt)
		return cnt;
	if (elem > u->room)
		return 0;
	fit = stride ? 1 + (u->room - elem) / stride : cnt;
	return cnt < fit ? cnt : (uint32_t)fit;
}

static void fill(struct thr *t, const struct uptr *u, const void *src, size_t n)
{
	(void)t;
	if (!u->fill)
		return;
	if (n > u->fillroom)
		n = u->fillroom;
	probe_copy(u->fill, src, n);
}

/*
 * Place an ioctl argument (ksize bytes in @st, starting with __u32 size)
 * with a random size field and tail.
 */
static struct uptr place_arg_(struct thr *t, void *st, size_t ksize, uint32_t *usize_out,
			      int no_map)
{
	uint8_t *stage = t->stage;
	uint32_t usize;
	size_t clen;
	int nonzero = 0, r = rn(t, 100);
	struct uptr u;

	if (r < 55)
		usize = ksize;
	else if (r < 59)
		usize = 0;
	else if (r < 63)
		usize = rn(t, ksize);
	else if (r < 66)
		usize = ksize - 4;
	else if (r < 74)
		usize = ksize + 8 * (1 + rn(t, 4));
	else if (r < 80)
		usize = ksize + 1 + rn(t, 64), nonzero = 1;
	else if (r < 84)
		usize = PG;
	else if (r < 87)
		usize = chance(t, 50) ? AREA - 64 : AREA + PG;
	else if (r < 91)
		usize = 0xffffffff;
	else if (r < 94)
		usize = 0x80000000;
	else
		usize = (uint32_t)rnd(t);
	memcpy(st, &usize, sizeof(usize));
	*usize_out = usize;
	clen = usize > ksize ? usize : ksize;
	if (clen > 16384)
		clen = 16384;
	memcpy(stage, st, ksize);
	memset(stage + ksize, 0, clen - ksize);
	if (nonzero && usize > ksize)
		stage[ksize + rn(t, (uint32_t)(clen - ksize))] = 1 + rn(t, 255);
	u = gen_ptr(t, t->buf, ksize, 15);
	if (u.kind == PK_MAP && (u.room < ksize || no_map)) {
		u.kind = PK_NULL;
		u.p = u.fill = NULL;
		u.room = SIZE_MAX;
	}
	if (u.kind == PK_VALID && usize > ksize && usize <= AREA - 64)
		memset(t->buf, 0, AREA);	/* a zero tail to the end */
	if (u.kind == PK_MAP) {
		/* a shared mapping: if it cannot hold the argument, NULL */
		if (probe_copy(u.fill, stage, clen < u.fillroom ? clen : u.fillroom)) {
			u.kind = PK_NULL;
			u.p = u.fill = NULL;
			u.room = SIZE_MAX;
		}
		return u;
	}
	fill(t, &u, stage, clen);
	return u;
}

#define place_arg(t, st, ksize, usize) place_arg_(t, st, ksize, usize, 0)

/* ---- the pool of shared file descriptors ---- */

static uint64_t pack(int fd, int dev, int oflags)
{
	uint32_t of = (oflags & (O_ACCMODE | O_NONBLOCK)) | (oflags & O_PATH ? 0x8000 : 0);

	return (uint64_t)(uint32_t)(fd + 1) | (uint64_t)dev << 32 | (uint64_t)of << 48;
}

static void unpack(uint64_t v, int *fd, int *dev, int *oflags)
{
	*fd = (int)(uint32_t)v - 1;
	*dev = (int)((v >> 32) & 0xffff);
	*oflags = (int)(v >> 48);
}

static int sg_dev(struct thr *t)
{
	return 1 + rn(t, nstatic - 1);
}

static int open_dev(struct thr *t, int dev, int slot);
static int phase_dev(struct thr *t);

/* a slot, its fd (-1 if empty) and what was opened there */
static int pick_slot(struct thr *t, int *fd, int *dev, int *of)
{
	int s = rn(t, POOL);
	uint64_t v = atomic_load(&pool[s]);

	if (!v && chance(t, 80)) {	/* mostly, fill it */
		open_dev(t, phase_dev(t), s);
		v = atomic_load(&pool[s]);
	}
	if (!v) {
		*fd = -1;
		*dev = sg_dev(t);
		*of = O_RDWR;
		return s;
	}
	unpack(v, fd, dev, of);
	if (*dev >= ndevs)
		*dev = 0;
	return s;
}

static void pool_put(int s, int fd, int dev, int of)
{
	uint64_t old = atomic_exchange(&pool[s], pack(fd, dev, of));
	int ofd, odev, oof;

	if (old) {
		unpack(old, &ofd, &odev, &oof);
		rec(close(ofd));
	}
}

static int open_dev(struct thr *t, int dev, int slot)
{
	static const int acc[] = { O_RDWR, O_RDWR, O_RDONLY, O_WRONLY };
	int of = acc[rn(t, 4)], fd;

	if (chance(t, 15))
		of |= O_NONBLOCK;
	if (chance(t, 3))
		of = O_PATH;
	fd = rec(open(devs[dev].path, of | O_CLOEXEC));
	tr(t, "open %s %#x = %d", devs[dev].path, of, fd);
	if (fd >= 0)
		pool_put(slot, fd, dev, of);
	return fd;
}

/* ---- this thread's mappings ---- */

static int in_fix(struct thr *t, uintptr_t a)
{
	return a >= (uintptr_t)t->fix && a < (uintptr_t)t->fix + NFIX * FIXSLOT;
}

static void mp_add(struct thr *t, uintptr_t a, size_t len, int dev, int slot, uint64_t off)
{
	if (t->nmp == MAXMP)
		return;		/* callers keep room: cannot happen */
	t->mp[t->nmp++] = (struct mp){ .a = a, .len = len, .dev = dev, .slot = slot, .off = off };
}

/* [a, a+len) is no longer mapped: trim or split what covered it */
static void mp_remove(struct thr *t, uintptr_t a, size_t len)
{
	uintptr_t e = a + len;
	int i;

	for (i = 0; i < t->nmp; i++) {
		struct mp *m = &t->mp[i];
		uintptr_t me = m->a + m->len;

		if (e <= m->a || a >= me)
			continue;
		if (a <= m->a && e >= me) {		/* all of it */
			t->mp[i--] = t->mp[--t->nmp];
		} else if (a <= m->a) {			/* its head */
			m->off += e - m->a;
			m->len = me - e;
			m->a = e;
		} else if (e >= me) {			/* its tail */
			m->len = a - m->a;
		} else {				/* its middle */
			struct mp tail = *m;

			m->len = a - m->a;
			tail.off += e - m->a;
			tail.a = e;
			tail.len = me - e;
			if (t->nmp < MAXMP)
				t->mp[t->nmp++] = tail;
		}
	}
}

/* re-reserve part of the fixed area */
static void fix_reserve(struct thr *t, uintptr_t a, size_t len)
{
	(void)t;
	if (mmap((void *)a, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED |
		 MAP_NORESERVE, -1, 0) == MAP_FAILED) {
		perror("fuzz: re-reserving");
		abort();
	}
}

static void unmap_range(struct thr *t, uintptr_t a, size_t len)
{
	if (in_fix(t, a))
		rec(mmap((void *)a, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			 MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED ? -1 : 0);
	else
		rec(munmap((void *)a, len));
	mp_remove(t, a, len);
}

static int free_fix_slot(struct thr *t)
{
	int s, k, i;

	for (k = 0, s = rn(t, NFIX); k < NFIX; k++, s = (s + 1) % NFIX) {
		uintptr_t a = (uintptr_t)t->fix + (uintptr_t)s * FIXSLOT;

		for (i = 0; i < t->nmp; i++)
			if (t->mp[i].a < a + FIXSLOT && t->mp[i].a + t->mp[i].len > a)
				break;
		if (i == t->nmp)
			return s;
	}
	return -1;
}

/* ---- control device operations ---- */

static uint32_t pick_gid_up(struct thr *t)
{
	int r = rn(t, 100);

	if (r < 60)
		return 1 + rn(t, 8);
	if (r < 68)
		return 0;
	if (r < 76)
		return FUZZ_GID;	/* EEXIST: up never touches a group that exists */
	if (r < 80)
		return WAIT_GID;
	return (uint32_t)rnd(t);
}

static uint32_t pick_gid_down(struct thr *t)
{
	uint32_t mask = atomic_load(&live_mask), g;
	int r = rn(t, 100);

	if (r < 50 && mask) {
		do
			g = 1 + rn(t, 8);
		while (!(mask & (1u << g)));
		return g;
	}
	if (r < 60) {
		g = atomic_load(&live_other[rn(t, 8)]);
		if (g)
			return g;
	}
	if (r < 80)
		return 1 + rn(t, 8);
	if (r < 85)
		return 0;
	do
		g = (uint32_t)rnd(t);
	while (g == FUZZ_GID || g == WAIT_GID);
	return g;
}

static void note_up(uint32_t gid)
{
	int i;

	atomic_fetch_add(&st_extra_up, 1);
	if (gid >= 1 && gid <= 8) {
		atomic_fetch_or(&live_mask, 1u << gid);
		return;
	}
	for (i = 0; i < 8; i++) {
		uint32_t z = 0;

		if (atomic_compare_exchange_strong(&live_other[i], &z, gid))
			return;
	}
}

static void note_down(uint32_t gid)
{
	int i;

	if (gid >= 1 && gid <= 8)
		atomic_fetch_and(&live_mask, ~(1u << gid));
	for (i = 0; i < 8; i++) {
		uint32_t g = gid;

		atomic_compare_exchange_strong(&live_other[i], &g, 0);
	}
}

static void op_ctl_version(struct thr *t)
{
	int fd, dev, of, s = pick_slot(t, &fd, &dev, &of);
	struct spindle_ctl_version v = { 0 };
	uint32_t usize;
	struct uptr u;

	(void)s;
	if (chance(t, 8))
		v.reserved = ival(t);
	if (chance(t, 5))
		v.abi_version = ival(t);
	if (chance(t, 5))
		v.rdma_devices = ival(t);
	u = place_arg(t, &v, sizeof(v), &usize);
	tr(t, "CTL_VERSION fd %d size %u at %s", fd, usize, pk_name[u.kind]);
	if (rec(ioctl(fd, SPINDLE_CTL_VERSION, u.p)) == 0 && readable(&u)) {
		memcpy(&v, u.p, sizeof(v));
		if (v.abi_version != SPINDLE_ABI_VERSION)
			anomaly(t, "CTL_VERSION returned ABI %u", v.abi_version);
	}
}

static void op_ctl_down(struct thr *t)
{
	int fd, dev, of, s = pick_slot(t, &fd, &dev, &of);
	struct spindle_ctl_down d = { 0 };
	static const uint32_t tmo[] = { 0, 0, 1, 10, 100, 0xffffffff };
	uint32_t usize;
	struct uptr u;

	(void)s;
	d.group_id = pick_gid_down(t);
	d.timeout_ms = tmo[rn(t, 6)];
	if (chance(t, 6))
		d.reserved = ival(t);
	u = place_arg_(t, &d, sizeof(d), &usize, 1);	/* never where others write */
	tr(t, "CTL_DOWN fd %d group %u timeout %u size %u at %s", fd, d.group_id,
	   d.timeout_ms, usize, pk_name[u.kind]);
	if (rec(ioctl(fd, SPINDLE_CTL_DOWN, u.p)) == 0)
		note_down(d.group_id);
}

/* Build a configuration in aux: near-valid with mutations, or garbage. */
static void gen_cfg(struct thr *t, struct spindle_ctl_up *up, int *big)
{
	struct spindle_member_cfg *m = (void *)t->aux;
	struct spindle_subgroup_cfg *sg = (void *)(t->aux + 1024);
	uint32_t *ids = (void *)(t->aux + 4096);	/* 2 * 33 per subgroup */
	uint32_t nm, ns, i, s, port = 7700 + rn(t, 200);
	int nmut, k;
	struct uptr u;

	memset(t->aux, 0, 16384);
	*big = 0;
	if (chance(t, 15)) {		/* garbage */
		uint64_t *w = (void *)t->aux;

		for (i = 0; i < 1024; i++)
			w[i] = garbage64(t);
		up->group_id = pick_gid_up(t);
		up->self_id = ival(t);
		up->flags = chance(t, 50) ? 0 : ival(t);
		up->nmembers = ival(t);
		up->nsubgroups = ival(t);
		up->members = (uintptr_t)m;
		up->subgroups = (uintptr_t)sg;
		return;
	}
	nm = chance(t, 70) ? 1 : 2 + rn(t, 2);
	for (i = 0; i < nm; i++) {
		if (i == 0) {
			m[i] = self_member;
			m[i].port = port;
		} else {
			char a[32];

			snprintf(a, sizeof(a), "10.77.0.%u", 200 + i);
			spindle_parse_addr(a, port, &m[i]);
		}
		m[i].id = i * 3 + (chance(t, 20) ? rn(t, 3) : 0);
	}
	up->group_id = pick_gid_up(t);
	up->self_id = chance(t, 50) ? SPINDLE_SELF_AUTO : m[0].id;
	up->flags = chance(t, 10) ? SPINDLE_GROUP_BASELINE : 0;
#ifdef SPINDLE_GROUP_TWO_MEMBER_OVERRIDE
	if (chance(t, 10))
		up->flags |= SPINDLE_GROUP_TWO_MEMBER_OVERRIDE;
#endif
	up->nmembers = nm;
	ns = 1 + rn(t, 3);
	up->nsubgroups = ns;
	up->members = (uintptr_t)m;
	up->subgroups = (uintptr_t)sg;
	for (s = 0; s < ns; s++) {
		uint32_t *mem = ids + s * 66, *snd = mem + 33;

		sg[s].id = chance(t, 80) ? s : rn(t, 1000);
		sg[s].window = 1 + rn(t, 16);
		sg[s].max_msg = 1 + rn(t, 4096);
		sg[s].mode = 1 + rn(t, 2);
		sg[s].nmembers = nm;
		sg[s].nsenders = 1 + rn(t, nm);
		for (i = 0; i < nm; i++)
			mem[i] = snd[i] = m[i].id;
		sg[s].members = (uintptr_t)mem;
		sg[s].senders = (uintptr_t)snd;
	}
	nmut = chance(t, 30) ? 0 : chance(t, 70) ? 1 : 2;
	for (k = 0; k < nmut; k++) {
		struct spindle_subgroup_cfg *g = &sg[rn(t, ns)];
		uint32_t *gm = ids + (g - sg) * 66;	/* not g->members: it may be bad now */

		switch (rn(t, 30)) {
		case 0: up->nmembers = chance(t, 50) ? 0 : 33; break;
		case 1: up->nmembers = nm + 1 + rn(t, 3); break;
		case 2: up->nsubgroups = chance(t, 50) ? 0 : 33; break;
		case 3: up->nsubgroups = ns + 1; break;
		case 4: up->flags = 1u << rn(t, 32); break;
		case 5: up->reserved = ival(t) | 1; break;
		case 6: up->err_field = 1 + rn(t, 30); break;
		case 7: up->self_id_out = ival(t) | 1; break;
		case 8: up->self_id = ival(t); break;
		case 9: if (nm > 1) m[1].id = m[0].id; break;
		case 10: m[rn(t, nm)].id = SPINDLE_SELF_AUTO; break;
		case 11: m[rn(t, nm)].family = chance(t, 50) ? AF_INET6 : (uint16_t)rn(t, 0x10000); break;
		case 12: m[rn(t, nm)].port = 0; break;
		case 13: memset(m[rn(t, nm)].addr, chance(t, 50) ? 0 : 0xff, 16); break;
		case 14: g->window = chance(t, 50) ? 0 : 4097; break;
		case 15: g->window = 4096; g->max_msg = 1 + rn(t, 256);
			 up->nsubgroups = 1; *big = 1; break;
		case 16: g->max_msg = chance(t, 50) ? 0 : SPINDLE_MAX_MSG + 1; break;
		case 17: g->max_msg = SPINDLE_MAX_MSG; g->window = 1 + rn(t, 2);
			 up->nsubgroups = 1; *big = 1; break;
		case 18: g->window = 4096; g->max_msg = SPINDLE_MAX_MSG; break;	/* ring too big */
		case 19: g->mode = chance(t, 50) ? 0 : 3 + rn(t, 100); break;
		case 20: g->nmembers = chance(t, 50) ? 0 : 33; break;
		case 21: g->nsenders = chance(t, 50) ? 0 : g->nmembers + 1; break;
		case 22: gm[33 + rn(t, g->nsenders) % 33] = 999; break;	/* sender not a member */
		case 23: gm[rn(t, g->nmembers) % 33] = 777; break;	/* no such member */
		case 24: if (ns > 1) sg[1].id = sg[0].id; break;
		case 25: g->flags = 1u << rn(t, 32); break;
		case 26: g->blk_mib = SPINDLE_MAX_BLK_MIB + 1 + (ival(t) & 0xffff); break;
		case 27:
			u = gen_ptr(t, t->buf, 1024, 100);
			if (chance(t, 50))
				up->members = (uintptr_t)u.p;
			else
				up->subgroups = (uintptr_t)u.p;
			break;
		case 28:
			u = gen_ptr(t, t->buf, 132, 100);
			if (chance(t, 50))
				g->members = (uintptr_t)u.p;
			else
				g->senders = (uintptr_t)u.p;
			break;
		default:
			if (nm > 1) {	/* a member address that is local too */
				m[1] = m[0];
				m[1].id = 100;
			}
			break;
		}
	}
}

static void op_ctl_up(struct thr *t)
{
	int fd, dev, of, s = pick_slot(t, &fd, &dev, &of), big;
	struct spindle_ctl_up up = { 0 };
	uint32_t usize, live = __builtin_popcount(atomic_load(&live_mask));
	struct uptr u;
	long r;

	(void)s;
	if (live >= 3) {	/* keep memory bounded: take one down instead */
		op_ctl_down(t);
		return;
	}
	gen_cfg(t, &up, &big);
	u = place_arg_(t, &up, sizeof(up), &usize, 1);
	tr(t, "CTL_UP fd %d group %u nm %u ns %u flags %#x%s size %u at %s", fd,
	   up.group_id, up.nmembers, up.nsubgroups, up.flags, big ? " big" : "",
	   usize, pk_name[u.kind]);
	r = rec(ioctl(fd, SPINDLE_CTL_UP, u.p));
	if (r == 0) {
		if (up.group_id == FUZZ_GID || up.group_id == WAIT_GID)
			anomaly(t, "CTL_UP of group %#x succeeded twice", up.group_id);
		note_up(up.group_id);
		if (big) {	/* do not keep a big one */
			struct spindle_ctl_down d = { .size = sizeof(d), .group_id = up.group_id };

			if (rec(ioctl(ctl, SPINDLE_CTL_DOWN, &d)) == 0)
				note_down(up.group_id);
		}
	} else if (readable(&u) && (errno == EINVAL || errno == EEXIST) && !up.err_field) {
		/* (a non-zero err_field in is ours when the kernel wrote nothing back) */
		memcpy(&up, u.p, sizeof(up));
		if (up.err_field > SPINDLE_CFG_E_SG_BLK)
			anomaly(t, "CTL_UP err_field %u out of range", up.err_field);
	}
}

static void op_ctl_info(struct thr *t)
{
	int fd, dev, of, s = pick_slot(t, &fd, &dev, &of);
	struct spindle_ctl_group_info gi = { 0 };
	static const uint32_t msz[] = {
		0, 1, 4, sizeof(struct spindle_member_info) - 1,
		sizeof(struct spindle_member_info), sizeof(struct spindle_member_info),
		sizeof(struct spindle_member_info) + 8, 4096, 0x10000, 0xffffffff,
	};
	static const uint32_t ssz[] = {
		0, 1, 8, sizeof(struct spindle_subgroup_info) - 8,
		sizeof(struct spindle_subgroup_info), sizeof(struct spindle_subgroup_info),
		sizeof(struct spindle_subgroup_info) + 64, 4096, 0x10000, 0xffffffff,
	};
	struct uptr um = { 0 }, us = { 0 }, u;
	uint32_t usize, rm, rs;
	int r = rn(t, 100);

	(void)s;
	if (r < 30)
		gi.group_id = FUZZ_GID;
	else if (r < 40)
		gi.group_id = WAIT_GID;
	else if (r < 70)
		gi.index = chance(t, 80) ? rn(t, 4) : ival(t);
	else if (r < 85)
		gi.group_id = 1 + rn(t, 8);
	else
		gi.group_id = (uint32_t)rnd(t);
	gi.nmembers = chance(t, 60) ? SPINDLE_MAX_MEMBERS : ival(t);
	gi.nsubgroups = chance(t, 60) ? SPINDLE_MAX_SUBGROUPS : ival(t);
	gi.member_info_size = chance(t, 60) ? sizeof(struct spindle_member_info) : msz[rn(t, 10)];
	gi.subgroup_info_size = chance(t, 60) ? sizeof(struct spindle_subgroup_info) : ssz[rn(t, 10)];
	/* the kernel writes min(size, sizeof) bytes at ptr + i * size */
	if (chance(t, 85)) {
		um = gen_ptr(t, t->aux, 32 * sizeof(struct spindle_member_info), 12);
		rm = gi.nmembers < 32 ? gi.nmembers : 32;
		rm = clamp_cnt(&um, rm, gi.member_info_size, sizeof(struct spindle_member_info));
		if (rm < gi.nmembers && rm < 32)
			gi.nmembers = rm;
		gi.members = (uintptr_t)um.p;
	}
	if (chance(t, 85)) {
		us = gen_ptr(t, t->aux, 32 * sizeof(struct spindle_subgroup_info), 12);
		rs = gi.nsubgroups < 32 ? gi.nsubgroups : 32;
		rs = clamp_cnt(&us, rs, gi.subgroup_info_size, sizeof(struct spindle_subgroup_info));
		if (rs < gi.nsubgroups && rs < 32)
			gi.nsubgroups = rs;
		gi.subgroups = (uintptr_t)us.p;
	}
	/* reserved and (in this ABI) view_id, view_members must be zero */
	if (chance(t, 5))
		memset((uint8_t *)&gi + sizeof(gi) - 4 * (1 + rn(t, 4)), 0xff, 4);
	if (chance(t, 8)) {	/* out fields the kernel ignores */
		gi.state = ival(t);
		gi.busy_ns = garbage64(t);
		gi.fault_member = (int32_t)ival(t);
	}
	u = place_arg(t, &gi, sizeof(gi), &usize);
	tr(t, "CTL_GROUP_INFO fd %d group %#x index %u room %u/%u sizes %u/%u ptrs %s/%s size %u at %s",
	   fd, gi.group_id, gi.index, gi.nmembers, gi.nsubgroups, gi.member_info_size,
	   gi.subgroup_info_size, pk_name[um.kind], pk_name[us.kind], usize, pk_name[u.kind]);
	if (rec(ioctl(fd, SPINDLE_CTL_GROUP_INFO, u.p)) == 0 && readable(&u)) {
		memcpy(&gi, u.p, sizeof(gi));
		if (gi.nmembers > SPINDLE_MAX_MEMBERS || gi.nsubgroups > SPINDLE_MAX_SUBGROUPS ||
		    gi.state < SPINDLE_GROUP_CONNECTING || gi.state > STATE_MAX)
			anomaly(t, "CTL_GROUP_INFO: nmembers %u nsubgroups %u state %u",
				gi.nmembers, gi.nsubgroups, gi.state);
	}
}

/* ---- subgroup device operations ---- */

static const struct dev *meta(struct thr *t, int dev)
{
	return devs[dev].is_ctl ? &devs[sg_dev(t)] : &devs[dev];
}

/* a mapping of this thread of @d's ring @rank */
static struct mp *find_ring_mp(struct thr *t, const struct dev *d, uint32_t rank)
{
	int i;

	for (i = 0; i < t->nmp; i++)
		if (&devs[t->mp[i].dev] == d && t->mp[i].off == d->rings[rank].mmap_offset)
			return &t->mp[i];
	return NULL;
}

static void op_sg_info(struct thr *t)
{
	int fd, dev, of, s = pick_slot(t, &fd, &dev, &of), r = rn(t, 100);
	const struct dev *d = meta(t, dev);
	struct spindle_info in = { 0 };
	struct uptr u, ur = { .kind = PK_NULL, .room = SIZE_MAX };
	uint32_t usize, room, i;

	(void)s;
	room = r < 50 ? 32 : r < 65 ? d->info.nsenders : r < 75 ? 0 : r < 85 ? 1 : ival(t);
	in.nsenders = room;
	if (chance(t, 85)) {
		ur = gen_ptr(t, t->aux, 32 * sizeof(struct spindle_ring_info), 15);
		room = clamp_cnt(&ur, room < 32 ? room : 32, sizeof(struct spindle_ring_info),
				 sizeof(struct spindle_ring_info));
		if (room < in.nsenders && room < 32)
			in.nsenders = room;
		in.rings = (uintptr_t)ur.p;
	}
	if (chance(t, 6))
		in.reserved[rn(t, 3)] = ival(t) | 1;
	if (chance(t, 10)) {	/* out fields: ignored */
		in.window = ival(t);
		in.my_rank = (int32_t)ival(t);
		in.producer_size = ival(t);
	}
	u = place_arg(t, &in, sizeof(in), &usize);
	tr(t, "INFO fd %d room %u rings %s size %u at %s", fd, in.nsenders,
	   pk_name[ur.kind], usize, pk_name[u.kind]);
	if (rec(ioctl(fd, SPINDLE_IOC_INFO, u.p)) || !readable(&u))
		return;
	memcpy(&in, u.p, sizeof(in));
	if (!in.window || in.window > SPINDLE_MAX_WINDOW || !in.max_msg ||
	    in.max_msg > SPINDLE_MAX_MSG || in.slot_size < in.max_msg ||
	    !in.nsenders || in.nsenders > SPINDLE_MAX_MEMBERS ||
	    in.my_rank >= (int32_t)in.nsenders || in.my_rank < -1 ||
	    in.producer_size % PG || (in.my_rank < 0) != !in.producer_size) {
		anomaly(t, "INFO: window %u max_msg %u slot %u nsenders %u rank %d producer %u",
			in.window, in.max_msg, in.slot_size, in.nsenders, in.my_rank,
			in.producer_size);
		return;
	}
	for (i = 1; i < (uint32_t)nstatic; i++) {
		const struct dev *k = &devs[i];

		if (k->gid == in.group_id && k->sgid == in.subgroup_id &&
		    (k->info.window != in.window || k->info.max_msg != in.max_msg ||
		     k->info.slot_size != in.slot_size || k->info.my_rank != in.my_rank ||
		     k->info.producer_size != in.producer_size))
			anomaly(t, "INFO of %s changed", k->path);
	}
	if (readable(&ur))
		for (i = 0; i < in.nsenders && i < room; i++) {
			struct spindle_ring_info ri;

			memcpy(&ri, ur.p + i * sizeof(ri), sizeof(ri));
			if (ri.mmap_offset != (uint64_t)(i + 1) << 32 || ri.mmap_size % PG ||
			    !ri.mmap_size || (ri.flags & ~SPINDLE_RING_WRITABLE) ||
			    !(ri.flags & SPINDLE_RING_WRITABLE) != ((int32_t)i != in.my_rank))
				anomaly(t, "INFO ring %u: offset %#llx size %llu flags %#x", i,
					(unsigned long long)ri.mmap_offset,
					(unsigned long long)ri.mmap_size, ri.flags);
		}
}

static void op_sg_send(struct thr *t)
{
	int fd, dev, of, s = pick_slot(t, &fd, &dev, &of), r;
	const struct dev *d = meta(t, dev);
	struct spindle_send a = { 0 };
	uint32_t w = d->info.window, pend = t->pend[s], usize, n, i, reserve;
	uint32_t lens[64];
	struct uptr u, ul = { .kind = PK_NULL, .room = SIZE_MAX };
	long ret;

	a.flags = chance(t, 88) ? (chance(t, 50) ? SPINDLE_SEND_NONBLOCK : 0) :
		  chance(t, 50) ? 1u << rn(t, 32) : ival(t);
	r = rn(t, 100);
	a.count = r < 40 ? 0 : r < 75 ? (pend ? 1 + rn(t, pend) : 1) : r < 85 ? rn(t, w + 2) :
		  r < 92 ? pend + 1 : ival(t);
	r = rn(t, 100);
	a.reserve = r < 35 ? 0 : r < 80 ? 1 + rn(t, w) : r < 88 ? w + 1 : r < 92 ? w : ival(t);
	reserve = a.reserve;
	a.timeout_ms = gen_timeout(t);
	if (chance(t, 2) && (a.flags & SPINDLE_SEND_NONBLOCK))	/* never blocks */
		a.timeout_ms = ival(t);
	if (chance(t, 6)) {
		switch (rn(t, 3)) {
		case 0: a.reserved_count = ival(t) | 1; break;
		case 1: a.first = garbage64(t) | 1; break;
		default: a.pending = ival(t) | 1; break;
		}
	}
	if (chance(t, 4))
		a.reserved = ival(t) | 1;
	if (a.count || chance(t, 20)) {
		n = a.count < 64 ? a.count : 64;
		for (i = 0; i < n; i++) {
			r = rn(t, 100);
			lens[i] = r < 60 ? 1 + rn(t, d->info.max_msg) : r < 66 ? 0 :
				  r < 74 ? d->info.max_msg : r < 80 ? d->info.max_msg + 1 :
				  r < 94 ? SPINDLE_LEN_VOID : ival(t);
		}
		ul = gen_ptr(t, t->aux, n * 4, 12);
		fill(t, &ul, lens, n * 4);
		a.lens = (uintptr_t)ul.p;
	}
	/* not in a shared mapping: a timeout changed under us could wait long */
	u = place_arg_(t, &a, sizeof(a), &usize, 1);
	tr(t, "SEND fd %d (%s) flags %#x count %u reserve %u timeout %u lens %s size %u at %s",
	   fd, d->path, a.flags, a.count, a.reserve, a.timeout_ms, pk_name[ul.kind], usize,
	   pk_name[u.kind]);
	ret = rec(ioctl(fd, SPINDLE_IOC_SEND, u.p));
	if ((ret == 0 || errno == EAGAIN || errno == ETIMEDOUT) && readable(&u) &&
	    usize >= sizeof(a)) {
		memcpy(&a, u.p, sizeof(a));
		if (ret == 0 && a.count)
			atomic_fetch_add_explicit(&st_marked, a.count, memory_order_relaxed);
		t->pend[s] = a.pending;
		if (a.reserved_count > reserve || a.pending > SPINDLE_MAX_WINDOW ||
		    (ret == 0 && reserve && !a.reserved_count))
			anomaly(t, "SEND: reserve %u gave %u, pending %u (ret %ld)", reserve,
				a.reserved_count, a.pending, ret);
	}
}

static void check_descs(struct thr *t, const struct dev *d, const struct spindle_desc *dd,
			uint32_t n)
{
	uint32_t i;
	uint8_t tmp[64];

	for (i = 0; i < n; i++) {
		const struct spindle_desc *x = &dd[i];
		struct mp *m;

		if (DESC_VIEW && x->flags == DESC_VIEW && x->rank == 0xffff && !x->sender_id &&
		    !x->reserved)
			continue;	/* a view record */
		if (x->len > SPINDLE_MAX_MSG || x->rank >= SPINDLE_MAX_MEMBERS || x->flags ||
		    x->reserved) {
			anomaly(t, "RECV: desc len %u rank %u flags %#x", x->len, x->rank, x->flags);
			return;
		}
		if (x->rank >= d->info.nsenders)
			continue;
		m = find_ring_mp(t, d, x->rank);
		/* the message, read in place (the mapping may be partial) */
		if (m && m->off == d->rings[x->rank].mmap_offset && x->offset < m->len)
			probe_copy(tmp, (uint8_t *)m->a + x->offset,
				   m->len - x->offset < sizeof(tmp) ? m->len - x->offset : sizeof(tmp));
	}
}

static void op_sg_recv(struct thr *t)
{
	int fd, dev, of, s = pick_slot(t, &fd, &dev, &of), r = rn(t, 100);
	const struct dev *d = meta(t, dev);
	struct spindle_recv a = { 0 };
	struct uptr u, ud;
	uint32_t usize, max, eff;
	long ret;

	(void)s;
	a.flags = chance(t, 93) ? 0 : ival(t);
	max = r < 15 ? 0 : r < 55 ? 1 + rn(t, 4) : r < 75 ? rn(t, 64) :
	      r < 85 ? d->info.window * d->info.nsenders : ival(t);
	a.timeout_ms = gen_timeout(t);
	if (chance(t, 2) && !max)	/* never blocks */
		a.timeout_ms = ival(t);
	if (chance(t, 5))
		a.count = ival(t) | 1;
	if (chance(t, 4))
		a.pending = ival(t) | 1;
	if (chance(t, 4))
		a.reserved[rn(t, 2)] = ival(t) | 1;
	ud = gen_ptr(t, t->aux, 64 * sizeof(struct spindle_desc), 15);
	eff = max < logmax ? max : logmax;
	if (clamp_cnt(&ud, eff, sizeof(struct spindle_desc), sizeof(struct spindle_desc)) < eff)
		max = clamp_cnt(&ud, eff, sizeof(struct spindle_desc), sizeof(struct spindle_desc));
	a.max = max;
	a.descs = (uintptr_t)ud.p;
	u = place_arg_(t, &a, sizeof(a), &usize, 1);
	tr(t, "RECV fd %d (%s) max %u timeout %u descs %s size %u at %s", fd, d->path,
	   a.max, a.timeout_ms, pk_name[ud.kind], usize, pk_name[u.kind]);
	ret = rec(ioctl(fd, SPINDLE_IOC_RECV, u.p));
	if (ret || !readable(&u))
		return;
	memcpy(&a, u.p, sizeof(a));
	atomic_fetch_add_explicit(&st_descs, a.count, memory_order_relaxed);
	if (a.count > max || a.pending > 0x100000) {
		anomaly(t, "RECV: max %u count %u pending %u", max, a.count, a.pending);
		return;
	}
	if (readable(&ud) && a.count)
		check_descs(t, d, (const struct spindle_desc *)ud.p, a.count);
}

static unsigned long safe_scalar(struct thr *t)
{
	static const unsigned long v[] = {
		0, 1, 0x10, ~0UL, 0xffff888000000000UL, 1UL << 47, 0x8000000000000000UL,
	};

	return v[rn(t, 7)];
}

static void op_sg_wake(struct thr *t)
{
	int fd, dev, of, s = pick_slot(t, &fd, &dev, &of);
	unsigned long arg = safe_scalar(t);

	(void)s;
	tr(t, "WAKE fd %d arg %#lx", fd, arg);
	rec(syscall(SYS_ioctl, fd, (unsigned long)SPINDLE_IOC_WAKE, arg));
}

/* an ioctl number: ours mostly, then near misses, then others */
static unsigned long gen_cmd(struct thr *t)
{
	static const unsigned long valid[] = {
		SPINDLE_CTL_VERSION, SPINDLE_CTL_UP, SPINDLE_CTL_DOWN, SPINDLE_CTL_GROUP_INFO,
		SPINDLE_IOC_INFO, SPINDLE_IOC_SEND, SPINDLE_IOC_RECV, SPINDLE_IOC_WAKE,
	};
	static const uint32_t sizes[] = { 0, 4, 8, 16, 40, 48, 56, 64, 72, 96, 0x3fff };
	unsigned long c = valid[rn(t, 8)];
	unsigned int type;

	switch (rn(t, 9)) {
	case 0: case 1: break;
	case 2: c = _IOC(rn(t, 4), SPINDLE_IOC_MAGIC, rn(t, 0x30), sizes[rn(t, 11)]); break;
	case 3: c ^= (unsigned long)(1 + rn(t, 3)) << _IOC_DIRSHIFT; break;
	case 4: c = (c & ~((unsigned long)_IOC_SIZEMASK << _IOC_SIZESHIFT)) |
		    (unsigned long)sizes[rn(t, 11)] << _IOC_SIZESHIFT; break;
	case 5: c = _IOC(rn(t, 4), rn(t, 256), rn(t, 256), rn(t, 1 << 14)); break;
	case 6: c = (uint32_t)rnd(t); break;
	case 7: c |= (unsigned long)(uint32_t)rnd(t) << 32; break;	/* the kernel takes 32 bits */
	default: c = interesting[rn(t, NINTERESTING)]; break;
	}
	type = _IOC_TYPE(c);
	if (type == 'f' || type == 'X' || type == 0x94)
		c = (c & ~((unsigned long)_IOC_TYPEMASK << _IOC_TYPESHIFT)) |
		    (unsigned long)SPINDLE_IOC_MAGIC << _IOC_TYPESHIFT;
	return c;
}

static void op_random_ioctl(struct thr *t)
{
	int fd, dev, of, s = pick_slot(t, &fd, &dev, &of);
	unsigned long cmd = gen_cmd(t);
	uint64_t w[64];
	struct uptr u;
	unsigned int i;
	uint32_t c32 = (uint32_t)cmd;

	(void)s;
	for (i = 0; i < 64; i++)
		w[i] = garbage64(t);
	if (chance(t, 60)) {	/* a plausible size field */
		static const uint32_t sz[] = { 16, 64, 72, 72, 80, 40, 40, 48 };

		w[0] = (w[0] & ~0xffffffffULL) | sz[rn(t, 8)];
	}
	/* never a valid CTL_DOWN of our groups; nor an UP that could win */
	if (c32 == SPINDLE_CTL_DOWN || c32 == SPINDLE_CTL_UP)
		w[0] = (w[0] & 0xffffffffULL) | (uint64_t)(1 + rn(t, 8)) << 32;
	/* no wait without end: timeouts short (offsets of timeout_ms) */
	if (c32 == SPINDLE_CTL_DOWN)
		w[1] = (w[1] & ~0xffffffffULL) | rn(t, 100);
	if (c32 == SPINDLE_IOC_RECV)
		w[1] = (w[1] & 0xffffffffULL) | (uint64_t)rn(t, 50) << 32;
	if (c32 == SPINDLE_IOC_SEND)
		w[3] = (w[3] & ~0xffffffffULL) | rn(t, 50);
	if (chance(t, 10)) {
		tr(t, "ioctl fd %d cmd %#lx scalar", fd, cmd);
		rec(syscall(SYS_ioctl, fd, cmd, safe_scalar(t)));
		return;
	}
	u = gen_ptr(t, t->buf, sizeof(w), 30);
	if (u.kind == PK_MAP && (u.room < 4096 || c32 == SPINDLE_CTL_DOWN ||
				 c32 == SPINDLE_IOC_RECV || c32 == SPINDLE_IOC_SEND)) {
		u.kind = PK_NULL;
		u.p = u.fill = NULL;
	}
	fill(t, &u, w, sizeof(w));
	tr(t, "ioctl fd %d cmd %#lx at %s", fd, cmd, pk_name[u.kind]);
	rec(syscall(SYS_ioctl, fd, cmd, u.p));
}

static void op_poll(struct thr *t)
{
	struct pollfd p[POOL];
	int i, n = 0, fd, dev, of;

	if (chance(t, 25)) {	/* epoll: wait queues registered past a close */
		int ep = rec(epoll_create1(EPOLL_CLOEXEC));
		struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLERR }, out[4];

		if (ep < 0)
			return;
		for (i = 0; i < 3; i++) {
			pick_slot(t, &fd, &dev, &of);
			ev.data.u32 = i;
			if (chance(t, 20))
				ev.events |= EPOLLET | EPOLLONESHOT;
			rec(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
		}
		tr(t, "epoll_wait");
		rec(epoll_wait(ep, out, 4, rn(t, 2)));
		rec(close(ep));
		return;
	}
	for (i = 0; i < POOL; i++) {
		unpack(atomic_load(&pool[i]), &fd, &dev, &of);
		if (fd < 0 && chance(t, 70))
			continue;
		p[n].fd = fd;
		p[n].events = chance(t, 70) ? POLLIN | POLLOUT : (short)rnd(t);
		n++;
	}
	tr(t, "poll %d fds", n);
	rec(poll(p, n, rn(t, 2)));
}

static void op_rw(struct thr *t)
{
	int fd, dev, of, s = pick_slot(t, &fd, &dev, &of);
	size_t n = rn(t, 3) ? rn(t, 256) : 0;

	(void)s;
	tr(t, "read/write/lseek fd %d", fd);
	switch (rn(t, 5)) {
	case 0: rec(read(fd, t->aux, n)); break;
	case 1: rec(write(fd, t->buf, n)); break;
	case 2: rec(lseek(fd, rnd(t) & 0xffff, SEEK_SET)); break;
	case 3: rec(pread(fd, t->aux, n, 0)); break;
	default: {
		struct stat st;

		rec(fstat(fd, &st));
		break;
	}
	}
}

static void op_fcntl(struct thr *t)
{
	int fd, dev, of, s = pick_slot(t, &fd, &dev, &of);
	long fl;

	(void)s;
	tr(t, "fcntl fd %d", fd);
	fl = rec(fcntl(fd, F_GETFL));
	if (fl >= 0)
		rec(fcntl(fd, F_SETFL, fl ^ O_NONBLOCK));
}

/* ---- file descriptor races ---- */

static int phase_dev(struct thr *t)
{
	switch (cur_phase) {
	case PH_CTL:
		return chance(t, 80) ? 0 : sg_dev(t);
	case PH_MIX:
		return chance(t, 10) ? 0 : sg_dev(t);
	case PH_CHURN:
		return chance(t, 65) ? nstatic + (int)rn(t, NCHURN) : sg_dev(t);
	default:
		return sg_dev(t);
	}
}

static void op_open(struct thr *t)
{
	open_dev(t, phase_dev(t), rn(t, POOL));
}

static void op_close(struct thr *t)
{
	int s = rn(t, POOL), fd, dev, of;
	uint64_t old = atomic_exchange(&pool[s], 0);

	if (!old)
		return;
	unpack(old, &fd, &dev, &of);
	tr(t, "close fd %d", fd);
	rec(close(fd));
	t->pend[s] = 0;
}

static void op_dup(struct thr *t)
{
	int fa, da, oa, fb, db, ob, nfd;
	int sb, sa = pick_slot(t, &fa, &da, &oa);
	uint64_t vb;

	(void)sa;
	if (fa < 0)
		return;
	if (chance(t, 50)) {
		nfd = rec(chance(t, 50) ? dup(fa) : fcntl(fa, F_DUPFD_CLOEXEC, 3 + rn(t, 64)));
		tr(t, "dup fd %d = %d", fa, nfd);
		if (nfd >= 0)
			pool_put(rn(t, POOL), nfd, da, oa);
		return;
	}
	/* dup3 onto another slot's descriptor: its file changes under it */
	sb = rn(t, POOL);
	vb = atomic_load(&pool[sb]);
	if (!vb)
		return;
	unpack(vb, &fb, &db, &ob);
	tr(t, "dup3 fd %d onto %d", fa, fb);
	if (rec(dup3(fa, fb, O_CLOEXEC)) == fb)
		atomic_compare_exchange_strong(&pool[sb], &vb, pack(fb, da, oa));
}

/* ---- mappings ---- */

static void op_mmap(struct thr *t)
{
	int fd, dev, of, s = pick_slot(t, &fd, &dev, &of), r, prot, flags, fs = -1;
	const struct dev *d = meta(t, dev);
	uint64_t off, ringsz, psz = d->info.producer_size;
	size_t len;
	void *p, *hint = NULL;
	uint32_t rank = rn(t, d->info.nsenders + 1);

	if (t->nmp >= MAXMP - 4)
		return;
	ringsz = rank < d->info.nsenders ? d->rings[rank].mmap_size : PG;
	r = rn(t, 100);
	if (r < 30)
		off = SPINDLE_MMAP_PRODUCER;
	else if (r < 75)
		off = (uint64_t)(rank + 1) << 32;
	else if (r < 80)
		off = ((uint64_t)(rank + 1) << 32) + PG;
	else if (r < 84)
		off = (1ULL << 32) - PG;
	else if (r < 88)
		off = rnd(t) & ~(PG - 1) & 0x7fffffffffffULL;
	else if (r < 91)
		off = 0x7ffffffffffff000ULL;
	else if (r < 95)
		off = (uint64_t)(rank + 1) << 32 | (1 + rn(t, PG - 1));	/* unaligned */
	else
		off = (uint64_t)(SPINDLE_MAX_MEMBERS + 1 + rn(t, 4)) << 32;
	r = rn(t, 100);
	if (r < 35)
		len = off == SPINDLE_MMAP_PRODUCER ? (psz ? psz : PG) : ringsz;
	else if (r < 50)
		len = PG;
	else if (r < 58)
		len = 1 + rn(t, PG);
	else if (r < 66)
		len = ringsz > PG ? ringsz - PG : ringsz + PG;
	else if (r < 74)
		len = ringsz + PG;
	else if (r < 78)
		len = 0;
	else if (r < 82)
		len = 1UL << 40;
	else if (r < 85)
		len = ~0UL - PG;
	else
		len = PG * (1 + rn(t, 16));
	prot = chance(t, 60) ? PROT_READ | PROT_WRITE : chance(t, 50) ? PROT_READ :
	       (int)rn(t, 8);
	r = rn(t, 100);
	flags = r < 75 ? MAP_SHARED : r < 88 ? MAP_PRIVATE :
		r < 95 ? MAP_SHARED_VALIDATE :
		MAP_SHARED_VALIDATE | ((1 << rn(t, 24)) & ~(MAP_ANONYMOUS | MAP_FIXED |
							   MAP_FIXED_NOREPLACE | MAP_POPULATE));
	if (chance(t, 5))
		flags |= MAP_POPULATE;
	if (chance(t, 3))
		flags |= MAP_LOCKED;
	if (chance(t, 3))
		flags |= MAP_32BIT;
	if (chance(t, 3))
		flags |= MAP_NORESERVE;
	if (chance(t, 12) && len && len <= FIXSLOT) {	/* over our reservation */
		fs = free_fix_slot(t);
		if (fs >= 0) {
			hint = t->fix + (size_t)fs * FIXSLOT;
			flags |= MAP_FIXED;
			flags &= ~MAP_32BIT;
		}
	}
	tr(t, "mmap fd %d (%s) off %#llx len %#zx prot %#x flags %#x%s", fd, d->path,
	   (unsigned long long)off, len, prot, flags, hint ? " fixed" : "");
	p = recp(mmap(hint, len, prot, flags, fd, (off_t)off));
	if (p == MAP_FAILED) {
		if (hint)	/* a failed MAP_FIXED may leave a hole */
			fix_reserve(t, (uintptr_t)hint, FIXSLOT);
		return;
	}
	len = (len + PG - 1) & ~(PG - 1);
	mp_add(t, (uintptr_t)p, len, dev, s, off);
	/*
	 * Another sender's ring must never be writable.  (Only on the groups
	 * that stay up: a churned group's minor is reused by its next
	 * incarnation, and the path no longer says which one was mapped.)
	 */
	if (prot & PROT_WRITE && d - devs < nstatic && off != SPINDLE_MMAP_PRODUCER &&
	    rank < d->info.nsenders &&
	    off == d->rings[rank].mmap_offset && !(d->rings[rank].flags & SPINDLE_RING_WRITABLE)) {
		char lnk[64], path[80];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
			 (unsigned long)p, (unsigned long)p + len);
		n = readlink(path, lnk, sizeof(lnk) - 1);
		if (n > 0) {
			lnk[n] = 0;
			if (!strcmp(lnk, d->path))
				anomaly(t, "%s: ring %u of another sender mapped writable",
					d->path, rank);
		}
	}
}

static void op_touch(struct thr *t)
{
	struct mp *m = pick_mp(t, 1);
	uint8_t tmp[256];
	size_t off, n;
	unsigned int i;

	if (!m)
		return;
	off = rn(t, (uint32_t)m->len);
	n = 1 + rn(t, 256);
	if (n > m->len - off)
		n = m->len - off;
	tr(t, "touch %#lx+%#zx len %zu", (unsigned long)m->a, off, n);
	if (chance(t, 60)) {
		probe_copy(tmp, (uint8_t *)m->a + off, n);
		return;
	}
	for (i = 0; i < n; i++)
		tmp[i] = (uint8_t)rnd(t);
	probe_copy((uint8_t *)m->a + off, tmp, n);
}

/* a page-aligned piece of @m: [*a, *a + *len) */
static void sub_range(struct thr *t, const struct mp *m, uintptr_t *a, size_t *len)
{
	size_t pages = m->len / PG, first, n;

	if (chance(t, 50) || pages < 2) {
		*a = m->a;
		*len = m->len;
		return;
	}
	first = rn(t, pages);
	n = 1 + rn(t, pages - first);
	*a = m->a + first * PG;
	*len = n * PG;
}

static void op_mprotect(struct thr *t)
{
	struct mp *m = pick_mp(t, 1);
	const struct dev *d;
	uintptr_t a;
	size_t len;
	int prot;

	if (!m || t->nmp >= MAXMP - 2)
		return;
	sub_range(t, m, &a, &len);
	prot = (int)rn(t, 8);
	if (chance(t, 5))
		prot |= PROT_GROWSUP;
	tr(t, "mprotect %#lx len %#zx prot %#x", (unsigned long)a, len, prot);
	if (rec(mprotect((void *)a, len, prot)) == 0 && prot & PROT_WRITE && m->dev < nstatic) {
		uint32_t r;

		d = &devs[m->dev];
		for (r = 0; r < d->info.nsenders; r++)
			if (m->off == d->rings[r].mmap_offset &&
			    !(d->rings[r].flags & SPINDLE_RING_WRITABLE)) {
				char lnk[64], path[80];
				ssize_t n;

				snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
					 (unsigned long)m->a, (unsigned long)(m->a + m->len));
				n = readlink(path, lnk, sizeof(lnk) - 1);
				if (n > 0) {
					lnk[n] = 0;
					if (!strcmp(lnk, d->path))
						anomaly(t, "%s: read-only ring %u made writable",
							d->path, r);
				}
			}
	}
}

static void op_munmap(struct thr *t)
{
	struct mp *m = pick_mp(t, 1);
	uintptr_t a;
	size_t len;

	if (!m || t->nmp >= MAXMP - 2)
		return;
	sub_range(t, m, &a, &len);
	tr(t, "munmap %#lx len %#zx", (unsigned long)a, len);
	unmap_range(t, a, len);
}

static void op_mremap(struct thr *t)
{
	struct mp *m = pick_mp(t, 1), c;
	size_t nlen;
	void *r, *to;
	int fs, flags;

	if (!m || in_fix(t, m->a) || t->nmp >= MAXMP - 2)
		return;
	c = *m;
	switch (rn(t, 7)) {
	case 0:		/* shrink in place */
		if (c.len < 2 * PG)
			return;
		nlen = PG * (1 + rn(t, (uint32_t)(c.len / PG - 1)));
		tr(t, "mremap shrink %#lx %#zx -> %#zx", (unsigned long)c.a, c.len, nlen);
		r = recp(mremap((void *)c.a, c.len, nlen, 0));
		if (r != MAP_FAILED)
			mp_remove(t, c.a + nlen, c.len - nlen);
		return;
	case 1:		/* grow: VM_DONTEXPAND says no */
	case 2:
		nlen = c.len + PG * (1 + rn(t, 4));
		flags = chance(t, 50) ? MREMAP_MAYMOVE : 0;
		tr(t, "mremap grow %#lx %#zx -> %#zx flags %d", (unsigned long)c.a, c.len, nlen, flags);
		r = recp(mremap((void *)c.a, c.len, nlen, flags));
		if (r != MAP_FAILED) {
			mp_remove(t, c.a, c.len);
			mp_add(t, (uintptr_t)r, nlen, c.dev, c.slot, c.off);
		}
		return;
	case 3:		/* duplicate: old_len 0 */
		tr(t, "mremap dup %#lx", (unsigned long)c.a);
		r = recp(mremap((void *)c.a, 0, c.len, MREMAP_MAYMOVE));
		if (r != MAP_FAILED)
			mp_add(t, (uintptr_t)r, c.len, c.dev, c.slot, c.off);
		return;
	case 4:		/* move to a kernel-chosen place */
		tr(t, "mremap move %#lx", (unsigned long)c.a);
		r = recp(mremap((void *)c.a, c.len, c.len, MREMAP_MAYMOVE));
		if (r != MAP_FAILED && (uintptr_t)r != c.a) {
			mp_remove(t, c.a, c.len);
			mp_add(t, (uintptr_t)r, c.len, c.dev, c.slot, c.off);
		}
		return;
	default:	/* move into our reservation, maybe keeping the old one */
		if (c.len > FIXSLOT)
			return;
		fs = free_fix_slot(t);
		if (fs < 0)
			return;
		to = t->fix + (size_t)fs * FIXSLOT;
		flags = MREMAP_MAYMOVE | MREMAP_FIXED;
		nlen = c.len;
		if (chance(t, 30))
			flags |= MREMAP_DONTUNMAP;
		else if (chance(t, 20) && c.len + PG <= FIXSLOT)
			nlen = c.len + PG;	/* fails after unmapping the target */
		tr(t, "mremap %#lx %#zx -> fixed %p %#zx flags %#x", (unsigned long)c.a, c.len,
		   to, nlen, flags);
		r = recp(mremap((void *)c.a, c.len, nlen, flags, to));
		if (r == MAP_FAILED) {
			fix_reserve(t, (uintptr_t)to, FIXSLOT);
			return;
		}
		if (!(flags & MREMAP_DONTUNMAP))
			mp_remove(t, c.a, c.len);
		mp_add(t, (uintptr_t)r, nlen, c.dev, c.slot, c.off);
		return;
	}
}

static void op_madvise(struct thr *t)
{
	static const int adv[] = {
		MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED, MADV_DONTNEED,
		MADV_FREE, MADV_REMOVE, MADV_DONTFORK, MADV_DOFORK, MADV_MERGEABLE,
		MADV_UNMERGEABLE, MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_DONTDUMP,
		MADV_DODUMP, MADV_WIPEONFORK, MADV_KEEPONFORK, MADV_COLD, MADV_PAGEOUT,
		22 /* POPULATE_READ */, 23 /* POPULATE_WRITE */, 24 /* DONTNEED_LOCKED */,
		25 /* COLLAPSE */, 99,
	};
	struct mp *m = pick_mp(t, 1);
	uintptr_t a;
	size_t len;
	int k = rn(t, sizeof(adv) / sizeof(adv[0]));
	unsigned char vec[64];

	if (!m)
		return;
	sub_range(t, m, &a, &len);
	switch (rn(t, 6)) {
	case 0:
		tr(t, "msync %#lx", (unsigned long)a);
		rec(msync((void *)a, len, chance(t, 50) ? MS_SYNC : MS_ASYNC | MS_INVALIDATE));
		return;
	case 1:
		tr(t, "mlock %#lx", (unsigned long)a);
		if (rec(mlock((void *)a, len)) == 0)
			rec(munlock((void *)a, len));
		return;
	case 2:
		if (len > 64 * PG)
			len = 64 * PG;
		tr(t, "mincore %#lx", (unsigned long)a);
		rec(mincore((void *)a, len, vec));
		return;
	default:
		tr(t, "madvise %#lx len %#zx advice %d", (unsigned long)a, len, adv[k]);
		rec(madvise((void *)a, len, adv[k]));
		return;
	}
}

/* writes through /proc/self/mem and process_vm_writev (FOLL_FORCE, GUP) */
static void op_procmem(struct thr *t)
{
	struct mp *m = pick_mp(t, 1);
	const struct dev *d;
	size_t off, n;
	uint32_t r;
	long ret;

	if (!m || t->memfd < 0)
		return;
	off = rn(t, (uint32_t)m->len);
	n = 1 + rn(t, 128);
	if (n > m->len - off)
		n = m->len - off;
	if (chance(t, 50)) {
		tr(t, "pread /proc/self/mem %#lx", (unsigned long)(m->a + off));
		rec(pread(t->memfd, t->aux, n, (off_t)(m->a + off)));
		return;
	}
	tr(t, "pwrite /proc/self/mem %#lx", (unsigned long)(m->a + off));
	ret = rec(pwrite(t->memfd, t->buf, n, (off_t)(m->a + off)));
	if (ret <= 0 || m->dev >= nstatic)
		return;
	d = &devs[m->dev];
	for (r = 0; r < d->info.nsenders; r++)
		if (m->off == d->rings[r].mmap_offset &&
		    !(d->rings[r].flags & SPINDLE_RING_WRITABLE)) {
			char lnk[64], path[80];
			ssize_t k;

			snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
				 (unsigned long)m->a, (unsigned long)(m->a + m->len));
			k = readlink(path, lnk, sizeof(lnk) - 1);
			if (k > 0) {
				lnk[k] = 0;
				if (!strcmp(lnk, d->path))
					anomaly(t, "%s: read-only ring %u written through /proc/self/mem",
						d->path, r);
			}
		}
}

/* ---- the producer page ---- */

static struct mp *find_prod_mp(struct thr *t)
{
	int i, k;

	if (!t->nmp)
		return NULL;
	for (k = 0, i = rn(t, t->nmp); k < t->nmp; k++, i = (i + 1) % t->nmp)
		if (t->mp[i].off == SPINDLE_MMAP_PRODUCER && !devs[t->mp[i].dev].is_ctl &&
		    t->mp[i].len >= PG)
			return &t->mp[i];
	return NULL;
}

static void op_prod_map(struct thr *t)
{
	int fd, dev, of, s = pick_slot(t, &fd, &dev, &of);
	const struct dev *d = meta(t, dev);
	size_t len = d->info.producer_size ? d->info.producer_size : PG;
	int prot = PROT_READ | PROT_WRITE, flags = MAP_SHARED;
	void *p;

	if (t->nmp >= MAXMP - 4)
		return;
	if (chance(t, 10))
		len = chance(t, 50) ? len + PG : 1 + rn(t, (uint32_t)len);
	if (chance(t, 10))
		prot = (int)rn(t, 8);
	if (chance(t, 8))
		flags = MAP_PRIVATE;
	tr(t, "mmap producer fd %d (%s) len %#zx prot %#x flags %#x", fd, d->path, len, prot, flags);
	p = recp(mmap(NULL, len, prot, flags, fd, SPINDLE_MMAP_PRODUCER));
	if (p != MAP_FAILED)
		mp_add(t, (uintptr_t)p, (len + PG - 1) & ~(PG - 1), dev, s, SPINDLE_MMAP_PRODUCER);
}

static void op_prod_write(struct thr *t)
{
	struct mp *m = find_prod_mp(t), *ring;
	const struct dev *d;
	struct spindle_producer pp;
	volatile struct spindle_producer *vp;
	uint32_t w, lens_room, i, n, len, k;
	uint64_t tail, v;
	int r = rn(t, 100), fd, dev, of;

	if (!m) {
		op_prod_map(t);
		return;
	}
	d = &devs[m->dev];
	w = d->info.window ? d->info.window : 1;	/* churn entries change under us */
	vp = (volatile struct spindle_producer *)m->a;
	lens_room = (uint32_t)((m->len - sizeof(pp)) / 4);
	if (probe_copy(&pp, (const void *)m->a, sizeof(pp)))
		return;		/* not readable now */
	tail = pp.tail;
	if (r < 45) {		/* by the book, 1..4 messages */
		ring = d->info.my_rank >= 0 ? find_ring_mp(t, d, d->info.my_rank) : NULL;
		n = 1 + rn(t, 4);
		for (k = 0; k < n && tail < pp.limit; k++, tail++) {
			uint8_t body[64];
			uint64_t so = (tail % w) * d->info.slot_size;

			len = chance(t, 90) ? 1 + rn(t, d->info.max_msg) : SPINDLE_LEN_VOID;
			if (ring && so < ring->len) {
				memset(body, (int)(tail & 0xff), sizeof(body));
				probe_copy((uint8_t *)ring->a + so, body,
					   ring->len - so < sizeof(body) ? ring->len - so : sizeof(body));
			}
			if (tail % w < lens_room &&
			    probe_copy((uint8_t *)m->a + sizeof(pp) + (tail % w) * 4, &len, 4))
				return;
		}
		v = tail;
		tr(t, "producer %s: tail %llu -> %llu (head %llu limit %llu)", d->path,
		   (unsigned long long)pp.tail, (unsigned long long)v,
		   (unsigned long long)pp.head, (unsigned long long)pp.limit);
	} else {
		atomic_fetch_add(&st_prod_garbage, 1);
		switch (rn(t, 8)) {
		case 0:		/* a bad length */
			len = chance(t, 50) ? d->info.max_msg + 1 : ival(t);
			if (tail % w < lens_room)
				probe_copy((uint8_t *)m->a + sizeof(pp) + (tail % w) * 4, &len, 4);
			v = tail + 1;
			break;
		case 1:
			v = pp.head + w + 1 + rn(t, 10);
			break;
		case 2:
			v = pp.head - 1 - rn(t, 3);
			break;
		case 3:
			v = garbage64(t);
			break;
		case 4:		/* the kernel's own fields */
			pp.head = garbage64(t);
			pp.limit = garbage64(t);
			pp.flags = ival(t);
			pp.pad1 = ival(t);
			pp.pad0[rn(t, 7)] = garbage64(t);
			probe_copy((void *)m->a, &pp, sizeof(pp));
			v = pp.tail;
			break;
		case 5:		/* every length garbage */
			for (i = 0; i < lens_room && i < 1024; i++) {
				len = ival(t);
				if (probe_copy((uint8_t *)m->a + sizeof(pp) + i * 4, &len, 4))
					break;
			}
			v = tail + rn(t, w + 2);
			break;
		case 6:		/* up to the limit and beyond */
			v = pp.limit + rn(t, 2);
			break;
		default:
			v = tail + w;
			break;
		}
		tr(t, "producer %s: garbage, tail %llu -> %llu (head %llu limit %llu)", d->path,
		   (unsigned long long)pp.tail, (unsigned long long)v,
		   (unsigned long long)pp.head, (unsigned long long)pp.limit);
	}
	if (probe_store64((uint64_t *)&vp->tail, v))
		return;
	/* the doorbell, or something else on the file it came from */
	unpack(atomic_load(&pool[m->slot]), &fd, &dev, &of);
	switch (rn(t, 6)) {
	case 0: case 1: case 2:
		tr(t, "WAKE fd %d", fd);
		rec(ioctl(fd, SPINDLE_IOC_WAKE));
		break;
	case 3: {
		struct pollfd p = { .fd = fd, .events = POLLOUT | POLLIN };

		rec(poll(&p, 1, 0));
		break;
	}
	case 4: {
		struct spindle_send s = { .size = sizeof(s), .reserve = 1,
					  .flags = SPINDLE_SEND_NONBLOCK };

		tr(t, "SEND fd %d reserve 1 (producer)", fd);
		rec(ioctl(fd, SPINDLE_IOC_SEND, &s));
		break;
	}
	default:
		break;
	}
}

/* ---- fork with mappings and descriptors ---- */

static void reap(struct thr *t, int hang)
{
	int i, st;

	for (i = 0; i < t->nkids; i++) {
		pid_t r;

		if (hang)
			kill(t->kids[i], SIGKILL);
		r = waitpid(t->kids[i], &st, hang ? 0 : WNOHANG);
		if (r == 0)
			continue;
		if (r == t->kids[i] && ((WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL) ||
					(WIFEXITED(st) && WEXITSTATUS(st)))) {
			atomic_fetch_add(&st_kid_bad, 1);
			anomaly(t, "child %d: %s %d", r, WIFSIGNALED(st) ? "signal" : "exit",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		}
		t->kids[i--] = t->kids[--t->nkids];
	}
}

static void op_fork(struct thr *t)
{
	pid_t pid;
	int k, n;

	reap(t, 0);
	if (t->nkids >= MAXKIDS)
		return;
	tr(t, "fork (%d mappings)", t->nmp);
	atomic_fetch_add(&st_forks, 1);
	pid = rec(fork());
	if (pid < 0)
		return;
	if (pid) {
		t->kids[t->nkids++] = pid;
		if (chance(t, 30)) {	/* dies in the middle of whatever it does */
			usleep(rn(t, 3000));
			kill(pid, SIGKILL);
		}
		return;
	}
	/* the child: only this thread, a copy of its mappings and the files */
	t->in_child = 1;
	n = 1 + rn(t, 8);
	for (k = 0; k < n; k++) {
		switch (rn(t, 9)) {
		case 0: case 1: op_touch(t); break;
		case 2: op_munmap(t); break;
		case 3: op_sg_send(t); break;
		case 4: op_sg_recv(t); break;
		case 5: op_prod_write(t); break;
		case 6: op_mprotect(t); break;
		case 7: op_close(t); break;
		default: usleep(rn(t, 3000)); break;
		}
	}
	_exit(0);
}

/*
 * Real traffic among the chaos: a well-formed reserve, fill (through this
 * thread's mapping of its ring, if any), mark; or a well-formed RECV that
 * reads what it got in place.  Other threads close, dup, unmap meanwhile.
 */
static void op_traffic(struct thr *t)
{
	int fd, dev, of, s = pick_slot(t, &fd, &dev, &of);
	const struct dev *d = meta(t, dev);
	uint32_t w = d->info.window ? d->info.window : 1, lens[64], i, n;
	struct mp *ring;

	(void)s;
	if (chance(t, 50)) {
		struct spindle_send a = { .size = sizeof(a), .flags = SPINDLE_SEND_NONBLOCK,
					  .reserve = 1 + rn(t, w) };

		tr(t, "traffic: reserve %u on fd %d (%s)", a.reserve, fd, d->path);
		if (rec(ioctl(fd, SPINDLE_IOC_SEND, &a)) || !a.reserved_count)
			return;
		n = a.reserved_count < 64 ? a.reserved_count : 64;
		ring = d->info.my_rank >= 0 ? find_ring_mp(t, d, d->info.my_rank) : NULL;
		for (i = 0; i < n; i++) {
			uint64_t so = ((a.first + i) % w) * d->info.slot_size;

			lens[i] = chance(t, 90) ? 1 + rn(t, d->info.max_msg) : SPINDLE_LEN_VOID;
			if (ring && so < ring->len) {
				uint8_t body[128];
				size_t k = lens[i] < sizeof(body) ? lens[i] : sizeof(body);

				memset(body, (int)((a.first + i) & 0xff), sizeof(body));
				if (k > ring->len - so)
					k = ring->len - so;
				probe_copy((uint8_t *)ring->a + so, body, k);
			}
		}
		a = (struct spindle_send){ .size = sizeof(a), .count = n, .lens = (uintptr_t)lens };
		tr(t, "traffic: mark %u on fd %d", n, fd);
		if (rec(ioctl(fd, SPINDLE_IOC_SEND, &a)) == 0)
			atomic_fetch_add_explicit(&st_marked, n, memory_order_relaxed);
	} else {
		struct spindle_desc *dd = (void *)t->aux;
		struct spindle_recv r = { .size = sizeof(r), .max = logmax < 64 ? logmax : 64,
					  .timeout_ms = rn(t, 3), .descs = (uintptr_t)dd };

		tr(t, "traffic: RECV on fd %d (%s)", fd, d->path);
		if (rec(ioctl(fd, SPINDLE_IOC_RECV, &r)))
			return;
		atomic_fetch_add_explicit(&st_descs, r.count, memory_order_relaxed);
		if (r.count > r.max)
			anomaly(t, "RECV: max %u count %u", r.max, r.count);
		else
			check_descs(t, d, dd, r.count);
	}
}

/* ---- signals, sysfs, debugfs ---- */

static void on_usr1(int sig)
{
	(void)sig;	/* only to interrupt a wait: EINTR */
}

static void op_signal(struct thr *t)
{
	struct thr *o = &thr[rn(t, opt_threads)];

	if (t->in_child || !o->ktid)
		return;
	atomic_fetch_add(&st_signals, 1);
	syscall(SYS_tgkill, getpid(), o->ktid, SIGUSR1);
}

static void op_sysfs(struct thr *t)
{
	static const char *const attr[] = { "group_id", "subgroup_id", "dev", "uevent" };
	char path[128], b[256];
	int fd;

	if (chance(t, 50)) {
		snprintf(path, sizeof(path), "/sys/class/spindle/spindle%u/%s", rn(t, 24),
			 attr[rn(t, 4)]);
	} else {
		static const uint32_t gid[] = { FUZZ_GID, WAIT_GID, CHURN_GID, CHURN_GID + 1, 1, 2 };

		snprintf(path, sizeof(path), "/sys/kernel/debug/spindle/group%u/stats",
			 gid[rn(t, 6)]);
	}
	tr(t, "read %s", path);
	fd = rec(open(path, O_RDONLY | O_CLOEXEC));
	if (fd < 0)
		return;
	while (rec(read(fd, b, sizeof(b))) > 0 && chance(t, 90))
		;
	rec(close(fd));
}

/* Group churn: thread 0 brings CHURN_GID, CHURN_GID + 1 up and down. */
static int churn_up(struct thr *t, int k)
{
	struct spindle_cfg c;
	struct spindle_group_status st;
	char err[256];
	uint32_t s, gid = CHURN_GID + k;
	int i, j, fd;

	memset(&c, 0, sizeof(c));
	c.group_id = gid;
	c.nmembers = chance(t, 80) ? 1 : 2;
	c.members[0] = self_member;
	c.members[0].port = 7600 + k;
	c.members[0].id = 0;
	if (c.nmembers == 2) {
		spindle_parse_addr(NOBODY_ADDR, 7600 + k, &c.members[1]);
		c.members[1].id = 1;
	}
	c.self_id = 0;
	c.nsubgroups = 1 + rn(t, 2);
	for (s = 0; s < c.nsubgroups; s++) {
		struct spindle_cfg_subgroup *g = &c.subgroups[s];

		g->id = s;
		g->window = 1 + rn(t, 8);
		g->max_msg = 1 + rn(t, 2048);
		g->mode = 1 + rn(t, 2);
		g->nmembers = c.nmembers;
		g->nsenders = 1 + rn(t, c.nmembers);
		for (i = 0; i < (int)c.nmembers; i++)
			g->members[i] = g->senders[i] = i;
		if (g->nsenders == 1 && c.nmembers == 2 && chance(t, 50))
			g->senders[0] = 1;	/* this node does not send */
	}
	tr(t, "churn: up group %#x, %u subgroups", gid, c.nsubgroups);
	if (rec(spindle_up(ctl, &c, NULL, err, sizeof(err)) ? -1 : 0))
		return -1;
	atomic_fetch_add(&st_churn_up, 1);
	if (spindle_group_info(ctl, gid, 0, &st))
		return 0;
	for (s = 0; s < st.info.nsubgroups && s < 2; s++) {
		struct dev *d = &devs[nstatic + 2 * k + s];
		struct spindle_info in = { .size = sizeof(in), .nsenders = SPINDLE_MAX_MEMBERS };
		struct spindle_ring_info rings[SPINDLE_MAX_MEMBERS];

		snprintf(d->path, sizeof(d->path), "%s%u", SPINDLE_DEV_PREFIX,
			 st.subgroups[s].minor);
		in.rings = (uintptr_t)rings;
		/* devtmpfs makes the node a moment later */
		for (j = 0, fd = -1; j < 50 && fd < 0; j++) {
			fd = open(d->path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				usleep(1000);
		}
		if (fd < 0)
			continue;
		if (ioctl(fd, SPINDLE_IOC_INFO, &in) == 0 && in.window && in.nsenders <= 32) {
			memcpy(d->rings, rings, sizeof(rings));
			d->info = in;
			d->gid = gid;
			d->sgid = in.subgroup_id;
		}
		close(fd);
	}
	return 0;
}

static void churn_step(struct thr *t)
{
	static const uint32_t tmo[] = { 0, 0, 10, 100 };
	struct spindle_ctl_down d = { .size = sizeof(d) };
	int k = rn(t, 2);

	d.group_id = CHURN_GID + k;
	d.timeout_ms = tmo[rn(t, 4)];
	tr(t, "churn: down group %#x", d.group_id);
	if (rec(ioctl(ctl, SPINDLE_CTL_DOWN, &d)) == 0)
		atomic_fetch_add(&st_churn_down, 1);
	else
		churn_up(t, k);
	usleep(rn(t, 4000));
}

/* ---- phases ---- */

typedef void (*op_fn)(struct thr *t);

struct op {
	op_fn fn;
	int w[NPH];	/* weight per phase: ctl, sg, mmap, prod, mix, churn */
};

static const struct op ops[] = {
	{ op_ctl_version,	{ 10, 0, 0, 0, 1 } },
	{ op_ctl_up,		{ 12, 0, 0, 0, 1 } },
	{ op_ctl_down,		{ 6, 0, 0, 0, 1 } },
	{ op_ctl_info,		{ 25, 1, 0, 0, 3 } },
	{ op_random_ioctl,	{ 15, 12, 2, 2, 6 } },
	{ op_open,		{ 8, 8, 5, 8, 10 } },
	{ op_close,		{ 5, 5, 3, 6, 8 } },
	{ op_dup,		{ 3, 2, 1, 2, 8 } },
	{ op_sg_info,		{ 5, 12, 3, 2, 5 } },
	{ op_sg_send,		{ 0, 25, 6, 8, 8 } },
	{ op_sg_recv,		{ 0, 20, 6, 10, 8 } },
	{ op_sg_wake,		{ 0, 5, 1, 8, 3 } },
	{ op_poll,		{ 4, 5, 1, 3, 4 } },
	{ op_rw,		{ 3, 3, 1, 0, 2 } },
	{ op_fcntl,		{ 0, 3, 1, 2, 2 } },
	{ op_mmap,		{ 0, 0, 22, 2, 8 } },
	{ op_touch,		{ 0, 0, 16, 4, 6 } },
	{ op_mprotect,		{ 0, 0, 7, 1, 3 } },
	{ op_mremap,		{ 0, 0, 7, 1, 3 } },
	{ op_munmap,		{ 0, 0, 7, 4, 4 } },
	{ op_madvise,		{ 0, 0, 6, 1, 2 } },
	{ op_procmem,		{ 0, 0, 3, 1, 1 } },
	{ op_fork,		{ 0, 0, 2, 1, 2 } },
	{ op_prod_map,		{ 0, 0, 0, 14, 3 } },
	{ op_prod_write,	{ 0, 0, 1, 30, 4 } },
};
#define NOPS0 (sizeof(ops) / sizeof(ops[0]))

/* and the ones of the later phases (weights: churn; then sg, prod, mix) */
static const struct op ops_more[] = {
	{ op_signal,		{ 0, 1, 0, 1, 2, 2 } },
	{ op_traffic,		{ 0, 12, 8, 4, 8, 10 } },
	{ op_sysfs,		{ 0, 0, 0, 0, 1, 6 } },
	{ op_open,		{ 0, 0, 0, 0, 0, 12 } },
	{ op_close,		{ 0, 0, 0, 0, 0, 8 } },
	{ op_dup,		{ 0, 0, 0, 0, 0, 2 } },
	{ op_sg_info,		{ 0, 0, 0, 0, 0, 6 } },
	{ op_sg_send,		{ 0, 0, 0, 0, 0, 10 } },
	{ op_sg_recv,		{ 0, 0, 0, 0, 0, 10 } },
	{ op_sg_wake,		{ 0, 0, 0, 0, 0, 2 } },
	{ op_poll,		{ 0, 0, 0, 0, 0, 3 } },
	{ op_mmap,		{ 0, 0, 0, 0, 0, 8 } },
	{ op_touch,		{ 0, 0, 0, 0, 0, 5 } },
	{ op_munmap,		{ 0, 0, 0, 0, 0, 4 } },
	{ op_prod_map,		{ 0, 0, 0, 0, 0, 4 } },
	{ op_prod_write,	{ 0, 0, 0, 0, 0, 8 } },
	{ op_ctl_info,		{ 0, 0, 0, 0, 0, 2 } },
	{ op_fork,		{ 0, 0, 0, 0, 0, 1 } },
};
#define NOPS1 (sizeof(ops_more) / sizeof(ops_more[0]))
/* a RECV that waits for ever: WAIT_GID's subgroup 0, where only the absent member sends */
static void stall_test(struct thr *t)
{
	struct spindle_desc d;
	struct spindle_recv r = { .size = sizeof(r), .max = 1, .timeout_ms = 0x7fffffff,
				  .descs = (uintptr_t)&d };
	int i, fd = -1;

	for (i = 1; i < nstatic; i++)
		if (devs[i].gid == WAIT_GID && devs[i].info.my_rank < 0)
			fd = open(devs[i].path, O_RDONLY | O_CLOEXEC);
	tr(t, "stall test: RECV timeout %u on fd %d", r.timeout_ms, fd);
	rec(ioctl(fd, SPINDLE_IOC_RECV, &r));
	tr(t, "stall test: RECV returned: %s", strerror(errno));
	close(fd);
}

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	const struct op *o;
	int total = 0, i, r;

	t->ktid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&start_line);
	if (t->idx == 0 && cur_phase == PH_SG && getenv("FUZZ_STALL_TEST"))
		stall_test(t);
	for (i = 0; i < (int)(NOPS0 + NOPS1); i++)
		total += (i < (int)NOPS0 ? ops[i] : ops_more[i - NOPS0]).w[cur_phase];
	while (budget_left()) {
		if (cur_phase == PH_CHURN && t->idx == 0 && chance(t, 60)) {
			churn_step(t);
			continue;
		}
		r = rn(t, total);
		for (i = 0;; i++) {
			o = i < (int)NOPS0 ? &ops[i] : &ops_more[i - NOPS0];
			if (r < o->w[cur_phase])
				break;
			r -= o->w[cur_phase];
		}
		o->fn(t);
	}
	t->ktid = 0;
	atomic_store(&t->done, 1);
	reap(t, 1);
	while (t->nmp)
		unmap_range(t, t->mp[0].a, t->mp[0].len);
	return NULL;
}

static int thr_alloc(struct thr *t, int idx, uint64_t seed)
{
	int mfd;

	memset(t, 0, sizeof(*t));
	t->idx = idx;
	t->rng = seed ^ (0xa0761d6478bd642fULL * (uint64_t)(idx + 1));
	t->area = mmap(NULL, 6 * AREA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->area == MAP_FAILED)
		return -1;
	t->buf = t->area;
	t->aux = t->area + 2 * AREA;
	t->none = t->area + 4 * AREA;
	if (mprotect(t->area + AREA, AREA, PROT_NONE) ||
	    mprotect(t->area + 3 * AREA, AREA, PROT_NONE) ||
	    mprotect(t->none, 2 * AREA, PROT_NONE))
		return -1;
	mfd = memfd_create("fuzz-ro", MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, 2 * PG))
		return -1;
	t->ro_rw = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	t->ro = mmap(NULL, 2 * PG, PROT_READ, MAP_SHARED, mfd, 0);
	close(mfd);
	if (t->ro_rw == MAP_FAILED || t->ro == MAP_FAILED)
		return -1;
	t->fix = mmap(NULL, NFIX * FIXSLOT, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		      MAP_NORESERVE, -1, 0);
	if (t->fix == MAP_FAILED)
		return -1;
	t->memfd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	return 0;
}

static void thr_free(struct thr *t)
{
	munmap(t->area, 6 * AREA);
	munmap(t->ro_rw, 2 * PG);
	munmap(t->ro, 2 * PG);
	munmap(t->fix, NFIX * FIXSLOT);
	if (t->memfd >= 0)
		close(t->memfd);
}

/* ---- checks ---- */

static int keep_fd(int fd)
{
	int i;

	if (fd <= 2 || fd == ctl || fd == kmsg)
		return 1;
	for (i = 0; i < MAXTHR; i++)
		if (thr[i].area && fd == thr[i].memfd)
			return 1;
	return 0;
}

/* close whatever the phase left open: the pool, and fds lost in races */
static void close_all(void)
{
	int i, fd;

	for (i = 0; i < POOL; i++)
		atomic_store(&pool[i], 0);
	for (fd = 3; fd < 4096; fd++)
		if (!keep_fd(fd))
			close(fd);
}

/* unmap any mapping of our devices the bookkeeping missed: 0 if none */
static int unmap_strays(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long a, e;
	int n = 0;
	struct { unsigned long a, e; } s[64];
	int i;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && n < 64)
		if (strstr(line, SPINDLE_DEV_PREFIX) && sscanf(line, "%lx-%lx", &a, &e) == 2) {
			s[n].a = a;
			s[n].e = e;
			n++;
		}
	fclose(f);
	for (i = 0; i < n; i++)
		munmap((void *)s[i].a, s[i].e - s[i].a);
	return n;
}

static const char *const bad_patterns[] = {
	"BUG:", "kernel BUG at", "WARNING:", "Oops", "KASAN", "UBSAN", "KFENCE", "general protection",
	"refcount_t:", "list_add corruption", "list_del corruption", "cut here",
	"unreferenced object", "possible circular locking", "possible recursive locking",
	"blocked for more than", "rcu_sched self-detected stall", "detected stall",
	"Kernel panic", "DEBUG_LOCKS_WARN_ON", "scheduling while atomic",
	"sleeping function called from invalid context",
};

struct kscan {
	int bad;
	int rejected;		/* "configuration rejected" */
	int producer;		/* "the producer wrote a bad" */
	int lines;
	char first[6][240];
};

static struct kscan kall;

/* the kernel log since the last call */
static void kmsg_scan(struct kscan *ks)
{
	char rec_[8192];
	ssize_t n;
	unsigned int i;

	memset(ks, 0, sizeof(*ks));
	if (kmsg < 0)
		return;
	for (;;) {
		char *msg, *nl;

		n = read(kmsg, rec_, sizeof(rec_) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten: go on */
		if (n <= 0)
			break;
		rec_[n] = 0;
		msg = strchr(rec_, ';');
		msg = msg ? msg + 1 : rec_;
		nl = strchr(msg, '\n');
		if (nl)
			*nl = 0;
		ks->lines++;
		if (strstr(msg, "configuration rejected"))
			ks->rejected++;
		if (strstr(msg, "producer wrote a bad"))
			ks->producer++;
		for (i = 0; i < sizeof(bad_patterns) / sizeof(bad_patterns[0]); i++)
			if (strstr(msg, bad_patterns[i])) {
				if (ks->bad < 6)
					snprintf(ks->first[ks->bad], sizeof(ks->first[0]), "%.200s", msg);
				if (kall.bad < 6)
					snprintf(kall.first[kall.bad], sizeof(kall.first[0]), "%.200s", msg);
				ks->bad++;
				kall.bad++;
				break;
			}
	}
	kall.rejected += ks->rejected;
	kall.producer += ks->producer;
	kall.lines += ks->lines;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void print_hist(const char *what, long calls, const unsigned long *h)
{
	char line[2048];
	int n, e, first = 1;

	n = snprintf(line, sizeof(line), "%s: %ld, by errno:", what, calls);
	for (e = 0; e < MAXERR && n < (int)sizeof(line) - 40; e++) {
		const char *name;

		if (!h[e])
			continue;
		name = e == 0 ? "OK" : e == MAXERR - 1 ? "other" : strerrorname_np(e);
		n += snprintf(line + n, sizeof(line) - n, "%s %s %lu", first ? "" : ",",
			      name ? name : "?", h[e]);
		first = 0;
	}
	kt_diag("%s", line);
}

/* groups the control fuzzing left up: take them down */
static int down_extras(void)
{
	uint32_t ids[64];
	int n = 0, i;
	struct spindle_ctl_group_info gi;

	for (i = 0; i < 64; i++) {
		memset(&gi, 0, sizeof(gi));
		gi.size = sizeof(gi);
		gi.index = i;
		if (ioctl(ctl, SPINDLE_CTL_GROUP_INFO, &gi))
			break;
		if (gi.group_id != FUZZ_GID && gi.group_id != WAIT_GID)
			ids[n++] = gi.group_id;
	}
	for (i = 0; i < n; i++)
		spindle_down(ctl, ids[i], 100);
	atomic_store(&live_mask, 0);
	for (i = 0; i < 8; i++)
		atomic_store(&live_other[i], 0);
	return n;
}

static uint64_t hc_serial;

/*
 * On a fresh file of @d: attach, drain what waited for a consumer, send one
 * message (SEND, or the producer page) and receive it with the right bytes.
 */
static int health_one(const struct dev *d, int producer, char *why, size_t wl)
{
	struct spindle_handle h;
	struct spindle_recv rv;
	struct spindle_send s;
	uint8_t pat[SPINDLE_MAX_MSG > 8192 ? 8192 : SPINDLE_MAX_MSG];
	uint32_t len, i, skipped = 0;
	uint64_t seed = opt_seed ^ (++hc_serial * 0x9e3779b97f4a7c15ULL);
	double t0;
	int r, found = 0, k;
	void *slot;

	r = spindle_open_path(&h, d->path, O_RDWR);
	if (r) {
		snprintf(why, wl, "%s: open/info/map: %s", d->path, strerror(-r));
		return -1;
	}
	memset(&rv, 0, sizeof(rv));
	rv.size = sizeof(rv);
	if (ioctl(h.fd, SPINDLE_IOC_RECV, &rv)) {
		snprintf(why, wl, "%s: RECV max 0: %s", d->path, strerror(errno));
		goto fail;
	}
	for (k = 0; k < 64; k++) {		/* what waited for a consumer */
		r = spindle_recv(&h, 20);
		if (r < 0)
			break;
		skipped += r;
	}
	len = 1 + (uint32_t)(seed % (d->info.max_msg < sizeof(pat) ? d->info.max_msg : sizeof(pat)));
	for (i = 0; i < len; i++)
		pat[i] = (uint8_t)((seed >> (8 * (i % 8))) + i * 13);
	if (producer) {
		r = spindle_use_producer(&h);
		if (r) {
			snprintf(why, wl, "%s: map the producer page: %s", d->path, strerror(-r));
			goto fail;
		}
		r = spindle_get_slot(&h, 2000, &slot);
		if (r) {
			snprintf(why, wl, "%s: producer slot: %s (head %llu limit %llu flags %#x)",
				 d->path, strerror(-r), (unsigned long long)h.prod->head,
				 (unsigned long long)h.prod->limit, h.prod->flags);
			goto fail;
		}
		memcpy(slot, pat, len);
		r = spindle_commit(&h, len);
		if (!r)
			r = spindle_flush(&h);
		if (r) {
			snprintf(why, wl, "%s: producer commit: %s", d->path, strerror(-r));
			goto fail;
		}
	} else {
		memset(&s, 0, sizeof(s));
		s.size = sizeof(s);
		s.reserve = 1;
		s.timeout_ms = 2000;
		if (ioctl(h.fd, SPINDLE_IOC_SEND, &s) || s.reserved_count != 1) {
			snprintf(why, wl, "%s: reserve: %s (got %u, pending %u)", d->path,
				 strerror(errno), s.reserved_count, s.pending);
			goto fail;
		}
		slot = (uint8_t *)h.ring[h.info.my_rank] + (s.first % h.info.window) * h.info.slot_size;
		memcpy(slot, pat, len);
		memset(&s, 0, sizeof(s));
		s.size = sizeof(s);
		s.count = 1;
		s.lens = (uintptr_t)&len;
		if (ioctl(h.fd, SPINDLE_IOC_SEND, &s)) {
			snprintf(why, wl, "%s: mark: %s", d->path, strerror(errno));
			goto fail;
		}
	}
	t0 = now_s();
	while (!found && now_s() - t0 < 3) {
		r = spindle_recv(&h, 500);
		if (r < 0 && r != -ETIMEDOUT && r != -EAGAIN) {
			snprintf(why, wl, "%s: RECV: %s", d->path, strerror(-r));
			goto fail;
		}
		for (k = 0; k < r; k++) {
			const struct spindle_desc *x = &h.descs[k];

			if (DESC_VIEW && x->flags & DESC_VIEW)
				continue;	/* a view record */
			if (x->rank >= h.info.nsenders ||
			    x->offset + x->len > h.rings[x->rank].mmap_size) {
				snprintf(why, wl, "%s: descriptor out of its ring: rank %u offset %llu len %u",
					 d->path, x->rank, (unsigned long long)x->offset, x->len);
				goto fail;
			}
			if (x->len == len && !memcmp(spindle_msg_data(&h, x), pat, len) &&
			    x->rank == (uint32_t)h.info.my_rank)
				found = 1;
			else
				skipped++;
		}
	}
	if (!found) {
		snprintf(why, wl, "%s: the %s message of %u bytes never came (%u others)", d->path,
			 producer ? "producer page's" : "SEND", len, skipped);
		goto fail;
	}
	spindle_close(&h);
	return 0;
fail:
	spindle_close(&h);
	return -1;
}

/* every slot back, no consumer left, nothing in flight (up to 3 s) */
static int health_slots(char *why, size_t wl)
{
	struct spindle_group_status st;
	double t0 = now_s();
	uint32_t s;
	int ok = 0;

	while (!ok && now_s() - t0 < 3) {
		if (spindle_group_info(ctl, FUZZ_GID, 0, &st)) {
			snprintf(why, wl, "GROUP_INFO of the fuzzed group: %s", strerror(errno));
			return -1;
		}
		ok = st.info.state == SPINDLE_GROUP_ACTIVE;
		for (s = 0; s < st.info.nsubgroups; s++) {
			const struct spindle_subgroup_info *x = &st.subgroups[s];

			if (x->free_slots != x->window || x->consumers || x->in_flight)
				ok = 0;
		}
		if (!ok)
			usleep(20000);
	}
	if (ok)
		return 0;
	snprintf(why, wl, "group state %u", st.info.state);
	for (s = 0; s < st.info.nsubgroups; s++) {
		const struct spindle_subgroup_info *x = &st.subgroups[s];
		size_t n = strlen(why);

		snprintf(why + n, wl - n, "; subgroup %u: free %u/%u consumers %u in flight %u",
			 x->id, x->free_slots, x->window, x->consumers, x->in_flight);
	}
	return -1;
}

static int health(struct kt *_t)
{
	char why[512];
	int i, p, bad = 0;

	for (i = 1; i < ndevs; i++) {
		if (devs[i].gid != FUZZ_GID)
			continue;
		for (p = 0; p < 2; p++)
			if (health_one(&devs[i], p, why, sizeof(why))) {
				kt_diag("still works? %s", why);
				bad++;
			}
	}
	if (health_slots(why, sizeof(why))) {
		kt_diag("slots given back? %s", why);
		bad++;
	}
	EXPECT_EQ(bad, 0);
	return bad;
}

/* the kernel stack of thread @t, as diagnostics */
static void dump_kstack(struct thr *t)
{
	char path[64], line[256];
	FILE *f;

	if (!t->ktid)
		return;
	snprintf(path, sizeof(path), "/proc/self/task/%d/stack", t->ktid);
	f = fopen(path, "r");
	if (!f)
		return;
	kt_diag("thread %d (tid %d) in the kernel:", t->idx, t->ktid);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		kt_diag("  %s", line);
	}
	fclose(f);
}

/*
 * Wait for the phase's threads.  No progress for 20 s is a stall: a wait
 * that does not end (every timeout the fuzzer gives is short).  Then say
 * where each thread is, and interrupt them (SIGUSR1) until they finish.
 */
static int watch_threads(struct kt *_t, int n)
{
	long last = -1, c;
	double since = now_s();
	int i, alldone, stalled = 0;

	for (;;) {
		for (i = 0, alldone = 1; i < n; i++)
			alldone &= atomic_load(&thr[i].done);
		if (alldone)
			return stalled;
		usleep(100000);
		c = atomic_load(&phase_calls);
		if (c != last) {
			last = c;
			since = now_s();
			continue;
		}
		if (now_s() - since < 20)
			continue;
		if (!stalled) {
			kt_diag("STALL: no system call returned for 20 s (%ld made)", c);
			for (i = 0; i < n; i++)
				if (!atomic_load(&thr[i].done)) {
					dump_kstack(&thr[i]);
					dump_trace(&thr[i]);
				}
			EXPECT_TRUE(!"stall");
			stalled = 1;
		}
		for (i = 0; i < n; i++)
			if (thr[i].ktid)
				syscall(SYS_tgkill, getpid(), thr[i].ktid, SIGUSR1);
		if (now_s() - since > 60) {
			kt_diag("the stall does not end: giving up");
			printf("not ok %d %s\n", 0, _t->name);
			fflush(stdout);
			_exit(1);
		}
		usleep(500000);
	}
}

static void run_phase(struct kt *_t, int ph)
{
	unsigned long h0[MAXERR], h1[MAXERR];
	unsigned long f0 = st_faults, k0 = st_forks, a0 = st_anom, b0 = st_kid_bad, u0 = st_extra_up;
	struct kscan ks;
	double t0, dt;
	int i, n, strays, extras, stall;
	char what[160];

	cur_phase = ph;
	phase_budget = opt_iters * phase_share[ph] / 100;
	if (phase_budget < 1)
		phase_budget = 1;
	atomic_store(&phase_calls, 0);
	for (i = 0; i < MAXERR; i++)
		h0[i] = atomic_load(&hist[i]);
	nnotes = 0;
	/* a pool to start with */
	for (i = 0; i < POOL; i++) {
		struct thr *t = &thr[0];
		int dev = ph == PH_CTL && i < POOL / 2 ? 0 : sg_dev(t);
		int of = i % 3 == 2 ? O_RDONLY : O_RDWR;
		int fd = open(devs[dev].path, of | O_CLOEXEC);

		if (fd >= 0)
			atomic_store(&pool[i], pack(fd, dev, of));
	}
	if (ph == PH_CHURN) {	/* nothing yet: a path that does not exist */
		for (i = 0; i < NCHURN; i++) {
			devs[nstatic + i] = devs[1];
			snprintf(devs[nstatic + i].path, sizeof(devs[0].path), "%s%u",
				 SPINDLE_DEV_PREFIX, 200 + i);
		}
		ndevs = nstatic + NCHURN;
	}
	t0 = now_s();
	n = opt_threads;
	pthread_barrier_init(&start_line, NULL, n);
	for (i = 0; i < n; i++)
		atomic_store(&thr[i].done, 0);
	for (i = 0; i < n; i++)
		if (pthread_create(&thr[i].tid, NULL, thread_main, &thr[i])) {
			perror("fuzz: pthread_create");
			exit(1);
		}
	stall = watch_threads(_t, n);
	for (i = 0; i < n; i++)
		pthread_join(thr[i].tid, NULL);
	pthread_barrier_destroy(&start_line);
	dt = now_s() - t0;
	ndevs = nstatic;
	close_all();
	strays = unmap_strays();
	extras = down_extras();
	for (i = 0; i < MAXERR; i++)
		h1[i] = atomic_load(&hist[i]) - h0[i];
	snprintf(what, sizeof(what), "%s: %d threads, %.2f s, calls", phase_name[ph], n, dt);
	print_hist(what, atomic_load(&phase_calls), h1);
	kt_diag("%s: %lu faults caught, %lu forks, %lu groups brought up (%d left up), %lu producer garbage writes, %lu signals",
		phase_name[ph], st_faults - f0, st_forks - k0, st_extra_up - u0, extras,
		(unsigned long)st_prod_garbage, (unsigned long)st_signals);
	if (ph == PH_CHURN)
		kt_diag("%s: churn groups brought up %lu times, down %lu times", phase_name[ph],
			(unsigned long)st_churn_up, (unsigned long)st_churn_down);
	if (strays)
		kt_diag("%s: %d mappings the fuzzer lost track of (unmapped now)", phase_name[ph], strays);
	health(_t);
	kmsg_scan(&ks);
	kt_diag("%s: kernel log: %d lines, %d configurations rejected, %d bad producers",
		phase_name[ph], ks.lines, ks.rejected, ks.producer);
	for (i = 0; i < ks.bad && i < 6; i++)
		kt_diag("kernel: %s", ks.first[i]);
	EXPECT_EQ(ks.bad, 0);
	if (st_anom != a0) {
		for (i = 0; i < nnotes; i++)
			kt_diag("anomaly: %s", notes[i]);
		EXPECT_EQ(st_anom - a0, 0);
	}
	EXPECT_EQ(st_kid_bad - b0, 0);
	if (stall)
		_t->failed = 1;
	if (_t->failed) {
		kt_diag("replay: --seed %llu --iterations %ld --threads %d %s",
			(unsigned long long)opt_seed, opt_iters, opt_threads, phase_name[ph]);
		for (i = 0; i < n; i++)
			dump_trace(&thr[i]);
	}
}

static int have_ctl;	/* the module is there: a group that does not come up fails */

#define NEED_UP()							\
	do {								\
		if (!up_ok && have_ctl) {				\
			kt_diag("setup: %s", up_err);			\
			_t->failed = 1;					\
			return;						\
		}							\
		if (!up_ok)						\
			SKIP("%.100s", up_err);				\
	} while (0)

TEST(fuzz_ctl)
{
	NEED_UP();
	run_phase(_t, PH_CTL);
}

TEST(fuzz_subgroup_ioctls)
{
	NEED_UP();
	run_phase(_t, PH_SG);
}

TEST(fuzz_mmap)
{
	NEED_UP();
	run_phase(_t, PH_MMAP);
}

TEST(fuzz_producer_page)
{
	NEED_UP();
	run_phase(_t, PH_PROD);
}

TEST(fuzz_fd_races)
{
	NEED_UP();
	run_phase(_t, PH_MIX);
}

TEST(fuzz_group_churn)
{
	NEED_UP();
	run_phase(_t, PH_CHURN);
}

static int vmalloc_spindle(void);
static int vm_base = -1, ref_base = -1, vm_up = -1;

TEST(still_works)
{
	struct spindle_group_status st;

	NEED_UP();
	vm_up = vmalloc_spindle();
	kt_diag("spindle vmalloc areas while the groups are up: %d", vm_up);
	ASSERT_EQ(spindle_group_info(ctl, FUZZ_GID, 0, &st), 0);
	EXPECT_EQ(st.info.state, SPINDLE_GROUP_ACTIVE);
	EXPECT_EQ(st.info.nsubgroups, 3);
	if (up_wait_ok) {
		ASSERT_EQ(spindle_group_info(ctl, WAIT_GID, 0, &st), 0);
		EXPECT_EQ(st.info.state, SPINDLE_GROUP_CONNECTING);
	}
	health(_t);
}

static int vmalloc_spindle(void)
{
	FILE *f = fopen("/proc/vmallocinfo", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[spindle]"))
			n++;
	fclose(f);
	return n;
}

static int module_refcnt(void)
{
	FILE *f = fopen("/sys/module/spindle/refcnt", "r");
	int n = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}


TEST(group_down)
{
	struct spindle_group_status st;
	int fd;

	NEED_UP();
	/* a file and a mapping that outlive the group */
	fd = open(devs[1].path, O_RDWR | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(spindle_down(ctl, FUZZ_GID, 1000), 0);
	if (up_wait_ok)
		EXPECT_EQ(spindle_down(ctl, WAIT_GID, 0), 0);
	up_ok = 0;
	EXPECT_EQ(spindle_group_info(ctl, FUZZ_GID, 0, &st), -ENOENT);
	{
		struct spindle_recv r = { .size = sizeof(r), .max = 1, .timeout_ms = 10 };
		struct spindle_send s = { .size = sizeof(s), .reserve = 1 };
		struct spindle_desc dd;

		r.descs = (uintptr_t)&dd;
		EXPECT_ERRNO(ioctl(fd, SPINDLE_IOC_RECV, &r), ENOTCONN);
		EXPECT_ERRNO(ioctl(fd, SPINDLE_IOC_SEND, &s), ENOTCONN);
	}
	close(fd);
	fd = open(devs[1].path, O_RDWR | O_CLOEXEC);
	EXPECT_LT(fd, 0);
	if (fd >= 0)
		close(fd);
	up_ok = 1;	/* the later tests still run */
}

TEST(no_leaks)
{
	double t0 = now_s();
	int vm = -1, ref = -1;

	if (vm_base < 0 || ref_base < 0)
		SKIP("no /proc/vmallocinfo or /sys/module/spindle/refcnt");
	while (now_s() - t0 < 3) {
		vm = vmalloc_spindle();
		ref = module_refcnt();
		if (vm <= vm_base && ref <= ref_base)
			break;
		usleep(50000);
	}
	kt_diag("spindle vmalloc areas %d (before %d), module references %d (before %d)",
		vm, vm_base, ref, ref_base);
	EXPECT_LE(vm, vm_base);
	EXPECT_LE(ref, ref_base);
}

static int total_printed;

static void print_total(void)
{
	unsigned long h[MAXERR];
	long calls = 0;
	int i;

	for (i = 0; i < MAXERR; i++) {
		h[i] = atomic_load(&hist[i]);
		calls += h[i];
	}
	print_hist("calls", calls, h);
	kt_diag("faults caught: %lu, forks: %lu, anomalies: %lu, groups brought up by fuzzing: %lu",
		(unsigned long)st_faults, (unsigned long)st_forks, (unsigned long)st_anom,
		(unsigned long)st_extra_up);
	kt_diag("SEND marked %lu reservations ready, RECV returned %lu descriptors",
		(unsigned long)st_marked, (unsigned long)st_descs);
	total_printed = 1;
}

TEST(kernel_log_clean)
{
	struct kscan ks;
	int i;

	print_total();
	if (!have_ctl)
		SKIP("no module");
	if (kmsg < 0)
		SKIP("cannot read /dev/kmsg");
	kmsg_scan(&ks);
	kt_diag("kernel log since start: %d lines, %d configurations rejected, %d bad producers",
		kall.lines, kall.rejected, kall.producer);
	for (i = 0; i < kall.bad && i < 6; i++)
		kt_diag("kernel: %s", kall.first[i]);
	EXPECT_EQ(kall.bad, 0);
}

/* ---- setup ---- */

static int find_addr(void)
{
	const char *addrs = getenv("SPINDLE_ADDRS"), *node = getenv("SPINDLE_NODE");
	struct ifaddrs *ifa, *i;

	if (opt_addr) {
		snprintf(self_addr, sizeof(self_addr), "%s", opt_addr);
		return 0;
	}
	if (addrs) {
		int k = node ? atoi(node) : 0;
		const char *p = addrs;

		while (k-- > 0 && p && (p = strchr(p, ' ')))
			p++;
		if (p) {
			snprintf(self_addr, sizeof(self_addr), "%.*s", (int)strcspn(p, " "), p);
			return 0;
		}
	}
	if (getifaddrs(&ifa))
		return -1;
	for (i = ifa; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    !(i->ifa_flags & IFF_LOOPBACK) && (i->ifa_flags & IFF_UP)) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr,
				  self_addr, sizeof(self_addr));
			break;
		}
	freeifaddrs(ifa);
	return self_addr[0] ? 0 : -1;
}

static int add_dev(uint32_t gid, uint32_t sgid)
{
	struct dev *d = &devs[ndevs];
	int fd;

	if (spindle_find_device(gid, sgid, d->path, sizeof(d->path)))
		return -1;
	d->gid = gid;
	d->sgid = sgid;
	d->minor = (unsigned int)atoi(d->path + strlen(SPINDLE_DEV_PREFIX));
	fd = open(d->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	d->info.size = sizeof(d->info);
	d->info.nsenders = SPINDLE_MAX_MEMBERS;
	d->info.rings = (uintptr_t)d->rings;
	if (ioctl(fd, SPINDLE_IOC_INFO, &d->info)) {
		close(fd);
		return -1;
	}
	close(fd);
	if (d->info.window * d->info.nsenders > logmax)
		logmax = d->info.window * d->info.nsenders;
	ndevs++;
	return 0;
}

static int setup(void)
{
	struct spindle_cfg c;
	uint32_t s;

	if (find_addr()) {
		snprintf(up_err, sizeof(up_err), "no address for this node (SPINDLE_ADDRS or --addr)");
		return -1;
	}
	if (spindle_parse_addr(self_addr, FUZZ_PORT, &self_member)) {
		snprintf(up_err, sizeof(up_err), "bad address %s", self_addr);
		return -1;
	}
	ctl = spindle_ctl_open();
	if (ctl < 0) {
		snprintf(up_err, sizeof(up_err), "%s: %s (spindle.ko loaded? root?)",
			 SPINDLE_CTL_DEVICE, strerror(-ctl));
		return -1;
	}
	have_ctl = 1;
	vm_base = vmalloc_spindle();
	ref_base = module_refcnt();
	snprintf(devs[0].path, sizeof(devs[0].path), "%s", SPINDLE_CTL_DEVICE);
	devs[0].is_ctl = 1;
	devs[0].info.window = 4;
	devs[0].info.max_msg = 64;
	devs[0].info.nsenders = 1;
	ndevs = 1;

	/* the fuzzed group: this node alone, three subgroups */
	memset(&c, 0, sizeof(c));
	c.group_id = FUZZ_GID;
	c.self_id = 0;
	c.nmembers = 1;
	c.members[0] = self_member;
	c.members[0].id = 0;
	c.nsubgroups = 3;
	c.subgroups[0] = (struct spindle_cfg_subgroup){ .id = 0, .window = 8, .max_msg = 256,
		.mode = SPINDLE_MODE_ORDERED, .nmembers = 1, .nsenders = 1 };
	c.subgroups[1] = (struct spindle_cfg_subgroup){ .id = 7, .window = 4, .max_msg = 5000,
		.mode = SPINDLE_MODE_UNORDERED, .nmembers = 1, .nsenders = 1 };
	c.subgroups[2] = (struct spindle_cfg_subgroup){ .id = 3, .window = 1, .max_msg = 1,
		.mode = SPINDLE_MODE_ORDERED, .nmembers = 1, .nsenders = 1 };
	if (spindle_up(ctl, &c, NULL, up_err, sizeof(up_err)))
		return -1;
	for (s = 0; s < 3; s++)
		if (add_dev(FUZZ_GID, c.subgroups[s].id)) {
			snprintf(up_err, sizeof(up_err), "no device for subgroup %u", c.subgroups[s].id);
			return -1;
		}

	/* a group that stays connecting: not a sender; another's ring read-only */
	memset(&c, 0, sizeof(c));
	c.group_id = WAIT_GID;
	c.self_id = 0;
	c.nmembers = 2;
	c.members[0] = self_member;
	c.members[0].port = WAIT_PORT;
	c.members[0].id = 0;
	spindle_parse_addr(NOBODY_ADDR, WAIT_PORT, &c.members[1]);
	c.members[1].id = 1;
	c.nsubgroups = 2;
	c.subgroups[0] = (struct spindle_cfg_subgroup){ .id = 0, .window = 4, .max_msg = 128,
		.mode = SPINDLE_MODE_ORDERED, .nmembers = 2, .nsenders = 1,
		.members = { 0, 1 }, .senders = { 1 } };
	c.subgroups[1] = (struct spindle_cfg_subgroup){ .id = 1, .window = 4, .max_msg = 128,
		.mode = SPINDLE_MODE_UNORDERED, .nmembers = 2, .nsenders = 2,
		.members = { 0, 1 }, .senders = { 1, 0 } };
	if (spindle_up(ctl, &c, NULL, up_err, sizeof(up_err)) == 0) {
		up_wait_ok = 1;
		add_dev(WAIT_GID, 0);
		add_dev(WAIT_GID, 1);
	} else {
		kt_diag("the connecting group did not come up: %s", up_err);
	}
	nstatic = ndevs;
	if (access("/sys/kernel/debug/spindle", F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	up_ok = 1;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: fuzz [--seed N] [--iterations N] [--threads N] [--addr A] [--trace] [TEST...]\n");
}

int main(int argc, char **argv)
{
	char **names = calloc(argc + 1, sizeof(*names));
	struct sigaction sa;
	int i, n = 1, rc;

	names[0] = argv[0];
	opt_seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
	opt_seed %= 1000000007ULL;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--seed") && i + 1 < argc)
			opt_seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(a, "--iterations") && i + 1 < argc)
			opt_iters = strtol(argv[++i], NULL, 0);
		else if (!strcmp(a, "--threads") && i + 1 < argc)
			opt_threads = atoi(argv[++i]);
		else if (!strcmp(a, "--addr") && i + 1 < argc)
			opt_addr = argv[++i];
		else if (!strcmp(a, "--trace"))
			opt_trace = 1;
		else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (a[0] == '-') {
			usage(stderr);
			return 2;
		} else {
			names[n++] = argv[i];
		}
	}
	if (opt_threads < 1)
		opt_threads = 1;
	if (opt_threads > MAXTHR)
		opt_threads = MAXTHR;
	if (opt_iters < 1)
		opt_iters = 1;
	printf("# seed %llu\n", (unsigned long long)opt_seed);
	printf("# iterations %ld, threads %d\n", opt_iters, opt_threads);
	fflush(stdout);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;	/* no SA_RESTART: waits end in EINTR */
	sigaction(SIGUSR1, &sa, NULL);

	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg >= 0)
		lseek(kmsg, 0, SEEK_END);
	for (i = 0; i < opt_threads; i++)
		if (thr_alloc(&thr[i], i, opt_seed)) {
			perror("fuzz: per-thread memory");
			return 1;
		}
	setup();
	rc = ktap_main(n, names);
	if (!total_printed)
		print_total();
	if (ctl >= 0) {
		close_all();
		spindle_down(ctl, FUZZ_GID, 1000);
		spindle_down(ctl, WAIT_GID, 0);
		down_extras();
	}
	for (i = 0; i < opt_threads; i++)
		thr_free(&thr[i]);
	free(names);
	return !rc && !have_ctl ? 4 : rc;	/* 4: kselftest's skip */
}
