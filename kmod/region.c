// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpool regions: creation and validation, the region file (mmap, ioctls,
 * fsync), sysfs, and teardown.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/idr.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/pagemap.h>
#include <linux/pseudo_fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "hbmpool.h"

#define HBMPOOL_FS_MAGIC	0x48424d50	/* "HBMP" */
#define HBMPOOL_MAX_CHUNKS	BIT(20)

/* hbmpool_regions_lock protects hbmpool_regions and hbmpool_nr_regions. */
DEFINE_MUTEX(hbmpool_regions_lock);
LIST_HEAD(hbmpool_regions);
unsigned long hbmpool_nr_regions;

static DEFINE_IDA(hbmpool_region_ida);
static struct vfsmount *hbmpool_mnt;

static const char * const hbmpool_policy_names[] = {
	[HBMPOOL_POLICY_BIND] = "bind",
	[HBMPOOL_POLICY_INTERLEAVE] = "interleave",
	[HBMPOOL_POLICY_PREFERRED] = "preferred",
};

static struct hbmpool_region *to_region(struct kobject *kobj)
{
	return container_of(kobj, struct hbmpool_region, kobj);
}

/* ---- sysfs ---- */

static ssize_t name_show(struct kobject *kobj, struct hbmpool_attr *a, char *buf)
{
	return sysfs_emit(buf, "%s\n", to_region(kobj)->name);
}

static ssize_t length_show(struct kobject *kobj, struct hbmpool_attr *a,
			   char *buf)
{
	return sysfs_emit(buf, "%llu\n", to_region(kobj)->length);
}

static ssize_t chunk_size_show(struct kobject *kobj, struct hbmpool_attr *a,
			       char *buf)
{
	return sysfs_emit(buf, "%llu\n", to_region(kobj)->chunk_size);
}

static ssize_t policy_show(struct kobject *kobj, struct hbmpool_attr *a,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  hbmpool_policy_names[to_region(kobj)->policy]);
}

static ssize_t nodemask_show(struct kobject *kobj, struct hbmpool_attr *a,
			     char *buf)
{
	return sysfs_emit(buf, "0x%llx\n", to_region(kobj)->nodemask);
}

static ssize_t cached_pages_show(struct kobject *kobj, struct hbmpool_attr *a,
				 char *buf)
{
	return sysfs_emit(buf, "%ld\n",
			  atomic_long_read(&to_region(kobj)->nr_cached));
}

static ssize_t dirty_pages_show(struct kobject *kobj, struct hbmpool_attr *a,
				char *buf)
{
	return sysfs_emit(buf, "%ld\n",
			  atomic_long_read(&to_region(kobj)->nr_dirty));
}

static struct hbmpool_attr region_attrs[] = {
	HBMPOOL_ATTR_RO(name, name_show),
	HBMPOOL_ATTR_RO(length, length_show),
	HBMPOOL_ATTR_RO(chunk_size, chunk_size_show),
	HBMPOOL_ATTR_RO(policy, policy_show),
	HBMPOOL_ATTR_RO(nodemask, nodemask_show),
	HBMPOOL_ATTR_RO(cached_pages, cached_pages_show),
	HBMPOOL_ATTR_RO(dirty_pages, dirty_pages_show),
};

static struct attribute *region_attr_list[ARRAY_SIZE(region_attrs) + 1];

static const struct attribute_group region_group = {
	.attrs = region_attr_list,
};

static const struct attribute_group *region_groups[] = {
	&region_group,
	&hbmpool_stats_group,
	NULL,
};

/* ---- the list of live regions ---- */

static void __hbmpool_region_list(struct hbmpool_region *r)
{
	lockdep_assert_held(&hbmpool_regions_lock);
	list_add_tail(&r->list, &hbmpool_regions);
	hbmpool_nr_regions++;
}

static void __hbmpool_region_unlist(struct hbmpool_region *r)
{
	lockdep_assert_held(&hbmpool_regions_lock);
	list_del(&r->list);
	hbmpool_nr_regions--;
}

/* ---- teardown ---- */

