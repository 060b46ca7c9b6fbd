// SPDX-License-Identifier: GPL-2.0-only
/*
 * fio-dio_batch.so: an external fio ioengine over /dev/dio_batch.
 *
 *	fio --ioengine=external:/path/to/fio-dio_batch.so --filename=/dev/sdX ...
 *
 * fio's model mapped onto dio_batch's:
 *  - one context per fio job (thread or process), or, with key=K, the keyed
 *    context K that every job naming K joins (each job has its own
 *    descriptor, hence its own completion queue);
 *  - a handle per file (filename= must be a block device); claim=0 opens
 *    it with DIO_OPEN_NOCLAIM (jobs in different contexts on one disk);
 *  - ->queue prepares a struct dio_request, ->commit is one DIO_IOC_SUBMIT
 *    for everything queued, ->getevents is DIO_IOC_COLLECT with fio's
 *    min/max and timeout (min as libaio takes it: 0 unless
 *    iodepth_batch_complete_min is set), ->event hands back the io_u;
 *  - PI, with the option names of fio's io_uring_cmd engine (3.36+):
 *    md_per_io_size (or pi=1, which sizes it from QUERY), pi_act,
 *    pi_chk=GUARD,REFTAG,APPTAG, apptag, apptag_mask; plus nocheck=1 (raw
 *    reads, DIO_PI_NOCHECK).  A PI failure fails the io_u with EILSEQ and
 *    logs the module's report: block, tag, expected, actual, who found it;
 *  - fixedbufs=1, as io_uring's: ->post_init registers the job's I/O memory
 *    (td->orig_buffer, fio's io_u buffers) with the job's descriptor, once
 *    (DIO_IOC_REGISTER), and reads and writes name it (DIO_REQ_FIXED,
 *    buf_index) instead of having their pages pinned one request at a time.
 *
 * fio's engine ABI is its internal structs: this file is built against the
 * source of exactly the fio that loads it (scripts/fio-src.sh), and refuses
 * to load into any other (FIO_IOOPS_VERSION, and the version string).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fio.h"
#include "optgroup.h"

#include <dioctl.h>

#ifndef DIO_FIO_VERSION
#error "build with -DDIO_FIO_VERSION='\"fio-X.Y\"' (the fio the engine is built for)"
#endif

struct dbf_options {
	void *pad;			/* fio: off1 must not be 0 */
	char *key;
	unsigned int claim;
	unsigned int nocheck;
	unsigned int pi;
	unsigned long long md_per_io_size;
	unsigned int pi_act;
	char *pi_chk;
	unsigned int apptag;
	unsigned int apptag_mask;
	unsigned int fixedbufs;
	unsigned int writefua;
};

/* One per io_u: its request, and its PI buffer. */
struct dbf_io {
	struct dio_request r;
	struct io_u *io_u;
	void *pi;
	size_t pi_cap;
	uint64_t seed;
	bool verify;			/* pi_act=0 read: verify here on completion */
};

struct dbf_data;

/* One per file: its handle, geometry and PI format. */
struct dbf_file {
	struct dbf_data *owner;		/* the job (context descriptor) that opened it */
	int handle;
	bool pi;			/* PI buffers travel with this file's I/O */
	bool raw_passthrough;		/* nocheck=1 reads by dio_pi_read_raw() */
	struct dio_query q;
	struct dio_pi_profile p;
};

/* One per job. */
struct dbf_data {
	int ctx;
	pid_t pid;
	unsigned int depth;
	unsigned int chk;		/* pi_chk as DIO_PI_CHK_* */
	struct dio_request **queued;	/* prepared, not yet submitted */
	unsigned int nr_queued;
	struct io_u **failed;		/* refused by SUBMIT: completed with an error */
	unsigned int nr_failed;
	struct dio_request **reaped;
	struct io_u **events;
	unsigned int inflight;
	/*
	 * Handles of files another job's descriptor opened: the submit workers
	 * of io_submit_mode=offload get the parent job's io_us and files.
	 */
	struct {
		const struct fio_file *f;
		int handle;
	} foreign[8];
	unsigned int nr_foreign;
	/*
	 * fixedbufs=1: the job's I/O memory [fixed_lo, fixed_hi), registered
	 * on ctx as fixed_nr buffers: buffer i is [fixed_lo + i * fixed_chunk,
	 * + fixed_chunk), the last one shorter (fixed_chunk is a multiple of
	 * fio's io_u buffer size, so no io_u straddles two).
	 */
	bool fixed;
	unsigned int fixed_nr;
	char *fixed_lo, *fixed_hi;
	unsigned long long fixed_chunk;
	unsigned long long fixed_reqs;	/* requests made with DIO_REQ_FIXED */
	unsigned long long plain_reqs;	/* data outside the registered memory */
};

