/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dio_batch's trace events, shaped like the block layer's own
 * (block_rq_issue, block_rq_complete): the device as "MAJOR,MINOR", the
 * opcode, the first sector and the length, so that perf trace, trace-cmd
 * and bpftrace read them as they read those.  Under
 * /sys/kernel/tracing/events/dio_batch/:
 *
 *   dio_batch_submit    a request's bios were submitted
 *   dio_batch_complete  a request completed: its result and latency
 *   dio_batch_pi_error  a request failed its PI check: where, which tag,
 *                       expected and actual, and who found it
 *
 * Disabled, each costs the static branch of its trace_*() call; the
 * submission time the latency needs is read only while
 * dio_batch_complete is enabled.  Defined once, in trace.c.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dio_batch

#if !defined(_DIO_BATCH_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DIO_BATCH_TRACE_H

#include <linux/tracepoint.h>
#include "dio_batch.h"

#define dio_trace_op(op)						\
	__print_symbolic(op, { DIO_OP_READ, "R" }, { DIO_OP_WRITE, "W" },	\
			 { DIO_OP_FLUSH, "F" })

#define dio_trace_flags(flags)						\
	__print_flags(flags, "|", { DIO_REQ_FUA, "FUA" },		\
		      { DIO_REQ_IOVEC, "IOVEC" }, { DIO_REQ_PI, "PI" },	\
		      { DIO_REQ_FIXED, "FIXED" })

TRACE_EVENT(dio_batch_submit,
	TP_PROTO(const struct dio_kreq *kreq),
	TP_ARGS(kreq),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u8,	op)
		__field(u16,	flags)
		__field(u64,	sector)
		__field(u64,	bytes)
		__field(u64,	cookie)
	),
	TP_fast_assign(
		__entry->dev	= kreq->h->dev;
		__entry->op	= kreq->opcode;
		__entry->flags	= kreq->ureq.flags;
		__entry->sector	= kreq->ureq.offset >> SECTOR_SHIFT;
		__entry->bytes	= kreq->ureq.len;
		__entry->cookie	= kreq->ureq.cookie;
	),
	TP_printk("%d,%d %s %llu + %llu [%s] cookie 0x%llx",
		  MAJOR(__entry->dev), MINOR(__entry->dev),
		  dio_trace_op(__entry->op), __entry->sector,
		  __entry->bytes >> SECTOR_SHIFT,
		  dio_trace_flags(__entry->flags), __entry->cookie)
);

TRACE_EVENT(dio_batch_complete,
	TP_PROTO(const struct dio_kreq *kreq, u64 latency_ns),
	TP_ARGS(kreq, latency_ns),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u8,	op)
		__field(u64,	sector)
		__field(u64,	bytes)
		__field(s64,	result)
		__field(u64,	latency_ns)
		__field(u64,	cookie)
	),
	TP_fast_assign(
		__entry->dev		= kreq->h->dev;
		__entry->op		= kreq->opcode;
		__entry->sector		= kreq->ureq.offset >> SECTOR_SHIFT;
		__entry->bytes		= kreq->ureq.len;
		__entry->result		= kreq->out.result;
		__entry->latency_ns	= latency_ns;
		__entry->cookie		= kreq->ureq.cookie;
	),
	TP_printk("%d,%d %s %llu + %llu [%lld] %llu ns cookie 0x%llx",
		  MAJOR(__entry->dev), MINOR(__entry->dev),
		  dio_trace_op(__entry->op), __entry->sector,
		  __entry->bytes >> SECTOR_SHIFT, __entry->result,
		  __entry->latency_ns, __entry->cookie)
);

/* Only a PI failure: the condition is evaluated only while enabled. */
TRACE_EVENT_CONDITION(dio_batch_pi_error,
	TP_PROTO(const struct dio_kreq *kreq),
	TP_ARGS(kreq),
	TP_CONDITION(kreq->out.result == -EILSEQ && kreq->out.pi_err_source),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u8,	op)
		__field(u8,	tag)
		__field(u8,	source)
		__field(u64,	sector)
		__field(u64,	interval)
		__field(u64,	expected)
		__field(u64,	actual)
		__field(u64,	cookie)
	),
	TP_fast_assign(
		__entry->dev		= kreq->h->dev;
		__entry->op		= kreq->opcode;
		__entry->tag		= kreq->out.pi_err_tag;
		__entry->source		= kreq->out.pi_err_source;
		__entry->sector		= kreq->ureq.offset >> SECTOR_SHIFT;
		__entry->interval	= kreq->out.pi_err_interval;
		__entry->expected	= kreq->out.pi_err_expected;
		__entry->actual		= kreq->out.pi_err_actual;
		__entry->cookie		= kreq->ureq.cookie;
	),
	TP_printk("%d,%d %s %llu interval %lld %s expected 0x%llx actual 0x%llx found by %s cookie 0x%llx",
		  MAJOR(__entry->dev), MINOR(__entry->dev),
		  dio_trace_op(__entry->op), __entry->sector,
		  (s64)__entry->interval,
		  __print_symbolic(__entry->tag, { DIO_PI_TAG_NONE, "none" },
				   { DIO_PI_TAG_GUARD, "guard" },
				   { DIO_PI_TAG_APP, "app" },
				   { DIO_PI_TAG_REF, "ref" }),
		  __entry->expected, __entry->actual,
		  __print_symbolic(__entry->source, { DIO_PI_SRC_NONE, "none" },
				   { DIO_PI_SRC_USER, "user" },
				   { DIO_PI_SRC_MODULE, "module" },
				   { DIO_PI_SRC_DEVICE, "device" }),
		  __entry->cookie)
);

#endif /* _DIO_BATCH_TRACE_H */

/* This file is outside include/trace/events: define_trace.h finds it here. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
