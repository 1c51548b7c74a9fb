// SPDX-License-Identifier: GPL-2.0
/*
 * Chunk moves: copy a chunk to a new home while its region stays mapped
 * and in use, then switch to the new copy atomically and give the old one
 * back.  Drains and rebalancing use them (hbmpoold drives them through
 * netlink's resync-new); Documentation/design.rst, "Moving and copying a
 * chunk in use", says why no write is lost.
 *
 * A move ("job") adds a SYNCING copy to the chunk's map: every write-back
 * from then on goes to it too (cache.c), reads never.  The job's work then
 * copies the chunk's pages to it through the cache, which orders the copy
 * against write-backs with locks it already has:
 *
 * - a page not cached gets a locked placeholder in the region's xarray
 *   (hbmpool_page_new()), so no fault and no write-back can touch it; it is
 *   read from the up-to-date copy, written to the target, and taken out
 *   again (hbmpool_page_abandon()): a fault that waited on it looks again;
 * - a cached, up-to-date page is snapshotted under its page lock while the
 *   job holds its HBM_PG_WRITEBACK bit, and the bit is held until the
 *   target has the snapshot: a later write-back of the page, which goes to
 *   the target too, lands after it.  Dirty pages stay dirty.
 *
 * Busy pages (being fetched, written back) are left for the next pass.
 * When every page is done, the map switches to the target alone; after a
 * grace period and once the requests that used the old map are over (the
 * chunk's page locks and write-back bits), the source is given back.  A
 * failure (target or source) or a cancel publishes the map without the
 * target and gives the target back the same way: the chunk stays where it
 * was, and pages a failed write-back left dirty go to the source alone.
 *
 * Jobs run on the unbound workqueue hbmpool-resync (max_active
 * hbmpool_resync_jobs), hold no mmap_lock, and wait for the link only in
 * their work.  hbmpool_resync_mbps rate-limits them all together.
 *
 * Locks: hbmpool_resync_lock (a mutex) protects the job table's iteration
 * and each job's region pointer; a region's maps_lock serialises map
 * replacements (a leaf, never held with hbmpool_nodes_lock or a page lock).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/highmem.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/hbmpool_nl.h>
#include <net/netlink.h>

#include "hbmpool.h"
#include "resync.h"

/* Pages one request of a move carries at most. */
#define HBMPOOL_RESYNC_RUN	64
/* Ended jobs are shown this long. */
#define HBMPOOL_RESYNC_KEEP_NS	(60ULL * NSEC_PER_SEC)
/* A pass that moved nothing waits, doubling from MIN to MAX. */
#define HBMPOOL_RESYNC_BACKOFF_MIN	(HZ / 10)
#define HBMPOOL_RESYNC_BACKOFF_MAX	(5 * HZ)

unsigned int hbmpool_resync_mbps;
unsigned int hbmpool_resync_jobs = 4;

struct hbmpool_resync {
	struct kref ref;		/* the table's, the work's, each map's */
	u32 id;
	u32 region_id;
	struct hbmpool_region *r;	/* under hbmpool_resync_lock; NULL once released */
	u32 chunk;
	u32 kind;			/* enum hbmpool_nl_resync_kind: move or replicate */
	u32 from;			/* source node id */
	u32 to;				/* target node id */
	u32 pages;
	u32 pages_done;			/* WRITE_ONCE by the work */
	u32 passes;			/* WRITE_ONCE by the work */
	atomic_t error;			/* first failure, sticky; -ECANCELED: cancel */
	u32 state;			/* enum hbmpool_resync_state, WRITE_ONCE */
	u64 start_ns;
	u64 end_ns;			/* 0 while copying */
	u64 ntf_ns;			/* last progress event */
	unsigned long *done;		/* pages copied, the work's */
	atomic_t reqs;			/* the work's requests the transport may still use */
	wait_queue_head_t wq;		/* error set, reqs dropped */
	struct work_struct work;
};

static DEFINE_MUTEX(hbmpool_resync_lock);
static DEFINE_XARRAY_ALLOC(hbmpool_resyncs);	/* id -> job */
static u32 hbmpool_resync_next_id;
static struct workqueue_struct *hbmpool_resync_wq;
static void hbmpool_resync_reap_work(struct work_struct *work);
/* forgets ended jobs once nobody asked for them in HBMPOOL_RESYNC_KEEP_NS */
static DECLARE_DELAYED_WORK(hbmpool_resync_reaper, hbmpool_resync_reap_work);

/* the token bucket all jobs share: when the next byte may go */
static DEFINE_SPINLOCK(hbmpool_resync_bw_lock);
static u64 hbmpool_resync_bw_next;

void hbmpool_resync_get_ref(struct hbmpool_resync *job)
{
	kref_get(&job->ref);
}

