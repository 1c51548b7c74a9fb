// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpool nodes: the members of the pooled domain, their states, sysfs and
 * debugfs directories, and their transports.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/xarray.h>
#include <net/netlink.h>

#include "hbmpool.h"

/*
 * hbmpool_nodes_lock protects the node table (publication and removal of
 * nodes, node states) and serialises placement, so that a region's
 * reservations and the node set they were checked against agree.  Lookups
 * take it too: the table is not read on the fault path.
 */
DEFINE_MUTEX(hbmpool_nodes_lock);
static DEFINE_XARRAY(hbmpool_nodes);		/* id -> node */

#define HBMPOOL_CAPACITY_MAX_MIB	65536U

static struct hbmpool_node *to_node(struct device *dev)
{
	return container_of(dev, struct hbmpool_node, dev);
}

struct hbmpool_node *__hbmpool_node_lookup(u32 id)
{
	lockdep_assert_held(&hbmpool_nodes_lock);
	return xa_load(&hbmpool_nodes, id);
}

/* Bytes @node exports; node 0, the local cache: its budget. */
u64 hbmpool_node_capacity(struct hbmpool_node *node)
{
	if (!node->transport)
		return (u64)READ_ONCE(hbmpool_cache_budget) << PAGE_SHIFT;
	return node->capacity;
}

/* Bytes of @node not reserved; node 0: budget minus cached pages. */
u64 hbmpool_node_free(struct hbmpool_node *node)
{
	if (!node->transport) {
		long left = READ_ONCE(hbmpool_cache_budget) - hbmpool_cache_nr_cached();

		return left > 0 ? (u64)left << PAGE_SHIFT : 0;
	}
	return node->transport->ops->free_bytes(node);
}

/*
 * A reference to the first node whose id is at least *@id, for a walk of
 * the table (netlink dumps); *@id is set to its id.  NULL at the end.
 */
struct hbmpool_node *hbmpool_node_get_next(unsigned long *id)
{
	struct hbmpool_node *node;

	mutex_lock(&hbmpool_nodes_lock);
	node = xa_find(&hbmpool_nodes, id, ULONG_MAX, XA_PRESENT);
	if (node)
		hbmpool_node_get(node);
	mutex_unlock(&hbmpool_nodes_lock);
	return node;
}

/**
 * hbmpool_node_link_changed - a transport tells the link to @node went
 *	down or came back
 * @node: a node of the transport
 * @up: the link works
 *
 * Requests to a node whose link is down fail at once with -ENOLINK.  A
 * fenced or removed node stays so.  May sleep (it sends a uevent).
 */
void hbmpool_node_link_changed(struct hbmpool_node *node, bool up)
{
	enum hbmpool_node_state from = up ? HBMPOOL_NODE_UNREACHABLE :
					    HBMPOOL_NODE_LIVE;
	enum hbmpool_node_state to = up ? HBMPOOL_NODE_LIVE :
					  HBMPOOL_NODE_UNREACHABLE;

	/*
	 * Lock-free: a transport may call this from a handler that node
	 * removal waits for under hbmpool_nodes_lock (a debugfs knob).
	 * Removal sets REMOVED before it waits, so no event follows it.
	 */
	if (cmpxchg(&node->state, from, to) == from &&
	    device_is_registered(&node->dev)) {
		kobject_uevent(&node->dev.kobj, KOBJ_CHANGE);
		hbmpool_event_node(node, HBMPOOL_EVENT_NODE_CHANGE);
	}
}
EXPORT_SYMBOL_GPL(hbmpool_node_link_changed);

static void hbmpool_node_release(struct device *dev)
{
	struct hbmpool_node *node = to_node(dev);

	if (node->transport) {
		node->transport->ops->release(node);
		hbmpool_transport_put(node->transport);
	}
	kfree(node->priv);
	hbmpool_counters_free(&node->stats);
	kfree(node);
	hbmpool_kobj_released();
}

/* ---- debugfs: fault injection for every transport ---- */

static int hbmpool_fail_knob_get(void *data, u64 *val)
{
	*val = READ_ONCE(*(bool *)data);
	return 0;
}

