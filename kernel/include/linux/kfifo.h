/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Generic FIFOs (include/linux/kfifo.h, v5.10; lib/kfifo.c, brought by a
 * module). A kfifo is a ring of a power-of-two number of elements with
 * free-running in and out counters: its length is in - out, the element
 * at counter c is at c & mask. One reader and one writer need no lock.
 *
 * The macros are type-generic: a fifo is a struct whose union says the
 * element type (type/const_type/ptr) and the record header size
 * (sizeof(*rectype): 0 for a fifo of elements, 1 or 2 for a fifo of
 * records, each stored behind its length in that many bytes) next to the
 * struct __kfifo the functions work on. A fifo of fixed size carries its
 * buffer (buf[size]); a pointer fifo (buf[0]) gets one from kfifo_alloc()
 * or kfifo_init(). __is_kfifo_ptr() tells them apart by size.
 */
#ifndef _LINUX_KFIFO_H
#define _LINUX_KFIFO_H

#include <linux/kernel.h>
#include <linux/spinlock.h>
#include <linux/stddef.h>
#include <linux/scatterlist.h>
#include <linux/errno.h>

struct __kfifo {
	unsigned int	in;
	unsigned int	out;
	unsigned int	mask;
	unsigned int	esize;
	void		*data;
};

#define __STRUCT_KFIFO_COMMON(datatype, recsize, ptrtype)		\
	union {								\
		struct __kfifo	kfifo;					\
		datatype	*type;					\
		const datatype	*const_type;				\
		char		(*rectype)[recsize];			\
		ptrtype		*ptr;					\
		ptrtype const	*ptr_const;				\
	}

/* A size that is not a power of two of at least 2 is a compile error. */
#define __STRUCT_KFIFO(type, size, recsize, ptrtype)			\
{									\
	__STRUCT_KFIFO_COMMON(type, recsize, ptrtype);			\
	type		buf[((size < 2) || (size & (size - 1))) ? -1 : size]; \
}

#define STRUCT_KFIFO(type, size)	struct __STRUCT_KFIFO(type, size, 0, type)

#define __STRUCT_KFIFO_PTR(type, recsize, ptrtype)			\
{									\
	__STRUCT_KFIFO_COMMON(type, recsize, ptrtype);			\
	type		buf[0];						\
}

#define STRUCT_KFIFO_PTR(type)	struct __STRUCT_KFIFO_PTR(type, 0, type)

/* The byte fifo with a buffer of its own. */
struct kfifo __STRUCT_KFIFO_PTR(unsigned char, 0, void);

#define STRUCT_KFIFO_REC_1(size)	struct __STRUCT_KFIFO(unsigned char, size, 1, void)
#define STRUCT_KFIFO_REC_2(size)	struct __STRUCT_KFIFO(unsigned char, size, 2, void)

/* Record fifos: records up to 255 (1-byte header) or 65535 bytes. */
struct kfifo_rec_ptr_1 __STRUCT_KFIFO_PTR(unsigned char, 1, void);
struct kfifo_rec_ptr_2 __STRUCT_KFIFO_PTR(unsigned char, 2, void);

#define __is_kfifo_ptr(fifo)						\
	(sizeof(*fifo) == sizeof(STRUCT_KFIFO_PTR(typeof(*(fifo)->type))))

#define DECLARE_KFIFO_PTR(fifo, type)	STRUCT_KFIFO_PTR(type) fifo
#define DECLARE_KFIFO(fifo, type, size)	STRUCT_KFIFO(type, size) fifo

/* Initialize a DECLARE_KFIFO fifo (a pointer fifo: empty, no buffer). */
#define INIT_KFIFO(fifo)						\
(void)({								\
	typeof(&(fifo)) __tmp = &(fifo);				\
	struct __kfifo *__kfifo = &__tmp->kfifo;			\
	__kfifo->in = 0;						\
	__kfifo->out = 0;						\
	__kfifo->mask = __is_kfifo_ptr(__tmp) ? 0 : ARRAY_SIZE(__tmp->buf) - 1; \
	__kfifo->esize = sizeof(*__tmp->buf);				\
	__kfifo->data = __is_kfifo_ptr(__tmp) ? NULL : __tmp->buf;	\
})

