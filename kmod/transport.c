// SPDX-License-Identifier: GPL-2.0
/*
 * The transport registry and the life of a request: allocation, submission
 * with the core's timeout, completion from any context, release in process
 * context.  See transport.h for the contract.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/types.h>
#include <linux/fault-inject.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "hbmpool.h"

/* hbmpool_transports_lock protects hbmpool_transports. */
static DEFINE_MUTEX(hbmpool_transports_lock);
static LIST_HEAD(hbmpool_transports);

/* Releases of requests whose last put came from atomic context. */
static struct workqueue_struct *hbmpool_req_wq;

enum {
	HBMPOOL_REQ_NEW,
	HBMPOOL_REQ_INFLIGHT,
	HBMPOOL_REQ_DONE,
};

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
/* debugfs hbmpool/fail_request: fail requests before they reach the link */
static DECLARE_FAULT_ATTR(hbmpool_fail_request);
#endif

/* ---- registry ---- */

static struct hbmpool_transport *__hbmpool_transport_find(const char *name)
{
	struct hbmpool_transport *t;

	lockdep_assert_held(&hbmpool_transports_lock);
	list_for_each_entry(t, &hbmpool_transports, list)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

/**
 * hbmpool_transport_register - make a transport available to new nodes
 * @t: the transport; lives until hbmpool_transport_unregister()
 *
 * Return: 0, -EINVAL (API mismatch, missing ops), -EEXIST (name taken).
 */
int hbmpool_transport_register(struct hbmpool_transport *t)
{
	const struct hbmpool_transport_ops *ops = t->ops;
	int err = 0;

	if (t->api != HBMPOOL_TRANSPORT_API) {
		pr_err("transport %s speaks API %u, not %u\n", t->name, t->api,
		       HBMPOOL_TRANSPORT_API);
		return -EINVAL;
	}
	if (!ops || !ops->attach || !ops->submit || !ops->alloc_chunks ||
	    !ops->free_chunks || !ops->free_bytes || !ops->shutdown ||
	    !ops->release) {
		pr_err("transport %s: an operation is missing\n", t->name);
		return -EINVAL;
	}
	mutex_lock(&hbmpool_transports_lock);
	if (__hbmpool_transport_find(t->name))
		err = -EEXIST;
	else
		list_add_tail(&t->list, &hbmpool_transports);
	mutex_unlock(&hbmpool_transports_lock);
	return err;
}
EXPORT_SYMBOL_GPL(hbmpool_transport_register);

/**
 * hbmpool_transport_unregister - no new node may use @t
 * @t: a registered transport
 *
 * Nodes that use it hold its module, so a module unregisters it from its
 * exit only once they are gone.
 */
void hbmpool_transport_unregister(struct hbmpool_transport *t)
{
	mutex_lock(&hbmpool_transports_lock);
	list_del(&t->list);
	mutex_unlock(&hbmpool_transports_lock);
}
EXPORT_SYMBOL_GPL(hbmpool_transport_unregister);

/**
 * hbmpool_transport_get - find a transport by name and hold its module
 * @name: its name
 *
 * Return: the transport, or NULL if there is none (or its module is going).
 */
struct hbmpool_transport *hbmpool_transport_get(const char *name)
{
	struct hbmpool_transport *t;

