// SPDX-License-Identifier: GPL-2.0
/*
 * The hbmpool fault path: a touch of a page that is not cached fetches it
 * from its home node into a cache page and maps it.
 *
 * The faulting task never waits for the link while holding mmap_lock: on a
 * miss it pins the region, drops mmap_lock, fetches, and returns
 * VM_FAULT_RETRY, as filemap_fault() does for I/O; the retried fault finds
 * the page cached.  Only a fault that may not be retried (FAULT_FLAG_ALLOW_RETRY
 * clear, e.g. some get_user_pages() callers) fetches with mmap_lock held, as
 * the page cache does too.
 *
 * A fetch is a transport request whose completion makes the page up to date
 * or failed, and unlocks it.  A failed fault-driven fetch leaves the page
 * marked ERROR; the retried fault (or whichever fault comes first) takes it
 * out and gets SIGBUS.  A failed fetch never maps a page.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/wait_bit.h>

#include "hbmpool.h"

unsigned int hbmpool_fetch_timeout_ms;

/* ---- the cache index ---- */

/*
 * Returns the cached page at @index with a reference, or NULL: none, or
 * (*@mark set, if @mark) @index is in a piece cached whole, whose entry
 * hbmpool_huge_drop_at() drops.
 */
static struct page *__hbmpool_lookup(struct hbmpool_region *r, pgoff_t index,
				     bool *mark)
{
	struct page *page;

	rcu_read_lock();
repeat:
	page = xa_load(&r->pages, index);
	if (!page || xa_is_value(page)) {
		if (mark)
			*mark = page;	/* a value entry: a mark */
		page = NULL;
		goto out;
	}
	if (!get_page_unless_zero(page)) {
		cpu_relax();	/* frozen by an evictor or the pool, briefly */
		goto repeat;
	}
	if (unlikely(page != xa_load(&r->pages, index))) {
		put_page(page);
		goto repeat;
	}
out:
	rcu_read_unlock();
	return page;
}

struct page *hbmpool_lookup(struct hbmpool_region *r, pgoff_t index)
{
	return __hbmpool_lookup(r, index, NULL);
}

/*
 * Whether a miss on @index of @r may take the no-wait copy: its copy's node
 * is usable, at the chunk's data generation, its transport copies without
 * waiting, and no fault is being injected.  A transport that declines the
 * copy itself (a sim with latency) says so when asked.
 */
bool hbmpool_nowait_ok(struct hbmpool_region *r, pgoff_t index)
{
	const struct hbmpool_copy *cp;
	bool ok;

	rcu_read_lock();
	cp = hbmpool_read_copy_of(r, index);
	ok = cp && cp->node->transport->ops->copy_nowait &&
	     hbmpool_node_usable(cp->node) &&
	     cp->gen == hbmpool_node_data_gen(cp->node) &&
	     !READ_ONCE(cp->node->fail_fetch) && !hbmpool_fail_request_armed();
	rcu_read_unlock();
	return ok;
}

/* Readies a new page for @index of @r: locked, not yet published. */
static void hbmpool_page_init(struct hbmpool_region *r, struct page *page,
			      pgoff_t index, bool referenced)
{
	__folio_set_locked(page_folio(page));	/* nobody sees it yet */
	page->index = index;
	page->mapping = hbmpool_mapping(r);
	set_page_private(page, referenced ? BIT(HBM_PG_REFERENCED) : 0);
}

static void hbmpool_page_uninit(struct page *page)
{
	page->mapping = NULL;
	set_page_private(page, 0);
	__folio_clear_locked(page_folio(page));
	hbmpool_page_release(page);
}

/*
 * Publishes a new, locked cache page for @index of @r, not yet up to date,
 * on the CLOCK list (evictors skip it while it is locked); @referenced: as
 * if touched already (a page read ahead is not, until a fault finds it).
 * ERR_PTR(-EEXIST): someone else has the index.
 */
struct page *hbmpool_page_new(struct hbmpool_region *r, pgoff_t index,
			      bool referenced)
{
	struct page *page;
	void *old;

	page = hbmpool_pagepool_alloc();
	if (!page)
		return ERR_PTR(-ENOMEM);
	hbmpool_page_init(r, page, index, referenced);
	old = xa_cmpxchg(&r->pages, index, NULL, page, GFP_KERNEL);
	if (old) {
		hbmpool_page_uninit(page);
		return ERR_PTR(xa_is_err(old) ? xa_err(old) : -EEXIST);
	}
	hbmpool_cache_charge(r, 1);
	hbmpool_lru_add(page);
	return page;
}

