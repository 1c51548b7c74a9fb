/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The transport interface: how the core reaches a home node's memory.
 *
 * A transport (the simulated fabric today; TCP, RDMA and shared memory
 * later) registers a struct hbmpool_transport, possibly from a module of its
 * own.  Each node is attached to one transport, which keeps its per-node
 * state in node->priv (node_priv_size bytes, allocated by the core).  The
 * core moves pages with requests (struct hbmpool_req): runs of pages to read
 * from or write to one home, completed by the transport from any context.
 * The core owns the timeout of every request and the state of the pages a
 * request carries: completion, not the waiter, makes a fetched page up to
 * date or failed and unlocks it.
 */
#ifndef _HBMPOOL_TRANSPORT_H
#define _HBMPOOL_TRANSPORT_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/timer.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct hbmpool_node;
struct hbmpool_req;
struct page;

/* Bumped whenever struct hbmpool_transport_ops or the request contract changes. */
#define HBMPOOL_TRANSPORT_API	5

/* The most pages one request carries. */
#define HBMPOOL_REQ_MAX_PAGES	512

enum hbmpool_req_op {
	HBMPOOL_REQ_READ,	/* home -> pages */
	HBMPOOL_REQ_WRITE,	/* pages -> home */
};

/**
 * struct hbmpool_req - a transfer of a run of pages between this node and a
 *	home node's memory
 * @ref: lifetime.  The submitter holds one reference, the transport one
 *	from ->submit() until it calls hbmpool_req_complete(), the timeout
 *	timer one while armed.
 * @node: the home (referenced).
 * @op: read or write.
 * @offset: byte offset of the first page in the home's segment.
 * @nr_pages: number of pages, 1..HBMPOOL_REQ_MAX_PAGES.
 * @pages: the pages, each referenced until the request is released, or
 *	until a completed request drops the references early
 *	(hbmpool_req_unlock_put_pages(), hbmpool_req_put_pages()).
 * @status: 0 or a negative errno, set once by completion or timeout.
 * @timed_out: the core's timeout, not the transport, ended it: the
 *	transport may still use the pages until it completes the request.
 * @pages_put: the page references were dropped early.
 * @end_io: called exactly once, by the first of completion and timeout, in
 *	their context (which may be hard or soft interrupt): it must not
 *	sleep.  It decides what happens to the pages.
 * @private: @end_io's data.
 * @flags: the submitter's.
 * @owner: the cache page a request acts for, if not one of @pages (a
 *	write-back carries a snapshot of it); the submitter's business.
 * @destructor: the submitter's, called when the request is released, in
 *	process context.
 * @done: completed after @end_io, for a submitter that waits.
 * @free_work: release in process context when the last put is not.
 * @end_work: the submitter's, to go on in process context after @end_io
 *	(a fetch carried on to another copy); it holds a reference while
 *	queued.
 * @start_ns: when the request was submitted.
 * @data_gen: the generation of the home's data the request is about
 *	(hbmpool_node_data_gen() when its chunk was placed): a request about
 *	data the home lost is refused with -EIO, and a transport that learns
 *	of the loss while the request waits must not send it.
 * @pdu: the transport's per-request state, req_pdu_size bytes.
 * @parent: the request that this one carries on, if any (a fetch gone on
 *	to another copy), referenced until this one is released; the
 *	submitter's business.
 *
 * A transport must treat the pages of a request it completed late (after
 * its timeout) as still its own until it calls hbmpool_req_complete(): they
 * stay referenced, and the core never reuses them.
 */
struct hbmpool_req {
	struct kref ref;
	struct hbmpool_node *node;
	enum hbmpool_req_op op;
	u64 offset;
	unsigned int nr_pages;
	struct page **pages;
	int status;
	bool timed_out;
	bool pages_put;
	atomic_t state;			/* HBMPOOL_REQ_* in transport.c */
	struct timer_list timer;
	void (*end_io)(struct hbmpool_req *req);
	void *private;
	unsigned long flags;
	struct page *owner;
	void (*destructor)(struct hbmpool_req *req);
	struct completion done;
	struct work_struct free_work;
	struct work_struct end_work;
	u64 start_ns;
	u32 data_gen;
	void *pdu;
	struct hbmpool_req *parent;
};

/*
 * What a transport knows of its link to a node, for link-get and for
 * placement: its health (enum hbmpool_lstate of linkstate.h), round trips
 * and counters.
 */
struct hbmpool_link_info {
	u32 health;
	u64 rtt_ns;			/* EWMA; 0 before the first sample */
	u64 rtt_hist[32];		/* log2 ns buckets */
	u64 incarnation;		/* of the home's segment, 0 if unknown */
	u64 bytes;			/* moved by completed requests */
	u64 retries;			/* requests sent again after a reconnect */
	u64 digest_errors;
	u64 connects;			/* connections established */
	u64 auth_failures;		/* handshakes refused */
};

