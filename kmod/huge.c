// SPDX-License-Identifier: GPL-2.0
/*
 * Huge mappings: a 2 MiB piece of a region read whole into one compound
 * page (a "huge entry") and mapped with one PMD.
 *
 * Where: a read fault in a mapping that asked for it (MADV_HUGEPAGE), maps
 * the region read-only (no VM_WRITE), covers the piece at an address that
 * agrees with its offset modulo 2 MiB, and finds the PMD empty; a region
 * whose chunks are 2 MiB or more; a copy of the chunk that a CPU copies
 * without waiting (->copy_nowait(): shm, the sim with no latency).  The
 * piece must be wholly uncached: the whole of it is fetched in the fault,
 * in one go, and mapped.  Or, over any link, the piece is cached whole in
 * 4 KiB pages, clean and unmapped: the fault gathers them into an entry
 * (hbmpool_huge_collapse()), with no transfer.  Over a link that waits
 * (TCP), a fault on a piece of which nothing is cached fetches it whole in
 * 4 KiB pages, one request, waits for it without mmap_lock and is retried;
 * the retried fault gathers it (hbmpool_huge_fetch()).  As the page cache
 * does for a MADV_HUGEPAGE mapping, the next piece is fetched ahead, so
 * that a reader in order finds it cached.
 *
 * A huge entry is never dirty and never mapped writable, so nothing of it
 * is ever written back: the region's vma is VM_MIXEDMAP, and a PMD from
 * vmf_insert_pfn_pmd() holds no reference and no mapcount, so write-back
 * could not write-protect it (folio_mkclean() does not see it).  A write
 * to it faults (wp_huge_pmd() clears the PMD of such a vma and falls back
 * to PTEs), and anything that needs the piece's 4 KiB pages drops the
 * entry first: a write fault, a read fault that cannot take the PMD, a
 * chunk move, the loss of its node.  Its data is the home's, so dropping
 * loses nothing; the next fault fetches 4 KiB pages as before.  ->fault
 * never returns a page of the compound page (finish_fault() would map it
 * as a refcounted THP, which the zap of a VM_MIXEDMAP vma would leak).
 *
 * Index: the region's page index (r->pages) holds HBMPOOL_HUGE_MARK at each
 * of the piece's 512 indices, so that no 4 KiB page can enter beside it
 * (their insertions find the index taken), and r->huge maps the piece to
 * its entry.  An entry enters r->huge before its marks and leaves it after
 * them: whoever finds a mark finds the entry.
 *
 * Locks: the compound page's lock serialises an entry's life.  It is held
 * while the entry is filled, while a PMD is inserted (after checking that
 * the entry is live), and while it is dropped (unmapped, then its marks and
 * entry removed), so that no PMD can outlive the entry.  "Live" is
 * page_private(head) == the entry, read under that lock; the entry is freed
 * after a grace period (hbmpool_huge_get() reads it under RCU) and only
 * once it is no longer live.  hbmpool_huge.lock protects the LRU list.
 * Lock order: mmap_lock -> the head's page lock -> i_mmap_rwsem ->
 * hbmpool_huge.lock -> xa_lock of r->pages or r->huge.  Gathering a piece
 * takes its 4 KiB pages' locks under the head's with trylock_page() only.
 *
 * Eviction drops whole entries (FIFO, a second chance for an entry mapped
 * since the last look) when the cache's 4 KiB pages cannot make the room
 * asked for (cache.c).  The shrinker does not drop entries: it never
 * sleeps, and an entry is dropped by unmapping it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/pfn_t.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "hbmpool.h"

static bool huge_mappings = true;
module_param(huge_mappings, bool, 0644);
MODULE_PARM_DESC(huge_mappings,
		 "Map a whole 2 MiB piece (512 pages) with one PMD where a read-only MADV_HUGEPAGE mapping allows it: fetched whole over a link that copies without waiting, or gathered from the cache (over a link that waits, fetched whole into it first), 1 or 0 (default 1; live value in /sys/module/hbmpool/parameters/huge_mappings)");

/* A 2 MiB piece of a region, cached whole in one compound page. */
struct hbmpool_huge {
	struct page *head;		/* the compound page; the cache's reference */
	struct hbmpool_region *r;
	pgoff_t index;			/* its first page */
	struct list_head lru;		/* under hbmpool_huge.lock */
	bool referenced;		/* mapped since eviction last looked; no lock */
	struct rcu_head rcu;
};

static struct {
	spinlock_t lock;		/* protects lru and nr_live */
	struct list_head lru;		/* live entries, oldest first */
	long nr_live;
	atomic_long_t created;		/* entries fetched whole */
	atomic_long_t collapsed;	/* entries copied from a piece's 4 KiB pages */
	atomic_long_t fetched;		/* pieces fetched whole for a fault (a link that waits) */
	atomic_long_t ahead;		/* pieces fetched whole ahead of a reader in order */
	atomic_long_t mapped;		/* PMDs inserted */
	atomic_long_t dropped;		/* for a 4 KiB user, a move, a node's loss */
	atomic_long_t evicted;		/* for room */
	atomic_long_t released;		/* with their region */
	atomic_long_t alloc_failed;	/* no free 2 MiB page: 4 KiB pages instead */
} hbmpool_huge = {
	.lock = __SPIN_LOCK_UNLOCKED(hbmpool_huge.lock),
	.lru = LIST_HEAD_INIT(hbmpool_huge.lru),
};

