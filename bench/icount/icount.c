// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * icount: a QEMU TCG plugin that counts, for every translation block (TB)
 * the guest runs, how often it ran; bench/icount.sh drives it.
 *
 * Each block is counted by an inline add (no callback per block).  When
 * the guest executes the instruction at the marker address (mark=ADDR,
 * default 0x13370000, where bench/icount/mark.c puts a "ret"), every
 * block's count so far is written to OUT.N (out=OUT, N = 0, 1, ...), one
 * "PC INSNS EXECS" line per block that ran: so a window of the guest's
 * life is the difference of two dumps, and its instructions the sum of
 * INSNS x EXECS.  Counts are of the whole guest, every vCPU, kernel and
 * user space; exact but for races of two vCPUs on one block's counter
 * (thread=multi TCG: an inline add is not atomic), which lose an
 * increment now and then.
 *
 * Why blocks: under TCG a guest's time goes mostly into executing blocks,
 * a few host instructions of dispatch each, and every taken branch, call
 * or return ends one; a string instruction (rep movsb, rep stosq) runs
 * one block per iteration.  So blocks executed is a count that follows
 * what a guest's CPU time costs under TCG, and instructions executed one
 * that follows what it would cost on hardware.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct block {
	uint64_t pc;
	uint64_t insns;
	uint64_t execs;		/* the inline add's target */
};

/* Open addressing, never removed: a guest translates far fewer blocks. */
#define NSLOT	(1u << 21)
static struct block *slots[NSLOT];
static unsigned int nblocks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t mark = 0x13370000;
static const char *out = "icount";
static int ndump;

static void dump(unsigned int cpu, void *udata)
{
	char name[4096];
	FILE *f;

	pthread_mutex_lock(&lock);
	snprintf(name, sizeof(name), "%s.%d", out, ndump++);
	f = fopen(name, "w");
	if (!f) {
		perror(name);
	} else {
		for (unsigned int s = 0; s < NSLOT; s++) {
			struct block *b = slots[s];

			if (b && b->execs)
				fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
					b->pc, b->insns, b->execs);
		}
		fclose(f);
	}
	pthread_mutex_unlock(&lock);
}

/* The block at @pc of @n instructions: one counter for every translation. */
static struct block *block_get(uint64_t pc, uint64_t n)
{
	uint64_t key = pc ^ (n << 52);
	unsigned int s = (unsigned int)((key * 0x9e3779b97f4a7c15ull) >> 43) & (NSLOT - 1);
	struct block *b;

	pthread_mutex_lock(&lock);
	while ((b = slots[s]) && (b->pc != pc || b->insns != n))
		s = (s + 1) & (NSLOT - 1);
	if (!b && nblocks < NSLOT / 2) {
		b = calloc(1, sizeof(*b));
		if (b) {
			b->pc = pc;
			b->insns = n;
			slots[s] = b;
			nblocks++;
		}
	}
	pthread_mutex_unlock(&lock);
	if (!b) {
		fprintf(stderr, "icount: out of blocks\n");
		abort();
	}
	return b;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct block *b = block_get(qemu_plugin_tb_vaddr(tb), n);

	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->execs, 1);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (qemu_plugin_insn_vaddr(insn) == mark)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, dump,
				QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "mark=", 5)) {
			mark = strtoull(argv[i] + 5, NULL, 0);
		} else if (!strncmp(argv[i], "out=", 4)) {
			out = strdup(argv[i] + 4);
		} else {
			fprintf(stderr, "icount: unknown option %s\n", argv[i]);
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	return 0;
}
