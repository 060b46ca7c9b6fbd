// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: contexts: found or created for DIO_IOC_INIT, told by
 * DIO_IOC_STAT.
 *
 * A context is named by a 64-bit key in the caller's IPC namespace, as a
 * System V IPC key is, and is shared by every descriptor DIO_IOC_INIT
 * returns for that key.  Like a System V IPC object it has an owner, a
 * group and a mode; joining needs read and write permission (or
 * CAP_IPC_OWNER in the namespace's user namespace), and a context another
 * user owns is joined only when the caller says so (DIO_FOREIGN): a key
 * someone squatted is never joined by mistake.  DIO_IOC_STAT tells who owns
 * and created a context.  A DIO_PRIVATE context has no key and is reachable
 * only through its one descriptor (and copies of it).  A context dies with
 * its last descriptor.
 *
 * The descriptors themselves, and DIO_IOC_INIT that creates them, are
 * file.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/ipc_namespace.h>
#include <linux/nsproxy.h>
#include <linux/pid.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>

#include "dio_batch.h"

static DEFINE_MUTEX(dio_ctx_mutex);	/* dio_ctx_list, dio_ctx.users */
static LIST_HEAD(dio_ctx_list);
static struct kmem_cache *dio_ctx_cache;

static struct dio_ctx *dio_ctx_find(struct ipc_namespace *ns, u64 key)
{
	struct dio_ctx *ctx;

	lockdep_assert_held(&dio_ctx_mutex);
	list_for_each_entry(ctx, &dio_ctx_list, node)
		if (ctx->key == key && ctx->ipc_ns == ns)
			return ctx;
	return NULL;
}

/*
 * May the caller join @ctx?  Another user's context only with DIO_FOREIGN,
 * whatever its mode; then System V's ipcperms(), asking for read and write.
 */
static int dio_ctx_may_join(struct dio_ctx *ctx, unsigned int flags)
{
	umode_t granted = ctx->mode;

	if (!uid_eq(current_euid(), ctx->uid) && !(flags & DIO_FOREIGN))
		return -EACCES;
	if (uid_eq(current_euid(), ctx->uid))
		granted >>= 6;
	else if (in_group_p(ctx->gid))
		granted >>= 3;
	if ((granted & 6) == 6)
		return 0;
	return ns_capable(ctx->ipc_ns->user_ns, CAP_IPC_OWNER) ? 0 : -EACCES;
}

static struct dio_ctx *dio_ctx_alloc(u64 key, bool keyed, umode_t mode)
{
	struct dio_ctx *ctx;

	ctx = kmem_cache_zalloc(dio_ctx_cache, GFP_KERNEL);
	if (!ctx)
		return NULL;
	kref_init(&ctx->ref);
	ctx->users = 1;
	ctx->key = key;
	ctx->keyed = keyed;
	ctx->ipc_ns = dio_ipc_ns_get();
	ctx->uid = current_euid();
	ctx->gid = current_egid();
	ctx->cuid = ctx->uid;
	ctx->cgid = ctx->gid;
	ctx->cpid = get_pid(task_tgid(current));
	ctx->mode = mode ? mode : 0600;
	INIT_LIST_HEAD(&ctx->node);
	mutex_init(&ctx->lock);
	xa_init_flags(&ctx->handles, XA_FLAGS_ALLOC1);
	return ctx;
}

static void dio_ctx_release(struct kref *ref)
{
	struct dio_ctx *ctx = container_of(ref, struct dio_ctx, ref);

	WARN_ON_ONCE(!xa_empty(&ctx->handles));
	xa_destroy(&ctx->handles);
	mutex_destroy(&ctx->lock);
	put_pid(ctx->cpid);
	dio_ipc_ns_put(ctx->ipc_ns);
	kmem_cache_free(dio_ctx_cache, ctx);
}

/**
 * dio_ctx_put - drop a reference to a context's memory
 * @ctx: the context
 */
void dio_ctx_put(struct dio_ctx *ctx)
{
	kref_put(&ctx->ref, dio_ctx_release);
}

/**
 * dio_ctx_leave - a descriptor of a context leaves it
 * @ctx: the context
 *
 * The last descriptor takes the key away.  The descriptor's reference to
 * @ctx's memory is dropped on its own (dio_ctx_put()).
 */
void dio_ctx_leave(struct dio_ctx *ctx)
{
	mutex_lock(&dio_ctx_mutex);
	if (--ctx->users == 0)
		list_del_init(&ctx->node);
	mutex_unlock(&dio_ctx_mutex);
}

/*
 * Find or create the context @in names and count the caller as one more
 * user of it.
 */
static struct dio_ctx *dio_ctx_get_for_init(const struct dio_init *in)
{
	bool private = in->flags & DIO_PRIVATE;
	struct dio_ctx *ctx = NULL;
	int ret;

	mutex_lock(&dio_ctx_mutex);
	if (!private)
		ctx = dio_ctx_find(current->nsproxy->ipc_ns, in->key);
	if (ctx) {
		ret = in->flags & DIO_EXCL ? -EEXIST :
					      dio_ctx_may_join(ctx, in->flags);
		if (ret) {
			ctx = ERR_PTR(ret);
		} else {
			kref_get(&ctx->ref);
			ctx->users++;
		}
		goto out_unlock;
	}
	if (!private && !(in->flags & DIO_CREAT)) {
		ctx = ERR_PTR(-ENOENT);
		goto out_unlock;
	}
	ctx = dio_ctx_alloc(in->key, !private, in->mode);
	if (!ctx) {
		ctx = ERR_PTR(-ENOMEM);
		goto out_unlock;
	}
	if (!private)
		list_add(&ctx->node, &dio_ctx_list);
out_unlock:
	mutex_unlock(&dio_ctx_mutex);
	return ctx;
}

static int dio_init_check(const struct dio_init *in)
{
	if (in->flags & ~DIO_INIT_F_ALL)
		return -EINVAL;
	if (in->reserved0 || in->reserved[0] || in->reserved[1])
		return -EINVAL;
	if (in->mode & ~0777)
		return -EINVAL;
	if (in->flags & DIO_PRIVATE)
		return (in->key || (in->flags & ~DIO_PRIVATE)) ? -EINVAL : 0;
	if (!in->key)
		return -EINVAL;
	if ((in->flags & DIO_EXCL) && !(in->flags & DIO_CREAT))
		return -EINVAL;
	if ((in->flags & DIO_EXCL) && (in->flags & DIO_FOREIGN))
		return -EINVAL;
	return 0;
}

/**
 * dio_ctx_join - the context DIO_IOC_INIT names, found or created
 * @in: INIT's struct, copied in
 *
 * Checks @in, then finds the context its key names in the caller's IPC
 * namespace, or creates it (a private one always), and counts the caller
 * as one more of its users (dio_ctx_leave() undoes that).
 *
 * Return: the context, with a reference the caller drops with
 * dio_ctx_put(), or an ERR_PTR() of one of DIO_IOC_INIT's errors (struct
 * dio_init in uapi/linux/dio_batch.h).
 */
struct dio_ctx *dio_ctx_join(const struct dio_init *in)
{
	int ret;

	ret = dio_init_check(in);
	if (ret)
		return ERR_PTR(ret);
	return dio_ctx_get_for_init(in);
}

/**
 * dio_ctx_stat_ioctl - DIO_IOC_STAT: owner, creator, mode and use of a context
 * @df: the calling descriptor
 * @arg: struct dio_stat, copied in and filled (dio_cmd_run() writes it back)
 * @uarg: the user's struct (unused)
 *
 * Ids are given in the caller's user and pid namespaces.
 *
 * Return: as the comment of struct dio_stat in uapi/linux/dio_batch.h
 * says of DIO_IOC_STAT, errors included.
 */
long dio_ctx_stat_ioctl(struct dio_file *df, void *arg, void __user *uarg)
{
	struct user_namespace *ns = current_user_ns();
	struct dio_ctx *ctx = df->ctx;
	struct dio_stat *st = arg;
	struct dio_handle *h;
	unsigned long id;

	if (memchr_inv(st->reserved, 0, sizeof(st->reserved)))
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->flags = ctx->keyed ? 0 : DIO_STAT_PRIVATE;
	st->key = ctx->key;
	st->uid = from_kuid_munged(ns, ctx->uid);
	st->gid = from_kgid_munged(ns, ctx->gid);
	st->cuid = from_kuid_munged(ns, ctx->cuid);
	st->cgid = from_kgid_munged(ns, ctx->cgid);
	st->mode = ctx->mode;
	st->cpid = pid_vnr(ctx->cpid);
	mutex_lock(&dio_ctx_mutex);
	st->nr_descriptors = ctx->users;
	mutex_unlock(&dio_ctx_mutex);
	mutex_lock(&ctx->lock);
	xa_for_each(&ctx->handles, id, h)
		st->nr_handles++;
	mutex_unlock(&ctx->lock);
	return 0;
}

/**
 * dio_ctx_module_init - create the context cache
 *
 * Return: 0 or -ENOMEM.
 */
int dio_ctx_module_init(void)
{
	dio_ctx_cache = KMEM_CACHE(dio_ctx, SLAB_ACCOUNT);
	return dio_ctx_cache ? 0 : -ENOMEM;
}

/**
 * dio_ctx_module_exit - destroy the context cache; every context is gone
 */
void dio_ctx_module_exit(void)
{
	kmem_cache_destroy(dio_ctx_cache);
}