/*
 * Takes a locked page that holds no data out of the cache and unlocks it;
 * the cache's reference goes last, as it may be the only one.
 */
void hbmpool_page_abandon(struct hbmpool_region *r, struct page *page)
{
	bool removed = hbmpool_remove_page(r, page);

	unlock_page(page);		/* waiters see mapping == NULL and look again */
	if (removed)
		hbmpool_page_release(page);	/* the cache's reference */
}

/*
 * Takes a locked page whose fetch failed (HBM_PG_ERROR or STALE) out of the
 * cache and unlocks it: it holds no data, and a fault fetches it again.
 * Any user that finds it may do so, not only a fault: an eviction, a chunk
 * copy.  Return: whether @page was such a page; if not, it stays locked.
 */
bool hbmpool_page_abandon_failed(struct hbmpool_region *r, struct page *page)
{
	if (page->mapping != hbmpool_mapping(r) ||
	    test_bit(HBM_PG_UPTODATE, &page->private) ||
	    !(test_bit(HBM_PG_ERROR, &page->private) ||
	      test_bit(HBM_PG_STALE, &page->private)))
		return false;
	hbmpool_page_abandon(r, page);
	return true;
}

static void hbmpool_fetch_end_io(struct hbmpool_req *req);

/*
 * The fetch that @req ends (as itself, or as the last of the requests that
 * carried it on to other copies) is over, with @status, and whether
 * another copy can serve it (@failover): recorded in the first request,
 * which its waiter holds (hbmpool_fetch_wait()), once the pages are
 * unlocked.  Any context.
 */
static void hbmpool_fetch_ended(struct hbmpool_req *req, int status,
				bool failover)
{
	struct hbmpool_req *first = req->parent ?: req;

	if (first != req)
		WRITE_ONCE(first->status, status);
	if (failover)	/* no other writer now; the waiter reads it after the mark */
		WRITE_ONCE(first->flags, first->flags | HBMPOOL_FETCH_FAILOVER);
	smp_mb__before_atomic();	/* status and flags before the mark */
	set_bit(HBMPOOL_FETCH_ENDED_NR, &first->flags);
	smp_mb__after_atomic();		/* the mark before the waiter's queue */
	wake_up_var(&first->flags);
}

/*
 * The fetch @req failed for good: its pages are marked and unlocked.  The
 * faulting page's failure is its fault's SIGBUS; pages read ahead are
 * fetched again by whoever touches them, and so is every page when
 * @failover (another copy serves a fault that timed out).
 */
static void hbmpool_fetch_fail(struct hbmpool_req *req, bool failover)
{
	bool fault = (req->flags & HBMPOOL_FETCH_FAULT) && !failover;
	unsigned int i;

	for (i = 0; i < req->nr_pages; i++) {
		clear_bit(HBM_PG_READAHEAD, &req->pages[i]->private);
		set_bit(!i && fault ? HBM_PG_ERROR : HBM_PG_STALE,
			&req->pages[i]->private);
	}
	for (i = 0; i < req->nr_pages; i++)
		unlock_page(req->pages[i]);
	hbmpool_fetch_ended(req, req->status, failover);
}

/*
 * Process context, the failed fetch's ->end_work, which holds a reference
 * to it: the fetch goes to the next good copy it has not tried, into the
 * same pages, still locked; none left, or no memory: it fails.
 */
static void hbmpool_fetch_retry_work(struct work_struct *work)
{
	struct hbmpool_req *old = container_of(work, struct hbmpool_req, end_work);
	struct hbmpool_rcopy rc[HBMPOOL_MAX_COPIES];
	struct hbmpool_req *req = NULL;
	struct hbmpool_region *r = old->private;
	pgoff_t index = old->pages[0]->index;
	unsigned long tried = old->flags >> HBMPOOL_FETCH_TRIED_SHIFT;
	const struct hbmpool_chunk_map *map;
	struct hbmpool_node *node = NULL;
	u64 offset = 0;
	u32 gen = 0;
	int c;

	rcu_read_lock();
	map = hbmpool_chunk_map(r, index);
	hbmpool_map_rcopies(map, rc);
	c = hbmpool_replica_next(rc, map->nr_copies, tried);
	if (c >= 0) {
		node = map->copies[c].node;
		hbmpool_node_get(node);
		offset = map->copies[c].offset + hbmpool_offset_in_chunk(r, index);
		gen = map->copies[c].gen;
	}
	rcu_read_unlock();
	if (node) {
		req = hbmpool_req_alloc(node, HBMPOOL_REQ_READ, offset, old->pages,
					old->nr_pages, GFP_KERNEL);
		hbmpool_node_put(node);		/* the request has its own */
	}
	if (!req) {
		hbmpool_fetch_fail(old, false);
	} else {
		req->data_gen = gen;
		req->end_io = hbmpool_fetch_end_io;
		req->private = r;
		req->flags = (old->flags & HBMPOOL_FETCH_FAULT) |
			     ((tried | BIT(c)) << HBMPOOL_FETCH_TRIED_SHIFT);
		/* the first request, which its waiter holds, gets the outcome */
		req->parent = old->parent ?: old;
		kref_get(&req->parent->ref);
		/* the new request holds the pages now, the waiter the old one */
		hbmpool_req_put_pages(old);
		hbmpool_req_submit(req, READ_ONCE(hbmpool_fetch_timeout_ms));
		hbmpool_req_put(req);
	}
	hbmpool_req_put(old);
}