static void hbmpool_resync_free(struct kref *ref)
{
	struct hbmpool_resync *job = container_of(ref, struct hbmpool_resync, ref);

	bitmap_free(job->done);
	kfree(job);
}

void hbmpool_resync_put(struct hbmpool_resync *job)
{
	kref_put(&job->ref, hbmpool_resync_free);
}

/* Any context: whether the job's target must no longer be written. */
bool hbmpool_resync_failed(struct hbmpool_resync *job)
{
	return !job || atomic_read(&job->error);
}

/* Any context: the job fails with @err (the first failure sticks). */
void hbmpool_resync_fail(struct hbmpool_resync *job, int err)
{
	if (atomic_cmpxchg(&job->error, 0, err) == 0)
		wake_up_all(&job->wq);
}

/* Region release: the region's jobs find it gone at their next step. */
void hbmpool_resync_region_gone(struct hbmpool_region *r)
{
	struct hbmpool_resync *job;
	unsigned long id;

	mutex_lock(&hbmpool_resync_lock);
	xa_for_each(&hbmpool_resyncs, id, job) {
		if (job->r == r) {
			job->r = NULL;
			hbmpool_resync_fail(job, -ECANCELED);
		}
	}
	mutex_unlock(&hbmpool_resync_lock);
}

static struct hbmpool_region *hbmpool_resync_region(struct hbmpool_resync *job)
{
	struct hbmpool_region *r;

	mutex_lock(&hbmpool_resync_lock);
	r = job->r;
	if (r && !kref_get_unless_zero(&r->ref))
		r = NULL;
	mutex_unlock(&hbmpool_resync_lock);
	return r;
}

static void hbmpool_resync_snapshot(struct hbmpool_resync *job,
				    struct hbmpool_resync_info *info)
{
	u64 end = READ_ONCE(job->end_ns);

	*info = (struct hbmpool_resync_info){
		.id = job->id,
		.region_id = job->region_id,
		.chunk = job->chunk,
		.from = job->from,
		.to = job->to,
		.state = READ_ONCE(job->state),
		.pages = job->pages,
		.pages_done = READ_ONCE(job->pages_done),
		.error = READ_ONCE(job->state) == HBMPOOL_RESYNC_FAILED ?
			 -atomic_read(&job->error) : 0,
		.elapsed_ms = div_u64((end ?: ktime_get_ns()) - job->start_ns,
				      NSEC_PER_MSEC),
		.passes = READ_ONCE(job->passes),
		.kind = job->kind,
	};
}

static void hbmpool_resync_announce(struct hbmpool_resync *job)
{
	struct hbmpool_resync_info info;

	hbmpool_resync_snapshot(job, &info);
	job->ntf_ns = ktime_get_ns();
	hbmpool_event(HBMPOOL_EVENT_RESYNC_CHANGE, &info);
}

/* ---- the copy ---- */

/* A request of the work is released: the transport is done with its pages. */
static void hbmpool_resync_req_destructor(struct hbmpool_req *req)
{
	struct hbmpool_resync *job = req->private;

	if (atomic_dec_and_test(&job->reqs))
		wake_up_all(&job->wq);
	hbmpool_resync_put(job);
}

static void hbmpool_resync_end_io(struct hbmpool_req *req)
{
}

/*
 * Moves @nr pages between @pages and @node's segment at @offset and
 * waits.  The request holds the job until the transport lets go of the
 * pages: a request that timed out may still use them.
 */
