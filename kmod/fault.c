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
 * A fetch that fails leaves an error marker in the region's xarray; the
 * retried fault (or whichever fault comes first) consumes it and gets
 * SIGBUS.  A failed fetch never maps a page.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/sched/signal.h>

#include "hbmpool.h"

unsigned int hbmpool_fetch_timeout_ms;

static struct kmem_cache *hbmpool_xfer_cache;

/* ---- transfers ---- */

static void hbmpool_xfer_release(struct kref *ref)
{
	struct hbmpool_xfer *x = container_of(ref, struct hbmpool_xfer, ref);

	put_page(x->page);
	if (x->wb_owner) {
		struct page *owner = x->wb_owner;

		clear_bit_unlock(HBM_PG_WRITEBACK, &owner->private);
		/* order the clear before wake_up_bit()'s waitqueue check */
		smp_mb__after_atomic();
		wake_up_bit(&owner->private, HBM_PG_WRITEBACK);
		put_page(owner);
		hbmpool_region_put(x->wb_region);
	}
	hbmpool_node_put(x->node);
	kmem_cache_free(hbmpool_xfer_cache, x);
}

void hbmpool_xfer_complete(struct hbmpool_xfer *x, int status)
{
	x->status = status;
	complete(&x->done);
	kref_put(&x->ref, hbmpool_xfer_release);
}

/*
 * Moves one page between @page and @node's HBM at @offset and waits, at
 * most fetch_timeout_ms, killable.  May sleep; never call with mmap_lock
 * held unless the fault cannot be retried.
 *
 * @wb: for a write-back, the claim of the caller.  If the wait ends before
 * the transfer (timeout, fatal signal), the bit lock and a reference on the
 * region pass to the transfer, which releases them on completion, and
 * @wb->handed_off tells the caller to leave the bit alone.
 */
int hbmpool_xfer_page(struct hbmpool_node *node, bool write, u64 offset,
		      struct page *page, struct hbmpool_wb_claim *wb,
		      u64 *lat_ns)
{
	struct hbmpool_xfer *x;
	u64 start = ktime_get_ns();
	unsigned long timeout;
	long left;
	int err;

	x = kmem_cache_alloc(hbmpool_xfer_cache, GFP_KERNEL);
	if (!x)
		return -ENOMEM;
	kref_init(&x->ref);
	init_completion(&x->done);
	x->status = 0;
	x->write = write;
	x->node = node;
	hbmpool_node_get(node);
	x->offset = offset;
	x->page = page;
	get_page(page);
	x->wb_owner = NULL;
	x->wb_region = NULL;
	if (wb)
		wb->handed_off = false;

	if (READ_ONCE(node->removed)) {
		err = -ENODEV;
		goto out;
	}
	kref_get(&x->ref);		/* the transport's */
	err = node->ops->submit(node, x);
	if (err) {
		kref_put(&x->ref, hbmpool_xfer_release);
		goto out;
	}
	timeout = msecs_to_jiffies(READ_ONCE(hbmpool_fetch_timeout_ms));
	left = wait_for_completion_killable_timeout(&x->done, timeout);
	if (left > 0) {
		err = x->status;
	} else {
		err = left ? -EINTR : -ETIMEDOUT;
		if (wb) {
			/* released by the last put, ours or the transport's */
			get_page(wb->owner);
			x->wb_owner = wb->owner;
			kref_get(&wb->region->ref);
			x->wb_region = wb->region;
			wb->handed_off = true;
		}
	}
out:
	*lat_ns = ktime_get_ns() - start;
	kref_put(&x->ref, hbmpool_xfer_release);
	return err;
}

/* ---- the cache index ---- */

/*
 * Returns the cached page at @index with a reference, or NULL.  An error
 * marker found there is consumed and returned in @err if @err is given (a
 * fault), else left for the next fault.
 */
struct page *hbmpool_lookup(struct hbmpool_region *r, pgoff_t index, int *err)
{
	struct page *page;
	void *entry;