static struct fio_option options[] = {
	{
		.name	= "key",
		.lname	= "dio_batch context key",
		.type	= FIO_OPT_STR_STORE,
		.off1	= offsetof(struct dbf_options, key),
		.help	= "Join (creating it) the keyed dio_batch context KEY instead of a private one per job (0: private)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "claim",
		.lname	= "claim the device",
		.type	= FIO_OPT_BOOL,
		.off1	= offsetof(struct dbf_options, claim),
		.def	= "1",
		.help	= "Claim the block device exclusively for the context (0: DIO_OPEN_NOCLAIM)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "nocheck",
		.lname	= "raw reads",
		.type	= FIO_OPT_BOOL,
		.off1	= offsetof(struct dbf_options, nocheck),
		.def	= "0",
		.help	= "Reads skip the HBA's and disk's PI checks (DIO_PI_NOCHECK)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "pi",
		.lname	= "protection information",
		.type	= FIO_OPT_BOOL,
		.off1	= offsetof(struct dbf_options, pi),
		.def	= "0",
		.help	= "Carry PI buffers with every request, sized from DIO_IOC_QUERY",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "md_per_io_size",
		.lname	= "metadata bytes per io",
		.type	= FIO_OPT_STR_VAL,
		.off1	= offsetof(struct dbf_options, md_per_io_size),
		.def	= "0",
		.help	= "Size of the PI (metadata) buffer of each io (non-zero: as pi=1)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "pi_act",
		.lname	= "PI action",
		.type	= FIO_OPT_INT,
		.off1	= offsetof(struct dbf_options, pi_act),
		.def	= "1",
		.minval	= 0,
		.maxval	= 1,
		.help	= "0: the engine generates PI (writes) and verifies it (reads); 1: the kernel does",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "pi_chk",
		.lname	= "PI checks",
		.type	= FIO_OPT_STR_STORE,
		.off1	= offsetof(struct dbf_options, pi_chk),
		.help	= "Tags to check: GUARD,REFTAG,APPTAG (comma separated)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "apptag",
		.lname	= "app tag",
		.type	= FIO_OPT_INT,
		.off1	= offsetof(struct dbf_options, apptag),
		.def	= "0x1234",
		.minval	= 0,
		.maxval	= 0xffff,
		.help	= "App tag written with PI and checked under apptag_mask",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "apptag_mask",
		.lname	= "app tag mask",
		.type	= FIO_OPT_INT,
		.off1	= offsetof(struct dbf_options, apptag_mask),
		.def	= "0xffff",
		.minval	= 0,
		.maxval	= 0xffff,
		.help	= "Bits of apptag that pi_chk=APPTAG compares",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "fixedbufs",
		.lname	= "registered buffers",
		/* As io_uring's: "fixedbufs" alone, or =0 / =1. */
		.type	= FIO_OPT_STR_SET,
		.off1	= offsetof(struct dbf_options, fixedbufs),
		.help	= "Register the job's I/O memory once (DIO_IOC_REGISTER) and do reads and writes in it with DIO_REQ_FIXED",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "writefua",
		.lname	= "forced unit access on writes",
		.type	= FIO_OPT_BOOL,
		.off1	= offsetof(struct dbf_options, writefua),
		.def	= "0",
		.help	= "Write with forced unit access (DIO_REQ_FUA), as io_uring_cmd's writefua",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= NULL,
	},
};

static bool pi_wanted(struct dbf_options *o)
{
	return o->pi || o->md_per_io_size;
}

static int parse_pi_chk(const char *s, unsigned int *chk)
{
	char *dup, *tok, *save = NULL;
	int ret = 0;

	*chk = 0;
	if (!s || !*s)
		return 0;
	dup = strdup(s);
	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",:+ ", &save); tok; tok = strtok_r(NULL, ",:+ ", &save)) {
		if (!strcasecmp(tok, "GUARD"))
			*chk |= DIO_PI_CHK_GUARD;
		else if (!strcasecmp(tok, "REFTAG"))
			*chk |= DIO_PI_CHK_REFTAG;
		else if (!strcasecmp(tok, "APPTAG"))
			*chk |= DIO_PI_CHK_APPTAG;
		else if (!strcasecmp(tok, "NONE"))
			;
		else {
			log_err("fio-dio_batch: pi_chk: unknown check '%s' (GUARD, REFTAG, APPTAG)\n", tok);
			ret = -EINVAL;
		}
	}
	free(dup);
	return ret;
}

static int dbf_ctx_open(struct thread_data *td, struct dbf_data *d)
{
	struct dbf_options *o = td->eo;
	unsigned long long key = 0;
	char *end;

	if (o->key && *o->key) {
		errno = 0;
		key = strtoull(o->key, &end, 0);
		if (errno || *end) {
			log_err("fio-dio_batch: key=%s: not a number\n", o->key);
			td_verror(td, EINVAL, "dio_batch key");
			return 1;
		}
	}
	if (key) {
		d->ctx = sys_dio_init(key, DIO_CREAT);
	} else {
		d->ctx = sys_dio_init(0, DIO_PRIVATE);
	}
	if (d->ctx < 0) {
		int e = errno;

		if (e == ENOENT || e == ENODEV)
			log_err("fio-dio_batch: /dev/dio_batch: %s (is the dio_batch module loaded?)\n",
				strerror(e));
		else
			log_err("fio-dio_batch: sys_dio_init(key %#llx): %s\n", key, strerror(e));
		td_verror(td, e, "sys_dio_init");
		return 1;
	}
	d->pid = getpid();
	return 0;
}

static void dbf_free(struct dbf_data *d)
{
	free(d->queued);
	free(d->failed);
	free(d->reaped);
	free(d->events);
	free(d);
}

static void dbf_cleanup(struct thread_data *td)
{
	struct dbf_data *d = td->io_ops_data;

	if (!d)
		return;
	if (d->ctx >= 0 && d->pid == getpid()) {
		if (d->fixed && d->plain_reqs)
			log_info("fio-dio_batch: fixedbufs=1: %llu of %llu reads and writes had their data outside the registered I/O memory and went as ordinary requests\n",
				 d->plain_reqs, d->plain_reqs + d->fixed_reqs);
		for (unsigned int i = 0; i < d->nr_foreign; i++)
			sys_dio_close(d->ctx, d->foreign[i].handle);
		/* Closing the descriptor unregisters its buffers too. */
		sys_dio_exit(d->ctx);
	}
	dbf_free(d);
	td->io_ops_data = NULL;
}

/*
 * fixedbufs=1 with io_submit_mode=offload: fio's submit workers each open
 * a descriptor of their own (->init with a copy of the job) and queue the
 * job's io_us on it, while the io_u memory is the job's: registered
 * buffers belong to the one descriptor that registered them, so the
 * workers would not use them.  Refused, rather than silently pinning
 * memory no request uses.
 */
