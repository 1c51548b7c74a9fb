// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpool regions: creation and validation, shared regions opened by name,
 * the region file (open, mmap, ioctls, fsync, fdinfo), and teardown.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/seq_file.h>
#include <linux/stringhash.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/pagemap.h>
#include <linux/pseudo_fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "hbmpool.h"
#include "resync.h"

#define HBMPOOL_FS_MAGIC	0x48424d50	/* "HBMP" */
#define HBMPOOL_MAX_CHUNKS	BIT(20)

static struct vfsmount *hbmpool_mnt;

static const char * const hbmpool_policy_names[] = {
	[HBMPOOL_POLICY_BIND] = "bind",
	[HBMPOOL_POLICY_INTERLEAVE] = "interleave",
	[HBMPOOL_POLICY_PREFERRED] = "preferred",
	[HBMPOOL_POLICY_WEIGHTED_INTERLEAVE] = "weighted-interleave",
};

const char *hbmpool_policy_name(u32 policy)
{
	return hbmpool_policy_names[policy];
}

/* ---- the table of live regions, by id and (shared ones) by name ---- */

#define HBMPOOL_NAME_HASH_BITS	8

/* hbmpool_regions_lock protects both tables and hbmpool_nr_regions. */
DEFINE_MUTEX(hbmpool_regions_lock);
DEFINE_XARRAY_ALLOC(hbmpool_regions);
unsigned long hbmpool_nr_regions;
static u32 hbmpool_region_next_id;	/* xa_alloc_cyclic()'s, under the xarray's lock */
static DEFINE_HASHTABLE(hbmpool_region_names, HBMPOOL_NAME_HASH_BITS);

static u32 hbmpool_name_hash(const char *name)
{
	return full_name_hash(NULL, name, strnlen(name, HBMPOOL_NAME_LEN));
}

static struct hbmpool_region *__hbmpool_shared_lookup(const char *name)
{
	struct hbmpool_region *r;

	lockdep_assert_held(&hbmpool_regions_lock);
	hash_for_each_possible(hbmpool_region_names, r, name_node,
			       hbmpool_name_hash(name))
		if (!strncmp(r->name, name, HBMPOOL_NAME_LEN))
			return r;
	return NULL;
}

/* Makes @r visible (by id, and by name if shared); -EEXIST: name taken. */
static int hbmpool_region_list(struct hbmpool_region *r)
{
	int err = 0;

	mutex_lock(&hbmpool_regions_lock);
	if (r->shared) {
		if (__hbmpool_shared_lookup(r->name)) {
			err = -EEXIST;
			goto out;
		}
		hash_add(hbmpool_region_names, &r->name_node,
			 hbmpool_name_hash(r->name));
	}
	xa_store(&hbmpool_regions, r->id, r, GFP_KERNEL);	/* the id's slot is reserved */
	r->listed = true;
	WRITE_ONCE(hbmpool_nr_regions, hbmpool_nr_regions + 1);
out:
	mutex_unlock(&hbmpool_regions_lock);
	if (!err)
		hbmpool_event(HBMPOOL_EVENT_REGION_NEW, r);
	return err;
}

static void hbmpool_region_unlist(struct hbmpool_region *r)
{
	bool was_listed;

	mutex_lock(&hbmpool_regions_lock);
	was_listed = r->listed;
	if (r->listed) {
		if (r->shared)
			hash_del(&r->name_node);
		WRITE_ONCE(hbmpool_nr_regions, hbmpool_nr_regions - 1);
		r->listed = false;
	}
	if (r->id != U32_MAX)
		xa_erase(&hbmpool_regions, r->id);
	mutex_unlock(&hbmpool_regions_lock);
	if (was_listed)
		hbmpool_event(HBMPOOL_EVENT_REGION_DEL, r);
}

/*
 * A reference to the first live region whose id is at least *@id, for a
 * walk of the table (netlink dumps); *@id is set to its id.  NULL at the
 * end.
 */
struct hbmpool_region *hbmpool_region_get_next(unsigned long *id)
{
	struct hbmpool_region *r;

	mutex_lock(&hbmpool_regions_lock);
	xa_for_each_start(&hbmpool_regions, *id, r, *id)
		if (r->listed && kref_get_unless_zero(&r->ref))
			break;
	mutex_unlock(&hbmpool_regions_lock);
	return r;
}

/*
 * References to every live region, for a walk that may sleep (node
 * removal).  The caller puts each and kvfree()s the array.  NULL with *@nr
 * set: out of memory.
 */
/* Region @id, referenced, or NULL. */
struct hbmpool_region *hbmpool_region_find(u32 id)
{
	struct hbmpool_region *r;

