/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The protocol core (kmod/proto/) is plain C that builds both in the kernel
 * and in userspace, where its unit tests run under ASan and UBSan.  This
 * header is the only place that knows which side it is on; the userspace
 * side lives in selftests/unit/kcompat.h.
 */
#ifndef SPINDLE_PROTO_COMPAT_H
#define SPINDLE_PROTO_COMPAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/math64.h>
#include <linux/compiler.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <asm/barrier.h>
#include <asm/byteorder.h>

#define sp_div_u64(n, d)	div_u64((n), (d))
#define sp_mod_u64(n, d)	({ u32 __rem; div_u64_rem((n), (d), &__rem); __rem; })
#define sp_zalloc(size)		kvzalloc((size), GFP_KERNEL)
#define sp_free(p)		kvfree(p)

#else
/* userspace (unit tests): the same names over libc, kept out of kmod/ */
#include "kcompat.h"
#endif

#endif /* SPINDLE_PROTO_COMPAT_H */
