/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hbmpool internal interfaces: the contract between the files of the module.
 *
 * Objects and lifetimes (see Documentation/design.rst):
 *  - struct hbmpool_node: a member of the pooled domain, a device on the
 *    hbmpool bus.  Refcounted by its device; the node table holds one
 *    reference, every copy of a chunk placed on the node holds one.
 *    Removal unpublishes it and shuts its transport down; the
 *    memory goes when the last region using it is freed.
 *  - struct hbmpool_region: refcounted by its kref; every file of it holds
 *    one reference (mappings hold a file; a fault that drops mmap_lock
 *    pins the file), the evictor and node removal take short-lived ones, a
 *    write-back handed to its transfer holds one until it lands.
 *  - cache pages: ordinary pages owned by the cache, indexed in their region's
 *    xarray, with page->mapping = the region inode's mapping, page->index =
 *    the page offset, page->private = HBM_PG_* bits, page->lru on the CLOCK
 *    list.  Each mapping PTE holds a page reference, the cache holds one.
 */
#ifndef _HBMPOOL_INTERNAL_H
#define _HBMPOOL_INTERNAL_H

#include <linux/types.h>
#include <linux/device.h>
#include <linux/kobject.h>
#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/fs.h>
#include <linux/mm_types.h>
#include <linux/completion.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/rcupdate.h>
#include <linux/sysfs.h>
#include <linux/hbmpool.h>

#include "replica.h"
#include "transport.h"

struct hbmpool_node;
struct netlink_ext_ack;

/* ---- counters (stats.c) ---- */

enum hbmpool_stat {
	HBMPOOL_STAT_FAULTS,
	HBMPOOL_STAT_FETCHES,		/* pages; derived from LAT* on read */
	HBMPOOL_STAT_BYTES_FETCHED,	/* derived from FETCHES on read */
	HBMPOOL_STAT_WRITEBACKS,
	HBMPOOL_STAT_BYTES_WRITTEN_BACK,
	HBMPOOL_STAT_EVICTIONS,
	HBMPOOL_STAT_ERRORS,
	HBMPOOL_STAT_TIMEOUTS,
	HBMPOOL_STAT_OVER_BUDGET,	/* global only */
	HBMPOOL_STAT_SHRINKER_FREED,	/* global only */
	HBMPOOL_STAT_LAT0,
	HBMPOOL_NR_STATS = HBMPOOL_STAT_LAT0 + HBMPOOL_LAT_BUCKETS,
};

/* Per-CPU counters: no shared cache line on the fault path. */
struct hbmpool_counters {
	u64 __percpu *pcpu;	/* HBMPOOL_NR_STATS u64 per CPU */
};

int hbmpool_counters_init(struct hbmpool_counters *c);
void hbmpool_counters_free(struct hbmpool_counters *c);
void hbmpool_counters_read(const struct hbmpool_counters *c, u64 *out);

static inline void hbmpool_count(struct hbmpool_counters *c,
				 enum hbmpool_stat s, u64 n)
{
	this_cpu_add(c->pcpu[s], n);
}

extern struct hbmpool_counters hbmpool_global_stats;

/* A region's counters: plain atomics, see stats.c. */
struct hbmpool_region_stats {
	atomic64_t v[HBMPOOL_NR_STATS];
};

void hbmpool_region_stats_read(const struct hbmpool_region_stats *rs, u64 *out);

/* One event on a page: counted for its region, its home node and globally. */
void hbmpool_count3(struct hbmpool_region_stats *region,
		    struct hbmpool_node *node, enum hbmpool_stat s, u64 n);
/*
 * @nr pages fetched in @ns (each page is one sample of the latency
 * histogram); their count and bytes follow from it (stats.c).
 */
void hbmpool_count_fetched(struct hbmpool_region_stats *region,
			   struct hbmpool_node *node, unsigned int nr, u64 ns);

/* ---- sysfs (sysfs.c) ---- */

#define HBMPOOL_BUDGET_MIN	16UL
#define HBMPOOL_BUDGET_MAX	(16UL << 20)
#define HBMPOOL_TIMEOUT_MIN	10U
#define HBMPOOL_TIMEOUT_MAX	600000U

/* What params-set changes: a NULL field is left as it is. */
struct hbmpool_params_req {
	const u64 *budget;		/* cache budget, pages */
	const u32 *timeout_ms;		/* fetch timeout */
	const u32 *ra_max;		/* largest read-ahead window, pages */
	const u32 *resync_mbps;		/* chunk moves' rate, MiB/s, 0: no limit */
	const u32 *resync_jobs;		/* chunk moves that copy at once */
	const u32 *full_pct;		/* placement: a node this full is a last resort */
	const u8 *avoid_degraded;	/* placement: a degraded link is a last resort */
};

