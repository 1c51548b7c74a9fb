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

static const char * const hbmpool_link_names[] = {
	[HBMPOOL_LINK_LOCAL] = "local",
	[HBMPOOL_LINK_SCALEUP] = "scaleup",
	[HBMPOOL_LINK_SCALEOUT] = "scaleout",
	[HBMPOOL_LINK_SCALEACROSS] = "scaleacross",
};

static struct hbmpool_node *to_node(struct kobject *kobj)
{
	return container_of(kobj, struct hbmpool_node, kobj);
}

struct hbmpool_node *__hbmpool_node_lookup(u32 id)
{
	lockdep_assert_held(&hbmpool_nodes_lock);
	return xa_load(&hbmpool_nodes, id);
}

static const char * const hbmpool_node_state_names[] = {
	[HBMPOOL_NODE_LIVE] = "up",
	[HBMPOOL_NODE_UNREACHABLE] = "down",
	[HBMPOOL_NODE_FENCED] = "fenced",
	[HBMPOOL_NODE_REMOVED] = "removed",
};

/**
 * hbmpool_node_link_changed - a transport tells the link to @node went
 *	down or came back
 * @node: a node of the transport
 * @up: the link works
 *
 * Requests to a node whose link is down fail at once with -ENOLINK.  A
 * fenced or removed node stays so.  May sleep.
 */
void hbmpool_node_link_changed(struct hbmpool_node *node, bool up)
{
	mutex_lock(&hbmpool_nodes_lock);
	if (node->state == HBMPOOL_NODE_LIVE ||
	    node->state == HBMPOOL_NODE_UNREACHABLE)
		WRITE_ONCE(node->state, up ? HBMPOOL_NODE_LIVE :
			   HBMPOOL_NODE_UNREACHABLE);
	mutex_unlock(&hbmpool_nodes_lock);
}
EXPORT_SYMBOL_GPL(hbmpool_node_link_changed);

static bool hbmpool_node_is_local(const struct hbmpool_node *node)
{
	return node->id == HBMPOOL_LOCAL_NODE;
}

/* ---- sysfs ---- */

static ssize_t id_show(struct kobject *kobj, struct hbmpool_attr *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_node(kobj)->id);
}

static ssize_t state_show(struct kobject *kobj, struct hbmpool_attr *a,
			  char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  hbmpool_node_state_names[READ_ONCE(to_node(kobj)->state)]);
}

static ssize_t distance_show(struct kobject *kobj, struct hbmpool_attr *a,
			     char *buf)
{
	return sysfs_emit(buf, "%u\n", to_node(kobj)->distance);
}

static ssize_t link_type_show(struct kobject *kobj, struct hbmpool_attr *a,
			      char *buf)
{
	return sysfs_emit(buf, "%s\n", hbmpool_link_names[to_node(kobj)->link]);
}

static ssize_t transport_show(struct kobject *kobj, struct hbmpool_attr *a,
			      char *buf)
{
	struct hbmpool_node *node = to_node(kobj);

	return sysfs_emit(buf, "%s\n", node->transport ? node->transport->name : "local");
}

static ssize_t capacity_bytes_show(struct kobject *kobj,
				   struct hbmpool_attr *a, char *buf)
{
	struct hbmpool_node *node = to_node(kobj);

	if (hbmpool_node_is_local(node))
		return sysfs_emit(buf, "%lu\n",
				  READ_ONCE(hbmpool_cache_budget) << PAGE_SHIFT);
	return sysfs_emit(buf, "%llu\n", node->capacity);
}

static ssize_t free_bytes_show(struct kobject *kobj, struct hbmpool_attr *a,
			       char *buf)
{
	struct hbmpool_node *node = to_node(kobj);

	if (hbmpool_node_is_local(node)) {
		long left = READ_ONCE(hbmpool_cache_budget) - hbmpool_cache_nr_cached();

		return sysfs_emit(buf, "%lu\n",
				  left > 0 ? (unsigned long)left << PAGE_SHIFT : 0);
	}
	return sysfs_emit(buf, "%llu\n", node->transport->ops->free_bytes(node));
}

static struct hbmpool_attr node_attrs[] = {
	HBMPOOL_ATTR_RO(id, id_show),
	HBMPOOL_ATTR_RO(state, state_show),
	HBMPOOL_ATTR_RO(distance, distance_show),
	HBMPOOL_ATTR_RO(link_type, link_type_show),
	HBMPOOL_ATTR_RO(transport, transport_show),
	HBMPOOL_ATTR_RO(capacity_bytes, capacity_bytes_show),
	HBMPOOL_ATTR_RO(free_bytes, free_bytes_show),
};

static struct attribute *node_attr_list[ARRAY_SIZE(node_attrs) + 1];

static const struct attribute_group node_group = {
	.attrs = node_attr_list,
};

static const struct attribute_group *node_groups[] = {
	&node_group,
	&hbmpool_stats_group,
	NULL,
};

