/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* libspindle's own helpers, shared by its files and not exported. */
#ifndef LIBSPINDLE_LIB_H
#define LIBSPINDLE_LIB_H

#include <stddef.h>
#include <stdint.h>

#define LIBSPINDLE_HIDDEN	__attribute__((visibility("hidden")))

/* Words into @err (if any room); returns -EINVAL. */
LIBSPINDLE_HIDDEN __attribute__((format(printf, 3, 4)))
int libspindle_fail(char *err, size_t errlen, const char *fmt, ...);

/* A decimal or 0x number that fits in 32 bits: 0, else -1. */
LIBSPINDLE_HIDDEN int libspindle_parse_u32(const char *s, uint32_t *out);

#endif /* LIBSPINDLE_LIB_H */