int hbmpool_params_set(const struct hbmpool_params_req *p,
		       struct netlink_ext_ack *extack);

extern struct bus_type hbmpool_bus;
extern struct kobject *hbmpool_nodes_kobj;

int hbmpool_sysfs_init(void);
void hbmpool_sysfs_exit(void);

/* ---- state-change events (events.c) and generic netlink (netlink*.c) ---- */

/* What changed; the object an event is about is given beside it. */
enum hbmpool_event {
	HBMPOOL_EVENT_NODE_ADD,		/* struct hbmpool_node */
	HBMPOOL_EVENT_NODE_DEL,
	HBMPOOL_EVENT_NODE_CHANGE,
	HBMPOOL_EVENT_LINK_CHANGE,	/* struct hbmpool_node, the link's far end */
	HBMPOOL_EVENT_REGION_NEW,	/* struct hbmpool_region */
	HBMPOOL_EVENT_REGION_DEL,
	HBMPOOL_EVENT_SEGMENT_CHANGE,	/* none: this node's segment */
	HBMPOOL_EVENT_PARAMS_CHANGE,	/* none */
	HBMPOOL_EVENT_DOMAIN_CHANGE,	/* none */
	HBMPOOL_EVENT_RESYNC_CHANGE,	/* struct hbmpool_resync_info */
	HBMPOOL_EVENT_REGION_CHANGE,	/* struct hbmpool_region: its chunks' health */
	HBMPOOL_NR_EVENTS,
};

struct hbmpool_node;
struct hbmpool_region;
void hbmpool_event(enum hbmpool_event ev, void *obj);
u64 hbmpool_events_hold(void);
void hbmpool_events_release(void);
u64 hbmpool_domain_generation(void);

int hbmpool_netlink_init(void);
void hbmpool_netlink_exit(void);
void hbmpool_nl_notify(enum hbmpool_event ev, void *obj, u64 seq);

/* ---- the segment this node exports (export.c, segment_ram.c, segment_shm.c) ---- */

#define HBMPOOL_EXPORT_MAX	BIT_ULL(40)	/* bytes */

struct hbmpool_segment;
int hbmpool_export_new(u64 size, const char *provider, const char *device,
		       struct netlink_ext_ack *extack);
int hbmpool_export_del(struct netlink_ext_ack *extack);
void hbmpool_export_info(u64 *size, const char **provider, u64 *used,
			 u64 *incarnation, char *device);
void hbmpool_export_exit(void);
struct hbmpool_segment *hbmpool_export_serve_begin(u64 *incarnation);
void hbmpool_export_serve_end(void);
int hbmpool_export_fence(void);
u64 hbmpool_export_free_owner(u32 owner);
bool hbmpool_export_is_fenced(void);
int hbmpool_export_flip(u64 offset);
int hbmpool_ram_segment_init(struct hbmpool_segment *seg, u64 size,
			     struct netlink_ext_ack *extack);

/* ---- the domain (domain.c) ---- */

/*
 * This node's id in the domain: READ_ONCE; changes only while no other
 * node exists (hbmpool_domain_set()), under hbmpool_nodes_lock.
 */
extern u32 hbmpool_self_id;
void hbmpool_domain_name(char *buf);
#define HBMPOOL_KEY_MIN		16
#define HBMPOOL_KEY_MAX		64
int hbmpool_domain_set(const char *name, const u32 *self_id, const u8 *key,
		       unsigned int key_len, struct netlink_ext_ack *extack);
bool hbmpool_domain_key_set(void);
u64 hbmpool_domain_epoch_get(void);
int hbmpool_domain_epoch_set(u64 epoch, struct netlink_ext_ack *extack);
unsigned int hbmpool_domain_key_get(u8 *buf);
void hbmpool_domain_exit(void);

/* Module exit waits for the releases of nodes (main.c). */
void hbmpool_kobj_born(void);
void hbmpool_kobj_released(void);

/* Control entry points run between these; see main.c. */
int hbmpool_ctl_begin(void);
void hbmpool_ctl_end(void);

/* ---- debugfs (main.c): the root; node.c makes a directory per node ---- */

extern struct dentry *hbmpool_debugfs_root;

/* sim.c: the simulated fabric, registered as transport "sim" */
int hbmpool_sim_init(void);
void hbmpool_sim_exit(void);

/* ---- nodes (node.c) ---- */

enum hbmpool_link {
	HBMPOOL_LINK_LOCAL,
	HBMPOOL_LINK_SCALEUP,
	HBMPOOL_LINK_SCALEOUT,
	HBMPOOL_LINK_SCALEACROSS,
};

