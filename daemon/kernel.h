/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's view of the kernel, as a table of operations, so that the
 * agent (agent.c) can be tested against a fake kernel that records the
 * calls (selftests/unit/fake_kernel.c) and runs on the real one through
 * the hbmpool generic netlink family (kernel_nl.c, over tools/lib/hbmnl).
 *
 * Every operation returns 0 or a negative errno and writes a message for
 * the operator into err (errlen bytes; "" on success).  -EOPNOTSUPP means
 * that the running kernel does not have the operation yet (issue 9's
 * kernel side): the netlink implementation maps a kernel that refuses an
 * attribute it does not know (EINVAL, the extack pointing at it) to it.
 * The agent reports an unsupported operation once and goes on.
 */
#ifndef HBMPOOLD_KERNEL_H
#define HBMPOOLD_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A member's distance and link type come from its location and this
 * node's ([node] tray, rack, site) and the [distance] table: topology.h.
 */
/*
 * node-new's capacity is at most 64 GiB (the spec's check); the kernel
 * replaces it by the home's segment size once connected.
 */
#define HBMD_PEER_CAPACITY_MAX	(64ULL << 30)

/* This node's place in the domain, set once at start. */
struct hbmd_kernel_setup {
	const char *domain;
	uint32_t self_id;
	const unsigned char *key;	/* the domain key */
	size_t key_len;
	uint64_t segment_bytes;		/* the segment this node exports */
	/* provider shm: this node's ivshmem device (PCI name); NULL: provider ram */
	const char *segment_device;
	const char *addr;		/* where this node's home listens: IPv4 or IPv6 literal */
	uint16_t port;
};

/*
 * A member to reach through the TCP transport, or through transport shm
 * (device set: its segment's ivshmem device here, shm_discover.h).
 */
struct hbmd_kernel_peer {
	uint32_t id;
	const char *addr;		/* IPv4 or IPv6 literal */
	uint16_t port;
	uint64_t capacity;		/* bytes */
	uint32_t distance;
	int link_type;			/* enum hbmpool_nl_link_type */
	uint32_t failure_domain;	/* 0: none (not sent) */
	const char *device;		/* transport shm: the home's device; NULL: tcp */
};

#define HBMD_NODE_FENCED	2	/* HBMPOOL_NODE_STATE_FENCED */
#define HBMD_NODE_REMOVED	3	/* HBMPOOL_NODE_STATE_REMOVED: on its way out */

/* The domain as the kernel has it (domain-get). */
struct hbmd_kernel_domain {
	uint64_t epoch;			/* 0: none, or a kernel without it */
	/*
	 * This node fenced itself (domain-set fenced): its segment serves
	 * nothing.  The domain's flag, never the self node's state; it
	 * survives a segment's deletion, and a new segment clears it.
	 */
	bool fenced;
};

/* A node as the kernel has it. */
struct hbmd_kernel_node {
	uint32_t id;
	int state;			/* enum hbmpool_nl_node_state */
	bool self;
	bool draining;			/* it takes no new chunks (false: a kernel without it) */
	bool shm;			/* its transport is shm */
	uint64_t capacity, free;	/* bytes (0 if the kernel gave none) */
	uint32_t weight;		/* placement's effective weight (0: none given) */
};

/* A link as the kernel has it. */
struct hbmd_kernel_link {
	uint32_t node_id;
	int oper_state;			/* enum hbmpool_nl_link_state */
	int health;			/* enum hbmpool_nl_link_health, -1: none */
	uint64_t rtt_ns;		/* the transport's EWMA, 0: none */
	/* cumulative, since the node was added (0 if the kernel lacks one) */
	uint64_t requests;		/* failed ones included */
	uint64_t errors;		/* timeouts included */
	uint64_t timeouts;
	uint64_t retries;
	uint64_t digest_errors;
	uint64_t flaps;			/* oper-state changes */
};

/* The kernel's counters (stats-get) and its regions (region-get dump). */
struct hbmd_kernel_stats {
	uint64_t faults, fetches, bytes_fetched, writebacks, bytes_written_back;
	uint64_t evictions, errors, timeouts, over_budget, shrinker_freed;
	uint64_t cached_pages, dirty_pages;	/* now, not counters */
	uint64_t regions;			/* how many there are */
	uint64_t lost_chunks;			/* over every region */
	/*
	 * Over every region (0 from a kernel without replicated regions):
	 * chunks with fewer good copies than the region's replicas, lost
	 * ones included; the regions with replicas > 1; the regions with a
	 * degraded chunk.
	 */
	uint64_t degraded_chunks;
	uint64_t replicated_regions;
	uint64_t degraded_regions;
};

/*
 * The kernel's monitor group (HBMPOOL_MCGRP_MONITOR), as small structs:
 * what changed, not the whole object.  The agent takes an event as a hint
 * and reads the kernel again when it contradicts its view (events are
 * queued: they may describe a state the agent has changed since).
 */
