// SPDX-License-Identifier: GPL-2.0
/*
 * The cache's free-page pool: pages that left the cache (eviction, a region
 * released, a fetch abandoned) go to the next fetch without a round trip
 * through the page allocator.
 *
 * A fetch overwrites every byte of its pages before any of them is mapped
 * (a failed fetch maps nothing), so a cache page does not need the zeroing
 * that the page allocator gives every page under init_on_alloc (Debian's
 * default): without the pool a first touch paid for zeroing a page and then
 * for copying over it, twice the writes of an anonymous fault.  Pages are
 * recycled only when nothing else refers to them (the reference count is
 * frozen at zero from the last put until reuse, as in the page allocator,
 * so a stale speculative lookup fails), and never when init_on_free asks
 * for freed memory to be wiped.
 *
 * The same holds for the 2 MiB compound pages of pieces cached whole
 * (huge.c): a second list keeps them whole, for the next piece.  A fresh
 * one costs the clearing of 2 MiB, as much as its copy.
 *
 * The pool holds at most what the cache budget leaves unused (budget minus
 * cached pages, at the time of the put; a 2 MiB page counts 512) and gives
 * pages back to the system through its shrinker and when the budget
 * shrinks.  recycle_pages=0 (a module parameter, writable) turns it off and
 * empties it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/module.h>
#include <linux/page_ref.h>
#include <linux/shrinker.h>
#include <linux/spinlock.h>

#include "hbmpool.h"

static struct {
	spinlock_t lock;		/* protects the lists and the counts */
	struct list_head list;		/* free pages, frozen at refcount 0, by lru */
	long nr;
	long recycled;			/* pages handed out from the pool */
	struct list_head huge;		/* free 2 MiB compound pages, the same way */
	long nr_huge;
	long recycled_huge;		/* 2 MiB pages handed out */
	struct shrinker shrinker;
} hbmpool_pool = {
	.lock = __SPIN_LOCK_UNLOCKED(hbmpool_pool.lock),
	.list = LIST_HEAD_INIT(hbmpool_pool.list),
	.huge = LIST_HEAD_INIT(hbmpool_pool.huge),
};

static unsigned long hbmpool_pagepool_trim(long keep);

static bool recycle_pages = true;

/* recycle_pages=N empties the pool at once (at load: it is empty). */
static int recycle_pages_set(const char *val, const struct kernel_param *kp)
{
	int err = param_set_bool(val, kp);

	if (!err && !READ_ONCE(recycle_pages))
		hbmpool_pagepool_trim(0);
	return err;
}

static const struct kernel_param_ops recycle_pages_ops = {
	.set = recycle_pages_set,
	.get = param_get_bool,
};

module_param_cb(recycle_pages, &recycle_pages_ops, &recycle_pages, 0644);
MODULE_PARM_DESC(recycle_pages,
		 "Reuse pages that leave the cache for the next fetches instead of freeing and reallocating (and, under init_on_alloc, zeroing) them, 1 or 0; 0 also empties the pool (default 1; live value in /sys/module/hbmpool/parameters/recycle_pages)");

long hbmpool_pagepool_nr(void)
{
	return READ_ONCE(hbmpool_pool.nr);
}

long hbmpool_pagepool_recycled(void)
{
	return READ_ONCE(hbmpool_pool.recycled);
}

/* What the pool holds, in 4 KiB pages; exact under its lock. */
static long hbmpool_pagepool_held(void)
{
	return READ_ONCE(hbmpool_pool.nr) +
	       (READ_ONCE(hbmpool_pool.nr_huge) << HPAGE_PMD_ORDER);
}

/* The most pages the pool may hold now. */
static long hbmpool_pagepool_limit(void)
{
	if (!READ_ONCE(recycle_pages) || want_init_on_free())
		return 0;
	return READ_ONCE(hbmpool_cache_budget) - hbmpool_cache_nr_cached();
}

/*
 * Gives each page on @list, frozen by hbmpool_page_freeze() and not in the
 * pool, back its reference and puts it.
 */