/*
 * A node's state.  Only LIVE nodes are sent requests; UNREACHABLE is pushed
 * by the transport (hbmpool_node_link_changed()) and may come back; FENCED
 * (the node must not be trusted until it rejoins) and REMOVED are final.
 */
enum hbmpool_node_state {
	HBMPOOL_NODE_LIVE,
	HBMPOOL_NODE_UNREACHABLE,
	HBMPOOL_NODE_FENCED,
	HBMPOOL_NODE_REMOVED,
};

/* An operator's settings of a node (node-new, node-set). */
#define HBMPOOL_NL_DEVICE_MAX	31	/* a PCI device name, "0000:00:11.0" */

struct hbmpool_node_conf {
	char name[HBMPOOL_NAME_LEN];
	u8 addr[16];			/* network byte order */
	u8 addr_len;			/* 0 (none), 4 or 16 */
	u16 port;
	u32 distance;
	enum hbmpool_link link;
	u32 weight;			/* 0: automatic, see hbmpool_node_weight() */
	bool draining;			/* no new chunks go to the node */
	u32 failure_domain;		/* 0: none; copies of a chunk never share one */
	char device[HBMPOOL_NL_DEVICE_MAX + 1];	/* shm: the home's PCI device; node-new only */
};

struct hbmpool_node {
	struct device dev;		/* lifetime; on hbmpool_bus */
	u32 id;
	/*
	 * conf_lock protects conf (written under hbmpool_nodes_lock too, so
	 * placement, which holds that, reads conf.distance, conf.weight and
	 * conf.draining without it).
	 */
	spinlock_t conf_lock;
	struct hbmpool_node_conf conf;
	u64 capacity;			/* bytes of the home's segment */
	enum hbmpool_node_state state;	/* READ_ONCE; cmpxchg, see hbmpool_node_link_changed() */
	bool admin_down;		/* link-set down: READ_ONCE, under hbmpool_nodes_lock */
	atomic64_t flaps;		/* link state changes */
	atomic_t data_gen;		/* bumped when the home's memory is lost */
	struct hbmpool_transport *transport;	/* NULL for this node; module held */
	void *priv;			/* transport->node_priv_size bytes */
	struct dentry *debugfs;		/* nodeN/ in the debugfs root */
	/* transport-independent fault injection (debugfs nodeN/), READ_ONCE */
	bool fail_fetch;
	bool fail_writeback;
	/*
	 * A fetch from the node failed since its last successful request
	 * (or link up): fetches of replicated chunks go to other copies
	 * first.  READ_ONCE/WRITE_ONCE, any context.
	 */
	bool suspect;
	struct hbmpool_counters stats;
};

static inline void hbmpool_node_get(struct hbmpool_node *node)
{
	get_device(&node->dev);
}

static inline void hbmpool_node_put(struct hbmpool_node *node)
{
	put_device(&node->dev);
}

/* Requests may go to @node: it is live and its link is not set down. */
static inline bool hbmpool_node_usable(struct hbmpool_node *node)
{
	return READ_ONCE(node->state) == HBMPOOL_NODE_LIVE &&
	       !READ_ONCE(node->admin_down);
}

/*
 * A request to @node succeeded, or its link came up: it is not suspect any
 * more.  Any context.
 */
static inline void hbmpool_node_unsuspect(struct hbmpool_node *node)
{
	if (unlikely(READ_ONCE(node->suspect)))
		WRITE_ONCE(node->suspect, false);
}

/* Which members of a struct hbmpool_node_conf a node-set gives. */
enum {
	HBMPOOL_CONF_NAME = BIT(0),
	HBMPOOL_CONF_ADDR = BIT(1),
	HBMPOOL_CONF_PORT = BIT(2),
	HBMPOOL_CONF_DISTANCE = BIT(3),
	HBMPOOL_CONF_LINK = BIT(4),
	HBMPOOL_CONF_WEIGHT = BIT(5),
	HBMPOOL_CONF_DRAINING = BIT(6),
	HBMPOOL_CONF_FAILURE_DOMAIN = BIT(7),
};

u32 hbmpool_node_weight(struct hbmpool_node *node, const struct hbmpool_node_conf *conf);

int hbmpool_nodes_init(void);
void hbmpool_nodes_exit(void);
struct netlink_ext_ack;
int hbmpool_node_create(u32 id, const char *transport, u64 capacity,
			const struct hbmpool_node_conf *conf,
			struct netlink_ext_ack *extack);
int hbmpool_node_delete(u32 id, struct netlink_ext_ack *extack);
int hbmpool_node_set(u32 id, const struct hbmpool_node_conf *conf,
		     unsigned int which, struct netlink_ext_ack *extack);
