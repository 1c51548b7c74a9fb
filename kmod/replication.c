// SPDX-License-Identifier: GPL-2.0
/*
 * Replicated regions, the kernel side of replica.c's logic: copies that
 * missed a write become outdated, and chunks with fewer good copies than
 * their region's replicas get new ones.
 *
 * A write-back that some up-to-date copies missed, while others took it,
 * marks the missing ones outdated (hbmpool_map_outdate()) before the
 * pages' write-back bits go: once the pages may be evicted and fetched
 * again, no fetch reads them from a copy that lacks them.
 *
 * Re-replication: the scanner (hbmpool_replicate_kick()) walks every
 * region; a chunk that wants a copy (hbmpool_replica_wants_copy(): at
 * least one good copy, fewer than replicas, none being filled) and has a
 * reachable good copy to read from gets a resync job of kind replicate,
 * whose target placement chooses among the eligible nodes of the region's
 * set (not holding a good copy, not sharing a failure domain with one):
 * successive chunks spread over the survivors under the region's policy,
 * and the jobs share the resync workqueue (resync-jobs at a time) and its
 * bandwidth limit (resync-mbps).  When the target is full, the copies that
 * are not good are dropped.  The scanner runs when something changed (a
 * copy outdated, a home lost its memory or was fenced, a link came up, a
 * job ended) and again every second while chunks wait.  A chunk whose
 * replicate jobs failed waits before the next one, from 1 s doubling to
 * 32 s (a source that answers nothing fails each job only after the fetch
 * timeout; one that refuses would fail them in a loop).  It announces
 * regions whose degraded or lost chunk counts changed (region-change-ntf,
 * at most once a second per region).
 *
 * Locks: hbmpool_replicate_lock (a spinlock) protects the stopped flag
 * against kicks racing module exit; a region's maps_lock serialises the
 * replacement of its maps.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "hbmpool.h"
#include "resync.h"

/* A chunk's replicate job failed: the next one waits 1 s, doubling up to 32 s. */
#define HBMPOOL_REPLICATE_BACKOFF_SHIFT	5

/* Jobs one scan starts at most: the rest waits for the next scan. */
#define HBMPOOL_REPLICATE_BATCH		64
/* A scan that left chunks waiting runs again after this. */
#define HBMPOOL_REPLICATE_RESCAN	HZ

static void hbmpool_replicate_scan(struct work_struct *work);
static DECLARE_DELAYED_WORK(hbmpool_replicate_work, hbmpool_replicate_scan);
static DEFINE_SPINLOCK(hbmpool_replicate_lock);
static bool hbmpool_replicate_stopped;
/* runs write-backs' hbmpool_map_outdate(): it must progress under memory pressure */
struct workqueue_struct *hbmpool_outdate_wq;

static void hbmpool_replicate_arm(unsigned long delay)
{
	unsigned long flags;

	spin_lock_irqsave(&hbmpool_replicate_lock, flags);
	if (!hbmpool_replicate_stopped) {
		if (delay)
			queue_delayed_work(system_unbound_wq, &hbmpool_replicate_work, delay);
		else
			mod_delayed_work(system_unbound_wq, &hbmpool_replicate_work, 0);
	}
	spin_unlock_irqrestore(&hbmpool_replicate_lock, flags);
}

/* Something changed the health of chunks: scan now.  Any context. */
void hbmpool_replicate_kick(void)
{
	hbmpool_replicate_arm(0);
}

/**
 * hbmpool_map_outdate - mark copies that missed a write outdated
 * @r: the region
 * @i: the chunk
 * @ids: the copies a write-back went to
 * @missed: bit c set: copy @ids[c] missed it
 *
 * Replaces chunk @i's map by one in which those copies, if still up to
 * date, are outdated, and waits until no reader has the old map.  Process
 * context; takes @r's maps_lock.  Return: 0, or -ENOMEM (nothing marked).
 */
int hbmpool_map_outdate(struct hbmpool_region *r, u32 i,
			const struct hbmpool_copy_id *ids, unsigned long missed)
{
	struct hbmpool_chunk_map *old, *new;
	unsigned int b;
	bool changed = false;
	u32 c;

	might_sleep();
	mutex_lock(&r->maps_lock);
	old = rcu_dereference_protected(r->chunks[i].map,
					lockdep_is_held(&r->maps_lock));
	new = hbmpool_map_alloc(old->nr_copies, old->gen + 1);
	if (!new) {
		mutex_unlock(&r->maps_lock);
		return -ENOMEM;
	}
	for (c = 0; c < old->nr_copies; c++) {
		struct hbmpool_copy *cp = &new->copies[c];

		*cp = old->copies[c];
		hbmpool_node_get(cp->node);
		if (cp->state != HBMPOOL_COPY_UPTODATE)
			continue;
		for_each_set_bit(b, &missed, HBMPOOL_MAX_COPIES) {
			if (ids[b].node_id == cp->node->id && ids[b].gen == cp->gen &&
			    ids[b].offset == cp->offset) {
				cp->state = HBMPOOL_COPY_OUTDATED;
				changed = true;
				pr_warn_ratelimited("region %u chunk %u: the copy on node %u missed a write: outdated\n",
						    r->id, i, cp->node->id);
			}
		}
	}
	if (!changed) {
		mutex_unlock(&r->maps_lock);
		hbmpool_map_free(r, i, new, 0);
		return 0;
	}
	new->job = old->job;
	if (new->job)
		hbmpool_resync_get_ref(new->job);
	rcu_assign_pointer(r->chunks[i].map, new);
	mutex_unlock(&r->maps_lock);
	synchronize_rcu();
	hbmpool_map_free(r, i, old, 0);
	hbmpool_replicate_kick();
	return 0;
}

