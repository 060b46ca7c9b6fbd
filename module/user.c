// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: what each user has pinned.
 *
 * User pages stay pinned from SUBMIT until their I/O completes.  So that no
 * user can pin without bound (descriptors cost nothing, and a page pinned
 * through many iovecs adds to its refcount each time: one reference on
 * 6.1, GUP_PIN_COUNTING_BIAS from 6.4 on, where FOLL_PIN is used), every
 * request is charged, before it pins anything, the pages it will pin,
 * whole pages per pin: a page pinned twice counts twice.  The
 * charge is dropped when the pages are released at completion.  The
 * ceiling is the max_user_pinned_mb module parameter (0: none), per real
 * uid across every namespace; callers with CAP_IPC_LOCK are not charged,
 * as io_uring does not charge them for registered buffers.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "dio_batch.h"

static DEFINE_HASHTABLE(dio_users, 6);
static DEFINE_SPINLOCK(dio_users_lock);	/* dio_users, dio_user.ref to 0 */

static struct dio_user *dio_user_find(kuid_t uid)
{
	struct dio_user *u;

	lockdep_assert_held(&dio_users_lock);
	hash_for_each_possible(dio_users, u, node, __kuid_val(uid))
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/**
 * dio_user_get - the pinned-memory account of the caller
 *
 * Return: the account of the caller's real uid with a reference; NULL when
 * the caller is not charged (CAP_IPC_LOCK, or no ceiling is set); or
 * ERR_PTR(-ENOMEM).
 */
struct dio_user *dio_user_get(void)
{
	kuid_t uid = current_uid();
	struct dio_user *u, *new;

	if (!READ_ONCE(dio_max_user_pinned_mb) ||
	    ns_capable_noaudit(&init_user_ns, CAP_IPC_LOCK))
		return NULL;
	spin_lock(&dio_users_lock);
	u = dio_user_find(uid);
	if (u)
		refcount_inc(&u->ref);
	spin_unlock(&dio_users_lock);
	if (u)
		return u;

	new = kzalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
	if (!new)
		return ERR_PTR(-ENOMEM);
	new->uid = uid;
	refcount_set(&new->ref, 1);
	atomic_long_set(&new->pinned, 0);
	spin_lock(&dio_users_lock);
	u = dio_user_find(uid);		/* another caller may have added it */
	if (u) {
		refcount_inc(&u->ref);
	} else {
		hash_add(dio_users, &new->node, __kuid_val(uid));
		u = new;
		new = NULL;
	}
	spin_unlock(&dio_users_lock);
	kfree(new);
	return u;
}

/**
 * dio_user_put - drop a reference to an account
 * @u: the account, or NULL
 */
void dio_user_put(struct dio_user *u)
{
	/* __cond_lock: sparse learns the lock is held when it returns true. */
	if (!u || !__cond_lock(&dio_users_lock,
			       refcount_dec_and_lock(&u->ref, &dio_users_lock)))
		return;
	hash_del(&u->node);
	spin_unlock(&dio_users_lock);
	WARN_ON_ONCE(atomic_long_read(&u->pinned));
	kfree(u);
}

/**
 * dio_user_charge - charge @bytes of pinned pages to a user
 * @u: the account (NULL: not charged)
 * @bytes: whole pages
 *
 * Return: 0; -EAGAIN when the ceiling would be passed while the user has
 * pinned I/O in flight (reaping completions makes room); -ENOMEM when the
 * request alone passes it.
 */
int dio_user_charge(struct dio_user *u, unsigned long bytes)
{
	unsigned long limit = (unsigned long)READ_ONCE(dio_max_user_pinned_mb) << 20;
	long cur;

	if (!u)
		return 0;
	if (limit && bytes > limit)
		return -ENOMEM;
	cur = atomic_long_read(&u->pinned);
	do {
		if (limit && cur + bytes > limit)
			return -EAGAIN;
	} while (!atomic_long_try_cmpxchg(&u->pinned, &cur, cur + bytes));
	return 0;
}

/**
 * dio_user_uncharge - give back what dio_user_charge() took
 * @u: the account (NULL: not charged)
 * @bytes: what was charged
 */
void dio_user_uncharge(struct dio_user *u, unsigned long bytes)
{
	if (u)
		atomic_long_sub(bytes, &u->pinned);
}