int hbmpool_link_set(u32 id, bool up, struct netlink_ext_ack *extack);
int hbmpool_node_fence(u32 id, struct netlink_ext_ack *extack);
int hbmpool_self_move(u32 id, struct netlink_ext_ack *extack);
void hbmpool_node_conf_read(struct hbmpool_node *node,
			    struct hbmpool_node_conf *conf);
unsigned int hbmpool_nr_nodes(void);
bool hbmpool_node_is_member(u32 id);
bool hbmpool_node_alone(void);
u64 hbmpool_node_capacity(struct hbmpool_node *node);
u64 hbmpool_node_free(struct hbmpool_node *node);
struct hbmpool_node *hbmpool_node_get_next(unsigned long *id);
const char *hbmpool_link_name(enum hbmpool_link link);
void hbmpool_sysfs_node_init(struct hbmpool_node *node);
int hbmpool_sysfs_node_link(struct hbmpool_node *node);
void hbmpool_sysfs_node_unlink(struct hbmpool_node *node);

extern struct mutex hbmpool_nodes_lock;
struct hbmpool_node *__hbmpool_node_lookup(u32 id);

/* ---- placement (placement.c) ---- */

/* params full-pct and avoid-degraded: READ_ONCE, set by hbmpool_params_set() */
extern unsigned int hbmpool_place_full_pct;		/* 1..100 */
extern unsigned int hbmpool_place_avoid_degraded;	/* 0 or 1 */

/* One copy of a chunk. */
struct hbmpool_copy {
	struct hbmpool_node *node;	/* referenced by its map */
	u64 offset;			/* of the chunk, in the node's segment */
	u32 gen;			/* node's data_gen when placed: lost if not current */
	u8 state;			/* enum hbmpool_copy_state */
};

struct hbmpool_resync;

/* Which copy of a chunk: its home, the home's data generation, its offset there. */
struct hbmpool_copy_id {
	u32 node_id;
	u32 gen;
	u64 offset;
};

/* The most copies one chunk map names: k replicas and a move's target. */
#define HBMPOOL_MAX_COPIES	8

/*
 * Where a chunk lives: its copies, the up-to-date ones first, nearest
 * first (one today; replicas later), and a generation bumped whenever the
 * set changes.  Replaced whole under RCU (by the region's maps_lock
 * holder), never edited in place: read it through hbmpool_read_copy() and
 * hbmpool_write_set().  A map with a SYNCING copy references its job.
 */
struct hbmpool_chunk_map {
	u32 gen;
	u32 nr_copies;
	struct hbmpool_resync *job;	/* the SYNCING copy's move, or NULL */
	struct hbmpool_copy copies[];
};

struct hbmpool_chunk {
	struct hbmpool_chunk_map __rcu *map;
	/*
	 * Re-replication's back-off (replication.c): replicate jobs of the
	 * chunk that failed in a row, and no new one before retry_at
	 * (jiffies; 0: none).  Set by the chunk's failing job, at most one
	 * at a time; read, and cleared once the chunk has all its copies, by
	 * the scanner.  READ_ONCE/WRITE_ONCE.
	 */
	unsigned long retry_at;
	unsigned int failures;
};

struct hbmpool_region;
int hbmpool_place(struct hbmpool_region *r);
void hbmpool_unplace(struct hbmpool_region *r);
bool hbmpool_chunk_on_node(struct hbmpool_region *r, u32 i,
			   struct hbmpool_node *node);
bool hbmpool_map_lost(const struct hbmpool_chunk_map *map);
u32 hbmpool_region_lost_chunks(struct hbmpool_region *r, u32 *degraded);

/* ---- replication (replication.c) ---- */

extern struct workqueue_struct *hbmpool_outdate_wq;
int hbmpool_map_outdate(struct hbmpool_region *r, u32 i,
			const struct hbmpool_copy_id *ids, unsigned long missed);
void hbmpool_replicate_kick(void);
void hbmpool_replicate_failed(struct hbmpool_region *r, u32 i);
void hbmpool_replicate_stop(void);
int hbmpool_replication_init(void);
void hbmpool_replication_exit(void);
u32 hbmpool_map_good(const struct hbmpool_chunk_map *map);
bool hbmpool_chunk_good(struct hbmpool_region *r, u32 i);
u32 hbmpool_node_chunks(struct hbmpool_node *node);
u64 hbmpool_chunk_len(struct hbmpool_region *r, u32 i);
struct hbmpool_chunk_map *hbmpool_map_alloc(u32 nr_copies, u32 gen);
void hbmpool_map_free(struct hbmpool_region *r, u32 i,
		      struct hbmpool_chunk_map *map, unsigned long give_back);