	mutex_lock(&hbmpool_regions_lock);
	r = xa_load(&hbmpool_regions, id);
	if (r && !kref_get_unless_zero(&r->ref))
		r = NULL;
	mutex_unlock(&hbmpool_regions_lock);
	return r;
}

struct hbmpool_region **hbmpool_regions_get_all(unsigned long *nr)
{
	struct hbmpool_region **regions, *r;
	unsigned long index, n = 0;

	mutex_lock(&hbmpool_regions_lock);
	*nr = hbmpool_nr_regions;
	regions = kvcalloc(*nr ?: 1, sizeof(*regions), GFP_KERNEL);
	if (regions) {
		xa_for_each(&hbmpool_regions, index, r)
			if (r && r->listed && n < *nr &&
			    kref_get_unless_zero(&r->ref))
				regions[n++] = r;
		*nr = n;
	}
	mutex_unlock(&hbmpool_regions_lock);
	return regions;
}

/* ---- teardown ---- */

/* No file, no mapping and no other reference is left: nobody can read the pages. */
static void hbmpool_region_drop_all(struct hbmpool_region *r)
{
	unsigned long index;
	void *entry;

	hbmpool_huge_drop_all(r);
	xa_for_each(&r->pages, index, entry) {
		struct page *page;

		/* The shrinker may race us to a page: take it by lookup. */
		page = hbmpool_lookup(r, index);
		if (!page)
			continue;
		lock_page(page);
		if (hbmpool_remove_page(r, page))
			put_page(page);		/* the cache's: ours is the last */
		unlock_page(page);
		hbmpool_page_release(page);
		cond_resched();
	}
	hbmpool_cache_forget_region();
	WARN_ON_ONCE(atomic_long_read(&r->nr_cached));
	xa_destroy(&r->pages);
}

void hbmpool_region_release(struct kref *ref)
{
	struct hbmpool_region *r = container_of(ref, struct hbmpool_region, ref);

	hbmpool_resync_region_gone(r);	/* its moves end; unplace frees their targets */
	hbmpool_region_unlist(r);
	hbmpool_region_drop_all(r);
	if (r->placed)
		hbmpool_unplace(r);
	if (r->inode)
		iput(r->inode);
	kvfree(r->chunks);
	kfree(r);
	module_put(THIS_MODULE);
}

/* ---- the region file ---- */

static int hbmpool_region_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct hbmpool_region *r = file->private_data;
	unsigned long pages = vma_pages(vma);

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;		/* a private copy of pooled memory makes no sense */
	if (vma->vm_pgoff >= r->nr_pages || pages > r->nr_pages - vma->vm_pgoff)
		return -EINVAL;
	/* VM_MIXEDMAP: a fault may map several pages (faultaround.c) */
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP | VM_MIXEDMAP;
	vma->vm_ops = &hbmpool_vm_ops;
	return 0;
}

static int hbmpool_check_range(struct hbmpool_region *r, struct hbmpool_range *rg,
			       pgoff_t *first, pgoff_t *end)
{
	if (rg->flags || rg->reserved[0] || rg->reserved[1] ||
	    rg->pages_done || rg->pages_failed)
		return -EINVAL;
	if (!PAGE_ALIGNED(rg->offset) || !PAGE_ALIGNED(rg->length) ||
	    rg->offset > r->length || rg->length > r->length - rg->offset)
		return -EINVAL;
	*first = rg->offset >> PAGE_SHIFT;
	*end = rg->length ? (rg->offset + rg->length) >> PAGE_SHIFT : r->nr_pages;
	return 0;
}

/*
 * Writes back a run of dirty pages (referenced, consecutive, one chunk) and
 * lets go of them; counts the pages written or failed.
 */
static void hbmpool_region_sync_run(struct hbmpool_region *r,
				    struct page **run, unsigned int nr,
				    u64 *done, u64 *failed)
{
	unsigned int i;

	if (!nr)
		return;
	/* each was dirty when found: done once clean, by us or by another */
	if (hbmpool_writeback_run(r, run, nr, NULL))
		*failed += nr;
	else
		*done += nr;
	for (i = 0; i < nr; i++)
		put_page(run[i]);
}

/*
 * Writes back the dirty pages of [first, end), runs of consecutive pages of
 * a chunk in one request per copy, and waits for the write-backs already in
 * flight in the range; -EIO if any failed.
 */
