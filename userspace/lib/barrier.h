/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Named memory barriers for the page libspindle shares with the kernel
 * (the producer page, struct spindle_producer), as liburing's barrier.h
 * names io_uring's.  Each use says which kernel barrier it pairs with:
 *
 *   spindle_smp_store_release(p, v)  publish v after every store before it
 *				(the tail, after the slot and its length);
 *   spindle_smp_load_acquire(p)	read *p before every load after it
 *				(the limit, before the slots it allows);
 *   spindle_read_once(p)		one untorn read, no ordering (flags);
 *   spindle_smp_mb()		full barrier: stores before, loads after.
 */
#ifndef LIBSPINDLE_BARRIER_H
#define LIBSPINDLE_BARRIER_H

#define spindle_smp_store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define spindle_smp_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define spindle_read_once(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define spindle_smp_mb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)

#endif /* LIBSPINDLE_BARRIER_H */