/* No reclaim and no compaction in a fault: 4 KiB pages are the fallback. */
#define HBMPOOL_HUGE_GFP	((GFP_KERNEL | __GFP_COMP | __GFP_NOWARN | \
				  __GFP_NORETRY) & ~__GFP_DIRECT_RECLAIM)

/* Pages per ->copy_nowait() call: an array of them on the stack. */
#define HBMPOOL_HUGE_STEP	64

static unsigned long hbmpool_huge_key(pgoff_t first)
{
	return first >> HPAGE_PMD_ORDER;
}

/* Under the head's page lock. */
static bool hbmpool_huge_live(struct hbmpool_huge *h, struct page *head)
{
	VM_WARN_ON_ONCE_PAGE(!PageLocked(head), head);
	return page_private(head) == (unsigned long)h;
}

/*
 * The entry of the piece starting at @first, with a reference to its
 * compound page in *@headp, or NULL.  Touch the entry only once
 * hbmpool_huge_live() said yes under the page lock.
 */
static struct hbmpool_huge *hbmpool_huge_get(struct hbmpool_region *r,
					     pgoff_t first, struct page **headp)
{
	unsigned long key = hbmpool_huge_key(first);
	struct hbmpool_huge *h;
	struct page *head;

	rcu_read_lock();
repeat:
	h = xa_load(&r->huge, key);
	if (h) {
		head = READ_ONCE(h->head);
		if (!get_page_unless_zero(head)) {
			cpu_relax();	/* being freed: the entry is gone */
			goto repeat;
		}
		if (unlikely(xa_load(&r->huge, key) != h)) {
			put_page(head);
			goto repeat;
		}
		*headp = head;
	}
	rcu_read_unlock();
	return h;
}

/* Takes the piece's marks out of r->pages; storing NULL allocates nothing. */
static void hbmpool_huge_unreserve(struct hbmpool_region *r, pgoff_t first)
{
	XA_STATE(xas, &r->pages, first);
	unsigned int i;

	xas_lock(&xas);
	for (i = 0; i < HPAGE_PMD_NR; i++, xas_next(&xas))
		if (xas_load(&xas) == HBMPOOL_HUGE_MARK)
			xas_store(&xas, NULL);
	xas_unlock(&xas);
}

/*
 * Marks each index of the piece in r->pages, if none holds a page: false
 * (and no mark left) if one does, or on no memory.
 */
static bool hbmpool_huge_reserve(struct hbmpool_region *r, pgoff_t first)
{
	XA_STATE(xas, &r->pages, first);
	bool taken = false;
	unsigned int i;
	void *entry;

	do {
		xas_lock(&xas);
		xas_set(&xas, first);
		for (i = 0; i < HPAGE_PMD_NR; i++, xas_next(&xas)) {
			entry = xas_load(&xas);
			if (entry == HBMPOOL_HUGE_MARK)
				continue;	/* ours, before xas_nomem() */
			if (entry) {
				taken = true;
				break;
			}
			xas_store(&xas, HBMPOOL_HUGE_MARK);
			if (xas_error(&xas))
				break;
		}
		xas_unlock(&xas);
	} while (!taken && xas_nomem(&xas, GFP_KERNEL));
	if (taken)	/* not an -ENOMEM state: frees a node no store used */
		xas_nomem(&xas, 0);
	if (!taken && !xas_error(&xas))
		return true;
	hbmpool_huge_unreserve(r, first);
	return false;
}

/*
 * Drops a live entry, its page locked: no PMD is inserted from here on,
 * those there are zapped, and the marks and the entry leave the indices.
 * The caller unlocks the page, then puts the cache's reference and frees
 * the entry (hbmpool_huge_free()).  The region is left alone once the
 * entry is out of r->huge: an evictor holds no reference to it, and its
 * release (hbmpool_huge_drop_all()) no longer waits for this entry.
 */
static void hbmpool_huge_unpublish(struct hbmpool_huge *h)
{
	struct hbmpool_region *r = h->r;

	set_page_private(h->head, 0);
	unmap_mapping_pages(hbmpool_mapping(r), h->index, HPAGE_PMD_NR, false);
	spin_lock(&hbmpool_huge.lock);
	list_del_init(&h->lru);
	hbmpool_huge.nr_live--;
	spin_unlock(&hbmpool_huge.lock);
	hbmpool_huge_unreserve(r, h->index);
	hbmpool_cache_charge(r, -(long)HPAGE_PMD_NR);
	xa_cmpxchg(&r->huge, hbmpool_huge_key(h->index), h, NULL, 0);
}

/* After hbmpool_huge_unpublish() and the unlock: the cache's reference. */
static void hbmpool_huge_free(struct hbmpool_huge *h, struct page *head)
{
	hbmpool_hugepool_put(head);
	kfree_rcu(h, rcu);
}