/*
 * The fetch @req failed at its node: whether it goes on elsewhere.  One
 * that did not time out goes to the next good copy it has not tried, into
 * the same pages (hbmpool_fetch_retry_work()); one that timed out, whose
 * pages the transport may still write, fails, and *@failover says whether
 * another reachable copy will serve the fault when it fetches again.  Any
 * context.
 */
static bool hbmpool_fetch_retry(struct hbmpool_req *req, bool *failover)
{
	struct hbmpool_region *r = req->private;
	pgoff_t index = req->pages[0]->index;
	struct hbmpool_rcopy rc[HBMPOOL_MAX_COPIES];
	const struct hbmpool_chunk_map *map;
	unsigned long tried = req->flags >> HBMPOOL_FETCH_TRIED_SHIFT;
	int c, failed = -1, next = -1;

	*failover = false;
	rcu_read_lock();
	map = hbmpool_chunk_map(r, index);
	if (map->nr_copies > 1) {
		for (c = 0; c < map->nr_copies; c++)
			if (map->copies[c].node == req->node)
				failed = c;
		hbmpool_map_rcopies(map, rc);
		if (req->timed_out)
			*failover = hbmpool_replica_failover(rc, map->nr_copies, failed);
		else
			next = hbmpool_replica_next(rc, map->nr_copies,
						    failed >= 0 ? tried | BIT(failed) : tried);
	}
	rcu_read_unlock();
	if (next < 0)
		return false;
	if (failed >= 0)
		req->flags |= BIT(failed) << HBMPOOL_FETCH_TRIED_SHIFT;
	/* end_io runs once per request: its work is queued at most once */
	kref_get(&req->ref);		/* the work's */
	INIT_WORK(&req->end_work, hbmpool_fetch_retry_work);
	queue_work(hbmpool_outdate_wq, &req->end_work);
	return true;
}

/*
 * A fetch request is done: its pages become up to date, or failed, and are
 * unlocked.  Any context.  The region is alive until the unlock: its
 * release waits for the lock of every page it drops.  A failure marks the
 * node suspect, so that fetches of replicated chunks go elsewhere first,
 * and goes to another copy if there is one (hbmpool_fetch_retry()).
 */
static void hbmpool_fetch_end_io(struct hbmpool_req *req)
{
	struct hbmpool_region *r = req->private;
	struct hbmpool_node *node = req->node;
	bool failover;
	unsigned int i;

	if (!req->status) {
		hbmpool_node_unsuspect(node);
		hbmpool_count_fetched(&r->stats, node, req->nr_pages,
				      ktime_get_ns() - req->start_ns);
		for (i = 0; i < req->nr_pages; i++)
			set_bit(HBM_PG_UPTODATE, &req->pages[i]->private);
		/* the cache has them: nothing holds them for the request now */
		hbmpool_req_unlock_put_pages(req);
		hbmpool_fetch_ended(req, 0, false);
		return;
	}
	WRITE_ONCE(node->suspect, true);
	hbmpool_count3(&r->stats, node, HBMPOOL_STAT_ERRORS, 1);
	if (req->status == -ETIMEDOUT)
		hbmpool_count3(&r->stats, node, HBMPOOL_STAT_TIMEOUTS, 1);
	pr_warn_ratelimited("region %u pages %lu+%u: fetch from node %u failed: %d\n",
			    r->id, req->pages[0]->index, req->nr_pages,
			    node->id, req->status);
	if (hbmpool_fetch_retry(req, &failover))
		return;
	hbmpool_fetch_fail(req, failover);
}

/*
 * The most pages a run from @index may hold: @max, cut at its chunk's end
 * (one home, one run of the home's segment), the region's end and
 * HBMPOOL_REQ_MAX_PAGES.
 */