enum hbmd_kernel_event_kind {
	HBMD_KEV_NODE_ADD,	/* node-add-ntf: id, state, self */
	HBMD_KEV_NODE_DEL,	/* node-del-ntf: id, self */
	HBMD_KEV_NODE_CHANGE,	/* node-change-ntf: id, state, self */
	HBMD_KEV_LINK,		/* link-change-ntf: id (the peer), state (oper), health */
	HBMD_KEV_DOMAIN,	/* domain-change-ntf: fenced, epoch */
	HBMD_KEV_SEGMENT,	/* segment-change-ntf */
	HBMD_KEV_RESYNC,	/* resync-change-ntf: id (the move), state */
	HBMD_KEV_REGION,	/* region-new-ntf, region-del-ntf: id (the region) */
	/*
	 * region-change-ntf: id (the region), degraded, lost: its chunks'
	 * health changed (at most once a second per region)
	 */
	HBMD_KEV_REGION_CHANGE,
	/*
	 * Events were lost (the socket overran: ENOBUFS; or a gap in the
	 * kernel's event numbers): the reader dumps again.  The events that
	 * follow are newer than the loss.
	 */
	HBMD_KEV_OVERRUN,
};

struct hbmd_kernel_event {
	int kind;			/* enum hbmd_kernel_event_kind */
	uint64_t seq;			/* the kernel's event number, 0: none */
	uint32_t id;			/* node and link events: the node */
	/* node: enum hbmpool_nl_node_state; link: oper state; resync: its state */
	int state;
	int health;			/* link: enum hbmpool_nl_link_health, -1: none */
	bool self;			/* node events: this node */
	bool fenced;			/* domain: this node fenced */
	uint64_t epoch;			/* domain: its epoch (0: none) */
	/* region change: its degraded-chunks (lost included) and lost-chunks now */
	uint32_t degraded, lost;
};

/*
 * A chunk of this node's regions (region-get dump with the chunks flag):
 * chunk moves (drains, drain_agent.c).
 */
#define HBMD_NO_NODE	UINT32_MAX
#define HBMD_SET_WORDS	16		/* a node set: HBMPOOL_MAX_NODES bits */
struct hbmd_kernel_chunk {
	uint32_t region, index;
	uint32_t node;			/* the home of its (first) up-to-date copy */
	uint32_t syncing_node;		/* a move in progress to it, HBMD_NO_NODE: none */
	bool lost;			/* its home lost the memory that held it (never moved) */
	uint64_t bytes;			/* the region's chunk size (its last chunk: what is left) */
	uint64_t set[HBMD_SET_WORDS];	/* its region's node set (all 0: not known) */
	int policy;			/* its region's, enum hbmpool_nl_placement_policy; -1: not known */
};

/* A chunk move as the kernel has it (resync-get). */
struct hbmd_kernel_resync {
	uint32_t id, region, chunk;
	uint32_t from, to;		/* HBMD_NO_NODE: not given */
	int state;			/* enum hbmpool_nl_resync_state */
	int error;			/* failed: a positive errno */
	uint32_t pages, pages_done;
};

