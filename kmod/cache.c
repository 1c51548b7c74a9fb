// SPDX-License-Identifier: GPL-2.0
/*
 * The local cache: a budget of pages holding copies of remote HBM, a CLOCK
 * list for eviction, write-back of dirty pages, and a shrinker.
 *
 * Page states (page->private bits, see hbmpool.h) change under the page
 * lock.  The page lock of an up-to-date page is only ever held for short,
 * link-free work (mapping it, marking it dirty, snapshotting it for
 * write-back, unmapping it), so the fault path may take it while holding
 * mmap_lock.  Write-back copies the page to a bounce page under the lock and
 * waits for the link without it; HBM_PG_WRITEBACK keeps one write-back per
 * page in flight so that they reach the home in order.
 *
 * Lock order: mmap_lock -> page lock -> i_mmap_rwsem -> hbmpool_cache.lock
 * -> xa_lock of a region.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/refcount.h>
#include <linux/rmap.h>
#include <linux/shrinker.h>
#include <linux/spinlock.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

#include "hbmpool.h"
#include "resync.h"

unsigned long hbmpool_cache_budget;

static struct {
	/* lock protects lru and the HBM_PG_LRU bit of every cache page */
	spinlock_t lock;
	struct list_head lru;		/* up-to-date pages, CLOCK order */
	atomic_long_t nr_cached;	/* pages charged, fetches in flight included */
	atomic_long_t nr_dirty;
	/* keeps the cache under the low watermark; retries with back-off */
	struct delayed_work evict_work;
	unsigned long evict_backoff;	/* jiffies; only the work touches it */
	struct shrinker shrinker;
} hbmpool_cache;

/* A fault that finds the cache this full evicts before it fetches... */
static unsigned long hbmpool_high_wm(void)
{
	return READ_ONCE(hbmpool_cache_budget);
}

/* ...and the background worker keeps it below this. */
static unsigned long hbmpool_low_wm(void)
{
	unsigned long b = READ_ONCE(hbmpool_cache_budget);

	return b - b / 16;
}

/* Below the low watermark: a page added now wakes no evictor. */
bool hbmpool_cache_has_room(void)
{
	return atomic_long_read(&hbmpool_cache.nr_cached) < hbmpool_low_wm();
}

/* Pages that may be added before the low watermark; <= 0: none. */
long hbmpool_cache_room(void)
{
	return (long)hbmpool_low_wm() - atomic_long_read(&hbmpool_cache.nr_cached);
}

/* Below the budget: a page added now makes no fault evict. */
bool hbmpool_cache_below_budget(void)
{
	return atomic_long_read(&hbmpool_cache.nr_cached) < hbmpool_high_wm();
}

/* Pages that may be added before the budget; <= 0: none. */
long hbmpool_cache_budget_room(void)
{
	return (long)hbmpool_high_wm() - atomic_long_read(&hbmpool_cache.nr_cached);
}

long hbmpool_cache_nr_cached(void)
{
	return atomic_long_read(&hbmpool_cache.nr_cached);
}

long hbmpool_cache_nr_dirty(void)
{
	return atomic_long_read(&hbmpool_cache.nr_dirty);
}

void hbmpool_cache_charge(struct hbmpool_region *r, long nr)
{
	atomic_long_add(nr, &r->nr_cached);
	/*
	 * Queue, not modify: a worker backing off keeps its delay.  Once the
	 * cache is full every new page comes here while the work is pending:
	 * a plain test of its pending bit spares those the atomic and the
	 * interrupt-off section of queue_delayed_work().  The value returned
	 * above orders the count before the test; the workqueue clears the
	 * bit with a full barrier (set_work_pool_and_clear_pending()) before
	 * the work runs and reads the count: either it sees this page, or
	 * this test sees it not pending and queues it.
	 */
	if (atomic_long_add_return(nr, &hbmpool_cache.nr_cached) >
	    hbmpool_low_wm() && nr > 0 &&
	    !delayed_work_pending(&hbmpool_cache.evict_work))
		queue_delayed_work(system_unbound_wq, &hbmpool_cache.evict_work, 0);
}

void hbmpool_cache_dirty(struct hbmpool_region *r, long nr)
{
	atomic_long_add(nr, &r->nr_dirty);
	atomic_long_add(nr, &hbmpool_cache.nr_dirty);
}

/* Takes @page off the CLOCK list if it is on it. */
static void __hbmpool_lru_del(struct page *page)
{
	lockdep_assert_held(&hbmpool_cache.lock);
	if (test_and_clear_bit(HBM_PG_LRU, &page->private))
		list_del_init(&page->lru);
}

void hbmpool_lru_add(struct page *page)
{
	spin_lock(&hbmpool_cache.lock);
	list_add_tail(&page->lru, &hbmpool_cache.lru);
	set_bit(HBM_PG_LRU, &page->private);
	spin_unlock(&hbmpool_cache.lock);
}

/* Puts a run of new pages on the CLOCK list, under one lock. */
void hbmpool_lru_add_run(struct page **pages, unsigned int nr)
{
	unsigned int i;

	spin_lock(&hbmpool_cache.lock);
	for (i = 0; i < nr; i++) {
		list_add_tail(&pages[i]->lru, &hbmpool_cache.lru);
		set_bit(HBM_PG_LRU, &pages[i]->private);
	}
	spin_unlock(&hbmpool_cache.lock);
}

/*
 * Takes the pages of @pages[0..@nr) (locked, of @r) that are still in the
 * cache out of it, with one pass over the index under one xa_lock and one
 * over the CLOCK list under its lock; @mark (NULL, or HBMPOOL_HUGE_MARK)
 * takes each one's place in the index.  Whoever erases a page from the
 * region's xarray owns its removal: those taken out get their bit in
 * @removed (of @nr bits), and the caller puts the cache's reference of
 * each.  Returns how many.
 */
static unsigned int hbmpool_remove_pages(struct hbmpool_region *r,
					 struct page **pages, unsigned int nr,
					 unsigned long *removed, void *mark)
{
	XA_STATE(xas, &r->pages, 0);
	unsigned int i, n = 0, dirty = 0;
	void *entry;

	bitmap_zero(removed, nr);
	/* under the xa_lock: hbmpool_dirty_folio() sees each cached or gone */
	xas_lock(&xas);
	for (i = 0; i < nr; i++) {
		VM_WARN_ON_ONCE_PAGE(!PageLocked(pages[i]), pages[i]);
		/* the next index of a run: one step, not a walk from the top */
		if (i && pages[i]->index == pages[i - 1]->index + 1) {
			entry = xas_next(&xas);
		} else {
			xas_set(&xas, pages[i]->index);
			entry = xas_load(&xas);
		}
		if (entry != pages[i])
			continue;
		xas_store(&xas, mark);	/* in a slot in use: allocates nothing */
		__set_bit(i, removed);
		n++;
		if (test_and_clear_bit(HBM_PG_DIRTY, &pages[i]->private))
			dirty++;
	}
	xas_unlock(&xas);
	if (!n)
		return 0;
	spin_lock(&hbmpool_cache.lock);
	for_each_set_bit(i, removed, nr)
		__hbmpool_lru_del(pages[i]);
	spin_unlock(&hbmpool_cache.lock);
	if (dirty)
		hbmpool_cache_dirty(r, -(long)dirty);
	hbmpool_cache_charge(r, -(long)n);
	for_each_set_bit(i, removed, nr) {
		pages[i]->mapping = NULL;
		set_page_private(pages[i], 0);
		ClearPageDirty(pages[i]);
	}
	return n;
}