static int dbf_check_fixed_mode(struct thread_data *td)
{
	struct dbf_options *o = td->eo;

	if (!o->fixedbufs || td->o.io_submit_mode != IO_MODE_OFFLOAD)
		return 0;
	log_err("fio-dio_batch: fixedbufs=1 does not go with io_submit_mode=offload: fio's submit workers each have their own dio_batch descriptor, and registered buffers belong to the descriptor that registered them (use io_submit_mode=inline, or drop fixedbufs)\n");
	td_verror(td, EINVAL, "dio_batch fixedbufs");
	return 1;
}

static int dbf_init(struct thread_data *td)
{
	struct dbf_options *o = td->eo;
	struct dbf_data *d;
	unsigned int n;

	if (td->io_ops_data)
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d)
		goto nomem;
	d->ctx = -1;
	td->io_ops_data = d;
	if (dbf_check_fixed_mode(td))
		return 1;
	if (parse_pi_chk(o->pi_chk, &d->chk)) {
		td_verror(td, EINVAL, "dio_batch pi_chk");
		return 1;
	}
	n = td->o.iodepth ? td->o.iodepth : 1;
	d->depth = n;
	d->queued = calloc(n, sizeof(*d->queued));
	d->failed = calloc(n, sizeof(*d->failed));
	d->reaped = calloc(n, sizeof(*d->reaped));
	d->events = calloc(n, sizeof(*d->events));
	if (!d->queued || !d->failed || !d->reaped || !d->events)
		goto nomem;
	return dbf_ctx_open(td, d);
nomem:
	td_verror(td, ENOMEM, "dio_batch init");
	return 1;
}

/*
 * The job's data for this process: what another process set up (fio
 * opening files before ->init, in the parent of the job's process) is
 * dropped, not closed (its descriptor and handles are that process's),
 * and ->init runs again here.
 */
static struct dbf_data *dbf_mine(struct thread_data *td)
{
	struct dbf_data *d = td->io_ops_data;

	if (d && d->pid == getpid())
		return d;
	if (d) {
		td->io_ops_data = NULL;
		dbf_free(d);
	}
	if (dbf_init(td))
		return NULL;
	return td->io_ops_data;
}

static const char *errname(int e)
{
	const char *s = strerrorname_np(e);

	return s ? s : "?";
}

static void fmt_bytes(char *buf, size_t len, unsigned long long b)
{
	if (b == (unsigned long long)RLIM_INFINITY)
		snprintf(buf, len, "unlimited");
	else if (b >= 1024 && !(b % 1024))
		snprintf(buf, len, "%llu KiB", b / 1024);
	else
		snprintf(buf, len, "%llu bytes", b);
}

static const char *mem_type_name(enum fio_memtype t)
{
	switch (t) {
	case MEM_MALLOC:	return "malloc";
	case MEM_SHM:		return "shm";
	case MEM_SHMHUGE:	return "shmhuge";
	case MEM_MMAP:		return "mmap";
	case MEM_MMAPHUGE:	return "mmaphuge";
	case MEM_MMAPSHARED:	return "mmapshared";
	default:		return "?";
	}
}

/*
 * fixedbufs=1: register the job's I/O memory, the io_u buffers fio laid
 * out in td->orig_buffer (max_bs apart from the first), on the job's
 * descriptor: one buffer when it fits the module's max_fixed_buf_bytes,
 * else as many as it takes, each a whole number of io_u buffers.
 */
