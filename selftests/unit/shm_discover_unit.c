// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of hbmpoold's discovery of peers' ivshmem devices
 * (daemon/shm_discover.c): the device header's parsing and matching
 * (good, bad magic, bad version, truncated, a domain name without its
 * NUL, another domain, another node, another or no incarnation, another
 * size), then the scan over a fake sysfs tree of regular files in a
 * temporary directory: devices that are not ivshmem, a device no driver
 * holds (its resource2), one hbmpool's driver holds (its hbmpool_header),
 * one another driver holds (not read), one without a header, one
 * truncated.  No kernel.  TAP output.
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm_discover.h"
#include "tap.h"

static char dir[64];

/* A header as a home writes it (kmod/shm_pci.c), into buf (64 bytes). */
static void make_hdr(unsigned char *buf, uint64_t magic, uint32_t version, uint32_t node,
		     uint64_t inc, uint64_t size, const char *domain)
{
	uint64_t m = htole64(magic), i = htole64(inc), s = htole64(size);
	uint32_t v = htole32(version), n = htole32(node);

	memset(buf, 0, HBMD_SHM_HDR_LEN);
	memcpy(buf, &m, 8);
	memcpy(buf + 8, &v, 4);
	memcpy(buf + 12, &n, 4);
	memcpy(buf + 16, &i, 8);
	memcpy(buf + 24, &s, 8);
	memcpy(buf + 32, domain, strnlen(domain, HBMD_SHM_NAME_LEN));
}

static void test_parse(void)
{
	unsigned char b[HBMD_SHM_HDR_ROOM] = { 0 };
	struct hbmd_shm_hdr h;
	int ret;

	make_hdr(b, HBMD_SHM_MAGIC, 1, 2, 77, 32 << 20, "rig");
	ret = hbmd_shm_hdr_parse(b, sizeof(b), &h);
	ok(!ret && h.node_id == 2 && h.incarnation == 77 && h.size == 32 << 20 &&
	   !strcmp(h.domain, "rig"), "a good header: node 2, incarnation 77, 32 MiB, domain rig (%d)",
	   ret);
	ok(!memcmp(b, "HHBMSHM1", 8), "the magic reads \"HHBMSHM1\" as bytes");
	ok(hbmd_shm_hdr_parse(b, HBMD_SHM_HDR_LEN, &h) == 0, "the 64 bytes of the fields suffice");
	ok(hbmd_shm_hdr_parse(b, HBMD_SHM_HDR_LEN - 1, &h) == -EMSGSIZE,
	   "truncated (63 bytes): -EMSGSIZE");
	ok(hbmd_shm_hdr_parse(b, 0, &h) == -EMSGSIZE, "nothing: -EMSGSIZE");

	make_hdr(b, HBMD_SHM_MAGIC ^ 1, 1, 2, 77, 32 << 20, "rig");
	ok(hbmd_shm_hdr_parse(b, sizeof(b), &h) == -ENOENT, "a bad magic: -ENOENT (no header)");
	memset(b, 0, sizeof(b));
	ok(hbmd_shm_hdr_parse(b, sizeof(b), &h) == -ENOENT, "zeroed memory: -ENOENT (no header)");
	make_hdr(b, HBMD_SHM_MAGIC, 2, 2, 77, 32 << 20, "rig");
	ok(hbmd_shm_hdr_parse(b, sizeof(b), &h) == -EPROTONOSUPPORT,
	   "version 2: -EPROTONOSUPPORT");
	make_hdr(b, HBMD_SHM_MAGIC, 0, 2, 77, 32 << 20, "rig");
	ok(hbmd_shm_hdr_parse(b, sizeof(b), &h) == -EPROTONOSUPPORT,
	   "version 0: -EPROTONOSUPPORT");
	make_hdr(b, HBMD_SHM_MAGIC, 1, 2, 77, 32 << 20, "0123456789012345678901234567890123");
	ok(hbmd_shm_hdr_parse(b, sizeof(b), &h) == -EBADMSG,
	   "a domain name filling its 32 bytes, no NUL: -EBADMSG");
	make_hdr(b, HBMD_SHM_MAGIC, 1, 2, 77, 32 << 20, "0123456789012345678901234567890");
	ok(!hbmd_shm_hdr_parse(b, sizeof(b), &h) && strlen(h.domain) == 31,
	   "a domain name of 31 characters (the longest)");
}

