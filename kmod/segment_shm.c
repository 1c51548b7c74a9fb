// SPDX-License-Identifier: GPL-2.0
/*
 * The "shm" segment provider: this node's segment is the memory of its own
 * ivshmem device (shm.h), which the other nodes reach by load/store on the
 * same device.  At creation the header is invalidated, the segment zeroed
 * and the header written with the new incarnation; a freed chunk is
 * zeroed; at release (segment-del, a new segment) and when this node
 * fences itself the header is invalidated, so that no client copies from
 * or to it any more.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/netlink.h>

#include "hbmpool.h"
#include "segment.h"
#include "shm.h"

static struct hbmpool_shm_dev *seg_dev(struct hbmpool_segment *seg)
{
	return seg->priv;
}

static void hbmpool_shm_prov_read(struct hbmpool_segment *seg, u64 offset,
				  struct page *page)
{
	hbmpool_shm_seg_read(seg_dev(seg), offset, page);
}

static int hbmpool_shm_prov_write(struct hbmpool_segment *seg, u64 offset,
				  struct page *page)
{
	hbmpool_shm_seg_write(seg_dev(seg), offset, page);
	return 0;
}

static void hbmpool_shm_prov_discard(struct hbmpool_segment *seg, u64 offset,
				     u64 len)
{
	hbmpool_shm_seg_clear(seg_dev(seg), offset, len);
}

static void hbmpool_shm_prov_revoke(struct hbmpool_segment *seg)
{
	hbmpool_shm_unpublish(seg_dev(seg));
}

static void hbmpool_shm_prov_release(struct hbmpool_segment *seg)
{
	hbmpool_shm_unpublish(seg_dev(seg));
	hbmpool_shm_dev_put(seg_dev(seg));
}

static const struct hbmpool_segment_provider hbmpool_shm_provider = {
	.name = "shm",
	.read = hbmpool_shm_prov_read,
	.write = hbmpool_shm_prov_write,
	.discard = hbmpool_shm_prov_discard,
	.revoke = hbmpool_shm_prov_revoke,
	.release = hbmpool_shm_prov_release,
};

/**
 * hbmpool_shm_segment_init - a segment of @size bytes of ivshmem @device
 * @seg: to set up
 * @size: bytes, page aligned
 * @device: the PCI name of this node's device ("0000:00:11.0")
 * @node_id: this node, for the header
 * @incarnation: the segment's, for the header
 * @extack: the refusal's reason
 *
 * Return: 0, -ENODEV (no such device bound), -ENOSPC (the segment and
 * its header do not fit the device), -EINVAL, -ENOMEM.
 */
int hbmpool_shm_segment_init(struct hbmpool_segment *seg, u64 size,
			     const char *device, u32 node_id, u64 incarnation,
			     struct netlink_ext_ack *extack)
{
	struct hbmpool_shm_dev *dev;
	int err;

	dev = hbmpool_shm_dev_get(device);
	if (!dev) {
		NL_SET_ERR_MSG(extack, "device: no such ivshmem device bound to hbmpool");
		return -ENODEV;
	}
	if (size > hbmpool_shm_dev_size(dev) - HBMPOOL_SHM_DATA_OFFSET) {
		NL_SET_ERR_MSG(extack, "size: more than the device holds after its 4 KiB header");
		err = -ENOSPC;
		goto err_put;
	}
	hbmpool_shm_unpublish(dev);		/* before the memory changes */
	hbmpool_shm_seg_clear(dev, 0, size);	/* no client reads what was there */
	err = hbmpool_segment_init(seg, size, &hbmpool_shm_provider, dev);
	if (err)
		goto err_put;
	hbmpool_shm_publish(dev, node_id, incarnation, size);
	return 0;

err_put:
	hbmpool_shm_dev_put(dev);
	return err;
}