static int dbf_register(struct thread_data *td, struct dbf_data *d)
{
	struct dbf_options *o = td->eo;
	unsigned long long max_bs = td_max_bs(td), total, chunk;
	struct dio_features f;
	char *lo, *hi, *end;
	struct iovec *iov;
	unsigned int nr, i;
	int e;

	if (!o->fixedbufs || d->fixed || !td->orig_buffer || !td->orig_buffer_size ||
	    !td->io_u_all.nr || !max_bs)
		return 0;
	end = td->orig_buffer + td->orig_buffer_size;
	lo = td->io_u_all.io_us[0]->buf;
	if (!lo || lo < td->orig_buffer || lo >= end)
		lo = td->orig_buffer;
	hi = lo + (unsigned long long)td->io_u_all.nr * max_bs;
	if (hi > end || hi < lo)
		hi = end;
	total = hi - lo;

	if (sys_dio_features(&f) < 0) {
		e = errno;
		log_err("fio-dio_batch: fixedbufs=1: sys_dio_features: %s (%s)\n", errname(e), strerror(e));
		td_verror(td, e, "sys_dio_features");
		return 1;
	}
	if (!(f.features & DIO_FEAT_FIXED_BUFS) || !f.max_fixed_bufs || !f.max_fixed_buf_bytes) {
		log_err("fio-dio_batch: fixedbufs=1: ENOTTY: the loaded dio_batch module has no registered buffers (its ABI is %u, they came with ABI 3): load a newer module, or drop fixedbufs\n",
			f.abi_version);
		td_verror(td, ENOTTY, "dio_batch fixedbufs");
		return 1;
	}
	if (total <= f.max_fixed_buf_bytes) {
		chunk = total;
	} else {
		chunk = f.max_fixed_buf_bytes / max_bs * max_bs;
		if (!chunk) {
			log_err("fio-dio_batch: fixedbufs=1: an io of %llu bytes (bs) is larger than the largest buffer the module registers (%llu bytes)\n",
				max_bs, (unsigned long long)f.max_fixed_buf_bytes);
			td_verror(td, EINVAL, "dio_batch fixedbufs");
			return 1;
		}
	}
	nr = (total + chunk - 1) / chunk;
	if (nr > f.max_fixed_bufs) {
		log_err("fio-dio_batch: fixedbufs=1: %llu bytes of I/O memory need more than the module's %u registered buffers of at most %llu bytes: lower iodepth or bs\n",
			total, f.max_fixed_bufs, (unsigned long long)f.max_fixed_buf_bytes);
		td_verror(td, EINVAL, "dio_batch fixedbufs");
		return 1;
	}
	iov = calloc(nr, sizeof(*iov));
	if (!iov) {
		td_verror(td, ENOMEM, "dio_batch fixedbufs");
		return 1;
	}
	for (i = 0; i < nr; i++) {
		iov[i].iov_base = lo + i * chunk;
		iov[i].iov_len = i + 1 < nr ? chunk : total - i * chunk;
	}
	if (sys_dio_register_buffers(d->ctx, iov, nr) == 0) {
		free(iov);
		d->fixed = true;
		d->fixed_nr = nr;
		d->fixed_lo = lo;
		d->fixed_hi = hi;
		d->fixed_chunk = chunk;
		return 0;
	}
	e = errno;
	free(iov);
	switch (e) {
	case ENOMEM: {
		struct rlimit rl = { 0, 0 };
		char cur[32], need[32];

		getrlimit(RLIMIT_MEMLOCK, &rl);
		fmt_bytes(cur, sizeof(cur), rl.rlim_cur);
		fmt_bytes(need, sizeof(need),
			  (((uintptr_t)hi + 4095) / 4096 - (uintptr_t)lo / 4096) * 4096ULL);
		log_err("fio-dio_batch: fixedbufs=1: registering the job's I/O memory (%s in %u buffer%s): ENOMEM (%s): the pages are charged to RLIMIT_MEMLOCK, %s here, for all the user's locked and registered memory (CAP_IPC_LOCK is exempt): raise it (ulimit -l, memlock in limits.conf, LimitMEMLOCK=), or lower iodepth or bs\n",
			need, nr, nr == 1 ? "" : "s", strerror(e), cur);
		break;
	}
	case ENOTTY:
		log_err("fio-dio_batch: fixedbufs=1: ENOTTY (%s): the loaded dio_batch module predates registered buffers (ABI 3): load a newer module, or drop fixedbufs\n",
			strerror(e));
		break;
	case EOPNOTSUPP:
		log_err("fio-dio_batch: fixedbufs=1: EOPNOTSUPP (%s): iomem=%s%s%s maps a file: registered buffers must be anonymous or shared memory (iomem=malloc, mmap, mmapshared, shm, shmhuge, mmaphuge; a file only on tmpfs or hugetlbfs)\n",
			strerror(e), mem_type_name(td->o.mem_type), td->o.mmapfile ? ":" : "",
			td->o.mmapfile ? td->o.mmapfile : "");
		break;
	default:
		log_err("fio-dio_batch: fixedbufs=1: sys_dio_register_buffers(%u buffer%s, %llu bytes, iomem=%s): %s (%s)\n",
			nr, nr == 1 ? "" : "s", total, mem_type_name(td->o.mem_type), errname(e),
			strerror(e));
		break;
	}
	td_verror(td, e, "sys_dio_register_buffers");
	return 1;
}

static int dbf_post_init(struct thread_data *td)
{
	struct dbf_options *o = td->eo;
	struct dbf_data *d;

	if (!o->fixedbufs)
		return 0;
	d = dbf_mine(td);
	if (!d)
		return 1;
	return dbf_register(td, d);
}

/*
 * The registered buffer [@buf, @buf + @len) lies in, or -1: data outside
 * the registered memory goes as an ordinary request.
 */
static int dbf_fixed_index(const struct dbf_data *d, const void *buf, unsigned long long len)
{
	const char *p = buf;
	unsigned long long i;

	if (!d->fixed || p < d->fixed_lo || p >= d->fixed_hi || len > (unsigned long long)(d->fixed_hi - p))
		return -1;
	i = (unsigned long long)(p - d->fixed_lo) / d->fixed_chunk;
	if (i >= d->fixed_nr || (unsigned long long)(p - d->fixed_lo) + len > (i + 1) * d->fixed_chunk)
		return -1;
	return (int)i;
}

/*
 * fio asks every file's size in the main process before any job starts
 * (and before it would lay out a regular file): the place to refuse what
 * is not a block device, and options that make no sense together.
 */
static int dbf_get_file_size(struct thread_data *td, struct fio_file *f)
{
	struct dbf_options *o = td->eo;
	unsigned int chk;
	struct stat st;

	if (parse_pi_chk(o->pi_chk, &chk)) {
		td_verror(td, EINVAL, "dio_batch pi_chk");
		return 1;
	}
	if (dbf_check_fixed_mode(td))
		return 1;
	if (!pi_wanted(o) && (o->pi_act == 0 || chk)) {
		log_err("fio-dio_batch: %s needs PI buffers: add pi=1 or md_per_io_size\n",
			chk ? "pi_chk" : "pi_act=0");
		td_verror(td, EINVAL, "dio_batch pi options");
		return 1;
	}
	if (stat(f->file_name, &st) < 0 || !S_ISBLK(st.st_mode)) {
		if (errno == ENOENT)
			log_err("fio-dio_batch: %s: no such block device (the dio_batch engine does I/O on block devices only: filename=/dev/...)\n",
				f->file_name);
		else
			log_err("fio-dio_batch: %s is not a block device: the dio_batch engine does I/O on block devices only (filename=/dev/...)\n",
				f->file_name);
		td_verror(td, ENOTBLK, "dio_batch: not a block device");
		return 1;
	}
	return generic_get_file_size(td, f);
}

static int dbf_io_u_init(struct thread_data *td, struct io_u *io_u)
{
	struct dbf_io *io = calloc(1, sizeof(*io));

	if (!io)
		return 1;
	io->io_u = io_u;
	io_u->engine_data = io;
	return 0;
}

static void dbf_io_u_free(struct thread_data *td, struct io_u *io_u)
{
	struct dbf_io *io = io_u->engine_data;

	if (io) {
		free(io->pi);
		free(io);
	}
	io_u->engine_data = NULL;
}