/**
 * hbmpool_replicate_failed - a replicate job of chunk @i of @r failed
 * @r: the region
 * @i: the chunk
 *
 * Delays the chunk's next job (the back-off); called before the map
 * without the job is published, so that no scan starts one sooner.
 * Process context, by the job's work (one job per chunk at a time).
 */
void hbmpool_replicate_failed(struct hbmpool_region *r, u32 i)
{
	struct hbmpool_chunk *ch = &r->chunks[i];
	unsigned int n = READ_ONCE(ch->failures) + 1;

	WRITE_ONCE(ch->failures, n);
	n = min(n - 1, (unsigned int)HBMPOOL_REPLICATE_BACKOFF_SHIFT);
	WRITE_ONCE(ch->retry_at, jiffies + (HZ << n));
}

/*
 * Whether chunk @i of @r wants a new copy: hbmpool_replica_wants_copy(),
 * with a good copy to read it from (hbmpool_replica_source()).  *@later:
 * it does, but waits for its back-off.  A chunk with all its copies
 * forgets its back-off.
 */
static bool hbmpool_chunk_wants_copy(struct hbmpool_region *r, u32 i,
				     u32 *good, bool *later)
{
	struct hbmpool_rcopy rc[HBMPOOL_MAX_COPIES];
	struct hbmpool_chunk *ch = &r->chunks[i];
	const struct hbmpool_chunk_map *map;
	unsigned long retry_at;
	bool wants;

	rcu_read_lock();
	map = rcu_dereference(ch->map);
	hbmpool_map_rcopies(map, rc);
	*good = hbmpool_replica_good(rc, map->nr_copies);
	wants = hbmpool_replica_wants_copy(rc, map->nr_copies, r->replicas) &&
		!map->job && map->nr_copies < HBMPOOL_MAX_COPIES &&
		hbmpool_replica_source(rc, map->nr_copies) >= 0;
	rcu_read_unlock();
	retry_at = READ_ONCE(ch->retry_at);
	*later = wants && retry_at && time_before(jiffies, retry_at);
	if (retry_at && *good >= r->replicas) {
		/* a job's failure is written before its map goes: none runs */
		WRITE_ONCE(ch->retry_at, 0);
		WRITE_ONCE(ch->failures, 0);
	}
	return wants && !*later;
}

/*
 * Scans @r: starts jobs for chunks that want a copy, up to *@budget, and
 * announces the region if its degraded or lost counts changed.  Return:
 * whether chunks are left waiting.
 */
static bool hbmpool_replicate_region(struct hbmpool_region *r, int *budget)
{
	u32 i, good, degraded = 0, lost = 0;
	bool waiting = false;
	int err;

	for (i = 0; r->placed && i < r->nr_chunks; i++) {
		bool later, wants = hbmpool_chunk_wants_copy(r, i, &good, &later);

		lost += !good;
		degraded += good < r->replicas;
		waiting |= later;
		if (!wants)
			continue;
		if (*budget <= 0) {
			waiting = true;
			continue;
		}
		err = hbmpool_resync_replicate(r, i);
		if (!err)
			(*budget)--;
		else if (err != -EBUSY)
			waiting = true;	/* no target yet, or no memory */
		if (!(i % 256))
			cond_resched();
	}
	if (r->placed && (degraded != READ_ONCE(r->ntf_degraded) ||
			  lost != READ_ONCE(r->ntf_lost))) {
		/* at most once a second per region: the next scan says the rest */
		if (r->ntf_at && time_before(jiffies, r->ntf_at + HZ))
			return true;
		WRITE_ONCE(r->ntf_degraded, degraded);
		WRITE_ONCE(r->ntf_lost, lost);
		r->ntf_at = jiffies;
		hbmpool_event(HBMPOOL_EVENT_REGION_CHANGE, r);
	}
	return waiting;
}

static void hbmpool_replicate_scan(struct work_struct *work)
{
	struct hbmpool_region **regions;
	int budget = HBMPOOL_REPLICATE_BATCH;
	bool waiting = false;
	unsigned long k, n;

	regions = hbmpool_regions_get_all(&n);
	for (k = 0; regions && k < n; k++) {
		waiting |= hbmpool_replicate_region(regions[k], &budget);
		hbmpool_region_put(regions[k]);
		cond_resched();
	}
	kvfree(regions);
	if (waiting)
		hbmpool_replicate_arm(HBMPOOL_REPLICATE_RESCAN);
}

/* Module exit, before the resync jobs go: no scan starts any more. */
void hbmpool_replicate_stop(void)
{
	unsigned long flags;

	spin_lock_irqsave(&hbmpool_replicate_lock, flags);
	hbmpool_replicate_stopped = true;
	spin_unlock_irqrestore(&hbmpool_replicate_lock, flags);
	cancel_delayed_work_sync(&hbmpool_replicate_work);
}

int hbmpool_replication_init(void)
{
	hbmpool_outdate_wq = alloc_workqueue("hbmpool-outdate",
					     WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	return hbmpool_outdate_wq ? 0 : -ENOMEM;
}

/* Module exit, once no request is left: the last outdate works are done. */
void hbmpool_replication_exit(void)
{
	destroy_workqueue(hbmpool_outdate_wq);
}
