// SPDX-License-Identifier: GPL-2.0
/*
 * The ivshmem-plain PCI driver of the shm transport (shm.h): every
 * 1af4:1110 device's BAR2 mapped write-back, found by its PCI name
 * ("0000:00:11.0") by the segment provider (this node's own device) and by
 * the transport (a home's device); the header a home writes at byte 0 and
 * the bounds- and incarnation-checked copies a client makes.
 *
 * The memory is ordinary RAM of the host, shared by the VMs: cacheable,
 * coherent, read and written with memcpy.  The barriers between a header
 * and the data are virt_*(): the other side is another VM.
 *
 * Lifetime: a device is referenced by the driver while bound and by each
 * user; the last reference unmaps it.  A device unbound while in use stays
 * mapped for its users (they hold the PCI device too) and is no longer
 * found by name.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "hbmpool.h"
#include "shm.h"
#include "wire.h"

#define HBMPOOL_SHM_BAR		2

struct hbmpool_shm_dev {
	struct kref ref;
	struct list_head list;		/* on hbmpool_shm_devs while bound */
	struct pci_dev *pdev;		/* referenced */
	void *mem;			/* BAR2, memremap()ed */
	u64 size;			/* of BAR2 */
};

/* hbmpool_shm_lock protects hbmpool_shm_devs (the bound devices). */
static DEFINE_MUTEX(hbmpool_shm_lock);
static LIST_HEAD(hbmpool_shm_devs);

static void hbmpool_shm_dev_free(struct kref *ref)
{
	struct hbmpool_shm_dev *dev = container_of(ref, typeof(*dev), ref);

	memunmap(dev->mem);
	pci_release_region(dev->pdev, HBMPOOL_SHM_BAR);
	pci_disable_device(dev->pdev);
	pci_dev_put(dev->pdev);
	kfree(dev);
}

/**
 * hbmpool_shm_dev_get - the bound ivshmem device named @name, referenced
 * @name: its PCI name, e.g. "0000:00:11.0"
 *
 * Return: the device (hbmpool_shm_dev_put() it) or NULL.  May sleep.
 */
struct hbmpool_shm_dev *hbmpool_shm_dev_get(const char *name)
{
	struct hbmpool_shm_dev *dev, *found = NULL;

	mutex_lock(&hbmpool_shm_lock);
	list_for_each_entry(dev, &hbmpool_shm_devs, list) {
		if (!strcmp(pci_name(dev->pdev), name)) {
			kref_get(&dev->ref);
			found = dev;
			break;
		}
	}
	mutex_unlock(&hbmpool_shm_lock);
	return found;
}

void hbmpool_shm_dev_put(struct hbmpool_shm_dev *dev)
{
	if (dev)
		kref_put(&dev->ref, hbmpool_shm_dev_free);
}

u64 hbmpool_shm_dev_size(struct hbmpool_shm_dev *dev)
{
	return dev->size;
}

static struct hbmpool_shm_hdr *hbmpool_shm_hdr(struct hbmpool_shm_dev *dev)
{
	return dev->mem;
}

static void *hbmpool_shm_data(struct hbmpool_shm_dev *dev, u64 offset)
{
	return dev->mem + HBMPOOL_SHM_DATA_OFFSET + offset;
}

/*
 * The home's header: incarnation 0 first, then the rest, then the
 * incarnation, so that a client never sees a half-written one as valid.
 */
void hbmpool_shm_publish(struct hbmpool_shm_dev *dev, u32 node_id,
			 u64 incarnation, u64 size)
{
	struct hbmpool_shm_hdr *h = hbmpool_shm_hdr(dev);

	WRITE_ONCE(h->incarnation, 0);
	virt_wmb();	/* clients see no incarnation before any other change */
	h->magic = cpu_to_le64(HBMPOOL_SHM_MAGIC);
	h->version = cpu_to_le32(HBMPOOL_SHM_VERSION);
	h->node_id = cpu_to_le32(node_id);
	h->size = cpu_to_le64(size);
	hbmpool_domain_name(h->domain);		/* NUL-padded, HBMPOOL_NAME_LEN */
	virt_wmb();	/* the rest of the header before its incarnation */
	WRITE_ONCE(h->incarnation, cpu_to_le64(incarnation));
}

/* The segment goes or is fenced: every client's next check fails. */
void hbmpool_shm_unpublish(struct hbmpool_shm_dev *dev)
{
	WRITE_ONCE(hbmpool_shm_hdr(dev)->incarnation, 0);
	virt_wmb();	/* before the memory changes (discard, a new segment) */
}

