// SPDX-License-Identifier: GPL-2.0
/*
 * Read-ahead of the fault path: when a region is touched in order, a miss
 * fetches a window of the pages that follow in one transport request, and
 * the window grows as the pattern holds, as the page cache's read-ahead does
 * for files.  Random access keeps single-page fetches.
 *
 * The state is the region file's struct file_ra_state (ours: the page cache
 * never reads ahead for a region, whose mapping has no ->readahead), updated
 * without a lock as the page cache does: two threads racing on one file at
 * worst size a window wrongly.  Threads that each read their own part of a
 * region in order share that state, and their faults come between each
 * other's: a miss whose previous pages are cached (or being fetched),
 * HBMPOOL_RA_INITIAL at least, and whose next page is not, is taken for a
 * stream of its own, as the page cache's context read-ahead takes it for
 * read(2), and fetches a window as long as the run of cached pages before
 * it (at most the largest window): it doubles as the stream goes on.  That
 * costs a lookup and a walk back per miss, so it is not tried while
 * fault-around is off (most read faults of the file miss: random access,
 * see faultaround.c).  The fields mean, in pages:
 *
 *   start, size   the last window fetched, [start, start + size)
 *   prev_pos      the page of the last fault, -1 before the first
 *   mmap_miss     read faults that missed the cache, less hits and the
 *                 pages fault-around mapped (faultaround.c)
 *
 * A window never crosses its chunk (a chunk's pages are one run at one home)
 * nor takes the cache over its budget.  One page of a window carries
 * HBM_PG_READAHEAD: a fault that reaches it starts the next window without
 * waiting for it (asynchronous read-ahead), so that while the application
 * consumes one window the link carries the next.  madvise(MADV_RANDOM)
 * turns read-ahead off for a mapping, MADV_SEQUENTIAL starts at the largest
 * window; the parameter readahead_max_pages bounds the window (1: off), and
 * so does an eighth of the cache budget.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/mm.h>

#include "hbmpool.h"

unsigned int hbmpool_readahead_max;

/* The first window of a sequence: small, in case it is not one. */
#define HBMPOOL_RA_INITIAL	4U

void hbmpool_ra_init(struct file_ra_state *ra)
{
	ra->start = 0;
	ra->size = 0;
	ra->async_size = 0;
	ra->prev_pos = -1;
	ra->mmap_miss = 0;
}

/*
 * The largest window: the parameter, and an eighth of the cache budget, so
 * that read-ahead never evicts the pages it read before they are used.
 */
static unsigned int hbmpool_ra_max(unsigned long vm_flags)
{
	unsigned long budget = READ_ONCE(hbmpool_cache_budget);

	if (vm_flags & VM_RAND_READ)
		return 1;
	return clamp_t(unsigned long, budget / 8, 1, READ_ONCE(hbmpool_readahead_max));
}

/* Every fault on @index, hit or miss. */
void hbmpool_ra_access(struct file_ra_state *ra, pgoff_t index)
{
	WRITE_ONCE(ra->prev_pos, (loff_t)index);
}

/*
 * Context read-ahead, as the page cache's for read(2): the pages just before
 * @index that are cached (or being fetched), up to @max.  Enough of them:
 * this miss continues a stream of that length, whatever other faults came
 * between.
 */
static unsigned int hbmpool_ra_history(struct hbmpool_region *r,
				       pgoff_t index, unsigned int max)
{
	XA_STATE(xas, &r->pages, index ? index - 1 : 0);
	unsigned int n = 0;
	void *entry;

	if (!index)
		return 0;
	rcu_read_lock();
	for (entry = xas_load(&xas); entry && !xas_retry(&xas, entry);
	     entry = xas_prev(&xas)) {
		if (++n >= max || !xas.xa_index)
			break;
	}
	rcu_read_unlock();
	return n;
}