static void test_match(void)
{
	struct hbmd_shm_hdr h = { .node_id = 2, .incarnation = 77, .size = 32 << 20 };
	struct hbmd_shm_want w = { .domain = "rig", .node_id = 2, .incarnation = 77,
				   .size = 32 << 20 };
	char why[128];
	int ret;

	strcpy(h.domain, "rig");
	ret = hbmd_shm_hdr_match(&h, &w, why, sizeof(why));
	ok(!ret, "node 2 of rig, incarnation 77: its segment (%s)", why);
	w.domain = "pod7";
	ret = hbmd_shm_hdr_match(&h, &w, why, sizeof(why));
	ok(ret == -ENODEV && strstr(why, "domain rig"), "another domain: -ENODEV (%s)", why);
	w.domain = "ri";
	ok(hbmd_shm_hdr_match(&h, &w, why, sizeof(why)) == -ENODEV,
	   "a domain that is a prefix: -ENODEV");
	w.domain = "rig";
	w.node_id = 3;
	ret = hbmd_shm_hdr_match(&h, &w, why, sizeof(why));
	ok(ret == -ENODEV && strstr(why, "node 2"), "node id mismatch: -ENODEV (%s)", why);
	w.node_id = 2;
	w.incarnation = 78;
	ret = hbmd_shm_hdr_match(&h, &w, why, sizeof(why));
	ok(ret == -ESTALE && strstr(why, "incarnation 77, not 78"),
	   "another incarnation (the member's is newer): -ESTALE (%s)", why);
	w.incarnation = 0;
	ok(!hbmd_shm_hdr_match(&h, &w, why, sizeof(why)), "any incarnation wanted: 77 matches");
	h.incarnation = 0;
	ok(hbmd_shm_hdr_match(&h, &w, why, sizeof(why)) == -ESTALE,
	   "no incarnation in the header (being changed, fenced): -ESTALE even if any is wanted");
	h.incarnation = 77;
	w.size = 64 << 20;
	ret = hbmd_shm_hdr_match(&h, &w, why, sizeof(why));
	ok(ret == -ERANGE, "another size: -ERANGE (%s)", why);
	w.size = 0;
	ok(!hbmd_shm_hdr_match(&h, &w, why, sizeof(why)), "any size wanted: matches");
}

static void put(const char *rel, const void *data, size_t len)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	f = fopen(p, "w");
	if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f)) {
		perror(p);
		exit(1);
	}
}

static void mkdirs(const char *rel)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", dir, rel);
	if (system(cmd))
		exit(1);
}

/* A PCI device in the fake tree; hdr (len bytes, then zeros up to size) as its BAR2. */
static void pci_dev(const char *name, const char *vendor, const char *device,
		    const unsigned char *hdr, size_t len, size_t size)
{
	unsigned char *bar = calloc(1, size ? size : 1);
	char rel[128], file[160];

	if (!bar)
		exit(1);
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s", name);
	mkdirs(rel);
	snprintf(file, sizeof(file), "%s/vendor", rel);
	put(file, vendor, strlen(vendor));
	snprintf(file, sizeof(file), "%s/device", rel);
	put(file, device, strlen(device));
	if (hdr)
		memcpy(bar, hdr, len);
	snprintf(file, sizeof(file), "%s/resource2", rel);
	put(file, bar, size);
	free(bar);
}