/**
 * hbmpool_shm_verify - does @dev hold the segment the handshake told of?
 * @dev: a home's device
 * @node_id: the home
 * @incarnation: its segment's, from the handshake (not 0)
 * @size: its segment's, from the handshake
 *
 * Return: 0; -ENODEV (no header, another node or domain), -ESTALE
 * (another incarnation), -ERANGE (the size differs from the handshake's,
 * or the segment does not fit the device).
 */
int hbmpool_shm_verify(struct hbmpool_shm_dev *dev, u32 node_id,
		       u64 incarnation, u64 size)
{
	struct hbmpool_shm_hdr *h = hbmpool_shm_hdr(dev);
	char domain[HBMW_NAME_LEN] = {};
	u64 inc = le64_to_cpu(READ_ONCE(h->incarnation));
	int err = 0;

	virt_rmb();	/* the incarnation, then the fields it covers */
	hbmpool_domain_name(domain);
	if (le64_to_cpu(h->magic) != HBMPOOL_SHM_MAGIC ||
	    le32_to_cpu(h->version) != HBMPOOL_SHM_VERSION ||
	    le32_to_cpu(h->node_id) != node_id ||
	    memcmp(h->domain, domain, sizeof(domain)))
		err = -ENODEV;
	else if (!incarnation || inc != incarnation)
		err = -ESTALE;
	else if (le64_to_cpu(h->size) != size ||
		 size > dev->size - HBMPOOL_SHM_DATA_OFFSET)
		err = -ERANGE;
	virt_rmb();	/* the fields, then the incarnation again */
	if (!err && le64_to_cpu(READ_ONCE(h->incarnation)) != incarnation)
		err = -ESTALE;
	return err;
}

/**
 * hbmpool_shm_copy - a client's copy from or to a home's segment
 * @dev: the home's device, verified (hbmpool_shm_verify())
 * @incarnation: the home's, as verified
 * @size: its segment's size, as verified
 * @write: pages -> segment, else segment -> pages
 * @offset: in the segment, page aligned
 * @pages: @nr pages
 * @nr: how many
 *
 * Reads use a machine-check-safe copy: poisoned memory fails the copy
 * (-EIO) instead of the kernel.  Never sleeps.  Return: 0; -ERANGE (out of
 * the segment: nothing copied); -EIO (poisoned memory); -ESTALE (the
 * home's incarnation is no longer @incarnation, before or after the copy:
 * what a read copied must not be used, what a write copied went to memory
 * the home no longer holds for us).
 */
int hbmpool_shm_copy(struct hbmpool_shm_dev *dev, u64 incarnation, u64 size,
		     bool write, u64 offset, struct page **pages,
		     unsigned int nr)
{
	struct hbmpool_shm_hdr *h = hbmpool_shm_hdr(dev);
	u64 len = (u64)nr << PAGE_SHIFT;
	unsigned int i;
	int err = 0;
	void *va;

	if (hbmw_range_check(offset, len, size) != HBMW_OK ||
	    size > dev->size - HBMPOOL_SHM_DATA_OFFSET)
		return -ERANGE;
	if (le64_to_cpu(READ_ONCE(h->incarnation)) != incarnation)
		return -ESTALE;
	virt_mb();	/* the incarnation checked before the data is touched */
	for (i = 0; i < nr && !err; i++, offset += PAGE_SIZE) {
		va = kmap_local_page(pages[i]);
		if (write)
			memcpy(hbmpool_shm_data(dev, offset), va, PAGE_SIZE);
		else if (copy_mc_to_kernel(va, hbmpool_shm_data(dev, offset), PAGE_SIZE))
			err = -EIO;
		kunmap_local(va);
	}
	virt_mb();	/* the data touched before the incarnation is checked again */
	if (le64_to_cpu(READ_ONCE(h->incarnation)) != incarnation)
		return -ESTALE;
	return err;
}

/* The home's own accesses (segment_shm.c), within its segment. */
void hbmpool_shm_seg_read(struct hbmpool_shm_dev *dev, u64 offset,
			  struct page *page)
{
	memcpy_to_page(page, 0, hbmpool_shm_data(dev, offset), PAGE_SIZE);
}

void hbmpool_shm_seg_write(struct hbmpool_shm_dev *dev, u64 offset,
			   struct page *page)
{
	memcpy_from_page(hbmpool_shm_data(dev, offset), page, 0, PAGE_SIZE);
}

void hbmpool_shm_seg_clear(struct hbmpool_shm_dev *dev, u64 offset, u64 len)
{
	u64 end = offset + len, n;

	for (; offset < end; offset += n) {
		n = min_t(u64, end - offset, SZ_1M);
		memset(hbmpool_shm_data(dev, offset), 0, n);
		cond_resched();
	}
}

