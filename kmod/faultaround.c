// SPDX-License-Identifier: GPL-2.0
/*
 * Mapping several pages per fault.
 *
 * A fault costs far more than the copy of the page it maps, so the fault
 * path maps more than the page that faulted:
 *
 *  - hbmpool_map_run(): the pages a batched fetch of the fast path brought
 *    in with the faulting one (a sequential window, fault.c) are mapped in
 *    the same fault;
 *  - ->map_pages (hbmpool_vm_map_pages()): the kernel's fault-around asks a
 *    read fault to map the cached neighbours of the faulting address (the
 *    pages a read-ahead window fetched, or pages cached by an earlier
 *    mapping), as filemap_map_pages() does for files.
 *
 * Fault-around is adaptive, as the page cache's read-around is (its
 * file_ra_state.mmap_miss, which a region's file uses for the same count):
 * while most read faults of the file find their page not cached (random
 * first touches), ->map_pages returns at once instead of looking the page
 * up, a cost on every such fault that finds nothing.  Read faults that find
 * their page cached, and the pages mapped with fetched windows, bring it
 * back.
 *
 * Pages are inserted with vm_insert_pages() (the vma is VM_MIXEDMAP, so
 * that it may be called from a fault) under their page lock: eviction
 * unmaps under the page lock, so no PTE appears for a page it is taking
 * out.  They are mapped read-only (the mapping wants write notification):
 * the first write still goes through page_mkwrite, which marks the page
 * dirty.  The faulting page is left to ->fault when it is to be mapped
 * writable (writepredict.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/pagemap.h>

#include "hbmpool.h"

/* Pages inserted by one call of vm_insert_pages() in ->map_pages. */
#define HBMPOOL_MAP_BATCH	16

/*
 * The file's count (file_ra_state.mmap_miss): a read fault that found its
 * page not cached adds one; the pages that fault-around or a fetched window
 * mapped take off as many.  Fault-around is skipped while the count is
 * above HBMPOOL_MAP_MISS_MAX (the page cache's MMAP_LOTSAMISS); it stops at
 * twice that.  A read fault that finds its page cached takes off
 * HBMPOOL_MAP_HIT: while fault-around is off such a hit stands for the
 * neighbours it might have mapped, so that it comes back once more than a
 * fifth of the read faults hit, not only once most do.
 *
 * The count is updated without a lock, as the page cache's is, by every
 * task that faults through the file (threads, and processes that share
 * it): racing updates may lose some of each other's changes, and the count
 * stays within [0, 2 * HBMPOOL_MAP_MISS_MAX] all the same.
 */
#define HBMPOOL_MAP_MISS_MAX	100U
#define HBMPOOL_MAP_HIT		4U

/* A read fault found its page not cached. */
void hbmpool_fa_miss(struct file_ra_state *ra)
{
	unsigned int miss = READ_ONCE(ra->mmap_miss);

	if (miss < 2 * HBMPOOL_MAP_MISS_MAX)
		WRITE_ONCE(ra->mmap_miss, miss + 1);
}

/* @nr pages were mapped by fault-around or with a fetched window. */
void hbmpool_fa_mapped(struct file_ra_state *ra, unsigned int nr)
{
	unsigned int miss = READ_ONCE(ra->mmap_miss);

	if (miss)
		WRITE_ONCE(ra->mmap_miss, miss > nr ? miss - nr : 0);
}

/* A read fault found its page cached. */
void hbmpool_fa_hit(struct file_ra_state *ra)
{
	hbmpool_fa_mapped(ra, HBMPOOL_MAP_HIT);
}

/* Whether most read faults of the file missed the cache of late. */
bool hbmpool_fa_missing(struct file_ra_state *ra)
{
	return READ_ONCE(ra->mmap_miss) > HBMPOOL_MAP_MISS_MAX;
}