/*
 * Drops the entry of the piece starting at @first, if there is one, and
 * counts it in @counter.  May sleep.  Return: whether there was one (live
 * or not: either way, its marks are gone when this returns).
 */
static bool hbmpool_huge_drop_piece(struct hbmpool_region *r, pgoff_t first,
				    atomic_long_t *counter)
{
	struct hbmpool_huge *h;
	struct page *head;

	h = hbmpool_huge_get(r, first, &head);
	if (!h)
		return false;
	lock_page(head);
	if (hbmpool_huge_live(h, head)) {
		hbmpool_huge_unpublish(h);
		unlock_page(head);
		hbmpool_huge_free(h, head);
		atomic_long_inc(counter);
	} else {
		unlock_page(head);
	}
	hbmpool_hugepool_put(head);	/* the last, once the entry went */
	return true;
}

/**
 * hbmpool_huge_demote - make room for 4 KiB pages at @index
 * @r: the region
 * @index: a page a 4 KiB user wants
 *
 * If @index is marked for a huge entry, drops the entry.  May sleep.
 * Return: true if it did (look @index up again), false if @index holds no
 * mark.
 */
bool hbmpool_huge_demote(struct hbmpool_region *r, pgoff_t index)
{
	if (!xa_is_value(xa_load(&r->pages, index)))
		return false;
	hbmpool_huge_drop_at(r, index);
	return true;
}

/* Drops the entry of the piece @index is in, if any.  May sleep. */
void hbmpool_huge_drop_at(struct hbmpool_region *r, pgoff_t index)
{
	hbmpool_huge_drop_piece(r, round_down(index, HPAGE_PMD_NR),
				&hbmpool_huge.dropped);
}

/* Drops the entries of the pieces in [@first, @last]: their node is gone. */
void hbmpool_huge_drop_range(struct hbmpool_region *r, pgoff_t first,
			     pgoff_t last)
{
	unsigned long key;
	void *entry;

	xa_for_each_range(&r->huge, key, entry, hbmpool_huge_key(first),
			  hbmpool_huge_key(last))
		hbmpool_huge_drop_piece(r, key << HPAGE_PMD_ORDER,
					&hbmpool_huge.dropped);
}

/* Region release: no mapping is left; drops every entry. */
void hbmpool_huge_drop_all(struct hbmpool_region *r)
{
	unsigned long key;
	void *entry;

	xa_for_each(&r->huge, key, entry) {
		hbmpool_huge_drop_piece(r, key << HPAGE_PMD_ORDER,
					&hbmpool_huge.released);
		cond_resched();
	}
	xa_destroy(&r->huge);
}

/**
 * hbmpool_huge_evict - drop entries for room
 * @nr: pages wanted
 *
 * Oldest first; an entry mapped since the last look goes round once more.
 * An entry whose lock is busy is passed over.  May sleep.
 * Return: the pages given back.
 */
long hbmpool_huge_evict(long nr)
{
	long freed = 0, scan;

	spin_lock(&hbmpool_huge.lock);
	scan = 2 * hbmpool_huge.nr_live;
	while (freed < nr && scan-- > 0 && !list_empty(&hbmpool_huge.lru)) {
		struct hbmpool_huge *h;
		struct hbmpool_region *r;
		struct page *head;

		h = list_first_entry(&hbmpool_huge.lru, struct hbmpool_huge, lru);
		list_move_tail(&h->lru, &hbmpool_huge.lru);
		if (READ_ONCE(h->referenced)) {
			WRITE_ONCE(h->referenced, false);
			continue;
		}
		head = h->head;
		get_page(head);		/* on the list: the cache's is held */
		spin_unlock(&hbmpool_huge.lock);
		if (trylock_page(head)) {
			if (hbmpool_huge_live(h, head)) {
				r = h->r;
				rcu_read_lock();
				hbmpool_count3(&r->stats,
					       hbmpool_read_copy(r, h->index, NULL),
					       HBMPOOL_STAT_EVICTIONS, HPAGE_PMD_NR);
				rcu_read_unlock();
				hbmpool_huge_unpublish(h);
				unlock_page(head);
				hbmpool_huge_free(h, head);
				atomic_long_inc(&hbmpool_huge.evicted);
				freed += HPAGE_PMD_NR;
			} else {
				unlock_page(head);
			}
		}
		hbmpool_hugepool_put(head);	/* the last, once the entry went */
		cond_resched();
		spin_lock(&hbmpool_huge.lock);
	}
	spin_unlock(&hbmpool_huge.lock);
	return freed;
}

/* The pages of the entries cached now, which the shrinker cannot free. */
long hbmpool_huge_nr_pages(void)
{
	return READ_ONCE(hbmpool_huge.nr_live) * HPAGE_PMD_NR;
}