static int hbmpool_region_sync(struct hbmpool_region *r, pgoff_t first,
			       pgoff_t end, u64 *done, u64 *failed)
{
	struct page *run[HBMPOOL_WB_BATCH];
	unsigned long index;
	unsigned int nr = 0;
	void *entry;

	*done = 0;
	*failed = 0;
	xa_for_each_range(&r->pages, index, entry, first, end - 1) {
		struct page *page;

		page = hbmpool_lookup(r, index);
		if (!page)
			continue;
		/*
		 * A write-back in flight (the evictor's, or another sync's):
		 * its outcome is this sync's too.  Wait for it: the copies it
		 * missed are outdated by then, and if no copy took it the page
		 * is dirty again and written here.
		 */
		if (!test_bit(HBM_PG_DIRTY, &page->private) &&
		    test_bit(HBM_PG_WRITEBACK, &page->private) &&
		    wait_on_bit(&page->private, HBM_PG_WRITEBACK, TASK_KILLABLE)) {
			put_page(page);
			break;		/* killed */
		}
		if (!test_bit(HBM_PG_DIRTY, &page->private)) {
			put_page(page);
			continue;
		}
		if (nr && (nr == HBMPOOL_WB_BATCH ||
			   index != run[nr - 1]->index + 1 ||
			   hbmpool_chunk_of(r, index) !=
			   hbmpool_chunk_of(r, run[0]->index))) {
			hbmpool_region_sync_run(r, run, nr, done, failed);
			nr = 0;
		}
		run[nr++] = page;
		if (fatal_signal_pending(current))
			break;
		cond_resched();
	}
	hbmpool_region_sync_run(r, run, nr, done, failed);
	if (fatal_signal_pending(current))
		return -EINTR;
	return *failed ? -EIO : 0;
}

static long hbmpool_ioc_sync(struct hbmpool_region *r, void __user *argp,
			     bool prefetch)
{
	struct hbmpool_range rg;
	pgoff_t first, end, i;
	unsigned int nr;
	u32 usize;
	int err;

	err = hbmpool_copy_in(&rg, sizeof(rg), HBMPOOL_RANGE_SIZE_VER0, argp,
			      &usize);
	if (err)
		return err;
	err = hbmpool_check_range(r, &rg, &first, &end);
	if (err)
		return err;

	if (!prefetch) {
		err = hbmpool_region_sync(r, first, end, &rg.pages_done,
					  &rg.pages_failed);
		/* clean pages may now be evictable */
		hbmpool_cache_budget_changed();
	} else {
		for (i = first; i < end; i += nr) {
			int ret;

			long room = hbmpool_cache_room();

			nr = 1;
			if (room <= 0)
				break;	/* a hint never makes room by evicting */
			if (xa_load(&r->pages, i))
				continue;
			/* a run per request, up to the chunk's end */
			ret = hbmpool_fill(r, i, min_t(pgoff_t, end - i, room),
					   HBMPOOL_RA_NO_MARK,
					   HBMPOOL_FETCH_MAY_WRITEBACK, &nr);
			if (!ret)
				rg.pages_done += nr;
			else if (ret != -EEXIST)
				rg.pages_failed += nr;
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
		}
	}
	if (err && err != -EIO)
		return err;
	rg.size = sizeof(rg);
	return hbmpool_copy_out(argp, &rg, sizeof(rg), usize) ?: err;
}

/* Copies the node set of @r to the user's bitmap of @bits bits. */
static int hbmpool_info_nodes(struct hbmpool_region *r, u64 __user *uptr,
			      u32 bits)
{
	u32 nwords = DIV_ROUND_UP(bits, 64), i;
	u64 words[BITS_TO_U64(HBMPOOL_MAX_NODES)];

	bitmap_to_arr64(words, r->nodes, HBMPOOL_MAX_NODES);
	for (i = 0; i < nwords; i++) {
		u64 w = i < ARRAY_SIZE(words) ? words[i] : 0;

		if (i == nwords - 1 && bits % 64)
			w &= (1ULL << (bits % 64)) - 1;	/* the caller's bits only */
		if (put_user(w, uptr + i))
			return -EFAULT;
	}
	return 0;
}

/* The placement table of @r: up to @n entries of @stride bytes at @uptr. */
static int hbmpool_info_chunks(struct hbmpool_region *r, void __user *uptr,
			       u32 n, u32 stride)
{
	u32 i, c;

	for (i = 0; i < n; i++) {
		struct hbmpool_chunk_info ci = {};
		const struct hbmpool_chunk_map *map;
		void __user *entry = uptr + (size_t)i * stride;

		rcu_read_lock();
		map = rcu_dereference(r->chunks[i].map);
		ci.node = map->copies[0].node->id;
		ci.generation = map->gen;
		ci.node_offset = map->copies[0].offset;
		/* a move's target is not a copy yet */
		for (c = 0; c < map->nr_copies; c++)
			ci.nr_copies += map->copies[c].state != HBMPOOL_COPY_SYNCING;
		ci.good_copies = hbmpool_map_good(map);
		rcu_read_unlock();

		/* an older caller's smaller entry gets what it knows */
		if (copy_to_user(entry, &ci, min_t(size_t, stride, sizeof(ci))) ||
		    (stride > sizeof(ci) &&
		     clear_user(entry + sizeof(ci), stride - sizeof(ci))))
			return -EFAULT;
		if (!(i % 1024)) {
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
		}
	}
	return 0;
}

