// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch's trace events, defined here once (their declarations and
 * what they record: trace.h).
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