/*
 * A miss no window and no previous fault explains: a stream's window (as
 * long as the stream, at most @limit) if HBMPOOL_RA_INITIAL pages or more
 * before it are cached and the page after it is not, else 1.  Not tried
 * while fault-around is off (most read faults of the file miss): random
 * access would pay the walk each time.  A random miss over a partly cached
 * region passes the test only where a run of cached pages ends, so that
 * such windows stay few.
 */
static unsigned int hbmpool_ra_stream(struct hbmpool_region *r,
				      struct file_ra_state *ra, pgoff_t index,
				      unsigned int limit)
{
	unsigned int n;

	if (hbmpool_fa_missing(ra) || xa_load(&r->pages, index + 1))
		return 1;
	n = hbmpool_ra_history(r, index, limit);
	return n < HBMPOOL_RA_INITIAL ? 1 : n;
}

/**
 * hbmpool_ra_window - the fetch a miss on @index makes
 * @r: the region
 * @ra: the file's read-ahead state
 * @vm_flags: the mapping's flags
 * @index: the page missed
 * @mark: set to the page of the window (counted from @index) that starts
 *	the next window when touched, HBMPOOL_RA_NO_MARK for none
 *
 * Return: the window's size in pages, 1 for the page alone.
 */
unsigned int hbmpool_ra_window(struct hbmpool_region *r,
			       struct file_ra_state *ra,
			       unsigned long vm_flags, pgoff_t index,
			       unsigned int *mark)
{
	unsigned int max = hbmpool_ra_max(vm_flags);
	unsigned int size = READ_ONCE(ra->size);
	pgoff_t start = READ_ONCE(ra->start);
	loff_t prev = READ_ONCE(ra->prev_pos);
	unsigned int nr;

	*mark = HBMPOOL_RA_NO_MARK;
	if (max <= 1)
		return 1;
	if (vm_flags & VM_SEQ_READ)
		nr = max;
	else if (size > 1 && index == start + size)
		nr = min(2 * size, max);	/* ran past the last window */
	else if (prev >= 0 && index == prev + 1)
		nr = min(HBMPOOL_RA_INITIAL, max);
	else
		nr = hbmpool_ra_stream(r, ra, index, max);
	if (nr <= 1)
		return 1;
	/* the next window starts when a quarter of this one is consumed */
	*mark = max(nr / 4, 1U);
	return nr;
}

/* A window of @nr pages at @start went out. */
void hbmpool_ra_record(struct file_ra_state *ra, pgoff_t start,
		       unsigned int nr)
{
	WRITE_ONCE(ra->start, start);
	WRITE_ONCE(ra->size, nr);
}

/**
 * hbmpool_ra_async - a fault touched a read-ahead mark: fetch the next window
 * @r: the region
 * @ra: the file's read-ahead state
 * @vm_flags: the mapping's flags
 * @index: the page touched
 *
 * Under mmap_lock: allocates and submits, never waits for the link, and
 * fetches nothing when the cache has no room without evicting.
 */
void hbmpool_ra_async(struct hbmpool_region *r, struct file_ra_state *ra,
		      unsigned long vm_flags, pgoff_t index)
{
	unsigned int max = hbmpool_ra_max(vm_flags);
	unsigned int size = READ_ONCE(ra->size);
	pgoff_t start = READ_ONCE(ra->start);
	pgoff_t next, limit;
	unsigned int nr;
	int ret;

	if (max <= 1 || !hbmpool_cache_below_budget())
		return;
	/* after the window the mark is in; else after the page touched */
	if (size && index >= start && index < start + size)
		next = start + size;
	else
		next = index + 1;
	nr = min(max(2 * size, HBMPOOL_RA_INITIAL), max);
	limit = min_t(pgoff_t, next + nr, r->nr_pages);
	while (next < limit && xa_load(&r->pages, next))
		next++;		/* cached already */
	if (next >= limit)
		return;
	ret = hbmpool_fetch_start(r, next, nr, 0, HBMPOOL_FETCH_AHEAD, NULL);
	if (ret > 0)
		hbmpool_ra_record(ra, next, ret);
}