/* No file, no mapping and no other reference is left: nobody can read the pages. */
static void hbmpool_region_drop_all(struct hbmpool_region *r)
{
	unsigned long index;
	void *entry;

	xa_for_each(&r->pages, index, entry) {
		struct page *page;

		if (xa_is_value(entry)) {
			xa_erase(&r->pages, index);
			continue;
		}
		/* The shrinker may race us to a page: take it by lookup. */
		page = hbmpool_lookup(r, index, NULL);
		if (!page)
			continue;
		lock_page(page);
		if (hbmpool_remove_page(r, page))
			put_page(page);		/* the cache's reference */
		unlock_page(page);
		put_page(page);
		cond_resched();
	}
	hbmpool_cache_forget_region();
	WARN_ON_ONCE(atomic_long_read(&r->nr_cached));
	xa_destroy(&r->pages);
}

static void hbmpool_region_release(struct kobject *kobj)
{
	struct hbmpool_region *r = to_region(kobj);

	if (!list_empty(&r->list)) {
		mutex_lock(&hbmpool_regions_lock);
		__hbmpool_region_unlist(r);
		mutex_unlock(&hbmpool_regions_lock);
	}
	hbmpool_region_drop_all(r);
	if (r->placed)
		hbmpool_unplace(r);
	if (r->inode)
		iput(r->inode);
	if (r->id != U32_MAX)
		ida_free(&hbmpool_region_ida, r->id);
	hbmpool_counters_free(&r->stats);
	kvfree(r->chunks);
	kfree(r);
	module_put(THIS_MODULE);
}

const struct kobj_type hbmpool_region_ktype = {
	.release = hbmpool_region_release,
	.sysfs_ops = &hbmpool_sysfs_ops,
	.default_groups = region_groups,
};

/* ---- the region file ---- */

static int hbmpool_region_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct hbmpool_region *r = file->private_data;
	unsigned long pages = vma_pages(vma);

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;		/* a private copy of pooled memory makes no sense */
	if (vma->vm_pgoff >= r->nr_pages || pages > r->nr_pages - vma->vm_pgoff)
		return -EINVAL;
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
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