static unsigned int hbmpool_run_max(struct hbmpool_region *r, pgoff_t index,
				    unsigned int max)
{
	pgoff_t chunk_pages = r->chunk_size >> PAGE_SHIFT;

	max = min_t(pgoff_t, max, r->nr_pages - index);
	max = min_t(pgoff_t, max, chunk_pages - (index & (chunk_pages - 1)));
	return min_t(unsigned int, max, HBMPOOL_REQ_MAX_PAGES);
}

/*
 * Inserts @pages[@from..@nr) at consecutive indices from @index + @from
 * into @r's cache index, under one xa_lock, stopping at the first index
 * taken.  Return: how many of @pages are in (@from and before included), or
 * a negative errno when the first, @pages[0], could not go in.
 */
static int hbmpool_run_insert(struct hbmpool_region *r, pgoff_t index,
			      struct page **pages, unsigned int nr)
{
	XA_STATE(xas, &r->pages, index);
	unsigned int i = 0;
	bool taken = false;

	do {
		xas_lock(&xas);
		xas_set(&xas, index + i);
		for (; i < nr; i++) {
			if (xas_load(&xas)) {
				taken = true;
				break;
			}
			xas_store(&xas, pages[i]);
			if (xas_error(&xas))
				break;
			xas_next(&xas);
		}
		xas_unlock(&xas);
	} while (!taken && i < nr && xas_nomem(&xas, GFP_KERNEL));
	if (taken)	/* not an -ENOMEM state: frees a node no store used */
		xas_nomem(&xas, 0);
	if (i)
		return i;
	return taken ? -EEXIST : xas_error(&xas);
}

/*
 * Publishes a run of new, locked pages from @index into @pages, at most
 * @max (from hbmpool_run_max()): it ends at the first page in the cache
 * already and where a page would take the cache over its budget (the first
 * page excepted: its caller made room or saw some).  Only the first page is
 * @referenced.  The pages are allocated, indexed and put on the CLOCK list
 * in one go each.  Return: the number of pages, or -EEXIST (@index is
 * cached or being fetched), -ENOMEM.
 */
static int hbmpool_run_new(struct hbmpool_region *r, pgoff_t index,
			   unsigned int max, bool referenced,
			   struct page **pages)
{
	unsigned int got, i;
	long room;
	int nr;

	room = hbmpool_cache_budget_room();
	max = clamp_t(long, room, 1, max);
	if (max == 1) {
		pages[0] = hbmpool_page_new(r, index, referenced);
		return IS_ERR(pages[0]) ? PTR_ERR(pages[0]) : 1;
	}
	memset(pages, 0, max * sizeof(*pages));
	got = hbmpool_pagepool_alloc_bulk(pages, max);
	if (!got)
		return -ENOMEM;
	for (i = 0; i < got; i++)
		hbmpool_page_init(r, pages[i], index + i, referenced && !i);
	nr = hbmpool_run_insert(r, index, pages, got);
	for (i = nr > 0 ? nr : 0; i < got; i++)
		hbmpool_page_uninit(pages[i]);
	if (nr <= 0)
		return nr;
	hbmpool_cache_charge(r, nr);
	hbmpool_lru_add_run(pages, nr);
	return nr;
}

/*
 * An array for a run of up to *@max pages: @one if *@max is 1 or the
 * allocation fails (then *@max becomes 1).  Free with hbmpool_run_free().
 */
static struct page **hbmpool_run_alloc(unsigned int *max, struct page **one)
{
	struct page **pages;

	if (*max <= 1)
		return one;
	pages = kmalloc_array(*max, sizeof(*pages), GFP_KERNEL | __GFP_NOWARN);
	if (pages)
		return pages;
	*max = 1;
	return one;
}

static void hbmpool_run_free(struct page **pages, struct page **one)
{
	if (pages != one)
		kfree(pages);
}

/**
 * hbmpool_fetch_start - publish a run of pages and start fetching it
 * @r: the region
 * @index: the first page, which must not be in the cache
 * @max: the most pages in the run.  It also ends at its chunk's end (one
 *	home, one run of the home's segment), the region's end, the first
 *	page in the cache already, and where a page would take the cache
 *	over its budget (the first page excepted: its caller made room).
 * @mark: the page of the run (counted from @index) that carries
 *	HBM_PG_READAHEAD, or HBMPOOL_RA_NO_MARK
 * @flags: HBMPOOL_FETCH_FAULT: a failure of the first page is reported to
 *	the next fault; HBMPOOL_FETCH_AHEAD: nobody touched the first page
 * @reqp: for a caller that waits (hbmpool_fetch_wait()), the request,
 *	which it puts; or NULL
 *
 * Never waits for the link.  Return: the number of pages in the run, or
 * -EEXIST (@index is cached or being fetched), -ENOMEM.
 */
