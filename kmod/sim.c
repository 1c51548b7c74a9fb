// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated fabric: a remote node whose "HBM" is RAM of this machine,
 * reached through the same transport ops as a real link, with debugfs knobs
 * for latency, a bandwidth cap, hangs and link loss (failures are the
 * core's knobs, for every transport).
 *
 * This is a fake device: the HBM is sparse (a page is allocated on its first
 * write-back, unwritten HBM reads as zeros), and a "transfer" is a memcpy,
 * done inline when no latency or bandwidth cap is set and from a workqueue
 * otherwise.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/highmem.h>
#include <linux/ktime.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "hbmpool.h"
#include "segment.h"

#define SIM_LATENCY_MAX_US	1000000U
#define SIM_BANDWIDTH_MAX_MBPS	1000000U

struct hbmpool_sim;

/* debugfs hands the inode's data to get/set: one per knob and node. */
struct sim_knob_file {
	struct hbmpool_sim *sim;
	const struct sim_knob *knob;
};

/* The sim's part of a request (req->pdu). */
struct sim_pdu {
	struct hbmpool_req *req;
	struct list_head list;		/* on hung while parked */
	struct work_struct work;	/* a transfer that takes time */
};

/* node->priv: a simulated home and the link to it. */
struct hbmpool_sim {
	struct hbmpool_node *node;
	/*
	 * The simulated home's segment: its allocator, and the sim's sparse
	 * HBM as its provider: page index -> struct page, allocated on the
	 * first write; the xa_lock orders discard and readers.
	 */
	struct hbmpool_segment seg;
	bool seg_ready;
	struct xarray hbm;
	struct workqueue_struct *wq;
	/* lock protects hung, shut and bw_next_ns; queue_work() is called under it */
	spinlock_t lock;
	struct list_head hung;		/* parked fetches while hang_fetch is set */
	bool shut;
	u64 bw_next_ns;			/* when the link is free again */
	struct sim_knob_file knobs[3];	/* debugfs data of sim_knobs[] */
	/* knobs, read with READ_ONCE on the data path */
	u32 latency_us;
	u32 bandwidth_mbps;
	u32 hang_fetch;
	u32 link_down;
	u32 nowait_copy;		/* offer the fault fast path (default 1) */
	/* requests submitted, for tests of batching (debugfs, read-only) */
	atomic_t read_requests;
	atomic_t write_requests;
};

static struct hbmpool_sim *to_sim(struct hbmpool_node *node)
{
	return node->priv;
}

/*
 * Returns the HBM page at @idx with a reference, or NULL if never written.
 * Without the xarray's lock, as the page cache looks up: a page freed (and
 * perhaps reused) meanwhile fails the speculative reference or the second
 * load.
 */
static struct page *sim_hbm_get(struct hbmpool_sim *sim, pgoff_t idx)
{
	struct page *p;

	rcu_read_lock();
repeat:
	p = xa_load(&sim->hbm, idx);
	if (p) {
		if (!get_page_unless_zero(p))
			goto repeat;
		if (unlikely(p != xa_load(&sim->hbm, idx))) {
			put_page(p);
			goto repeat;
		}
	}
	rcu_read_unlock();
	return p;
}

/* Reads HBM page @idx into @page; never sleeps. */
static void sim_read_page(struct hbmpool_sim *sim, pgoff_t idx,
			  struct page *page)
{
	struct page *p = sim_hbm_get(sim, idx);

	if (p) {
		copy_highpage(page, p);
		put_page(p);
	} else {
		clear_highpage(page);
	}
}

static int sim_write_page(struct hbmpool_sim *sim, pgoff_t idx,
			  struct page *page)
{
	struct page *p, *old;

	p = sim_hbm_get(sim, idx);
	if (!p) {
		p = alloc_page(GFP_KERNEL | __GFP_NOWARN);
		if (!p)
			return -ENOMEM;
		old = xa_cmpxchg(&sim->hbm, idx, NULL, p, GFP_KERNEL);
		if (xa_is_err(old)) {
			__free_page(p);
			return xa_err(old);
		}
		if (old) {
			__free_page(p);
			p = old;
		}
		get_page(p);
	}
	copy_highpage(p, page);
	put_page(p);
	return 0;
}

/*
 * A request as the home would serve it: checked against the chunks this
 * client holds in the segment, then moved page by page.
 */
static int sim_copy(struct hbmpool_sim *sim, struct hbmpool_req *req)
{
	unsigned int i;
	int err;

	err = hbmpool_segment_check(&sim->seg, req->offset,
				    (u64)req->nr_pages << PAGE_SHIFT,
				    READ_ONCE(hbmpool_self_id));
	if (err) {
		pr_warn_ratelimited("node %u: request outside the chunks of its client: %d\n",
				    sim->node->id, err);
		return err;
	}
	for (i = 0; i < req->nr_pages; i++) {
		u64 offset = req->offset + ((u64)i << PAGE_SHIFT);

		if (req->op == HBMPOOL_REQ_READ) {
			sim->seg.provider->read(&sim->seg, offset, req->pages[i]);
			continue;
		}
		err = sim->seg.provider->write(&sim->seg, offset, req->pages[i]);
		if (err)
			return err;
	}
	return 0;
}

static void sim_work(struct work_struct *work)
{
	struct sim_pdu *pdu = container_of(work, struct sim_pdu, work);
	struct hbmpool_req *req = pdu->req;
	struct hbmpool_sim *sim = to_sim(req->node);
	u32 lat = READ_ONCE(sim->latency_us);
	u32 bw = READ_ONCE(sim->bandwidth_mbps);

	if (lat)
		fsleep(lat);
	if (READ_ONCE(req->node->state) == HBMPOOL_NODE_FENCED) {
		hbmpool_req_complete(req, -ENODEV);	/* declared dead meanwhile */
		return;
	}
	if (bw) {
		/* a run takes its bytes / (bw * 10^6) s on the wire */
		u64 xfer_ns = div_u64((u64)req->nr_pages * PAGE_SIZE * 1000, bw);
		u64 now = ktime_get_ns(), done;

		spin_lock(&sim->lock);
		done = max(now, sim->bw_next_ns) + xfer_ns;
		sim->bw_next_ns = done;
		spin_unlock(&sim->lock);
		if (done > now)
			fsleep(div_u64(done - now, NSEC_PER_USEC));
	}
	hbmpool_req_complete(req, sim_copy(sim, req));
}

static void sim_submit(struct hbmpool_node *node, struct hbmpool_req *req)
{
	struct hbmpool_sim *sim = to_sim(node);
	struct sim_pdu *pdu = req->pdu;

	pdu->req = req;
	atomic_inc(req->op == HBMPOOL_REQ_READ ? &sim->read_requests :
		   &sim->write_requests);
	spin_lock(&sim->lock);
	/* fenced: checked under the lock that sim_fence() takes after it */
	if (sim->shut || READ_ONCE(node->state) == HBMPOOL_NODE_FENCED) {
		spin_unlock(&sim->lock);
		hbmpool_req_complete(req, -ENODEV);
		return;
	}
	if (READ_ONCE(sim->link_down)) {
		spin_unlock(&sim->lock);
		hbmpool_req_complete(req, -ENOLINK);
		return;
	}
	if (req->op == HBMPOOL_REQ_READ && READ_ONCE(sim->hang_fetch)) {
		list_add_tail(&pdu->list, &sim->hung);
		spin_unlock(&sim->lock);
		return;
	}
	if (READ_ONCE(sim->latency_us) || READ_ONCE(sim->bandwidth_mbps)) {
		INIT_WORK(&pdu->work, sim_work);
		queue_work(sim->wq, &pdu->work);
		spin_unlock(&sim->lock);
		return;
	}
	spin_unlock(&sim->lock);

	hbmpool_req_complete(req, sim_copy(sim, req));
}

/* Without added latency, bandwidth cap or fault knobs, a fetch is a memcpy. */
static int sim_copy_nowait(struct hbmpool_node *node, u64 offset,
			   struct page **pages, unsigned int nr)
{
	struct hbmpool_sim *sim = to_sim(node);
	unsigned int i;
	bool shut;

	if (!READ_ONCE(sim->nowait_copy) || READ_ONCE(sim->link_down) ||
	    READ_ONCE(sim->hang_fetch) || READ_ONCE(sim->latency_us) ||
	    READ_ONCE(sim->bandwidth_mbps))
		return -EAGAIN;
	/*
	 * Under the lock, as in ->submit(): either shutdown comes first and
	 * we see it, or node removal, which follows shutdown, sees the page
	 * the caller published before calling us, and drops it.
	 */
	spin_lock(&sim->lock);
	shut = sim->shut;
	spin_unlock(&sim->lock);
	if (shut || hbmpool_segment_check(&sim->seg, offset, (u64)nr << PAGE_SHIFT,
					  READ_ONCE(hbmpool_self_id)))
		return -EAGAIN;		/* the slow path reports it */
	for (i = 0; i < nr; i++)
		sim->seg.provider->read(&sim->seg, offset + ((u64)i << PAGE_SHIFT),
					pages[i]);
	return 0;
}

/* This node is the simulated home's only client. */
static int sim_alloc_chunks(struct hbmpool_node *node, u64 len, u64 *offset)
{
	return hbmpool_segment_alloc(&to_sim(node)->seg, len,
				     READ_ONCE(hbmpool_self_id), offset);
}

static void sim_free_chunks(struct hbmpool_node *node, u64 offset, u64 len,
			    u32 gen)
{
	hbmpool_segment_free(&to_sim(node)->seg, offset, len,
			     READ_ONCE(hbmpool_self_id));
}

static u64 sim_free_bytes(struct hbmpool_node *node)
{
	return hbmpool_segment_avail(&to_sim(node)->seg);
}

/* ---- the segment provider: sparse pages, unwritten HBM reads as zeros ---- */

static struct hbmpool_sim *seg_to_sim(struct hbmpool_segment *seg)
{
	return seg->priv;
}

static void sim_seg_read(struct hbmpool_segment *seg, u64 offset,
			 struct page *page)
{
	sim_read_page(seg_to_sim(seg), offset >> PAGE_SHIFT, page);
}

static int sim_seg_write(struct hbmpool_segment *seg, u64 offset,
			 struct page *page)
{
	return sim_write_page(seg_to_sim(seg), offset >> PAGE_SHIFT, page);
}

/* The home drops what it held for a freed chunk. */
static void sim_seg_discard(struct hbmpool_segment *seg, u64 offset, u64 len)
{
	struct hbmpool_sim *sim = seg_to_sim(seg);
	unsigned long idx;
	struct page *p;

	xa_for_each_range(&sim->hbm, idx, p, offset >> PAGE_SHIFT,
			  ((offset + len) >> PAGE_SHIFT) - 1) {
		if (xa_cmpxchg(&sim->hbm, idx, p, NULL, 0) == p)
			put_page(p);
	}
}

static void sim_seg_release(struct hbmpool_segment *seg)
{
	struct hbmpool_sim *sim = seg_to_sim(seg);
	unsigned long idx;
	struct page *p;

	xa_for_each(&sim->hbm, idx, p)
		put_page(p);
	xa_destroy(&sim->hbm);
}

static const struct hbmpool_segment_provider sim_seg_provider = {
	.name = "sim",
	.read = sim_seg_read,
	.write = sim_seg_write,
	.discard = sim_seg_discard,
	.release = sim_seg_release,
};

/* Completes every parked fetch with @status. */
static void sim_release_hung(struct hbmpool_sim *sim, int status)
{
	struct sim_pdu *pdu, *tmp;
	LIST_HEAD(list);

	spin_lock(&sim->lock);
	list_splice_init(&sim->hung, &list);
	spin_unlock(&sim->lock);
	list_for_each_entry_safe(pdu, tmp, &list, list) {
		list_del(&pdu->list);
		hbmpool_req_complete(pdu->req, status);
	}
}

/* The core removed the node's debugfs directory first: no knob runs. */
static void sim_shutdown(struct hbmpool_node *node)
{
	struct hbmpool_sim *sim = to_sim(node);

	spin_lock(&sim->lock);
	sim->shut = true;
	spin_unlock(&sim->lock);

	sim_release_hung(sim, -ENODEV);
	destroy_workqueue(sim->wq);		/* runs what was queued */
	sim->wq = NULL;
}

/* Declared dead: parked fetches fail now; queued ones when they run. */
static void sim_fence(struct hbmpool_node *node)
{
	sim_release_hung(to_sim(node), -ENODEV);
}

static void sim_release(struct hbmpool_node *node)
{
	struct hbmpool_sim *sim = to_sim(node);

	if (sim->wq)		/* attached, never published */
		destroy_workqueue(sim->wq);
	if (sim->seg_ready)	/* every chunk was freed by its region */
		hbmpool_segment_destroy(&sim->seg);
}

/* ---- debugfs knobs ---- */

/* A knob: one u32 of the node's state with its range, shown in debugfs. */
struct sim_knob {
	const char *name;
	size_t offset;			/* in struct hbmpool_sim */
	u32 max;
};

static const struct sim_knob sim_knobs[] = {
	{ "latency_us", offsetof(struct hbmpool_sim, latency_us), SIM_LATENCY_MAX_US },
	{ "bandwidth_mbps", offsetof(struct hbmpool_sim, bandwidth_mbps),
	  SIM_BANDWIDTH_MAX_MBPS },
	{ "nowait_copy", offsetof(struct hbmpool_sim, nowait_copy), 1 },
};

static u32 *sim_knob_ptr(struct sim_knob_file *f)
{
	return (u32 *)((char *)f->sim + f->knob->offset);
}

static int sim_knob_get(void *data, u64 *val)
{
	*val = READ_ONCE(*sim_knob_ptr(data));
	return 0;
}

static int sim_knob_set(void *data, u64 val)
{
	struct sim_knob_file *f = data;

	if (val > f->knob->max) {
		pr_err("node %u: %s: expected 0..%u\n", f->sim->node->id,
		       f->knob->name, f->knob->max);
		return -EINVAL;
	}
	WRITE_ONCE(*sim_knob_ptr(f), val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(sim_knob_fops, sim_knob_get, sim_knob_set, "%llu\n");

static int sim_hang_fetch_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct hbmpool_sim *)data)->hang_fetch);
	return 0;
}

