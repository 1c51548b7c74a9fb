// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated fabric: a remote node whose "HBM" is RAM of this machine,
 * reached through the same transport ops as a real link, with debugfs knobs
 * for latency, a bandwidth cap, failures, hangs and link loss.
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

#define SIM_LATENCY_MAX_US	1000000U
#define SIM_BANDWIDTH_MAX_MBPS	1000000U

struct hbmpool_sim;

/* debugfs hands the inode's data to get/set: one per knob and node. */
struct sim_knob_file {
	struct hbmpool_sim *sim;
	const struct sim_knob *knob;
};

struct hbmpool_sim {
	struct hbmpool_node *node;
	/* HBM page index -> struct page; the xa_lock orders discard and readers */
	struct xarray hbm;
	struct workqueue_struct *wq;
	/* lock protects hung, shut and bw_next_ns; queue_work() is called under it */
	spinlock_t lock;
	struct list_head hung;		/* parked fetches while hang_fetch is set */
	bool shut;
	u64 bw_next_ns;			/* when the link is free again */
	struct dentry *dir;
	struct sim_knob_file knobs[6];	/* debugfs data of sim_knobs[] */
	/* knobs, read with READ_ONCE on the data path */
	u32 latency_us;
	u32 bandwidth_mbps;
	u32 fail_fetch;
	u32 fail_writeback;
	u32 hang_fetch;
	u32 link_down;
	u32 nowait_copy;		/* offer the fault fast path (default 1) */
};

static struct dentry *hbmpool_debugfs_root;

static struct hbmpool_sim *to_sim(struct hbmpool_node *node)
{
	return node->priv;
}

/* Returns the HBM page at @idx with a reference, or NULL if never written. */
static struct page *sim_hbm_get(struct hbmpool_sim *sim, pgoff_t idx)
{
	struct page *p;

	xa_lock(&sim->hbm);
	p = xa_load(&sim->hbm, idx);
	if (p)
		get_page(p);
	xa_unlock(&sim->hbm);
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

static int sim_copy(struct hbmpool_sim *sim, struct hbmpool_xfer *x)
{
	pgoff_t idx = x->offset >> PAGE_SHIFT;
	struct page *p, *old;

	if (!x->write) {
		sim_read_page(sim, idx, x->page);
		return 0;
	}
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
	copy_highpage(p, x->page);
	put_page(p);
	return 0;
}

static void sim_work(struct work_struct *work)
{
	struct hbmpool_xfer *x = container_of(work, struct hbmpool_xfer, work);
	struct hbmpool_sim *sim = to_sim(x->node);
	u32 lat = READ_ONCE(sim->latency_us);
	u32 bw = READ_ONCE(sim->bandwidth_mbps);

	if (lat)
		fsleep(lat);
	if (bw) {
		/* one page takes PAGE_SIZE / (bw * 10^6) s on the wire */
		u64 xfer_ns = div_u64((u64)PAGE_SIZE * 1000, bw);
		u64 now = ktime_get_ns(), done;

		spin_lock(&sim->lock);
		done = max(now, sim->bw_next_ns) + xfer_ns;
		sim->bw_next_ns = done;
		spin_unlock(&sim->lock);
		if (done > now)
			fsleep(div_u64(done - now, NSEC_PER_USEC));
	}
	hbmpool_xfer_complete(x, sim_copy(sim, x));
}

static int sim_submit(struct hbmpool_node *node, struct hbmpool_xfer *x)
{
	struct hbmpool_sim *sim = to_sim(node);

	if (READ_ONCE(sim->link_down))
		return -ENOLINK;
	if (x->write ? READ_ONCE(sim->fail_writeback) : READ_ONCE(sim->fail_fetch))
		return -EIO;

	spin_lock(&sim->lock);
	if (sim->shut) {
		spin_unlock(&sim->lock);
		return -ENODEV;
	}
	if (!x->write && READ_ONCE(sim->hang_fetch)) {
		list_add_tail(&x->list, &sim->hung);
		spin_unlock(&sim->lock);
		return 0;
	}
	if (READ_ONCE(sim->latency_us) || READ_ONCE(sim->bandwidth_mbps)) {
		INIT_WORK(&x->work, sim_work);
		queue_work(sim->wq, &x->work);
		spin_unlock(&sim->lock);
		return 0;
	}
	spin_unlock(&sim->lock);

	hbmpool_xfer_complete(x, sim_copy(sim, x));
	return 0;
}

/* Without added latency, bandwidth cap or fault knobs, a fetch is a memcpy. */
static int sim_copy_nowait(struct hbmpool_node *node, u64 offset,
			   struct page *page)
{
	struct hbmpool_sim *sim = to_sim(node);

	bool shut;