/* Whether @vmf may map the piece starting at @first with a PMD. */
static bool hbmpool_huge_possible(struct vm_fault *vmf,
				  struct hbmpool_region *r, pgoff_t first)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long haddr = vmf->address & HPAGE_PMD_MASK;

	if ((vma->vm_flags & (VM_WRITE | VM_HUGEPAGE | VM_NOHUGEPAGE)) !=
	    VM_HUGEPAGE || (vmf->flags & FAULT_FLAG_WRITE) ||
	    !READ_ONCE(huge_mappings) || !has_transparent_hugepage() ||
	    test_bit(MMF_DISABLE_THP, &vma->vm_mm->flags))
		return false;
	if (r->chunk_shift < HPAGE_PMD_SHIFT || first + HPAGE_PMD_NR > r->nr_pages)
		return false;
	/* the PMD covers the piece: address and offset agree modulo 2 MiB */
	if (((vmf->address >> PAGE_SHIFT) ^ vmf->pgoff) & (HPAGE_PMD_NR - 1))
		return false;
	if (haddr < vma->vm_start || haddr + HPAGE_PMD_SIZE > vma->vm_end)
		return false;
	return pmd_none(*vmf->pmd);
}

/*
 * Room in the cache's budget for a whole piece: clean pages (and older
 * entries) go, nothing is written back.
 */
static bool hbmpool_huge_room(void)
{
	long over = (long)HPAGE_PMD_NR - hbmpool_cache_budget_room();

	if (over > 0)
		hbmpool_evict_clean(over);
	return hbmpool_cache_budget_room() >= (long)HPAGE_PMD_NR;
}

/* The piece's first entry in r->pages: a page, a mark, or NULL. */
static void *hbmpool_huge_piece_first(struct hbmpool_region *r, pgoff_t first)
{
	unsigned long index = first;

	return xa_find(&r->pages, &index, first + HPAGE_PMD_NR - 1, XA_PRESENT);
}

/* Whether a page of the piece is cached, or a fetch or a move holds one. */
static bool hbmpool_huge_piece_busy(struct hbmpool_region *r, pgoff_t first)
{
	void *entry = hbmpool_huge_piece_first(r, first);

	return entry && !xa_is_value(entry);
}

/* Whether nothing of the piece is in r->pages: no page, no fetch, no mark. */
static bool hbmpool_huge_piece_empty(struct hbmpool_region *r, pgoff_t first)
{
	return !hbmpool_huge_piece_first(r, first);
}

/*
 * Copies the first @nr pages of the piece starting at @first into @head from
 * the chunk's copy, under RCU: ->copy_nowait() does not sleep, and the
 * copy's node stays valid.  A whole piece's copy is counted as a fetch.
 * Return: 0 or -EAGAIN (the copy changed or cannot serve now: 4 KiB pages
 * take the slow path).
 */
static int hbmpool_huge_copy(struct hbmpool_region *r, pgoff_t first,
			     struct page *head, unsigned int nr)
{
	struct page *pages[HBMPOOL_HUGE_STEP];
	const struct hbmpool_copy *cp;
	struct hbmpool_node *node;
	unsigned int i, j, n;
	u64 offset, start, end;
	int err = 0;

	rcu_read_lock();
	cp = hbmpool_read_copy_of(r, first);
	if (!cp || cp->gen != hbmpool_node_data_gen(cp->node) ||
	    !cp->node->transport->ops->copy_nowait) {
		rcu_read_unlock();
		return -EAGAIN;
	}
	node = cp->node;
	offset = cp->offset + hbmpool_offset_in_chunk(r, first);
	start = sched_clock();	/* see hbmpool_fill_nowait() */
	for (i = 0; !err && i < nr; i += n) {
		n = min_t(unsigned int, nr - i, HBMPOOL_HUGE_STEP);
		for (j = 0; j < n; j++)
			pages[j] = nth_page(head, i + j);
		err = node->transport->ops->copy_nowait(node,
				offset + ((u64)i << PAGE_SHIFT), pages, n);
	}
	if (!err && nr == HPAGE_PMD_NR) {
		end = sched_clock();
		hbmpool_count_fetched(&r->stats, node, HPAGE_PMD_NR,
				      end > start ? end - start : 0);
	}
	rcu_read_unlock();
	return err ? -EAGAIN : 0;
}

/* A new entry for the piece at @first of @r in @head, locked: nobody sees it yet. */
static void hbmpool_huge_init_entry(struct hbmpool_huge *h, struct page *head,
				    struct hbmpool_region *r, pgoff_t first)
{
	h->head = head;
	h->r = r;
	h->index = first;
	h->referenced = true;
	INIT_LIST_HEAD(&h->lru);
	__folio_set_locked(page_folio(head));
}

/*
 * A filled entry, in r->huge with its marks in, goes live: on the LRU,
 * counted in @counter, returned with its page locked and a reference for
 * the caller in *@headp.
 */
static struct hbmpool_huge *hbmpool_huge_publish(struct hbmpool_huge *h,
						 atomic_long_t *counter,
						 struct page **headp)
{
	spin_lock(&hbmpool_huge.lock);
	list_add_tail(&h->lru, &hbmpool_huge.lru);
	hbmpool_huge.nr_live++;
	spin_unlock(&hbmpool_huge.lock);
	set_page_private(h->head, (unsigned long)h);	/* live */
	atomic_long_inc(counter);
	get_page(h->head);
	*headp = h->head;
	return h;
}

