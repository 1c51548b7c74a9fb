// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs, a read-only view: /sys/kernel/hbmpool (parameters and counters;
 * netlink's params-set changes them), and the nodes as devices on the
 * "hbmpool" bus
 * (/sys/bus/hbmpool/devices/nodeN, with uevents), linked from
 * /sys/kernel/hbmpool/nodes/.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "hbmpool.h"

struct kobject *hbmpool_nodes_kobj;
static struct kobject *hbmpool_root_kobj;

/* ---- counters: one reader for every stats/ directory ---- */

static ssize_t hbmpool_stat_show(struct hbmpool_counters *c, int stat, char *buf)
{
	u64 *v;
	ssize_t n = 0;
	int i;

	v = kmalloc_array(HBMPOOL_NR_STATS, sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	hbmpool_counters_read(c, v);
	if (stat != HBMPOOL_STAT_LAT0) {
		n = sysfs_emit(buf, "%llu\n", v[stat]);
	} else {
		for (i = 0; i < HBMPOOL_LAT_BUCKETS; i++)
			n += sysfs_emit_at(buf, n, "%llu %llu\n", 1ULL << i,
					   v[HBMPOOL_STAT_LAT0 + i]);
	}
	kfree(v);
	return n;
}

/* ---- nodes: devices on the hbmpool bus ---- */

static struct hbmpool_node *to_node(struct device *dev)
{
	return container_of(dev, struct hbmpool_node, dev);
}

static const char * const hbmpool_link_names[] = {
	[HBMPOOL_LINK_LOCAL] = "local",
	[HBMPOOL_LINK_SCALEUP] = "scaleup",
	[HBMPOOL_LINK_SCALEOUT] = "scaleout",
	[HBMPOOL_LINK_SCALEACROSS] = "scaleacross",
};

static const char * const hbmpool_node_state_names[] = {
	[HBMPOOL_NODE_LIVE] = "up",
	[HBMPOOL_NODE_UNREACHABLE] = "down",
	[HBMPOOL_NODE_FENCED] = "fenced",
	[HBMPOOL_NODE_REMOVED] = "removed",
};

const char *hbmpool_link_name(enum hbmpool_link link)
{
	return hbmpool_link_names[link];
}

static ssize_t id_show(struct device *dev, struct device_attribute *attr,
		       char *buf)
{
	return sysfs_emit(buf, "%u\n", to_node(dev)->id);
}
static DEVICE_ATTR_RO(id);

static ssize_t state_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  hbmpool_node_state_names[READ_ONCE(to_node(dev)->state)]);
}
static DEVICE_ATTR_RO(state);

static ssize_t distance_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(to_node(dev)->conf.distance));
}
static DEVICE_ATTR_RO(distance);

static ssize_t link_type_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  hbmpool_link_names[READ_ONCE(to_node(dev)->conf.link)]);
}
static DEVICE_ATTR_RO(link_type);

static ssize_t transport_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	struct hbmpool_node *node = to_node(dev);

	return sysfs_emit(buf, "%s\n",
			  node->transport ? node->transport->name : "local");
}
static DEVICE_ATTR_RO(transport);

static ssize_t capacity_bytes_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", hbmpool_node_capacity(to_node(dev)));
}
static DEVICE_ATTR_RO(capacity_bytes);

static ssize_t free_bytes_show(struct device *dev, struct device_attribute *attr,
			       char *buf)
{
	return sysfs_emit(buf, "%llu\n", hbmpool_node_free(to_node(dev)));
}
static DEVICE_ATTR_RO(free_bytes);

static ssize_t weight_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(to_node(dev)->conf.weight));
}
static DEVICE_ATTR_RO(weight);

static ssize_t effective_weight_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	struct hbmpool_node *node = to_node(dev);
	struct hbmpool_node_conf conf;

	hbmpool_node_conf_read(node, &conf);
	return sysfs_emit(buf, "%u\n", hbmpool_node_weight(node, &conf));
}
static DEVICE_ATTR_RO(effective_weight);

static ssize_t draining_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(to_node(dev)->conf.draining));
}
static DEVICE_ATTR_RO(draining);

static struct attribute *hbmpool_node_attrs[] = {
	&dev_attr_id.attr,
	&dev_attr_state.attr,
	&dev_attr_distance.attr,
	&dev_attr_link_type.attr,
	&dev_attr_transport.attr,
	&dev_attr_capacity_bytes.attr,
	&dev_attr_free_bytes.attr,
	&dev_attr_weight.attr,
	&dev_attr_effective_weight.attr,
	&dev_attr_draining.attr,
	NULL,
};

static ssize_t node_stat_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	struct dev_ext_attribute *ea = container_of(attr, struct dev_ext_attribute,
						    attr);

	return hbmpool_stat_show(&to_node(dev)->stats, (long)ea->var, buf);
}