/* ---- the driver ---- */

/*
 * hbmpool_header (sysfs, on the PCI device while bound, read-only): the
 * device's header as the home wrote it (struct hbmpool_shm_hdr, 64 bytes,
 * little endian), so that hbmpoold finds which device holds a peer's
 * segment without mapping the BAR the driver holds.  A copy: a header
 * being rewritten may read torn, and its incarnation tells (0: none valid).
 */
static ssize_t hbmpool_header_read(struct file *file, struct kobject *kobj,
				   struct bin_attribute *attr, char *buf,
				   loff_t off, size_t count)
{
	struct hbmpool_shm_dev *dev = pci_get_drvdata(to_pci_dev(kobj_to_dev(kobj)));
	struct hbmpool_shm_hdr h;

	memcpy(&h, hbmpool_shm_hdr(dev), sizeof(h));
	return memory_read_from_buffer(buf, count, &off, &h, sizeof(h));
}

static BIN_ATTR_RO(hbmpool_header, sizeof(struct hbmpool_shm_hdr));

static struct bin_attribute *hbmpool_shm_bin_attrs[] = {
	&bin_attr_hbmpool_header,
	NULL,
};

static const struct attribute_group hbmpool_shm_group = {
	.bin_attrs = hbmpool_shm_bin_attrs,
};

static const struct attribute_group *hbmpool_shm_groups[] = {
	&hbmpool_shm_group,
	NULL,
};

static int hbmpool_shm_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct hbmpool_shm_dev *dev;
	int err;

	if (!(pci_resource_flags(pdev, HBMPOOL_SHM_BAR) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, HBMPOOL_SHM_BAR) <= HBMPOOL_SHM_DATA_OFFSET)
		return -ENODEV;
	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	kref_init(&dev->ref);
	dev->size = pci_resource_len(pdev, HBMPOOL_SHM_BAR);
	err = pci_enable_device_mem(pdev);
	if (err)
		goto err_free;
	err = pci_request_region(pdev, HBMPOOL_SHM_BAR, KBUILD_MODNAME);
	if (err)
		goto err_disable;
	dev->mem = memremap(pci_resource_start(pdev, HBMPOOL_SHM_BAR), dev->size,
			    MEMREMAP_WB);
	if (!dev->mem) {
		err = -ENOMEM;
		goto err_release;
	}
	dev->pdev = pci_dev_get(pdev);
	pci_set_drvdata(pdev, dev);
	mutex_lock(&hbmpool_shm_lock);
	list_add_tail(&dev->list, &hbmpool_shm_devs);
	mutex_unlock(&hbmpool_shm_lock);
	pci_info(pdev, "shared memory: %llu MiB\n", dev->size >> 20);
	return 0;

err_release:
	pci_release_region(pdev, HBMPOOL_SHM_BAR);
err_disable:
	pci_disable_device(pdev);
err_free:
	kfree(dev);
	return err;
}

static void hbmpool_shm_remove(struct pci_dev *pdev)
{
	struct hbmpool_shm_dev *dev = pci_get_drvdata(pdev);

	mutex_lock(&hbmpool_shm_lock);
	list_del(&dev->list);
	mutex_unlock(&hbmpool_shm_lock);
	hbmpool_shm_dev_put(dev);
}

static const struct pci_device_id hbmpool_shm_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_REDHAT_QUMRANET, 0x1110) },	/* ivshmem */
	{ }
};

/*
 * No MODULE_DEVICE_TABLE: an ivshmem device is no reason to load hbmpool;
 * the module binds the devices present when it is loaded.
 */

static struct pci_driver hbmpool_shm_driver = {
	.name = "hbmpool-shm",
	.id_table = hbmpool_shm_ids,
	.probe = hbmpool_shm_probe,
	.remove = hbmpool_shm_remove,
	.dev_groups = hbmpool_shm_groups,	/* added after probe, gone before remove */
};

int hbmpool_shm_pci_init(void)
{
	/* the header's layout is the wire's (wire-protocol.rst) */
	BUILD_BUG_ON(sizeof(struct hbmpool_shm_hdr) != 64);
	BUILD_BUG_ON(sizeof_field(struct hbmpool_shm_hdr, domain) != HBMW_NAME_LEN);
	BUILD_BUG_ON(HBMW_NAME_LEN != HBMPOOL_NAME_LEN);	/* hbmpool_domain_name() */
	return pci_register_driver(&hbmpool_shm_driver);
}

void hbmpool_shm_pci_exit(void)
{
	pci_unregister_driver(&hbmpool_shm_driver);
}