static long hbmpool_ioc_info(struct hbmpool_region *r, void __user *argp)
{
	struct hbmpool_region_info info;
	u32 usize, n, stride;
	int err;

	err = hbmpool_copy_in(&info, sizeof(info), HBMPOOL_REGION_INFO_SIZE_VER0,
			      argp, &usize);
	if (err)
		return err;
	stride = info.chunk_entry_size;
	if (info.flags || info.pad || memchr_inv(info.reserved, 0, sizeof(info.reserved)) ||
	    info.nr_node_bits > HBMPOOL_NODE_BITS_MAX ||
	    (info.chunks_ptr && (stride < HBMPOOL_CHUNK_INFO_SIZE_VER0 ||
				 stride % 8 || stride > PAGE_SIZE)))
		return -EINVAL;

	if (info.nodes_ptr) {
		err = hbmpool_info_nodes(r, u64_to_user_ptr(info.nodes_ptr),
					 info.nr_node_bits);
		if (err)
			return err;
	}
	n = info.chunks_ptr ? min(info.nr_chunks_max, r->nr_chunks) : 0;
	err = hbmpool_info_chunks(r, u64_to_user_ptr(info.chunks_ptr), n, stride);
	if (err)
		return err;

	info.size = sizeof(info);
	info.flags = 0;
	info.length = r->length;
	info.chunk_size = r->chunk_size;
	info.nr_node_bits = find_last_bit(r->nodes, HBMPOOL_MAX_NODES) + 1;
	info.nr_nodes = bitmap_weight(r->nodes, HBMPOOL_MAX_NODES);
	info.policy = r->policy;
	info.preferred_node = r->preferred;
	memcpy(info.name, r->name, sizeof(info.name));
	info.region_id = r->id;
	info.nr_chunks = r->nr_chunks;
	info.chunk_entry_size = sizeof(struct hbmpool_chunk_info);
	info.cached_pages = atomic_long_read(&r->nr_cached);
	info.dirty_pages = atomic_long_read(&r->nr_dirty);
	info.replicas = r->replicas;
	info.lost_chunks = hbmpool_region_lost_chunks(r, &info.degraded_chunks);
	return hbmpool_copy_out(argp, &info, sizeof(info), usize);
}

static long hbmpool_ioc_stats(struct hbmpool_region *r, void __user *argp)
{
	struct hbmpool_stats st;
	u64 v[HBMPOOL_NR_STATS];
	u32 usize;
	int err;

	err = hbmpool_copy_in(&st, sizeof(st), HBMPOOL_STATS_SIZE_VER0, argp,
			      &usize);
	if (err)
		return err;
	if (st.pad || memchr_inv(st.reserved, 0, sizeof(st.reserved)))
		return -EINVAL;

	hbmpool_region_stats_read(&r->stats, v);
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.faults = v[HBMPOOL_STAT_FAULTS];
	st.fetches = v[HBMPOOL_STAT_FETCHES];
	st.bytes_fetched = v[HBMPOOL_STAT_BYTES_FETCHED];
	st.writebacks = v[HBMPOOL_STAT_WRITEBACKS];
	st.bytes_written_back = v[HBMPOOL_STAT_BYTES_WRITTEN_BACK];
	st.evictions = v[HBMPOOL_STAT_EVICTIONS];
	st.errors = v[HBMPOOL_STAT_ERRORS];
	st.timeouts = v[HBMPOOL_STAT_TIMEOUTS];
	memcpy(st.lat_hist, &v[HBMPOOL_STAT_LAT0], sizeof(st.lat_hist));
	return hbmpool_copy_out(argp, &st, sizeof(st), usize);
}

static long hbmpool_region_ioctl(struct file *file, unsigned int cmd,
				 unsigned long arg)
{
	struct hbmpool_region *r = file->private_data;
	void __user *argp = (void __user *)arg;

	if (_IOC_TYPE(cmd) != HBMPOOL_IOC_MAGIC ||
	    _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE))
		return -ENOTTY;

	switch (_IOC_NR(cmd)) {
	case _IOC_NR(HBMPOOL_IOC_REGION_INFO):
		return hbmpool_ioc_info(r, argp);
	case _IOC_NR(HBMPOOL_IOC_REGION_STATS):
		return hbmpool_ioc_stats(r, argp);
	case _IOC_NR(HBMPOOL_IOC_REGION_SYNC):
		return hbmpool_ioc_sync(r, argp, false);
	case _IOC_NR(HBMPOOL_IOC_REGION_PREFETCH):
		return hbmpool_ioc_sync(r, argp, true);
	}
	return -ENOTTY;
}