/*
 * Whether the piece starting at @first looks gatherable: all its 512 pages
 * cached, up to date, clean and unmapped.  A look under RCU, without
 * references (a page may leave meanwhile): hbmpool_huge_gather() checks
 * again under the page locks.  Cheap next to a 2 MiB allocation.
 */
static bool hbmpool_huge_piece_cached(struct hbmpool_region *r, pgoff_t first)
{
	XA_STATE(xas, &r->pages, first);
	unsigned int n = 0;
	struct page *page;

	rcu_read_lock();
	xas_for_each(&xas, page, first + HPAGE_PMD_NR - 1) {
		if (xas_retry(&xas, page))
			continue;
		if (xa_is_value(page) || page_mapped(page) ||
		    !test_bit(HBM_PG_UPTODATE, &page->private) ||
		    test_bit(HBM_PG_DIRTY, &page->private))
			break;
		n++;
	}
	rcu_read_unlock();
	return n == HPAGE_PMD_NR;
}

/*
 * A cached page that may be gathered, under its lock: in the region, up to
 * date, clean, not written back, unmapped (a piece in use through 4 KiB
 * mappings stays as it is: gathering it would zap them, and their next
 * fault would drop the entry again), held by nobody but the cache and the
 * caller, and not poisoned.
 */
static bool hbmpool_huge_page_gatherable(struct page *page,
					 struct address_space *mapping)
{
	return page->mapping == mapping && !page_mapped(page) &&
	       test_bit(HBM_PG_UPTODATE, &page->private) &&
	       !test_bit(HBM_PG_DIRTY, &page->private) &&
	       !test_bit(HBM_PG_WRITEBACK, &page->private) &&
	       !page_maybe_dma_pinned(page) && page_ref_count(page) == 2 &&
	       !PageHWPoison(page);
}

/*
 * Takes the piece's 512 cached pages, each referenced, locked (trylock)
 * and gatherable, in one walk of the index under RCU, as
 * hbmpool_lookup() takes one.  Anything else (a gap, a mark, a page frozen
 * or busy) gives up: the fault takes 4 KiB pages.  Return: true with
 * @pages filled; false with none held.
 */
static bool hbmpool_huge_gather(struct hbmpool_region *r, pgoff_t first,
				struct page **pages)
{
	struct address_space *mapping = hbmpool_mapping(r);
	XA_STATE(xas, &r->pages, first);
	unsigned int i = 0;
	bool ok = false;
	struct page *page;

	rcu_read_lock();
	xas_for_each(&xas, page, first + HPAGE_PMD_NR - 1) {
		if (xas_retry(&xas, page))
			continue;
		if (xas.xa_index != first + i || xa_is_value(page) ||
		    !get_page_unless_zero(page))
			break;
		if (unlikely(page != xas_reload(&xas)) || !trylock_page(page)) {
			put_page(page);
			break;
		}
		pages[i++] = page;
		ok = hbmpool_huge_page_gatherable(page, mapping);
		if (!ok)
			break;
	}
	rcu_read_unlock();
	if (ok && i == HPAGE_PMD_NR)
		return true;
	while (i--) {
		unlock_page(pages[i]);
		put_page(pages[i]);
	}
	return false;
}

/*
 * Gathers the piece starting at @first, cached in 4 KiB pages, into a new
 * entry: its pages are copied into a compound page, the entry takes their
 * charge, and they are taken out of the cache with the entry's marks put
 * in their place.  Never touches the link, so any transport's pieces may
 * be gathered (over TCP, hbmpool_huge_fetch() fetches them whole for
 * that).  Only clean pages: their
 * data is the home's.  The entry enters r->huge, its page locked, before
 * the pages are gathered: a rival huge fault waits for it, and a 4 KiB
 * user that finds a mark finds the entry.  Returns as
 * hbmpool_huge_create().
 */
static struct hbmpool_huge *hbmpool_huge_collapse(struct hbmpool_region *r,
						  pgoff_t first,
						  struct page **headp)
{
	const struct hbmpool_copy *cp;
	struct hbmpool_huge *h;
	struct page **pages, *head;
	unsigned int i;
	bool usable;
	int err;