static void hbmpool_page_unfreeze_list(struct list_head *list)
{
	struct page *page, *tmp;

	list_for_each_entry_safe(page, tmp, list, lru) {
		list_del(&page->lru);
		page_ref_unfreeze(page, 1);
		put_page(page);
	}
}

/*
 * Frees the pool's pages beyond @keep (4 KiB pages; 2 MiB ones go first);
 * returns how many 4 KiB pages went.
 */
static unsigned long hbmpool_pagepool_trim(long keep)
{
	unsigned long freed = 0;
	LIST_HEAD(out);

	keep = max(keep, 0L);
	spin_lock(&hbmpool_pool.lock);
	while (hbmpool_pool.nr_huge && hbmpool_pagepool_held() > keep) {
		list_move(hbmpool_pool.huge.next, &out);
		hbmpool_pool.nr_huge--;
		freed += HPAGE_PMD_NR;
	}
	while (hbmpool_pool.nr && hbmpool_pagepool_held() > keep) {
		list_move(hbmpool_pool.list.next, &out);
		hbmpool_pool.nr--;
		freed++;
	}
	spin_unlock(&hbmpool_pool.lock);
	hbmpool_page_unfreeze_list(&out);
	return freed;
}

/*
 * Freezes @page at our one reference, for the pool: true if nothing else
 * refers to it and the allocator would take it back as it is (nothing it
 * refuses at free time, no memory error, unmapped, out of the cache).
 * False: the caller puts its reference.
 */
static bool hbmpool_page_freeze(struct page *page)
{
	VM_WARN_ON_ONCE_PAGE(page->mapping, page);
	if (!page_ref_freeze(page, 1))
		return false;
	if (!(page->flags & (PAGE_FLAGS_CHECK_AT_FREE | __PG_HWPOISON)) &&
	    !page_mapped(page) && !page->mapping && !page_private(page) &&
	    !PageTransCompound(page)) {
		page->flags &= ~PAGE_FLAGS_CHECK_AT_PREP;	/* dirty, referenced, ... */
		return true;
	}
	page_ref_unfreeze(page, 1);
	return false;
}

/**
 * hbmpool_page_release_run - drop a reference to each of pages that left the cache
 * @pages: no longer in any region's index (mapping NULL), unlocked
 * @nr: how many
 *
 * Each last reference puts its page in the pool while it has room, all
 * under one hold of its lock; any other is a put_page().  Never sleeps.
 */
void hbmpool_page_release_run(struct page **pages, unsigned int nr)
{
	long limit = hbmpool_pagepool_limit();
	struct page *page, *tmp;
	unsigned int i;
	LIST_HEAD(frozen);

	for (i = 0; i < nr; i++) {
		if (limit > hbmpool_pagepool_held() && hbmpool_page_freeze(pages[i]))
			list_add_tail(&pages[i]->lru, &frozen);
		else
			put_page(pages[i]);
	}
	if (list_empty(&frozen))
		return;
	spin_lock(&hbmpool_pool.lock);
	list_for_each_entry_safe(page, tmp, &frozen, lru) {
		if (hbmpool_pagepool_held() >= limit)
			break;
		list_move(&page->lru, &hbmpool_pool.list);
		hbmpool_pool.nr++;
	}
	spin_unlock(&hbmpool_pool.lock);
	hbmpool_page_unfreeze_list(&frozen);
}

/**
 * hbmpool_page_release - drop a reference to a page that left the cache
 * @page: no longer in any region's index (mapping NULL), unlocked
 *
 * The last reference puts the page in the pool when it has room; any other
 * is a put_page().  Never sleeps.
 */
void hbmpool_page_release(struct page *page)
{
	hbmpool_page_release_run(&page, 1);
}

/**
 * hbmpool_pagepool_get - take pages out of the pool
 * @pages: where to put them, each with one reference; its NULL slots are
 *	filled in order, others left alone (as alloc_pages_bulk_array() does)
 * @nr: the size of @pages
 *
 * Their content is whatever their last use left: the caller overwrites
 * every byte before anything may read it.  Return: the number of non-NULL
 * entries of @pages now.
 */
