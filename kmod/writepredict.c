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
 * marks it a probe (HBM_PG_PROBE) and, if it was not one already, takes
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
#include <linux/percpu.h>
#include <linux/userfaultfd_k.h>

#include "hbmpool.h"

#define HBMPOOL_WP_ON		64
#define HBMPOOL_WP_MISS		3
#define HBMPOOL_WP_HIT		4
#define HBMPOOL_WP_PROBE	8

static bool write_predict = true;
module_param(write_predict, bool, 0644);
MODULE_PARM_DESC(write_predict,
		 "Map clean pages writable, and dirty, on read faults when more than three quarters of recent read faults of their region were followed by a write to their page, 1 or 0 (default 1; live value in /sys/module/hbmpool/parameters/write_predict)");

/* Read faults predicted on this CPU: one in HBMPOOL_WP_PROBE stays a probe. */
static DEFINE_PER_CPU(unsigned int, hbmpool_wp_seq);

static void hbmpool_wp_add(struct hbmpool_region *r, int delta)
{
	int score = READ_ONCE(r->wp_score) + delta;

	WRITE_ONCE(r->wp_score, clamp(score, 0, 2 * HBMPOOL_WP_ON));
}

static bool hbmpool_wp_on(struct hbmpool_region *r)
{
	return READ_ONCE(write_predict) && READ_ONCE(r->wp_score) > HBMPOOL_WP_ON;
}

/*
 * A fault the prediction is for: a user-space access of the process's own
 * mapping.  Not get_user_pages() without FOLL_WRITE (process_vm_readv(),
 * O_DIRECT from the mapping, /proc/PID/mem) nor MAP_POPULATE or
 * MADV_POPULATE_READ, which read and do not mean to dirty.
 */
static bool hbmpool_wp_user(struct vm_fault *vmf)
{
	return (vmf->flags & (FAULT_FLAG_USER | FAULT_FLAG_REMOTE)) == FAULT_FLAG_USER;
}

/*
 * A shared, writable mapping, which write notification would cost a fault.
 * (userfaultfd in 6.1 registers anonymous, shmem and hugetlb VMAs only, so
 * its write protection never applies to a region's; a writable PTE would
 * defeat it if it did.)
 */
static bool hbmpool_wp_vma(struct vm_area_struct *vma)
{
	return (vma->vm_flags & (VM_SHARED | VM_WRITE)) == (VM_SHARED | VM_WRITE) &&
	       !userfaultfd_wp(vma);
}

/* @page (locked) is mapped read-only by a user read fault: a probe. */
static void hbmpool_wp_probe(struct vm_fault *vmf, struct hbmpool_region *r,
			     struct page *page)
{
	/* once until written or out of the cache: ->map_pages may have charged it */
	if (hbmpool_wp_user(vmf) &&
	    !test_and_set_bit(HBM_PG_PROBE, &page->private))
		hbmpool_wp_add(r, -HBMPOOL_WP_MISS);
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
	    (hbmpool_wp_user(vmf) && hbmpool_wp_on(r)))
		return true;
	hbmpool_wp_probe(vmf, r, page);
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
 * page lock as page_mkwrite would; or leaves it read-only and, for a user
 * fault, marks it a probe.  A writable PTE appears only with the page dirty
 * under its lock, as through page_mkwrite: the write-back write-protects it
 * before its snapshot, and eviction finds it dirty.
 */
void hbmpool_wp_read_fault(struct vm_fault *vmf, struct hbmpool_region *r,
			   struct page *page)
{
	VM_WARN_ON_ONCE_PAGE(!PageLocked(page), page);
	if (!hbmpool_wp_vma(vmf->vma) || PageHWPoison(page))
		return;
	if (!test_bit(HBM_PG_DIRTY, &page->private)) {
		if (!hbmpool_wp_user(vmf) || !hbmpool_wp_on(r) ||
		    !(this_cpu_inc_return(hbmpool_wp_seq) % HBMPOOL_WP_PROBE)) {
			hbmpool_wp_probe(vmf, r, page);
			return;
		}
		set_page_dirty(page);
	}
	clear_bit(HBM_PG_PROBE, &page->private);
	/* never a writable PTE on a clean page (hbmpool_dirty_folio() said no) */
	if (test_bit(HBM_PG_DIRTY, &page->private))
		vmf->flags |= FAULT_FLAG_WRITE;
}

/*
 * page_mkwrite, under the page lock: a write to a page.  A probe written
 * through the read-only PTE its read fault set (a write-protect fault:
 * the PTE is present) counts; a write that faults on no PTE (the page was
 * unmapped since) only clears the mark.
 */
void hbmpool_wp_write(struct vm_fault *vmf, struct hbmpool_region *r,
		      struct page *page)
{
	if (test_bit(HBM_PG_PROBE, &page->private) &&
	    test_and_clear_bit(HBM_PG_PROBE, &page->private) &&
	    pte_present(vmf->orig_pte))
		hbmpool_wp_add(r, HBMPOOL_WP_HIT);
}