int hbmpool_fetch_start(struct hbmpool_region *r, pgoff_t index,
			unsigned int max, unsigned int mark,
			unsigned long flags, struct hbmpool_req **reqp)
{
	struct page *one, **pages;
	struct hbmpool_node *node;
	struct hbmpool_req *req;
	unsigned int i;
	u64 offset;
	int nr, ret;
	u32 gen;

	max = hbmpool_run_max(r, index, max);
	pages = hbmpool_run_alloc(&max, &one);
	nr = hbmpool_run_new(r, index, max, !(flags & HBMPOOL_FETCH_AHEAD), pages);
	if (nr < 0) {
		ret = nr;
		goto out;
	}
	if (mark < nr)
		set_bit(HBM_PG_READAHEAD, &pages[mark]->private);

	node = hbmpool_read_copy_get(r, index, &offset, &gen);
	req = hbmpool_req_alloc(node, HBMPOOL_REQ_READ, offset, pages, nr,
				GFP_KERNEL);
	hbmpool_node_put(node);		/* the request has its own */
	if (!req) {
		for (i = 0; i < nr; i++)
			hbmpool_page_abandon(r, pages[i]);
		ret = -ENOMEM;
		goto out;
	}
	req->data_gen = gen;
	req->end_io = hbmpool_fetch_end_io;
	req->private = r;
	req->flags = flags & HBMPOOL_FETCH_FAULT;
	if (reqp)
		*reqp = req;
	hbmpool_req_submit(req, READ_ONCE(hbmpool_fetch_timeout_ms));
	if (!reqp)
		hbmpool_req_put(req);
	ret = nr;
out:
	hbmpool_run_free(pages, &one);
	return ret;
}

/**
 * hbmpool_fetch_wait - wait, killable, for a fetch of hbmpool_fetch_start()
 * @req: its request
 *
 * Waits for the fetch, not for a page of it, so that the waiter holds no
 * page: the request drops its reference to each page as it unlocks it into
 * the cache, and from then on nothing but the cache holds the run (as a
 * piece's gathering wants it, huge.c).  The fetch's last request (@req,
 * or the last that carried it on to another copy) records its outcome in
 * @req once the pages are unlocked (hbmpool_fetch_ended()), and that is
 * waited for.
 *
 * Return: 0 (the run is up to date), -EINTR, -EAGAIN (the fetch timed out
 * but another copy of the chunk can serve: fetch again), or the fetch's
 * error (its last request's).
 */
int hbmpool_fetch_wait(struct hbmpool_req *req)
{
	/* a fatal signal: the request goes on; its end_io decides */
	if (wait_var_event_killable(&req->flags,
				    test_bit(HBMPOOL_FETCH_ENDED_NR, &req->flags)))
		return -EINTR;
	smp_rmb();	/* the mark before status and flags */
	if (!READ_ONCE(req->status))
		return 0;
	if (READ_ONCE(req->flags) & HBMPOOL_FETCH_FAILOVER)
		return -EAGAIN;
	return READ_ONCE(req->status);
}

/**
 * hbmpool_fill - fetch a run of pages into the cache and wait, killable
 * @r: the region
 * @index: the first page
 * @max: the most pages (see hbmpool_fetch_start())
 * @mark: the read-ahead mark, or HBMPOOL_RA_NO_MARK
 * @flags: HBMPOOL_FETCH_*; HBMPOOL_FETCH_MAY_WRITEBACK: room for the first
 *	page may be made by writing back (the caller holds no mmap_lock)
 * @nr: set to the pages in the run, if not NULL
 *
 * Return: 0, -EEXIST (someone else has @index or is fetching it), -EINTR,
 * -ENOMEM, -EAGAIN (the fetch timed out but another copy of the chunk can
 * serve: fetch again), or the fetch's error.  A failure of a fault-driven
 * fetch (HBMPOOL_FETCH_FAULT) leaves the first page marked ERROR for the
 * next fault, others STALE.
 */
int hbmpool_fill(struct hbmpool_region *r, pgoff_t index, unsigned int max,
		 unsigned int mark, unsigned long flags, unsigned int *nr)
{
	struct hbmpool_req *req;
	int ret;

	hbmpool_make_room(flags & HBMPOOL_FETCH_MAY_WRITEBACK);
	ret = hbmpool_fetch_start(r, index, max, mark, flags, &req);
	if (ret < 0)
		return ret;
	if (nr)
		*nr = ret;
	ret = hbmpool_fetch_wait(req);
	hbmpool_req_put(req);
	return ret;
}

