// SPDX-License-Identifier: GPL-2.0
/*
 * Write prediction: mapping a page writable on a read fault.
 *
 * A region's shared mapping wants write notification (page_mkwrite marks a
 * page dirty), so a read fault maps its page read-only and the first write
 * to it takes a second fault.  An application that reads a word and then
 * writes it (a counter, a hash table, most first touches of a data
 * structure) pays two faults per page, the second one only to be told what
 * was obvious.
 *
 * Two cases skip it, both only for a mapping that is shared and writable,
 * and only for the page the fault is about (fault-around maps its
 * neighbours read-only, as before, and leaves the faulting page to ->fault
 * in these cases):
 *
 *  - a page already dirty is mapped writable: marking it dirty again is all
 *    page_mkwrite would do;
 *  - a clean page is mapped writable and marked dirty when the region's
 *    recent read faults were mostly followed by a write to their page.
 *
 * The second case costs, when wrong, the write-back of a page nobody wrote
 * (the same data sent home again); never data.  The prediction is a score
 * per region, like fault-around's count of misses: a read fault that maps
 * its page read-only (->fault, or fault-around when the page was cached)
 * marks it a probe (HBM_PG_PROBE) and takes
 * HBMPOOL_WP_MISS off the score; a write to a probe (page_mkwrite finds the
 * mark) adds HBMPOOL_WP_HIT.  The score rises when more than
 * HBMPOOL_WP_MISS / HBMPOOL_WP_HIT (three quarters) of the probes are
 * written while mapped, and falls otherwise.  Above HBMPOOL_WP_ON, read
 * faults map their clean pages writable, all but one in HBMPOOL_WP_PROBE,
 * which stays a probe, so that the score follows the workload when it
 * changes.
 *
 * The score is updated without a lock by every task that faults through
 * the region, as the file's fault-around count is: racing updates may lose
 * some of each other's changes, and it stays within [0, 2 * HBMPOOL_WP_ON].
 * The write_predict module parameter turns the second case off.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/pagemap.h>
#include <linux/userfaultfd_k.h>

#include "hbmpool.h"

#define HBMPOOL_WP_ON		64U
#define HBMPOOL_WP_MISS		3U
#define HBMPOOL_WP_HIT		4U
#define HBMPOOL_WP_PROBE	8U

static bool write_predict = true;
module_param(write_predict, bool, 0644);
MODULE_PARM_DESC(write_predict,
		 "Map a clean page writable on a read fault when most recent read faults of its region were followed by a write, 1 or 0 (default 1; live value in /sys/module/hbmpool/parameters/write_predict)");

static void hbmpool_wp_add(struct hbmpool_region *r, int delta)
{
	int score = READ_ONCE(r->wp_score) + delta;

	WRITE_ONCE(r->wp_score, clamp(score, 0, 2 * (int)HBMPOOL_WP_ON));
}

/*
 * Whether a read fault maps its clean page writable now: the score says
 * writes follow, and this fault is not the one in HBMPOOL_WP_PROBE that
 * stays a probe.
 */
static bool hbmpool_wp_predicts(struct hbmpool_region *r)
{
	unsigned int n;

	if (!READ_ONCE(write_predict) ||
	    READ_ONCE(r->wp_score) <= (int)HBMPOOL_WP_ON)
		return false;
	n = READ_ONCE(r->wp_faults) + 1;
	WRITE_ONCE(r->wp_faults, n);
	return n % HBMPOOL_WP_PROBE;
}

/* A shared, writable mapping, which write notification would cost a fault. */
static bool hbmpool_wp_vma(struct vm_area_struct *vma)
{
	return (vma->vm_flags & (VM_SHARED | VM_WRITE)) == (VM_SHARED | VM_WRITE) &&
	       !userfaultfd_wp(vma);
}

/* @page (locked) is mapped read-only by a read fault: a probe. */
static void hbmpool_wp_probe(struct hbmpool_region *r, struct page *page)
{
	if (!test_and_set_bit(HBM_PG_PROBE, &page->private))
		hbmpool_wp_add(r, -(int)HBMPOOL_WP_MISS);
}

/*
 * ->map_pages, on the faulting page (locked): true when ->fault may map it
 * writable, and fault-around leaves it to ->fault; else fault-around maps
 * it read-only, and it is a probe.
 */
bool hbmpool_wp_wanted(struct vm_fault *vmf, struct hbmpool_region *r,
		       struct page *page)
{
	if (!hbmpool_wp_vma(vmf->vma))
		return false;
	if (test_bit(HBM_PG_DIRTY, &page->private) ||
	    (READ_ONCE(write_predict) &&
	     READ_ONCE(r->wp_score) > (int)HBMPOOL_WP_ON))
		return true;
	hbmpool_wp_probe(r, page);
	return false;
}

/**
 * hbmpool_wp_read_fault - decide how a read fault maps its page
 * @vmf: the fault, about to return @page with VM_FAULT_LOCKED
 * @r: the region
 * @page: the locked, up-to-date cache page at vmf->pgoff
 *
 * Either maps it writable (FAULT_FLAG_WRITE makes finish_fault() set a
 * dirty, writable PTE in a shared mapping) and marks it dirty, under the
 * page lock as page_mkwrite would; or leaves it read-only and marks it a
 * probe.  A writable PTE appears only with the page dirty under its lock,
 * as through page_mkwrite: the write-back write-protects it before its
 * snapshot, and eviction finds it dirty.
 */
void hbmpool_wp_read_fault(struct vm_fault *vmf, struct hbmpool_region *r,
			   struct page *page)
{
	VM_WARN_ON_ONCE_PAGE(!PageLocked(page), page);
	if (!hbmpool_wp_vma(vmf->vma))
		return;
	if (!test_bit(HBM_PG_DIRTY, &page->private) && !hbmpool_wp_predicts(r)) {
		hbmpool_wp_probe(r, page);
		return;
	}
	clear_bit(HBM_PG_PROBE, &page->private);
	set_page_dirty(page);
	/* never a writable PTE on a clean page (hbmpool_dirty_folio() said no) */
	if (test_bit(HBM_PG_DIRTY, &page->private))
		vmf->flags |= FAULT_FLAG_WRITE;
}

/* page_mkwrite, under the page lock: a write to a page mapped read-only. */
void hbmpool_wp_write(struct hbmpool_region *r, struct page *page)
{
	if (test_bit(HBM_PG_PROBE, &page->private) &&
	    test_and_clear_bit(HBM_PG_PROBE, &page->private))
		hbmpool_wp_add(r, HBMPOOL_WP_HIT);
}
