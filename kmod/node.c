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
#include "pchoice.h"
#include "tcp.h"

/*
 * hbmpool_nodes_lock protects the node table (publication and removal of
 * nodes, node states) and serialises placement, so that a region's
 * reservations and the node set they were checked against agree.  Lookups
 * take it too: the table is not read on the fault path.
 */
DEFINE_MUTEX(hbmpool_nodes_lock);
static DEFINE_XARRAY(hbmpool_nodes);		/* id -> node */
static unsigned int hbmpool_nodes_nr;		/* in hbmpool_nodes */

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

/* Nodes of the domain, this one included. */
unsigned int hbmpool_nr_nodes(void)
{
	return READ_ONCE(hbmpool_nodes_nr);
}

/* Whether this node is the only one in the table. */
bool hbmpool_node_alone(void)
{
	lockdep_assert_held(&hbmpool_nodes_lock);
	return hbmpool_nodes_nr <= 1;
}

/* A consistent copy of @node's settings. */
void hbmpool_node_conf_read(struct hbmpool_node *node,
			    struct hbmpool_node_conf *conf)
{
	spin_lock(&node->conf_lock);
	*conf = node->conf;
	spin_unlock(&node->conf_lock);
}

/* Bytes @node exports; this node, the local cache: its budget. */
u64 hbmpool_node_capacity(struct hbmpool_node *node)
{
	if (!node->transport)
		return (u64)READ_ONCE(hbmpool_cache_budget) << PAGE_SHIFT;
	return node->capacity;
}

/* Bytes of @node not reserved; this node: budget minus cached pages. */
u64 hbmpool_node_free(struct hbmpool_node *node)
{
	if (!node->transport) {
		long left = READ_ONCE(hbmpool_cache_budget) - hbmpool_cache_nr_cached();

		return left > 0 ? (u64)left << PAGE_SHIFT : 0;
	}
	return node->transport->ops->free_bytes(node);
}

/*
 * The weight weighted interleave gives @node with settings @conf (a copy,
 * or node->conf under hbmpool_nodes_lock): the one set, else the automatic
 * one, from its capacity and distance (hbmpool_pweight_auto()).
 */