/*
 * The fast path, for a transport that can move pages with a CPU copy and no
 * wait (a load/store fabric; the sim with no added latency): fetches a run
 * of up to @max pages from @index under mmap_lock, as a fault on local
 * memory copies under it, maps the run's other pages where @vmf's vma
 * covers them, and returns the page at @index locked with a reference for
 * the PTE; *@nr is the run's length.  NULL: take the slow path (the
 * transport would wait, or failed, or the cache needs a write-back to make
 * room), which reports errors.  ERR_PTR(-EEXIST): the index is taken (the
 * page is cached or being fetched, perhaps by another task meanwhile); look
 * it up.  @guess: the page was not looked up first, so it may well be
 * cached: nothing is evicted to make room for it (ERR_PTR(-ENOSPC): no
 * room; look it up).
 */
static struct page *hbmpool_fill_nowait(struct vm_fault *vmf,
					struct hbmpool_region *r,
					pgoff_t index, unsigned int max,
					bool guess, unsigned int *nr)
{
	const struct hbmpool_copy *cp;
	struct page *one, **pages;
	struct hbmpool_node *node;
	u64 offset, start;
	unsigned int i;
	bool ok;
	int n, err;

	ok = hbmpool_nowait_ok(r, index);
	max = hbmpool_run_max(r, index, max);
	if (!ok)
		return NULL;
	if (guess) {
		/* never evict for a page that may be cached: look it up */
		if (hbmpool_cache_budget_room() < 1)
			return ERR_PTR(-ENOSPC);
	} else if (!hbmpool_make_room_nowait(max)) {
		return NULL;
	}
	pages = hbmpool_run_alloc(&max, &one);
	n = hbmpool_run_new(r, index, max, true, pages);
	if (n < 0) {
		hbmpool_run_free(pages, &one);
		return n == -EEXIST ? ERR_PTR(-EEXIST) : NULL;
	}

	/* ->copy_nowait() does not sleep: the copy's node is valid throughout */
	rcu_read_lock();
	cp = hbmpool_read_copy_of(r, index);
	if (!cp || cp->gen != hbmpool_node_data_gen(cp->node) ||
	    !cp->node->transport->ops->copy_nowait) {
		rcu_read_unlock();	/* the map changed: the slow path decides */
		for (i = 0; i < n; i++)
			hbmpool_page_abandon(r, pages[i]);
		hbmpool_run_free(pages, &one);
		return NULL;
	}
	node = cp->node;
	offset = cp->offset + hbmpool_offset_in_chunk(r, index);
	/*
	 * sched_clock(), not ktime_get_ns() nor local_clock(): a CPU copy is
	 * timed on the CPU that does it, and in a VM whose TSCs are not
	 * trusted the clocksource is an emulated HPET read and local_clock()
	 * adds a cmpxchg per read, each costing more than a tenth of a random
	 * fault.  A copy whose task moved to another CPU meanwhile is timed
	 * across the two CPUs' clocks: one histogram sample, off by their skew.
	 */
	start = sched_clock();
	err = node->transport->ops->copy_nowait(node, offset, pages, n);
	if (!err) {
		u64 end = sched_clock();

		for (i = 0; i < n; i++)
			set_bit(HBM_PG_UPTODATE, &pages[i]->private);
		hbmpool_count_fetched(&r->stats, node, n,
				      end > start ? end - start : 0);
	}
	rcu_read_unlock();
	if (err) {
		for (i = 0; i < n; i++)
			hbmpool_page_abandon(r, pages[i]);
		hbmpool_run_free(pages, &one);
		return NULL;
	}
	hbmpool_map_run(vmf, pages + 1, n - 1);		/* and unlocks them */
	one = pages[0];
	hbmpool_run_free(pages, &one);
	get_page(one);
	*nr = n;
	return one;
}

/* ---- vm operations ---- */

/*
 * A fault found a page that carries a read-ahead mark: the next window
 * goes out now, without waiting, while the application consumes this one.
 */
static void hbmpool_ra_mark_hit(struct vm_fault *vmf, struct hbmpool_region *r,
				struct page *page)
{
	if (test_bit(HBM_PG_READAHEAD, &page->private) &&
	    test_and_clear_bit(HBM_PG_READAHEAD, &page->private))
		hbmpool_ra_async(r, &vmf->vma->vm_file->f_ra,
				 vmf->vma->vm_flags, page->index);
}

/*
 * A miss, on the fast path if it can: fetches a window of up to @window
 * pages from @index (hbmpool_fill_nowait(), which says what @guess means)
 * and maps it.  Returns the page at @index, locked, with a reference for
 * the PTE; an ERR_PTR() when @index may be in the cache (look it up); NULL
 * when the slow path must fetch it.
 */