#define DEFINE_KFIFO(fifo, type, size)					\
	DECLARE_KFIFO(fifo, type, size) =				\
	(typeof(fifo)) {						\
		{							\
			{						\
			.in	= 0,					\
			.out	= 0,					\
			.mask	= __is_kfifo_ptr(&(fifo)) ? 0 : ARRAY_SIZE((fifo).buf) - 1, \
			.esize	= sizeof(*(fifo).buf),			\
			.data	= __is_kfifo_ptr(&(fifo)) ? NULL : (fifo).buf, \
			}						\
		}							\
	}

static inline unsigned int __must_check
__kfifo_uint_must_check_helper(unsigned int val)
{
	return val;
}

static inline int __must_check
__kfifo_int_must_check_helper(int val)
{
	return val;
}

#define kfifo_initialized(fifo)	((fifo)->kfifo.mask)
#define kfifo_esize(fifo)	((fifo)->kfifo.esize)
#define kfifo_recsize(fifo)	(sizeof(*(fifo)->rectype))
#define kfifo_size(fifo)	((fifo)->kfifo.mask + 1)

#define kfifo_reset(fifo)						\
(void)({								\
	typeof((fifo) + 1) __tmp = (fifo);				\
	__tmp->kfifo.in = __tmp->kfifo.out = 0;				\
})

#define kfifo_reset_out(fifo)						\
(void)({								\
	typeof((fifo) + 1) __tmp = (fifo);				\
	__tmp->kfifo.out = __tmp->kfifo.in;				\
})

#define kfifo_len(fifo)							\
({									\
	typeof((fifo) + 1) __tmpl = (fifo);				\
	__tmpl->kfifo.in - __tmpl->kfifo.out;				\
})

#define kfifo_is_empty(fifo)						\
({									\
	typeof((fifo) + 1) __tmpq = (fifo);				\
	__tmpq->kfifo.in == __tmpq->kfifo.out;				\
})

#define kfifo_is_full(fifo)						\
({									\
	typeof((fifo) + 1) __tmpq = (fifo);				\
	kfifo_len(__tmpq) > __tmpq->kfifo.mask;				\
})

/* Free elements; for a record fifo, the largest record that would fit. */
#define kfifo_avail(fifo)						\
__kfifo_uint_must_check_helper(						\
({									\
	typeof((fifo) + 1) __tmpq = (fifo);				\
	const size_t __recsize = sizeof(*__tmpq->rectype);		\
	unsigned int __avail = kfifo_size(__tmpq) - kfifo_len(__tmpq);	\
	(__recsize) ? ((__avail <= __recsize) ? 0 :			\
		__kfifo_max_r(__avail - __recsize, __recsize)) :	\
		__avail;						\
})									\
)

/* Drop the next element or record. */
#define kfifo_skip(fifo)						\
(void)({								\
	typeof((fifo) + 1) __tmp = (fifo);				\
	const size_t __recsize = sizeof(*__tmp->rectype);		\
	struct __kfifo *__kfifo = &__tmp->kfifo;			\
	if (__recsize)							\
		__kfifo_skip_r(__kfifo, __recsize);			\
	else								\
		__kfifo->out++;						\
})

/* The size in bytes of the next record (of all elements, for a plain fifo). */
#define kfifo_peek_len(fifo)						\
__kfifo_uint_must_check_helper(						\
({									\
	typeof((fifo) + 1) __tmp = (fifo);				\
	const size_t __recsize = sizeof(*__tmp->rectype);		\
	struct __kfifo *__kfifo = &__tmp->kfifo;			\
	(!__recsize) ? kfifo_len(__tmp) * sizeof(*__tmp->type) :	\
	__kfifo_len_r(__kfifo, __recsize);				\
})									\
)

