/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by spindle-bw and spindle-lat. */
#ifndef SPINDLE_BENCH_COMMON_H
#define SPINDLE_BENCH_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include "../lib/libspindle.h"

enum bench_senders { SENDERS_ALL, SENDERS_HALF, SENDERS_ONE };

struct bench_opts {
	const char *config;		/* --config FILE, else from the environment */
	uint32_t group_id;
	uint32_t subgroup_id;
	uint16_t port;
	enum bench_senders senders;
	uint64_t messages;		/* per sender */
	uint32_t size;
	uint32_t window;
	uint32_t mode;
	uint32_t timeout_s;
	uint32_t batch;			/* commits per mark; 0: library default */
	int keep_up;			/* leave the group up at the end */
	int baseline;			/* form the group with SPINDLE_GROUP_BASELINE */
	uint32_t delay_us;		/* busy-wait after each send... */
	uint32_t sleep_us;		/* ...or sleep, at the delayed senders */
	enum bench_senders delayed;	/* which senders: the last, the upper half, all */
	const char *log;
};

struct bench {
	struct bench_opts o;
	struct spindle_cfg cfg;
	int ctl;
	int brought_up;			/* we ran SPINDLE_CTL_UP */
	uint32_t self_id;
	struct spindle_handle h;
};

void bench_defaults(struct bench_opts *o);
/* Parse one common option at argv[*i]; 1 if taken, 0 if not ours, -1 bad. */
int bench_option(struct bench_opts *o, int argc, char **argv, int *i);
const char *bench_common_usage(void);
/* Form or find the group, open the subgroup's device. Exits on failure. */
void bench_setup(struct bench *b, const char *tool);
void bench_teardown(struct bench *b);
double bench_now(void);
/*
 * The kernel's counters of our subgroup (writes posted, messages
 * delivered, ...) and the group thread's busy time: zeros if unknown.
 */
void bench_counters(struct bench *b, struct spindle_subgroup_info *out,
		    uint64_t *busy_ns);

/* The payload of a sender's k-th data message: verifiable at every node. */
static inline uint8_t bench_byte(uint32_t rank, uint64_t k, uint32_t i)
{
	return (uint8_t)(rank * 131u + (uint32_t)k * 7u + i * 13u + (uint32_t)(k >> 32));
}

void bench_fill(void *p, uint32_t len, uint32_t rank, uint64_t k);
/* Is sender @rank of @nsenders one of the --delayed ones? */
int bench_is_delayed(const struct bench_opts *o, int32_t rank, uint32_t nsenders);
void bench_pause(const struct bench_opts *o);
int bench_check(const void *p, uint32_t len, uint32_t rank, uint64_t k);

#endif