struct hbmd_kernel_ops {
	/*
	 * Domain name, self id, key; this node's listening address (node-set
	 * on the self node: the home listens there); the segment (created if
	 * there is none, provider shm on segment_device if set, else ram;
	 * else the existing one is kept if its size, provider and device are
	 * the setup's: -EEXIST otherwise); its incarnation.
	 */
	int (*setup)(void *ctx, const struct hbmd_kernel_setup *s, uint64_t *incarnation,
		     char *err, size_t errlen);
	/* A member joins: node-new, transport tcp, or shm with p->device. */
	int (*node_add)(void *ctx, const struct hbmd_kernel_peer *p, char *err, size_t errlen);
	/*
	 * node-set distance and link-type of a peer: its location changed, or
	 * the [distance] table did (a reload).  Placement uses the new
	 * distance for regions placed from then on.  May be NULL (the node
	 * keeps what it was added with).
	 */
	int (*node_place)(void *ctx, uint32_t id, uint32_t distance, int link_type, char *err,
			  size_t errlen);
	/*
	 * node-set failure-domain of a peer (0: none): its member value
	 * names another one.  Placement keeps the copies of a replicated
	 * chunk on distinct failure domains from then on.  May be NULL;
	 * a kernel without replicated regions refuses the attribute.
	 */
	int (*node_failure_domain)(void *ctx, uint32_t id, uint32_t failure_domain, char *err,
				   size_t errlen);
	/*
	 * node-set draining 1|0 of a peer: 1, the node takes no new chunks
	 * (the regions placed on it keep theirs: moving them needs the
	 * kernel's chunk migration, not there yet); 0, it takes them again.
	 * node-new has no draining: a node added while drained gets it
	 * right after.  May be NULL (no drains in this kernel interface);
	 * -EOPNOTSUPP from a kernel without the attribute.
	 */
	int (*node_drain)(void *ctx, uint32_t id, bool draining, char *err, size_t errlen);
	/* node-del. */
	int (*node_remove)(void *ctx, uint32_t id, char *err, size_t errlen);
	/* The member is dead: node-set state fenced (pending fetches fail at once). */
	int (*node_fence)(void *ctx, uint32_t id, char *err, size_t errlen);
	/*
	 * The domain as the kernel has it now (one domain-get): its epoch and
	 * whether this node is fenced.  An event says what was true when it
	 * was sent, and a new segment may have ended a fence since.
	 */
	int (*domain_read)(void *ctx, struct hbmd_kernel_domain *d, char *err, size_t errlen);
	/* domain-set epoch (never decreasing). */
	int (*set_epoch)(void *ctx, uint64_t epoch, char *err, size_t errlen);
	/* domain-set fenced: this node's segment stops serving.  Final. */
	int (*fence_self)(void *ctx, char *err, size_t errlen);
	/* Every node (malloc'ed array, *n entries; free() it). */
	int (*nodes_read)(void *ctx, struct hbmd_kernel_node **nodes, size_t *n,
			  char *err, size_t errlen);
	/* Every link (malloc'ed array): the health sampler's input (health.h). */
	int (*links_read)(void *ctx, struct hbmd_kernel_link **links, size_t *n,
			  char *err, size_t errlen);
	void (*close)(void *ctx);
	/*
	 * Chunk moves (HBMPOOL_FEAT_RESYNC; each may be NULL: no moves, the
	 * drains then only stop new chunks; chunks_read NULL: an ops table
	 * without regions, nothing to move).  -EOPNOTSUPP: a kernel without.
	 *
	 * chunks_read: every chunk of this node's regions (malloc'ed array).
	 * resync_new: move chunk of region from node from (resync-new
	 * from-node-id; the target is placement's); *id the move's id.
	 * resync_read: every move (copying, or ended in the last 60 s).
	 * resync_del: cancel a move, or forget an ended one.
	 * resync_params: set resync-mbps unless mbps is UINT32_MAX, then read
	 * resync-jobs into *jobs (0: the kernel did not say).
	 */
	int (*chunks_read)(void *ctx, struct hbmd_kernel_chunk **chunks, size_t *n,
			   char *err, size_t errlen);
	int (*resync_new)(void *ctx, uint32_t region, uint32_t chunk, uint32_t from, uint32_t *id,
			  char *err, size_t errlen);
	/*
	 * Optional: a move of chunk of region from node from to node to (the
	 * rebalancer's); as resync_new otherwise.
	 */
	int (*resync_new_to)(void *ctx, uint32_t region, uint32_t chunk, uint32_t from,
			     uint32_t to, uint32_t *id, char *err, size_t errlen);
	int (*resync_read)(void *ctx, struct hbmd_kernel_resync **moves, size_t *n,
			   char *err, size_t errlen);
	int (*resync_del)(void *ctx, uint32_t id, char *err, size_t errlen);
	int (*resync_params)(void *ctx, uint32_t mbps, uint32_t *jobs, char *err, size_t errlen);
	/*
	 * Stop exporting this node's segment and free it (segment-del): after
	 * a graceful leave, so that the next start exports a new one, with a
	 * new incarnation.  -EBUSY while a client holds chunks of it.  May be
	 * NULL.
	 */
	int (*segment_del)(void *ctx, char *err, size_t errlen);
	/*
	 * Placement's last resorts ([placement]): full_pct (1..100) and
	 * avoid_degraded, the kernel's params full-pct and avoid-degraded.
	 * May be NULL (a kernel interface without them).
	 */
	int (*placement_params)(void *ctx, uint32_t full_pct, bool avoid_degraded, char *err,
				size_t errlen);
	/*
	 * The counters and the regions, for the metrics (quick reads, no
	 * change).  May be NULL in an ops table that has no counters.
	 */
	int (*stats_read)(void *ctx, struct hbmd_kernel_stats *s, char *err, size_t errlen);
	/*
	 * The event channel: a descriptor of its own (not the requests'),
	 * subscribed to the monitor group, non-blocking, readable (POLLIN)
	 * when events are pending; owned by the ops (closed by close()).
	 * Open it before the first dump, so that no change falls between the
	 * two.  May be NULL (no events: the kernel is read at start only).
	 */
	int (*events_open)(void *ctx, char *err, size_t errlen);
	/*
	 * Up to n pending events into ev, oldest first: how many (0: none
	 * pending), or -errno.  A loss is an HBMD_KEV_OVERRUN event in its
	 * place in the stream.
	 */
	int (*events_read)(void *ctx, struct hbmd_kernel_event *ev, size_t n,
			   char *err, size_t errlen);
};

struct hbmd_kernel {
	const struct hbmd_kernel_ops *ops;
	void *ctx;
};

/*
 * The real kernel: opens the hbmpool family.  -ENOENT (message in err) if
 * the module is not loaded.
 */
int hbmd_kernel_nl_open(struct hbmd_kernel *k, char *err, size_t errlen);

#endif /* HBMPOOLD_KERNEL_H */