/* Give a pointer fifo a buffer of size elements, rounded up to a power of 2. */
#define kfifo_alloc(fifo, size, gfp_mask)				\
__kfifo_int_must_check_helper(						\
({									\
	typeof((fifo) + 1) __tmp = (fifo);				\
	struct __kfifo *__kfifo = &__tmp->kfifo;			\
	__is_kfifo_ptr(__tmp) ?						\
	__kfifo_alloc(__kfifo, size, sizeof(*__tmp->type), gfp_mask) :	\
	-EINVAL;							\
})									\
)

#define kfifo_free(fifo)						\
({									\
	typeof((fifo) + 1) __tmp = (fifo);				\
	struct __kfifo *__kfifo = &__tmp->kfifo;			\
	if (__is_kfifo_ptr(__tmp))					\
		__kfifo_free(__kfifo);					\
})

/* Use size bytes at buffer, rounded down to a power of 2 of elements. */
#define kfifo_init(fifo, buffer, size)					\
({									\
	typeof((fifo) + 1) __tmp = (fifo);				\
	struct __kfifo *__kfifo = &__tmp->kfifo;			\
	__is_kfifo_ptr(__tmp) ?						\
	__kfifo_init(__kfifo, buffer, size, sizeof(*__tmp->type)) :	\
	-EINVAL;							\
})

/* The element's storage: the fifo's own buffer, or the allocated one. */
#define __kfifo_buffer(__tmp, __kfifo)					\
	(__is_kfifo_ptr(__tmp) ? ((typeof(__tmp->type))(__kfifo)->data) : (__tmp->buf))

/* Put one element; 0 when the fifo is full. */
#define kfifo_put(fifo, val)						\
({									\
	typeof((fifo) + 1) __tmp = (fifo);				\
	typeof(*__tmp->const_type) __val = (val);			\
	unsigned int __ret;						\
	size_t __recsize = sizeof(*__tmp->rectype);			\
	struct __kfifo *__kfifo = &__tmp->kfifo;			\
	if (__recsize)							\
		__ret = __kfifo_in_r(__kfifo, &__val, sizeof(__val),	\
			__recsize);					\
	else {								\
		__ret = !kfifo_is_full(__tmp);				\
		if (__ret) {						\
			__kfifo_buffer(__tmp, __kfifo)[__kfifo->in & __tmp->kfifo.mask] = \
				*(typeof(__tmp->type))&__val;		\
			smp_wmb();					\
			__kfifo->in++;					\
		}							\
	}								\
	__ret;								\
})

/*
 * Take (take: 1) or peek at (0) one element into *val; 0 when the fifo is
 * empty. A record fifo's next record, cut to the size of *val.
 */
#define __kfifo_get(fifo, val, take)					\
__kfifo_uint_must_check_helper(						\
({									\
	typeof((fifo) + 1) __tmp = (fifo);				\
	typeof(__tmp->ptr) __val = (val);				\
	unsigned int __ret;						\
	const size_t __recsize = sizeof(*__tmp->rectype);		\
	struct __kfifo *__kfifo = &__tmp->kfifo;			\
	if (__recsize)							\
		__ret = (take ? __kfifo_out_r : __kfifo_out_peek_r)(	\
			__kfifo, __val, sizeof(*__val), __recsize);	\
	else {								\
		__ret = !kfifo_is_empty(__tmp);				\
		if (__ret) {						\
			*(typeof(__tmp->type))__val =			\
				__kfifo_buffer(__tmp, __kfifo)[__kfifo->out & __tmp->kfifo.mask]; \
			smp_wmb();					\
			__kfifo->out += take;				\
		}							\
	}								\
	__ret;								\
})									\
)

#define kfifo_get(fifo, val)	__kfifo_get(fifo, val, 1)
#define kfifo_peek(fifo, val)	__kfifo_get(fifo, val, 0)

/*
 * Call fn(&fifo->kfifo, args...) for a fifo of elements, fn_r(..., recsize)
 * for a record fifo. Inside args, __tmp is the fifo (typed).
 */