struct hbmpool_node *hbmpool_place_copy(struct hbmpool_region *r, u32 i,
					u32 to, u32 from, u64 *offset, u32 *gen,
					const char **why);

/* ---- regions (region.c) ---- */

struct hbmpool_region {
	struct kref ref;		/* lifetime */
	u32 id;
	bool shared;			/* found by name through REGION_OPEN */
	u32 policy;
	u32 preferred;
	u32 replicas;			/* copies each chunk should have, 1..HBMPOOL_REPLICAS_MAX */
	u32 ntf_degraded;		/* degraded chunks last announced: the scanner's */
	u32 ntf_lost;			/* lost chunks last announced: the scanner's */
	unsigned long ntf_at;		/* jiffies of that announcement: the scanner's */
	unsigned int chunk_shift;	/* log2(chunk_size) */
	u64 length;
	u64 chunk_size;
	DECLARE_BITMAP(nodes, HBMPOOL_MAX_NODES);	/* the node set */
	kuid_t uid;			/* owner, for netlink's region-get */
	umode_t mode;
	char name[HBMPOOL_NAME_LEN];
	pgoff_t nr_pages;
	u32 nr_chunks;
	bool placed;			/* chunks hold reservations */
	struct hbmpool_chunk *chunks;	/* nr_chunks maps, see placement.c */
	/*
	 * maps_lock serialises the replacement of placed chunk maps (chunk
	 * moves, resync.c); a leaf: never taken with hbmpool_nodes_lock or a
	 * page lock held.
	 */
	struct mutex maps_lock;
	struct inode *inode;		/* referenced; its mapping is page->mapping */
	/*
	 * Cached pages: index -> struct page, being fetched (locked), up to
	 * date, or failed (HBM_PG_ERROR/STALE, taken out by the next user).
	 * Pages enter under the xa_lock with the page locked; whoever erases
	 * a page entry (page -> NULL under the xa_lock) owns its removal.
	 */
	struct xarray pages;
	/*
	 * Pieces cached whole (huge.c): index >> HPAGE_PMD_ORDER -> entry;
	 * their indices in pages hold HBMPOOL_HUGE_MARK.
	 */
	struct xarray huge;
	atomic_long_t nr_cached;
	atomic_long_t nr_dirty;
	struct hbmpool_region_stats stats;
	int wp_score;			/* write prediction's (writepredict.c), no lock */
	struct hlist_node name_node;	/* shared: in the name table, under hbmpool_regions_lock */
	bool listed;			/* in hbmpool_regions, under hbmpool_regions_lock */
};

extern struct mutex hbmpool_regions_lock;
extern struct xarray hbmpool_regions;		/* id -> region, under hbmpool_regions_lock */
extern unsigned long hbmpool_nr_regions;	/* under hbmpool_regions_lock */

static inline struct address_space *hbmpool_mapping(struct hbmpool_region *r)
{
	return r->inode->i_mapping;
}

static inline const struct hbmpool_chunk_map *
hbmpool_chunk_map(struct hbmpool_region *r, pgoff_t index)
{
	return rcu_dereference(r->chunks[index >> (r->chunk_shift - PAGE_SHIFT)].map);
}

/*
 * A request with this data generation is refused (-EIO): it is about data
 * no good copy holds.  Node data generations never reach it.
 */
#define HBMPOOL_GEN_NONE	U32_MAX

void hbmpool_map_rcopies(const struct hbmpool_chunk_map *map,
			 struct hbmpool_rcopy *rc);
int hbmpool_map_pick(const struct hbmpool_chunk_map *map);

/*
 * Under rcu_read_lock(): the copy a fetch of page @index of @r reads
 * (hbmpool_replica_pick()), or NULL when no copy is good (the chunk is
 * lost).  Valid until rcu_read_unlock().
 */
static inline const struct hbmpool_copy *
hbmpool_read_copy_of(struct hbmpool_region *r, pgoff_t index)
{
	const struct hbmpool_chunk_map *map = hbmpool_chunk_map(r, index);
	int c;

	/* one copy, no move: the common case, whatever its state */
	if (likely(map->nr_copies == 1))
		return map->copies[0].state == HBMPOOL_COPY_UPTODATE ?
		       &map->copies[0] : NULL;
	c = hbmpool_map_pick(map);
	return c < 0 ? NULL : &map->copies[c];
}

/*
 * Under rcu_read_lock(): the node page @index of @r is read from (its first
 * copy if none is good), and the page's byte offset in that node's
 * segment.  The node is valid until rcu_read_unlock(); take a reference to
 * keep it.  It is also the node a page's events are counted for.
 */