/* Writes back the dirty pages of [first, end); -EIO if any failed. */
static int hbmpool_region_sync(struct hbmpool_region *r, pgoff_t first,
			       pgoff_t end, u64 *done, u64 *failed)
{
	unsigned long index;
	void *entry;

	*done = 0;
	*failed = 0;
	xa_for_each_range(&r->pages, index, entry, first, end - 1) {
		struct page *page;

		if (xa_is_value(entry))
			continue;
		page = hbmpool_lookup(r, index, NULL);
		if (!page)
			continue;
		if (test_bit(HBM_PG_DIRTY, &page->private)) {
			if (hbmpool_writeback_page(r, page))
				(*failed)++;
			else
				(*done)++;
		}
		put_page(page);
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return *failed ? -EIO : 0;
}

static long hbmpool_ioc_sync(struct hbmpool_region *r, void __user *argp,
			     bool prefetch)
{
	struct hbmpool_range rg;
	pgoff_t first, end, i;
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
		for (i = first; i < end; i++) {
			int ret;

			if (!hbmpool_cache_has_room())
				break;	/* a hint never makes room by evicting */
			if (xa_load(&r->pages, i))
				continue;
			ret = hbmpool_fill(r, i, false, true);
			if (!ret)
				rg.pages_done++;
			else if (ret != -EEXIST)
				rg.pages_failed++;
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

static long hbmpool_ioc_info(struct hbmpool_region *r, void __user *argp)
{
	struct hbmpool_region_info info;
	struct hbmpool_chunk_info __user *uchunks;
	u32 usize, i, n;
	int err;

	err = hbmpool_copy_in(&info, sizeof(info), HBMPOOL_REGION_INFO_SIZE_VER0,
			      argp, &usize);
	if (err)
		return err;
	if (info.flags || info.pad || memchr_inv(info.reserved, 0, sizeof(info.reserved)))
		return -EINVAL;

	uchunks = u64_to_user_ptr(info.chunks_ptr);
	n = info.chunks_ptr ? min(info.nr_chunks_max, r->nr_chunks) : 0;
	for (i = 0; i < n; i++) {
		struct hbmpool_chunk_info ci = {
			.node = r->chunks[i].node->id,
			.node_offset = r->chunks[i].offset,
		};

		if (copy_to_user(&uchunks[i], &ci, sizeof(ci)))
			return -EFAULT;
	}

	info.size = sizeof(info);
	info.flags = 0;
	info.length = r->length;
	info.chunk_size = r->chunk_size;
	info.nodemask = r->nodemask;
	info.policy = r->policy;
	info.preferred_node = r->preferred;
	memcpy(info.name, r->name, sizeof(info.name));
	info.region_id = r->id;
	info.nr_chunks = r->nr_chunks;
	info.cached_pages = atomic_long_read(&r->nr_cached);
	info.dirty_pages = atomic_long_read(&r->nr_dirty);
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

	hbmpool_counters_read(&r->stats, v);
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

static int hbmpool_region_file_release(struct inode *inode, struct file *file)
{
	hbmpool_region_put(file->private_data);
	return 0;
}

static const struct file_operations hbmpool_region_fops = {
	.owner = THIS_MODULE,
	.mmap = hbmpool_region_mmap,
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

static int hbmpool_check_create(struct hbmpool_region_create *req)
{
	const char *why = NULL;

	if (req->flags)
		why = "unknown flags";
	else if (memchr_inv(req->reserved, 0, sizeof(req->reserved)))
		why = "reserved fields must be zero";
	else if (!req->length || !PAGE_ALIGNED(req->length))
		why = "length must be a non-zero multiple of the page size";
	else if (req->chunk_size && (!is_power_of_2(req->chunk_size) ||
				     req->chunk_size < PAGE_SIZE ||
				     req->chunk_size > HBMPOOL_CHUNK_MAX))
		why = "chunk_size must be 0 or a power of two in [page size, 1 GiB]";
	else if (!req->nodemask)
		why = "empty node set";
	else if (req->nodemask & BIT_ULL(HBMPOOL_LOCAL_NODE))
		why = "node 0 is the local cache and holds no chunks";
	else if (req->policy > HBMPOOL_POLICY_MAX)
		why = "unknown policy";
	else if (req->policy == HBMPOOL_POLICY_PREFERRED &&
		 (req->preferred_node >= HBMPOOL_MAX_NODES ||
		  !(req->nodemask & BIT_ULL(req->preferred_node))))
		why = "preferred node not in the node set";
	else if (req->policy != HBMPOOL_POLICY_PREFERRED && req->preferred_node)
		why = "preferred_node is for the preferred policy only";
	else if (!memchr(req->name, 0, sizeof(req->name)))
		why = "name is not NUL-terminated";
	else if (hbmpool_nr_chunks(req->length,
				   req->chunk_size ?: HBMPOOL_CHUNK_DEFAULT) >
		 HBMPOOL_MAX_CHUNKS)
		why = "more than 2^20 chunks: use a larger chunk size";
	if (!why)
		return 0;
	pr_info_ratelimited("region create by %s[%d]: %s\n", current->comm,
			    task_pid_nr(current), why);
	return -EINVAL;
}

long hbmpool_ioc_region_create(void __user *argp)
{
	struct hbmpool_region_create req;
	struct hbmpool_region *r;
	struct inode *inode;
	struct file *file;
	u32 usize;
	int err, id, fd;

	err = hbmpool_copy_in(&req, sizeof(req), HBMPOOL_REGION_CREATE_SIZE_VER0,
			      argp, &usize);
	if (err)
		return err;
	err = hbmpool_check_create(&req);
	if (err)
		return err;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	__module_get(THIS_MODULE);	/* dropped by the release below */
	r->id = U32_MAX;
	INIT_LIST_HEAD(&r->list);
	xa_init(&r->pages);
	kobject_init(&r->kobj, &hbmpool_region_ktype);	/* release undoes from here on */

	r->length = req.length;
	r->chunk_size = req.chunk_size ?: HBMPOOL_CHUNK_DEFAULT;
	r->chunk_shift = ilog2(r->chunk_size);
	r->nodemask = req.nodemask;
	r->policy = req.policy;
	r->preferred = req.preferred_node;
	memcpy(r->name, req.name, sizeof(r->name));
	r->nr_pages = r->length >> PAGE_SHIFT;
	r->nr_chunks = hbmpool_nr_chunks(r->length, r->chunk_size);

	err = hbmpool_counters_init(&r->stats);
	if (err)
		goto err_put;
	err = -ENOMEM;
	r->chunks = kvcalloc(r->nr_chunks, sizeof(*r->chunks), GFP_KERNEL);
	if (!r->chunks)
		goto err_put;
	id = ida_alloc(&hbmpool_region_ida, GFP_KERNEL);
	if (id < 0) {
		err = id;
		goto err_put;
	}
	r->id = id;

	err = hbmpool_place(r);
	r->placed = !err;
	if (err) {
		pr_info_ratelimited("region create by %s[%d]: %s\n",
				    current->comm, task_pid_nr(current),
				    err == -ENODEV ? "a node of the set does not exist" :
				    "not enough free capacity on the node set");
		goto err_put;
	}

	inode = alloc_anon_inode(hbmpool_mnt->mnt_sb);
	if (IS_ERR(inode)) {
		err = PTR_ERR(inode);
		goto err_put;
	}
	inode->i_private = r;
	inode->i_size = r->length;
	r->inode = inode;	/* the region's reference */
	ihold(inode);		/* the file's reference */

	err = kobject_add(&r->kobj, hbmpool_regions_kobj, "region%u", r->id);
	if (err)
		goto err_iput;

	fd = get_unused_fd_flags(O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = fd;
		goto err_iput;
	}
	file = alloc_file_pseudo(inode, hbmpool_mnt, "hbmpool-region", O_RDWR,
				 &hbmpool_region_fops);
	if (IS_ERR(file)) {
		err = PTR_ERR(file);
		goto err_put_fd;
	}
	__module_get(THIS_MODULE);	/* for the file, dropped by fops_put() */
	file->private_data = r;		/* the file holds the creation reference */

	mutex_lock(&hbmpool_regions_lock);
	__hbmpool_region_list(r);
	mutex_unlock(&hbmpool_regions_lock);

	req.size = sizeof(req);
	req.region_id = r->id;
	req.fd = fd;
	err = hbmpool_copy_out(argp, &req, sizeof(req), usize);
	if (err) {
		put_unused_fd(fd);
		fput(file);
		return err;
	}
	fd_install(fd, file);
	return fd;

err_put_fd:
	put_unused_fd(fd);
err_iput:
	iput(inode);
err_put:
	kobject_put(&r->kobj);
	return err;
}

/* ---- node removal ---- */

void hbmpool_region_node_removed(struct hbmpool_region *r,
				 struct hbmpool_node *node)
{
	pgoff_t per_chunk = r->chunk_size >> PAGE_SHIFT;
	unsigned long index;
	void *entry;
	u32 i;

	for (i = 0; i < r->nr_chunks; i++) {
		if (r->chunks[i].node != node)
			continue;
		xa_for_each_range(&r->pages, index, entry, (pgoff_t)i * per_chunk,
				  (pgoff_t)(i + 1) * per_chunk - 1) {
			struct page *page;

			if (xa_is_value(entry))
				continue;
			page = hbmpool_lookup(r, index, NULL);
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
	int i;

	for (i = 0; i < ARRAY_SIZE(region_attrs); i++)
		region_attr_list[i] = &region_attrs[i].attr;
	hbmpool_mnt = kern_mount(&hbmpool_fs_type);
	return PTR_ERR_OR_ZERO(hbmpool_mnt);
}

void hbmpool_regions_exit(void)
{
	kern_unmount(hbmpool_mnt);
	ida_destroy(&hbmpool_region_ida);
}
