// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpool: pooled remote HBM as mmap-able regions with page-fault-driven
 * fetch.  This file: module init/exit, /dev/hbmpool, the gate of the control
 * entry points.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/wait_bit.h>

#include "hbmpool.h"
#include "resync.h"
#include "shm.h"
#include "tcp.h"

static unsigned int cache_pages = 16384;
module_param(cache_pages, uint, 0444);
MODULE_PARM_DESC(cache_pages,
		 "Initial local cache budget in pages (default 16384; live value in /sys/kernel/hbmpool/cache_budget_pages)");

static unsigned int fetch_timeout_ms = 5000;
module_param(fetch_timeout_ms, uint, 0444);
MODULE_PARM_DESC(fetch_timeout_ms,
		 "Initial fetch and write-back timeout in ms (default 5000; live value in /sys/kernel/hbmpool/fetch_timeout_ms)");

static unsigned int readahead_max_pages = HBMPOOL_RA_DEFAULT;
module_param(readahead_max_pages, uint, 0444);
MODULE_PARM_DESC(readahead_max_pages,
		 "Initial largest read-ahead window of a sequential fault pattern, in pages, 1 (off) to 512 (default 128; live value in /sys/kernel/hbmpool/readahead_max_pages)");

struct dentry *hbmpool_debugfs_root;

/*
 * hbmpool_ctl_lock protects hbmpool_enabled and serialises the control
 * entry points (the sysfs stores that create, remove or start something).
 * The flag is set after the last step of module init and cleared before the
 * first step of exit, so that nothing a control file starts outlives the
 * module.
 */
static DEFINE_MUTEX(hbmpool_ctl_lock);
static bool hbmpool_enabled;

/* Enters a control entry point; -ENODEV once the module is going away. */
int hbmpool_ctl_begin(void)
{
	mutex_lock(&hbmpool_ctl_lock);
	if (!hbmpool_enabled) {
		mutex_unlock(&hbmpool_ctl_lock);
		return -ENODEV;
	}
	return 0;
}

void hbmpool_ctl_end(void)
{
	mutex_unlock(&hbmpool_ctl_lock);
}

/* ---- ioctl structure copies ---- */

int hbmpool_copy_in(void *dst, size_t ksize, size_t ver0,
		    void __user *src, u32 *usize)
{
	u32 size;
	int err;

	if (get_user(size, (u32 __user *)src))
		return -EFAULT;
	if (size < ver0)
		return -EINVAL;
	if (size > PAGE_SIZE)
		return -E2BIG;
	err = copy_struct_from_user(dst, ksize, src, size);
	if (err)
		return err;
	*usize = size;
	return 0;
}

int hbmpool_copy_out(void __user *dst, const void *src, size_t ksize, u32 usize)
{
	if (copy_to_user(dst, src, min_t(size_t, ksize, usize)))
		return -EFAULT;
	return 0;
}

/*
 * Kobjects whose release, in this module's text, has not run yet.  Under
 * CONFIG_DEBUG_KOBJECT_RELEASE a release runs seconds after the last put:
 * module exit waits for them.
 */
static atomic_t hbmpool_kobjs_live = ATOMIC_INIT(0);

void hbmpool_kobj_born(void)
{
	atomic_inc(&hbmpool_kobjs_live);
}

/* The last thing a release function does. */
void hbmpool_kobj_released(void)
{
	if (atomic_dec_and_test(&hbmpool_kobjs_live))
		wake_up_var(&hbmpool_kobjs_live);
}

static void hbmpool_kobjs_wait(void)
{
	wait_var_event(&hbmpool_kobjs_live, !atomic_read(&hbmpool_kobjs_live));
}

/* ---- /dev/hbmpool ---- */