#define __kfifo_call(fifo, fn, fn_r, args...)				\
({									\
	typeof((fifo) + 1) __tmp = (fifo);				\
	const size_t __recsize = sizeof(*__tmp->rectype);		\
	struct __kfifo *__kfifo = &__tmp->kfifo;			\
	(__recsize) ? fn_r(__kfifo, args, __recsize) : fn(__kfifo, args);	\
})

/* ptr converted as an assignment to a variable of type would (a warning if it cannot). */
#define __kfifo_as(type, ptr)	({ type __p = (ptr); __p; })

/* Put up to n elements (one record of n bytes, or none); returns how many. */
#define kfifo_in(fifo, buf, n)						\
	__kfifo_call(fifo, __kfifo_in, __kfifo_in_r,			\
		     __kfifo_as(typeof(__tmp->ptr_const), buf), (unsigned long)(n))

#define kfifo_in_spinlocked(fifo, buf, n, lock)				\
({									\
	unsigned long __flags;						\
	unsigned int __ret;						\
	spin_lock_irqsave(lock, __flags);				\
	__ret = kfifo_in(fifo, buf, n);					\
	spin_unlock_irqrestore(lock, __flags);				\
	__ret;								\
})

/* Take up to n elements (the next record, cut to n bytes); returns how many. */
#define kfifo_out(fifo, buf, n)						\
__kfifo_uint_must_check_helper(						\
	__kfifo_call(fifo, __kfifo_out, __kfifo_out_r,			\
		     __kfifo_as(typeof(__tmp->ptr), buf), (unsigned long)(n)))

#define kfifo_out_spinlocked(fifo, buf, n, lock)			\
__kfifo_uint_must_check_helper(						\
({									\
	unsigned long __flags;						\
	unsigned int __ret;						\
	spin_lock_irqsave(lock, __flags);				\
	__ret = kfifo_out(fifo, buf, n);				\
	spin_unlock_irqrestore(lock, __flags);				\
	__ret;								\
})									\
)

/* kfifo_out without taking them. */
#define kfifo_out_peek(fifo, buf, n)					\
__kfifo_uint_must_check_helper(						\
	__kfifo_call(fifo, __kfifo_out_peek, __kfifo_out_peek_r,	\
		     __kfifo_as(typeof(__tmp->ptr), buf), (unsigned long)(n)))

/* From user memory: len bytes at most; *copied says how many; -EFAULT on a fault. */
#define kfifo_from_user(fifo, from, len, copied)			\
__kfifo_int_must_check_helper(						\
	__kfifo_call(fifo, __kfifo_from_user, __kfifo_from_user_r,	\
		     __kfifo_as(const void __user *, from), (unsigned int)(len), \
		     __kfifo_as(unsigned int *, copied)))

#define kfifo_to_user(fifo, to, len, copied)				\
__kfifo_int_must_check_helper(						\
	__kfifo_call(fifo, __kfifo_to_user, __kfifo_to_user_r,		\
		     __kfifo_as(void __user *, to), (unsigned int)(len),	\
		     __kfifo_as(unsigned int *, copied)))

/*
 * DMA into the fifo: describe up to len bytes of free space (the part up
 * to the end of the ring, then its start) in at most nents entries of sgl;
 * returns the entries used. kfifo_dma_in_finish(fifo, len) then counts
 * what the device wrote. The same the other way for kfifo_dma_out_*.
 */
#define kfifo_dma_in_prepare(fifo, sgl, nents, len)			\
	__kfifo_call(fifo, __kfifo_dma_in_prepare, __kfifo_dma_in_prepare_r, \
		     __kfifo_as(struct scatterlist *, sgl), (int)(nents), (unsigned int)(len))

#define kfifo_dma_out_prepare(fifo, sgl, nents, len)			\
	__kfifo_call(fifo, __kfifo_dma_out_prepare, __kfifo_dma_out_prepare_r, \
		     __kfifo_as(struct scatterlist *, sgl), (int)(nents), (unsigned int)(len))

