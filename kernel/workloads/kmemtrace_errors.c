// SPDX-License-Identifier: GPL-2.0
/*
 * kmem_errors (kmemtrace_errors_run): clean slab churn, then one of each allocator misuse
 * the kmemtrace report must find (Documentation/vm/kmemtrace.txt in the
 * kmemtrace patch: "using slab free functions on kmalloc'ed memory",
 * "allocating less memory than requested"; plus double and unknown frees
 * and a leak).
 *
 *	churn: ERR_TASKS tasks, task i for k in 0..iterations-1:
 *	    len = 32 + (k + i) % 64; p = kmalloc(len); kfree(p)
 *	    q = kmem_cache_alloc(err cache of 48-byte objects); kmem_cache_free(q)
 *	    acc = mix32(acc + len)
 *	checksum = mix32(fold_results(acc[0..ERR_TASKS-1]) ^ 0x6b6d656d)   ("kmem")
 *
 * Then, once the tasks are done, from init, in this order (each chosen so
 * the allocator itself survives: the error cache is never allocated from
 * again):
 *	kfree() of a kmem_cache_alloc'ed object            (cache object, kmalloc free)
 *	kmem_cache_free() of a kmalloc'ed object           (kmalloc object, slab free)
 *	kmem_cache_free() twice on one object              (double free)
 *	kmem_cache_free() of a pointer inside an object    (unknown pointer)
 *	kmalloc(100) never freed, and the object above     (never freed)
 *	a kmalloc event with bytes_alloc < bytes_req, as a broken allocator
 *	path would emit it (the tracepoint fired directly)  (alloc < request)
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <trace/kmem.h>
#include <kisim/workload.h>

#define ERR_OBJECT	48
#define ERR_TASKS	4

static u32 err_iterations;
static u32 err_results[ERR_TASKS];
static struct kmem_cache *err_cachep;

static int churn_task(void *arg)
{
	u32 i = (u32)(unsigned long)arg, acc = 0, k;

	for (k = 0; k < err_iterations; k++) {
		u32 len = 32 + (k + i) % 64;
		u8 *p = kmalloc(len, GFP_KERNEL);
		u8 *q;

		kfree(p);
		q = kmem_cache_alloc(err_cachep, GFP_KERNEL);
		kmem_cache_free(err_cachep, q);
		acc = mix32(acc + len);
		if (k % 32 == 31)
			schedule();
	}
	err_results[i] = acc;
	return 0;
}

u32 kmemtrace_errors_run(u32 iterations)
{
	struct kmem_cache *cache = kmem_cache_create("kmemtrace_err", ERR_OBJECT, 0, 0, NULL);
	u8 *c, *d, *e, *p, *q;
	u32 sum;

	if (!cache)
		panic("kmemtrace_errors: no cache");
	err_cachep = cache;
	err_iterations = iterations;
	sum = run_tasks(churn_task, "kmemerr", err_results, ERR_TASKS);
	c = kmem_cache_alloc(cache, GFP_KERNEL);
	d = kmem_cache_alloc(cache, GFP_KERNEL);
	e = kmem_cache_alloc(cache, GFP_KERNEL);
	p = kmalloc(ERR_OBJECT, GFP_KERNEL);
	(void)kmalloc(100, GFP_KERNEL);			/* leak */
	kfree(c);					/* cache object, kmalloc free */
	kmem_cache_free(cache, p);			/* kmalloc object, slab free */
	kmem_cache_free(cache, d);
	kmem_cache_free(cache, d);			/* double free */
	kmem_cache_free(cache, e + 8);			/* unknown pointer; e leaks */
	q = kmalloc(64, GFP_KERNEL);
	kfree(q);
	trace_kmalloc((unsigned long)kmemtrace_errors_run, q, 100, 64, GFP_KERNEL);
	trace_kfree((unsigned long)kmemtrace_errors_run, q);
	return mix32(sum ^ 0x6b6d656dU);
}
