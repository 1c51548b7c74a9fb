// SPDX-License-Identifier: GPL-2.0
/*
 * Peers' ivshmem devices: see shm_discover.h.
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm_discover.h"

/* The header's layout (kmod/shm.h, struct hbmpool_shm_hdr), little endian. */
#define OFF_MAGIC	0
#define OFF_VERSION	8
#define OFF_NODE_ID	12
#define OFF_INC		16
#define OFF_SIZE	24
#define OFF_DOMAIN	32
_Static_assert(OFF_DOMAIN + HBMD_SHM_NAME_LEN == HBMD_SHM_HDR_LEN, "the header is 64 bytes");

#define PCI_BAR		2	/* ivshmem's shared memory */

static uint32_t le32_at(const unsigned char *p, size_t off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return le32toh(v);
}

static uint64_t le64_at(const unsigned char *p, size_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return le64toh(v);
}

int hbmd_shm_hdr_parse(const void *buf, size_t len, struct hbmd_shm_hdr *h)
{
	const unsigned char *p = buf;

	memset(h, 0, sizeof(*h));
	if (len < HBMD_SHM_HDR_LEN)
		return -EMSGSIZE;
	if (le64_at(p, OFF_MAGIC) != HBMD_SHM_MAGIC)
		return -ENOENT;
	if (le32_at(p, OFF_VERSION) != HBMD_SHM_VERSION)
		return -EPROTONOSUPPORT;
	if (!memchr(p + OFF_DOMAIN, '\0', HBMD_SHM_NAME_LEN))
		return -EBADMSG;
	h->node_id = le32_at(p, OFF_NODE_ID);
	h->incarnation = le64_at(p, OFF_INC);
	h->size = le64_at(p, OFF_SIZE);
	memcpy(h->domain, p + OFF_DOMAIN, HBMD_SHM_NAME_LEN);
	return 0;
}

int hbmd_shm_hdr_match(const struct hbmd_shm_hdr *h, const struct hbmd_shm_want *w, char *why,
		       size_t whylen)
{
	snprintf(why, whylen, "node %" PRIu32 " of domain %s", h->node_id, h->domain);
	if (h->node_id != w->node_id || strcmp(h->domain, w->domain))
		return -ENODEV;
	if (!h->incarnation || (w->incarnation && h->incarnation != w->incarnation)) {
		snprintf(why, whylen, "node %" PRIu32 ", incarnation %" PRIu64 ", not %" PRIu64,
			 h->node_id, h->incarnation, w->incarnation);
		return -ESTALE;
	}
	if (w->size && h->size != w->size) {
		snprintf(why, whylen, "node %" PRIu32 ", a segment of %" PRIu64 " bytes, not %" PRIu64,
			 h->node_id, h->size, w->size);
		return -ERANGE;
	}
	return 0;
}

/* Append ", what" (or "what" first) to a bounded text; truncation is fine. */
static void seen_add(char *seen, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void seen_add(char *seen, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(seen, len);
	va_list ap;

	if (used + 3 >= len)
		return;
	if (used) {
		memcpy(seen + used, ", ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(seen + used, len - used, fmt, ap);
	va_end(ap);
}

/* devdir/file into path (PATH_MAX bytes); -ENAMETOOLONG. */
static int dev_file(char *path, const char *devdir, const char *file)
{
	int n = snprintf(path, PATH_MAX, "%s/%s", devdir, file);

	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* A sysfs file's first line, a hex number ("0x1af4"); -errno. */
static int read_hex(const char *path, unsigned long long *v)
{
	char buf[64], *end;
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		ret = -EIO;
	fclose(f);
	if (ret)
		return ret;
	*v = strtoull(buf, &end, 16);
	return end != buf && (*end == '\n' || !*end) ? 0 : -EINVAL;
}

/*
 * The first bytes of path (up to the header's 64), mapped read-only: how
 * many (fewer when the file ends before: sysfs gives a BAR's size), or
 * -errno.
 */
static int map_header(const char *path, unsigned char buf[HBMD_SHM_HDR_LEN])
{
	size_t len = HBMD_SHM_HDR_ROOM;
	struct stat st;
	void *p;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))	/* no access past a file's end: SIGBUS */
		ret = -errno;
	else if ((uint64_t)st.st_size < len)
		len = (size_t)st.st_size;
	if (ret || !len) {
		close(fd);
		return ret;
	}
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	ret = p == MAP_FAILED ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	memcpy(buf, p, len < HBMD_SHM_HDR_LEN ? len : HBMD_SHM_HDR_LEN);
	munmap(p, len);
	return len < HBMD_SHM_HDR_LEN ? (int)len : HBMD_SHM_HDR_LEN;
}

/* The first bytes of a file read (hbmpool_header): how many, or -errno. */
static int read_file_header(const char *path, unsigned char buf[HBMD_SHM_HDR_LEN])
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, buf, HBMD_SHM_HDR_LEN, 0);
	if (n < 0)
		n = -errno;
	close(fd);
	return (int)n;
}