static int hbmpool_resync_io(struct hbmpool_resync *job,
			     struct hbmpool_node *node, enum hbmpool_req_op op,
			     u64 offset, u32 gen, struct page **pages,
			     unsigned int nr)
{
	struct hbmpool_req *req;
	int err;

	req = hbmpool_req_alloc(node, op, offset, pages, nr, GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	req->data_gen = gen;
	req->end_io = hbmpool_resync_end_io;
	req->private = job;
	req->destructor = hbmpool_resync_req_destructor;
	atomic_inc(&job->reqs);
	hbmpool_resync_get_ref(job);
	hbmpool_req_submit(req, READ_ONCE(hbmpool_fetch_timeout_ms));
	wait_for_completion(&req->done);
	err = req->status;
	hbmpool_req_put(req);
	return err;
}

/* Waits until the transport let go of every request of the job. */
static void hbmpool_resync_wait_reqs(struct hbmpool_resync *job)
{
	wait_event(job->wq, !atomic_read(&job->reqs));
}

/* Waits until the shared budget lets @bytes go; the job's failure ends the wait. */
static void hbmpool_resync_throttle(struct hbmpool_resync *job, u64 bytes)
{
	unsigned int mbps = READ_ONCE(hbmpool_resync_mbps);
	u64 now, start;

	if (!mbps)
		return;
	spin_lock(&hbmpool_resync_bw_lock);
	now = ktime_get_ns();
	start = max(now, hbmpool_resync_bw_next);
	hbmpool_resync_bw_next = start + div_u64(bytes * NSEC_PER_SEC,
						 mbps) / (1 << 20);
	spin_unlock(&hbmpool_resync_bw_lock);
	if (start > now)
		wait_event_interruptible_timeout(job->wq, atomic_read(&job->error),
						 nsecs_to_jiffies(start - now) + 1);
}

/* What a run of a pass carries: placeholders, or snapshots of cached pages. */
struct hbmpool_resync_run {
	pgoff_t first;			/* index of the run's first page */
	unsigned int nr;
	bool cached;
	struct page *pages[HBMPOOL_RESYNC_RUN];	/* placeholders, or the cached pages */
	struct page *bounce[HBMPOOL_RESYNC_RUN];	/* snapshots of cached pages */
};

/*
 * Takes page @index for the run: a placeholder if it is not cached (or
 * cached by a fetch that failed), or a snapshot if it is cached, up to date,
 * and neither its write-back bit nor its lock is busy.  -EAGAIN: busy, or
 * of the other kind than the run so far: the run ends before it.
 */
static int hbmpool_resync_take(struct hbmpool_region *r,
			       struct hbmpool_resync_run *run, pgoff_t index)
{
	struct page *page;

	/* a piece cached whole gives way to the move's 4 KiB pages */
	hbmpool_huge_demote(r, index);
	page = hbmpool_lookup(r, index);
	/* a failed fetch's page waits for its next user: the job is one */
	if (page && !test_bit(HBM_PG_UPTODATE, &page->private) &&
	    trylock_page(page)) {
		if (hbmpool_page_abandon_failed(r, page)) {
			put_page(page);
			page = NULL;
		} else {
			unlock_page(page);
		}
	}
	if (!page) {
		if (run->nr && run->cached)
			return -EAGAIN;
		page = hbmpool_page_new(r, index, false);
		if (IS_ERR(page))
			return -EAGAIN;		/* a fetch came first, or no memory */
		run->cached = false;
		run->pages[run->nr++] = page;
		return 0;
	}
	if ((run->nr && !run->cached) ||
	    test_and_set_bit_lock(HBM_PG_WRITEBACK, &page->private)) {
		put_page(page);
		return -EAGAIN;
	}
	if (!trylock_page(page)) {
		clear_and_wake_up_bit(HBM_PG_WRITEBACK, &page->private);
		put_page(page);
		return -EAGAIN;
	}
	if (page->mapping != hbmpool_mapping(r) ||
	    !test_bit(HBM_PG_UPTODATE, &page->private)) {
		unlock_page(page);
		clear_and_wake_up_bit(HBM_PG_WRITEBACK, &page->private);
		put_page(page);
		return -EAGAIN;
	}
	if (unlikely(PageHWPoison(page))) {
		/* lost to a memory error: out, and the next take reads a copy */
		clear_and_wake_up_bit(HBM_PG_WRITEBACK, &page->private);
		hbmpool_drop_poisoned(r, page);		/* unlocks it */
		put_page(page);
		return -EAGAIN;
	}
	copy_highpage(run->bounce[run->nr], page);
	unlock_page(page);
	run->cached = true;
	run->pages[run->nr++] = page;	/* its bit and our reference held */
	return 0;
}

/*
 * Copies a run to the target.  Placeholders are read from the chunk's
 * up-to-date copy first, and taken out of the cache after.  Snapshots'
 * write-back bits are released once the transport is done with them.
 */
static int hbmpool_resync_run_io(struct hbmpool_resync *job,
				 struct hbmpool_region *r,
				 struct hbmpool_resync_run *run,
				 const struct hbmpool_copy *tgt)
{
	u64 in_chunk = hbmpool_offset_in_chunk(r, run->first);
	struct hbmpool_node *src;
	unsigned int i;
	u64 offset;
	u32 gen;
	int err = 0;

	if (!run->cached) {
		src = hbmpool_read_copy_get(r, run->first, &offset, &gen);
		err = hbmpool_resync_io(job, src, HBMPOOL_REQ_READ, offset, gen,
					run->pages, run->nr);
		hbmpool_node_put(src);
	}
	if (!err)
		err = hbmpool_resync_io(job, tgt->node, HBMPOOL_REQ_WRITE,
					tgt->offset + in_chunk, tgt->gen,
					run->cached ? run->bounce : run->pages,
					run->nr);
	if (err)
		hbmpool_resync_wait_reqs(job);	/* a timed-out one may still hold them */
	for (i = 0; i < run->nr; i++) {
		struct page *page = run->pages[i];

		if (run->cached) {
			clear_and_wake_up_bit(HBM_PG_WRITEBACK, &page->private);
			put_page(page);
		} else {
			hbmpool_page_abandon(r, page);
		}
	}
	return err;
}

/*
 * One pass over the chunk: copies every page not done yet that is not
 * busy.  *@moved: pages copied.
 */
static int hbmpool_resync_pass(struct hbmpool_resync *job,
			       struct hbmpool_region *r,
			       const struct hbmpool_copy *tgt, u32 *moved)
{
	pgoff_t base = (pgoff_t)job->chunk << (r->chunk_shift - PAGE_SHIFT);
	struct hbmpool_resync_run *run;
	unsigned long p = 0;
	unsigned int i;
	int err = 0;

	run = kzalloc(sizeof(*run), GFP_KERNEL);
	if (!run)
		return -ENOMEM;
	for (i = 0; i < HBMPOOL_RESYNC_RUN; i++) {
		run->bounce[i] = alloc_page(GFP_KERNEL);
		if (!run->bounce[i]) {
			err = -ENOMEM;
			goto out;
		}
	}
	while (!err) {
		unsigned long start;

		err = atomic_read(&job->error);
		/* the last user let go: nobody will read the move's result */
		if (!err && kref_read(&r->ref) == 1)
			err = -ECANCELED;
		if (err)
			break;
		p = find_next_zero_bit(job->done, job->pages, p);
		if (p >= job->pages)
			break;
		start = p;
		run->first = base + p;
		run->nr = 0;
		while (p < job->pages && run->nr < HBMPOOL_RESYNC_RUN &&
		       !test_bit(p, job->done) &&
		       !hbmpool_resync_take(r, run, base + p))
			p++;
		if (!run->nr) {
			p++;		/* busy: the next pass */
			continue;
		}
		hbmpool_resync_throttle(job, (u64)run->nr << PAGE_SHIFT);
		err = hbmpool_resync_run_io(job, r, run, tgt);
		if (err)
			break;
		bitmap_set(job->done, start, run->nr);
		*moved += run->nr;
		WRITE_ONCE(job->pages_done, job->pages_done + run->nr);
		if (ktime_get_ns() - job->ntf_ns > NSEC_PER_SEC)
			hbmpool_resync_announce(job);
		cond_resched();
	}
out:
	for (i = 0; i < HBMPOOL_RESYNC_RUN; i++)
		if (run->bounce[i])
			__free_page(run->bounce[i]);
	kfree(run);
	return err;
}

/*
 * After a map of chunk @job->chunk was replaced and a grace period passed:
 * waits for the requests built from the old one, which hold the page
 * locks of their fetches or the write-back bits of their pages.
 */
static void hbmpool_resync_quiesce(struct hbmpool_resync *job,
				   struct hbmpool_region *r)
{
	pgoff_t base = (pgoff_t)job->chunk << (r->chunk_shift - PAGE_SHIFT);
	unsigned long index;
	void *entry;

	xa_for_each_range(&r->pages, index, entry, base, base + job->pages - 1) {
		struct page *page = hbmpool_lookup(r, index);

		if (!page)
			continue;
		wait_on_bit(&page->private, HBM_PG_WRITEBACK, TASK_UNINTERRUPTIBLE);
		if (!test_bit(HBM_PG_UPTODATE, &page->private))
			folio_wait_locked(page_folio(page));
		put_page(page);
		cond_resched();
	}
	hbmpool_resync_wait_reqs(job);
}

/*
 * Replaces the chunk's map by one without copy @drop (the source after a
 * copy, the target after a failure), the target up to date if @done; the
 * dropped copy's chunk is given back once nothing uses it.  -ESTALE: the
 * map is no longer the job's (it failed meanwhile; @done only).
 */
static int hbmpool_resync_replace(struct hbmpool_resync *job,
				  struct hbmpool_region *r, bool done)
{
	struct hbmpool_chunk_map *old, *new;
	unsigned long drop = 0;		/* bit c: copy c goes */
	u32 c, n = 0;

	mutex_lock(&r->maps_lock);
	old = rcu_dereference_protected(r->chunks[job->chunk].map,
					lockdep_is_held(&r->maps_lock));
	if (old->job != job || (done && atomic_read(&job->error))) {
		mutex_unlock(&r->maps_lock);
		return -ESTALE;
	}
	if (done && job->kind == HBMPOOL_RESYNC_KIND_REPLICATE) {
		struct hbmpool_rcopy rc[HBMPOOL_MAX_COPIES];

		/* the copies that are not good go: the target replaces them */
		hbmpool_map_rcopies(old, rc);
		drop = hbmpool_replica_discard(rc, old->nr_copies);
	} else {
		for (c = 0; c < old->nr_copies; c++) {
			bool syncing = old->copies[c].state == HBMPOOL_COPY_SYNCING;

			if (done ? (!syncing && old->copies[c].node->id == job->from) :
			    syncing)
				drop = BIT(c);
		}
		if (WARN_ON_ONCE(!drop)) {
			mutex_unlock(&r->maps_lock);
			return -ENOMEM;
		}
	}
	new = hbmpool_map_alloc(old->nr_copies - hweight_long(drop), old->gen + 1);
	if (!new) {
		mutex_unlock(&r->maps_lock);
		return -ENOMEM;
	}
	/* a move's target takes the source's place; a new replica goes last */
	for (c = 0; c < old->nr_copies; c++) {
		struct hbmpool_copy *cp = &new->copies[n];

		if (drop & BIT(c))
			continue;
		*cp = old->copies[c];
		if (cp->state == HBMPOOL_COPY_SYNCING) {
			if (n && job->kind == HBMPOOL_RESYNC_KIND_MOVE) {
				swap(new->copies[0], *cp);
				cp = &new->copies[0];
			}
			cp->state = HBMPOOL_COPY_UPTODATE;
		}
		hbmpool_node_get(cp->node);
		n++;
	}
	rcu_assign_pointer(r->chunks[job->chunk].map, new);
	mutex_unlock(&r->maps_lock);

	synchronize_rcu();
	hbmpool_resync_quiesce(job, r);
	hbmpool_map_free(r, job->chunk, old, drop);
	return 0;
}

static void hbmpool_resync_end(struct hbmpool_resync *job, int err)
{
	u32 state = HBMPOOL_RESYNC_DONE;

	if (err == -ECANCELED)
		state = HBMPOOL_RESYNC_CANCELLED;
	else if (err)
		state = HBMPOOL_RESYNC_FAILED;
	if (err)
		atomic_cmpxchg(&job->error, 0, err);
	WRITE_ONCE(job->end_ns, ktime_get_ns());
	WRITE_ONCE(job->state, state);
	if (state == HBMPOOL_RESYNC_FAILED)
		pr_warn("%s %u (region %u chunk %u, node %u -> %u) failed: %d\n",
			job->kind == HBMPOOL_RESYNC_KIND_MOVE ? "move" : "replication",
			job->id, job->region_id, job->chunk, job->from, job->to,
			atomic_read(&job->error));
	hbmpool_resync_announce(job);
	hbmpool_replicate_kick();	/* the chunk's health changed, or a slot is free */
	bitmap_free(job->done);		/* only the work used it */
	job->done = NULL;
	mod_delayed_work(system_wq, &hbmpool_resync_reaper,
			 nsecs_to_jiffies(HBMPOOL_RESYNC_KEEP_NS) + HZ);
}

static void hbmpool_resync_work(struct work_struct *work)
{
	struct hbmpool_resync *job = container_of(work, struct hbmpool_resync, work);
	unsigned long backoff = HBMPOOL_RESYNC_BACKOFF_MIN;
	struct hbmpool_region *r;
	struct hbmpool_copy tgt;
	int err;

	for (;;) {
		const struct hbmpool_chunk_map *map;
		u32 c, moved = 0;

		r = hbmpool_resync_region(job);
		if (!r) {
			err = -ECANCELED;	/* released: unplace freed the target */
			break;
		}
		rcu_read_lock();
		map = rcu_dereference(r->chunks[job->chunk].map);
		memset(&tgt, 0, sizeof(tgt));
		for (c = 0; map->job == job && c < map->nr_copies; c++)
			if (map->copies[c].state == HBMPOOL_COPY_SYNCING)
				tgt = map->copies[c];
		if (tgt.node)
			hbmpool_node_get(tgt.node);
		rcu_read_unlock();
		err = tgt.node ? hbmpool_resync_pass(job, r, &tgt, &moved) : -ESTALE;
		WRITE_ONCE(job->passes, job->passes + 1);
		if (!err && bitmap_full(job->done, job->pages))
			err = hbmpool_resync_replace(job, r, true) ?: 1;
		if (err < 0 && err != -ESTALE)
			hbmpool_resync_fail(job, err);
		/* the back-off before a scan can find the chunk without the job */
		if (err < 0 && job->kind == HBMPOOL_RESYNC_KIND_REPLICATE)
			hbmpool_replicate_failed(r, job->chunk);
		if (err < 0)
			hbmpool_resync_replace(job, r, false);
		if (tgt.node)
			hbmpool_node_put(tgt.node);
		hbmpool_region_put(r);
		if (err)
			break;
		if (moved) {
			backoff = HBMPOOL_RESYNC_BACKOFF_MIN;
			continue;
		}
		/* every page left was busy: let the fetches and write-backs finish */
		wait_event_interruptible_timeout(job->wq, atomic_read(&job->error),
						 backoff);
		backoff = min(2 * backoff, (unsigned long)HBMPOOL_RESYNC_BACKOFF_MAX);
	}
	hbmpool_resync_end(job, err > 0 ? 0 : atomic_read(&job->error) ?: err);
	hbmpool_resync_put(job);	/* the work's */
}

/* ---- the control plane ---- */

/*
 * Forgets jobs that ended more than HBMPOOL_RESYNC_KEEP_NS ago.  A job's
 * work sets its end without this lock, so a job may end after @now was
 * read: the comparison is signed, and such a job is not old (unsigned, its
 * negative age wrapped and it was forgotten the moment it ended).
 */
static void hbmpool_resync_reap(void)
{
	struct hbmpool_resync *job;
	u64 now = ktime_get_ns();
	unsigned long id;

	mutex_lock(&hbmpool_resync_lock);
	xa_for_each(&hbmpool_resyncs, id, job) {
		u64 end = READ_ONCE(job->end_ns);

		if (end && (s64)(now - end) > (s64)HBMPOOL_RESYNC_KEEP_NS) {
			xa_erase(&hbmpool_resyncs, id);
			hbmpool_resync_put(job);
		}
	}
	mutex_unlock(&hbmpool_resync_lock);
}

/*
 * Starts a job of @kind on chunk @chunk of @r, whose map was @old at
 * generation @map_gen when the caller checked it (compared, not read: it
 * may be gone): places the target (@to, or placement's choice), publishes
 * the map with it SYNCING, and queues the work.  -EBUSY: the map changed.
 */
static int hbmpool_resync_start(struct hbmpool_region *r, u32 chunk, u32 kind,
				u32 from, u32 to,
				const struct hbmpool_chunk_map *old, u32 map_gen,
				struct hbmpool_resync_info *info,
				struct netlink_ext_ack *extack)
{
	struct hbmpool_chunk_map *cur, *new = NULL;
	struct hbmpool_resync *job = NULL;
	struct hbmpool_node *node;
	const char *why;
	u32 c, gen, old_nr;
	u64 offset;
	int err;

	mutex_lock(&r->maps_lock);
	cur = rcu_dereference_protected(r->chunks[chunk].map,
					lockdep_is_held(&r->maps_lock));
	old_nr = cur->nr_copies;
	err = cur != old || cur->gen != map_gen ? -EBUSY : 0;
	mutex_unlock(&r->maps_lock);
	if (err) {
		NL_SET_ERR_MSG(extack, "the chunk is being moved");
		return err;
	}
	node = hbmpool_place_copy(r, chunk, to,
				  kind == HBMPOOL_RESYNC_KIND_MOVE ? from : U32_MAX,
				  &offset, &gen, &why);
	if (IS_ERR(node)) {
		err = PTR_ERR(node);
		if (extack)
			extack->_msg = why;	/* a string literal of hbmpool_place_copy() */
		return err;
	}
	err = -ENOMEM;
	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		goto out_free_chunk;
	job->pages = hbmpool_chunk_len(r, chunk) >> PAGE_SHIFT;
	job->done = bitmap_zalloc(job->pages, GFP_KERNEL);
	new = hbmpool_map_alloc(old_nr + 1, map_gen + 1);
	if (!job->done || !new)
		goto out_free_chunk;
	kref_init(&job->ref);		/* the table's */
	job->region_id = r->id;
	job->r = r;
	job->chunk = chunk;
	job->kind = kind;
	job->from = from;
	job->to = node->id;
	job->start_ns = ktime_get_ns();
	atomic_set(&job->error, 0);
	atomic_set(&job->reqs, 0);
	init_waitqueue_head(&job->wq);
	INIT_WORK(&job->work, hbmpool_resync_work);

	mutex_lock(&hbmpool_resync_lock);
	err = xa_alloc_cyclic(&hbmpool_resyncs, &job->id, job,
			      XA_LIMIT(1, U32_MAX), &hbmpool_resync_next_id,
			      GFP_KERNEL);
	mutex_unlock(&hbmpool_resync_lock);
	if (err < 0)
		goto out_free_chunk;

	mutex_lock(&r->maps_lock);
	cur = rcu_dereference_protected(r->chunks[chunk].map,
					lockdep_is_held(&r->maps_lock));
	if (cur != old || cur->gen != map_gen || cur->nr_copies != old_nr) {
		/* another move came first, or a copy changed */
		mutex_unlock(&r->maps_lock);
		mutex_lock(&hbmpool_resync_lock);
		xa_erase(&hbmpool_resyncs, job->id);
		mutex_unlock(&hbmpool_resync_lock);
		err = -EBUSY;
		NL_SET_ERR_MSG(extack, "the chunk is being moved");
		goto out_free_chunk;
	}
	for (c = 0; c < cur->nr_copies; c++) {
		new->copies[c] = cur->copies[c];
		hbmpool_node_get(new->copies[c].node);
	}
	new->copies[c] = (struct hbmpool_copy){
		.node = node,		/* place_copy's reference */
		.offset = offset,
		.gen = gen,
		.state = HBMPOOL_COPY_SYNCING,
	};
	new->job = job;
	kref_get(&job->ref);		/* the map's */
	rcu_assign_pointer(r->chunks[chunk].map, new);
	mutex_unlock(&r->maps_lock);

	kref_get(&job->ref);		/* the work's */
	hbmpool_resync_snapshot(job, info);
	hbmpool_resync_announce(job);
	queue_work(hbmpool_resync_wq, &job->work);
	pr_info("%s %u: region %u chunk %u, node %u -> %u\n",
		kind == HBMPOOL_RESYNC_KIND_MOVE ? "move" : "replication",
		job->id, r->id, chunk, from, job->to);
	synchronize_rcu();
	hbmpool_map_free(r, chunk, cur, 0);
	return 0;

out_free_chunk:
	if (node->transport->ops->free_chunks && gen == hbmpool_node_data_gen(node))
		node->transport->ops->free_chunks(node, offset,
						  hbmpool_chunk_len(r, chunk), gen);
	hbmpool_node_put(node);
	kfree(new);
	if (job) {
		bitmap_free(job->done);
		kfree(job);
	}
	return err;
}

/**
 * hbmpool_resync_new - start moving chunk @chunk of region @region_id
 * @region_id: the region
 * @chunk: its chunk
 * @from: the node of the chunk's up-to-date copy, or HBMPOOL_RESYNC_NONE
 * @to: the target, or HBMPOOL_RESYNC_NONE: placement chooses
 * @info: set to the new move
 * @extack: the refusal's reason
 *
 * Return: 0, -ENOENT (no such region or chunk), -EBUSY (the chunk is being
 * moved), -ENODATA (the chunk is lost), -EINVAL, -EEXIST, -ENODEV, -ENOSPC
 * (hbmpool_place_copy()), -ENOMEM.
 */
int hbmpool_resync_new(u32 region_id, u32 chunk, u32 from, u32 to,
		       struct hbmpool_resync_info *info,
		       struct netlink_ext_ack *extack)
{
	/* old: compared, not read, after maps_lock is dropped */
	struct hbmpool_chunk_map *old;
	struct hbmpool_region *r;
	u32 c, src, map_gen, nr_copies;
	bool busy, lost = false;
	int err;

	hbmpool_resync_reap();
	r = hbmpool_region_find(region_id);
	if (!r) {
		NL_SET_ERR_MSG(extack, "no such region");
		return -ENOENT;
	}
	err = -ENOENT;
	if (!r->placed || chunk >= r->nr_chunks) {
		NL_SET_ERR_MSG(extack, "no such chunk in the region");
		goto out_put;
	}
	/* what the map says now; checked again before it is replaced */
	mutex_lock(&r->maps_lock);
	old = rcu_dereference_protected(r->chunks[chunk].map,
					lockdep_is_held(&r->maps_lock));
	for (c = 0; c < old->nr_copies; c++)
		if (old->copies[c].state == HBMPOOL_COPY_UPTODATE &&
		    (from == HBMPOOL_RESYNC_NONE || old->copies[c].node->id == from))
			break;
	src = c;
	map_gen = old->gen;
	nr_copies = old->nr_copies;
	busy = old->job;
	if (src < nr_copies) {
		from = old->copies[src].node->id;
		lost = old->copies[src].gen !=
		       hbmpool_node_data_gen(old->copies[src].node);
	}
	mutex_unlock(&r->maps_lock);
	err = -EBUSY;
	if (busy) {
		NL_SET_ERR_MSG(extack, "the chunk is being moved");
		goto out_put;
	}
	err = -EINVAL;
	if (src >= nr_copies) {
		NL_SET_ERR_MSG(extack, "from-node-id does not hold the chunk's up-to-date copy");
		goto out_put;
	}
	if (lost) {
		err = -ENODATA;
		NL_SET_ERR_MSG(extack, "the chunk is lost: its home lost the memory that held it");
		goto out_put;
	}
	if (from == HBMPOOL_RESYNC_NONE && nr_copies > 1) {
		NL_SET_ERR_MSG(extack, "the chunk has several copies: from-node-id is needed");
		goto out_put;
	}
	if (nr_copies >= HBMPOOL_MAX_COPIES) {
		NL_SET_ERR_MSG(extack, "the chunk has the most copies it may have");
		goto out_put;
	}
	if (from == to) {
		err = -EEXIST;
		NL_SET_ERR_MSG(extack, "the target already holds the chunk");
		goto out_put;
	}

	err = hbmpool_resync_start(r, chunk, HBMPOOL_RESYNC_KIND_MOVE, from, to,
				   old, map_gen, info, extack);
out_put:
	hbmpool_region_put(r);
	return err;
}

/**
 * hbmpool_resync_replicate - start filling one more copy of a chunk
 * @r: the region (referenced by the caller)
 * @chunk: a chunk of @r that wants a copy (hbmpool_replica_wants_copy())
 *
 * For the re-replication scanner (replication.c): the target is chosen by
 * placement among the eligible nodes of the region's set; the good copies
 * stay, and those that are not good go when the target is full.
 * Return: 0, -EBUSY (a job holds the chunk, or it wants no copy any more),
 * -ENODATA (no good copy whose home takes requests), -ENOSPC/-ENODEV (no
 * target), -ENOMEM.
 */
int hbmpool_resync_replicate(struct hbmpool_region *r, u32 chunk)
{
	struct hbmpool_rcopy rc[HBMPOOL_MAX_COPIES];
	struct hbmpool_resync_info info;
	struct hbmpool_chunk_map *old;
	u32 map_gen, from = 0;
	bool wants;
	int src;

	mutex_lock(&r->maps_lock);
	old = rcu_dereference_protected(r->chunks[chunk].map,
					lockdep_is_held(&r->maps_lock));
	hbmpool_map_rcopies(old, rc);
	src = hbmpool_replica_source(rc, old->nr_copies);
	wants = !old->job && old->nr_copies < HBMPOOL_MAX_COPIES &&
		hbmpool_replica_wants_copy(rc, old->nr_copies, r->replicas);
	if (src >= 0)
		from = old->copies[src].node->id;
	map_gen = old->gen;
	mutex_unlock(&r->maps_lock);
	if (src < 0)
		return -ENODATA;
	if (!wants)
		return -EBUSY;
	return hbmpool_resync_start(r, chunk, HBMPOOL_RESYNC_KIND_REPLICATE, from,
				    HBMPOOL_RESYNC_NONE, old, map_gen, &info, NULL);
}

static void hbmpool_resync_reap_work(struct work_struct *work)
{
	hbmpool_resync_reap();
}

int hbmpool_resync_get(u32 id, struct hbmpool_resync_info *info)
{
	struct hbmpool_resync *job;
	int err = -ENOENT;

	hbmpool_resync_reap();
	mutex_lock(&hbmpool_resync_lock);
	job = xa_load(&hbmpool_resyncs, id);
	if (job) {
		hbmpool_resync_snapshot(job, info);
		err = 0;
	}
	mutex_unlock(&hbmpool_resync_lock);
	return err;
}

/* For a dump: the first job at or after *@id; -ENOENT when none is left. */
int hbmpool_resync_get_next(unsigned long *id, struct hbmpool_resync_info *info)
{
	struct hbmpool_resync *job;
	int err = -ENOENT;

	if (!*id)
		hbmpool_resync_reap();
	mutex_lock(&hbmpool_resync_lock);
	job = xa_find(&hbmpool_resyncs, id, U32_MAX, XA_PRESENT);
	if (job) {
		hbmpool_resync_snapshot(job, info);
		err = 0;
	}
	mutex_unlock(&hbmpool_resync_lock);
	return err;
}

/*
 * Cancels a move that is copying (it ends cancelled, the chunk where it
 * was), or forgets one that ended.  -ENOENT: no such move.
 */
int hbmpool_resync_del(u32 id, struct netlink_ext_ack *extack)
{
	struct hbmpool_resync *job;
	int err = 0;

	mutex_lock(&hbmpool_resync_lock);
	job = xa_load(&hbmpool_resyncs, id);
	if (!job) {
		NL_SET_ERR_MSG(extack, "no such move");
		err = -ENOENT;
	} else if (READ_ONCE(job->state) == HBMPOOL_RESYNC_COPYING) {
		hbmpool_resync_fail(job, -ECANCELED);
	} else {
		xa_erase(&hbmpool_resyncs, id);
		hbmpool_resync_put(job);
	}
	mutex_unlock(&hbmpool_resync_lock);
	return err;
}

void hbmpool_resync_set_jobs(unsigned int jobs)
{
	WRITE_ONCE(hbmpool_resync_jobs, jobs);
	workqueue_set_max_active(hbmpool_resync_wq, jobs);
}

int hbmpool_resync_init(void)
{
	hbmpool_resync_wq = alloc_workqueue("hbmpool-resync", WQ_UNBOUND,
					    hbmpool_resync_jobs);
	return hbmpool_resync_wq ? 0 : -ENOMEM;
}

/* Every region is gone: jobs still queued end cancelled; the records go. */
void hbmpool_resync_exit(void)
{
	struct hbmpool_resync *job;
	unsigned long id;

	destroy_workqueue(hbmpool_resync_wq);	/* drains it */
	cancel_delayed_work_sync(&hbmpool_resync_reaper);
	xa_for_each(&hbmpool_resyncs, id, job) {
		xa_erase(&hbmpool_resyncs, id);
		hbmpool_resync_put(job);
	}
	xa_destroy(&hbmpool_resyncs);
}