/*
 * Takes @page out of the cache if it is still there (see
 * hbmpool_remove_pages()).  Called with the page locked; the caller puts
 * the cache's reference when this returns true.
 */
bool hbmpool_remove_page(struct hbmpool_region *r, struct page *page)
{
	unsigned long removed;

	return hbmpool_remove_pages(r, &page, 1, &removed, NULL);
}

/**
 * hbmpool_cache_take - take clean pages out of the cache, all or none
 * @r: the region
 * @pages: pages of @r, each locked and with a reference of the caller's
 * @nr: how many, at most HBMPOOL_TAKE_MAX
 * @mark: what takes their place in the index: HBMPOOL_HUGE_MARK (a huge
 *	entry in r->huge already), or NULL
 *
 * For a copy of their data made elsewhere (huge.c gathers a piece cached
 * in 4 KiB pages into one entry): each page must be up to date, clean, not
 * written back, unmapped and held by nobody but the cache and the caller.
 * Frozen, no lookup can take a reference meanwhile; a holder that let go
 * since the caller's checks may have marked a page dirty on its way out,
 * which is checked again here.  Faults map under the page lock, so none
 * maps them meanwhile.  The pages leave the index and the CLOCK list and
 * are uncharged, not counted as evictions.
 *
 * Return: 0 with every page out and the cache's references put (the caller
 * unlocks them and releases its own with hbmpool_page_release_run()); -EBUSY
 * with none taken out.
 */
int hbmpool_cache_take(struct hbmpool_region *r, struct page **pages,
		       unsigned int nr, void *mark)
{
	DECLARE_BITMAP(removed, HBMPOOL_TAKE_MAX);
	unsigned int i, n;

	if (WARN_ON_ONCE(nr > HBMPOOL_TAKE_MAX))
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		struct page *page = pages[i];

		VM_WARN_ON_ONCE_PAGE(!PageLocked(page), page);
		if (!page_ref_freeze(page, 2))
			goto busy;
		if (page->mapping != hbmpool_mapping(r) || page_mapped(page) ||
		    !test_bit(HBM_PG_UPTODATE, &page->private) ||
		    test_bit(HBM_PG_DIRTY, &page->private) ||
		    test_bit(HBM_PG_WRITEBACK, &page->private)) {
			page_ref_unfreeze(page, 2);
			goto busy;
		}
	}
	n = hbmpool_remove_pages(r, pages, nr, removed, mark);
	for (i = 0; i < nr; i++)
		page_ref_unfreeze(pages[i], 2);
	/* locked pages of the index: nobody else removes them */
	WARN_ON_ONCE(n != nr);
	for_each_set_bit(i, removed, nr)
		put_page(pages[i]);	/* the cache's reference */
	return 0;

busy:
	while (i--)
		page_ref_unfreeze(pages[i], 2);
	return -EBUSY;
}

/*
 * Marks a cache page dirty: set_page_dirty() and folio_mark_dirty() land
 * here, from a PTE write fault (after page_mkwrite), from a read fault that
 * maps the page writable (writepredict.c), from zapping a dirty PTE, and
 * from every kernel writer that reached the page through
 * get_user_pages() or pin_user_pages() (process_vm_writev(), O_DIRECT reads,
 * /proc/PID/mem, ...), which write through the kernel mapping and tell only
 * this way.  May run without the page lock and in atomic context: the
 * xa_lock orders it against removal (hbmpool_remove_pages()).  A page
 * marked already returns before the lock (see below); HBM_PG_DIRTY is
 * cleared only under the page lock, by the snapshot and by the removal.
 */
static bool hbmpool_dirty_folio(struct address_space *mapping,
				struct folio *folio)
{
	struct hbmpool_region *r = mapping->host->i_private;
	struct page *page = &folio->page;
	bool newly = !folio_test_set_dirty(folio);

	/*
	 * Dirty already (page_mkwrite marks it before the core calls here):
	 * nothing to count.  The barrier orders the writer's stores before
	 * the test; a write-back clears the mark with a full barrier before
	 * its snapshot, so either the snapshot sees those stores or this
	 * test sees the page clean and marks it again.
	 */
	smp_mb();
	if (test_bit(HBM_PG_DIRTY, &page->private))
		return newly;
	xa_lock(&r->pages);
	if (xa_load(&r->pages, page->index) == page &&
	    test_bit(HBM_PG_UPTODATE, &page->private) &&
	    !test_and_set_bit(HBM_PG_DIRTY, &page->private))
		hbmpool_cache_dirty(r, 1);
	xa_unlock(&r->pages);
	return newly;
}

/*
 * The core asks before it drops a page of a mapping from that mapping's page
 * cache; a cache page is in its region's index, never in the mapping's
 * i_pages, so the answer is always no, and the region's mapping is set to ask
 * always (AS_RELEASE_ALWAYS).  The one path that reaches a cache page is
 * __do_fault() finding the page that ->fault returned poisoned: a memory
 * error that came after ->fault's own check would otherwise have the core
 * remove the page from an i_pages that does not hold it and free it under
 * the region's index.  Refused, the fault fails with VM_FAULT_HWPOISON, the
 * page stays poisoned and cached, and the next fault drops it
 * (hbmpool_drop_poisoned()).
 */
static bool hbmpool_release_folio(struct folio *folio, gfp_t gfp)
{
	return false;
}

const struct address_space_operations hbmpool_cache_aops = {
	.dirty_folio = hbmpool_dirty_folio,
	.release_folio = hbmpool_release_folio,
};

/*
 * Someone besides the cache and the PTEs holds @page: a get_user_pages()
 * reference or a pin, through which the kernel may still write it without
 * a fault.  Such a page is neither dropped nor counted clean.
 */
static bool hbmpool_page_held(struct page *page, int extra)
{
	return page_maybe_dma_pinned(page) ||
	       page_ref_count(page) > 1 + extra + page_mapcount(page);
}

/* ---- write-back ---- */

#define HBMPOOL_WB_UNLOCKED	BIT(0)	/* req->flags: done with the snapshot */
#define HBMPOOL_WB_SYNCING	BIT(1)	/* req->flags: to a move's target */
#define HBMPOOL_WB_COPY_SHIFT	8	/* req->flags: the copy's index in the group */

/*
 * One write-back of a run of pages (consecutive indices of one chunk): a
 * request per copy of its write set, all carrying the one snapshot of the
 * run.  The pages' HBM_PG_WRITEBACK bits are held by the group, released
 * when the last request is done with the snapshot (at its end_io, or at its
 * release after a timeout) and what the write-back left is settled
 * (hbmpool_replica_wb_outcome()): the pages are dirty again if no
 * up-to-date copy took them; if some did, the copies that missed them are
 * marked outdated first (hbmpool_map_outdate(), in process context), so
 * that nothing reads the pages from those copies once they may be evicted.
 */