/**
 * struct hbmpool_transport_ops - what a transport does for the core
 * @attach: set up node->priv for a new node; may sleep.  @params is the
 *	transport's part of the node's creation request (may be NULL).
 * @submit: start @req.  The transport owns one reference and must call
 *	hbmpool_req_complete() exactly once, from any context, possibly
 *	before ->submit() returns.  A request it cannot start is completed
 *	with an error, never dropped.
 * @copy_nowait: optional.  Read @nr pages at @offset into @pages now, with
 *	the CPU, neither sleeping nor waiting (called under mmap_lock, from
 *	the fault fast path).  Non-zero: not possible now, the core submits
 *	a request instead.
 * @alloc_chunks: reserve @len bytes of the home's segment for a region of
 *	this node; the home chooses the offset.  -ENOSPC when full.  May
 *	sleep.  The home owns the allocator: chunks of different clients
 *	never overlap.
 * @free_chunks: give back what @alloc_chunks returned; the home may drop
 *	the memory's contents.  @gen is the node's data generation the
 *	chunk was placed in: a transport that learns of a loss before the
 *	free reaches the home drops it (the new memory holds nothing of
 *	the old chunk's, and may hold a new chunk at the same offset).  May
 *	sleep.
 * @free_bytes: bytes of the home's segment not allocated.
 * @shutdown: the node leaves: complete what is in flight (with -ENODEV),
 *	refuse new requests (complete them at once).  May sleep; called once,
 *	before @release.
 * @release: the last reference to the node is gone: free node->priv's
 *	contents (not node->priv itself).  May sleep.
 * @link_admin: optional.  The operator set the link to @node up or down
 *	(the core already refuses requests while it is down); a transport
 *	with connections closes or reopens them.  May sleep.
 * @link_info: optional.  Fill @li (zeroed by the caller); must not sleep.
 *	Placement calls it under hbmpool_nodes_lock (a degraded link is
 *	its last resort), so it must not take that lock.
 * @fence: optional.  @node was declared dead (the core refuses requests to
 *	it from now on): complete what the transport holds for it at once
 *	(-ENODEV) and never reach it again.  May sleep; called once, perhaps
 *	after @shutdown.
 *
 * Link state is pushed by the transport with hbmpool_node_link_changed(),
 * which sleeps and takes the events lock: never call it holding a lock that
 * @free_bytes takes, which the core calls under the events lock (to report
 * a node).  @free_bytes must answer from what the transport knows, without
 * a round trip to the home.
 */
struct hbmpool_transport_ops {
	int (*attach)(struct hbmpool_node *node, const void *params);
	void (*submit)(struct hbmpool_node *node, struct hbmpool_req *req);
	int (*copy_nowait)(struct hbmpool_node *node, u64 offset,
			   struct page **pages, unsigned int nr);
	int (*alloc_chunks)(struct hbmpool_node *node, u64 len, u64 *offset);
	void (*free_chunks)(struct hbmpool_node *node, u64 offset, u64 len,
			    u32 gen);
	u64 (*free_bytes)(struct hbmpool_node *node);
	void (*shutdown)(struct hbmpool_node *node);
	void (*release)(struct hbmpool_node *node);
	void (*link_admin)(struct hbmpool_node *node, bool up);
	void (*link_info)(struct hbmpool_node *node, struct hbmpool_link_info *li);
	void (*fence)(struct hbmpool_node *node);
};

/**
 * struct hbmpool_transport - a kind of link, registered with the core
 * @name: how nodes name it ("sim", "tcp", ...): unique.
 * @owner: the module that implements it; held while a node uses it.
 * @api: HBMPOOL_TRANSPORT_API the transport was written for.
 * @node_priv_size: bytes of per-node state (node->priv).
 * @req_pdu_size: bytes of per-request state (req->pdu).
 * @ops: its operations.
 * @list: on the registry (transport.c).
 */
struct hbmpool_transport {
	const char *name;
	struct module *owner;
	unsigned int api;
	size_t node_priv_size;
	size_t req_pdu_size;
	const struct hbmpool_transport_ops *ops;
	struct list_head list;
};

int hbmpool_transport_register(struct hbmpool_transport *t);
void hbmpool_transport_unregister(struct hbmpool_transport *t);
struct hbmpool_transport *hbmpool_transport_get(const char *name);
void hbmpool_transport_put(struct hbmpool_transport *t);

struct hbmpool_req *hbmpool_req_alloc(struct hbmpool_node *node,
				      enum hbmpool_req_op op, u64 offset,
				      struct page **pages, unsigned int nr,
				      gfp_t gfp);
void hbmpool_req_submit(struct hbmpool_req *req, unsigned int timeout_ms);
void hbmpool_req_complete(struct hbmpool_req *req, int status);
void hbmpool_req_put(struct hbmpool_req *req);
void hbmpool_req_unlock_put_pages(struct hbmpool_req *req);
void hbmpool_req_put_pages(struct hbmpool_req *req);

void hbmpool_node_link_changed(struct hbmpool_node *node, bool up);
u32 hbmpool_node_data_gen(struct hbmpool_node *node);
void hbmpool_node_data_lost_begin(struct hbmpool_node *node);
void hbmpool_node_data_lost_end(struct hbmpool_node *node);
bool hbmpool_fail_request_armed(void);

int hbmpool_transport_init(void);
void hbmpool_transport_exit(void);

#endif /* _HBMPOOL_TRANSPORT_H */