/*
 * Inserts @nr pages of consecutive indices, starting at @addr, into @vma;
 * a page whose PTE cannot be set (one exists already, no memory for a page
 * table) is skipped.  Return: whether the page at position @want was
 * mapped (false if @want >= @nr).
 */
static bool hbmpool_insert_run(struct vm_area_struct *vma, unsigned long addr,
			       struct page **pages, unsigned int nr,
			       unsigned int want)
{
	bool mapped = want < nr;
	unsigned int pos = 0;

	while (pos < nr) {
		unsigned long left = nr - pos;
		unsigned int failed;

		if (!vm_insert_pages(vma, addr + ((unsigned long)pos << PAGE_SHIFT),
				     pages + pos, &left))
			break;
		failed = nr - left;	/* the page vm_insert_pages() stopped at */
		if (failed == want)
			mapped = false;
		pos = failed + 1;
	}
	return mapped;
}

/**
 * hbmpool_map_run - map the rest of a batched fetch
 * @vmf: the fault that fetched the run
 * @pages: locked, up-to-date cache pages of consecutive indices, all after
 *	the faulting page
 * @nr: how many
 *
 * Maps those the faulting vma covers and unlocks every page.  Called under
 * mmap_lock, from the fault.
 */
void hbmpool_map_run(struct vm_fault *vmf, struct page **pages,
		     unsigned int nr)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long addr, fit;
	unsigned int i;

	if (!nr)
		return;
	addr = vma->vm_start + ((pages[0]->index - vma->vm_pgoff) << PAGE_SHIFT);
	fit = addr < vma->vm_end ? (vma->vm_end - addr) >> PAGE_SHIFT : 0;
	if (fit)
		hbmpool_insert_run(vma, addr, pages, min_t(unsigned long, nr, fit),
				   UINT_MAX);
	for (i = 0; i < nr; i++)
		unlock_page(pages[i]);
}

/*
 * Maps the @nr pages gathered by hbmpool_vm_map_pages() (locked, with a
 * reference each, of consecutive indices from @first), then lets them go.
 * Return: whether the faulting page was one of them and was mapped.
 */
static bool hbmpool_map_batch(struct vm_fault *vmf, pgoff_t first,
			      struct page **pages, unsigned int nr)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long addr = vma->vm_start + ((first - vma->vm_pgoff) << PAGE_SHIFT);
	unsigned int want = vmf->pgoff >= first ? vmf->pgoff - first : UINT_MAX;
	bool mapped;
	unsigned int i;

	if (!nr)
		return false;
	mapped = hbmpool_insert_run(vma, addr, pages, nr, want);
	for (i = 0; i < nr; i++) {
		unlock_page(pages[i]);
		put_page(pages[i]);	/* the PTE has its own */
	}
	return mapped;
}

/*
 * The next page fault-around may map, from *@from on up to @end: cached, up
 * to date, not poisoned, not mapped, and not a read-ahead mark (a fault on
 * the mark starts the next window, so it is left to ->fault).  Returns it locked,
 * with a reference, and moves *@from past it; NULL when there is none.
 * Walks the cache's xarray under RCU, as filemap_map_pages() walks the page
 * cache, from the top each time: its caller sleeps between two calls.
 */
static struct page *hbmpool_map_next(struct hbmpool_region *r,
				     struct xa_state *xas, pgoff_t *from,
				     pgoff_t end)
{
	struct page *page;

	if (*from > end)
		return NULL;
	rcu_read_lock();
	xas_set(xas, *from);
	for (page = xas_find(xas, end); page; page = xas_next_entry(xas, end)) {
		if (xas_retry(xas, page) || xa_is_value(page))
			continue;
		/*
		 * A mapped page is most likely mapped here already (a region
		 * is seldom mapped twice): inserting it would only find its
		 * PTE taken, at the cost of a page-table walk and its lock.
		 */
		if (test_bit(HBM_PG_READAHEAD, &page->private) ||
		    !test_bit(HBM_PG_UPTODATE, &page->private) ||
		    PageLocked(page) || page_mapped(page) ||
		    !get_page_unless_zero(page))
			continue;
		if (unlikely(page != xas_reload(xas)) || !trylock_page(page)) {
			put_page(page);
			continue;
		}
		if (page->mapping != hbmpool_mapping(r) ||
		    !test_bit(HBM_PG_UPTODATE, &page->private) ||
		    test_bit(HBM_PG_READAHEAD, &page->private) ||
		    PageHWPoison(page)) {
			unlock_page(page);
			put_page(page);
			continue;
		}
		rcu_read_unlock();
		*from = page->index + 1;
		return page;
	}
	rcu_read_unlock();
	return NULL;
}