struct hbmpool_wb_group {
	refcount_t ref;			/* one per request, one for the outdate work */
	atomic_t snap_users;		/* requests that may still read the snapshot */
	atomic_t took;			/* up-to-date copies that took the write */
	unsigned long missed;		/* bit c: up-to-date copy c did not; atomic bitops */
	struct hbmpool_region *r;	/* referenced */
	struct hbmpool_resync *job;	/* the move of a SYNCING copy written, referenced */
	struct hbmpool_copy_id copies[HBMPOOL_MAX_COPIES];	/* the write set */
	struct work_struct outdate_work;
	u32 chunk;
	unsigned int nr;
	struct page *pages[];		/* nr, referenced */
};

/* The region has the pages dirty again: nothing sees them clean and drops them. */
static void hbmpool_wb_redirty(struct hbmpool_wb_group *g)
{
	struct hbmpool_region *r = g->r;
	unsigned int i;

	for (i = 0; i < g->nr; i++) {
		struct page *page = g->pages[i];

		/*
		 * Only a poisoned page leaves the cache while it is under
		 * write-back (hbmpool_drop_poisoned()); any other is still in
		 * its region.
		 */
		if (!PageHWPoison(page) && READ_ONCE(page->mapping) == hbmpool_mapping(r) &&
		    !test_and_set_bit(HBM_PG_DIRTY, &page->private))
			hbmpool_cache_dirty(r, 1);
	}
}

/* The next write-back of the pages may go. */
static void hbmpool_wb_release(struct hbmpool_wb_group *g)
{
	unsigned int i;

	for (i = 0; i < g->nr; i++)
		clear_and_wake_up_bit(HBM_PG_WRITEBACK, &g->pages[i]->private);
}

static void hbmpool_wb_group_put(struct hbmpool_wb_group *g)
{
	unsigned int i;

	if (!refcount_dec_and_test(&g->ref))
		return;
	for (i = 0; i < g->nr; i++)
		put_page(g->pages[i]);
	hbmpool_region_put(g->r);
	if (g->job)
		hbmpool_resync_put(g->job);
	kfree(g);
}

/* Process context: the copies that missed the write are outdated, then the pages go. */
static void hbmpool_wb_outdate_work(struct work_struct *work)
{
	struct hbmpool_wb_group *g = container_of(work, struct hbmpool_wb_group,
						  outdate_work);

	if (hbmpool_map_outdate(g->r, g->chunk, g->copies, g->missed))
		hbmpool_wb_redirty(g);	/* not marked: the pages stay dirty */
	hbmpool_wb_release(g);
	hbmpool_wb_group_put(g);
}

static void hbmpool_wb_snap_done(struct hbmpool_req *req)
{
	struct hbmpool_wb_group *g = req->private;

	req->flags |= HBMPOOL_WB_UNLOCKED;
	/* the transports are done with the snapshot: every end_io has run */
	if (!atomic_dec_and_test(&g->snap_users))
		return;
	switch (hbmpool_replica_wb_outcome(atomic_read(&g->took),
					   hweight_long(READ_ONCE(g->missed)))) {
	case HBMPOOL_WB_CLEAN:
		break;
	case HBMPOOL_WB_DIRTY:
		hbmpool_wb_redirty(g);
		break;
	case HBMPOOL_WB_CLEAN_OUTDATE:
		refcount_inc(&g->ref);		/* the work's */
		queue_work(hbmpool_outdate_wq, &g->outdate_work);
		return;
	}
	hbmpool_wb_release(g);
}

/*
 * A write-back request is done.  Any context.  Its outcome is the group's
 * (hbmpool_wb_snap_done()); one to a move's target that failed fails the
 * move.  The group holds the region and the pages.
 */
static void hbmpool_wb_end_io(struct hbmpool_req *req)
{
	struct hbmpool_wb_group *g = req->private;
	struct hbmpool_region *r = g->r;
	struct hbmpool_node *node = req->node;
	bool syncing = req->flags & HBMPOOL_WB_SYNCING;

	if (!req->status) {
		hbmpool_node_unsuspect(node);
		if (!syncing)
			atomic_inc(&g->took);
		hbmpool_count3(&r->stats, node, HBMPOOL_STAT_WRITEBACKS, g->nr);
		hbmpool_count3(&r->stats, node, HBMPOOL_STAT_BYTES_WRITTEN_BACK,
			       (u64)g->nr << PAGE_SHIFT);
		goto out;
	}
	if (syncing)
		hbmpool_resync_fail(g->job, req->status);
	else
		set_bit(req->flags >> HBMPOOL_WB_COPY_SHIFT, &g->missed);
	hbmpool_count3(&r->stats, node, HBMPOOL_STAT_ERRORS, 1);
	if (req->status == -ETIMEDOUT)
		hbmpool_count3(&r->stats, node, HBMPOOL_STAT_TIMEOUTS, 1);
	pr_warn_ratelimited("region %u pages %lu+%u: write-back to node %u failed: %d\n",
			    r->id, g->pages[0]->index, g->nr, node->id, req->status);
out:
	if (!req->timed_out)
		hbmpool_wb_snap_done(req);
}

/*
 * The transport is done with the request, late after a timeout: the next
 * write-back of the pages may go, and the chunk it wrote to may be reused.
 */
static void hbmpool_wb_destructor(struct hbmpool_req *req)
{
	struct hbmpool_wb_group *g = req->private;

	if (!(req->flags & HBMPOOL_WB_UNLOCKED))
		hbmpool_wb_snap_done(req);
	hbmpool_wb_group_put(g);
}

/* Releases the HBM_PG_WRITEBACK bit lock of @page when no request took it. */
static void hbmpool_wb_unlock(struct page *page)
{
	clear_and_wake_up_bit(HBM_PG_WRITEBACK, &page->private);
}

/* A copy a write-back goes to: sampled from the write set. */
struct hbmpool_wb_copy {
	struct hbmpool_node *node;	/* referenced */
	u64 offset;			/* of the page */
	struct hbmpool_copy_id id;	/* of the copy, in its map */
	u32 gen;
	bool syncing;
};

/*
 * Under the page lock, holding its write-back bit: the copies the write
 * set names (every up-to-date copy, and a live move's target).
 */
static unsigned int hbmpool_wb_sample(struct hbmpool_region *r,
				      struct page *page,
				      struct hbmpool_wb_copy *set,
				      struct hbmpool_resync **job)
{
	const struct hbmpool_chunk_map *map;
	u64 in_chunk = hbmpool_offset_in_chunk(r, page->index);
	unsigned int n = 0;
	u32 c;

	rcu_read_lock();
	map = hbmpool_write_set(r, page->index);
	for (c = 0; c < map->nr_copies && n < HBMPOOL_MAX_COPIES; c++) {
		if (!hbmpool_copy_writable(map, c))
			continue;
		set[n].node = map->copies[c].node;
		set[n].offset = map->copies[c].offset + in_chunk;
		set[n].gen = map->copies[c].gen;
		set[n].id = (struct hbmpool_copy_id){
			.node_id = map->copies[c].node->id,
			.gen = map->copies[c].gen,
			.offset = map->copies[c].offset,
		};
		set[n].syncing = map->copies[c].state == HBMPOOL_COPY_SYNCING;
		hbmpool_node_get(set[n].node);
		if (set[n].syncing) {
			*job = map->job;
			hbmpool_resync_get_ref(*job);
		}
		n++;
	}
	rcu_read_unlock();
	return n;
}