unsigned int hbmpool_pagepool_get(struct page **pages, unsigned int nr)
{
	unsigned int i, got = 0, taken = 0;
	struct page *page, *tmp;
	LIST_HEAD(poisoned);

	if (!READ_ONCE(hbmpool_pool.nr))
		goto count;
	spin_lock(&hbmpool_pool.lock);
	for (i = 0; i < nr && hbmpool_pool.nr; ) {
		if (pages[i]) {
			i++;
			continue;
		}
		page = list_first_entry(&hbmpool_pool.list, struct page, lru);
		list_del(&page->lru);
		hbmpool_pool.nr--;
		/*
		 * A memory error found while it was here: the error handler
		 * could not take a page it does not own; the allocator will
		 * keep it out of use.
		 */
		if (PageHWPoison(page)) {
			list_add(&page->lru, &poisoned);
			continue;
		}
		page_ref_unfreeze(page, 1);
		pages[i++] = page;
		taken++;
	}
	/* under the lock, not an atomic of its own: one less per fetch */
	WRITE_ONCE(hbmpool_pool.recycled, hbmpool_pool.recycled + taken);
	spin_unlock(&hbmpool_pool.lock);
	list_for_each_entry_safe(page, tmp, &poisoned, lru) {
		list_del(&page->lru);
		page_ref_unfreeze(page, 1);
		put_page(page);
	}
count:
	for (i = 0; i < nr; i++)
		got += !!pages[i];
	return got;
}

/* A cache page for a fetch: from the pool, or else from the allocator. */
struct page *hbmpool_pagepool_alloc(void)
{
	struct page *page = NULL;

	if (hbmpool_pagepool_get(&page, 1))
		return page;
	return alloc_page(GFP_HIGHUSER | __GFP_NOWARN);
}

/*
 * Fills the NULL slots of @pages (see hbmpool_pagepool_get()): from the
 * pool first, the rest in one bulk allocation.  Returns how many are set.
 */
unsigned int hbmpool_pagepool_alloc_bulk(struct page **pages, unsigned int nr)
{
	if (hbmpool_pagepool_get(pages, nr) == nr)
		return nr;
	return alloc_pages_bulk_array(GFP_HIGHUSER | __GFP_NOWARN, nr, pages);
}

/*
 * Whether a page of the compound page at @head has a memory error.  Only
 * the page hit is marked: memory_failure() cannot take a compound page that
 * is not on an LRU, so it never gets to marking the head (PageHasHWPoisoned)
 * but when madvise(MADV_HWPOISON) holds a reference for it.
 */
bool hbmpool_compound_poisoned(struct page *head)
{
	unsigned long i, n = compound_nr(head);

	if (PageHasHWPoisoned(head))
		return true;
	for (i = 0; i < n; i++)
		if (PageHWPoison(nth_page(head, i)))
			return true;
	return false;
}

/*
 * As hbmpool_page_freeze(), for a 2 MiB compound page that held a piece
 * (huge.c): whole, unmapped, unlocked, out of its entry, no memory error in
 * any of its pages (the allocator keeps such a block out of use, the pool
 * would not).  Its page flags go, as the allocator would clear them, but
 * for PG_head: it stays a compound page.
 */
static bool hbmpool_huge_page_freeze(struct page *head)
{
	if (!page_ref_freeze(head, 1))
		return false;
	if (!(head->flags & (PAGE_FLAGS_CHECK_AT_FREE | __PG_HWPOISON)) &&
	    !page_mapped(head) && !head->mapping && !page_private(head) &&
	    PageHead(head) && compound_order(head) == HPAGE_PMD_ORDER &&
	    !hbmpool_compound_poisoned(head)) {
		head->flags &= ~(PAGE_FLAGS_CHECK_AT_PREP & ~(1UL << PG_head));
		return true;
	}
	page_ref_unfreeze(head, 1);
	return false;
}

/**
 * hbmpool_hugepool_alloc - a 2 MiB compound page for a piece cached whole
 * @gfp: for the page allocator, when the pool has none
 *
 * Its content is whatever its last use left: the caller overwrites all of
 * it before anything may read it.  Return: the head, with one reference,
 * or NULL.
 */