u32 hbmpool_node_weight(struct hbmpool_node *node,
			const struct hbmpool_node_conf *conf)
{
	if (conf->weight)
		return conf->weight;
	return hbmpool_pweight_auto(hbmpool_node_capacity(node), conf->distance);
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

/* The generation of @node's data: a chunk placed in an older one is lost. */
u32 hbmpool_node_data_gen(struct hbmpool_node *node)
{
	return atomic_read(&node->data_gen);
}
EXPORT_SYMBOL_GPL(hbmpool_node_data_gen);

/**
 * hbmpool_node_data_lost_begin - a transport learnt that @node's memory is new
 * @node: the home
 *
 * Every chunk placed on @node so far is lost: requests about them are
 * refused with -EIO from now on (faults get SIGBUS), and regions report
 * them.  The transport then fails the requests it holds about them and
 * calls hbmpool_node_data_lost_end(), which drops their cached pages.
 */
void hbmpool_node_data_lost_begin(struct hbmpool_node *node)
{
	atomic_inc(&node->data_gen);
}
EXPORT_SYMBOL_GPL(hbmpool_node_data_lost_begin);

/* Drops the cached pages of @node's lost chunks (none can be written back).  May sleep. */
void hbmpool_node_data_lost_end(struct hbmpool_node *node)
{
	struct hbmpool_region **regions;
	unsigned long i, n;

	regions = hbmpool_regions_get_all(&n);
	for (i = 0; regions && i < n; i++) {
		hbmpool_region_node_removed(regions[i], node);
		hbmpool_region_put(regions[i]);
	}
	kvfree(regions);
	hbmpool_event(HBMPOOL_EVENT_NODE_CHANGE, node);
	hbmpool_replicate_kick();	/* its copies are not good any more */
}
EXPORT_SYMBOL_GPL(hbmpool_node_data_lost_end);

/*
 * Whether @id is another node of the domain: one this node has in its table
 * and has not fenced (a home serves only those).  May sleep.
 */
bool hbmpool_node_is_member(u32 id)
{
	struct hbmpool_node *node;
	bool member;

	mutex_lock(&hbmpool_nodes_lock);
	node = id < HBMPOOL_MAX_NODES ? __hbmpool_node_lookup(id) : NULL;
	member = node && node->transport &&
		 READ_ONCE(node->state) != HBMPOOL_NODE_FENCED;
	mutex_unlock(&hbmpool_nodes_lock);
	return member;
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
	might_sleep();
	enum hbmpool_node_state from = up ? HBMPOOL_NODE_UNREACHABLE :
					    HBMPOOL_NODE_LIVE;
	enum hbmpool_node_state to = up ? HBMPOOL_NODE_LIVE :
					  HBMPOOL_NODE_UNREACHABLE;

	/*
	 * Lock-free: a transport may call this from a handler that node
	 * removal waits for under hbmpool_nodes_lock (a debugfs knob).
	 * Removal sets REMOVED before it waits, so no event follows it.
	 */
	if (up)
		hbmpool_node_unsuspect(node);
	if (cmpxchg(&node->state, from, to) == from &&
	    device_is_registered(&node->dev)) {
		if (up)
			hbmpool_replicate_kick();	/* a source or target is back */
		atomic64_inc(&node->flaps);
		kobject_uevent(&node->dev.kobj, KOBJ_CHANGE);
		hbmpool_event(HBMPOOL_EVENT_NODE_CHANGE, node);
		if (!READ_ONCE(node->admin_down))
			hbmpool_event(HBMPOOL_EVENT_LINK_CHANGE, node);
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
 * A new node, not yet published, on transport @t (NULL: this node) whose
 * reference it takes over.  Its debugfs directory exists (node->debugfs)
 * before the transport attaches, which may add files to it.
 */
static struct hbmpool_node *hbmpool_node_alloc(u32 id,
					       const struct hbmpool_node_conf *conf,
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
	spin_lock_init(&node->conf_lock);
	node->conf = *conf;
	node->capacity = capacity;
	node->state = HBMPOOL_NODE_LIVE;
	hbmpool_kobj_born();
	device_initialize(&node->dev);		/* release frees from here on */
	node->dev.release = hbmpool_node_release;
	hbmpool_sysfs_node_init(node);
	if (dev_set_name(&node->dev, "node%u", id) ||
	    hbmpool_counters_init(&node->stats)) {
		if (t)		/* not the node's yet: its release would not put it */
			hbmpool_transport_put(t);
		goto err_put;
	}
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
	hbmpool_nodes_nr++;
	hbmpool_event(HBMPOOL_EVENT_NODE_ADD, node);
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

/* The checks of a node's settings that node-new and node-set share. */
static int hbmpool_node_conf_check(u32 id, const struct hbmpool_node_conf *conf,
				   unsigned int which,
				   struct netlink_ext_ack *extack)
{
	if ((which & HBMPOOL_CONF_NAME) &&
	    strnlen(conf->name, sizeof(conf->name)) >= sizeof(conf->name)) {
		hbmpool_node_refuse(extack, id, "name: at most 31 bytes");
		return -EINVAL;
	}
	if ((which & HBMPOOL_CONF_ADDR) && conf->addr_len != 4 &&
	    conf->addr_len != 16) {
		hbmpool_node_refuse(extack, id, "addr: 4 bytes (IPv4) or 16 (IPv6)");
		return -EINVAL;
	}
	if ((which & HBMPOOL_CONF_DISTANCE) &&
	    (conf->distance <= HBMPOOL_DISTANCE_LOCAL ||
	     conf->distance > HBMPOOL_DISTANCE_MAX)) {
		hbmpool_node_refuse(extack, id, "distance: 11..255");
		return -EINVAL;
	}
	if ((which & HBMPOOL_CONF_LINK) &&
	    (conf->link == HBMPOOL_LINK_LOCAL || conf->link > HBMPOOL_LINK_SCALEACROSS)) {
		hbmpool_node_refuse(extack, id, "link type: scaleup, scaleout or scaleacross");
		return -EINVAL;
	}
	if ((which & HBMPOOL_CONF_WEIGHT) && conf->weight > HBMPOOL_WEIGHT_MAX) {
		hbmpool_node_refuse(extack, id, "weight: 0 (automatic) or 1..65535");
		return -EINVAL;
	}
	return 0;
}

/**
 * hbmpool_node_create - a new node of the domain
 * @id: 0..HBMPOOL_MAX_NODES - 1, not in use, not this node's
 * @transport: the name of a registered transport
 * @capacity: bytes the node exports, page aligned
 * @conf: its settings: distance (HBMPOOL_DISTANCE_LOCAL + 1 ..
 *	HBMPOOL_DISTANCE_MAX), link type (not HBMPOOL_LINK_LOCAL), name
 *	(may be empty), address (addr_len 0: none)
 * @extack: the refusal's reason
 *
 * The one way to create a node.  Return: 0, -EINVAL, -EEXIST, -ENOENT (no
 * such transport), -ENODEV (module going), -ENOMEM.
 */
int hbmpool_node_create(u32 id, const char *transport, u64 capacity,
			const struct hbmpool_node_conf *conf,
			struct netlink_ext_ack *extack)
{
	struct hbmpool_transport *t;
	struct hbmpool_node *node;
	int err;

	if (id >= HBMPOOL_MAX_NODES) {
		hbmpool_node_refuse(extack, id, "node ids are 0..1023");
		return -EINVAL;
	}
	if (!capacity || !PAGE_ALIGNED(capacity) ||
	    capacity > ((u64)HBMPOOL_CAPACITY_MAX_MIB << 20)) {
		hbmpool_node_refuse(extack, id, "capacity: page aligned, at most 64 GiB");
		return -EINVAL;
	}
	err = hbmpool_node_conf_check(id, conf, HBMPOOL_CONF_NAME |
				      (conf->addr_len ? HBMPOOL_CONF_ADDR : 0) |
				      HBMPOOL_CONF_DISTANCE | HBMPOOL_CONF_LINK,
				      extack);
	if (err)
		return err;
	if (conf->port && !conf->addr_len) {
		hbmpool_node_refuse(extack, id, "port without addr");
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
	if (id == hbmpool_self_id) {
		hbmpool_transport_put(t);
		hbmpool_node_refuse(extack, id, "that id is this node's own");
		err = -EINVAL;
		goto out_unlock;
	}
	if (__hbmpool_node_lookup(id)) {
		hbmpool_transport_put(t);
		hbmpool_node_refuse(extack, id, "a node of that id exists");
		err = -EEXIST;
		goto out_unlock;
	}
	node = hbmpool_node_alloc(id, conf, capacity, t, &err);
	/* on failure, publish drops the reference and with it the transport */
	if (node)
		err = hbmpool_node_publish(node);
out_unlock:
	mutex_unlock(&hbmpool_nodes_lock);
	hbmpool_ctl_end();
	if (!err)
		pr_info("node %u: %llu MiB, distance %u, %s link, %s transport\n",
			id, capacity >> 20, conf->distance,
			hbmpool_link_name(conf->link), transport);
	return err;
}

/**
 * hbmpool_node_delete - remove node @id from the domain
 * @id: a node other than this one
 * @extack: the refusal's reason
 *
 * Its cached pages are dropped (dirty ones are lost and counted), regions
 * placed on it get SIGBUS there.  Return: 0, -EINVAL, -ENODEV.
 */
int hbmpool_node_delete(u32 id, struct netlink_ext_ack *extack)
{
	struct hbmpool_node *node;
	int err;

	err = hbmpool_ctl_begin();
	if (err)
		return err;
	mutex_lock(&hbmpool_nodes_lock);
	node = __hbmpool_node_lookup(id);
	if (node && !node->transport) {
		mutex_unlock(&hbmpool_nodes_lock);
		hbmpool_ctl_end();
		hbmpool_node_refuse(extack, id, "this node cannot be removed from itself");
		return -EINVAL;
	}
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

/* Looks node @id up for a change: not this node unless @self_ok. */
static struct hbmpool_node *hbmpool_node_for_change(u32 id, bool self_ok,
						    struct netlink_ext_ack *extack)
{
	struct hbmpool_node *node;

	lockdep_assert_held(&hbmpool_nodes_lock);
	node = __hbmpool_node_lookup(id);
	if (!node) {
		hbmpool_node_refuse(extack, id, "no such node");
		return ERR_PTR(-ENODEV);
	}
	if (!node->transport && !self_ok) {
		hbmpool_node_refuse(extack, id, "not for this node's own entry");
		return ERR_PTR(-EINVAL);
	}
	return node;
}

/**
 * hbmpool_node_set - change node @id's settings
 * @id: the node
 * @conf: the new values
 * @which: HBMPOOL_CONF_* bits: the members of @conf to take
 * @extack: the refusal's reason
 *
 * This node's own entry takes a name, an address and a port: where its
 * home listens for other nodes (the TCP transport); the change is refused
 * if it cannot listen there.  Placement uses a new distance, weight or
 * draining flag for regions placed from now on; the chunks placed already
 * stay where they are.  Return: 0, -EINVAL, -ENODEV, or the socket's error
 * (-EADDRINUSE, -EADDRNOTAVAIL, ...).
 */
int hbmpool_node_set(u32 id, const struct hbmpool_node_conf *conf,
		     unsigned int which, struct netlink_ext_ack *extack)
{
	struct hbmpool_node *node;
	int err;

	if (!which) {
		hbmpool_node_refuse(extack, id, "nothing to set");
		return -EINVAL;
	}
	err = hbmpool_node_conf_check(id, conf, which, extack);
	if (err)
		return err;
	err = hbmpool_ctl_begin();
	if (err)
		return err;
	mutex_lock(&hbmpool_nodes_lock);
	node = hbmpool_node_for_change(id, !(which & ~(HBMPOOL_CONF_NAME |
						       HBMPOOL_CONF_ADDR |
						       HBMPOOL_CONF_PORT)), extack);
	if (IS_ERR(node)) {
		err = PTR_ERR(node);
		goto out_unlock;
	}
	if ((which & HBMPOOL_CONF_PORT) && conf->port &&
	    !(which & HBMPOOL_CONF_ADDR) && !node->conf.addr_len) {
		hbmpool_node_refuse(extack, id, "port without addr");
		err = -EINVAL;
		goto out_unlock;
	}
	if (!node->transport && (which & (HBMPOOL_CONF_ADDR | HBMPOOL_CONF_PORT))) {
		struct hbmpool_node_conf listen;

		hbmpool_node_conf_read(node, &listen);
		if (which & HBMPOOL_CONF_ADDR) {
			memcpy(listen.addr, conf->addr, sizeof(conf->addr));
			listen.addr_len = conf->addr_len;
		}
		if (which & HBMPOOL_CONF_PORT)
			listen.port = conf->port;
		err = hbmpool_tcp_home_listen(&listen);
		if (err) {
			hbmpool_node_refuse(extack, id, "cannot listen on that address and port");
			goto out_unlock;
		}
	}
	spin_lock(&node->conf_lock);
	if (which & HBMPOOL_CONF_NAME)
		memcpy(node->conf.name, conf->name, sizeof(conf->name));
	if (which & HBMPOOL_CONF_ADDR) {
		memcpy(node->conf.addr, conf->addr, sizeof(conf->addr));
		node->conf.addr_len = conf->addr_len;
	}
	if (which & HBMPOOL_CONF_PORT)
		node->conf.port = conf->port;
	if (which & HBMPOOL_CONF_DISTANCE)
		node->conf.distance = conf->distance;
	if (which & HBMPOOL_CONF_LINK)
		node->conf.link = conf->link;
	if (which & HBMPOOL_CONF_WEIGHT)
		node->conf.weight = conf->weight;
	if (which & HBMPOOL_CONF_DRAINING)
		node->conf.draining = conf->draining;
	if (which & HBMPOOL_CONF_FAILURE_DOMAIN)
		WRITE_ONCE(node->conf.failure_domain, conf->failure_domain);
	spin_unlock(&node->conf_lock);
	kobject_uevent(&node->dev.kobj, KOBJ_CHANGE);
	hbmpool_event(HBMPOOL_EVENT_NODE_CHANGE, node);
out_unlock:
	mutex_unlock(&hbmpool_nodes_lock);
	hbmpool_ctl_end();
	return err;
}

/**
 * hbmpool_node_fence - declare node @id dead: it is never trusted again
 * @id: a node other than this one
 * @extack: the refusal's reason
 *
 * For the domain's control plane, once the node lost its membership (its
 * lease ended): it may still run, but nothing of it is trusted.  Requests
 * to it fail at once with -ENODEV, those in flight too (the transport's
 * ->fence()); its chunks are lost (faults there get SIGBUS, regions report
 * them, and they are never freed at it); its cached pages are dropped,
 * dirty ones counted as lost; this node's home ends its sessions, refuses
 * its handshakes and frees the chunks it held.  Final: the node can only
 * be deleted.  Return: 0 (also if fenced already), -EINVAL, -ENODEV.
 */
int hbmpool_node_fence(u32 id, struct netlink_ext_ack *extack)
{
	struct hbmpool_node *node;
	bool first;
	int err;

	err = hbmpool_ctl_begin();
	if (err)
		return err;
	mutex_lock(&hbmpool_nodes_lock);
	node = hbmpool_node_for_change(id, false, extack);
	if (IS_ERR(node)) {
		mutex_unlock(&hbmpool_nodes_lock);
		hbmpool_ctl_end();
		return PTR_ERR(node);
	}
	first = READ_ONCE(node->state) != HBMPOOL_NODE_FENCED;
	if (first) {
		/* new requests are refused, and no handshake is accepted */
		WRITE_ONCE(node->state, HBMPOOL_NODE_FENCED);
		hbmpool_node_data_lost_begin(node);
		hbmpool_node_get(node);
	}
	mutex_unlock(&hbmpool_nodes_lock);
	if (first) {
		if (node->transport->ops->fence)
			node->transport->ops->fence(node);
		hbmpool_tcp_home_forget(id);
		hbmpool_node_data_lost_end(node);	/* announces the change */
		kobject_uevent(&node->dev.kobj, KOBJ_CHANGE);
		pr_info("node %u fenced\n", id);
		hbmpool_node_put(node);
	}
	hbmpool_ctl_end();
	return 0;
}

/**
 * hbmpool_link_set - set the link to node @id administratively up or down
 * @id: a node other than this one
 * @up: the new admin state
 * @extack: the refusal's reason
 *
 * Requests to a node whose link is down fail at once with -ENOLINK, as for
 * an unreachable node; those in flight complete.  Return: 0, -EINVAL,
 * -ENODEV.
 */
int hbmpool_link_set(u32 id, bool up, struct netlink_ext_ack *extack)
{
	struct hbmpool_node *node;
	int err;

	err = hbmpool_ctl_begin();
	if (err)
		return err;
	mutex_lock(&hbmpool_nodes_lock);
	node = hbmpool_node_for_change(id, false, extack);
	if (IS_ERR(node)) {
		err = PTR_ERR(node);
	} else if (READ_ONCE(node->admin_down) == up) {
		WRITE_ONCE(node->admin_down, !up);
		if (node->transport->ops->link_admin)
			node->transport->ops->link_admin(node, up);
		if (up)
			hbmpool_replicate_kick();	/* a source or target is back */
		hbmpool_event(HBMPOOL_EVENT_LINK_CHANGE, node);
	}
	mutex_unlock(&hbmpool_nodes_lock);
	hbmpool_ctl_end();
	return err;
}

/*
 * Moves this node's own entry to id @id (the domain gave it a new one):
 * only while it is alone and holds no region.  Under hbmpool_nodes_lock.
 */
int hbmpool_self_move(u32 id, struct netlink_ext_ack *extack)
{
	struct hbmpool_node *old, *node;
	int err;

	lockdep_assert_held(&hbmpool_nodes_lock);
	/*
	 * No region can be placed while this node is alone, but one may be
	 * left on removed nodes, or be between its id and its listing:
	 * refuse the move while any region id is taken.
	 */
	if (!xa_empty(&hbmpool_regions)) {
		NL_SET_ERR_MSG(extack, "self-id: regions exist");
		return -EBUSY;
	}
	old = __hbmpool_node_lookup(hbmpool_self_id);
	if (WARN_ON(!old || old->transport))
		return -EIO;
	/* what can fail comes first: on failure the old entry stays as it is */
	node = hbmpool_node_alloc(id, &old->conf, 0, NULL, &err);
	if (!node)
		return err;
	err = hbmpool_node_publish(node);
	if (err)
		return err;
	__hbmpool_node_unpublish(old);
	WRITE_ONCE(hbmpool_self_id, id);
	hbmpool_node_put(old);
	return 0;
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
	hbmpool_replicate_kick();	/* its copies are not good any more */
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
	hbmpool_nodes_nr--;
	debugfs_remove_recursive(node->debugfs);	/* waits for open knob handlers */
	node->debugfs = NULL;
	if (node->transport)
		node->transport->ops->shutdown(node);
	hbmpool_sysfs_node_unlink(node);
	device_del(&node->dev);		/* KOBJ_REMOVE to udev */
	xa_erase(&hbmpool_nodes, node->id);
	hbmpool_event(HBMPOOL_EVENT_NODE_DEL, node);
}

/* ---- init/exit ---- */

int hbmpool_nodes_init(void)
{
	static const struct hbmpool_node_conf self_conf = {
		.distance = HBMPOOL_DISTANCE_LOCAL,
		.link = HBMPOOL_LINK_LOCAL,
	};
	struct hbmpool_node *self;
	int err;

	self = hbmpool_node_alloc(hbmpool_self_id, &self_conf, 0, NULL, &err);
	if (!self)
		return err;
	mutex_lock(&hbmpool_nodes_lock);
	err = hbmpool_node_publish(self);
	mutex_unlock(&hbmpool_nodes_lock);
	return err;
}

void hbmpool_nodes_exit(void)
{
	struct hbmpool_node *node;
	unsigned long id;
	bool self;

	/* every other node, then this one */
	for (;;) {
		mutex_lock(&hbmpool_nodes_lock);
		id = 0;
		node = xa_find(&hbmpool_nodes, &id, ULONG_MAX, XA_PRESENT);
		while (node && !node->transport) {
			node = xa_find_after(&hbmpool_nodes, &id, ULONG_MAX,
					     XA_PRESENT);
		}
		if (!node)
			node = xa_load(&hbmpool_nodes, hbmpool_self_id);
		self = node && !node->transport;
		if (node)
			__hbmpool_node_unpublish(node);
		mutex_unlock(&hbmpool_nodes_lock);
		if (!node)
			break;
		if (self)
			hbmpool_node_put(node);
		else
			hbmpool_node_remove(node);
	}
	WARN_ON(!xa_empty(&hbmpool_nodes));
}