	BUILD_BUG_ON(HPAGE_PMD_NR > HBMPOOL_TAKE_MAX);
	if (!hbmpool_huge_piece_cached(r, first))
		return NULL;
	pages = kmalloc_array(HPAGE_PMD_NR, sizeof(*pages), GFP_KERNEL);
	h = kmalloc(sizeof(*h), GFP_KERNEL);
	head = hbmpool_hugepool_alloc(HBMPOOL_HUGE_GFP);
	if (!head)
		atomic_long_inc(&hbmpool_huge.alloc_failed);
	if (!pages || !h || !head)
		goto err_free;
	hbmpool_huge_init_entry(h, head, r, first);
	err = xa_insert(&r->huge, hbmpool_huge_key(first), h, GFP_KERNEL);
	if (err) {
		__folio_clear_locked(page_folio(head));
		if (err == -EBUSY) {	/* another entry came first: look it up */
			hbmpool_hugepool_put(head);
			kfree(h);
			kfree(pages);
			return ERR_PTR(-EEXIST);
		}
		goto err_free;
	}
	/*
	 * The entry is seen before the node is looked at: a node removed from
	 * here on finds it (hbmpool_huge_drop_range() waits for its page
	 * lock); one removed before is seen removed.  Pairs with the barrier
	 * in hbmpool_region_node_removed().
	 */
	smp_mb();
	if (!hbmpool_huge_gather(r, first, pages))
		goto err_unindex;
	/* locked, clean and unmapped: nothing writes them meanwhile */
	for (i = 0; i < HPAGE_PMD_NR; i++)
		copy_highpage(nth_page(head, i), pages[i]);
	rcu_read_lock();
	cp = hbmpool_read_copy_of(r, first);
	usable = cp && READ_ONCE(cp->node->state) != HBMPOOL_NODE_REMOVED &&
		 cp->gen == hbmpool_node_data_gen(cp->node);
	rcu_read_unlock();
	if (!usable)
		goto err_pages;
	/* the entry's charge first: the take's uncharge shows no room meanwhile */
	hbmpool_cache_charge(r, HPAGE_PMD_NR);
	if (hbmpool_cache_take(r, pages, HPAGE_PMD_NR, HBMPOOL_HUGE_MARK))
		goto err_uncharge;
	for (i = 0; i < HPAGE_PMD_NR; i++)
		unlock_page(pages[i]);
	hbmpool_page_release_run(pages, HPAGE_PMD_NR);
	kfree(pages);
	return hbmpool_huge_publish(h, &hbmpool_huge.collapsed, headp);

err_uncharge:
	hbmpool_cache_charge(r, -(long)HPAGE_PMD_NR);
err_pages:
	for (i = 0; i < HPAGE_PMD_NR; i++) {
		unlock_page(pages[i]);
		put_page(pages[i]);
	}
err_unindex:
	xa_erase(&r->huge, hbmpool_huge_key(first));
	unlock_page(head);	/* a waiter finds it not live and looks again */
	hbmpool_huge_free(h, head);	/* after a grace period: seen in r->huge */
	kfree(pages);
	return NULL;
err_free:
	if (head)
		hbmpool_hugepool_put(head);
	kfree(h);
	kfree(pages);
	return NULL;
}

/**
 * hbmpool_huge_wanted - whether ->fault may gather @vmf's piece for a PMD
 * @vmf: a read fault on a cached page, before fault-around
 * @r: the region
 *
 * Fault-around leaves such a fault to ->fault: the 4 KiB pages it would map
 * would put a page table where the PMD goes.
 */
bool hbmpool_huge_wanted(struct vm_fault *vmf, struct hbmpool_region *r)
{
	pgoff_t first = round_down(vmf->pgoff, HPAGE_PMD_NR);

	return hbmpool_huge_possible(vmf, r, first) &&
	       READ_ONCE(hbmpool_cache_budget) >= 2 * HPAGE_PMD_NR &&
	       hbmpool_huge_piece_cached(r, first);
}

/*
 * Fetches the piece starting at @first whole into a new entry, or gathers
 * it if a page of it is cached (*@gathered set).  Returns it live, its
 * page locked, with a reference for the caller in *@headp;
 * ERR_PTR(-EEXIST) when another entry came first (look it up); NULL when
 * 4 KiB pages must serve (no copy that copies without waiting, no room,
 * no 2 MiB page, a 4 KiB page in the piece already).
 */
static struct hbmpool_huge *hbmpool_huge_create(struct hbmpool_region *r,
						pgoff_t first,
						struct page **headp,
						bool *gathered)
{
	struct hbmpool_huge *h;
	struct page *head;
	int err;

	/*
	 * What makes the piece take 4 KiB pages anyway, before any eviction;
	 * a budget under two pieces takes none: an entry would evict most of
	 * the cache.
	 */
	if (READ_ONCE(hbmpool_cache_budget) < 2 * HPAGE_PMD_NR)
		return NULL;
	if (hbmpool_huge_piece_busy(r, first)) {
		*gathered = true;
		return hbmpool_huge_collapse(r, first, headp);
	}
	if (!hbmpool_nowait_ok(r, first))
		return NULL;
	head = hbmpool_hugepool_alloc(HBMPOOL_HUGE_GFP);
	if (!head) {
		atomic_long_inc(&hbmpool_huge.alloc_failed);
		return NULL;
	}
	/*
	 * Whether the link copies without waiting now is the transport's to
	 * say (a sim with latency, a dead shm link refuse): one page asks it,
	 * before anything is evicted for room.
	 */
	if (hbmpool_huge_copy(r, first, head, 1) || !hbmpool_huge_room())
		goto err_page;
	h = kmalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		goto err_page;
	hbmpool_huge_init_entry(h, head, r, first);

	err = xa_insert(&r->huge, hbmpool_huge_key(first), h, GFP_KERNEL);
	if (err) {
		__folio_clear_locked(page_folio(head));
		kfree(h);
		hbmpool_hugepool_put(head);
		return err == -EBUSY ? ERR_PTR(-EEXIST) : NULL;
	}
	if (!hbmpool_huge_reserve(r, first))
		goto err_unindex;
	hbmpool_cache_charge(r, HPAGE_PMD_NR);
	if (hbmpool_huge_copy(r, first, head, HPAGE_PMD_NR))
		goto err_uncharge;

	return hbmpool_huge_publish(h, &hbmpool_huge.created, headp);

err_uncharge:
	hbmpool_cache_charge(r, -(long)HPAGE_PMD_NR);
	hbmpool_huge_unreserve(r, first);
err_unindex:
	/* a waiter on the page lock finds it not live and looks again */
	xa_erase(&r->huge, hbmpool_huge_key(first));
	unlock_page(head);
	hbmpool_huge_free(h, head);
	return NULL;
err_page:
	hbmpool_hugepool_put(head);
	return NULL;
}