static long hbmpool_ioc_features(void __user *argp)
{
	struct hbmpool_features f;
	u32 usize;
	int err, i;

	err = hbmpool_copy_in(&f, sizeof(f), HBMPOOL_FEATURES_SIZE_VER0, argp,
			      &usize);
	if (err)
		return err;
	for (i = 0; i < ARRAY_SIZE(f.reserved); i++)
		if (f.reserved[i])
			return -EINVAL;
	memset(&f, 0, sizeof(f));
	f.size = sizeof(f);
	f.api_version = HBMPOOL_API_VERSION;
	f.features = HBMPOOL_FEAT_POLICY_BIND | HBMPOOL_FEAT_POLICY_INTERLEAVE |
		     HBMPOOL_FEAT_POLICY_PREFERRED | HBMPOOL_FEAT_REGION_INFO |
		     HBMPOOL_FEAT_REGION_STATS | HBMPOOL_FEAT_REGION_SYNC |
		     HBMPOOL_FEAT_REGION_PREFETCH | HBMPOOL_FEAT_REGION_OPEN |
		     HBMPOOL_FEAT_POLICY_WEIGHTED_INTERLEAVE | HBMPOOL_FEAT_RESYNC |
		     HBMPOOL_FEAT_REPLICAS;
	f.max_nodes = HBMPOOL_MAX_NODES;
	f.page_size = PAGE_SIZE;
	f.self_node = READ_ONCE(hbmpool_self_id);
	f.chunk_info_size = sizeof(struct hbmpool_chunk_info);
	return hbmpool_copy_out(argp, &f, sizeof(f), usize);
}

static long hbmpool_ctl_ioctl(struct file *file, unsigned int cmd,
			      unsigned long arg)
{
	void __user *argp = (void __user *)arg;

	if (_IOC_TYPE(cmd) != HBMPOOL_IOC_MAGIC ||
	    _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE))
		return -ENOTTY;

	switch (_IOC_NR(cmd)) {
	case _IOC_NR(HBMPOOL_IOC_GET_FEATURES):
		return hbmpool_ioc_features(argp);
	case _IOC_NR(HBMPOOL_IOC_REGION_CREATE):
		return hbmpool_ioc_region_create(argp);
	case _IOC_NR(HBMPOOL_IOC_REGION_OPEN):
		return hbmpool_ioc_region_open(argp);
	}
	return -ENOTTY;
}

static const struct file_operations hbmpool_ctl_fops = {
	.owner = THIS_MODULE,
	.open = nonseekable_open,
	.unlocked_ioctl = hbmpool_ctl_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice hbmpool_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = HBMPOOL_DEV_NAME,
	.fops = &hbmpool_ctl_fops,
	.mode = 0660,	/* a udev rule grants a group; capacity is a shared resource */
};

/* ---- module ---- */

/*
 * Init builds bottom-up and enables the control files last; exit disables
 * them first and is init read backwards.
 */