static int sim_hang_fetch_set(void *data, u64 val)
{
	struct hbmpool_sim *sim = data;

	if (val > 1) {
		pr_err("hang_fetch: expected 0 or 1\n");
		return -EINVAL;
	}
	WRITE_ONCE(sim->hang_fetch, val);
	if (!val)
		sim_release_hung(sim, -ECANCELED);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(sim_hang_fetch_fops, sim_hang_fetch_get,
			 sim_hang_fetch_set, "%llu\n");

static int sim_link_down_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct hbmpool_sim *)data)->link_down);
	return 0;
}

/* The link going down or up is pushed to the core, as a real transport's would be. */
static int sim_link_down_set(void *data, u64 val)
{
	struct hbmpool_sim *sim = data;

	if (val > 1) {
		pr_err("link_down: expected 0 or 1\n");
		return -EINVAL;
	}
	WRITE_ONCE(sim->link_down, val);
	hbmpool_node_link_changed(sim->node, !val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(sim_link_down_fops, sim_link_down_get,
			 sim_link_down_set, "%llu\n");

/* hbm: the node's HBM, read-only, byte-addressed. */
static ssize_t sim_hbm_read(struct file *file, char __user *ubuf, size_t count,
			    loff_t *ppos)
{
	struct hbmpool_sim *sim = file->private_data;
	loff_t pos = *ppos;
	size_t done = 0;

	if (pos < 0)
		return -EINVAL;
	if (pos >= sim->node->capacity)
		return 0;
	count = min_t(u64, count, sim->node->capacity - pos);
	while (done < count) {
		size_t off = (pos + done) & ~PAGE_MASK;
		size_t n = min_t(size_t, PAGE_SIZE - off, count - done);
		struct page *p = sim_hbm_get(sim, (pos + done) >> PAGE_SHIFT);
		unsigned long left;

		if (p) {
			void *va = kmap_local_page(p);

			left = copy_to_user(ubuf + done, va + off, n);
			kunmap_local(va);
			put_page(p);
		} else {
			left = clear_user(ubuf + done, n);
		}
		if (left) {
			if (!done)
				return -EFAULT;
			break;
		}
		done += n;
		if (fatal_signal_pending(current))
			break;
	}
	*ppos = pos + done;
	return done;
}

static const struct file_operations sim_hbm_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = sim_hbm_read,
	.llseek = default_llseek,
};

static int sim_attach(struct hbmpool_node *node, const void *params)
{
	struct hbmpool_sim *sim = to_sim(node);
	int i, err;

	BUILD_BUG_ON(ARRAY_SIZE(sim_knobs) != ARRAY_SIZE(sim->knobs));
	sim->node = node;
	sim->nowait_copy = 1;
	xa_init(&sim->hbm);
	spin_lock_init(&sim->lock);
	INIT_LIST_HEAD(&sim->hung);
	err = hbmpool_segment_init(&sim->seg, node->capacity, &sim_seg_provider,
				   sim);
	if (err)
		return err;		/* ->release() undoes the rest */
	sim->seg_ready = true;
	sim->wq = alloc_workqueue("hbmpool-sim%u", WQ_UNBOUND, 0, node->id);
	if (!sim->wq)
		return -ENOMEM;

	for (i = 0; i < ARRAY_SIZE(sim_knobs); i++) {
		sim->knobs[i].sim = sim;
		sim->knobs[i].knob = &sim_knobs[i];
		debugfs_create_file_unsafe(sim_knobs[i].name, 0644, node->debugfs,
					   &sim->knobs[i], &sim_knob_fops);
	}
	debugfs_create_file_unsafe("hang_fetch", 0644, node->debugfs, sim,
				   &sim_hang_fetch_fops);
	debugfs_create_file_unsafe("link_down", 0644, node->debugfs, sim,
				   &sim_link_down_fops);
	debugfs_create_file("hbm", 0444, node->debugfs, sim, &sim_hbm_fops);
	debugfs_create_atomic_t("read_requests", 0444, node->debugfs,
				&sim->read_requests);
	debugfs_create_atomic_t("write_requests", 0444, node->debugfs,
				&sim->write_requests);
	return 0;
}

static const struct hbmpool_transport_ops sim_ops = {
	.attach = sim_attach,
	.submit = sim_submit,
	.copy_nowait = sim_copy_nowait,
	.alloc_chunks = sim_alloc_chunks,
	.free_chunks = sim_free_chunks,
	.free_bytes = sim_free_bytes,
	.shutdown = sim_shutdown,
	.release = sim_release,
	.fence = sim_fence,
};

static struct hbmpool_transport sim_transport = {
	.name = "sim",
	.owner = THIS_MODULE,
	.api = HBMPOOL_TRANSPORT_API,
	.node_priv_size = sizeof(struct hbmpool_sim),
	.req_pdu_size = sizeof(struct sim_pdu),
	.ops = &sim_ops,
};

int hbmpool_sim_init(void)
{
	return hbmpool_transport_register(&sim_transport);
}

void hbmpool_sim_exit(void)
{
	hbmpool_transport_unregister(&sim_transport);
}