#define HBMPOOL_NODE_STAT(_name, _stat)					\
	static struct dev_ext_attribute node_stat_##_name = {		\
		__ATTR(_name, 0444, node_stat_show, NULL), (void *)(_stat) }

HBMPOOL_NODE_STAT(faults, HBMPOOL_STAT_FAULTS);
HBMPOOL_NODE_STAT(fetches, HBMPOOL_STAT_FETCHES);
HBMPOOL_NODE_STAT(bytes_fetched, HBMPOOL_STAT_BYTES_FETCHED);
HBMPOOL_NODE_STAT(writebacks, HBMPOOL_STAT_WRITEBACKS);
HBMPOOL_NODE_STAT(bytes_written_back, HBMPOOL_STAT_BYTES_WRITTEN_BACK);
HBMPOOL_NODE_STAT(evictions, HBMPOOL_STAT_EVICTIONS);
HBMPOOL_NODE_STAT(errors, HBMPOOL_STAT_ERRORS);
HBMPOOL_NODE_STAT(timeouts, HBMPOOL_STAT_TIMEOUTS);
HBMPOOL_NODE_STAT(fetch_latency_hist, HBMPOOL_STAT_LAT0);

static struct attribute *hbmpool_node_stats_attrs[] = {
	&node_stat_faults.attr.attr,
	&node_stat_fetches.attr.attr,
	&node_stat_bytes_fetched.attr.attr,
	&node_stat_writebacks.attr.attr,
	&node_stat_bytes_written_back.attr.attr,
	&node_stat_evictions.attr.attr,
	&node_stat_errors.attr.attr,
	&node_stat_timeouts.attr.attr,
	&node_stat_fetch_latency_hist.attr.attr,
	NULL,
};

/* ---- link/: what a connected transport knows of its link ---- */

enum hbmpool_link_field {
	HBMPOOL_LF_HEALTH, HBMPOOL_LF_RTT, HBMPOOL_LF_BYTES, HBMPOOL_LF_RETRIES,
	HBMPOOL_LF_DIGEST_ERRORS, HBMPOOL_LF_CONNECTS, HBMPOOL_LF_AUTH_FAILURES,
	HBMPOOL_LF_INCARNATION,
};

static ssize_t node_link_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	static const char * const health[] = { "down", "connecting", "live", "degraded" };
	struct dev_ext_attribute *ea = container_of(attr, struct dev_ext_attribute,
						    attr);
	struct hbmpool_node *node = to_node(dev);
	struct hbmpool_link_info *li;
	ssize_t n;
	u64 v;

	li = kzalloc(sizeof(*li), GFP_KERNEL);
	if (!li)
		return -ENOMEM;
	node->transport->ops->link_info(node, li);
	switch ((long)ea->var) {
	case HBMPOOL_LF_HEALTH:
		n = sysfs_emit(buf, "%s\n", li->health < ARRAY_SIZE(health) ?
			       health[li->health] : "?");
		kfree(li);
		return n;
	case HBMPOOL_LF_RTT:
		v = li->rtt_ns;
		break;
	case HBMPOOL_LF_BYTES:
		v = li->bytes;
		break;
	case HBMPOOL_LF_RETRIES:
		v = li->retries;
		break;
	case HBMPOOL_LF_DIGEST_ERRORS:
		v = li->digest_errors;
		break;
	case HBMPOOL_LF_CONNECTS:
		v = li->connects;
		break;
	case HBMPOOL_LF_AUTH_FAILURES:
		v = li->auth_failures;
		break;
	default:
		v = li->incarnation;
	}
	kfree(li);
	return sysfs_emit(buf, "%llu\n", v);
}

#define HBMPOOL_NODE_LINK(_name, _field)				\
	static struct dev_ext_attribute node_link_##_name = {		\
		__ATTR(_name, 0444, node_link_show, NULL), (void *)(_field) }

HBMPOOL_NODE_LINK(health, HBMPOOL_LF_HEALTH);
HBMPOOL_NODE_LINK(rtt_ns, HBMPOOL_LF_RTT);
HBMPOOL_NODE_LINK(bytes, HBMPOOL_LF_BYTES);
HBMPOOL_NODE_LINK(retries, HBMPOOL_LF_RETRIES);
HBMPOOL_NODE_LINK(digest_errors, HBMPOOL_LF_DIGEST_ERRORS);
HBMPOOL_NODE_LINK(connects, HBMPOOL_LF_CONNECTS);
HBMPOOL_NODE_LINK(auth_failures, HBMPOOL_LF_AUTH_FAILURES);
HBMPOOL_NODE_LINK(incarnation, HBMPOOL_LF_INCARNATION);