static inline struct hbmpool_node *hbmpool_read_copy(struct hbmpool_region *r,
						     pgoff_t index, u64 *offset)
{
	const struct hbmpool_copy *cp = hbmpool_read_copy_of(r, index);
	u64 in_chunk = ((u64)index << PAGE_SHIFT) & (r->chunk_size - 1);

	if (!cp)
		cp = &hbmpool_chunk_map(r, index)->copies[0];
	if (offset)
		*offset = cp->offset + in_chunk;
	return cp->node;
}

/*
 * Under rcu_read_lock(): the map whose copies a write of page @index must
 * reach: each one hbmpool_copy_writable() says, at its generation.
 * Offsets are of the chunk; add the page's offset in the chunk
 * (hbmpool_offset_in_chunk()).
 */
static inline const struct hbmpool_chunk_map *
hbmpool_write_set(struct hbmpool_region *r, pgoff_t index)
{
	return hbmpool_chunk_map(r, index);
}

bool hbmpool_resync_failed(struct hbmpool_resync *job);

/*
 * Whether writes go to copy @c of @map: up to date, or filled by a live
 * move; an outdated copy takes none.
 */
static inline bool hbmpool_copy_writable(const struct hbmpool_chunk_map *map,
					 u32 c)
{
	switch (map->copies[c].state) {
	case HBMPOOL_COPY_UPTODATE:
		return true;
	case HBMPOOL_COPY_SYNCING:
		return !hbmpool_resync_failed(map->job);
	default:
		return false;
	}
}

/* The chunk page @index of @r is in. */
static inline u32 hbmpool_chunk_of(struct hbmpool_region *r, pgoff_t index)
{
	return index >> (r->chunk_shift - PAGE_SHIFT);
}

static inline u64 hbmpool_offset_in_chunk(struct hbmpool_region *r,
					  pgoff_t index)
{
	return ((u64)index << PAGE_SHIFT) & (r->chunk_size - 1);
}

/*
 * A reference to the node page @index of @r is read from, the offset, and
 * the generation of the node's data the chunk was placed in: with no good
 * copy, HBMPOOL_GEN_NONE, which the request is refused for.
 */
static inline struct hbmpool_node *hbmpool_read_copy_get(struct hbmpool_region *r,
							 pgoff_t index,
							 u64 *offset, u32 *gen)
{
	u64 in_chunk = hbmpool_offset_in_chunk(r, index);
	const struct hbmpool_copy *cp;
	struct hbmpool_node *node;

	rcu_read_lock();
	cp = hbmpool_read_copy_of(r, index);
	if (cp) {
		*gen = cp->gen;
	} else {
		cp = &hbmpool_chunk_map(r, index)->copies[0];
		*gen = HBMPOOL_GEN_NONE;
	}
	node = cp->node;
	*offset = cp->offset + in_chunk;
	hbmpool_node_get(node);
	rcu_read_unlock();
	return node;
}

void hbmpool_region_release(struct kref *ref);

static inline void hbmpool_region_put(struct hbmpool_region *r)
{
	kref_put(&r->ref, hbmpool_region_release);
}

long hbmpool_ioc_region_create(void __user *argp);
struct hbmpool_region *hbmpool_region_find(u32 id);
long hbmpool_ioc_region_open(void __user *argp);
struct hbmpool_region **hbmpool_regions_get_all(unsigned long *nr);
struct hbmpool_region *hbmpool_region_get_next(unsigned long *id);
const char *hbmpool_policy_name(u32 policy);
int hbmpool_regions_init(void);
void hbmpool_regions_exit(void);
void hbmpool_region_node_removed(struct hbmpool_region *r,
				 struct hbmpool_node *node);

/* ioctl struct copy helpers (main.c) */
int hbmpool_copy_in(void *dst, size_t ksize, size_t ver0,
		    void __user *src, u32 *usize);
int hbmpool_copy_out(void __user *dst, const void *src, size_t ksize, u32 usize);

/* ---- fault path (fault.c) ---- */

extern const struct vm_operations_struct hbmpool_vm_ops;
extern unsigned int hbmpool_fetch_timeout_ms;

/* hbmpool_fetch_start() and hbmpool_fill() flags */
#define HBMPOOL_FETCH_FAULT		BIT(0)	/* a failure is the fault's SIGBUS */
#define HBMPOOL_FETCH_MAY_WRITEBACK	BIT(1)	/* no mmap_lock held */
#define HBMPOOL_FETCH_AHEAD		BIT(2)	/* read ahead: nobody touched it yet */
#define HBMPOOL_FETCH_FAILOVER		BIT(3)	/* req->flags: timed out, another copy serves */
#define HBMPOOL_FETCH_ENDED_NR		5	/* req->flags: the fetch's outcome is in */
#define HBMPOOL_FETCH_TRIED_SHIFT	8	/* req->flags: bit 8 + c, copy c failed it */