	if (!READ_ONCE(sim->nowait_copy) || READ_ONCE(sim->link_down) ||
	    READ_ONCE(sim->fail_fetch) || READ_ONCE(sim->hang_fetch) ||
	    READ_ONCE(sim->latency_us) || READ_ONCE(sim->bandwidth_mbps))
		return -EAGAIN;
	/*
	 * Under the lock, as in ->submit(): either shutdown comes first and
	 * we see it, or node removal, which follows shutdown, sees the page
	 * the caller published before calling us, and drops it.
	 */
	spin_lock(&sim->lock);
	shut = sim->shut;
	spin_unlock(&sim->lock);
	if (shut)
		return -EAGAIN;
	sim_read_page(sim, offset >> PAGE_SHIFT, page);
	return 0;
}

static bool sim_link_up(struct hbmpool_node *node)
{
	return !READ_ONCE(to_sim(node)->link_down);
}

static void sim_discard(struct hbmpool_node *node, u64 offset, u64 len)
{
	struct hbmpool_sim *sim = to_sim(node);
	unsigned long idx;
	struct page *p;

	xa_for_each_range(&sim->hbm, idx, p, offset >> PAGE_SHIFT,
			  ((offset + len) >> PAGE_SHIFT) - 1) {
		if (xa_cmpxchg(&sim->hbm, idx, p, NULL, 0) == p)
			put_page(p);
	}
}

/* Completes every parked fetch with @status. */
static void sim_release_hung(struct hbmpool_sim *sim, int status)
{
	struct hbmpool_xfer *x, *tmp;
	LIST_HEAD(list);

	spin_lock(&sim->lock);
	list_splice_init(&sim->hung, &list);
	spin_unlock(&sim->lock);
	list_for_each_entry_safe(x, tmp, &list, list) {
		list_del(&x->list);
		hbmpool_xfer_complete(x, status);
	}
}

static void sim_shutdown(struct hbmpool_node *node)
{
	struct hbmpool_sim *sim = to_sim(node);

	spin_lock(&sim->lock);
	if (sim->shut) {
		spin_unlock(&sim->lock);
		return;
	}
	sim->shut = true;
	spin_unlock(&sim->lock);

	debugfs_remove_recursive(sim->dir);	/* waits for open knob handlers */
	sim_release_hung(sim, -ENODEV);
	destroy_workqueue(sim->wq);		/* runs what was queued */
}

static void sim_release(struct hbmpool_node *node)
{
	struct hbmpool_sim *sim = to_sim(node);
	unsigned long idx;
	struct page *p;

	sim_shutdown(node);
	xa_for_each(&sim->hbm, idx, p)
		put_page(p);
	xa_destroy(&sim->hbm);
	kfree(sim);
	node->priv = NULL;
}

static const struct hbmpool_transport_ops sim_ops = {
	.api = HBMPOOL_TRANSPORT_API,
	.name = "sim",
	.submit = sim_submit,
	.copy_nowait = sim_copy_nowait,
	.link_up = sim_link_up,
	.discard = sim_discard,
	.shutdown = sim_shutdown,
	.release = sim_release,
};

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
	{ "fail_fetch", offsetof(struct hbmpool_sim, fail_fetch), 1 },
	{ "fail_writeback", offsetof(struct hbmpool_sim, fail_writeback), 1 },
	{ "link_down", offsetof(struct hbmpool_sim, link_down), 1 },
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

int hbmpool_sim_attach(struct hbmpool_node *node)
{
	struct hbmpool_sim *sim;
	char name[16];
	int i;

	sim = kzalloc(sizeof(*sim), GFP_KERNEL);
	if (!sim)
		return -ENOMEM;
	BUILD_BUG_ON(ARRAY_SIZE(sim_knobs) != ARRAY_SIZE(sim->knobs));
	sim->node = node;
	sim->nowait_copy = 1;
	xa_init(&sim->hbm);
	spin_lock_init(&sim->lock);
	INIT_LIST_HEAD(&sim->hung);
	sim->wq = alloc_workqueue("hbmpool-sim%u", WQ_UNBOUND, 0, node->id);
	if (!sim->wq) {
		kfree(sim);
		return -ENOMEM;
	}

	snprintf(name, sizeof(name), "node%u", node->id);
	sim->dir = debugfs_create_dir(name, hbmpool_debugfs_root);
	for (i = 0; i < ARRAY_SIZE(sim_knobs); i++) {
		sim->knobs[i].sim = sim;
		sim->knobs[i].knob = &sim_knobs[i];
		debugfs_create_file_unsafe(sim_knobs[i].name, 0644, sim->dir,
					   &sim->knobs[i], &sim_knob_fops);
	}
	debugfs_create_file_unsafe("hang_fetch", 0644, sim->dir, sim,
				   &sim_hang_fetch_fops);
	debugfs_create_file("hbm", 0444, sim->dir, sim, &sim_hbm_fops);

	node->priv = sim;
	node->ops = &sim_ops;
	return 0;
}

int hbmpool_sim_init(void)
{
	hbmpool_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
	return 0;
}

void hbmpool_sim_exit(void)
{
	debugfs_remove_recursive(hbmpool_debugfs_root);
}