static int dbf_open_file(struct thread_data *td, struct fio_file *f)
{
	struct dbf_options *o = td->eo;
	struct dbf_data *d = td->io_ops_data;
	struct dbf_file *df;
	struct stat st;
	int ret, e;

	if (stat(f->file_name, &st) < 0) {
		e = errno;
		log_err("fio-dio_batch: %s: %s (the dio_batch engine needs a block device: filename=/dev/...)\n",
			f->file_name, strerror(e));
		td_verror(td, e, "stat");
		return 1;
	}
	if (!S_ISBLK(st.st_mode)) {
		log_err("fio-dio_batch: %s is not a block device: the dio_batch engine does I/O on block devices only (filename=/dev/...)\n",
			f->file_name);
		td_verror(td, ENOTBLK, "dio_batch open_file");
		return 1;
	}
	if (!d || d->pid != getpid()) {
		/* Opened before ->init, or in another process than the job's. */
		d = dbf_mine(td);
		if (!d || dbf_register(td, d))
			return 1;
	}
	ret = generic_open_file(td, f);
	if (ret)
		return ret;
	df = calloc(1, sizeof(*df));
	if (!df) {
		td_verror(td, ENOMEM, "dio_batch open_file");
		goto err;
	}
	df->handle = sys_dio_open(d->ctx, f->fd, o->claim ? 0 : DIO_OPEN_NOCLAIM);
	if (df->handle < 0) {
		e = errno;
		if (e == EBUSY)
			log_err("fio-dio_batch: %s: %s: claimed elsewhere (mounted, md/dm, or another context: jobs sharing a disk need one key= or claim=0)\n",
				f->file_name, strerror(e));
		else
			log_err("fio-dio_batch: sys_dio_open(%s): %s\n", f->file_name, strerror(e));
		td_verror(td, e, "sys_dio_open");
		goto err;
	}
	df->q.size = sizeof(df->q);
	if (sys_dio_query(d->ctx, df->handle, &df->q) < 0) {
		e = errno;
		log_err("fio-dio_batch: sys_dio_query(%s): %s\n", f->file_name, strerror(e));
		td_verror(td, e, "sys_dio_query");
		goto err_close;
	}
	if (pi_wanted(o)) {
		if (!(df->q.pi_caps & DIO_PI_CAP_INTEGRITY) || !df->q.pi_md_size) {
			log_err("fio-dio_batch: %s has no protection information (profile '%s'): pi=1/md_per_io_size need a PI device\n",
				f->file_name, df->q.profile);
			td_verror(td, EINVAL, "dio_batch pi");
			goto err_close;
		}
		if (dio_pi_profile_from_query(&df->q, &df->p) < 0) {
			e = errno;
			log_err("fio-dio_batch: %s: PI profile '%s': %s\n", f->file_name,
				df->q.profile, strerror(e));
			td_verror(td, e, "dio_pi_profile_from_query");
			goto err_close;
		}
		df->pi = true;
		if (o->md_per_io_size &&
		    (unsigned long long)dio_pi_len(&df->p, td_max_bs(td)) > o->md_per_io_size) {
			log_err("fio-dio_batch: md_per_io_size=%llu is smaller than the %zd bytes of PI of a %llu-byte io on %s (%u bytes per %u-byte interval)\n",
				o->md_per_io_size, dio_pi_len(&df->p, td_max_bs(td)), td_max_bs(td),
				f->file_name, df->q.pi_md_size, df->q.pi_interval);
			td_verror(td, EINVAL, "dio_batch md_per_io_size");
			goto err_close;
		}
	} else if (d->chk) {
		log_err("fio-dio_batch: pi_chk needs PI buffers: add pi=1 or md_per_io_size\n");
		td_verror(td, EINVAL, "dio_batch pi_chk");
		goto err_close;
	}
	if (o->nocheck && df->q.pi_caps & DIO_PI_CAP_INTEGRITY && !(df->q.pi_caps & DIO_PI_CAP_NOCHECK)) {
		/*
		 * NVMe before Linux 6.14: the driver cannot skip its checks, the
		 * drive can, by passthrough: reads go by dio_pi_read_raw(),
		 * one at a time (synchronously), on the file's own descriptor.
		 */
		if (!df->pi && dio_pi_profile_from_query(&df->q, &df->p) < 0) {
			e = errno;
			log_err("fio-dio_batch: %s: PI profile '%s': %s\n", f->file_name,
				df->q.profile, strerror(e));
			td_verror(td, e, "dio_pi_profile_from_query");
			goto err_close;
		}
		df->raw_passthrough = true;
		log_info("fio-dio_batch: %s: nocheck=1: this kernel's driver does not skip PI checks (no DIO_PI_CAP_NOCHECK): reads go by NVMe passthrough (dio_pi_read_raw), synchronously\n",
			 f->file_name);
	}
	df->owner = d;
	FILE_SET_ENG_DATA(f, df);
	return 0;
err_close:
	sys_dio_close(d->ctx, df->handle);
err:
	free(df);
	if (generic_close_file(td, f))
		log_err("fio-dio_batch: closing %s: %s\n", f->file_name, strerror(errno));
	return 1;
}

static int dbf_close_file(struct thread_data *td, struct fio_file *f)
{
	struct dbf_data *d = td->io_ops_data;
	struct dbf_file *df = FILE_ENG_DATA(f);

	if (df) {
		if (df->owner == d && d && d->ctx >= 0 && d->pid == getpid())
			sys_dio_close(d->ctx, df->handle);
		free(df);
		FILE_SET_ENG_DATA(f, NULL);
	}
	return generic_close_file(td, f);
}

