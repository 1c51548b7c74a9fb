/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The shared-memory transport "shm": a load/store fabric (NVLink, UALink,
 * CXL) as the rig has it, QEMU ivshmem-plain devices (PCI 1af4:1110) whose
 * BAR2 is the same memory in every VM, one device per node.
 *
 *  - shm_pci.c:     the PCI driver: maps every ivshmem device's BAR2 and
 *                   finds it by PCI name for the two users below; the
 *                   device header and the checked copies;
 *  - segment_shm.c: the segment provider "shm": this node's segment is its
 *                   own device's memory;
 *  - shm_client.c:  the transport "shm": the control path (handshake,
 *                   incarnation, ALLOC/FREE, keepalive, reconnection) is the
 *                   TCP transport's own (tcp_client.c, through
 *                   tcp_client.h); READ and WRITE are CPU copies from and to
 *                   the home's device.
 *
 * A device's first HBMPOOL_SHM_DATA_OFFSET bytes are a header the home
 * writes (struct hbmpool_shm_hdr); the segment's byte 0 follows it.  A
 * client copies only while the header names the node, domain, incarnation
 * and size its TCP handshake with that node reported, and checks the
 * incarnation again after every copy (Documentation/design.rst, "The shm
 * transport").
 */
#ifndef _HBMPOOL_SHM_H
#define _HBMPOOL_SHM_H

#include <linux/types.h>

struct hbmpool_segment;
struct hbmpool_shm_dev;
struct netlink_ext_ack;
struct page;

#define HBMPOOL_SHM_MAGIC	0x314d48534d424848ULL	/* "HHBMSHM1" */
#define HBMPOOL_SHM_VERSION	1
#define HBMPOOL_SHM_DATA_OFFSET	4096	/* the header's room; the same on every node */

/*
 * The header at byte 0 of a home's device, little endian.  The home
 * writes incarnation 0 before it touches anything else (a client's check
 * then fails) and the real incarnation last.
 */
struct hbmpool_shm_hdr {
	__le64 magic;
	__le32 version;
	__le32 node_id;			/* the home's */
	__le64 incarnation;		/* of its segment; 0: none, being changed */
	__le64 size;			/* of its segment, bytes */
	char domain[32];		/* HBMW_NAME_LEN, NUL-padded */
};

/* ---- shm_pci.c ---- */

int hbmpool_shm_pci_init(void);
void hbmpool_shm_pci_exit(void);
struct hbmpool_shm_dev *hbmpool_shm_dev_get(const char *name);
void hbmpool_shm_dev_put(struct hbmpool_shm_dev *dev);
u64 hbmpool_shm_dev_size(struct hbmpool_shm_dev *dev);
void hbmpool_shm_publish(struct hbmpool_shm_dev *dev, u32 node_id,
			 u64 incarnation, u64 size);
void hbmpool_shm_unpublish(struct hbmpool_shm_dev *dev);
int hbmpool_shm_verify(struct hbmpool_shm_dev *dev, u32 node_id,
		       u64 incarnation, u64 size);
int hbmpool_shm_copy(struct hbmpool_shm_dev *dev, u64 incarnation, u64 size,
		     bool write, u64 offset, struct page **pages,
		     unsigned int nr);
void hbmpool_shm_seg_read(struct hbmpool_shm_dev *dev, u64 offset,
			  struct page *page);
void hbmpool_shm_seg_write(struct hbmpool_shm_dev *dev, u64 offset,
			   struct page *page);
void hbmpool_shm_seg_clear(struct hbmpool_shm_dev *dev, u64 offset, u64 len);

/* ---- segment_shm.c ---- */

int hbmpool_shm_segment_init(struct hbmpool_segment *seg, u64 size,
			     const char *device, u32 node_id, u64 incarnation,
			     struct netlink_ext_ack *extack);

/* ---- shm_client.c ---- */

int hbmpool_shm_client_init(void);	/* after hbmpool_tcp_client_init() */
void hbmpool_shm_client_exit(void);

#endif /* _HBMPOOL_SHM_H */
