// SPDX-License-Identifier: GPL-2.0
/*
 * The tracepoints of spindle.ko, defined here once: trace.h declares them.
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