static int dbf_pi_buf(struct dbf_io *io, size_t len)
{
	void *p;

	if (io->pi_cap >= len)
		return 0;
	p = realloc(io->pi, len);
	if (!p)
		return -ENOMEM;
	io->pi = p;
	io->pi_cap = len;
	return 0;
}

/*
 * The handle of @f in @d's context: its own, or for a file another
 * descriptor opened (offload workers), one opened here once.
 */
static int dbf_handle(struct thread_data *td, struct dbf_data *d, struct fio_file *f,
		      struct dbf_file *df)
{
	struct dbf_options *o = td->eo;
	unsigned int i;
	int h;

	if (df->owner == d)
		return df->handle;
	for (i = 0; i < d->nr_foreign; i++)
		if (d->foreign[i].f == f)
			return d->foreign[i].handle;
	if (d->nr_foreign == sizeof(d->foreign) / sizeof(d->foreign[0])) {
		errno = EMFILE;
		return -1;
	}
	h = sys_dio_open(d->ctx, f->fd, o->claim ? 0 : DIO_OPEN_NOCLAIM);
	if (h < 0) {
		log_err("fio-dio_batch: sys_dio_open(%s) in a submit worker: %s%s\n", f->file_name,
			strerror(errno), errno == EBUSY ? " (io_submit_mode=offload needs key= or claim=0)" : "");
		return -1;
	}
	d->foreign[d->nr_foreign].f = f;
	d->foreign[d->nr_foreign++].handle = h;
	return h;
}

/* Fill @io->r for @io_u; 0 or a positive errno. */
static int dbf_prep(struct thread_data *td, struct dbf_data *d, struct dbf_io *io, struct io_u *io_u)
{
	struct dbf_options *o = td->eo;
	struct dbf_file *df = FILE_ENG_DATA(io_u->file);
	struct dio_request *r = &io->r;
	unsigned int chk;
	ssize_t pilen;
	int h, bi;

	io->verify = false;
	if (!df)
		return EBADF;
	h = dbf_handle(td, d, io_u->file, df);
	if (h < 0)
		return errno;
	switch (io_u->ddir) {
	case DDIR_READ:
	case DDIR_WRITE:
		bi = dbf_fixed_index(d, io_u->xfer_buf, io_u->xfer_buflen);
		if (bi >= 0)
			d->fixed_reqs++;
		else if (d->fixed)
			d->plain_reqs++;
		if (io_u->ddir == DDIR_READ && bi >= 0)
			dio_req_prep_read_fixed(r, h, io_u->xfer_buf, io_u->xfer_buflen,
						io_u->offset, bi);
		else if (io_u->ddir == DDIR_READ)
			dio_req_prep_read(r, h, io_u->xfer_buf, io_u->xfer_buflen, io_u->offset);
		else if (bi >= 0)
			dio_req_prep_write_fixed(r, h, io_u->xfer_buf, io_u->xfer_buflen,
						 io_u->offset, bi);
		else
			dio_req_prep_write(r, h, io_u->xfer_buf, io_u->xfer_buflen, io_u->offset);
		if (io_u->ddir == DDIR_WRITE && o->writefua)
			r->flags |= DIO_REQ_FUA;
		break;
	case DDIR_SYNC:
	case DDIR_DATASYNC:
	case DDIR_SYNC_FILE_RANGE:
		dio_req_prep_flush(r, h);
		r->cookie = (uintptr_t)io_u;
		return 0;
	default:
		return EOPNOTSUPP;
	}
	r->cookie = (uintptr_t)io_u;

	if (!df->pi) {
		if (io_u->ddir == DDIR_READ && o->nocheck)
			r->pi_flags = DIO_PI_NOCHECK;
		return 0;
	}
	pilen = dio_pi_len(&df->p, io_u->xfer_buflen);
	if (pilen < 0)
		return errno ? errno : EINVAL;
	/* Ref tags count from the start of the whole disk. */
	io->seed = dio_pi_seed(&df->q, io_u->offset);
	if (io_u->ddir == DDIR_WRITE) {
		if (o->pi_act) {
			/* The kernel generates; the module puts our app tag in. */
			if (d->chk & DIO_PI_CHK_APPTAG) {
				r->pi_flags = DIO_PI_GEN_APPTAG;
				r->app_tag = o->apptag;
			}
			return 0;
		}
		if (dbf_pi_buf(io, pilen))
			return ENOMEM;
		if (dio_pi_generate(&df->p, io_u->xfer_buf, io_u->xfer_buflen, io->pi,
				    &(struct dio_pi_params){ .seed = io->seed,
							     .app_tag = o->apptag }) < 0)
			return errno ? errno : EINVAL;
		dio_req_set_pi(r, io->pi, pilen, 0, 0, 0);
		return 0;
	}
	/* A read: the PI comes back in our buffer, checked as pi_chk says. */
	if (o->pi_act && !d->chk && !o->nocheck)
		return 0;		/* the module verifies guard and ref tag */
	if (dbf_pi_buf(io, pilen))
		return ENOMEM;
	/* The module checks ref tags of type 1 only (type 3 has none to check). */
	chk = d->chk & ~(df->q.pi_type != 3 ? 0 : DIO_PI_CHK_REFTAG);
	dio_req_set_pi(r, io->pi, pilen, chk | (o->nocheck ? DIO_PI_NOCHECK : 0),
		       chk & DIO_PI_CHK_APPTAG ? o->apptag : 0,
		       chk & DIO_PI_CHK_APPTAG ? o->apptag_mask : 0);
	io->verify = !o->pi_act && d->chk && !o->nocheck;
	return 0;
}

/*
 * The module's report of a PI failure; @r->pi_err_source DIO_PI_SRC_NONE:
 * the engine's own verification (pi_act=0) found it.
 */