/* Count len bytes written by the device (a record of len bytes). */
#define kfifo_dma_in_finish(fifo, len)					\
(void)({								\
	typeof((fifo) + 1) __tmp = (fifo);				\
	unsigned int __len = (len);					\
	const size_t __recsize = sizeof(*__tmp->rectype);		\
	struct __kfifo *__kfifo = &__tmp->kfifo;			\
	if (__recsize)							\
		__kfifo_dma_in_finish_r(__kfifo, __len, __recsize);	\
	else								\
		__kfifo->in += __len / sizeof(*__tmp->type);		\
})

/* Drop len bytes the device read (the next record, whatever len). */
#define kfifo_dma_out_finish(fifo, len)					\
(void)({								\
	typeof((fifo) + 1) __tmp = (fifo);				\
	unsigned int __len = (len);					\
	const size_t __recsize = sizeof(*__tmp->rectype);		\
	struct __kfifo *__kfifo = &__tmp->kfifo;			\
	if (__recsize)							\
		__kfifo_dma_out_finish_r(__kfifo, __recsize);		\
	else								\
		__kfifo->out += __len / sizeof(*__tmp->type);		\
})

extern int __kfifo_alloc(struct __kfifo *fifo, unsigned int size,
	size_t esize, gfp_t gfp_mask);
extern void __kfifo_free(struct __kfifo *fifo);
extern int __kfifo_init(struct __kfifo *fifo, void *buffer,
	unsigned int size, size_t esize);
extern unsigned int __kfifo_in(struct __kfifo *fifo,
	const void *buf, unsigned int len);
extern unsigned int __kfifo_out(struct __kfifo *fifo,
	void *buf, unsigned int len);
extern int __kfifo_from_user(struct __kfifo *fifo,
	const void __user *from, unsigned long len, unsigned int *copied);
extern int __kfifo_to_user(struct __kfifo *fifo,
	void __user *to, unsigned long len, unsigned int *copied);
extern unsigned int __kfifo_dma_in_prepare(struct __kfifo *fifo,
	struct scatterlist *sgl, int nents, unsigned int len);
extern unsigned int __kfifo_dma_out_prepare(struct __kfifo *fifo,
	struct scatterlist *sgl, int nents, unsigned int len);
extern unsigned int __kfifo_out_peek(struct __kfifo *fifo,
	void *buf, unsigned int len);

extern unsigned int __kfifo_in_r(struct __kfifo *fifo,
	const void *buf, unsigned int len, size_t recsize);
extern unsigned int __kfifo_out_r(struct __kfifo *fifo,
	void *buf, unsigned int len, size_t recsize);
extern int __kfifo_from_user_r(struct __kfifo *fifo,
	const void __user *from, unsigned long len, unsigned int *copied,
	size_t recsize);
extern int __kfifo_to_user_r(struct __kfifo *fifo, void __user *to,
	unsigned long len, unsigned int *copied, size_t recsize);
extern unsigned int __kfifo_dma_in_prepare_r(struct __kfifo *fifo,
	struct scatterlist *sgl, int nents, unsigned int len, size_t recsize);
extern void __kfifo_dma_in_finish_r(struct __kfifo *fifo,
	unsigned int len, size_t recsize);
extern unsigned int __kfifo_dma_out_prepare_r(struct __kfifo *fifo,
	struct scatterlist *sgl, int nents, unsigned int len, size_t recsize);
extern void __kfifo_dma_out_finish_r(struct __kfifo *fifo, size_t recsize);
extern unsigned int __kfifo_len_r(struct __kfifo *fifo, size_t recsize);
extern void __kfifo_skip_r(struct __kfifo *fifo, size_t recsize);
extern unsigned int __kfifo_out_peek_r(struct __kfifo *fifo,
	void *buf, unsigned int len, size_t recsize);
extern unsigned int __kfifo_max_r(unsigned int len, size_t recsize);

#endif