	mutex_lock(&hbmpool_transports_lock);
	t = __hbmpool_transport_find(name);
	/* a transport built into hbmpool.ko goes with it: no reference */
	if (t && t->owner != THIS_MODULE && !try_module_get(t->owner))
		t = NULL;
	mutex_unlock(&hbmpool_transports_lock);
	return t;
}

void hbmpool_transport_put(struct hbmpool_transport *t)
{
	if (t->owner != THIS_MODULE)
		module_put(t->owner);
}

/* ---- requests ---- */

static void hbmpool_req_free(struct hbmpool_req *req)
{
	unsigned int i;

	if (req->destructor)
		req->destructor(req);
	for (i = 0; !req->pages_put && i < req->nr_pages; i++)
		put_page(req->pages[i]);
	if (req->parent)
		hbmpool_req_put(req->parent);
	hbmpool_node_put(req->node);
	kfree(req);
}

static void hbmpool_req_free_work(struct work_struct *work)
{
	hbmpool_req_free(container_of(work, struct hbmpool_req, free_work));
}

static void hbmpool_req_release(struct kref *ref)
{
	struct hbmpool_req *req = container_of(ref, struct hbmpool_req, ref);

	/* the destructor and the node's release may sleep */
	if (in_task() && !irqs_disabled())
		hbmpool_req_free(req);
	else
		queue_work(hbmpool_req_wq, &req->free_work);
}

/**
 * hbmpool_req_put - drop a reference to a request
 * @req: the request
 *
 * Any context, but not under a spinlock in process context: the last put
 * from there would free the request where it may not sleep.
 */
void hbmpool_req_put(struct hbmpool_req *req)
{
	kref_put(&req->ref, hbmpool_req_release);
}

/**
 * hbmpool_req_unlock_put_pages - unlock a completed request's pages, and
 *	drop its references to them
 * @req: a request that its transport completed (not timed out), from its
 *	end_io, whose pages are locked and go to their users now (into the
 *	cache, up to date)
 *
 * Any context.  Each page is put right after its unlock: a user that wants
 * a page held by nobody else (the gathering of a piece, huge.c) finds it so
 * at once.  A user that waits for one of the pages holds its own reference
 * to it.  Without this, the references go when the request is released.  A
 * request that timed out keeps them: its transport may still write the
 * pages.
 */
void hbmpool_req_unlock_put_pages(struct hbmpool_req *req)
{
	unsigned int i;

	/* never; for a request that timed out, the references are kept */
	if (WARN_ON_ONCE(req->pages_put))
		return;
	if (WARN_ON_ONCE(req->timed_out)) {
		for (i = 0; i < req->nr_pages; i++)
			unlock_page(req->pages[i]);
		return;
	}
	req->pages_put = true;
	for (i = 0; i < req->nr_pages; i++) {
		unlock_page(req->pages[i]);
		put_page(req->pages[i]);
	}
}

/**
 * hbmpool_req_put_pages - drop a failed request's references to its pages
 * @req: a request that its transport completed (not timed out), whose
 *	pages another request took on, locked, with references of its own
 *
 * Process context.  The pages then go when their last request is done with
 * them, not when the first one is released.
 */
void hbmpool_req_put_pages(struct hbmpool_req *req)
{
	unsigned int i;

	if (WARN_ON_ONCE(req->pages_put || req->timed_out))
		return;
	req->pages_put = true;
	for (i = 0; i < req->nr_pages; i++)
		put_page(req->pages[i]);
}

/* The first of completion and timeout decides; true if it was us. */
static bool hbmpool_req_finish(struct hbmpool_req *req, int status,
			       bool timeout)
{
	if (atomic_cmpxchg(&req->state, HBMPOOL_REQ_INFLIGHT,
			   HBMPOOL_REQ_DONE) != HBMPOOL_REQ_INFLIGHT)
		return false;
	req->status = status;
	req->timed_out = timeout;
	req->end_io(req);
	complete_all(&req->done);
	return true;
}

static void hbmpool_req_timeout(struct timer_list *t)
{
	struct hbmpool_req *req = from_timer(req, t, timer);

	hbmpool_req_finish(req, -ETIMEDOUT, true);
	hbmpool_req_put(req);		/* the timer's */
}

/**
 * hbmpool_req_complete - the transport is done with a request
 * @req: a request handed to ->submit()
 * @status: 0 or a negative errno
 *
 * Any context.  Drops the transport's reference.  If the request timed out
 * meanwhile, @status is ignored: its end_io ran with -ETIMEDOUT already.
 */
void hbmpool_req_complete(struct hbmpool_req *req, int status)
{
	if (hbmpool_req_finish(req, status, false) && del_timer(&req->timer))
		hbmpool_req_put(req);	/* the timer's: it will not run */
	hbmpool_req_put(req);		/* the transport's */
}
EXPORT_SYMBOL_GPL(hbmpool_req_complete);

/**
 * hbmpool_req_alloc - a new request for a run of pages of one home
 * @node: the home
 * @op: read or write
 * @offset: byte offset of the first page in the home's segment
 * @pages: the pages; each gets a reference of the request's
 * @nr: how many, 1..HBMPOOL_REQ_MAX_PAGES
 * @gfp: allocation flags
 *
 * The caller sets ->end_io (and ->private, ->owner, ->destructor as it
 * needs) before hbmpool_req_submit(), and puts its reference when done.
 */
struct hbmpool_req *hbmpool_req_alloc(struct hbmpool_node *node,
				      enum hbmpool_req_op op, u64 offset,
				      struct page **pages, unsigned int nr,
				      gfp_t gfp)
{
	size_t pdu = node->transport->req_pdu_size;
	size_t size = ALIGN(sizeof(struct hbmpool_req) + nr * sizeof(*pages),
			    sizeof(u64));
	struct hbmpool_req *req;
	unsigned int i;

	if (WARN_ON_ONCE(!nr || nr > HBMPOOL_REQ_MAX_PAGES))
		return NULL;
	req = kzalloc(size + pdu, gfp);
	if (!req)
		return NULL;
	kref_init(&req->ref);
	req->node = node;
	hbmpool_node_get(node);
	req->op = op;
	req->offset = offset;
	req->data_gen = hbmpool_node_data_gen(node);
	req->nr_pages = nr;
	req->pages = (struct page **)(req + 1);
	for (i = 0; i < nr; i++) {
		req->pages[i] = pages[i];
		get_page(pages[i]);
	}
	atomic_set(&req->state, HBMPOOL_REQ_NEW);
	timer_setup(&req->timer, hbmpool_req_timeout, 0);
	init_completion(&req->done);
	INIT_WORK(&req->free_work, hbmpool_req_free_work);
	req->pdu = pdu ? (char *)req + size : NULL;
	return req;
}

/* Why the core fails a request before the transport sees it, or 0. */
static int hbmpool_req_refused(struct hbmpool_req *req)
{
	struct hbmpool_node *node = req->node;

	switch (READ_ONCE(node->state)) {
	case HBMPOOL_NODE_LIVE:
		if (READ_ONCE(node->admin_down))
			return -ENOLINK;
		break;
	case HBMPOOL_NODE_UNREACHABLE:
		return -ENOLINK;
	default:
		return -ENODEV;
	}
	if (req->data_gen != hbmpool_node_data_gen(node))
		return -EIO;		/* the home lost that data */
	if (req->op == HBMPOOL_REQ_READ ? READ_ONCE(node->fail_fetch) :
	    READ_ONCE(node->fail_writeback))
		return -EIO;
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	if (should_fail(&hbmpool_fail_request, 1))
		return -EIO;
#endif
	return 0;
}

/**
 * hbmpool_req_submit - start a request
 * @req: from hbmpool_req_alloc(), with ->end_io set
 * @timeout_ms: after this, end_io runs with -ETIMEDOUT, whatever the
 *	transport does
 *
 * May be called in atomic context if the transport's ->submit() may.  The
 * end_io may run before this returns.
 */
void hbmpool_req_submit(struct hbmpool_req *req, unsigned int timeout_ms)
{
	struct hbmpool_node *node = req->node;
	int err;

	req->start_ns = ktime_get_ns();
	atomic_set(&req->state, HBMPOOL_REQ_INFLIGHT);
	kref_get(&req->ref);		/* the timer's */
	mod_timer(&req->timer, jiffies + msecs_to_jiffies(timeout_ms));
	kref_get(&req->ref);		/* the transport's */
	err = hbmpool_req_refused(req);
	if (err)
		hbmpool_req_complete(req, err);
	else
		node->transport->ops->submit(node, req);
}

/*
 * Whether fault injection may fail a request: the fault path then takes no
 * shortcut around requests (its CPU-copy fast path), so that every fetch
 * can be failed.
 */
bool hbmpool_fail_request_armed(void)
{
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	return READ_ONCE(hbmpool_fail_request.probability) != 0;
#else
	return false;
#endif
}

/* ---- init/exit ---- */

int hbmpool_transport_init(void)
{
	hbmpool_req_wq = alloc_workqueue("hbmpool-req", WQ_UNBOUND, 0);
	if (!hbmpool_req_wq)
		return -ENOMEM;
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	fault_create_debugfs_attr("fail_request", hbmpool_debugfs_root,
				  &hbmpool_fail_request);
#endif
	return 0;
}

/* Every node is gone, so every request was completed; some may be freeing. */
void hbmpool_transport_exit(void)
{
	destroy_workqueue(hbmpool_req_wq);
	WARN_ON(!list_empty(&hbmpool_transports));
}