static void dbf_report(struct thread_data *td, struct io_u *io_u, const struct dio_request *r)
{
	const char *by = r->pi_err_source == DIO_PI_SRC_NONE ? "fio-dio_batch" :
			 dio_pi_source_name(r->pi_err_source);
	char blk[32];

	if (r->pi_err_interval == DIO_PI_INTERVAL_UNKNOWN)
		snprintf(blk, sizeof(blk), "unknown");
	else
		snprintf(blk, sizeof(blk), "%" PRIu64, (uint64_t)r->pi_err_interval);
	log_err("fio-dio_batch: PI error on %s: %s offset=%llu len=%llu: block %s, %s tag, expected %#" PRIx64 ", actual %#" PRIx64 ", found by %s (EILSEQ)\n",
		io_u->file ? io_u->file->file_name : "?", io_ddir_name(io_u->ddir),
		io_u->offset, io_u->xfer_buflen, blk, dio_pi_tag_name(r->pi_err_tag),
		(uint64_t)r->pi_err_expected, (uint64_t)r->pi_err_actual, by);
}

/*
 * nocheck=1 where the kernel's driver cannot skip its checks (NVMe before
 * 6.14): the drive skips them for a passthrough read.  Completed at once.
 */
static enum fio_q_status dbf_raw_read(struct dbf_file *df, struct dbf_io *io,
				      struct io_u *io_u)
{
	ssize_t pilen = dio_pi_len(&df->p, io_u->xfer_buflen);

	if (pilen < 0 || dbf_pi_buf(io, pilen)) {
		io_u->error = pilen < 0 ? EINVAL : ENOMEM;
		return FIO_Q_COMPLETED;
	}
	if (dio_pi_read_raw(io_u->file->fd, &df->p, io_u->xfer_buf, io_u->xfer_buflen,
			    io->pi, io_u->offset) < 0) {
		io_u->error = errno;
		log_err("fio-dio_batch: %s: nocheck=1 by NVMe passthrough: %s%s\n",
			io_u->file->file_name, strerror(errno),
			errno == EACCES ? " (Linux 6.1 allows NVMe passthrough only with CAP_SYS_ADMIN)" : "");
		return FIO_Q_COMPLETED;
	}
	io_u->resid = 0;
	return FIO_Q_COMPLETED;
}

static enum fio_q_status dbf_queue(struct thread_data *td, struct io_u *io_u)
{
	struct dbf_data *d = td->io_ops_data;
	struct dbf_io *io = io_u->engine_data;
	struct dbf_file *df;
	int e;

	fio_ro_check(td, io_u);
	if (d->nr_queued + d->inflight + d->nr_failed >= d->depth)
		return FIO_Q_BUSY;
	/* A flush follows what was submitted before it, as libaio's fsync does. */
	if (ddir_sync(io_u->ddir) && d->nr_queued)
		return FIO_Q_BUSY;
	df = FILE_ENG_DATA(io_u->file);
	if (df && df->raw_passthrough && io_u->ddir == DDIR_READ)
		return dbf_raw_read(df, io, io_u);
	e = dbf_prep(td, d, io, io_u);
	if (e) {
		io_u->error = e;
		if (e == EOPNOTSUPP)
			log_err("fio-dio_batch: %s is not supported (read, write and flush are)\n",
				io_ddir_name(io_u->ddir));
		return FIO_Q_COMPLETED;
	}
	d->queued[d->nr_queued++] = &io->r;
	return FIO_Q_QUEUED;
}

static void dbf_queued(struct thread_data *td, struct dio_request **reqs, unsigned int nr)
{
	struct timespec now;
	unsigned int i;

	if (!fio_fill_issue_time(td))
		return;
	fio_gettime(&now, NULL);
	for (i = 0; i < nr; i++) {
		struct io_u *io_u = (struct io_u *)(uintptr_t)reqs[i]->cookie;

		memcpy(&io_u->issue_time, &now, sizeof(now));
		io_u_queued(td, io_u);
	}
	if (td->o.read_iolog_file)
		memcpy(&td->last_issue, &now, sizeof(now));
}

static void dbf_dequeue(struct dbf_data *d, unsigned int n)
{
	d->nr_queued -= n;
	memmove(d->queued, d->queued + n, d->nr_queued * sizeof(*d->queued));
}

static int dbf_commit(struct thread_data *td)
{
	struct dbf_data *d = td->io_ops_data;
	struct timespec start;
	bool waiting = false;
	int ret, e;

	while (d->nr_queued) {
		ret = sys_dio_submit(d->ctx, d->queued, d->nr_queued);
		if (ret > 0) {
			dbf_queued(td, d->queued, ret);
			io_u_mark_submit(td, ret);
			d->inflight += ret;
			dbf_dequeue(d, ret);
			waiting = false;
			continue;
		}
		if (ret == 0 || errno == EINTR)
			continue;
		e = errno;
		if (e == EAGAIN) {
			/* max_inflight or the pinned-memory ceiling: reap first. */
			if (d->inflight)
				return 0;
			/* Nothing of ours in flight: the user's other I/O. */
			if (!waiting) {
				fio_gettime(&start, NULL);
				waiting = true;
			}
			if (mtime_since_now(&start) <= 30000) {
				usleep(100);
				continue;
			}
			log_err("fio-dio_batch: SUBMIT refused with %s for 30 s with nothing in flight\n",
				strerror(e));
		}
		/*
		 * The first request is refused (EAGAIN only after 30 s): it
		 * completes with that error.
		 */
		{
			struct dio_request *r = d->queued[0];
			struct io_u *io_u = (struct io_u *)(uintptr_t)r->cookie;

			io_u->error = e;
			if (e == ENOMEM)
				log_err("fio-dio_batch: %s: SUBMIT: %s: an io larger than the per-user pinned-memory ceiling (dio_batch's max_user_pinned_mb), or out of memory; fixedbufs=1 pins the job's memory once instead\n",
					io_u->file->file_name, strerror(e));
			else if (e == EILSEQ)
				dbf_report(td, io_u, r);
			else if (e == EOPNOTSUPP && r->pi_flags & DIO_PI_NOCHECK)
				log_err("fio-dio_batch: %s: nocheck=1: the driver cannot skip its PI checks on this kernel (DIO_PI_NOCHECK: %s)\n",
					io_u->file->file_name, strerror(e));
			else if (e == EOPNOTSUPP)
				log_err("fio-dio_batch: %s: the device refuses these PI flags (%#x): %s\n",
					io_u->file->file_name, r->pi_flags, strerror(e));
			dbf_queued(td, d->queued, 1);
			io_u_mark_submit(td, 1);
			d->failed[d->nr_failed++] = io_u;
			dbf_dequeue(d, 1);
		}
	}
	return 0;
}