	if (err)
		*err = 0;
	rcu_read_lock();
repeat:
	entry = xa_load(&r->pages, index);
	if (!entry || (xa_is_value(entry) && !err)) {
		page = NULL;
		goto out;
	}
	if (xa_is_value(entry)) {
		if (xa_cmpxchg(&r->pages, index, entry, NULL, 0) != entry)
			goto repeat;
		*err = -(int)xa_to_value(entry);
		page = NULL;
		goto out;
	}
	page = entry;
	if (!get_page_unless_zero(page))
		goto repeat;
	if (unlikely(page != xa_load(&r->pages, index))) {
		put_page(page);
		goto repeat;
	}
out:
	rcu_read_unlock();
	return page;
}

/*
 * Publishes a new, locked cache page for @index of @r, not yet up to date.
 * ERR_PTR(-EEXIST): someone else has the index (a page or an error marker).
 */
static struct page *hbmpool_page_new(struct hbmpool_region *r, pgoff_t index)
{
	struct page *page;
	void *old;

	page = alloc_page(GFP_HIGHUSER | __GFP_NOWARN);
	if (!page)
		return ERR_PTR(-ENOMEM);
	lock_page(page);		/* new: never contended */
	page->index = index;
	page->mapping = hbmpool_mapping(r);
	set_page_private(page, BIT(HBM_PG_REFERENCED));

	old = xa_cmpxchg(&r->pages, index, NULL, page, GFP_KERNEL);
	if (old) {
		page->mapping = NULL;
		set_page_private(page, 0);
		unlock_page(page);
		put_page(page);
		return ERR_PTR(xa_is_err(old) ? xa_err(old) : -EEXIST);
	}
	hbmpool_cache_charge(r, 1);
	return page;
}

/* The fetch into a new page succeeded; the caller unlocks it. */
static void hbmpool_page_fetched(struct hbmpool_region *r,
				 struct hbmpool_node *node, struct page *page,
				 u64 lat)
{
	set_bit(HBM_PG_UPTODATE, &page->private);
	hbmpool_lru_add(page);
	hbmpool_count3(&r->stats, node, HBMPOOL_STAT_FETCHES, 1);
	hbmpool_count3(&r->stats, node, HBMPOOL_STAT_BYTES_FETCHED, PAGE_SIZE);
	hbmpool_count_latency(&r->stats, node, lat);
}

/* The fetch into a new page failed: unpublish it, leaving @marker in its slot. */
static void hbmpool_page_abandon(struct hbmpool_region *r, struct page *page,
				 void *marker)
{
	xa_cmpxchg(&r->pages, page->index, page, marker, GFP_KERNEL);
	page->mapping = NULL;
	set_page_private(page, 0);
	hbmpool_cache_charge(r, -1);
	unlock_page(page);	/* waiters see mapping == NULL and look again */
	put_page(page);
}

/*
 * Fetches page @index of @r into the cache.  -EEXIST: someone else has it
 * or is fetching it.  A failure of a fault-driven fetch (@fault) leaves an
 * error marker for the retried fault.
 */
int hbmpool_fill(struct hbmpool_region *r, pgoff_t index, bool fault,
		 bool may_writeback)
{
	struct hbmpool_node *node = hbmpool_chunk_of(r, index)->node;
	struct page *page;
	u64 lat;
	int err;

	hbmpool_make_room(may_writeback);
	page = hbmpool_page_new(r, index);
	if (IS_ERR(page))
		return PTR_ERR(page);

	err = hbmpool_xfer_page(node, false, hbmpool_node_offset(r, index),
				page, NULL, &lat);
	if (!err) {
		hbmpool_page_fetched(r, node, page, lat);
		unlock_page(page);
		return 0;
	}

	if (err != -EINTR) {
		hbmpool_count3(&r->stats, node, HBMPOOL_STAT_ERRORS, 1);
		if (err == -ETIMEDOUT)
			hbmpool_count3(&r->stats, node, HBMPOOL_STAT_TIMEOUTS, 1);
		pr_warn_ratelimited("region %u page %lu: fetch from node %u failed: %d\n",
				    r->id, index, node->id, err);
	}
	hbmpool_page_abandon(r, page,
			     fault && err != -EINTR ? xa_mk_value(-err) : NULL);
	return err;
}