/* msync(MS_SYNC) and fsync() write back the dirty pages of the range. */
static int hbmpool_region_fsync(struct file *file, loff_t start, loff_t end,
				int datasync)
{
	struct hbmpool_region *r = file->private_data;
	pgoff_t first = start >> PAGE_SHIFT;
	pgoff_t last;
	u64 done, failed;

	if (start < 0 || start >= r->length)
		return 0;
	last = min_t(u64, end, r->length - 1) >> PAGE_SHIFT;
	return hbmpool_region_sync(r, first, last + 1, &done, &failed);
}

/*
 * open(2) of an existing region file, through /proc/PID/fd/N or
 * /proc/PID/map_files/: the VFS has checked the inode's owner and mode.
 */
static int hbmpool_region_file_open(struct inode *inode, struct file *file)
{
	struct hbmpool_region *r = inode->i_private;

	if (!kref_get_unless_zero(&r->ref))
		return -ENXIO;
	file->private_data = r;
	return nonseekable_open(inode, file);
}

static int hbmpool_region_file_release(struct inode *inode, struct file *file)
{
	hbmpool_region_put(file->private_data);
	return 0;
}

/* /proc/PID/fdinfo/N of a region's descriptor: its state and counters. */
static void hbmpool_region_show_fdinfo(struct seq_file *m, struct file *file)
{
	static const char * const names[HBMPOOL_STAT_LAT0] = {
		[HBMPOOL_STAT_FAULTS] = "faults",
		[HBMPOOL_STAT_FETCHES] = "fetches",
		[HBMPOOL_STAT_BYTES_FETCHED] = "bytes_fetched",
		[HBMPOOL_STAT_WRITEBACKS] = "writebacks",
		[HBMPOOL_STAT_BYTES_WRITTEN_BACK] = "bytes_written_back",
		[HBMPOOL_STAT_EVICTIONS] = "evictions",
		[HBMPOOL_STAT_ERRORS] = "errors",
		[HBMPOOL_STAT_TIMEOUTS] = "timeouts",
	};
	struct hbmpool_region *r = file->private_data;
	u64 v[HBMPOOL_NR_STATS];
	int i;

	hbmpool_region_stats_read(&r->stats, v);
	seq_printf(m, "hbmpool-region:\t%u\n", r->id);
	seq_printf(m, "name:\t%s\n", r->name);
	seq_printf(m, "shared:\t%d\n", r->shared);
	seq_printf(m, "length:\t%llu\n", r->length);
	seq_printf(m, "chunk_size:\t%llu\n", r->chunk_size);
	seq_printf(m, "policy:\t%s\n", hbmpool_policy_names[r->policy]);
	seq_printf(m, "nodes:\t%*pbl\n", HBMPOOL_MAX_NODES, r->nodes);
	seq_printf(m, "preferred_node:\t%u\n", r->preferred);
	seq_printf(m, "cached_pages:\t%ld\n", atomic_long_read(&r->nr_cached));
	seq_printf(m, "dirty_pages:\t%ld\n", atomic_long_read(&r->nr_dirty));
	for (i = 0; i < HBMPOOL_STAT_LAT0; i++)
		if (names[i])
			seq_printf(m, "%s:\t%llu\n", names[i], v[i]);
}

static const struct file_operations hbmpool_region_fops = {
	.owner = THIS_MODULE,
	.open = hbmpool_region_file_open,
	.show_fdinfo = hbmpool_region_show_fdinfo,
	.mmap = hbmpool_region_mmap,
#ifdef CONFIG_TRANSPARENT_HUGEPAGE
	/* 2 MiB-aligned where the length allows: huge.c maps PMDs */
	.get_unmapped_area = thp_get_unmapped_area,
#endif
	.unlocked_ioctl = hbmpool_region_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.fsync = hbmpool_region_fsync,
	.release = hbmpool_region_file_release,
	.llseek = noop_llseek,
};

/* ---- creation ---- */

/* DIV_ROUND_UP() that cannot overflow for any length */
static u64 hbmpool_nr_chunks(u64 length, u64 chunk_size)
{
	return div64_u64(length, chunk_size) + !!(length & (chunk_size - 1));
}

static void hbmpool_ioc_reject(const char *what, const char *why)
{
	pr_info_ratelimited("%s by %s[%d]: %s\n", what, current->comm,
			    task_pid_nr(current), why);
}

