// SPDX-License-Identifier: GPL-2.0
/*
 * Digests at rest: the CRC32C of every page of a segment whose memory only
 * its home writes (the RAM provider), recorded when a write stores the page
 * and handed back with the page when a read copies it.  A home then answers
 * a read with the digest the data was written with instead of computing one
 * again, which halves the CRC work of a stream of reads, and a page that
 * changed in the home's memory since it was written (a bit flip) fails the
 * client's check instead of travelling with a fresh digest of the wrong
 * bytes.  A page is digested by the transport (the CRC is of the page alone,
 * seed 0, no inversion: tcp_digest.c combines pages into its frames'
 * digests); this file only keeps the values.
 *
 * Each page has one 64-bit entry: a sequence number (bits 63..33), a valid
 * bit (32) and the CRC (31..0).  A write of the page, under the page's lock
 * (one of HBMPOOL_SEG_DIGEST_LOCKS, by page number), first makes its entry
 * invalid with the next sequence number, then stores the data, then makes
 * the entry valid with the new CRC.  A read takes no lock: it samples the
 * entries, copies the pages and samples them again; the recorded CRCs stand
 * for its copies only if every entry was valid and unchanged, else the
 * caller digests its copies itself.  A discard (the chunk was freed)
 * invalidates its pages' entries before the provider clears them.  A
 * provider whose new and discarded memory reads as zeros (RAM) has its
 * pages start with the zero page's CRC, which is 0, and get it again after
 * a discard unless a write raced it; another's pages start without one,
 * and are digested when they are read until written.  An invalid entry
 * says in its CRC's place whether a write or a discard made it so.
 *
 * The digests_at_rest module parameter turns the read side off: every read
 * is then digested again (writes keep recording).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "segment.h"

#define HBMPOOL_SEG_DIGEST_CRC		GENMASK_ULL(31, 0)
#define HBMPOOL_SEG_DIGEST_VALID	BIT_ULL(32)
#define HBMPOOL_SEG_DIGEST_SEQ_SHIFT	33
#define HBMPOOL_SEG_DIGEST_LOCKS	64
/* The raw CRC32C (seed 0) of a page of zeros: zero, as of any zeros */
#define HBMPOOL_SEG_DIGEST_ZERO		0
/* In place of the CRC of an invalid entry: who made it invalid */
#define HBMPOOL_SEG_DIGEST_WRITING	0
#define HBMPOOL_SEG_DIGEST_DISCARDING	1

/**
 * struct hbmpool_segment_digests - the digests of a segment's pages
 * @entry: one per page: sequence << 33 | valid << 32 | CRC
 * @nr_pages: pages of the segment
 * @lock: writers (stores and discards) of the pages whose number modulo
 *	HBMPOOL_SEG_DIGEST_LOCKS is the lock's index; one at a time per page,
 *	so that the last to make an entry valid is the last to store the data
 */
struct hbmpool_segment_digests {
	atomic64_t *entry;
	unsigned long nr_pages;
	struct mutex lock[HBMPOOL_SEG_DIGEST_LOCKS];	/* see above */
};

static bool digests_at_rest = true;
module_param(digests_at_rest, bool, 0644);
MODULE_PARM_DESC(digests_at_rest,
		 "Answer reads of this node's RAM segment with the CRC32C its pages were written with, instead of digesting the pages again, 1 or 0 (default 1; writes record them either way; live value in /sys/module/hbmpool/parameters/digests_at_rest)");

/**
 * hbmpool_segment_digests_init - keep digests of @seg's pages
 * @seg: a segment whose memory nothing but its home's requests writes
 *
 * Every page starts with the zero page's digest if the provider's new
 * memory is zeroed, else without one.  Return: 0 or -ENOMEM.
 */
int hbmpool_segment_digests_init(struct hbmpool_segment *seg)
{
	struct hbmpool_segment_digests *d;
	unsigned long pg;
	int i;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	d->nr_pages = seg->size >> PAGE_SHIFT;
	d->entry = kvcalloc(d->nr_pages, sizeof(*d->entry),
			    GFP_KERNEL | __GFP_NOWARN);
	if (!d->entry) {
		kfree(d);
		return -ENOMEM;
	}
	for (i = 0; i < HBMPOOL_SEG_DIGEST_LOCKS; i++)
		mutex_init(&d->lock[i]);
	/* a provider's new memory may be known to be zeros */
	for (pg = 0; seg->provider->zeroed && pg < d->nr_pages; pg++) {
		atomic64_set(&d->entry[pg], HBMPOOL_SEG_DIGEST_VALID |
			     HBMPOOL_SEG_DIGEST_ZERO);
		if (!(pg % 4096))
			cond_resched();
	}
	seg->digests = d;
	return 0;
}