/* Whether the copy a fetch of the piece would read is on a node in use. */
static bool hbmpool_huge_copy_usable(struct hbmpool_region *r, pgoff_t first)
{
	const struct hbmpool_copy *cp;
	bool ok;

	rcu_read_lock();
	cp = hbmpool_read_copy_of(r, first);
	ok = cp && hbmpool_node_usable(cp->node) &&
	     cp->gen == hbmpool_node_data_gen(cp->node);
	rcu_read_unlock();
	return ok;
}

/*
 * Starts fetching the piece at @first whole in 4 KiB pages, one request,
 * if nothing of it is cached and its copy's node is in use; @flags and
 * @reqp as for hbmpool_fetch_start().  The caller made room.  Return: the
 * pages in the run (fewer than the piece if the cache's budget cut it: the
 * piece then stays in 4 KiB pages), or a negative errno.
 */
static int hbmpool_huge_fetch_start(struct hbmpool_region *r, pgoff_t first,
				    unsigned long flags, struct hbmpool_req **reqp)
{
	if (!hbmpool_huge_piece_empty(r, first) ||
	    !hbmpool_huge_copy_usable(r, first))
		return -EEXIST;
	return hbmpool_fetch_start(r, first, HPAGE_PMD_NR, HBMPOOL_RA_NO_MARK,
				   flags, reqp);
}

/*
 * The piece at @first, the next of @vmf's, is fetched whole in 4 KiB
 * pages, without waiting, for a reader that goes through a huge mapping in
 * order over a link that waits: after a fetch for a fault, and when a
 * piece gathered follows the one mapped last (@nowait_too false: not over
 * a link that copies without waiting, where a piece's own fault fetches it
 * into its entry with one copy).  If the mapping covers it, nothing of it
 * is cached, and clean pages can make room.  Under mmap_lock.
 */
static void hbmpool_huge_ahead(struct vm_fault *vmf, struct hbmpool_region *r,
			       pgoff_t first, bool nowait_too)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long next = (vmf->address & HPAGE_PMD_MASK) + HPAGE_PMD_SIZE;

	if ((vma->vm_flags & VM_RAND_READ) || next + HPAGE_PMD_SIZE > vma->vm_end ||
	    first + HPAGE_PMD_NR > r->nr_pages ||
	    !hbmpool_huge_piece_empty(r, first) ||
	    (!nowait_too && hbmpool_nowait_ok(r, first)) || !hbmpool_huge_room())
		return;
	if (hbmpool_huge_fetch_start(r, first, HBMPOOL_FETCH_AHEAD, NULL) ==
	    HPAGE_PMD_NR)
		atomic_long_inc(&hbmpool_huge.ahead);
}

/**
 * hbmpool_huge_fetch - fetch a fault's piece whole over a link that waits
 * @vmf: a read fault that may retry, under mmap_lock, on a page that is
 *	not cached, which the link cannot copy without waiting
 * @r: the region
 *
 * Where the PMD could map the piece, and nothing of it is cached, the piece
 * is fetched whole in 4 KiB pages and one request (as the page cache reads
 * a MADV_HUGEPAGE mapping's piece whole), after clean pages made room for
 * it; unless the mapping is MADV_RANDOM, the next piece is fetched too,
 * without waiting.  Then mmap_lock is dropped and the whole run waited for,
 * killable; the retried fault finds the piece cached whole and gathers it
 * (hbmpool_huge_collapse()).  A failed fetch leaves its pages stale: the
 * retried fault fetches its own page again and reports the error.  Not for
 * a retried fault: a piece evicted before its gathering takes 4 KiB pages.
 * Return: true when mmap_lock was dropped (the fault returns
 * VM_FAULT_RETRY), false when 4 KiB pages serve the fault.
 */
bool hbmpool_huge_fetch(struct vm_fault *vmf, struct hbmpool_region *r)
{
	pgoff_t first = round_down(vmf->pgoff, HPAGE_PMD_NR);
	struct vm_area_struct *vma = vmf->vma;
	struct hbmpool_req *req;
	struct file *fpin;
	int nr;

	/* what would refuse the fetch, before anything is evicted for it */
	if ((vmf->flags & FAULT_FLAG_TRIED) ||
	    !hbmpool_huge_possible(vmf, r, first) ||
	    READ_ONCE(hbmpool_cache_budget) < 2 * HPAGE_PMD_NR ||
	    !hbmpool_huge_piece_empty(r, first) ||
	    !hbmpool_huge_copy_usable(r, first) || !hbmpool_huge_room())
		return false;
	nr = hbmpool_huge_fetch_start(r, first, 0, &req);
	if (nr < 0)
		return false;
	if (nr == HPAGE_PMD_NR)
		atomic_long_inc(&hbmpool_huge.fetched);
	/* this fault's link waited: the next piece's will too */
	hbmpool_huge_ahead(vmf, r, first + HPAGE_PMD_NR, true);

	/* as in __hbmpool_vm_fault(): the file keeps the module */
	fpin = get_file(vma->vm_file);
	mmap_read_unlock(vma->vm_mm);
	hbmpool_fetch_wait(req);	/* the retried fault finds what came */
	hbmpool_req_put(req);
	fput(fpin);
	return true;
}