/*
 * Reads the node set of a region create request into @nodes.  Bits at or
 * above nr_node_bits in the last word are not part of the set.
 */
static int hbmpool_copy_nodes(const struct hbmpool_region_create *req,
			      unsigned long *nodes, const char **why)
{
	u32 nwords = DIV_ROUND_UP(req->nr_node_bits, 64), i;
	u64 *words;
	int err = 0;

	if (!req->nr_node_bits || req->nr_node_bits > HBMPOOL_NODE_BITS_MAX) {
		*why = "nr_node_bits: 1..32768";
		return -EINVAL;
	}
	words = kcalloc(nwords, sizeof(*words), GFP_KERNEL);
	if (!words)
		return -ENOMEM;
	if (copy_from_user(words, u64_to_user_ptr(req->nodes_ptr),
			   nwords * sizeof(*words))) {
		*why = "nodes_ptr: bad address";
		err = -EFAULT;
		goto out;
	}
	if (req->nr_node_bits % 64)
		words[nwords - 1] &= (1ULL << (req->nr_node_bits % 64)) - 1;
	for (i = BITS_TO_U64(HBMPOOL_MAX_NODES); i < nwords; i++) {
		if (words[i]) {
			*why = "node set: ids are 0..1023";
			err = -EINVAL;
			goto out;
		}
	}
	bitmap_from_arr64(nodes, words, min_t(u32, nwords * 64, HBMPOOL_MAX_NODES));
out:
	kfree(words);
	return err;
}

static int hbmpool_check_create(struct hbmpool_region_create *req,
				unsigned long *nodes)
{
	const char *why = NULL;
	int err = -EINVAL;

	if (req->flags & ~HBMPOOL_REGION_FLAGS)
		why = "unknown flags";
	else if (req->pad || memchr_inv(req->reserved, 0, sizeof(req->reserved)))
		why = "pad and reserved fields must be zero";
	else if (req->replicas > HBMPOOL_REPLICAS_MAX)
		why = "replicas: 1..4 (0: 1)";
	else if (req->mode & ~0777U)
		why = "mode must be permission bits (0..0777)";
	else if (!req->length || !PAGE_ALIGNED(req->length))
		why = "length must be a non-zero multiple of the page size";
	else if (req->chunk_size && (!is_power_of_2(req->chunk_size) ||
				     req->chunk_size < PAGE_SIZE ||
				     req->chunk_size > HBMPOOL_CHUNK_MAX))
		why = "chunk_size must be 0 or a power of two in [page size, 1 GiB]";
	else if (req->policy > HBMPOOL_POLICY_MAX)
		why = "unknown policy";
	else if (!memchr(req->name, 0, sizeof(req->name)))
		why = "name is not NUL-terminated";
	else if ((req->flags & HBMPOOL_REGION_SHARED) && !req->name[0])
		why = "a shared region needs a name";
	else if (hbmpool_nr_chunks(req->length,
				   req->chunk_size ?: HBMPOOL_CHUNK_DEFAULT) >
		 HBMPOOL_MAX_CHUNKS)
		why = "more than 2^20 chunks: use a larger chunk size";
	if (!why) {
		err = hbmpool_copy_nodes(req, nodes, &why);
		if (err == -ENOMEM)
			return err;
	}
	if (why)
		goto out;
	if (bitmap_empty(nodes, HBMPOOL_MAX_NODES))
		why = "empty node set";
	else if (test_bit(READ_ONCE(hbmpool_self_id), nodes))
		why = "this node is in the node set: it holds no chunks of its own";
	else if (req->policy == HBMPOOL_POLICY_PREFERRED &&
		 (req->preferred_node >= HBMPOOL_MAX_NODES ||
		  !test_bit(req->preferred_node, nodes)))
		why = "preferred node not in the node set";
	else if (req->policy != HBMPOOL_POLICY_PREFERRED && req->preferred_node)
		why = "preferred_node is for the preferred policy only";
	else if (bitmap_weight(nodes, HBMPOOL_MAX_NODES) < (req->replicas ?: 1))
		why = "replicas: more copies than nodes in the set";
	if (!why)
		return 0;
	err = -EINVAL;
out:
	hbmpool_ioc_reject("region create", why);
	return err;
}

/* A region file changes no size: its length is set at creation. */
static int hbmpool_region_setattr(struct user_namespace *mnt_userns,
				  struct dentry *dentry, struct iattr *attr)
{
	if (attr->ia_valid & ATTR_SIZE)
		return -EPERM;
	return simple_setattr(mnt_userns, dentry, attr);
}

static const struct inode_operations hbmpool_region_iops = {
	.setattr = hbmpool_region_setattr,
};