/*
 * ->map_pages: a read fault on a cached page maps it and its cached
 * neighbours in [@start, @end] (the kernel's fault-around window, inside
 * the vma and its page table).  Never fetches and never waits.  VM_FAULT_NOPAGE
 * when the faulting page itself was mapped: then ->fault is not called.
 */
vm_fault_t hbmpool_vm_map_pages(struct vm_fault *vmf, pgoff_t start,
				pgoff_t end)
{
	struct file *file = vmf->vma->vm_file;
	struct hbmpool_region *r = file->private_data;
	struct page *batch[HBMPOOL_MAP_BATCH];
	unsigned int nr = 0, total = 0;
	struct page *page;
	bool mapped = false, left = false;
	pgoff_t first = start, from = start;
	XA_STATE(xas, &r->pages, start);

	/* Most read faults of the file miss: ->fault's lookup is enough. */
	if (hbmpool_fa_missing(&file->f_ra))
		return 0;
	/*
	 * A miss goes to ->fault at once: with a fetch to make, the walk would
	 * be a cost on every random fault, and a sequential reader's next
	 * fault maps the neighbours anyway.
	 */
	rcu_read_lock();
	page = xa_load(&r->pages, vmf->pgoff);
	if (!page || xa_is_value(page) ||
	    !test_bit(HBM_PG_UPTODATE, &page->private)) {
		rcu_read_unlock();
		return 0;
	}
	rcu_read_unlock();
	/* a cached piece that may be mapped whole is ->fault's (huge.c) */
	if (unlikely(vmf->vma->vm_flags & VM_HUGEPAGE) &&
	    hbmpool_huge_wanted(vmf, r))
		return 0;

	end = min_t(pgoff_t, end, r->nr_pages - 1);
	while ((page = hbmpool_map_next(r, &xas, &from, end))) {
		pgoff_t index = page->index;

		if (index == vmf->pgoff) {
			/* to be mapped writable: ->fault does it */
			if (hbmpool_wp_wanted(vmf, r, page)) {
				unlock_page(page);
				put_page(page);
				left = true;
				continue;
			}
			set_bit(HBM_PG_REFERENCED, &page->private);
		}
		total++;
		if (nr && first + nr == index && nr < ARRAY_SIZE(batch)) {
			batch[nr++] = page;
			continue;
		}
		mapped |= hbmpool_map_batch(vmf, first, batch, nr);
		first = index;
		batch[0] = page;
		nr = 1;
	}
	mapped |= hbmpool_map_batch(vmf, first, batch, nr);
	if (!mapped) {
		/* its neighbours count, not a fault: ->fault maps it writable */
		if (left && total)
			hbmpool_fa_mapped(&file->f_ra, total);
		return 0;
	}
	hbmpool_fa_mapped(&file->f_ra, total);	/* taken, if not all inserted */
	hbmpool_ra_access(&file->f_ra, vmf->pgoff);
	rcu_read_lock();
	hbmpool_count3(&r->stats, hbmpool_read_copy(r, vmf->pgoff, NULL),
		       HBMPOOL_STAT_FAULTS, 1);
	rcu_read_unlock();
	return VM_FAULT_NOPAGE;
}
