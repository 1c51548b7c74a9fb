// SPDX-License-Identifier: GPL-2.0
/*
 * Segments: allocation of a home's exported memory to its clients, and the
 * record of who holds what.  See segment.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/genalloc.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "segment.h"

/* gen_pool cannot hand out 0: offsets are biased by this. */
#define HBMPOOL_SEGMENT_BASE	BIT_ULL(40)

/* One allocated chunk, stored over its page range in seg->chunks. */
struct hbmpool_segment_chunk {
	struct rcu_head rcu;		/* hbmpool_segment_check() reads under RCU */
	u64 offset;
	u64 len;
	u32 owner;
};

static unsigned long hbmpool_first_page(u64 offset)
{
	return offset >> PAGE_SHIFT;
}

static unsigned long hbmpool_last_page(u64 offset, u64 len)
{
	return (offset + len - 1) >> PAGE_SHIFT;
}

/**
 * hbmpool_segment_init - set up a segment of @size bytes
 * @seg: the segment
 * @size: bytes, a multiple of the page size, at most 2^40
 * @provider: where its bytes live
 * @priv: the provider's state
 *
 * Return: 0, -EINVAL or -ENOMEM.  On error nothing needs undoing, and the
 * provider's ->release() has not been called.
 */
int hbmpool_segment_init(struct hbmpool_segment *seg, u64 size,
			 const struct hbmpool_segment_provider *provider,
			 void *priv)
{
	if (!size || !PAGE_ALIGNED(size) || size > HBMPOOL_SEGMENT_BASE)
		return -EINVAL;
	seg->size = size;
	seg->provider = provider;
	seg->priv = priv;
	mutex_init(&seg->lock);
	mt_init(&seg->chunks);
	seg->pool = gen_pool_create(PAGE_SHIFT, -1);
	if (!seg->pool)
		return -ENOMEM;
	if (gen_pool_add(seg->pool, HBMPOOL_SEGMENT_BASE, size, -1)) {
		gen_pool_destroy(seg->pool);
		seg->pool = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Every chunk was freed by its owner, or the owners are gone for good. */
void hbmpool_segment_destroy(struct hbmpool_segment *seg)
{
	struct hbmpool_segment_chunk *c;
	unsigned long index = 0;

	/* clients that reach the memory directly stop before it is cleared */
	if (seg->provider->revoke)
		seg->provider->revoke(seg);
	mt_for_each(&seg->chunks, c, index, ULONG_MAX) {
		seg->provider->discard(seg, c->offset, c->len);
		gen_pool_free(seg->pool, HBMPOOL_SEGMENT_BASE + c->offset, c->len);
		kfree(c);
	}
	mtree_destroy(&seg->chunks);
	if (seg->pool)
		gen_pool_destroy(seg->pool);
	seg->provider->release(seg);
	hbmpool_segment_digests_free(seg);
	mutex_destroy(&seg->lock);
}

/**
 * hbmpool_segment_alloc - hand @len bytes of the segment to client @owner
 * @seg: the segment
 * @len: bytes, page aligned
 * @owner: the client's node id
 * @offset: out: where they start
 *
 * Return: 0, -EINVAL (length), -ENOSPC (full) or -ENOMEM.
 */
int hbmpool_segment_alloc(struct hbmpool_segment *seg, u64 len, u32 owner,
			  u64 *offset)
{
	struct hbmpool_segment_chunk *c;
	unsigned long addr;
	int err;

	if (!len || !PAGE_ALIGNED(len) || len > seg->size)
		return -EINVAL;
	c = kmalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->len = len;
	c->owner = owner;
	mutex_lock(&seg->lock);
	addr = gen_pool_alloc(seg->pool, len);
	if (!addr) {
		err = -ENOSPC;
		goto err_unlock;
	}
	c->offset = addr - HBMPOOL_SEGMENT_BASE;
	err = mtree_insert_range(&seg->chunks, hbmpool_first_page(c->offset),
				 hbmpool_last_page(c->offset, len), c, GFP_KERNEL);
	if (err) {
		gen_pool_free(seg->pool, addr, len);
		goto err_unlock;
	}
	mutex_unlock(&seg->lock);
	*offset = c->offset;
	return 0;

err_unlock:
	mutex_unlock(&seg->lock);
	kfree(c);
	return err;
}

/* The chunk that holds byte @offset, or NULL. */
static struct hbmpool_segment_chunk *
hbmpool_segment_chunk(struct hbmpool_segment *seg, u64 offset)
{
	if (offset >= seg->size)
		return NULL;
	return mtree_load(&seg->chunks, hbmpool_first_page(offset));
}

/**
 * hbmpool_segment_free - client @owner gives back a chunk
 * @seg: the segment
 * @offset: as returned by hbmpool_segment_alloc()
 * @len: as asked for
 * @owner: as given
 *
 * The provider discards the contents.  Return: 0, or -EINVAL if @owner
 * does not hold exactly that chunk (nothing is freed then).
 */
int hbmpool_segment_free(struct hbmpool_segment *seg, u64 offset, u64 len,
			 u32 owner)
{
	struct hbmpool_segment_chunk *c;

	mutex_lock(&seg->lock);
	c = hbmpool_segment_chunk(seg, offset);
	if (!c || c->offset != offset || c->len != len || c->owner != owner) {
		mutex_unlock(&seg->lock);
		pr_warn_ratelimited("segment: node %u frees [%llu, +%llu), which it does not hold\n",
				    owner, offset, len);
		return -EINVAL;
	}
	mtree_erase(&seg->chunks, hbmpool_first_page(offset));
	hbmpool_segment_discard(seg, offset, len);
	gen_pool_free(seg->pool, HBMPOOL_SEGMENT_BASE + offset, len);
	mutex_unlock(&seg->lock);
	kfree_rcu(c, rcu);
	return 0;
}

/**
 * hbmpool_segment_free_owner - take back every chunk client @owner holds
 * @seg: the segment
 * @owner: a client declared dead, whose requests are over
 *
 * The provider discards the contents.  Return: the bytes freed.
 */
u64 hbmpool_segment_free_owner(struct hbmpool_segment *seg, u32 owner)
{
	struct hbmpool_segment_chunk *c;
	unsigned long index = 0;
	u64 freed = 0;

	mutex_lock(&seg->lock);
	mt_for_each(&seg->chunks, c, index, ULONG_MAX) {
		if (c->owner != owner)
			continue;
		mtree_erase(&seg->chunks, hbmpool_first_page(c->offset));
		hbmpool_segment_discard(seg, c->offset, c->len);
		gen_pool_free(seg->pool, HBMPOOL_SEGMENT_BASE + c->offset, c->len);
		freed += c->len;
		kfree_rcu(c, rcu);
	}
	mutex_unlock(&seg->lock);
	return freed;
}

/**
 * hbmpool_segment_check - may @owner read or write [@offset, @offset + @len)?
 * @seg: the segment
 * @offset: byte offset, page aligned
 * @len: bytes, page aligned, not zero
 * @owner: the client's node id
 *
 * For a home that checks a client's request; any context.  A chunk freed
 * meanwhile may still pass: the caller orders frees after the requests of
 * their owner.  Return: 0 if the range lies
 * in one chunk @owner holds, -ERANGE if it leaves the segment, -EACCES if it
 * is not @owner's.
 */
int hbmpool_segment_check(struct hbmpool_segment *seg, u64 offset, u64 len,
			  u32 owner)
{
	struct hbmpool_segment_chunk *c;

	if (!len || !PAGE_ALIGNED(offset) || !PAGE_ALIGNED(len) ||
	    offset >= seg->size || len > seg->size - offset)
		return -ERANGE;
	rcu_read_lock();	/* chunks are freed after a grace period */
	c = hbmpool_segment_chunk(seg, offset);
	if (!c || c->owner != owner || offset + len > c->offset + c->len) {
		rcu_read_unlock();
		return -EACCES;
	}
	rcu_read_unlock();
	return 0;
}

u64 hbmpool_segment_avail(struct hbmpool_segment *seg)
{
	return gen_pool_avail(seg->pool);
}