/* The region's inode: a regular file of the creator, with the given mode. */
static int hbmpool_region_inode(struct hbmpool_region *r, umode_t mode)
{
	struct inode *inode;

	inode = alloc_anon_inode(hbmpool_mnt->mnt_sb);
	if (IS_ERR(inode))
		return PTR_ERR(inode);
	inode->i_private = r;
	inode->i_size = r->length;
	inode->i_mode = S_IFREG | (mode ?: 0600);
	r->mode = mode ?: 0600;
	r->uid = current_fsuid();
	inode->i_uid = current_fsuid();
	inode->i_gid = current_fsgid();
	inode->i_op = &hbmpool_region_iops;
	inode->i_fop = &hbmpool_region_fops;
	inode->i_mapping->a_ops = &hbmpool_cache_aops;
#ifdef HBMPOOL_HAVE_RELEASE_ALWAYS
	mapping_set_release_always(inode->i_mapping);	/* hbmpool_release_folio() */
#endif
	r->inode = inode;	/* the region's reference */
	return 0;
}

/*
 * Gives the caller a new O_RDWR | O_CLOEXEC descriptor of @r, which takes
 * over the caller's reference (dropped on error).  The ioctl's reply @req
 * (@ksize bytes, @usize of them user space's) gets its size, region id and
 * fd filled in through @size, @id and @fdp and is copied out to @argp
 * before the descriptor is installed.  Returns the fd or an error.
 */
static long hbmpool_region_reply_fd(struct hbmpool_region *r,
				    void __user *argp, void *req, size_t ksize,
				    u32 usize, u32 *size, u32 *id, u32 *fdp)
{
	struct file *file;
	int fd, err;

	fd = get_unused_fd_flags(O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		hbmpool_region_put(r);
		return fd;
	}
	ihold(r->inode);	/* the file's */
	file = alloc_file_pseudo(r->inode, hbmpool_mnt, "hbmpool-region",
				 O_RDWR, &hbmpool_region_fops);
	if (IS_ERR(file)) {
		iput(r->inode);
		put_unused_fd(fd);
		hbmpool_region_put(r);
		return PTR_ERR(file);
	}
	__module_get(THIS_MODULE);	/* for the file, dropped by fops_put() */
	file->private_data = r;
	hbmpool_ra_init(&file->f_ra);		/* the file holds the caller's reference */

	*size = ksize;
	*id = r->id;
	*fdp = fd;
	err = hbmpool_copy_out(argp, req, ksize, usize);
	if (err) {
		put_unused_fd(fd);
		fput(file);
		return err;
	}
	fd_install(fd, file);
	return fd;
}

long hbmpool_ioc_region_create(void __user *argp)
{
	struct hbmpool_region_create req;
	struct hbmpool_region *r;
	u32 id, usize;
	int err;

	err = hbmpool_copy_in(&req, sizeof(req), HBMPOOL_REGION_CREATE_SIZE_VER0,
			      argp, &usize);
	if (err)
		return err;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	err = hbmpool_check_create(&req, r->nodes);
	if (err) {
		kfree(r);
		return err;
	}
	__module_get(THIS_MODULE);	/* dropped by the release below */
	r->id = U32_MAX;
	xa_init(&r->pages);
	xa_init(&r->huge);
	mutex_init(&r->maps_lock);
	kref_init(&r->ref);		/* release undoes from here on */

	r->shared = req.flags & HBMPOOL_REGION_SHARED;
	r->length = req.length;
	r->chunk_size = req.chunk_size ?: HBMPOOL_CHUNK_DEFAULT;
	r->chunk_shift = ilog2(r->chunk_size);
	r->policy = req.policy;
	r->preferred = req.preferred_node;
	r->replicas = req.replicas ?: 1;
	memcpy(r->name, req.name, sizeof(r->name));
	r->nr_pages = r->length >> PAGE_SHIFT;
	r->nr_chunks = hbmpool_nr_chunks(r->length, r->chunk_size);

	err = -ENOMEM;
	r->chunks = kvcalloc(r->nr_chunks, sizeof(*r->chunks), GFP_KERNEL);
	if (!r->chunks)
		goto err_put;
	/* reserve the id; the region is stored there once it is complete */
	/*
	 * Cyclic: an id is not reused soon after its region is freed, so
	 * that dumps and monitors never take a new region for an old one.
	 */
	err = xa_alloc_cyclic(&hbmpool_regions, &id, NULL, xa_limit_31b,
			      &hbmpool_region_next_id, GFP_KERNEL);
	if (err < 0)
		goto err_put;
	err = 0;
	r->id = id;

	err = hbmpool_place(r);
	r->placed = !err;
	if (err) {
		hbmpool_ioc_reject("region create", err == -ENODEV ?
				   "a node of the set does not exist" :
				   "not enough free capacity on the node set");
		goto err_put;
	}
	err = hbmpool_region_inode(r, req.mode);
	if (err)
		goto err_put;
	err = hbmpool_region_list(r);
	if (err) {
		hbmpool_ioc_reject("region create", "a shared region of that name exists");
		goto err_put;
	}
	return hbmpool_region_reply_fd(r, argp, &req, sizeof(req), usize,
				       &req.size, &req.region_id, &req.fd);

err_put:
	hbmpool_region_put(r);
	return err;
}