static struct attribute *hbmpool_node_link_attrs[] = {
	&node_link_health.attr.attr,
	&node_link_rtt_ns.attr.attr,
	&node_link_bytes.attr.attr,
	&node_link_retries.attr.attr,
	&node_link_digest_errors.attr.attr,
	&node_link_connects.attr.attr,
	&node_link_auth_failures.attr.attr,
	&node_link_incarnation.attr.attr,
	NULL,
};

/* link/ exists for nodes whose transport reports its link. */
static umode_t hbmpool_node_link_visible(struct kobject *kobj,
					 struct attribute *attr, int n)
{
	struct hbmpool_node *node = to_node(kobj_to_dev(kobj));

	return node->transport && node->transport->ops->link_info ? attr->mode : 0;
}

static const struct attribute_group hbmpool_node_link_group = {
	.name = "link",
	.attrs = hbmpool_node_link_attrs,
	.is_visible = hbmpool_node_link_visible,
};

static const struct attribute_group hbmpool_node_group = {
	.attrs = hbmpool_node_attrs,
};

static const struct attribute_group hbmpool_node_stats_group = {
	.name = "stats",
	.attrs = hbmpool_node_stats_attrs,
};

static const struct attribute_group *hbmpool_node_groups[] = {
	&hbmpool_node_group,
	&hbmpool_node_stats_group,
	&hbmpool_node_link_group,
	NULL,
};

static int hbmpool_bus_uevent(struct device *dev, struct kobj_uevent_env *env)
{
	struct hbmpool_node *node = to_node(dev);

	return add_uevent_var(env, "HBMPOOL_NODE=%u", node->id) ?:
	       add_uevent_var(env, "HBMPOOL_NODE_STATE=%s",
			      hbmpool_node_state_names[READ_ONCE(node->state)]);
}

struct bus_type hbmpool_bus = {
	.name = "hbmpool",
	.dev_groups = hbmpool_node_groups,
	.uevent = hbmpool_bus_uevent,
};

/* ---- /sys/kernel/hbmpool ---- */

static ssize_t cache_budget_pages_show(struct kobject *kobj,
				       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n", READ_ONCE(hbmpool_cache_budget));
}

static struct kobj_attribute cache_budget_pages_attr = __ATTR_RO(cache_budget_pages);

static ssize_t fetch_timeout_ms_show(struct kobject *kobj,
				     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(hbmpool_fetch_timeout_ms));
}

static struct kobj_attribute fetch_timeout_ms_attr = __ATTR_RO(fetch_timeout_ms);

static ssize_t readahead_max_pages_show(struct kobject *kobj,
					struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(hbmpool_readahead_max));
}

static struct kobj_attribute readahead_max_pages_attr = __ATTR_RO(readahead_max_pages);

static ssize_t cached_pages_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%ld\n", hbmpool_cache_nr_cached());
}

static struct kobj_attribute cached_pages_attr = __ATTR_RO(cached_pages);

static ssize_t dirty_pages_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%ld\n", hbmpool_cache_nr_dirty());
}

static struct kobj_attribute dirty_pages_attr = __ATTR_RO(dirty_pages);

static ssize_t pool_pages_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%ld\n", hbmpool_pagepool_nr());
}

static struct kobj_attribute pool_pages_attr = __ATTR_RO(pool_pages);

static ssize_t pool_recycled_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%ld\n", hbmpool_pagepool_recycled());
}

static struct kobj_attribute pool_recycled_attr = __ATTR_RO(pool_recycled);

static ssize_t nr_regions_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	unsigned long n;

	mutex_lock(&hbmpool_regions_lock);
	n = hbmpool_nr_regions;
	mutex_unlock(&hbmpool_regions_lock);
	return sysfs_emit(buf, "%lu\n", n);
}

static struct kobj_attribute nr_regions_attr = __ATTR_RO(nr_regions);

static struct attribute *hbmpool_root_attrs[] = {
	&cache_budget_pages_attr.attr,
	&fetch_timeout_ms_attr.attr,
	&readahead_max_pages_attr.attr,
	&cached_pages_attr.attr,
	&dirty_pages_attr.attr,
	&pool_pages_attr.attr,
	&pool_recycled_attr.attr,
	&nr_regions_attr.attr,
	NULL,
};

/* A global counter: a kobj_attribute that knows its index. */
struct hbmpool_stat_attr {
	struct kobj_attribute attr;
	int stat;
};

static ssize_t global_stat_show(struct kobject *kobj, struct kobj_attribute *attr,
				char *buf)
{
	return hbmpool_stat_show(&hbmpool_global_stats,
				 container_of(attr, struct hbmpool_stat_attr, attr)->stat,
				 buf);
}

