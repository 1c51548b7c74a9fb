// SPDX-License-Identifier: GPL-2.0
/*
 * The segment this node exports to the domain: created and deleted by the
 * operator (netlink segment-new and segment-del), one per node.  Its
 * memory comes from a provider (segment_ram.c, segment_shm.c); the
 * transports that serve other nodes from it allocate its chunks to them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/spinlock.h>
#include <linux/slab.h>
#include <net/netlink.h>

#include "hbmpool.h"
#include "segment.h"
#include "shm.h"

/*
 * hbmpool_export_lock serialises creation and deletion of the segment;
 * hbmpool_export_ptr_lock protects the pointer itself, so that replies and
 * events (under the events lock, which nothing here holds) read the
 * segment's state without waiting for a creation that reserves memory.
 * The segment's own lock protects its allocator.  hbmpool_export_serve is
 * held for reading by a home serving a request from the segment
 * (hbmpool_export_serve_begin()) and for writing while the segment is
 * published or unpublished, so that a request never meets a segment that
 * is going.
 */
static DEFINE_MUTEX(hbmpool_export_lock);
static DECLARE_RWSEM(hbmpool_export_serve);
static DEFINE_SPINLOCK(hbmpool_export_ptr_lock);
static struct hbmpool_segment *hbmpool_export;
static u64 hbmpool_export_incarnation;	/* written before the pointer is published */
static char hbmpool_export_device[HBMPOOL_NL_DEVICE_MAX + 1];	/* likewise */
/*
 * This node fenced itself (its lease on its membership ended): its segment
 * serves nothing until a new one (a new incarnation) replaces it.  Written
 * under hbmpool_export_lock and hbmpool_export_serve for writing.
 */
static bool hbmpool_export_fenced;

static void hbmpool_export_set(struct hbmpool_segment *seg)
{
	lockdep_assert_held(&hbmpool_export_lock);
	lockdep_assert_held_write(&hbmpool_export_serve);
	spin_lock(&hbmpool_export_ptr_lock);
	hbmpool_export = seg;
	spin_unlock(&hbmpool_export_ptr_lock);
}

/**
 * hbmpool_export_new - export a segment
 * @size: bytes, page aligned, 1..1 TiB
 * @provider: "ram" or "shm"
 * @device: "shm": the PCI name of this node's ivshmem device; "" otherwise
 * @extack: the refusal's reason
 *
 * Return: 0, -EINVAL, -ENOENT (no such provider), -EEXIST (this node
 * exports a segment), -ENOMEM (the memory cannot be had), -EINTR, -ENODEV
 * (the module is going; "shm": no such device), -ENOSPC ("shm": the
 * device is too small).
 */
int hbmpool_export_new(u64 size, const char *provider, const char *device,
		       struct netlink_ext_ack *extack)
{
	struct hbmpool_segment *seg;
	bool shm = !strcmp(provider, "shm");
	u64 incarnation;
	int err;

	if (!size || !PAGE_ALIGNED(size) || size > HBMPOOL_EXPORT_MAX) {
		NL_SET_ERR_MSG(extack, "size: page aligned, at most 1 TiB");
		return -EINVAL;
	}
	if (strcmp(provider, "ram") && !shm) {
		NL_SET_ERR_MSG(extack, "provider: no such provider (\"ram\", \"shm\")");
		return -ENOENT;
	}
	if (!shm && device[0]) {
		NL_SET_ERR_MSG(extack, "device: only the shm provider takes a device");
		return -EINVAL;
	}
	if (shm && !device[0]) {
		NL_SET_ERR_MSG(extack, "device: required by the shm provider");
		return -EINVAL;
	}
	err = hbmpool_ctl_begin();
	if (err)
		return err;
	mutex_lock(&hbmpool_export_lock);
	if (hbmpool_export) {
		NL_SET_ERR_MSG(extack, "this node exports a segment: delete it first");
		err = -EEXIST;
		goto out_unlock;
	}
	seg = kzalloc(sizeof(*seg), GFP_KERNEL);
	err = -ENOMEM;
	if (!seg)
		goto out_unlock;
	incarnation = get_random_u64() ?: 1;	/* 0: none */
	if (shm)
		err = hbmpool_shm_segment_init(seg, size, device,
					       READ_ONCE(hbmpool_self_id),
					       incarnation, extack);
	else
		err = hbmpool_ram_segment_init(seg, size, extack);
	if (err) {
		kfree(seg);
		goto out_unlock;
	}
	/*
	 * Only this node's requests write RAM: its digests can be kept.
	 * Without memory for them, reads are digested as they are sent.
	 */
	if (!shm && hbmpool_segment_digests_init(seg))
		pr_info("segment: no memory for its pages' digests at rest: reads are digested again\n");
	down_write(&hbmpool_export_serve);
	hbmpool_export_incarnation = incarnation;
	strscpy(hbmpool_export_device, device, sizeof(hbmpool_export_device));
	hbmpool_export_set(seg);
	WRITE_ONCE(hbmpool_export_fenced, false);	/* new memory, new incarnation */
	up_write(&hbmpool_export_serve);
out_unlock:
	mutex_unlock(&hbmpool_export_lock);
	/* after the unlock: the event reads the state, whatever it is by then */
	if (!err)
		hbmpool_event(HBMPOOL_EVENT_SEGMENT_CHANGE, NULL);
	hbmpool_ctl_end();
	if (!err)
		pr_info("segment: %llu MiB of %s exported\n", size >> 20, provider);
	return err;
}