static void test_scan(void)
{
	unsigned char h[HBMD_SHM_HDR_LEN];
	struct hbmd_shm_want w = { .domain = "rig", .node_id = 2, .incarnation = 7,
				   .size = 1 << 20 };
	char sys[128], dev[16], seen[512], p[256];
	int ret;

	snprintf(sys, sizeof(sys), "%s/sys", dir);

	ret = hbmd_shm_find(sys, &w, dev, sizeof(dev), seen, sizeof(seen));
	ok(ret == -ENOENT, "no bus/pci/devices under the root: -ENOENT (%d)", ret);

	pci_dev("0000:00:01.0", "0x8086\n", "0x1237\n", NULL, 0, 4096);
	pci_dev("0000:00:03.0", "0x1af4\n", "0x1000\n", NULL, 0, 4096);	/* virtio-net */
	ret = hbmd_shm_find(sys, &w, dev, sizeof(dev), seen, sizeof(seen));
	ok(ret == 0 && !*seen, "no ivshmem device: none found, nothing seen (%d, \"%s\")", ret, seen);

	make_hdr(h, HBMD_SHM_MAGIC, 1, 1, 5, 1 << 20, "rig");	/* this node's own */
	pci_dev("0000:00:11.0", "0x1af4\n", "0x1110\n", h, sizeof(h), 2 << 20);
	make_hdr(h, HBMD_SHM_MAGIC, 1, 2, 7, 1 << 20, "rig");
	pci_dev("0000:00:12.0", "0x1af4\n", "0x1110\n", h, sizeof(h), 2 << 20);
	pci_dev("0000:00:13.0", "0x1af4\n", "0x1110\n", NULL, 0, 2 << 20);	/* no header */
	pci_dev("0000:00:14.0", "0x1af4\n", "0x1110\n", h, 10, 10);		/* truncated */
	make_hdr(h, HBMD_SHM_MAGIC, 1, 2, 7, 1 << 20, "pod7");	/* another domain's node 2 */
	pci_dev("0000:00:10.0", "0x1af4\n", "0x1110\n", h, sizeof(h), 2 << 20);

	memset(dev, 'x', sizeof(dev));
	ret = hbmd_shm_find(sys, &w, dev, sizeof(dev), seen, sizeof(seen));
	ok(ret == 1 && !strcmp(dev, "0000:00:12.0"), "node 2 of rig, incarnation 7: 0000:00:12.0 (%d, %s)",
	   ret, ret == 1 ? dev : "");
	printf("# seen: %s\n", seen);
	ok(strstr(seen, "0000:00:10.0 node 2 of domain pod7") &&
	   strstr(seen, "0000:00:11.0 node 1 of domain rig") &&
	   strstr(seen, "0000:00:12.0 node 2 of domain rig") && !strstr(seen, "00:01.0") &&
	   !strstr(seen, "00:03.0"),
	   "seen: every ivshmem device with what it holds, no other device");
	ok(!strstr(seen, "00:13.0"), "the scan stops at the device found (in PCI name order)");

	w.incarnation = 8;
	ret = hbmd_shm_find(sys, &w, dev, sizeof(dev), seen, sizeof(seen));
	ok(ret == 0 && strstr(seen, "0000:00:12.0 node 2, incarnation 7, not 8"),
	   "node 2 of another incarnation (its header not written yet): none, and why (%s)", seen);
	ok(strstr(seen, "0000:00:13.0 no header") != NULL, "seen: a zeroed device has no header");
	ok(strstr(seen, "0000:00:14.0 truncated header") != NULL,
	   "seen: a device of 10 bytes has a truncated header (and no access past its end)");
	w.incarnation = 7;
	w.node_id = 3;
	ok(hbmd_shm_find(sys, &w, dev, sizeof(dev), seen, sizeof(seen)) == 0,
	   "node 3 (no device holds its segment): none");
	w.node_id = 2;
	ok(hbmd_shm_find(sys, &w, dev, 12, seen, sizeof(seen)) == 0,
	   "a name buffer too short for the PCI name: none");

	/*
	 * A device a driver holds: hbmpool's copy of the header
	 * (hbmpool_header) when it is hbmpool's driver, else not read.
	 */
	make_hdr(h, HBMD_SHM_MAGIC, 1, 5, 9, 1 << 20, "rig");
	pci_dev("0000:00:15.0", "0x1af4\n", "0x1110\n", NULL, 0, 0);	/* resource2: empty */
	snprintf(p, sizeof(p), "%s/sys/bus/pci/devices/0000:00:15.0/driver", dir);
	if (symlink("../../../bus/pci/drivers/other", p))
		perror(p);
	w.node_id = 5;
	w.incarnation = 9;
	ret = hbmd_shm_find(sys, &w, dev, sizeof(dev), seen, sizeof(seen));
	ok(ret == 0 && strstr(seen, "0000:00:15.0 cannot read it: another driver holds it"),
	   "a device another driver holds: not read, and why (%s)", seen);
	put("sys/bus/pci/devices/0000:00:15.0/" HBMD_SHM_SYSFS_HDR, h, sizeof(h));
	ret = hbmd_shm_find(sys, &w, dev, sizeof(dev), seen, sizeof(seen));
	ok(ret == 1 && !strcmp(dev, "0000:00:15.0"),
	   "a device hbmpool's driver holds: its header read from hbmpool_header (%d, %s)", ret,
	   seen);
	put("sys/bus/pci/devices/0000:00:15.0/" HBMD_SHM_SYSFS_HDR, h, 20);
	ret = hbmd_shm_find(sys, &w, dev, sizeof(dev), seen, sizeof(seen));
	ok(ret == 0 && strstr(seen, "0000:00:15.0 truncated header"),
	   "a short hbmpool_header: a truncated header (%s)", seen);
}

int main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/shm_discover_unit.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_parse();
	test_match();
	test_scan();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_finish();
}