/*
 * Under @page's lock, holding its write-back bit, when it is dirty: takes
 * its snapshot into @bounce and makes it clean.  Every mapping is
 * write-protected: the next write through a PTE goes through page_mkwrite,
 * which needs the page lock, as does a read fault that would map it
 * writable (it marks the page dirty first, writepredict.c); a kernel
 * writer that holds a reference marks the page dirty again when done
 * (hbmpool_dirty_folio()).  A pinned page may be written by DMA that tells
 * nobody (an io_uring or RDMA buffer): it stays dirty until unpinned, and
 * every write-back copies it again.
 */
static void hbmpool_wb_snapshot(struct hbmpool_region *r, struct page *page,
				struct page *bounce)
{
	folio_mkclean(page_folio(page));
	if (!page_maybe_dma_pinned(page)) {
		ClearPageDirty(page);
		if (test_and_clear_bit(HBM_PG_DIRTY, &page->private))
			hbmpool_cache_dirty(r, -1);
	}
	copy_highpage(bounce, page);
}

/* The requests of one write-back: a group per contiguous part of the run. */
struct hbmpool_wb_reqs {
	unsigned int nr;
	struct hbmpool_req *reqs[HBMPOOL_WB_BATCH * HBMPOOL_MAX_COPIES];
};

/*
 * Makes a group of @run[0..@nr) (snapshots in @bounce, write-back bits
 * held, consecutive indices) and its requests, one per copy of @set (whose
 * offsets are those of @first's page), and adds them to @w.  On failure
 * nothing is added and the pages are dirty again.
 */
static int hbmpool_wb_group_add(struct hbmpool_region *r, struct page *first,
				struct page **run, struct page **bounce,
				unsigned int nr, const struct hbmpool_wb_copy *set,
				unsigned int ncopies, struct hbmpool_resync *job,
				struct hbmpool_wb_reqs *w)
{
	u64 delta = (u64)(run[0]->index - first->index) << PAGE_SHIFT;
	struct hbmpool_req *reqs[HBMPOOL_MAX_COPIES] = {};
	struct hbmpool_wb_group *g;
	unsigned int i;
	int err = 0;

	g = kzalloc(struct_size(g, pages, nr), GFP_KERNEL);
	if (!g)
		err = -ENOMEM;
	for (i = 0; i < ncopies && !err; i++) {
		reqs[i] = hbmpool_req_alloc(set[i].node, HBMPOOL_REQ_WRITE,
					    set[i].offset + delta, bounce, nr,
					    GFP_KERNEL);
		if (!reqs[i])
			err = -ENOMEM;
	}
	if (!ncopies)
		err = -EIO;	/* no copy takes writes: the chunk is lost */
	if (err) {
		/* nothing went: dirty again, as after a failed write-back */
		for (i = 0; i < ncopies; i++)
			if (reqs[i])
				hbmpool_req_put(reqs[i]);
		for (i = 0; i < nr; i++) {
			if (READ_ONCE(run[i]->mapping) == hbmpool_mapping(r) &&
			    !test_and_set_bit(HBM_PG_DIRTY, &run[i]->private))
				hbmpool_cache_dirty(r, 1);
			hbmpool_wb_unlock(run[i]);
		}
		kfree(g);
		return err;
	}

	/* The group holds the bit locks, pages and region until its requests go. */
	refcount_set(&g->ref, ncopies);
	atomic_set(&g->snap_users, ncopies);
	atomic_set(&g->took, 0);
	g->missed = 0;
	INIT_WORK(&g->outdate_work, hbmpool_wb_outdate_work);
	for (i = 0; i < ncopies; i++)
		g->copies[i] = set[i].id;
	g->chunk = hbmpool_chunk_of(r, run[0]->index);
	kref_get(&r->ref);
	g->r = r;
	g->nr = nr;
	for (i = 0; i < nr; i++) {
		get_page(run[i]);
		g->pages[i] = run[i];
	}
	if (job) {
		hbmpool_resync_get_ref(job);
		g->job = job;
	}
	for (i = 0; i < ncopies; i++) {
		reqs[i]->data_gen = set[i].gen;
		reqs[i]->owner = run[0];
		reqs[i]->private = g;
		reqs[i]->flags = (set[i].syncing ? HBMPOOL_WB_SYNCING : 0) |
				 ((unsigned long)i << HBMPOOL_WB_COPY_SHIFT);
		reqs[i]->end_io = hbmpool_wb_end_io;
		reqs[i]->destructor = hbmpool_wb_destructor;
		w->reqs[w->nr++] = reqs[i];
	}
	return 0;
}

/**
 * hbmpool_writeback_run - write back the dirty pages of a run and wait
 * @r: the region
 * @pages: cache pages of @r the caller holds references on, of consecutive
 *	indices in one chunk
 * @nr: how many, 1..HBMPOOL_WB_BATCH
 * @written: set to the number of pages written back, if not NULL
 *
 * Each contiguous part of the run that is dirty goes to every copy of its
 * chunk in one request per copy; a page is clean only if every copy took
 * it.  On failure the pages stay dirty and cached: nothing is dropped.
 * Never called with mmap_lock held.  Return: 0, or the first error.
 */
