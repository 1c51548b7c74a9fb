/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Segments: the memory a node exports to the domain, as a home.
 *
 * A segment is a range of bytes [0, size) backed by a provider (system RAM,
 * an accelerator's memory exported as a dma-buf, or the simulated fabric's
 * sparse pages), with an allocator that hands out chunks to the clients of
 * the home and remembers which client holds which chunk, so that a home can
 * check every request against it.  Nothing here assumes struct page-backed
 * memory: the provider moves the bytes.
 */
#ifndef _HBMPOOL_SEGMENT_H
#define _HBMPOOL_SEGMENT_H

#include <linux/maple_tree.h>
#include <linux/mutex.h>
#include <linux/types.h>

struct gen_pool;
struct hbmpool_segment;
struct hbmpool_segment_digests;
struct page;

/**
 * struct hbmpool_segment_provider - where a segment's bytes live
 * @name: shown to operators ("ram", "sim", ...)
 * @read: copy the page at byte @offset (page aligned) into @page; must not
 *	sleep (the fault fast path may call it under mmap_lock).
 * @write: copy @page to byte @offset; may sleep.
 * @discard: the contents of [@offset, @offset + @len) are no longer needed
 *	(the chunk was freed); may sleep.
 * @revoke: optional.  No client may reach the bytes any more (this node
 *	fenced itself, or the segment is being destroyed): a provider whose
 *	clients reach the memory directly (shm) tells them; may sleep.
 * @release: the segment is destroyed: free the provider's state; may sleep.
 * @zeroed: its pages read as zeros in a new segment and after ->discard()
 */
struct hbmpool_segment_provider {
	const char *name;
	bool zeroed;
	void (*read)(struct hbmpool_segment *seg, u64 offset, struct page *page);
	int (*write)(struct hbmpool_segment *seg, u64 offset, struct page *page);
	void (*discard)(struct hbmpool_segment *seg, u64 offset, u64 len);
	void (*revoke)(struct hbmpool_segment *seg);
	void (*release)(struct hbmpool_segment *seg);
};

/**
 * struct hbmpool_segment - memory exported by a home
 * @size: bytes
 * @provider: its bytes
 * @priv: the provider's state
 * @lock: serialises allocation and freeing, so that @pool and @chunks agree
 * @pool: the allocator (has its own lock)
 * @chunks: the page range of every allocated chunk -> its owner
 *	(struct hbmpool_segment_chunk); a maple tree, which has its own lock
 *	for lookups
 * @digests: its pages' digests at rest (segment_digest.c), or NULL
 */
struct hbmpool_segment {
	u64 size;
	const struct hbmpool_segment_provider *provider;
	void *priv;
	struct mutex lock;	/* allocation and freeing: @pool and @chunks agree */
	struct gen_pool *pool;
	struct maple_tree chunks;
	struct hbmpool_segment_digests *digests;
};

int hbmpool_segment_init(struct hbmpool_segment *seg, u64 size,
			 const struct hbmpool_segment_provider *provider,
			 void *priv);
void hbmpool_segment_destroy(struct hbmpool_segment *seg);
int hbmpool_segment_alloc(struct hbmpool_segment *seg, u64 len, u32 owner,
			  u64 *offset);
int hbmpool_segment_free(struct hbmpool_segment *seg, u64 offset, u64 len,
			 u32 owner);
u64 hbmpool_segment_free_owner(struct hbmpool_segment *seg, u32 owner);
int hbmpool_segment_check(struct hbmpool_segment *seg, u64 offset, u64 len,
			  u32 owner);
u64 hbmpool_segment_avail(struct hbmpool_segment *seg);

/* segment_digest.c: digests at rest, and the reads and writes that use them */
int hbmpool_segment_digests_init(struct hbmpool_segment *seg);
void hbmpool_segment_digests_free(struct hbmpool_segment *seg);
void hbmpool_segment_discard(struct hbmpool_segment *seg, u64 offset, u64 len);
int hbmpool_segment_write(struct hbmpool_segment *seg, u64 offset,
			  struct page *page, const u32 *crc);
int hbmpool_segment_flip(struct hbmpool_segment *seg, u64 offset,
			 struct page *page);
bool hbmpool_segment_read(struct hbmpool_segment *seg, u64 offset,
			  struct page **pages, unsigned int nr, u64 *snap,
			  u32 *crc);

#endif /* _HBMPOOL_SEGMENT_H */
