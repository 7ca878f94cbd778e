// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* libspindle: CRC-32C, for applications' end-to-end checks of payloads. */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "libspindle.h"

/* CRC-32C (Castagnoli), as in iSCSI and ext4: reflected 0x82F63B78. */
static uint32_t crc32c_table[256];
static pthread_once_t crc32c_once = PTHREAD_ONCE_INIT;

/* Filled once, before any thread reads it (pthread_once orders both). */
static void crc32c_fill(void)
{
	uint32_t i, j;

	for (i = 0; i < 256; i++) {
		uint32_t c = i;

		for (j = 0; j < 8; j++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78U : c >> 1;
		crc32c_table[i] = c;
	}
}

uint32_t spindle_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	pthread_once(&crc32c_once, crc32c_fill);
	crc = ~crc;
	while (len--)
		crc = crc32c_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
