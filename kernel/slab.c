// SPDX-License-Identifier: GPL-2.0
/*
 * Page allocator and slab allocator.
 *
 * The heap is HEAP_PAGES pages in .bss. A page given to a cache records
 * the cache in its struct page, so kfree() finds the cache of any object.
 * Each cache keeps a free list threaded through its free objects; pages
 * are never given back. kmalloc() picks the smallest power-of-two class
 * that fits ("size-8" .. "size-4096").
 *
 * With CONFIG_KMEMTRACE every allocation and free is a marker site in the
 * kmemtrace format (type_id, call_site, ptr, bytes_req, bytes_alloc,
 * gfp_flags, node); the same events are also tracepoints.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/marker.h>
#include <trace/kmem.h>

DEFINE_TRACE(kmalloc);
DEFINE_TRACE(kfree);
DEFINE_TRACE(kmem_cache_alloc);
DEFINE_TRACE(kmem_cache_free);

struct page {
	struct kmem_cache *slab_cache;	/* NULL: free or not a slab page */
	u32 inuse;			/* objects handed out from this page */
};

struct kmem_cache {
	const char *name;
	u32 size;			/* object size as allocated (bytes_alloc) */
	u32 object_size;		/* size asked for at creation */
	void (*ctor)(void *);
	spinlock_t lock;
	void *freelist;
	u32 nr_pages;
	u32 nr_active;
	struct kmem_cache *next;
};

static u8 heap[HEAP_PAGES * PAGE_SIZE] __aligned(PAGE_SIZE);
static struct page mem_map[HEAP_PAGES];
static u32 next_free_page;
static DEFINE_SPINLOCK(page_lock);

static struct kmem_cache cache_cache;		/* the cache of struct kmem_cache */
static struct kmem_cache kmalloc_caches[KMALLOC_MAX_SHIFT - KMALLOC_MIN_SHIFT + 1];
static const char *const kmalloc_names[] = {
	"size-8", "size-16", "size-32", "size-64", "size-128",
	"size-256", "size-512", "size-1024", "size-2048", "size-4096",
};
static struct kmem_cache *cache_chain;
static DEFINE_SPINLOCK(cache_chain_lock);

static struct page *virt_to_page(const void *p)
{
	unsigned long off = (unsigned long)p - (unsigned long)heap;

	if (off >= sizeof(heap))
		return NULL;
	return &mem_map[off >> PAGE_SHIFT];
}

static void *alloc_page(void)
{
	void *p = NULL;

	spin_lock(&page_lock);
	if (next_free_page < HEAP_PAGES)
		p = heap + (unsigned long)next_free_page++ * PAGE_SIZE;
	spin_unlock(&page_lock);
	return p;
}

static void cache_setup(struct kmem_cache *cachep, const char *name, size_t size,
			size_t align, void (*ctor)(void *))
{
	size_t min = sizeof(void *);

	if (align < min)
		align = min;
	cachep->name = name;
	cachep->object_size = size;
	cachep->size = (size + align - 1) & ~(align - 1);
	if (cachep->size < min)
		cachep->size = min;
	cachep->ctor = ctor;
	cachep->freelist = NULL;
	spin_lock_init(&cachep->lock);
	spin_lock(&cache_chain_lock);
	cachep->next = cache_chain;
	cache_chain = cachep;
	spin_unlock(&cache_chain_lock);
}

void kmem_cache_init(void)
{
	unsigned int i;

	cache_setup(&cache_cache, "kmem_cache", sizeof(struct kmem_cache), 0, NULL);
	for (i = 0; i < ARRAY_SIZE(kmalloc_caches); i++)
		cache_setup(&kmalloc_caches[i], kmalloc_names[i],
			    1UL << (i + KMALLOC_MIN_SHIFT), 0, NULL);
}

/* Called with cachep->lock held: carve one more page into objects. */
static bool cache_grow(struct kmem_cache *cachep)
{
	u8 *page = alloc_page();
	u32 n, i;

	if (!page)
		return false;
	virt_to_page(page)->slab_cache = cachep;
	n = PAGE_SIZE / cachep->size;
	for (i = n; i-- > 0;) {
		void **obj = (void **)(page + i * cachep->size);
		*obj = cachep->freelist;
		cachep->freelist = obj;
	}
	cachep->nr_pages++;
	return true;
}