struct page *hbmpool_hugepool_alloc(gfp_t gfp)
{
	struct page *head = NULL;

	if (READ_ONCE(hbmpool_pool.nr_huge)) {
		spin_lock(&hbmpool_pool.lock);
		head = list_first_entry_or_null(&hbmpool_pool.huge, struct page, lru);
		if (head) {
			list_del(&head->lru);
			hbmpool_pool.nr_huge--;
			WRITE_ONCE(hbmpool_pool.recycled_huge,
				   hbmpool_pool.recycled_huge + 1);
		}
		spin_unlock(&hbmpool_pool.lock);
	}
	if (head) {
		page_ref_unfreeze(head, 1);
		/* a memory error found while it was here: the allocator's */
		if (likely(!hbmpool_compound_poisoned(head)))
			return head;
		put_page(head);
	}
	return alloc_pages(gfp, HPAGE_PMD_ORDER);
}

/**
 * hbmpool_hugepool_put - drop a reference to a 2 MiB page of a piece
 * @head: from hbmpool_hugepool_alloc()
 *
 * The last reference puts the page in the pool while the budget leaves
 * room for it; any other is a put_page().  Never sleeps.
 */
void hbmpool_hugepool_put(struct page *head)
{
	long limit = hbmpool_pagepool_limit();
	bool pooled = false;

	if (limit - hbmpool_pagepool_held() >= HPAGE_PMD_NR &&
	    hbmpool_huge_page_freeze(head)) {
		spin_lock(&hbmpool_pool.lock);
		if (limit - hbmpool_pagepool_held() >= HPAGE_PMD_NR) {
			list_add(&head->lru, &hbmpool_pool.huge);
			hbmpool_pool.nr_huge++;
			pooled = true;
		}
		spin_unlock(&hbmpool_pool.lock);
		if (pooled)
			return;
		page_ref_unfreeze(head, 1);
	}
	put_page(head);
}

long hbmpool_hugepool_nr(void)
{
	return READ_ONCE(hbmpool_pool.nr_huge);
}

long hbmpool_hugepool_recycled(void)
{
	return READ_ONCE(hbmpool_pool.recycled_huge);
}

/* The cache budget changed: the pool keeps to what it leaves unused. */
void hbmpool_pagepool_fit(void)
{
	long limit = hbmpool_pagepool_limit();

	if (hbmpool_pagepool_held() > limit)
		hbmpool_pagepool_trim(limit);
}

static unsigned long hbmpool_pagepool_count(struct shrinker *s,
					    struct shrink_control *sc)
{
	long nr = hbmpool_pagepool_held();

	return nr > 0 ? nr : SHRINK_EMPTY;
}

static unsigned long hbmpool_pagepool_scan(struct shrinker *s,
					   struct shrink_control *sc)
{
	long nr = hbmpool_pagepool_held();
	unsigned long freed;
	long keep;

	if (nr <= 0)
		return SHRINK_STOP;
	keep = sc->nr_to_scan >= nr ? 0 : nr - (long)sc->nr_to_scan;
	freed = hbmpool_pagepool_trim(keep);
	return freed ?: SHRINK_STOP;
}

int hbmpool_pagepool_init(void)
{
	hbmpool_pool.shrinker.count_objects = hbmpool_pagepool_count;
	hbmpool_pool.shrinker.scan_objects = hbmpool_pagepool_scan;
	/*
	 * Free pages, cheap to get again, but not seeks 0: the core then
	 * asks for half of the pool at any priority, and scans nothing while
	 * that half is under a batch (128) and its deferred count is low, so
	 * that drop_caches could leave a pool of a few pages as it was.
	 * With 1 it asks for four times the pool >> priority: all of it when
	 * drop_caches or heavy pressure asks (priority 0), little under light
	 * pressure.
	 */
	hbmpool_pool.shrinker.seeks = 1;
	return register_shrinker(&hbmpool_pool.shrinker, "hbmpool-pagepool");
}

/* Every page goes back to the system; nothing can put one any more. */
void hbmpool_pagepool_exit(void)
{
	unregister_shrinker(&hbmpool_pool.shrinker);
	hbmpool_pagepool_trim(0);
}