int hbmpool_writeback_run(struct hbmpool_region *r, struct page **pages,
			  unsigned int nr, unsigned int *written)
{
	struct hbmpool_wb_copy set[HBMPOOL_MAX_COPIES];
	struct page *bounce[HBMPOOL_WB_BATCH] = {};
	struct page *run[HBMPOOL_WB_BATCH];
	struct hbmpool_resync *job = NULL;
	unsigned int ncopies = 0, i, j, n = 0, got;
	struct hbmpool_wb_reqs *w;
	bool outdating = false, lost = false;
	int err = 0, e;

	if (written)
		*written = 0;
	if (WARN_ON_ONCE(!nr || nr > HBMPOOL_WB_BATCH))
		return -EINVAL;
	w = kmalloc(sizeof(*w), GFP_KERNEL);
	got = alloc_pages_bulk_array(GFP_KERNEL | __GFP_NOWARN, nr, bounce);
	if (!w || got < nr) {
		kfree(w);
		for (i = 0; i < got; i++)
			put_page(bounce[i]);
		return -ENOMEM;
	}
	w->nr = 0;
	/* A write-back of these pages in flight must land first; in index order. */
	for (i = 0; i < nr; i++) {
		if (wait_on_bit_lock(&pages[i]->private, HBM_PG_WRITEBACK, TASK_KILLABLE)) {
			while (i--)
				hbmpool_wb_unlock(pages[i]);
			err = -EINTR;
			goto out;
		}
	}
	/*
	 * The snapshots, each under its page lock.  The write set is sampled
	 * once, with every bit of the run held: a move that starts later sees
	 * this write-back's bits, and the run is in one chunk.
	 */
	for (i = 0; i < nr; i++) {
		struct page *page = pages[i];

		lock_page(page);
		if (page->mapping != hbmpool_mapping(r) ||
		    !test_bit(HBM_PG_DIRTY, &page->private)) {
			unlock_page(page);
			hbmpool_wb_unlock(page);
			continue;
		}
		if (unlikely(PageHWPoison(page))) {
			/*
			 * Its data is lost to a memory error: never read (a
			 * real error would be a machine check in the copy)
			 * nor sent over a copy's good data.  Dropped, counted.
			 */
			hbmpool_wb_unlock(page);
			hbmpool_drop_poisoned(r, page);		/* unlocks it */
			lost = true;
			continue;
		}
		if (!n)
			ncopies = hbmpool_wb_sample(r, page, set, &job);
		hbmpool_wb_snapshot(r, page, bounce[n]);
		unlock_page(page);
		run[n++] = page;
	}
	/* a group per contiguous part */
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n; j++)
			if (run[j]->index != run[j - 1]->index + 1)
				break;
		e = hbmpool_wb_group_add(r, run[0], run + i, bounce + i, j - i,
					 set, ncopies, job, w);
		if (e && !err)
			err = e;
	}
	for (i = 0; i < ncopies; i++)
		hbmpool_node_put(set[i].node);	/* the requests have their own */
	if (job)
		hbmpool_resync_put(job);	/* the groups have their own */

	for (i = 0; i < w->nr; i++)
		hbmpool_req_submit(w->reqs[i], READ_ONCE(hbmpool_fetch_timeout_ms));
	for (i = 0; i < w->nr && !err; i++)
		if (wait_for_completion_killable(&w->reqs[i]->done))
			err = -EINTR;	/* the requests go on; end_io decides */
	/* a group succeeded when an up-to-date copy took it (replicas) */
	for (i = 0; i < w->nr; i++) {
		struct hbmpool_req *req = w->reqs[i];
		struct hbmpool_wb_group *g = req->private;

		if (!err && req->status && !atomic_read(&g->took))
			err = req->status;
		if (!err && req->status)
			outdating = true;
		hbmpool_req_put(req);
	}
	/*
	 * Copies missed it: they are outdated before the pages' bits go
	 * (hbmpool_wb_outdate_work()), and a caller that syncs returns only
	 * then, so that what it reports (the region's degraded chunks) is so.
	 */
	for (i = 0; outdating && !err && i < n; i++)
		if (wait_on_bit(&run[i]->private, HBM_PG_WRITEBACK, TASK_KILLABLE))
			err = -EINTR;
	if (!err && lost)
		err = -EIO;
	if (!err && written)
		*written = n;
out:
	for (i = 0; i < nr; i++)
		put_page(bounce[i]);	/* the requests have theirs */
	kfree(w);
	return err;
}

/* Writes @page back to every copy of its chunk if it is dirty and waits. */
int hbmpool_writeback_page(struct hbmpool_region *r, struct page *page)
{
	return hbmpool_writeback_run(r, &page, 1, NULL);
}

/* ---- eviction ---- */

/*
 * Advances the CLOCK hand: the page under it moves to the tail of the list
 * and is returned, NULL if the list is empty.  *@spared: the page had been
 * referenced since the hand last passed (no longer), or it is dirty and
 * @skip_dirty is set (its reference bit is left for a hand that may write
 * it back).
 */
static struct page *__hbmpool_clock_advance(bool skip_dirty, bool *spared)
{
	struct page *page;

	lockdep_assert_held(&hbmpool_cache.lock);
	page = list_first_entry_or_null(&hbmpool_cache.lru, struct page, lru);
	if (page) {
		list_move_tail(&page->lru, &hbmpool_cache.lru);
		*spared = (skip_dirty && test_bit(HBM_PG_DIRTY, &page->private)) ||
			  test_and_clear_bit(HBM_PG_REFERENCED, &page->private);
	}
	return page;
}

/* A page the CLOCK hand chose, with references on it and its region. */
struct hbmpool_victim {
	struct hbmpool_region *r;
	struct page *page;
};

/* Pages evicted together: one unmap (and TLB flush) per run of indices. */
#define HBMPOOL_EVICT_BATCH	32

static void hbmpool_victim_put(struct hbmpool_victim *v)
{
	put_page(v->page);
	hbmpool_region_put(v->r);
}

/*
 * Readies @v's page for eviction: writes it back if dirty (only if
 * @may_writeback), then locks it.  Return: 0 with the page locked, clean
 * and up to date; 1 when it held no data (a failed fetch) and was taken
 * out; -EBUSY to leave it; a write-back's error.
 */
static int hbmpool_evict_prepare(struct hbmpool_victim *v, bool may_writeback)
{
	struct hbmpool_region *r = v->r;
	struct page *page = v->page;
	int err;

	/* ours and the cache's; a write-back of a held page gains nothing */
	if (hbmpool_page_held(page, 1))
		return -EBUSY;
	if (test_bit(HBM_PG_DIRTY, &page->private)) {
		if (!may_writeback)
			return -EBUSY;
		err = hbmpool_writeback_page(r, page);
		if (err)
			return err;
	}
	if (!trylock_page(page))
		return -EBUSY;
	/* a failed fetch holds no data: out, not counted as an eviction */
	if (hbmpool_page_abandon_failed(r, page))
		return 1;
	if (page->mapping != hbmpool_mapping(r) ||
	    !test_bit(HBM_PG_UPTODATE, &page->private) ||
	    test_bit(HBM_PG_DIRTY, &page->private) ||
	    test_bit(HBM_PG_WRITEBACK, &page->private) ||
	    page_maybe_dma_pinned(page)) {
		unlock_page(page);
		return -EBUSY;
	}
	return 0;
}

/* Counts the evictions of @pages[0..@nr) set in @removed, per chunk's node. */
static void hbmpool_count_evicted(struct hbmpool_region *r, struct page **pages,
				  unsigned int nr, const unsigned long *removed)
{
	unsigned int i, run = 0;
	pgoff_t first = 0;

	rcu_read_lock();
	for_each_set_bit(i, removed, nr) {
		if (run && hbmpool_chunk_of(r, pages[i]->index) !=
			   hbmpool_chunk_of(r, first)) {
			hbmpool_count3(&r->stats, hbmpool_read_copy(r, first, NULL),
				       HBMPOOL_STAT_EVICTIONS, run);
			run = 0;
		}
		if (!run)
			first = pages[i]->index;
		run++;
	}
	if (run)
		hbmpool_count3(&r->stats, hbmpool_read_copy(r, first, NULL),
			       HBMPOOL_STAT_EVICTIONS, run);
	rcu_read_unlock();
}

/*
 * Takes the locked, clean, up-to-date pages of @v[0..@n) (one region, from
 * hbmpool_evict_prepare(); @n at most HBMPOOL_EVICT_BATCH) out of the cache
 * once they are unmapped, all at once, and unlocks them.  A page that
 * cannot go is left, and its victim's references dropped.  Returns how
 * many were evicted, and @v is compacted so that their victims are
 * @v[0..ret): they still hold the references on page and region, for the
 * caller to drop.
 */
