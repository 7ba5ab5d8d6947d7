/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Spinlocks and barriers over the compiler's __atomic builtins, which
 * inline to the arch's own primitives: x86-64 `xchg` (implicitly locked),
 * ARM ldrex/strex + dmb, PowerPC lwarx/stwcx. + lwsync/sync.
 */
#ifndef _LINUX_SPINLOCK_H
#define _LINUX_SPINLOCK_H

#include <linux/types.h>

typedef struct {
	unsigned int slock;
} spinlock_t;

#define __SPIN_LOCK_UNLOCKED	{ 0 }
#define DEFINE_SPINLOCK(x)	spinlock_t x = __SPIN_LOCK_UNLOCKED

#define cpu_relax()		barrier()
#define smp_mb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define smp_wmb()		__atomic_thread_fence(__ATOMIC_RELEASE)	/* stronger: loads too */
#define smp_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define mb()			smp_mb()	/* no device memory to order besides */
#define smp_load_acquire(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define smp_store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)

static __always_inline void spin_lock_init(spinlock_t *lock)
{
	lock->slock = 0;
}

static __always_inline bool spin_trylock(spinlock_t *lock)
{
	return __atomic_exchange_n(&lock->slock, 1, __ATOMIC_ACQUIRE) == 0;
}

static __always_inline void spin_lock(spinlock_t *lock)
{
	while (!spin_trylock(lock)) {
		while (READ_ONCE(lock->slock))
			cpu_relax();
	}
}

static __always_inline void spin_unlock(spinlock_t *lock)
{
	__atomic_store_n(&lock->slock, 0, __ATOMIC_RELEASE);
}

/*
 * The _irqsave forms: kisim's guest takes no interrupts, so there is no
 * interrupt state to save (flags is 0) and they are the plain lock.
 */
#define spin_lock_irqsave(lock, flags)	do { (flags) = 0; spin_lock(lock); } while (0)
#define spin_unlock_irqrestore(lock, flags)	do { (void)(flags); spin_unlock(lock); } while (0)

static __always_inline int atomic_inc_return(int *v)
{
	return __atomic_add_fetch(v, 1, __ATOMIC_SEQ_CST);
}

static __always_inline int atomic_dec_return(int *v)
{
	return __atomic_sub_fetch(v, 1, __ATOMIC_SEQ_CST);
}

#endif