static struct page *hbmpool_fault_nowait(struct vm_fault *vmf,
					 struct hbmpool_region *r,
					 struct file_ra_state *ra, pgoff_t index,
					 unsigned int window, bool guess)
{
	struct page *page;
	unsigned int nr;

	page = hbmpool_fill_nowait(vmf, r, index, window, guess, &nr);
	if (IS_ERR_OR_NULL(page))
		return page;
	/* a copy needs no mark: the next miss fetches the next run */
	if (nr > 1) {
		hbmpool_ra_record(ra, index, nr);
		hbmpool_fa_mapped(ra, nr - 1);	/* mapped with it */
	}
	hbmpool_ra_access(ra, index);
	return page;
}

/* How many copies the chunk of @index has. */
static unsigned int hbmpool_fault_copies(struct hbmpool_region *r, pgoff_t index)
{
	unsigned int n;

	rcu_read_lock();
	n = hbmpool_chunk_map(r, index)->nr_copies;
	rcu_read_unlock();
	return n;
}

static vm_fault_t __hbmpool_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct hbmpool_region *r = vma->vm_file->private_data;
	struct file_ra_state *ra = &vma->vm_file->f_ra;
	bool can_retry = (vmf->flags & FAULT_FLAG_ALLOW_RETRY) &&
			 !(vmf->flags & FAULT_FLAG_RETRY_NOWAIT);
	/* a read fault counts for fault-around once: not again when retried */
	bool fa = !(vmf->flags & (FAULT_FLAG_TRIED | FAULT_FLAG_WRITE));
	bool nowait = true;	/* the fast path may serve a miss */
	bool huge_mark = false;	/* the index holds a piece's mark (huge.c) */
	pgoff_t index = vmf->pgoff;
	unsigned int window, mark, nr, failovers = 0, copies = 0;
	struct file *fpin;
	struct page *page;
	int err;

	if (unlikely(index >= r->nr_pages))
		return VM_FAULT_SIGBUS;
	if (!(vmf->flags & FAULT_FLAG_TRIED)) {
		rcu_read_lock();
		hbmpool_count3(&r->stats, hbmpool_read_copy(r, index, NULL),
			       HBMPOOL_STAT_FAULTS, 1);
		rcu_read_unlock();
	}
	/* a read fault that may map its whole piece with a PMD (huge.c) */
	if (unlikely(vma->vm_flags & VM_HUGEPAGE)) {
		vm_fault_t ret = hbmpool_huge_fault(vmf, r);

		if (ret)
			return ret;
	}
	/*
	 * While most read faults of the file miss the cache (random first
	 * touches), a random miss (a window of one page) is fetched before
	 * any lookup: publishing the new page finds a cached one as well
	 * (-EEXIST), and a lookup that finds nothing is a walk of the cache
	 * index for nothing.
	 */
	if (fa && hbmpool_fa_missing(ra) &&
	    hbmpool_ra_window(r, ra, vma->vm_flags, index, &mark) == 1) {
		page = hbmpool_fault_nowait(vmf, r, ra, index, 1, true);
		if (!IS_ERR_OR_NULL(page)) {
			hbmpool_fa_miss(ra);
			vmf->page = page;	/* locked, referenced for the PTE */
			return VM_FAULT_LOCKED;
		}
		nowait = !!page;	/* NULL: the slow path, after the lookup */
	}