/*
 * The fast path, for a transport that can move a page with a CPU copy and
 * no wait (a load/store fabric; the sim with no added latency): fetches
 * under mmap_lock, as a fault on local memory copies under it, and returns
 * the new page locked with a reference for the PTE.  NULL: take the slow
 * path (the transport would wait, or failed, or the cache needs a
 * write-back to make room), which reports errors.  ERR_PTR(-EEXIST):
 * another task published the page first; look it up again.
 */
static struct page *hbmpool_fill_nowait(struct hbmpool_region *r,
					pgoff_t index)
{
	struct hbmpool_node *node = hbmpool_chunk_of(r, index)->node;
	struct page *page;
	u64 start;

	if (!node->ops->copy_nowait || READ_ONCE(node->removed) ||
	    !hbmpool_make_room_nowait())
		return NULL;
	page = hbmpool_page_new(r, index);
	if (IS_ERR(page))
		return PTR_ERR(page) == -EEXIST ? page : NULL;
	start = ktime_get_ns();
	if (node->ops->copy_nowait(node, hbmpool_node_offset(r, index), page)) {
		hbmpool_page_abandon(r, page, NULL);
		return NULL;
	}
	hbmpool_page_fetched(r, node, page, ktime_get_ns() - start);
	get_page(page);
	return page;
}

/* ---- vm operations ---- */

static vm_fault_t hbmpool_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct hbmpool_region *r = vma->vm_file->private_data;
	bool can_retry = (vmf->flags & FAULT_FLAG_ALLOW_RETRY) &&
			 !(vmf->flags & FAULT_FLAG_RETRY_NOWAIT);
	pgoff_t index = vmf->pgoff;
	struct file *fpin;
	struct page *page;
	int err;

	if (unlikely(index >= r->nr_pages))
		return VM_FAULT_SIGBUS;
	if (!(vmf->flags & FAULT_FLAG_TRIED))
		hbmpool_count3(&r->stats, hbmpool_chunk_of(r, index)->node,
			       HBMPOOL_STAT_FAULTS, 1);
repeat:
	page = hbmpool_lookup(r, index, &err);
	if (unlikely(err))
		return VM_FAULT_SIGBUS;

	if (!page) {
		page = hbmpool_fill_nowait(r, index);
		if (IS_ERR(page))
			goto repeat;
		if (page) {
			vmf->page = page;	/* locked, referenced for the PTE */
			return VM_FAULT_LOCKED;
		}
		if (vmf->flags & FAULT_FLAG_RETRY_NOWAIT)
			return VM_FAULT_RETRY;
		if (!can_retry) {
			err = hbmpool_fill(r, index, false, false);
			if (err == -ENOMEM)
				return VM_FAULT_OOM;
			if (err && err != -EEXIST)
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
		hbmpool_fill(r, index, true, true);
		fput(fpin);
		return VM_FAULT_RETRY;
	}

	if (!test_bit(HBM_PG_UPTODATE, &page->private)) {
		/* Being fetched by another task. */
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
	if (unlikely(page->mapping != hbmpool_mapping(r) ||
		     !test_bit(HBM_PG_UPTODATE, &page->private))) {
		unlock_page(page);
		put_page(page);
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
	set_bit(HBM_PG_REFERENCED, &page->private);
	vmf->page = page;		/* our reference becomes the PTE's */
	return VM_FAULT_LOCKED;
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
	if (!test_and_set_bit(HBM_PG_DIRTY, &page->private))
		hbmpool_cache_dirty(r, 1);
	set_bit(HBM_PG_REFERENCED, &page->private);
	return VM_FAULT_LOCKED;
}

const struct vm_operations_struct hbmpool_vm_ops = {
	.fault = hbmpool_vm_fault,
	.page_mkwrite = hbmpool_vm_page_mkwrite,
};

int hbmpool_fault_init(void)
{
	hbmpool_xfer_cache = KMEM_CACHE(hbmpool_xfer, 0);
	return hbmpool_xfer_cache ? 0 : -ENOMEM;
}

void hbmpool_fault_exit(void)
{
	kmem_cache_destroy(hbmpool_xfer_cache);
}
