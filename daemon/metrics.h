/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hbmpoold's Prometheus metrics ([metrics] listen in the config), in three
 * parts, one concern each:
 *
 *  - metrics.c, pure logic: the text exposition format (version 0.0.4)
 *    of a snapshot (struct hbmd_metrics_snap): one family per metric
 *    name, its "# HELP" and "# TYPE" lines first, then its samples; label
 *    values escaped (\\, \", \n), help texts too (\\, \n);
 *  - metrics_collect.c: the snapshot from the agent's in-memory view and
 *    quick netlink reads of the kernel (nodes, links, counters).  It never
 *    talks to etcd, so a scrape never waits on it;
 *  - metrics_http.c: the HTTP endpoint, libmicrohttpd without a thread of
 *    its own (MHD_USE_EPOLL): the caller's loop polls the descriptor of
 *    hbmd_metrics_fd() (MHD's epoll descriptor) and calls
 *    hbmd_metrics_run() when it is readable or hbmd_metrics_deadline() has
 *    come.  GET (and HEAD) of /metrics: 200, Content-Type
 *    "text/plain; version=0.0.4; charset=utf-8"; another path: 404;
 *    another method on /metrics: 405 with "Allow: GET, HEAD".
 *
 * The metrics (hbmpool_ from the domain and the kernel, hbmpoold_ about
 * the daemon itself; label node is a node id):
 *
 *   hbmpoold_info{domain,node}			1
 *   hbmpoold_agent_state{state}			one-hot: new, member, fenced, stopped
 *   hbmpoold_fenced				1 once this node fenced itself
 *   hbmpoold_is_leader				1 if this node holds the leader key
 *   hbmpoold_lease_ttl_seconds			the lease's TTL
 *   hbmpoold_lease_valid_seconds		how long the lease is proven alive
 *   hbmpoold_incarnation			this node's segment incarnation
 *   hbmpoold_kernel_read_ok{read}		1/0: nodes, links, stats read now
 *   hbmpool_domain_epoch			the membership epoch
 *   hbmpool_domain_members			how many members
 *   hbmpool_domain_leader			the leader's id, -1 if none known
 *   hbmpool_member_up{node}			1: live in this kernel (or this node)
 *   hbmpool_member_state{node,state}		one-hot: self, live, fenced, absent
 *   hbmpool_node_state{node,state}		one-hot: live, unreachable, fenced, removed
 *   hbmpool_node_capacity_bytes{node}		the kernel's capacity of each node
 *						(this node: its cache budget)
 *   hbmpool_node_free_bytes{node}		and what is free on it
 *   hbmpool_link_oper_state{node,state}	one-hot: down, up
 *   hbmpool_link_health{node,state}		one-hot: down, connecting, live, degraded
 *   hbmpool_link_rtt_seconds{node}		the link's last round-trip time
 *   hbmpool_faults_total ... hbmpool_shrinker_freed_pages_total
 *						the kernel's counters (stats-get)
 *   hbmpool_cached_pages, hbmpool_dirty_pages	now
 *   hbmpool_regions, hbmpool_region_lost_chunks, hbmpool_region_degraded_chunks
 *
 * A family whose source could not be read (a kernel read failed) has no
 * samples, and hbmpoold_kernel_read_ok says which read failed.
 */
#ifndef HBMPOOLD_METRICS_H
#define HBMPOOLD_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

#define HBMD_METRICS_CONTENT_TYPE	"text/plain; version=0.0.4; charset=utf-8"

struct hbmd_agent;

struct hbmd_metrics_member {
	uint32_t id;
	const char *kernel;		/* self, live, fenced, absent */
};

/* What one scrape shows: the agent's view and the kernel's. */
struct hbmd_metrics_snap {
	const char *domain;
	uint32_t node_id;
	const char *state;		/* the agent's: new, member, fenced, stopped */
	bool fenced, is_leader;
	int64_t epoch;
	int leader_id;			/* -1: none known */
	uint64_t incarnation;
	uint64_t lease_ttl_ms, lease_valid_ms;

	struct hbmd_metrics_member *members;
	size_t nr_members;

	bool nodes_ok, links_ok, stats_ok;	/* the kernel reads that worked */
	struct hbmd_kernel_node *nodes;
	size_t nr_nodes;
	struct hbmd_kernel_link *links;
	size_t nr_links;
	struct hbmd_kernel_stats stats;
};

/*
 * The exposition text of s (malloc'ed, NUL-terminated, *len bytes without
 * the NUL).  0 or -ENOMEM.
 */
int hbmd_metrics_render(const struct hbmd_metrics_snap *s, char **text, size_t *len);

/*
 * The snapshot now, from the agent and its kernel (metrics_collect.c).
 * Kernel reads that fail leave their *_ok false.  0 or -ENOMEM; free it
 * with hbmd_metrics_snap_free() in both cases.
 */
int hbmd_metrics_collect(const struct hbmd_agent *a, const char *domain, uint32_t node_id,
			 struct hbmd_metrics_snap *s);
void hbmd_metrics_snap_free(struct hbmd_metrics_snap *s);

/* The agent a scrape reads: arg of hbmd_metrics_scrape(). */
struct hbmd_metrics_source {
	const struct hbmd_agent *agent;
	const char *domain;
	uint32_t node_id;
};
/* An hbmd_metrics_fn: collect, then render (arg: struct hbmd_metrics_source). */
int hbmd_metrics_scrape(void *arg, char **text, size_t *len);

/* ---- the endpoint (metrics_http.c) ---- */

/* Make the body of one scrape: malloc'ed text, its length; 0 or -errno. */
typedef int hbmd_metrics_fn(void *arg, char **text, size_t *len);

struct hbmd_metrics;

/*
 * Listen on listen ("ADDR:PORT", "[ADDR6]:PORT", hbm_config_parse_listen();
 * port 0: any free port, see hbmd_metrics_port()) and answer scrapes with
 * fn(arg).  Nothing is served until hbmd_metrics_run().  0, or -errno
 * with the reason in err.
 */
int hbmd_metrics_open(const char *listen, hbmd_metrics_fn *fn, void *arg,
		      struct hbmd_metrics **out, char *err, size_t errlen);
/* The descriptor to poll for POLLIN (MHD's epoll descriptor). */
int hbmd_metrics_fd(const struct hbmd_metrics *m);
/* When hbmd_metrics_run() is due even without POLLIN (CLOCK_MONOTONIC ms; UINT64_MAX: never). */
uint64_t hbmd_metrics_deadline(const struct hbmd_metrics *m);
/* Do what is ready: accept, read requests, answer.  Never blocks. */
void hbmd_metrics_run(struct hbmd_metrics *m);
/* The port it listens on. */
uint16_t hbmd_metrics_port(const struct hbmd_metrics *m);
void hbmd_metrics_close(struct hbmd_metrics *m);

#endif /* HBMPOOLD_METRICS_H */