static unsigned int hbmpool_evict_unmapped(struct hbmpool_victim *v,
					   unsigned int n)
{
	struct hbmpool_region *r = v[0].r;
	struct page *pages[HBMPOOL_EVICT_BATCH];
	DECLARE_BITMAP(removed, HBMPOOL_EVICT_BATCH);
	unsigned int i, nr = 0, evicted;

	for (i = 0; i < n; i++) {
		struct page *page = v[i].page;

		/*
		 * Only the cache's reference and ours may be left: a
		 * get_user_pages() reference (O_DIRECT in 6.1 takes
		 * FOLL_GET, not a pin) means I/O may still land in the
		 * page.  Frozen, no lookup can take one meanwhile.  A holder
		 * that let go since the checks may have marked it dirty
		 * without the page lock on its way out: then it stays.
		 * Mapped cannot happen: faults map under the page lock.
		 */
		if (page_ref_freeze(page, 2)) {
			if (!test_bit(HBM_PG_DIRTY, &page->private) &&
			    !page_mapped(page)) {
				pages[nr] = page;
				v[nr++] = v[i];
				continue;
			}
			page_ref_unfreeze(page, 2);
		}
		unlock_page(page);
		hbmpool_victim_put(&v[i]);
	}
	if (!nr)
		return 0;
	evicted = hbmpool_remove_pages(r, pages, nr, removed, NULL);
	for (i = 0; i < nr; i++)
		page_ref_unfreeze(pages[i], 2);
	hbmpool_count_evicted(r, pages, nr, removed);
	for (i = 0, n = 0; i < nr; i++) {
		unlock_page(pages[i]);
		if (!test_bit(i, removed)) {
			hbmpool_victim_put(&v[i]);
			continue;
		}
		put_page(pages[i]);	/* the cache's reference */
		v[n++] = v[i];
	}
	return evicted;
}

/*
 * Evicts the @n locked, clean pages of @v (from hbmpool_evict_prepare()):
 * unmaps each run of consecutive indices of one region at once (one walk
 * and one TLB flush per run), then takes the run out (one pass over the
 * index and the CLOCK list), and drops the references.  Clean under the
 * page lock means no writable PTE (page_mkwrite and a read fault that maps
 * a page writable set DIRTY first, under the lock); once unmapped no PTE
 * can come back before the removal, since faults map under the page lock.
 * Returns how many were evicted.
 */
static long hbmpool_evict_batch(struct hbmpool_victim *v, unsigned int n)
{
	struct page *pages[HBMPOOL_EVICT_BATCH];
	unsigned int i, j, run, done;
	long evicted = 0;

	for (i = 0; i < n; i += run) {
		/* a run fits hbmpool_evict_unmapped()'s arrays */
		for (run = 1; i + run < n && run < HBMPOOL_EVICT_BATCH; run++)
			if (v[i + run].r != v[i].r ||
			    v[i + run].page->index != v[i].page->index + run)
				break;
		unmap_mapping_pages(hbmpool_mapping(v[i].r), v[i].page->index,
				    run, false);
		done = hbmpool_evict_unmapped(v + i, run);
		for (j = 0; j < done; j++)
			pages[j] = v[i + j].page;
		hbmpool_page_release_run(pages, done);	/* mostly the last references */
		for (j = i; j < i + done; j++)
			hbmpool_region_put(v[j].r);
		evicted += done;
	}
	return evicted;
}

/*
 * Advances the CLOCK hand to the next page that may be evicted and takes
 * references on it and its region.  false when the list is empty.  A page
 * spared (see __hbmpool_clock_advance()) or going away leaves @v->page NULL.
 */
static bool hbmpool_clock_next(struct hbmpool_victim *v, bool may_writeback)
{
	struct page *page;
	bool spared;

	v->page = NULL;
	spin_lock(&hbmpool_cache.lock);
	page = __hbmpool_clock_advance(!may_writeback, &spared);
	if (!page) {
		spin_unlock(&hbmpool_cache.lock);
		return false;
	}
	if (!spared) {
		/* On the list, the page's region is not freed yet. */
		v->r = hbmpool_page_region(page);
		if (kref_get_unless_zero(&v->r->ref)) {
			/* another evictor may hold it frozen at 0 */
			if (get_page_unless_zero(page))
				v->page = page;
			else
				hbmpool_region_put(v->r);
		}
	}
	spin_unlock(&hbmpool_cache.lock);
	return true;
}

/* @v's page continues the run of dirty pages that ends with @last's. */
static bool hbmpool_victim_follows(const struct hbmpool_victim *last,
				   const struct hbmpool_victim *v)
{
	return v->r == last->r && v->page->index == last->page->index + 1 &&
	       hbmpool_chunk_of(v->r, v->page->index) ==
	       hbmpool_chunk_of(v->r, last->page->index);
}

/*
 * CLOCK state of one hbmpool_evict() call: clean pages locked for a batch,
 * and a run of dirty ones to write back in one go before they are evicted.
 */
struct hbmpool_evict_state {
	struct hbmpool_victim clean[HBMPOOL_EVICT_BATCH];
	unsigned int nr_clean;
	struct hbmpool_victim *dirty;	/* HBMPOOL_WB_BATCH, if it may write back */
	unsigned int nr_dirty;
	long evicted;
};

static void hbmpool_evict_flush_clean(struct hbmpool_evict_state *st)
{
	st->evicted += hbmpool_evict_batch(st->clean, st->nr_clean);
	st->nr_clean = 0;
}

/* Adds @v (referenced) to the clean batch if it may be evicted now. */
static int hbmpool_evict_add(struct hbmpool_evict_state *st,
			     struct hbmpool_victim *v, bool may_writeback)
{
	int err = hbmpool_evict_prepare(v, may_writeback);

	if (err) {
		if (err > 0)
			st->evicted++;
		hbmpool_victim_put(v);
		return err < 0 && err != -EBUSY ? err : 0;
	}
	st->clean[st->nr_clean++] = *v;
	if (st->nr_clean == ARRAY_SIZE(st->clean))
		hbmpool_evict_flush_clean(st);
	return 0;
}

/*
 * Write-back clustering: the dirty pages that follow the run @pages[0..@n)
 * in its chunk, up to HBMPOOL_WB_BATCH in all, go with it (referenced,
 * added to @pages), so that the eviction of one dirty page writes its
 * neighbours back in the same request.  They stay cached, clean: a later
 * eviction drops them without a write-back.  Returns how many were added.
 */
static unsigned int hbmpool_wb_cluster(struct hbmpool_region *r,
				       struct page **pages, unsigned int n)
{
	u32 chunk = hbmpool_chunk_of(r, pages[0]->index);
	unsigned int more = 0;
	pgoff_t index = pages[n - 1]->index + 1;

	for (; n + more < HBMPOOL_WB_BATCH && index < r->nr_pages; index++) {
		struct page *page;

		if (hbmpool_chunk_of(r, index) != chunk)
			break;
		page = hbmpool_lookup(r, index);
		if (!page)
			break;
		if (!test_bit(HBM_PG_DIRTY, &page->private) ||
		    hbmpool_page_held(page, 1)) {
			put_page(page);
			break;
		}
		pages[n + more++] = page;
	}
	return more;
}

/*
 * Unmaps the pages of @pages[0..@nr) (consecutive indices of @r, referenced)
 * whose lock it gets, each run of them in one call.  Under the page lock:
 * the zap drops a writable PTE before its TLB flush, and a CPU may write
 * through the stale entry until then; a write-back of the page (a sync, or
 * another evictor) needs the lock, so it copies the page only once the
 * flush is done and sees that write.  A page it does not get, or that left
 * the cache, is left alone: the write-back write-protects it as before.
 */