static struct io_u *dbf_complete(struct thread_data *td, struct dio_request *r)
{
	struct dbf_io *io = (struct dbf_io *)r;
	struct io_u *io_u = io->io_u;
	struct dbf_options *o = td->eo;
	struct dbf_file *df;

	if (r->result < 0) {
		io_u->error = -r->result;
		if (io_u->error == EILSEQ)
			dbf_report(td, io_u, r);
		else if (io_u->error == EOPNOTSUPP && r->pi_flags & DIO_PI_NOCHECK)
			log_err("fio-dio_batch: %s: nocheck=1: the driver cannot skip its PI checks on this kernel (DIO_PI_NOCHECK: %s)\n",
				io_u->file->file_name, strerror(io_u->error));
		return io_u;
	}
	io_u->error = 0;
	if (io_u->ddir == DDIR_READ || io_u->ddir == DDIR_WRITE)
		io_u->resid = io_u->xfer_buflen - (unsigned long long)r->result;
	if (io->verify && !io_u->resid) {
		struct dio_pi_error err;

		df = FILE_ENG_DATA(io_u->file);
		if (dio_pi_verify(&df->p, io_u->xfer_buf, io_u->xfer_buflen, io->pi,
				  &(struct dio_pi_params){ .seed = io->seed, .app_tag = o->apptag,
							   .app_mask = o->apptag_mask,
							   .chk_flags = ((struct dbf_data *)td->io_ops_data)->chk },
				  &err) < 0) {
			struct dio_request rep = *r;

			rep.pi_err_interval = err.interval == DIO_PI_INTERVAL_UNKNOWN ?
					      err.interval : io->seed + err.interval;
			rep.pi_err_tag = err.tag;
			rep.pi_err_expected = err.expected;
			rep.pi_err_actual = err.actual;
			rep.pi_err_source = DIO_PI_SRC_NONE;
			io_u->error = EILSEQ;
			dbf_report(td, io_u, &rep);
		}
	}
	return io_u;
}

static int dbf_getevents(struct thread_data *td, unsigned int min, unsigned int max,
			 const struct timespec *t)
{
	struct dbf_data *d = td->io_ops_data;
	unsigned int actual_min = td->o.iodepth_batch_complete_min == 0 ? 0 : min;
	unsigned int events = 0, want;
	int ret, i;

	if (max > d->depth)
		max = d->depth;
	do {
		while (d->nr_failed && events < max)
			d->events[events++] = d->failed[--d->nr_failed];
		if (events >= max)
			break;
		if (d->nr_queued)
			dbf_commit(td);
		if (!d->inflight) {
			if (d->nr_failed)
				continue;
			if (!d->nr_queued)
				break;
			usleep(10);
			continue;
		}
		want = actual_min > events ? actual_min - events : 0;
		if (want > d->inflight)
			want = d->inflight;
		ret = sys_dio_collect(d->ctx, d->reaped, want, max - events, t);
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			return events ? (int)events : -errno;
		}
		for (i = 0; i < ret; i++) {
			d->inflight--;
			d->events[events++] = dbf_complete(td, d->reaped[i]);
		}
		if (!ret && actual_min)
			usleep(10);
	} while (events < min);
	return events;
}

static struct io_u *dbf_event(struct thread_data *td, int event)
{
	struct dbf_data *d = td->io_ops_data;

	return d->events[event];
}

static struct ioengine_ops dbf_ops = {
	.name			= "dio_batch",
	.version		= FIO_IOOPS_VERSION,
	.flags			= FIO_RAWIO | FIO_NOEXTEND | FIO_ASYNCIO_SETS_ISSUE_TIME,
	.init			= dbf_init,
	.post_init		= dbf_post_init,
	.queue			= dbf_queue,
	.commit			= dbf_commit,
	.getevents		= dbf_getevents,
	.event			= dbf_event,
	.cleanup		= dbf_cleanup,
	.open_file		= dbf_open_file,
	.close_file		= dbf_close_file,
	.get_file_size		= dbf_get_file_size,
	.io_u_init		= dbf_io_u_init,
	.io_u_free		= dbf_io_u_free,
	.options		= options,
	.option_struct_size	= sizeof(struct dbf_options),
};

/*
 * fio looks for "ioengine" first, then calls get_ioengine(): there is no
 * "ioengine" symbol, so that a fio this was not built for gets no ops
 * (fio then fails the job: "dlsym") after the message saying why.
 */
void get_ioengine(struct ioengine_ops **ops);
__attribute__((visibility("default"))) void get_ioengine(struct ioengine_ops **ops)
{
	const char *running = dlsym(RTLD_DEFAULT, "fio_version_string");

	if (!running || strcmp(running, DIO_FIO_VERSION)) {
		fprintf(stderr, "fio-dio_batch: built for %s (FIO_IOOPS_VERSION %d), but this is %s: rebuild it against this fio (make fio-engine)\n",
			DIO_FIO_VERSION, FIO_IOOPS_VERSION, running ? running : "a fio that does not say its version");
		*ops = NULL;
		return;
	}
	*ops = &dbf_ops;
}