/* Frees @seg: nobody holds a chunk of it or can find it. */
static void hbmpool_export_free(struct hbmpool_segment *seg)
{
	hbmpool_segment_destroy(seg);
	kfree(seg);
}

/**
 * hbmpool_export_del - stop exporting the segment, free its memory
 * @extack: the refusal's reason
 *
 * A fenced node's segment goes even if clients hold chunks: the domain has
 * fenced this node, and those chunks are lost to their clients already.
 *
 * Return: 0, -ENOENT (no segment), -EBUSY (a client holds chunks of it),
 * -ENODEV (the module is going).
 */
int hbmpool_export_del(struct netlink_ext_ack *extack)
{
	struct hbmpool_segment *seg;
	int err;

	err = hbmpool_ctl_begin();
	if (err)
		return err;
	mutex_lock(&hbmpool_export_lock);
	down_write(&hbmpool_export_serve);	/* no request allocates meanwhile */
	seg = hbmpool_export;
	if (!seg) {
		NL_SET_ERR_MSG(extack, "this node exports no segment");
		err = -ENOENT;
	} else if (!hbmpool_export_fenced && hbmpool_segment_avail(seg) != seg->size) {
		NL_SET_ERR_MSG(extack, "clients hold chunks of the segment");
		err = -EBUSY;
	} else {
		hbmpool_export_set(NULL);
	}
	up_write(&hbmpool_export_serve);
	mutex_unlock(&hbmpool_export_lock);
	if (!err)
		hbmpool_event(HBMPOOL_EVENT_SEGMENT_CHANGE, NULL);
	hbmpool_ctl_end();
	if (!err) {
		hbmpool_export_free(seg);
		pr_info("segment: no longer exported\n");
	}
	return err;
}

/*
 * The segment's state for a reply or an event: @provider is "none" and the
 * sizes 0 without a segment; @device (HBMPOOL_NL_DEVICE_MAX + 1 bytes) its
 * device, "" if none.  Does not sleep.
 */
void hbmpool_export_info(u64 *size, const char **provider, u64 *used,
			 u64 *incarnation, char *device)
{
	spin_lock(&hbmpool_export_ptr_lock);
	strscpy(device, hbmpool_export ? hbmpool_export_device : "",
		HBMPOOL_NL_DEVICE_MAX + 1);
	*incarnation = hbmpool_export ? hbmpool_export_incarnation : 0;
	if (hbmpool_export) {
		*size = hbmpool_export->size;
		*provider = hbmpool_export->provider->name;
		*used = hbmpool_export->size - hbmpool_segment_avail(hbmpool_export);
	} else {
		*size = 0;
		*provider = "none";
		*used = 0;
	}
	spin_unlock(&hbmpool_export_ptr_lock);
}

/**
 * hbmpool_export_serve_begin - the segment, for serving one request
 * @incarnation: out: its incarnation (0 without a segment)
 *
 * Returns the segment or NULL; either way the caller calls
 * hbmpool_export_serve_end() when done with it.  May sleep.
 */