#define HBMPOOL_GLOBAL_STAT(_name, _stat)				\
	static struct hbmpool_stat_attr global_stat_##_name = {	\
		__ATTR(_name, 0444, global_stat_show, NULL), _stat }

HBMPOOL_GLOBAL_STAT(faults, HBMPOOL_STAT_FAULTS);
HBMPOOL_GLOBAL_STAT(fetches, HBMPOOL_STAT_FETCHES);
HBMPOOL_GLOBAL_STAT(bytes_fetched, HBMPOOL_STAT_BYTES_FETCHED);
HBMPOOL_GLOBAL_STAT(writebacks, HBMPOOL_STAT_WRITEBACKS);
HBMPOOL_GLOBAL_STAT(bytes_written_back, HBMPOOL_STAT_BYTES_WRITTEN_BACK);
HBMPOOL_GLOBAL_STAT(evictions, HBMPOOL_STAT_EVICTIONS);
HBMPOOL_GLOBAL_STAT(errors, HBMPOOL_STAT_ERRORS);
HBMPOOL_GLOBAL_STAT(timeouts, HBMPOOL_STAT_TIMEOUTS);
HBMPOOL_GLOBAL_STAT(fetch_latency_hist, HBMPOOL_STAT_LAT0);
HBMPOOL_GLOBAL_STAT(over_budget, HBMPOOL_STAT_OVER_BUDGET);
HBMPOOL_GLOBAL_STAT(shrinker_freed, HBMPOOL_STAT_SHRINKER_FREED);

static struct attribute *hbmpool_global_stats_attrs[] = {
	&global_stat_faults.attr.attr,
	&global_stat_fetches.attr.attr,
	&global_stat_bytes_fetched.attr.attr,
	&global_stat_writebacks.attr.attr,
	&global_stat_bytes_written_back.attr.attr,
	&global_stat_evictions.attr.attr,
	&global_stat_errors.attr.attr,
	&global_stat_timeouts.attr.attr,
	&global_stat_fetch_latency_hist.attr.attr,
	&global_stat_over_budget.attr.attr,
	&global_stat_shrinker_freed.attr.attr,
	NULL,
};

static const struct attribute_group hbmpool_root_group = {
	.attrs = hbmpool_root_attrs,
};

static const struct attribute_group hbmpool_global_stats_group = {
	.name = "stats",
	.attrs = hbmpool_global_stats_attrs,
};

static const struct attribute_group *hbmpool_root_groups[] = {
	&hbmpool_root_group,
	&hbmpool_global_stats_group,
	NULL,
};

/* ---- a node's presence in sysfs ---- */

/* node.c: before device_add() */
void hbmpool_sysfs_node_init(struct hbmpool_node *node)
{
	node->dev.bus = &hbmpool_bus;
}

/* After device_add(): the link in /sys/kernel/hbmpool/nodes/. */
int hbmpool_sysfs_node_link(struct hbmpool_node *node)
{
	return sysfs_create_link(hbmpool_nodes_kobj, &node->dev.kobj,
				 dev_name(&node->dev));
}

void hbmpool_sysfs_node_unlink(struct hbmpool_node *node)
{
	sysfs_remove_link(hbmpool_nodes_kobj, dev_name(&node->dev));
}

/* ---- init/exit ---- */

int hbmpool_sysfs_init(void)
{
	int err;

	err = bus_register(&hbmpool_bus);
	if (err)
		return err;
	err = -ENOMEM;
	hbmpool_root_kobj = kobject_create_and_add("hbmpool", kernel_kobj);
	if (!hbmpool_root_kobj)
		goto err_bus;
	err = sysfs_create_groups(hbmpool_root_kobj, hbmpool_root_groups);
	if (err)
		goto err_root;
	err = -ENOMEM;
	hbmpool_nodes_kobj = kobject_create_and_add("nodes", hbmpool_root_kobj);
	if (!hbmpool_nodes_kobj)
		goto err_groups;
	return 0;

err_groups:
	sysfs_remove_groups(hbmpool_root_kobj, hbmpool_root_groups);
err_root:
	kobject_put(hbmpool_root_kobj);
err_bus:
	bus_unregister(&hbmpool_bus);
	return err;
}

/*
 * Every node is gone.  The files go now, whenever the kobjects' releases
 * (which are the core's) run: kernfs drains their handlers.
 */
void hbmpool_sysfs_exit(void)
{
	kobject_del(hbmpool_nodes_kobj);
	kobject_put(hbmpool_nodes_kobj);
	sysfs_remove_groups(hbmpool_root_kobj, hbmpool_root_groups);
	kobject_del(hbmpool_root_kobj);
	kobject_put(hbmpool_root_kobj);
	bus_unregister(&hbmpool_bus);
}