void hbmpool_segment_digests_free(struct hbmpool_segment *seg)
{
	struct hbmpool_segment_digests *d = seg->digests;
	int i;

	if (!d)
		return;
	for (i = 0; i < HBMPOOL_SEG_DIGEST_LOCKS; i++)
		mutex_destroy(&d->lock[i]);
	kvfree(d->entry);
	kfree(d);
	seg->digests = NULL;
}

static struct mutex *hbmpool_digest_lock(struct hbmpool_segment_digests *d,
					 unsigned long pg)
{
	return &d->lock[pg % HBMPOOL_SEG_DIGEST_LOCKS];
}

/*
 * Page @pg is about to change: its entry says so, with a new sequence and
 * @mark in place of a CRC (HBMPOOL_SEG_DIGEST_WRITING or _DISCARDING).
 * Returns the new entry.
 */
static u64 hbmpool_digest_invalidate(struct hbmpool_segment_digests *d,
				     unsigned long pg, u32 mark)
{
	u64 seq = (atomic64_read(&d->entry[pg]) >> HBMPOOL_SEG_DIGEST_SEQ_SHIFT) + 1;
	u64 entry = seq << HBMPOOL_SEG_DIGEST_SEQ_SHIFT | mark;

	lockdep_assert_held(hbmpool_digest_lock(d, pg));
	atomic64_set(&d->entry[pg], entry);
	/* readers that see the data changing see the entry change too */
	smp_wmb();
	return entry;
}

/* Whether a discard of page @pg is under way (hbmpool_segment_discard()). */
static bool hbmpool_digest_discarding(u64 entry)
{
	return !(entry & HBMPOOL_SEG_DIGEST_VALID) &&
	       (entry & HBMPOOL_SEG_DIGEST_CRC) == HBMPOOL_SEG_DIGEST_DISCARDING;
}

/**
 * hbmpool_segment_write - store a page, and its digest if @seg keeps them
 * @seg: the segment
 * @offset: byte offset of the page, page aligned, checked by the caller
 * @page: the data
 * @crc: its CRC32C, seed 0 and no inversion (tcp_digest.c), or NULL if
 *	unknown: the page is then digested when it is read, until its next
 *	write with one
 *
 * A write that meets a discard of its page under way (a request that raced
 * the free of its chunk) leaves the page without a digest: the discard may
 * clear it after the write.  May sleep.  Return: the provider's ->write()
 * result.
 */
int hbmpool_segment_write(struct hbmpool_segment *seg, u64 offset,
			  struct page *page, const u32 *crc)
{
	struct hbmpool_segment_digests *d = seg->digests;
	unsigned long pg = offset >> PAGE_SHIFT;
	bool discarding;
	u64 entry;
	int err;

	if (!d)
		return seg->provider->write(seg, offset, page);
	mutex_lock(hbmpool_digest_lock(d, pg));
	discarding = hbmpool_digest_discarding(atomic64_read(&d->entry[pg]));
	entry = hbmpool_digest_invalidate(d, pg, HBMPOOL_SEG_DIGEST_WRITING);
	err = seg->provider->write(seg, offset, page);
	if (!err && crc && !discarding) {
		/* the data before the entry that vouches for it */
		smp_wmb();
		atomic64_set(&d->entry[pg], (entry & ~HBMPOOL_SEG_DIGEST_CRC) |
			     HBMPOOL_SEG_DIGEST_VALID | *crc);
	}
	mutex_unlock(hbmpool_digest_lock(d, pg));
	return err;
}

/**
 * hbmpool_segment_read - copy pages, with their digests if they are known
 * @seg: the segment
 * @offset: byte offset of the first page, page aligned, checked by the caller
 * @pages: @nr pages to copy into
 * @nr: how many
 * @snap: room for @nr entries, or NULL: no digests wanted
 * @crc: out: each page's CRC32C (seed 0, no inversion), if true is returned
 *
 * Does not sleep unless the provider's ->read() does.  Return: whether
 * @crc holds the digests of exactly the bytes copied: every page had one,
 * and none was written or discarded meanwhile.  False: the caller digests
 * its copies itself.
 */