static void *__cache_alloc(struct kmem_cache *cachep)
{
	void **obj;

	spin_lock(&cachep->lock);
	if (!cachep->freelist && !cache_grow(cachep)) {
		spin_unlock(&cachep->lock);
		return NULL;
	}
	obj = cachep->freelist;
	cachep->freelist = *obj;
	cachep->nr_active++;
	virt_to_page(obj)->inuse++;
	spin_unlock(&cachep->lock);
	if (cachep->ctor)
		cachep->ctor(obj);
	return obj;
}

static void __cache_free(struct kmem_cache *cachep, void *objp)
{
	void **obj = objp;

	spin_lock(&cachep->lock);
	*obj = cachep->freelist;
	cachep->freelist = obj;
	cachep->nr_active--;
	virt_to_page(obj)->inuse--;
	spin_unlock(&cachep->lock);
}

struct kmem_cache *kmem_cache_create(const char *name, size_t size, size_t align,
				     unsigned long flags, void (*ctor)(void *))
{
	struct kmem_cache *cachep;

	(void)flags;
	if (!size || size > KMALLOC_MAX_SIZE)
		return NULL;
	cachep = __cache_alloc(&cache_cache);
	if (cachep)
		cache_setup(cachep, name, size, align, ctor);
	return cachep;
}

size_t kmem_cache_size(struct kmem_cache *cachep)
{
	return cachep->size;
}

noinline void *kmem_cache_alloc(struct kmem_cache *cachep, gfp_t flags)
{
	void *ret = __cache_alloc(cachep);

#ifdef CONFIG_KMEMTRACE
	trace_mark(kmem_cache_alloc, "type_id %d call_site %lu ptr %lu "
		   "bytes_req %lu bytes_alloc %lu gfp_flags %lu node %d",
		   KMEMTRACE_TYPE_CACHE, _RET_IP_, (unsigned long)ret,
		   (unsigned long)cachep->object_size, (unsigned long)cachep->size,
		   (unsigned long)flags, -1);
#endif
	trace_kmem_cache_alloc(_RET_IP_, ret, cachep->object_size, cachep->size, flags);
	return ret;
}

/*
 * Frees are recorded before the object goes back, as v5.10's kfree() does
 * (trace_kfree() first): another CPU may take it from the shared freelist
 * at once, and its allocation must not be stamped before this free.
 */
noinline void kmem_cache_free(struct kmem_cache *cachep, void *objp)
{
#ifdef CONFIG_KMEMTRACE
	trace_mark(kmem_cache_free, "type_id %d call_site %lu ptr %lu",
		   KMEMTRACE_TYPE_CACHE, _RET_IP_, (unsigned long)objp);
#endif
	trace_kmem_cache_free(_RET_IP_, objp);
	__cache_free(cachep, objp);
}

static struct kmem_cache *kmalloc_slab(size_t size)
{
	unsigned int i = 0;

	while ((1UL << (i + KMALLOC_MIN_SHIFT)) < size)
		i++;
	return &kmalloc_caches[i];
}

noinline void *kmalloc(size_t size, gfp_t flags)
{
	struct kmem_cache *cachep;
	void *ret;

	if (size > KMALLOC_MAX_SIZE)
		return NULL;
	cachep = kmalloc_slab(size);
	ret = __cache_alloc(cachep);
#ifdef CONFIG_KMEMTRACE
	trace_mark(kmalloc, "type_id %d call_site %lu ptr %lu "
		   "bytes_req %lu bytes_alloc %lu gfp_flags %lu node %d",
		   KMEMTRACE_TYPE_KMALLOC, _RET_IP_, (unsigned long)ret,
		   (unsigned long)size, (unsigned long)cachep->size,
		   (unsigned long)flags, -1);
#endif
	trace_kmalloc(_RET_IP_, ret, size, cachep->size, flags);
	return ret;
}

size_t ksize(const void *objp)
{
	struct page *page = virt_to_page(objp);

	return page && page->slab_cache ? page->slab_cache->size : 0;
}

noinline void kfree(const void *objp)
{
	struct page *page;

	if (!objp)
		return;
	page = virt_to_page(objp);
	if (!page || !page->slab_cache)
		panic("kfree(%p): not a slab object", objp);
#ifdef CONFIG_KMEMTRACE
	trace_mark(kfree, "type_id %d call_site %lu ptr %lu",
		   KMEMTRACE_TYPE_KMALLOC, _RET_IP_, (unsigned long)objp);
#endif
	trace_kfree(_RET_IP_, objp);
	__cache_free(page->slab_cache, (void *)objp);
}
