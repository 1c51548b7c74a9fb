/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which of this machine's ivshmem devices holds a peer's segment: the
 * peers hbmpoold reaches through the kernel's transport "shm" (page data
 * by load/store through the home's device, the control path on TCP).
 *
 * A home whose segment is provider shm writes a header at byte 0 of its
 * device (Documentation/wire-protocol.rst, "The shm device header";
 * kmod/shm.h): magic "HHBMSHM1", version 1, node id, incarnation, size,
 * domain name.  hbmd_shm_hdr_parse() and hbmd_shm_hdr_match() are pure
 * logic; hbmd_shm_find() looks at every PCI device 1af4:1110 under
 * SYSFS/bus/pci/devices and reads its header:
 *
 *   - a device hbmpool's driver holds (it binds every ivshmem device when
 *     it loads): the driver's read-only copy, the sysfs file
 *     hbmpool_header (Documentation/ABI/testing/
 *     sysfs-bus-pci-drivers-hbmpool-shm).  The BAR itself cannot be
 *     mapped from user space while a driver holds it
 *     (CONFIG_IO_STRICT_DEVMEM, Debian's default);
 *   - a device no driver holds: the first bytes of its BAR2, its sysfs
 *     resource2 file mapped read-only;
 *   - a device another driver holds: not read (said in seen).
 *
 * The root is a parameter, so that a test builds a fake tree of regular
 * files (selftests/unit/shm_discover_unit.c).  No state; nothing is kept
 * mapped.
 */
#ifndef HBMPOOLD_SHM_DISCOVER_H
#define HBMPOOLD_SHM_DISCOVER_H

#include <stddef.h>
#include <stdint.h>

#define HBMD_SHM_MAGIC		0x314d48534d424848ULL	/* "HHBMSHM1" */
#define HBMD_SHM_VERSION	1
#define HBMD_SHM_HDR_ROOM	4096	/* the header's room; the segment follows */
#define HBMD_SHM_HDR_LEN	64	/* its fields */
#define HBMD_SHM_NAME_LEN	32	/* the domain name, NUL-padded */
#define HBMD_SHM_SYSFS_HDR	"hbmpool_header"	/* hbmpool's copy, on the PCI device */
#define HBMD_SHM_VENDOR		0x1af4	/* Red Hat, Inc. (Qumranet) */
#define HBMD_SHM_DEVICE		0x1110	/* Inter-VM shared memory */

struct hbmd_shm_hdr {
	uint32_t node_id;
	uint64_t incarnation;		/* 0: none valid now (being changed, or fenced) */
	uint64_t size;			/* the segment's bytes */
	char domain[HBMD_SHM_NAME_LEN + 1];
};

/*
 * The header in buf (a device's first len bytes): 0, or -EMSGSIZE (fewer
 * than its 64 bytes), -ENOENT (no magic: nothing written there, e.g. a
 * device whose node exports no shm segment), -EPROTONOSUPPORT (another
 * version), -EBADMSG (a domain name that is not NUL-terminated).
 */
int hbmd_shm_hdr_parse(const void *buf, size_t len, struct hbmd_shm_hdr *h);

/* The segment a peer's device must hold: what its member value says. */
struct hbmd_shm_want {
	const char *domain;
	uint32_t node_id;
	uint64_t incarnation;		/* 0: any (but 0) */
	uint64_t size;			/* 0: any */
};

/*
 * Whether h is w's segment: 0, or -ENODEV (another node or domain),
 * -ESTALE (no incarnation, or another one), -ERANGE (another size), with
 * the reason in why.
 */
int hbmd_shm_hdr_match(const struct hbmd_shm_hdr *h, const struct hbmd_shm_want *w, char *why,
		       size_t whylen);

/*
 * The ivshmem device of this machine (under sysfs_root, "/sys") whose
 * header is w's segment:
 * 1 with its PCI name in dev (devlen >= 13), 0 if none is, -errno if the
 * PCI devices cannot be listed.  seen: what each device holds or why it
 * could not be read ("0000:00:11.0 node 1, 0000:00:13.0 no header"), for
 * the log; "" if there is no ivshmem device.
 */
int hbmd_shm_find(const char *sysfs_root, const struct hbmd_shm_want *w,
		  char *dev, size_t devlen, char *seen, size_t seenlen);

#endif /* HBMPOOLD_SHM_DISCOVER_H */
