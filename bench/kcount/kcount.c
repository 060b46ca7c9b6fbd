// SPDX-License-Identifier: GPL-2.0
/*
 * kcount: exact call counts of kernel functions by kprobes, for
 * bench/counts.sh.  syms=NAME[:BITS],...  BITS (32 or 64): also sum the
 * low BITS of the third argument (a copy's length).  comm=NAME: also
 * count the calls in task context of threads called NAME (io_bench).
 * /proc/kcount, a line per function: NAME HITS MISSED SUM OWN, or
 * NAME - - - ERRNO when it could not be probed.  Calls = HITS + MISSED (a
 * hit while another kprobe's handler runs on the CPU is not handled, only
 * counted as missed); OWN, of HITS, those in NAME's task context.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/string.h>

#define KC_MAX 96

static char *syms[KC_MAX];
static int nsyms;
module_param_array(syms, charp, &nsyms, 0444);
MODULE_PARM_DESC(syms, "functions: NAME[:BITS],...");
static char *comm = "io_bench";
module_param(comm, charp, 0444);
MODULE_PARM_DESC(comm, "OWN counts calls in task context of threads of this name");

struct kc {
	struct kprobe kp;
	char name[128];
	u64 mask;
	int err;
};

struct kc_cpu {
	u64 hits[KC_MAX];
	u64 sum[KC_MAX];
	u64 own[KC_MAX];
};

static struct kc kc[KC_MAX];
static DEFINE_PER_CPU(struct kc_cpu, kc_cpu);

static int kc_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct kc *c = container_of(p, struct kc, kp);
	unsigned int i = c - kc;

	this_cpu_inc(kc_cpu.hits[i]);
	if (in_task() && !strncmp(current->comm, comm, TASK_COMM_LEN))
		this_cpu_inc(kc_cpu.own[i]);
	if (c->mask)
		this_cpu_add(kc_cpu.sum[i], regs_get_kernel_argument(regs, 2) & c->mask);
	return 0;
}

static int kc_show(struct seq_file *m, void *v)
{
	int i, cpu;

	for (i = 0; i < nsyms; i++) {
		u64 hits = 0, sum = 0, own = 0;

		if (kc[i].err) {
			seq_printf(m, "%s - - - %d\n", kc[i].name, kc[i].err);
			continue;
		}
		for_each_possible_cpu(cpu) {
			hits += per_cpu(kc_cpu.hits[i], cpu);
			sum += per_cpu(kc_cpu.sum[i], cpu);
			own += per_cpu(kc_cpu.own[i], cpu);
		}
		seq_printf(m, "%s %llu %lu %llu %llu\n", kc[i].name, hits, kc[i].kp.nmissed, sum, own);
	}
	return 0;
}

static void kc_unregister(void)
{
	int i;

	for (i = 0; i < nsyms; i++)
		if (!kc[i].err)
			unregister_kprobe(&kc[i].kp);
}

static int __init kc_init(void)
{
	int i;

	for (i = 0; i < nsyms; i++) {
		struct kc *c = &kc[i];
		char *colon;
		unsigned int bits = 0;

		strscpy(c->name, syms[i], sizeof(c->name));
		colon = strchr(c->name, ':');
		if (colon) {
			*colon = 0;
			if (kstrtouint(colon + 1, 10, &bits) || (bits != 32 && bits != 64))
				return -EINVAL;
			c->mask = bits == 64 ? ~0ULL : 0xffffffffULL;
		}
		c->kp.symbol_name = c->name;
		c->kp.pre_handler = kc_pre;
		c->err = register_kprobe(&c->kp);
	}
	if (!proc_create_single("kcount", 0444, NULL, kc_show)) {
		kc_unregister();
		return -ENOMEM;
	}
	return 0;
}

static void __exit kc_exit(void)
{
	remove_proc_entry("kcount", NULL);
	kc_unregister();
}

module_init(kc_init);
module_exit(kc_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("call counts of kernel functions for bench/counts.sh");