static void hbmpool_node_release(struct kobject *kobj)
{
	struct hbmpool_node *node = to_node(kobj);

	if (node->transport) {
		node->transport->ops->release(node);
		hbmpool_transport_put(node->transport);
	}
	kfree(node->priv);
	hbmpool_counters_free(&node->stats);
	kfree(node);
	hbmpool_kobj_released();
}

const struct kobj_type hbmpool_node_ktype = {
	.release = hbmpool_node_release,
	.sysfs_ops = &hbmpool_sysfs_ops,
	.default_groups = node_groups,
};

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
	kobject_init(&node->kobj, &hbmpool_node_ktype);	/* release frees from here on */
	if (hbmpool_counters_init(&node->stats))
		goto err_put;
	snprintf(name, sizeof(name), "node%u", id);
	node->debugfs = debugfs_create_dir(name, hbmpool_debugfs_root);
	debugfs_create_bool("fail_fetch", 0644, node->debugfs, &node->fail_fetch);
	debugfs_create_bool("fail_writeback", 0644, node->debugfs,
			    &node->fail_writeback);
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
	kobject_put(&node->kobj);
	*errp = err;
	return NULL;
}

/* Publishes a node; on error the caller's reference is dropped. */
static int hbmpool_node_publish(struct hbmpool_node *node)
{
	int err;

	lockdep_assert_held(&hbmpool_nodes_lock);
	err = kobject_add(&node->kobj, hbmpool_nodes_kobj, "node%u", node->id);
	if (!err)
		err = xa_insert(&hbmpool_nodes, node->id, node, GFP_KERNEL);
	if (err) {
		kobject_del(&node->kobj);
		debugfs_remove_recursive(node->debugfs);
		kobject_put(&node->kobj);
	}
	return err;
}

ssize_t hbmpool_new_node_store(struct kobject *kobj, struct hbmpool_attr *a,
			       const char *buf, size_t len)
{
	char link_name[16] = "scaleup";
	struct hbmpool_transport *t;
	u32 id, cap, dist;
	struct hbmpool_node *node;
	int n, link, err;
	char extra;

	n = sscanf(buf, "%u %u %u %15s %c", &id, &cap, &dist, link_name, &extra);
	if (n < 3 || n > 4 || id == HBMPOOL_LOCAL_NODE || id >= HBMPOOL_MAX_NODES ||
	    !cap || cap > HBMPOOL_CAPACITY_MAX_MIB ||
	    dist <= HBMPOOL_DISTANCE_LOCAL || dist > HBMPOOL_DISTANCE_MAX)
		goto err_usage;
	link = sysfs_match_string(hbmpool_link_names, link_name);
	if (link <= HBMPOOL_LINK_LOCAL)
		goto err_usage;

	err = hbmpool_ctl_begin();
	if (err)
		return err;
	mutex_lock(&hbmpool_nodes_lock);
	if (__hbmpool_node_lookup(id)) {
		mutex_unlock(&hbmpool_nodes_lock);
		hbmpool_ctl_end();
		pr_err("new_node: node %u exists\n", id);
		return -EEXIST;
	}
	err = -ENODEV;
	t = hbmpool_transport_get("sim");
	if (!t)
		goto out_unlock;
	node = hbmpool_node_alloc(id, dist, link, (u64)cap << 20, t, &err);
	if (!node)
		goto out_unlock;
	/* on failure, publish dropped the reference and with it the transport */
	err = hbmpool_node_publish(node);
out_unlock:
	mutex_unlock(&hbmpool_nodes_lock);
	hbmpool_ctl_end();
	if (err)
		return err;
	pr_info("node %u: %u MiB, distance %u, %s link, sim transport\n",
		id, cap, dist, hbmpool_link_names[link]);
	return len;

err_usage:
	pr_err("new_node: expected \"ID CAPACITY_MIB DISTANCE [LINK]\": ID 1..63, CAPACITY_MIB 1..65536, DISTANCE 11..255, LINK scaleup|scaleout|scaleacross\n");
	return -EINVAL;
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
	kobject_del(&node->kobj);
	xa_erase(&hbmpool_nodes, node->id);
}

ssize_t hbmpool_del_node_store(struct kobject *kobj, struct hbmpool_attr *a,
			       const char *buf, size_t len)
{
	struct hbmpool_node *node;
	u32 id;
	int err;

	if (kstrtou32(buf, 0, &id) || id >= HBMPOOL_MAX_NODES) {
		pr_err("del_node: expected a node id 1..%u\n",
		       HBMPOOL_MAX_NODES - 1);
		return -EINVAL;
	}
	if (id == HBMPOOL_LOCAL_NODE) {
		pr_err("del_node: node 0 is the local node\n");
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
		pr_err("del_node: no node %u\n", id);
		return -ENODEV;
	}
	return len;
}

/* ---- init/exit ---- */

int hbmpool_nodes_init(void)
{
	struct hbmpool_node *local;
	int i, err;

	for (i = 0; i < ARRAY_SIZE(node_attrs); i++)
		node_attr_list[i] = &node_attrs[i].attr;

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