bool hbmpool_segment_read(struct hbmpool_segment *seg, u64 offset,
			  struct page **pages, unsigned int nr, u64 *snap,
			  u32 *crc)
{
	struct hbmpool_segment_digests *d = seg->digests;
	unsigned long pg = offset >> PAGE_SHIFT;
	bool known = d && snap && READ_ONCE(digests_at_rest);
	unsigned int i;

	for (i = 0; known && i < nr; i++) {
		snap[i] = atomic64_read(&d->entry[pg + i]);
		known = snap[i] & HBMPOOL_SEG_DIGEST_VALID;
	}
	/* the entries before the data they vouch for (hbmpool_segment_write()) */
	smp_rmb();
	for (i = 0; i < nr; i++)
		seg->provider->read(seg, offset + ((u64)i << PAGE_SHIFT), pages[i]);
	if (!known)
		return false;
	/* and sampled again after it */
	smp_rmb();
	for (i = 0; i < nr; i++) {
		if (atomic64_read(&d->entry[pg + i]) != snap[i])
			return false;
		crc[i] = lower_32_bits(snap[i]);
	}
	return true;
}

/**
 * hbmpool_segment_flip - flip the low bit of one byte, behind the digest
 * @seg: the segment
 * @offset: the byte, below seg->size (checked by the caller)
 * @page: a page to copy through
 *
 * Fault injection: the page changes as a memory error would change it,
 * its digest at rest stays.  Serialised with writes of the page (their
 * lock), not with a discard of it.  May sleep.  Return: 0, or the
 * provider's ->write() error.
 */
int hbmpool_segment_flip(struct hbmpool_segment *seg, u64 offset,
			 struct page *page)
{
	struct hbmpool_segment_digests *d = seg->digests;
	u64 base = round_down(offset, PAGE_SIZE);
	int err;
	u8 *p;

	if (d)
		mutex_lock(hbmpool_digest_lock(d, base >> PAGE_SHIFT));
	seg->provider->read(seg, base, page);
	p = kmap_local_page(page);
	p[offset - base] ^= 1;
	kunmap_local(p);
	err = seg->provider->write(seg, base, page);
	if (d)
		mutex_unlock(hbmpool_digest_lock(d, base >> PAGE_SHIFT));
	return err;
}

/**
 * hbmpool_segment_discard - the provider discards a freed range
 * @seg: the segment
 * @offset: page aligned
 * @len: page aligned
 *
 * The pages' digests stop counting before their bytes change, and a write
 * that comes meanwhile (a request that raced the free of its chunk) does
 * not give its page one back.  A provider whose discarded pages read as
 * zeros then gets the zero page's digest for each, unless such a write
 * came: that page may hold the write's bytes or zeros, and stays without a
 * digest until its next write.  May sleep.
 */
void hbmpool_segment_discard(struct hbmpool_segment *seg, u64 offset, u64 len)
{
	struct hbmpool_segment_digests *d = seg->digests;
	unsigned long pg, first = offset >> PAGE_SHIFT;
	unsigned long end = (offset + len) >> PAGE_SHIFT;

	for (pg = first; d && pg < end; pg++) {
		mutex_lock(hbmpool_digest_lock(d, pg));
		hbmpool_digest_invalidate(d, pg, HBMPOOL_SEG_DIGEST_DISCARDING);
		mutex_unlock(hbmpool_digest_lock(d, pg));
		if (!(pg % 1024))
			cond_resched();
	}
	seg->provider->discard(seg, offset, len);
	if (!d || !seg->provider->zeroed)
		return;
	/* the zeros before the entries that vouch for them */
	smp_wmb();
	for (pg = first; pg < end; pg++) {
		u64 e;

		mutex_lock(hbmpool_digest_lock(d, pg));
		e = atomic64_read(&d->entry[pg]);
		if (hbmpool_digest_discarding(e))
			atomic64_set(&d->entry[pg], (e & ~HBMPOOL_SEG_DIGEST_CRC) |
				     HBMPOOL_SEG_DIGEST_VALID | HBMPOOL_SEG_DIGEST_ZERO);
		else
			hbmpool_digest_invalidate(d, pg, HBMPOOL_SEG_DIGEST_WRITING);
		mutex_unlock(hbmpool_digest_lock(d, pg));
		if (!(pg % 1024))
			cond_resched();
	}
}