int hbmpool_fetch_start(struct hbmpool_region *r, pgoff_t index,
			unsigned int max, unsigned int mark,
			unsigned long flags, struct hbmpool_req **reqp);
int hbmpool_fetch_wait(struct hbmpool_req *req);
int hbmpool_fill(struct hbmpool_region *r, pgoff_t index, unsigned int max,
		 unsigned int mark, unsigned long flags, unsigned int *nr);
struct page *hbmpool_lookup(struct hbmpool_region *r, pgoff_t index);
bool hbmpool_nowait_ok(struct hbmpool_region *r, pgoff_t index);

/* ---- huge mappings (huge.c) ---- */

/* Each index of a piece cached whole holds this in a region's pages. */
#define HBMPOOL_HUGE_MARK	xa_mk_value(0)

#ifdef CONFIG_TRANSPARENT_HUGEPAGE
vm_fault_t hbmpool_huge_fault(struct vm_fault *vmf, struct hbmpool_region *r);
bool hbmpool_huge_wanted(struct vm_fault *vmf, struct hbmpool_region *r);
bool hbmpool_huge_fetch(struct vm_fault *vmf, struct hbmpool_region *r);
bool hbmpool_huge_demote(struct hbmpool_region *r, pgoff_t index);
void hbmpool_huge_drop_at(struct hbmpool_region *r, pgoff_t index);
void hbmpool_huge_drop_range(struct hbmpool_region *r, pgoff_t first,
			     pgoff_t last);
void hbmpool_huge_drop_all(struct hbmpool_region *r);
long hbmpool_huge_evict(long nr);
long hbmpool_huge_nr_pages(void);
void hbmpool_huge_init(void);
void hbmpool_huge_exit(void);
#else
static inline vm_fault_t hbmpool_huge_fault(struct vm_fault *vmf,
					    struct hbmpool_region *r)
{
	return 0;
}

static inline bool hbmpool_huge_wanted(struct vm_fault *vmf,
				       struct hbmpool_region *r)
{
	return false;
}

static inline bool hbmpool_huge_fetch(struct vm_fault *vmf,
				      struct hbmpool_region *r)
{
	return false;
}

static inline bool hbmpool_huge_demote(struct hbmpool_region *r,
				       pgoff_t index)
{
	return false;
}

static inline void hbmpool_huge_drop_at(struct hbmpool_region *r,
					pgoff_t index)
{
}

static inline void hbmpool_huge_drop_range(struct hbmpool_region *r,
					   pgoff_t first, pgoff_t last)
{
}

static inline void hbmpool_huge_drop_all(struct hbmpool_region *r)
{
}

static inline long hbmpool_huge_evict(long nr)
{
	return 0;
}

static inline long hbmpool_huge_nr_pages(void)
{
	return 0;
}

static inline void hbmpool_huge_init(void)
{
}

static inline void hbmpool_huge_exit(void)
{
}
#endif

/* ---- mapping several pages per fault (faultaround.c) ---- */

void hbmpool_map_run(struct vm_fault *vmf, struct page **pages,
		     unsigned int nr);
void hbmpool_fa_miss(struct file_ra_state *ra);
void hbmpool_fa_hit(struct file_ra_state *ra);
void hbmpool_fa_mapped(struct file_ra_state *ra, unsigned int nr);
bool hbmpool_fa_missing(struct file_ra_state *ra);
vm_fault_t hbmpool_vm_map_pages(struct vm_fault *vmf, pgoff_t start,
				pgoff_t end);

/* ---- write prediction (writepredict.c) ---- */

bool hbmpool_wp_wanted(struct vm_fault *vmf, struct hbmpool_region *r,
		       struct page *page);
void hbmpool_wp_read_fault(struct vm_fault *vmf, struct hbmpool_region *r,
			   struct page *page);
void hbmpool_wp_write(struct vm_fault *vmf, struct hbmpool_region *r,
		      struct page *page);

/* ---- read-ahead (readahead.c) ---- */

#define HBMPOOL_RA_NO_MARK	UINT_MAX
#define HBMPOOL_RA_MAX		512U	/* pages: a 2 MiB run */
#define HBMPOOL_RA_DEFAULT	128U

extern unsigned int hbmpool_readahead_max;

void hbmpool_ra_init(struct file_ra_state *ra);
void hbmpool_ra_access(struct file_ra_state *ra, pgoff_t index);
unsigned int hbmpool_ra_window(struct hbmpool_region *r,
			       struct file_ra_state *ra,
			       unsigned long vm_flags, pgoff_t index,
			       unsigned int *mark);