repeat:
	page = __hbmpool_lookup(r, index, &huge_mark);
	if (!page) {
		if (unlikely(huge_mark)) {
			/* in a piece cached whole: 4 KiB pages take its place */
			hbmpool_huge_drop_at(r, index);
			goto repeat;
		}
		window = hbmpool_ra_window(r, ra, vma->vm_flags, index, &mark);
		page = nowait ? hbmpool_fault_nowait(vmf, r, ra, index, window,
						     false) : NULL;
		if (IS_ERR(page))
			goto repeat;
		if (page) {
			if (fa)
				hbmpool_fa_miss(ra);
			vmf->page = page;	/* locked, referenced for the PTE */
			return VM_FAULT_LOCKED;
		}
		nowait = false;
		if (vmf->flags & FAULT_FLAG_RETRY_NOWAIT)
			return VM_FAULT_RETRY;
		if (fa)
			hbmpool_fa_miss(ra);
		fa = false;
		hbmpool_ra_access(ra, index);
		/* a piece a PMD may map, over a link that waits: whole (huge.c) */
		if (can_retry && unlikely(vma->vm_flags & VM_HUGEPAGE) &&
		    hbmpool_huge_fetch(vmf, r))
			return VM_FAULT_RETRY;
		nr = 0;
		if (!can_retry) {
			/* the copies it may fail over to: counted before */
			copies = max(copies, hbmpool_fault_copies(r, index));
			err = hbmpool_fill(r, index, window, mark, 0, &nr);
			if (nr)
				hbmpool_ra_record(ra, index, nr);
			if (err == -ENOMEM)
				return VM_FAULT_OOM;
			if (err && err != -EEXIST && err != -EAGAIN)
				return VM_FAULT_SIGBUS;
			/*
			 * A timeout that another copy may serve: at most as
			 * many as the chunk has copies, though requests that
			 * work clear the copies' suspect marks meanwhile.
			 */
			if (err == -EAGAIN && ++failovers >= copies)
				return VM_FAULT_SIGBUS;
			goto repeat;
		}
		/*
		 * Wait for the link without mmap_lock; the vma may go
		 * meanwhile.  Pin the file, as filemap_fault() does: its last
		 * fput() is deferred, so the module outlives this function.
		 */
		fpin = get_file(vma->vm_file);
		mmap_read_unlock(vma->vm_mm);
		hbmpool_fill(r, index, window, mark,
			     HBMPOOL_FETCH_FAULT | HBMPOOL_FETCH_MAY_WRITEBACK, &nr);
		if (nr)
			hbmpool_ra_record(ra, index, nr);
		fput(fpin);
		return VM_FAULT_RETRY;
	}

	/* with no page lock held: reading ahead allocates */
	hbmpool_ra_mark_hit(vmf, r, page);
	if (PageLocked(page) && !test_bit(HBM_PG_UPTODATE, &page->private)) {
		/* Being fetched. */
		if (vmf->flags & FAULT_FLAG_RETRY_NOWAIT) {
			put_page(page);
			return VM_FAULT_RETRY;
		}
		if (can_retry) {
			mmap_read_unlock(vma->vm_mm);
			folio_wait_locked_killable(page_folio(page));
			put_page(page);
			return VM_FAULT_RETRY;
		}
	}

	/* Holders of an up-to-date page's lock do not wait for the link. */
	lock_page(page);
	if (unlikely(page->mapping != hbmpool_mapping(r))) {
		unlock_page(page);
		put_page(page);
		goto repeat;
	}
	if (unlikely(!test_bit(HBM_PG_UPTODATE, &page->private))) {
		/* Its fetch failed: a fault-driven one is reported, once. */
		bool error = test_bit(HBM_PG_ERROR, &page->private);

		hbmpool_page_abandon(r, page);
		put_page(page);
		if (error)
			return VM_FAULT_SIGBUS;
		goto repeat;
	}
	if (unlikely(PageHWPoison(page))) {
		/*
		 * Take it out ourselves: the core's poison handling would
		 * treat it as a page cache page it does not own.
		 */
		hbmpool_drop_poisoned(r, page);
		put_page(page);
		return VM_FAULT_HWPOISON;
	}
	if (fa)
		hbmpool_fa_hit(ra);
	hbmpool_ra_access(ra, index);
	set_bit(HBM_PG_REFERENCED, &page->private);
	vmf->page = page;		/* our reference becomes the PTE's */
	return VM_FAULT_LOCKED;
}

/* The fault path, then how a read fault maps its page (writepredict.c). */
static vm_fault_t hbmpool_vm_fault(struct vm_fault *vmf)
{
	bool read = !(vmf->flags & FAULT_FLAG_WRITE);
	vm_fault_t ret = __hbmpool_vm_fault(vmf);

	if (read && (ret & VM_FAULT_LOCKED))
		hbmpool_wp_read_fault(vmf, vmf->vma->vm_file->private_data,
				      vmf->page);
	return ret;
}

static vm_fault_t hbmpool_vm_page_mkwrite(struct vm_fault *vmf)
{
	struct hbmpool_region *r = vmf->vma->vm_file->private_data;
	struct page *page = vmf->page;

	lock_page(page);
	if (page->mapping != hbmpool_mapping(r)) {
		unlock_page(page);
		return VM_FAULT_NOPAGE;		/* evicted: fault again */
	}
	hbmpool_wp_write(vmf, r, page);
	if (!test_and_set_bit(HBM_PG_DIRTY, &page->private))
		hbmpool_cache_dirty(r, 1);
	set_bit(HBM_PG_REFERENCED, &page->private);
	return VM_FAULT_LOCKED;
}

const struct vm_operations_struct hbmpool_vm_ops = {
	.fault = hbmpool_vm_fault,
	.map_pages = hbmpool_vm_map_pages,
	.page_mkwrite = hbmpool_vm_page_mkwrite,
};