struct hbmpool_segment *hbmpool_export_serve_begin(u64 *incarnation)
{
	down_read(&hbmpool_export_serve);
	if (hbmpool_export_fenced) {
		*incarnation = 0;
		return NULL;
	}
	*incarnation = hbmpool_export ? hbmpool_export_incarnation : 0;
	return hbmpool_export;
}

/**
 * hbmpool_export_fence - this node fences itself: it serves nothing more
 *
 * For the control plane, when this node's lease on its membership ended
 * (the others may treat it as dead from then on): from the return on, no
 * request is served from the segment (homes answer FENCED) and no
 * handshake is accepted.  Only a new segment (a new incarnation) ends it.
 * Return: 0, -ENODEV (the module is going).
 */
int hbmpool_export_fence(void)
{
	bool was;
	int err;

	err = hbmpool_ctl_begin();
	if (err)
		return err;
	mutex_lock(&hbmpool_export_lock);
	down_write(&hbmpool_export_serve);	/* waits for requests being served */
	was = hbmpool_export_fenced;
	WRITE_ONCE(hbmpool_export_fenced, true);
	/* clients of a provider they reach directly stop too */
	if (hbmpool_export && hbmpool_export->provider->revoke)
		hbmpool_export->provider->revoke(hbmpool_export);
	up_write(&hbmpool_export_serve);
	mutex_unlock(&hbmpool_export_lock);
	if (!was) {
		hbmpool_event(HBMPOOL_EVENT_DOMAIN_CHANGE, NULL);
		pr_warn("this node is fenced: its segment serves nothing until a new one is added\n");
	}
	hbmpool_ctl_end();
	return 0;
}

/*
 * Frees the chunks node @owner held in the segment: it was declared dead
 * and none of its requests is being served.  Fenced or not.  Returns the
 * bytes freed.  May sleep.
 */
u64 hbmpool_export_free_owner(u32 owner)
{
	u64 freed = 0;

	down_read(&hbmpool_export_serve);
	if (hbmpool_export)
		freed = hbmpool_segment_free_owner(hbmpool_export, owner);
	up_read(&hbmpool_export_serve);
	if (freed)
		hbmpool_event(HBMPOOL_EVENT_SEGMENT_CHANGE, NULL);
	return freed;
}

/*
 * Whether this node fenced itself, for a report or a handshake's early
 * refusal: without the serve lock, which a home serving a request holds
 * while it may announce an event (so replies and events must not wait for
 * it).  Requests see the flag under the lock (hbmpool_export_serve_begin()).
 */
bool hbmpool_export_is_fenced(void)
{
	return READ_ONCE(hbmpool_export_fenced);
}

void hbmpool_export_serve_end(void)
{
	up_read(&hbmpool_export_serve);
}

/**
 * hbmpool_export_flip - flip the low bit of one byte of the segment
 * @offset: the byte
 *
 * Fault injection (debugfs "segment_flip"): changes the memory behind the
 * back of its digests at rest, as a memory error would.  Return: 0,
 * -ENOENT (no segment, or fenced), -EINVAL (past its end), -ENOMEM, or the
 * provider's write error.
 */
int hbmpool_export_flip(u64 offset)
{
	struct hbmpool_segment *seg;
	struct page *page;
	u64 inc;
	int err;

	page = alloc_page(GFP_KERNEL);
	if (!page)
		return -ENOMEM;
	seg = hbmpool_export_serve_begin(&inc);
	err = !seg ? -ENOENT : offset >= seg->size ? -EINVAL : 0;
	if (!err)
		err = hbmpool_segment_flip(seg, offset, page);
	hbmpool_export_serve_end();
	__free_page(page);
	return err;
}

/* Module exit: no client is left (transports are gone). */
void hbmpool_export_exit(void)
{
	struct hbmpool_segment *seg = hbmpool_export;

	if (seg) {
		mutex_lock(&hbmpool_export_lock);
		down_write(&hbmpool_export_serve);
		hbmpool_export_set(NULL);
		up_write(&hbmpool_export_serve);
		mutex_unlock(&hbmpool_export_lock);
		hbmpool_export_free(seg);
	}
}