/**
 * hbmpool_huge_fault - serve a read fault with a PMD
 * @vmf: the fault, under mmap_lock
 * @r: the region
 *
 * Maps the piece of @vmf with a PMD, fetching it whole if it is not cached
 * (hbmpool_huge_create() says when it is not).  Never waits for the link.
 * Return: VM_FAULT_NOPAGE when mapped (or when another task mapped the PMD
 * meanwhile); 0 when 4 KiB pages must serve the fault.
 */
vm_fault_t hbmpool_huge_fault(struct vm_fault *vmf, struct hbmpool_region *r)
{
	pgoff_t first = round_down(vmf->pgoff, HPAGE_PMD_NR);
	struct file_ra_state *ra;
	struct hbmpool_huge *h;
	bool gathered;
	struct page *head;
	vm_fault_t ret;

	if (!hbmpool_huge_possible(vmf, r, first))
		return 0;
	do {
		gathered = false;
		h = hbmpool_huge_get(r, first, &head);
		if (h)
			lock_page(head);
		else
			h = hbmpool_huge_create(r, first, &head, &gathered);
	} while (h == ERR_PTR(-EEXIST));
	if (!h)
		return 0;
	if (!hbmpool_huge_live(h, head)) {
		unlock_page(head);
		hbmpool_hugepool_put(head);
		return 0;
	}
	if (unlikely(hbmpool_compound_poisoned(head))) {
		/*
		 * A memory error in the piece (a hardware error marks only the
		 * 4 KiB page hit): its data is the home's, so 4 KiB
		 * pages fetch it again.  The cache's reference is kept, never
		 * put: a poisoned 2 MiB page must not return to the allocator.
		 */
		hbmpool_huge_unpublish(h);
		unlock_page(head);
		kfree_rcu(h, rcu);
		put_page(head);
		atomic_long_inc(&hbmpool_huge.dropped);
		pr_warn_ratelimited("region %u pages %lu+%d: memory error in a piece cached whole; dropped, its 2 MiB page kept out of use\n",
				    r->id, first, HPAGE_PMD_NR);
		return 0;
	}
	ret = vmf_insert_pfn_pmd(vmf, pfn_to_pfn_t(page_to_pfn(head)), false);
	WRITE_ONCE(h->referenced, true);
	unlock_page(head);
	put_page(head);	/* the cache holds one while the entry lives: rarely the last */
	atomic_long_inc(&hbmpool_huge.mapped);
	/* gathered by a reader in order (the piece before was mapped last) */
	ra = &vmf->vma->vm_file->f_ra;
	if (gathered && READ_ONCE(ra->prev_pos) == (loff_t)first - 1)
		hbmpool_huge_ahead(vmf, r, first + HPAGE_PMD_NR, false);
	hbmpool_ra_access(ra, first + HPAGE_PMD_NR - 1);
	return ret;
}

static int hbmpool_huge_show(struct seq_file *m, void *v)
{
	long live;

	spin_lock(&hbmpool_huge.lock);
	live = hbmpool_huge.nr_live;
	spin_unlock(&hbmpool_huge.lock);
	seq_printf(m, "created %ld\ncollapsed %ld\nfetched %ld\nahead %ld\nmapped %ld\ndropped %ld\nevicted %ld\nreleased %ld\nalloc_failed %ld\nlive %ld\npooled %ld\npool_recycled %ld\n",
		   atomic_long_read(&hbmpool_huge.created),
		   atomic_long_read(&hbmpool_huge.collapsed),
		   atomic_long_read(&hbmpool_huge.fetched),
		   atomic_long_read(&hbmpool_huge.ahead),
		   atomic_long_read(&hbmpool_huge.mapped),
		   atomic_long_read(&hbmpool_huge.dropped),
		   atomic_long_read(&hbmpool_huge.evicted),
		   atomic_long_read(&hbmpool_huge.released),
		   atomic_long_read(&hbmpool_huge.alloc_failed), live,
		   hbmpool_hugepool_nr(), hbmpool_hugepool_recycled());
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(hbmpool_huge);

void hbmpool_huge_init(void)
{
	debugfs_create_file("huge", 0444, hbmpool_debugfs_root, NULL,
			    &hbmpool_huge_fops);
}

/* Every region is gone, and each dropped its entries. */
void hbmpool_huge_exit(void)
{
	WARN_ON_ONCE(!list_empty(&hbmpool_huge.lru));
}
