/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel names over libc, so that kmod/proto/ builds in userspace for its
 * unit tests (included by kmod/proto/compat.h when __KERNEL__ is not set).
 */
#ifndef SPINDLE_KCOMPAT_H
#define SPINDLE_KCOMPAT_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <string.h>
#include <errno.h>
#include <stdlib.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the userspace build of the protocol core assumes a little-endian host"
#endif

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#define U64_MAX UINT64_MAX

#define READ_ONCE(x)		(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))
#define smp_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define smp_store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define smp_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define smp_wmb()		__atomic_thread_fence(__ATOMIC_RELEASE)
#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)
#define fallthrough		__attribute__((__fallthrough__))
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define ALIGN(x, a)		(((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define min_t(t, a, b)		((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b)		((t)(a) > (t)(b) ? (t)(a) : (t)(b))

/* __le16/32/64 as the uapi header (config.h includes it) has them */
#include <linux/types.h>
#define cpu_to_le16(x)		((__le16)(x))
#define cpu_to_le32(x)		((__le32)(x))
#define cpu_to_le64(x)		((__le64)(x))
#define le16_to_cpu(x)		((u16)(x))
#define le32_to_cpu(x)		((u32)(x))
#define le64_to_cpu(x)		((u64)(x))

#define sp_div_u64(n, d)	((u64)(n) / (u32)(d))
#define sp_mod_u64(n, d)	((u32)((u64)(n) % (u32)(d)))
#define sp_zalloc(size)		calloc(1, (size))
#define sp_free(p)		free(p)

#endif /* SPINDLE_KCOMPAT_H */