/*
 * One device's first bytes: hbmpool's hbmpool_header when its driver holds
 * the device, else (no driver) its resource2 mapped (shm_discover.h).
 * how: where from.
 */
static int read_header(const char *devdir, unsigned char buf[HBMD_SHM_HDR_LEN],
		       char *how, size_t howlen)
{
	char path[PATH_MAX];
	struct stat st;
	int ret;

	ret = dev_file(path, devdir, HBMD_SHM_SYSFS_HDR);
	if (ret)
		return ret;
	if (!stat(path, &st)) {
		snprintf(how, howlen, "read %s", HBMD_SHM_SYSFS_HDR);
		return read_file_header(path, buf);
	}
	ret = dev_file(path, devdir, "driver");
	if (ret)
		return ret;
	if (!lstat(path, &st)) {
		snprintf(how, howlen, "read it: another driver holds it");
		return -EBUSY;
	}
	snprintf(how, howlen, "map resource%d", PCI_BAR);
	return dev_file(path, devdir, "resource2") ?: map_header(path, buf);
}

/* Why a device's bytes are no header, for seen. */
static const char *parse_error(int err)
{
	switch (err) {
	case -EMSGSIZE:
		return "truncated header";
	case -ENOENT:
		return "no header";
	case -EPROTONOSUPPORT:
		return "a header of another version";
	default:
		return "a bad header";
	}
}

static bool is_ivshmem(const char *devdir)
{
	unsigned long long vendor, device;
	char path[PATH_MAX];

	if (dev_file(path, devdir, "vendor") || read_hex(path, &vendor) ||
	    vendor != HBMD_SHM_VENDOR)
		return false;
	return !dev_file(path, devdir, "device") && !read_hex(path, &device) &&
	       device == HBMD_SHM_DEVICE;
}

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int hbmd_shm_find(const char *sysfs_root, const struct hbmd_shm_want *w,
		  char *dev, size_t devlen, char *seen, size_t seenlen)
{
	char dir[PATH_MAX], devdir[PATH_MAX], how[160], why[128];
	unsigned char buf[HBMD_SHM_HDR_LEN];
	struct dirent **ents;
	struct hbmd_shm_hdr h;
	int n, i, ret, found = 0;

	if (seenlen)
		seen[0] = '\0';
	if (dev_file(dir, sysfs_root, "bus/pci/devices"))
		return -ENAMETOOLONG;
	n = scandir(dir, &ents, NULL, name_cmp);	/* in order: the first match wins */
	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;

		if (found || name[0] == '.')
			continue;
		if (dev_file(devdir, dir, name) || !is_ivshmem(devdir))
			continue;
		ret = read_header(devdir, buf, how, sizeof(how));
		if (ret < 0) {
			seen_add(seen, seenlen, "%s cannot %s: %s", name, how, strerror(-ret));
			continue;
		}
		ret = hbmd_shm_hdr_parse(buf, (size_t)ret, &h);
		if (ret) {
			seen_add(seen, seenlen, "%s %s", name, parse_error(ret));
			continue;
		}
		ret = hbmd_shm_hdr_match(&h, w, why, sizeof(why));
		seen_add(seen, seenlen, "%s %s", name, why);
		if (!ret && strlen(name) < devlen) {
			snprintf(dev, devlen, "%s", name);
			found = 1;
		}
	}
	for (i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	return found;
}