void hbmpool_ra_record(struct file_ra_state *ra, pgoff_t start,
		       unsigned int nr);
void hbmpool_ra_async(struct hbmpool_region *r, struct file_ra_state *ra,
		      unsigned long vm_flags, pgoff_t index);

/* ---- the local cache (cache.c) ---- */

/* page->private bits of a cache page */
enum {
	/*
	 * A page is published locked; the completion of its fetch sets
	 * UPTODATE, or ERROR or STALE, and unlocks it.  HBM_PG_WRITEBACK is
	 * held by a write-back request until the transport is done with it,
	 * which may be after its waiter timed out.
	 */
	HBM_PG_UPTODATE,	/* holds the home's data */
	HBM_PG_ERROR,		/* a fault-driven fetch failed: the next fault gets SIGBUS */
	HBM_PG_STALE,		/* another fetch failed: the next user fetches again */
	HBM_PG_DIRTY,		/* newer than the home (or mapped writable); under the page lock */
	HBM_PG_WRITEBACK,	/* a write-back is in flight: a bit lock */
	HBM_PG_REFERENCED,	/* touched since the CLOCK hand passed */
	HBM_PG_LRU,		/* on the CLOCK list, under hbmpool_cache.lock */
	HBM_PG_READAHEAD,	/* read ahead: a fault on it reads the next window */
	HBM_PG_PROBE,		/* mapped read-only by a read fault: writepredict.c */
};

extern unsigned long hbmpool_cache_budget;
extern const struct address_space_operations hbmpool_cache_aops;

static inline struct hbmpool_region *hbmpool_page_region(struct page *page)
{
	return page->mapping->host->i_private;
}

int hbmpool_cache_init(void);
void hbmpool_cache_exit(void);
long hbmpool_cache_nr_cached(void);
bool hbmpool_cache_has_room(void);
bool hbmpool_cache_below_budget(void);
long hbmpool_cache_room(void);
long hbmpool_cache_budget_room(void);
long hbmpool_cache_nr_dirty(void);
void hbmpool_cache_charge(struct hbmpool_region *r, long nr);
void hbmpool_cache_dirty(struct hbmpool_region *r, long nr);
void hbmpool_lru_add(struct page *page);
void hbmpool_lru_add_run(struct page **pages, unsigned int nr);
void hbmpool_page_abandon(struct hbmpool_region *r, struct page *page);
bool hbmpool_page_abandon_failed(struct hbmpool_region *r, struct page *page);

/* pagepool.c: pages that left the cache, for the next fetches */
int hbmpool_pagepool_init(void);
void hbmpool_pagepool_exit(void);
void hbmpool_page_release_run(struct page **pages, unsigned int nr);
void hbmpool_page_release(struct page *page);
unsigned int hbmpool_pagepool_get(struct page **pages, unsigned int nr);
struct page *hbmpool_pagepool_alloc(void);
unsigned int hbmpool_pagepool_alloc_bulk(struct page **pages, unsigned int nr);
void hbmpool_pagepool_fit(void);
long hbmpool_pagepool_nr(void);
long hbmpool_pagepool_recycled(void);
struct page *hbmpool_hugepool_alloc(gfp_t gfp);
void hbmpool_hugepool_put(struct page *head);
bool hbmpool_compound_poisoned(struct page *head);
long hbmpool_hugepool_nr(void);
long hbmpool_hugepool_recycled(void);
struct page *hbmpool_page_new(struct hbmpool_region *r, pgoff_t index,
			      bool referenced);
void hbmpool_make_room(bool may_writeback);
bool hbmpool_make_room_nowait(unsigned int nr);
long hbmpool_evict_clean(long nr);
void hbmpool_cache_budget_changed(void);
/* The most pages one write-back request carries. */
#define HBMPOOL_WB_BATCH	32
int hbmpool_writeback_page(struct hbmpool_region *r, struct page *page);
int hbmpool_writeback_run(struct hbmpool_region *r, struct page **pages,
			  unsigned int nr, unsigned int *written);
bool hbmpool_remove_page(struct hbmpool_region *r, struct page *page);
/* The most pages hbmpool_cache_take() takes out at once: a 2 MiB piece. */
#define HBMPOOL_TAKE_MAX	512
int hbmpool_cache_take(struct hbmpool_region *r, struct page **pages,
		       unsigned int nr, void *mark);
void hbmpool_drop_page(struct hbmpool_region *r, struct page *page);
void hbmpool_drop_poisoned(struct hbmpool_region *r, struct page *page);
void hbmpool_cache_forget_region(void);

#endif /* _HBMPOOL_INTERNAL_H */