static void hbmpool_unmap_run_locked(struct hbmpool_region *r,
				     struct page **pages, unsigned int nr)
{
	struct address_space *mapping = hbmpool_mapping(r);
	DECLARE_BITMAP(locked, HBMPOOL_WB_BATCH);
	unsigned int i, run;

	bitmap_zero(locked, HBMPOOL_WB_BATCH);
	for (i = 0; i < nr; i++) {
		if (!trylock_page(pages[i]))
			continue;
		if (pages[i]->mapping != mapping) {
			unlock_page(pages[i]);
			continue;
		}
		__set_bit(i, locked);
	}
	for (i = 0; i < nr; i += run) {
		run = 1;
		if (!test_bit(i, locked))
			continue;
		while (i + run < nr && test_bit(i + run, locked))
			run++;
		unmap_mapping_pages(mapping, pages[i]->index, run, false);
	}
	for_each_set_bit(i, locked, nr)
		unlock_page(pages[i]);
}

/*
 * Writes the run of dirty pages back in one request per copy, with no page
 * of the clean batch locked (the write-back waits for the link), then
 * evicts them.  A write-back's error is returned.
 *
 * The run and the neighbours that go with it are unmapped first
 * (hbmpool_unmap_run_locked()): one TLB flush for all of them.  Otherwise
 * the write-back would write-protect each page on its own (a flush per
 * page, an IPI to every CPU that runs the mapping) and the eviction would
 * flush again.  A page unmapped and then not evicted (a neighbour, a page
 * found busy) costs its next access a minor fault, which maps it from the
 * cache; one that a fault maps again meanwhile is write-protected by the
 * write-back as usual.
 */
static int hbmpool_evict_flush_dirty(struct hbmpool_evict_state *st)
{
	struct page *pages[HBMPOOL_WB_BATCH];
	unsigned int i, n = st->nr_dirty, more;
	int err;

	if (!n)
		return 0;
	st->nr_dirty = 0;
	hbmpool_evict_flush_clean(st);
	for (i = 0; i < n; i++)
		pages[i] = st->dirty[i].page;
	more = hbmpool_wb_cluster(st->dirty[0].r, pages, n);
	hbmpool_unmap_run_locked(st->dirty[0].r, pages, n + more);
	err = hbmpool_writeback_run(st->dirty[0].r, pages, n + more, NULL);
	for (i = n; i < n + more; i++)
		put_page(pages[i]);
	for (i = 0; i < n; i++) {
		if (err)
			hbmpool_victim_put(&st->dirty[i]);
		else
			hbmpool_evict_add(st, &st->dirty[i], false);
	}
	return err;
}

/*
 * CLOCK: evicts up to @nr pages, looking at @max_scan at most (0: twice the
 * cache); returns how many.  Clean pages are gathered and evicted in
 * batches; dirty ones (only if @may_writeback) in runs of consecutive
 * pages, written back together first.  Stops at the first failed
 * write-back: the next call (the worker backs off) tries again.  If that
 * is not enough, pieces cached whole (huge.c) go, 2 MiB each.
 */
static long hbmpool_evict(long nr, bool may_writeback, long max_scan)
{
	struct hbmpool_evict_state state = {}, *st = &state;
	long scanned = 0;
	int err = 0;

	if (may_writeback) {
		st->dirty = kmalloc_array(HBMPOOL_WB_BATCH, sizeof(*st->dirty),
					  GFP_KERNEL);
		may_writeback = st->dirty;
	}
	if (!max_scan)
		max_scan = 2 * atomic_long_read(&hbmpool_cache.nr_cached) + 16;
	while (st->evicted + st->nr_clean + st->nr_dirty < nr &&
	       scanned++ < max_scan) {
		struct hbmpool_victim v;

		if (!(scanned % 256))
			cond_resched();
		if (!hbmpool_clock_next(&v, may_writeback))
			break;
		if (!v.page)
			continue;
		if (may_writeback && test_bit(HBM_PG_DIRTY, &v.page->private) &&
		    !hbmpool_page_held(v.page, 1)) {
			if (st->nr_dirty &&
			    (st->nr_dirty == HBMPOOL_WB_BATCH ||
			     !hbmpool_victim_follows(&st->dirty[st->nr_dirty - 1], &v))) {
				err = hbmpool_evict_flush_dirty(st);
				if (err) {
					hbmpool_victim_put(&v);
					break;	/* a write-back failed: do not hammer the link */
				}
			}
			st->dirty[st->nr_dirty++] = v;
			continue;
		}
		err = hbmpool_evict_add(st, &v, false);
		if (err)
			break;
	}
	if (!err)
		hbmpool_evict_flush_dirty(st);
	else
		while (st->nr_dirty)
			hbmpool_victim_put(&st->dirty[--st->nr_dirty]);
	hbmpool_evict_flush_clean(st);
	kfree(st->dirty);
	/* pieces cached whole go when 4 KiB pages could not make the room */
	if (st->evicted < nr)
		st->evicted += hbmpool_huge_evict(nr - st->evicted);
	return st->evicted;
}

/* Called before a fetch, without mmap_lock unless !@may_writeback. */
void hbmpool_make_room(bool may_writeback)
{
	if (atomic_long_read(&hbmpool_cache.nr_cached) < hbmpool_high_wm())
		return;
	if (!hbmpool_evict(1, may_writeback, 0))
		hbmpool_count(&hbmpool_global_stats, HBMPOOL_STAT_OVER_BUDGET, 1);
}

#define HBMPOOL_NOWAIT_SCAN	32

/*
 * For the fault fast path, under mmap_lock, before a run of up to @nr
 * pages: true if there is room for the first, evicting clean pages to make
 * room for the run if the cache is full (one batch, a short look: the slow
 * path can do more); nothing here writes back.
 */
bool hbmpool_make_room_nowait(unsigned int nr)
{
	long over = atomic_long_read(&hbmpool_cache.nr_cached) + nr -
		    (long)hbmpool_high_wm();
	long want;

	if (over <= 0)
		return true;
	want = min_t(long, over, HBMPOOL_EVICT_BATCH);
	return hbmpool_evict(want, false, HBMPOOL_NOWAIT_SCAN + want) ||
	       atomic_long_read(&hbmpool_cache.nr_cached) < hbmpool_high_wm();
}

/*
 * Evicts up to @nr clean pages (pieces cached whole included) with a short
 * look, writing nothing back; for a fault under mmap_lock.  Returns how
 * many.
 */
long hbmpool_evict_clean(long nr)
{
	return hbmpool_evict(nr, false, 2 * nr + HBMPOOL_NOWAIT_SCAN);
}

#define HBMPOOL_EVICT_BACKOFF_MIN	(HZ / 10)
#define HBMPOOL_EVICT_BACKOFF_MAX	(5 * HZ)

/*
 * Evicts down to the low watermark.  When it cannot (pages that fail to be
 * written back, pinned pages), it tries again later, backing off, so that
 * the cache returns under its budget once the cause goes away.
 */