static int __init hbmpool_init(void)
{
	int err;

	if (cache_pages < HBMPOOL_BUDGET_MIN || cache_pages > HBMPOOL_BUDGET_MAX ||
	    fetch_timeout_ms < HBMPOOL_TIMEOUT_MIN ||
	    fetch_timeout_ms > HBMPOOL_TIMEOUT_MAX) {
		pr_err("cache_pages must be in [%lu, %lu], fetch_timeout_ms in [%u, %u]\n",
		       HBMPOOL_BUDGET_MIN, HBMPOOL_BUDGET_MAX,
		       HBMPOOL_TIMEOUT_MIN, HBMPOOL_TIMEOUT_MAX);
		return -EINVAL;
	}
	if (readahead_max_pages < 1 || readahead_max_pages > HBMPOOL_RA_MAX) {
		pr_err("readahead_max_pages must be in [1, %u]\n", HBMPOOL_RA_MAX);
		return -EINVAL;
	}
	hbmpool_cache_budget = cache_pages;
	hbmpool_fetch_timeout_ms = fetch_timeout_ms;
	hbmpool_readahead_max = readahead_max_pages;

	err = hbmpool_counters_init(&hbmpool_global_stats);
	if (err)
		return err;

	hbmpool_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
	hbmpool_huge_init();

	err = hbmpool_transport_init();
	if (err)
		goto err_debugfs;

	err = hbmpool_sim_init();
	if (err)
		goto err_transport_exit;

	err = hbmpool_tcp_digest_init();
	if (err)
		goto err_sim_exit;

	err = hbmpool_tcp_client_init();
	if (err)
		goto err_tcp_digest_exit;

	err = hbmpool_shm_client_init();
	if (err)
		goto err_tcp_client_exit;

	err = hbmpool_tcp_home_init();
	if (err)
		goto err_shm_client_exit;

	err = hbmpool_sysfs_init();
	if (err)
		goto err_tcp_home_exit;

	err = hbmpool_pagepool_init();
	if (err)
		goto err_sysfs_exit;

	err = hbmpool_regions_init();
	if (err)
		goto err_pagepool_exit;

	err = hbmpool_nodes_init();
	if (err)
		goto err_regions_exit;

	err = hbmpool_cache_init();
	if (err)
		goto err_nodes_exit;

	err = hbmpool_resync_init();
	if (err)
		goto err_cache_exit;

	err = hbmpool_replication_init();
	if (err)
		goto err_resync_exit;

	err = misc_register(&hbmpool_miscdev);
	if (err)
		goto err_replication_exit;

	err = hbmpool_netlink_init();
	if (err)
		goto err_misc_deregister;

	mutex_lock(&hbmpool_ctl_lock);
	hbmpool_enabled = true;
	mutex_unlock(&hbmpool_ctl_lock);

	pr_info("loaded: version %s, cache budget %lu pages, fetch timeout %u ms\n",
		HBMPOOL_VERSION, hbmpool_cache_budget, hbmpool_fetch_timeout_ms);
	return 0;

err_misc_deregister:
	misc_deregister(&hbmpool_miscdev);
err_replication_exit:
	hbmpool_replicate_stop();
	hbmpool_replication_exit();
err_resync_exit:
	hbmpool_resync_exit();
err_cache_exit:
	hbmpool_cache_exit();
err_nodes_exit:
	hbmpool_nodes_exit();
err_regions_exit:
	hbmpool_regions_exit();
err_pagepool_exit:
	hbmpool_pagepool_exit();
err_sysfs_exit:
	hbmpool_sysfs_exit();
err_tcp_home_exit:
	hbmpool_tcp_home_exit();
	hbmpool_kobjs_wait();
err_shm_client_exit:
	hbmpool_shm_client_exit();
err_tcp_client_exit:
	hbmpool_tcp_client_exit();
err_tcp_digest_exit:
	hbmpool_tcp_digest_exit();
err_sim_exit:
	hbmpool_sim_exit();
err_transport_exit:
	hbmpool_transport_exit();
err_debugfs:
	debugfs_remove_recursive(hbmpool_debugfs_root);
	hbmpool_counters_free(&hbmpool_global_stats);
	return err;
}

static void __exit hbmpool_exit(void)
{
	mutex_lock(&hbmpool_ctl_lock);
	hbmpool_enabled = false;
	mutex_unlock(&hbmpool_ctl_lock);

	/*
	 * Regions hold the module: none is left.  The evictor may still be
	 * in its loop after dropping the last reference of one: the cache
	 * stops it before the nodes go.
	 */
	hbmpool_netlink_exit();
	misc_deregister(&hbmpool_miscdev);
	hbmpool_replicate_stop();	/* it starts resync jobs */
	hbmpool_resync_exit();		/* a move's work may be putting a region */
	hbmpool_cache_exit();
	hbmpool_tcp_home_exit();	/* nothing serves the segment any more */
	hbmpool_nodes_exit();
	hbmpool_replication_exit();	/* no write-back request is left */
	hbmpool_export_exit();		/* no node, so no client of it, is left */
	hbmpool_domain_exit();
	hbmpool_regions_exit();
	hbmpool_huge_exit();
	hbmpool_pagepool_exit();	/* no cache page is left to come back */
	hbmpool_sysfs_exit();
	hbmpool_kobjs_wait();
	hbmpool_shm_client_exit();
	hbmpool_tcp_client_exit();
	hbmpool_tcp_digest_exit();
	hbmpool_sim_exit();
	hbmpool_transport_exit();
	debugfs_remove_recursive(hbmpool_debugfs_root);
	hbmpool_counters_free(&hbmpool_global_stats);
	pr_info("unloaded\n");
}

module_init(hbmpool_init);
module_exit(hbmpool_exit);

MODULE_SOFTDEP("pre: crc32c");	/* the TCP transport's data digests */
MODULE_DESCRIPTION("hbmpool: pooled remote HBM as page-fault-driven memory regions");
MODULE_LICENSE("GPL");
MODULE_VERSION(HBMPOOL_VERSION);