static int hbmpool_fail_knob_set(void *data, u64 val)
{
	if (val > 1) {
		pr_err("fail_fetch, fail_writeback: expected 0 or 1\n");
		return -EINVAL;
	}
	WRITE_ONCE(*(bool *)data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(hbmpool_fail_knob_fops, hbmpool_fail_knob_get,
			 hbmpool_fail_knob_set, "%llu\n");

/* ---- creation and removal ---- */

/*
 * A new node, not yet published, on transport @t (NULL: node 0) whose
 * reference it takes over.  Its debugfs directory exists (node->debugfs)
 * before the transport attaches, which may add files to it.
 */
static struct hbmpool_node *hbmpool_node_alloc(u32 id, u32 distance,
					       enum hbmpool_link link,
					       u64 capacity,
					       struct hbmpool_transport *t,
					       int *errp)
{
	struct hbmpool_node *node;
	char name[16];
	int err = -ENOMEM;

	node = kzalloc(sizeof(*node), GFP_KERNEL);
	if (!node) {
		if (t)
			hbmpool_transport_put(t);
		*errp = -ENOMEM;
		return NULL;
	}
	node->id = id;
	node->distance = distance;
	node->link = link;
	node->capacity = capacity;
	node->state = HBMPOOL_NODE_LIVE;
	hbmpool_kobj_born();
	device_initialize(&node->dev);		/* release frees from here on */
	node->dev.release = hbmpool_node_release;
	hbmpool_sysfs_node_init(node);
	if (dev_set_name(&node->dev, "node%u", id) ||
	    hbmpool_counters_init(&node->stats))
		goto err_put;
	snprintf(name, sizeof(name), "node%u", id);
	node->debugfs = debugfs_create_dir(name, hbmpool_debugfs_root);
	debugfs_create_file_unsafe("fail_fetch", 0644, node->debugfs,
				   &node->fail_fetch, &hbmpool_fail_knob_fops);
	debugfs_create_file_unsafe("fail_writeback", 0644, node->debugfs,
				   &node->fail_writeback, &hbmpool_fail_knob_fops);
	if (!t)
		return node;
	if (t->node_priv_size) {
		node->priv = kzalloc(t->node_priv_size, GFP_KERNEL);
		if (!node->priv) {
			hbmpool_transport_put(t);
			goto err_put;
		}
	}
	err = t->ops->attach(node, NULL);
	node->transport = t;	/* release calls ->release(), which undoes attach */
	if (err)
		goto err_put;
	return node;

err_put:
	debugfs_remove_recursive(node->debugfs);
	hbmpool_node_put(node);
	*errp = err;
	return NULL;
}

/* Publishes a node; on error the caller's reference is dropped. */
static int hbmpool_node_publish(struct hbmpool_node *node)
{
	int err;

	lockdep_assert_held(&hbmpool_nodes_lock);
	err = xa_insert(&hbmpool_nodes, node->id, node, GFP_KERNEL);
	if (err)
		goto err_put;
	err = device_add(&node->dev);	/* KOBJ_ADD to udev */
	if (err)
		goto err_erase;
	err = hbmpool_sysfs_node_link(node);
	if (err)
		goto err_del;
	hbmpool_event_node(node, HBMPOOL_EVENT_NODE_ADD);
	return 0;

err_del:
	device_del(&node->dev);
err_erase:
	xa_erase(&hbmpool_nodes, node->id);
err_put:
	debugfs_remove_recursive(node->debugfs);
	hbmpool_node_put(node);
	return err;
}

static void hbmpool_node_remove(struct hbmpool_node *node);
static void __hbmpool_node_unpublish(struct hbmpool_node *node);

/*
 * A refusal about node @id: @msg (a string literal) goes to the netlink
 * caller, or to the log for sysfs writers.
 */
static void hbmpool_node_refuse(struct netlink_ext_ack *extack, u32 id,
				const char *msg)
{
	if (extack)
		extack->_msg = msg;
	else
		pr_err("node %u: %s\n", id, msg);
}

/**
 * hbmpool_node_create - a new node of the domain
 * @id: 1..HBMPOOL_MAX_NODES - 1, not in use
 * @transport: the name of a registered transport
 * @capacity: bytes the node exports, page aligned
 * @distance: HBMPOOL_DISTANCE_LOCAL + 1 .. HBMPOOL_DISTANCE_MAX
 * @link: not HBMPOOL_LINK_LOCAL
 * @extack: for netlink callers; NULL logs instead
 *
 * The one way to create a node, for netlink and sysfs.  Return: 0, -EINVAL,
 * -EEXIST, -ENOENT (no such transport), -ENODEV (module going), -ENOMEM.
 */
int hbmpool_node_create(u32 id, const char *transport, u64 capacity,
			u32 distance, enum hbmpool_link link,
			struct netlink_ext_ack *extack)
{
	struct hbmpool_transport *t;
	struct hbmpool_node *node;
	int err;

	if (id == HBMPOOL_LOCAL_NODE || id >= HBMPOOL_MAX_NODES) {
		hbmpool_node_refuse(extack, id, "node ids are 1..63 (0 is the local node)");
		return -EINVAL;
	}
	if (!capacity || !PAGE_ALIGNED(capacity) ||
	    capacity > ((u64)HBMPOOL_CAPACITY_MAX_MIB << 20)) {
		hbmpool_node_refuse(extack, id, "capacity: page aligned, at most 64 GiB");
		return -EINVAL;
	}
	if (distance <= HBMPOOL_DISTANCE_LOCAL || distance > HBMPOOL_DISTANCE_MAX) {
		hbmpool_node_refuse(extack, id, "distance: 11..255");
		return -EINVAL;
	}
	if (link == HBMPOOL_LINK_LOCAL || link > HBMPOOL_LINK_SCALEACROSS) {
		hbmpool_node_refuse(extack, id, "link type: scaleup, scaleout or scaleacross");
		return -EINVAL;
	}
	t = hbmpool_transport_get(transport);
	if (!t) {
		hbmpool_node_refuse(extack, id, "no such transport");
		return -ENOENT;
	}
	err = hbmpool_ctl_begin();
	if (err) {
		hbmpool_transport_put(t);
		return err;
	}
	mutex_lock(&hbmpool_nodes_lock);
	if (__hbmpool_node_lookup(id)) {
		hbmpool_transport_put(t);
		hbmpool_node_refuse(extack, id, "a node of that id exists");
		err = -EEXIST;
		goto out_unlock;
	}
	node = hbmpool_node_alloc(id, distance, link, capacity, t, &err);
	/* on failure, publish drops the reference and with it the transport */
	if (node)
		err = hbmpool_node_publish(node);
out_unlock:
	mutex_unlock(&hbmpool_nodes_lock);
	hbmpool_ctl_end();
	if (!err)
		pr_info("node %u: %llu MiB, distance %u, %s link, %s transport\n",
			id, capacity >> 20, distance, hbmpool_link_name(link),
			transport);
	return err;
}

ssize_t hbmpool_new_node_store(const char *buf, size_t len)
{
	char link_name[16] = "scaleup";
	u32 id, cap, dist;
	int n, link, err;
	char extra;

	n = sscanf(buf, "%u %u %u %15s %c", &id, &cap, &dist, link_name, &extra);
	link = n >= 3 && n <= 4 ? hbmpool_link_parse(link_name) : -EINVAL;
	if (link <= HBMPOOL_LINK_LOCAL || !cap || cap > HBMPOOL_CAPACITY_MAX_MIB) {
		pr_err("new_node: expected \"ID CAPACITY_MIB DISTANCE [LINK]\": ID 1..63, CAPACITY_MIB 1..65536, DISTANCE 11..255, LINK scaleup|scaleout|scaleacross\n");
		return -EINVAL;
	}
	err = hbmpool_node_create(id, "sim", (u64)cap << 20, dist, link, NULL);
	return err ?: len;
}

/**
 * hbmpool_node_delete - remove node @id from the domain
 * @id: a node other than node 0
 * @extack: for netlink callers; NULL logs instead
 *
 * Its cached pages are dropped (dirty ones are lost and counted), regions
 * placed on it get SIGBUS there.  Return: 0, -EINVAL, -ENODEV.
 */
int hbmpool_node_delete(u32 id, struct netlink_ext_ack *extack)
{
	struct hbmpool_node *node;
	int err;

	if (id == HBMPOOL_LOCAL_NODE) {
		hbmpool_node_refuse(extack, id, "node 0 is the local node");
		return -EINVAL;
	}
	err = hbmpool_ctl_begin();
	if (err)
		return err;
	mutex_lock(&hbmpool_nodes_lock);
	node = __hbmpool_node_lookup(id);
	if (node)
		__hbmpool_node_unpublish(node);
	mutex_unlock(&hbmpool_nodes_lock);
	if (node)
		hbmpool_node_remove(node);
	hbmpool_ctl_end();
	if (!node) {
		hbmpool_node_refuse(extack, id, "no such node");
		return -ENODEV;
	}
	return 0;
}

ssize_t hbmpool_del_node_store(const char *buf, size_t len)
{
	u32 id;
	int err;

	if (kstrtou32(buf, 0, &id) || id >= HBMPOOL_MAX_NODES) {
		pr_err("del_node: expected a node id 1..%u\n",
		       HBMPOOL_MAX_NODES - 1);
		return -EINVAL;
	}
	err = hbmpool_node_delete(id, NULL);
	return err ?: len;
}

/*
 * After __hbmpool_node_unpublish(): drops the pages cached from the node (a
 * node that is gone cannot be written back to) and the table's reference.
 * Regions placed on it keep theirs; touching its pages gives SIGBUS.
 */
static void hbmpool_node_remove(struct hbmpool_node *node)
{
	struct hbmpool_region **regions;
	unsigned long i, n;

	regions = hbmpool_regions_get_all(&n);
	if (!regions)
		pr_warn("node %u: out of memory, cached pages of the node stay until evicted\n",
			node->id);
	for (i = 0; regions && i < n; i++) {
		hbmpool_region_node_removed(regions[i], node);
		hbmpool_region_put(regions[i]);
	}
	kvfree(regions);
	pr_info("node %u removed\n", node->id);
	hbmpool_node_put(node);
}

/*
 * Takes @node out of the table.  Its id stays taken until its sysfs and
 * debugfs directories are gone, so that a new node of the same id cannot
 * collide with them.  Transport shutdown completes what is in flight; no
 * completion takes hbmpool_nodes_lock.
 */
static void __hbmpool_node_unpublish(struct hbmpool_node *node)
{
	lockdep_assert_held(&hbmpool_nodes_lock);
	WRITE_ONCE(node->state, HBMPOOL_NODE_REMOVED);
	debugfs_remove_recursive(node->debugfs);	/* waits for open knob handlers */
	node->debugfs = NULL;
	if (node->transport)
		node->transport->ops->shutdown(node);
	hbmpool_sysfs_node_unlink(node);
	device_del(&node->dev);		/* KOBJ_REMOVE to udev */
	xa_erase(&hbmpool_nodes, node->id);
	hbmpool_event_node(node, HBMPOOL_EVENT_NODE_DEL);
}

/* ---- init/exit ---- */

int hbmpool_nodes_init(void)
{
	struct hbmpool_node *local;
	int err;

	local = hbmpool_node_alloc(HBMPOOL_LOCAL_NODE, HBMPOOL_DISTANCE_LOCAL,
				   HBMPOOL_LINK_LOCAL, 0, NULL, &err);
	if (!local)
		return err;
	mutex_lock(&hbmpool_nodes_lock);
	err = hbmpool_node_publish(local);
	mutex_unlock(&hbmpool_nodes_lock);
	return err;
}

void hbmpool_nodes_exit(void)
{
	struct hbmpool_node *node;
	unsigned long id;

	/* every remote node, then node 0 */
	for (;;) {
		mutex_lock(&hbmpool_nodes_lock);
		id = HBMPOOL_LOCAL_NODE;
		node = xa_find_after(&hbmpool_nodes, &id, ULONG_MAX, XA_PRESENT);
		if (!node)
			node = xa_load(&hbmpool_nodes, HBMPOOL_LOCAL_NODE);
		if (node) {
			id = node->id;
			__hbmpool_node_unpublish(node);
		}
		mutex_unlock(&hbmpool_nodes_lock);
		if (!node)
			break;
		if (id == HBMPOOL_LOCAL_NODE)
			hbmpool_node_put(node);
		else
			hbmpool_node_remove(node);
	}
	WARN_ON(!xa_empty(&hbmpool_nodes));
}