static void hbmpool_evict_work(struct work_struct *work)
{
	long over;

	while ((over = atomic_long_read(&hbmpool_cache.nr_cached) -
		       hbmpool_low_wm()) > 0) {
		if (!hbmpool_evict(min(over, 64L), true, 0))
			break;
		hbmpool_cache.evict_backoff = HBMPOOL_EVICT_BACKOFF_MIN;
	}
	if (over <= 0) {
		hbmpool_cache.evict_backoff = HBMPOOL_EVICT_BACKOFF_MIN;
		return;
	}
	queue_delayed_work(system_unbound_wq, &hbmpool_cache.evict_work,
			   hbmpool_cache.evict_backoff);
	hbmpool_cache.evict_backoff = min(2 * hbmpool_cache.evict_backoff,
					  (unsigned long)HBMPOOL_EVICT_BACKOFF_MAX);
}

void hbmpool_cache_budget_changed(void)
{
	hbmpool_pagepool_fit();
	mod_delayed_work(system_unbound_wq, &hbmpool_cache.evict_work, 0);
}

/*
 * Drops @page without writing it back: its home node is gone.  Dirty data
 * goes with the node and is counted as an error.
 */
void hbmpool_drop_page(struct hbmpool_region *r, struct page *page)
{
	pgoff_t index = page->index;
	bool dirty;

	wait_on_bit(&page->private, HBM_PG_WRITEBACK, TASK_UNINTERRUPTIBLE);
	lock_page(page);
	if (page->mapping != hbmpool_mapping(r)) {
		unlock_page(page);
		return;
	}
	unmap_mapping_pages(hbmpool_mapping(r), page->index, 1, false);
	dirty = test_bit(HBM_PG_DIRTY, &page->private);
	if (!hbmpool_remove_page(r, page)) {
		unlock_page(page);
		return;
	}
	unlock_page(page);
	put_page(page);
	if (dirty) {
		struct hbmpool_node *node;

		rcu_read_lock();
		node = hbmpool_read_copy(r, index, NULL);
		hbmpool_count3(&r->stats, node, HBMPOOL_STAT_ERRORS, 1);
		pr_warn_ratelimited("region %u page %lu: dirty data lost with node %u\n",
				    r->id, index, node->id);
		rcu_read_unlock();
	}
}

/*
 * A page with a memory error: unmapped and dropped with the page lock held
 * by the caller, who keeps its own reference.  Its data is lost to the
 * error; counted as one.
 */
void hbmpool_drop_poisoned(struct hbmpool_region *r, struct page *page)
{
	pgoff_t index = page->index;

	unmap_mapping_pages(hbmpool_mapping(r), index, 1, false);
	if (hbmpool_remove_page(r, page))
		put_page(page);		/* the cache's reference */
	unlock_page(page);
	rcu_read_lock();
	hbmpool_count3(&r->stats, hbmpool_read_copy(r, index, NULL),
		       HBMPOOL_STAT_ERRORS, 1);
	rcu_read_unlock();
	pr_warn_ratelimited("region %u page %lu: memory error in the cached copy; dropped\n",
			    r->id, index);
}

/*
 * Region release, after it removed its pages: waits for a shrinker that
 * erased one of them and may still account it to the region.
 */
void hbmpool_cache_forget_region(void)
{
	spin_lock(&hbmpool_cache.lock);
	spin_unlock(&hbmpool_cache.lock);
}

/* ---- shrinker: clean, unmapped pages only; nothing here sleeps ---- */

static unsigned long hbmpool_shrink_count(struct shrinker *s,
					  struct shrink_control *sc)
{
	long n = atomic_long_read(&hbmpool_cache.nr_cached) -
		 atomic_long_read(&hbmpool_cache.nr_dirty) -
		 hbmpool_huge_nr_pages();	/* not the shrinker's (huge.c) */

	return n > 0 ? n : SHRINK_EMPTY;
}

static unsigned long hbmpool_shrink_scan(struct shrinker *s,
					 struct shrink_control *sc)
{
	unsigned long freed = 0, scanned = 0;

	while (scanned++ < sc->nr_to_scan) {
		struct hbmpool_region *r;
		struct page *page;
		bool removed = false, spared;

		spin_lock(&hbmpool_cache.lock);
		page = __hbmpool_clock_advance(true, &spared);
		if (!page) {
			spin_unlock(&hbmpool_cache.lock);
			break;
		}
		if (spared || !trylock_page(page)) {
			spin_unlock(&hbmpool_cache.lock);
			continue;
		}
		/*
		 * The page is on the list, so its region is alive; it is
		 * unmapped and locked, so no fault can map it meanwhile.
		 */
		r = hbmpool_page_region(page);
		if (!page_mapped(page) &&
		    !test_bit(HBM_PG_DIRTY, &page->private) &&
		    !test_bit(HBM_PG_WRITEBACK, &page->private) &&
		    page_ref_freeze(page, 1)) {
			/* only the cache's reference: no GUP, no lookup */
			if (test_bit(HBM_PG_DIRTY, &page->private) ||
			    xa_cmpxchg(&r->pages, page->index, page, NULL, 0) != page) {
				page_ref_unfreeze(page, 1);
				goto next;
			}
			page_ref_unfreeze(page, 1);
			__hbmpool_lru_del(page);
			/*
			 * r stays alive while we hold the lock: its release
			 * takes it (hbmpool_cache_forget_region()) before
			 * freeing.
			 */
			/* a failed fetch held no data: not an eviction */
			if (test_bit(HBM_PG_UPTODATE, &page->private)) {
				rcu_read_lock();
				hbmpool_count3(&r->stats,
					       hbmpool_read_copy(r, page->index, NULL),
					       HBMPOOL_STAT_EVICTIONS, 1);
				rcu_read_unlock();
			}
			hbmpool_cache_charge(r, -1);
			page->mapping = NULL;
			set_page_private(page, 0);
			removed = true;
		}
next:
		spin_unlock(&hbmpool_cache.lock);
		unlock_page(page);
		if (removed) {
			put_page(page);
			freed++;
		}
	}
	hbmpool_count(&hbmpool_global_stats, HBMPOOL_STAT_SHRINKER_FREED, freed);
	return freed ? freed : SHRINK_STOP;
}

int hbmpool_cache_init(void)
{
	spin_lock_init(&hbmpool_cache.lock);
	INIT_LIST_HEAD(&hbmpool_cache.lru);
	INIT_DELAYED_WORK(&hbmpool_cache.evict_work, hbmpool_evict_work);
	hbmpool_cache.evict_backoff = HBMPOOL_EVICT_BACKOFF_MIN;
	hbmpool_cache.shrinker.count_objects = hbmpool_shrink_count;
	hbmpool_cache.shrinker.scan_objects = hbmpool_shrink_scan;
	hbmpool_cache.shrinker.seeks = DEFAULT_SEEKS;
	return register_shrinker(&hbmpool_cache.shrinker, "hbmpool-cache");
}

/* Stops the background work; the regions, and so the pages, are gone. */
void hbmpool_cache_exit(void)
{
	unregister_shrinker(&hbmpool_cache.shrinker);
	cancel_delayed_work_sync(&hbmpool_cache.evict_work);
	WARN_ON(atomic_long_read(&hbmpool_cache.nr_cached));
}