/* ---- opening a shared region by name ---- */

long hbmpool_ioc_region_open(void __user *argp)
{
	struct hbmpool_region_open req;
	struct hbmpool_region *r;
	u32 usize;
	int err;

	err = hbmpool_copy_in(&req, sizeof(req), HBMPOOL_REGION_OPEN_SIZE_VER0,
			      argp, &usize);
	if (err)
		return err;
	if (req.flags || memchr_inv(req.reserved, 0, sizeof(req.reserved))) {
		hbmpool_ioc_reject("region open", "flags and reserved fields must be zero");
		return -EINVAL;
	}
	if (!memchr(req.name, 0, sizeof(req.name)) || !req.name[0]) {
		hbmpool_ioc_reject("region open", "name must be non-empty and NUL-terminated");
		return -EINVAL;
	}

	mutex_lock(&hbmpool_regions_lock);
	r = __hbmpool_shared_lookup(req.name);
	if (r && !kref_get_unless_zero(&r->ref))
		r = NULL;
	mutex_unlock(&hbmpool_regions_lock);
	if (!r)
		return -ENOENT;
	err = inode_permission(&init_user_ns, r->inode, MAY_READ | MAY_WRITE);
	if (err) {
		hbmpool_region_put(r);
		return err;
	}
	return hbmpool_region_reply_fd(r, argp, &req, sizeof(req), usize,
				       &req.size, &req.region_id, &req.fd);
}

/* ---- node removal ---- */

/*
 * @node is gone (removed, fenced, or its memory lost): a move to or from it
 * fails; the cached pages of chunks whose up-to-date copy it held are
 * dropped (a move's target held nothing the chunk is read from).
 */
void hbmpool_region_node_removed(struct hbmpool_region *r,
				 struct hbmpool_node *node)
{
	pgoff_t per_chunk = r->chunk_size >> PAGE_SHIFT;
	unsigned long index;
	void *entry;
	u32 i, c;

	/*
	 * The node's state is stored before r->huge is walked: a piece being
	 * gathered now either sees the node gone or is found in r->huge.
	 * Pairs with the barrier in hbmpool_huge_collapse().
	 */
	smp_mb();
	for (i = 0; r->placed && i < r->nr_chunks; i++) {
		const struct hbmpool_chunk_map *map;

		rcu_read_lock();
		map = rcu_dereference(r->chunks[i].map);
		for (c = 0; map && map->job && c < map->nr_copies; c++)
			if (map->copies[c].node == node)
				hbmpool_resync_fail(map->job, -ENODEV);
		rcu_read_unlock();
		/* a replicated chunk with a good copy left keeps its pages */
		if (!hbmpool_chunk_on_node(r, i, node) || hbmpool_chunk_good(r, i))
			continue;
		hbmpool_huge_drop_range(r, (pgoff_t)i * per_chunk,
					(pgoff_t)(i + 1) * per_chunk - 1);
		xa_for_each_range(&r->pages, index, entry, (pgoff_t)i * per_chunk,
				  (pgoff_t)(i + 1) * per_chunk - 1) {
			struct page *page;

			page = hbmpool_lookup(r, index);
			if (!page)
				continue;
			hbmpool_drop_page(r, page);
			put_page(page);
			cond_resched();
		}
	}
}

/* ---- init/exit ---- */

static int hbmpool_fs_init_fs_context(struct fs_context *fc)
{
	return init_pseudo(fc, HBMPOOL_FS_MAGIC) ? 0 : -ENOMEM;
}

static struct file_system_type hbmpool_fs_type = {
	.name = "hbmpool",
	.init_fs_context = hbmpool_fs_init_fs_context,
	.kill_sb = kill_anon_super,
};

int hbmpool_regions_init(void)
{
	hbmpool_mnt = kern_mount(&hbmpool_fs_type);
	return PTR_ERR_OR_ZERO(hbmpool_mnt);
}

void hbmpool_regions_exit(void)
{
	kern_unmount(hbmpool_mnt);
	WARN_ON(!xa_empty(&hbmpool_regions));
}
