/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hbmsys: thin userspace wrappers around /dev/hbmpool, sysfs and debugfs,
 * shared by the tools and the selftests.  Every function returns 0 (or a
 * non-negative value) on success and a negative errno on failure; none of
 * them prints anything.
 */
#ifndef HBMSYS_H
#define HBMSYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/hbmpool.h>

#include "hbmlib.h"

#define HBM_DEV		"/dev/" HBMPOOL_DEV_NAME
#define HBM_SYSFS	"/sys/kernel/hbmpool"
#define HBM_DEBUGFS	"/sys/kernel/debug/hbmpool"

/* Read a sysfs-style file into buf (NUL-terminated, trailing '\n' stripped). */
int hbm_read_str(const char *path, char *buf, size_t len);
int hbm_read_u64(const char *path, uint64_t *v);
/* printf-style path variants. */
int hbm_readf_u64(uint64_t *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int hbm_readf_str(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* One write(2) of s; the errno of a rejected write comes back as -errno. */
int hbm_write_str(const char *path, const char *s);
int hbm_write_u64(const char *path, uint64_t v);

/* Global parameters and counters (files directly under HBM_SYSFS). */
int hbm_global_u64(const char *name, uint64_t *v);
/*
 * Sets "cache_budget_pages" or "fetch_timeout_ms" through the netlink
 * family's params-set (sysfs shows them read-only); -EINVAL for another
 * name, the kernel's -errno on refusal.
 */
int hbm_set_global_u64(const char *name, uint64_t v);

/* Simulated nodes. link may be NULL for the default. */
int hbm_node_add(unsigned int id, unsigned int capacity_mib,
		 unsigned int distance, const char *link);
int hbm_node_del(unsigned int id);
/* Declare node id dead (netlink node-set state fenced). */
int hbm_node_fence(unsigned int id);
/* nodes/nodeN/<attr> */
int hbm_node_u64(unsigned int id, const char *attr, uint64_t *v);
int hbm_node_str(unsigned int id, const char *attr, char *buf, size_t len);
/* debugfs nodeN/<knob> */
int hbm_node_knob(unsigned int id, const char *knob, uint64_t v);
/* pread of debugfs nodeN/hbm; returns bytes read or -errno. */
ssize_t hbm_hbm_pread(unsigned int id, void *buf, size_t len, uint64_t off);

struct hbm_node {
	uint32_t id;
	uint32_t distance;
	uint64_t capacity_bytes;
	uint64_t free_bytes;
	char link_type[16];
	char state[16];
	char transport[16];
};
/* Every node in nodes/, ascending id; returns the count (at most max). */
int hbm_list_nodes(struct hbm_node *out, int max);

/* Region ioctls. */
int hbm_dev_open(void);
/* GET_FEATURES into *f (size set here); 0 or -errno. */
int hbm_features(int devfd, struct hbmpool_features *f);
/* This node's id in the domain (features.self_node), or -errno. */
int hbm_self_node(int devfd);
/*
 * A CREATE request over the node set nodes: rc->nodes_ptr points at
 * nodes->w and nr_node_bits is HBM_NODESET_BITS, so nodes must stay valid
 * until hbm_region_create(rc) returns.  nodes NULL: nodes_ptr and
 * nr_node_bits 0 (which the kernel rejects), for callers that fill them in.
 */
void hbm_create_init(struct hbmpool_region_create *rc, uint64_t length,
		     uint64_t chunk_size, uint32_t policy,
		     const struct hbm_nodeset *nodes, uint32_t preferred,
		     const char *name);
/*
 * Ask for replicas copies of every chunk (1..HBMPOOL_REPLICAS_MAX; the
 * kernel needs HBMPOOL_FEAT_REPLICAS for more than 1).  0, or -EINVAL
 * (rc unchanged) for another count.  hbm_create_init() leaves 0: one copy.
 */
int hbm_create_replicas(struct hbmpool_region_create *rc, uint32_t replicas);
/* Returns the new region fd or -errno. */
int hbm_region_create(int devfd, struct hbmpool_region_create *rc);
/* Opens the shared region called name; returns its new fd or -errno. */
int hbm_region_open(int devfd, const char *name, struct hbmpool_region_open *ro);
/*
 * A "key:\tvalue" line of /proc/self/fdinfo/FD (a region's state);
 * -ENOENT if there is no such key.
 */
int hbm_fdinfo_str(int fd, const char *key, char *buf, size_t len);
int hbm_fdinfo_u64(int fd, const char *key, uint64_t *v);
/* A region's counters from its fdinfo (lat_hist is left zero). */
int hbm_fdinfo_stats(int fd, struct hbmpool_stats *st);
/*
 * REGION_INFO: up to max chunk entries into chunks (may be NULL), entries
 * sizeof(struct hbmpool_chunk_info) apart, and the node set into nodes (may
 * be NULL; a set holds every id the kernel accepts).  On success ri holds
 * the kernel's answer: nr_chunks, nr_nodes, nr_node_bits (the bits the set
 * needs), chunk_entry_size (the kernel's entry size), ...
 */
int hbm_region_info(int fd, struct hbmpool_region_info *ri,
		    struct hbmpool_chunk_info *chunks, uint32_t max,
		    struct hbm_nodeset *nodes);
int hbm_region_stats(int fd, struct hbmpool_stats *st);
int hbm_region_sync(int fd, uint64_t off, uint64_t len, struct hbmpool_range *out);
int hbm_region_prefetch(int fd, uint64_t off, uint64_t len, struct hbmpool_range *out);

/*
 * Parse a sysfs stats/ directory (faults, fetches, ..., fetch_latency_hist)
 * into a struct hbmpool_stats (size/pad/reserved zero).
 */
int hbm_read_stats_dir(const char *dir, struct hbmpool_stats *st);

/* Field names of struct hbmpool_stats counters, in order, for printing. */
#define HBM_NR_COUNTERS 8
extern const char *const hbm_counter_names[HBM_NR_COUNTERS];
/* Pointer to counter i of st (faults .. timeouts). */
__u64 *hbm_counter(struct hbmpool_stats *st, int i);

/* Monotonic clock in ns. */
uint64_t hbm_now_ns(void);

#endif /* HBMSYS_H */
