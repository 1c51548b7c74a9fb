// SPDX-License-Identifier: GPL-2.0
/*
 * The "ram" segment provider: a segment's bytes in system RAM, every page
 * reserved when the segment is created, so that a home never runs out of
 * memory it promised (no overcommit), and zeroed whenever a chunk is given
 * back, so that no client reads what another one left.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <net/netlink.h>

#include "hbmpool.h"
#include "segment.h"

struct hbmpool_ram {
	unsigned long nr_pages;
	struct page **pages;		/* nr_pages, each allocated */
};

static struct page *hbmpool_ram_page(struct hbmpool_segment *seg, u64 offset)
{
	struct hbmpool_ram *ram = seg->priv;

	return ram->pages[offset >> PAGE_SHIFT];
}

static void hbmpool_ram_read(struct hbmpool_segment *seg, u64 offset,
			     struct page *page)
{
	copy_highpage(page, hbmpool_ram_page(seg, offset));
}

static int hbmpool_ram_write(struct hbmpool_segment *seg, u64 offset,
			     struct page *page)
{
	copy_highpage(hbmpool_ram_page(seg, offset), page);
	return 0;
}

static void hbmpool_ram_discard(struct hbmpool_segment *seg, u64 offset, u64 len)
{
	u64 end = offset + len;

	for (; offset < end; offset += PAGE_SIZE) {
		clear_highpage(hbmpool_ram_page(seg, offset));
		cond_resched();
	}
}

static void hbmpool_ram_free(struct hbmpool_ram *ram, unsigned long nr)
{
	unsigned long i;

	for (i = 0; i < nr; i++) {
		__free_page(ram->pages[i]);
		if (!(i % 1024))
			cond_resched();
	}
	kvfree(ram->pages);
	kfree(ram);
}

static void hbmpool_ram_release(struct hbmpool_segment *seg)
{
	struct hbmpool_ram *ram = seg->priv;

	hbmpool_ram_free(ram, ram->nr_pages);
}

static const struct hbmpool_segment_provider hbmpool_ram_provider = {
	.name = "ram",
	.zeroed = true,		/* allocated __GFP_ZERO, cleared on discard */
	.read = hbmpool_ram_read,
	.write = hbmpool_ram_write,
	.discard = hbmpool_ram_discard,
	.release = hbmpool_ram_release,
};

/**
 * hbmpool_ram_segment_init - a segment of @size bytes of system RAM
 * @seg: to set up
 * @size: bytes, page aligned
 * @extack: the refusal's reason
 *
 * Reserves every page now; refuses more than three quarters of the memory
 * available, so that a segment never pushes the node into reclaim storms
 * or the OOM killer.  Return: 0, -ENOMEM, -EINTR (a fatal signal while
 * reserving).
 */
int hbmpool_ram_segment_init(struct hbmpool_segment *seg, u64 size,
			     struct netlink_ext_ack *extack)
{
	unsigned long nr = size >> PAGE_SHIFT, i;
	struct hbmpool_ram *ram;
	int err = -ENOMEM;

	if (nr > si_mem_available() / 4 * 3) {
		NL_SET_ERR_MSG(extack, "size: more than 3/4 of the RAM available");
		pr_info("segment of %llu MiB refused: %lu MiB of RAM available\n",
			size >> 20, si_mem_available() >> (20 - PAGE_SHIFT));
		return -ENOMEM;
	}
	ram = kzalloc(sizeof(*ram), GFP_KERNEL);
	if (!ram)
		return -ENOMEM;
	ram->pages = kvcalloc(nr, sizeof(*ram->pages), GFP_KERNEL | __GFP_NOWARN);
	if (!ram->pages) {
		kfree(ram);
		return -ENOMEM;
	}
	for (i = 0; i < nr; i++) {
		ram->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO | __GFP_NORETRY |
					   __GFP_NOWARN);
		if (!ram->pages[i]) {
			NL_SET_ERR_MSG(extack, "size: the RAM could not be reserved");
			goto err_free;
		}
		if (fatal_signal_pending(current)) {
			i++;
			err = -EINTR;
			goto err_free;
		}
		if (!(i % 1024))
			cond_resched();
	}
	ram->nr_pages = nr;
	err = hbmpool_segment_init(seg, size, &hbmpool_ram_provider, ram);
	if (err)
		goto err_free;
	return 0;

err_free:
	hbmpool_ram_free(ram, i);
	return err;
}
