// SPDX-License-Identifier: GPL-2.0
/*
 * hbmsys: wrappers around /dev/hbmpool, sysfs and debugfs.  See hbmsys.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "hbmlib.h"
#include "hbmnl.h"
#include "hbmsys.h"

int hbm_read_str(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if (!len)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int hbm_read_u64(const char *path, uint64_t *v)
{
	char buf[64];
	int ret = hbm_read_str(path, buf, sizeof(buf));

	if (ret)
		return ret;
	return hbm_parse_u64(buf, v);
}

int hbm_readf_u64(uint64_t *v, const char *fmt, ...)
{
	char path[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	return hbm_read_u64(path, v);
}

int hbm_readf_str(char *buf, size_t len, const char *fmt, ...)
{
	char path[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	return hbm_read_str(path, buf, len);
}

int hbm_write_str(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	if (close(fd))
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int hbm_write_u64(const char *path, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)v);
	return hbm_write_str(path, buf);
}

int hbm_global_u64(const char *name, uint64_t *v)
{
	return hbm_readf_u64(v, HBM_SYSFS "/%s", name);
}

int hbm_set_global_u64(const char *name, uint64_t v)
{
	struct hbm_nl_params p = HBM_NL_PARAMS_UNSET;
	struct hbm_nl *nl;
	int ret;

	if (v > INT64_MAX)
		return -ERANGE;
	if (!strcmp(name, "cache_budget_pages"))
		p.cache_budget_pages = (int64_t)v;
	else if (!strcmp(name, "fetch_timeout_ms"))
		p.fetch_timeout_ms = (int64_t)v;
	else if (!strcmp(name, "readahead_max_pages"))
		p.readahead_max_pages = (int64_t)v;
	else
		return -EINVAL;
	ret = hbm_nl_open(&nl);
	if (ret)
		return ret;
	ret = hbm_nl_params_set(nl, &p, NULL, 0);
	hbm_nl_close(nl);
	return ret;
}

int hbm_node_add(unsigned int id, unsigned int capacity_mib,
		 unsigned int distance, const char *link)
{
	struct hbm_nl_node n = {
		.id = id,
		.capacity = (uint64_t)capacity_mib << 20,
		.distance = distance,
		.transport = "sim",
		.link_type = -1,
	};
	struct hbm_nl *nl;
	int ret;

	if (link) {
		n.link_type = hbm_nl_link_type(link);
		if (n.link_type < 0)
			return n.link_type;
	}
	ret = hbm_nl_open(&nl);
	if (ret)
		return ret;
	ret = hbm_nl_node_new(nl, &n, NULL, 0);
	hbm_nl_close(nl);
	return ret;
}

int hbm_node_del(unsigned int id)
{
	struct hbm_nl *nl;
	int ret;

	ret = hbm_nl_open(&nl);
	if (ret)
		return ret;
	ret = hbm_nl_node_del(nl, id, NULL, 0);
	hbm_nl_close(nl);
	return ret;
}

int hbm_node_fence(unsigned int id)
{
	struct hbm_nl *nl;
	int ret;

	ret = hbm_nl_open(&nl);
	if (ret)
		return ret;
	ret = hbm_nl_node_fence(nl, id, NULL, 0);
	hbm_nl_close(nl);
	return ret;
}

int hbm_node_u64(unsigned int id, const char *attr, uint64_t *v)
{
	return hbm_readf_u64(v, HBM_SYSFS "/nodes/node%u/%s", id, attr);
}

int hbm_node_str(unsigned int id, const char *attr, char *buf, size_t len)
{
	return hbm_readf_str(buf, len, HBM_SYSFS "/nodes/node%u/%s", id, attr);
}

int hbm_node_knob(unsigned int id, const char *knob, uint64_t v)
{
	char path[256];

	snprintf(path, sizeof(path), HBM_DEBUGFS "/node%u/%s", id, knob);
	return hbm_write_u64(path, v);
}

ssize_t hbm_hbm_pread(unsigned int id, void *buf, size_t len, uint64_t off)
{
	char path[256];
	size_t done = 0;
	int fd;

	snprintf(path, sizeof(path), HBM_DEBUGFS "/node%u/hbm", id);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0) {
			int e = -errno;

			close(fd);
			return e;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	close(fd);
	return (ssize_t)done;
}

static int cmp_node(const void *a, const void *b)
{
	const struct hbm_node *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

int hbm_list_nodes(struct hbm_node *out, int max)
{
	DIR *d = opendir(HBM_SYSFS "/nodes");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < max) {
		struct hbm_node *nd = &out[n];
		unsigned int id;
		uint64_t v;
		char extra;

		if (sscanf(de->d_name, "node%u%c", &id, &extra) != 1)
			continue;
		memset(nd, 0, sizeof(*nd));
		nd->id = id;
		if (hbm_node_u64(id, "distance", &v))
			continue;	/* vanished meanwhile */
		nd->distance = (uint32_t)v;
		hbm_node_u64(id, "capacity_bytes", &nd->capacity_bytes);
		hbm_node_u64(id, "free_bytes", &nd->free_bytes);
		hbm_node_str(id, "link_type", nd->link_type, sizeof(nd->link_type));
		hbm_node_str(id, "state", nd->state, sizeof(nd->state));
		hbm_node_str(id, "transport", nd->transport, sizeof(nd->transport));
		n++;
	}
	closedir(d);
	qsort(out, (size_t)n, sizeof(*out), cmp_node);
	return n;
}

int hbm_dev_open(void)
{
	int fd = open(HBM_DEV, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int hbm_features(int devfd, struct hbmpool_features *f)
{
	memset(f, 0, sizeof(*f));
	f->size = sizeof(*f);
	return ioctl(devfd, HBMPOOL_IOC_GET_FEATURES, f) < 0 ? -errno : 0;
}

int hbm_self_node(int devfd)
{
	struct hbmpool_features f;
	int ret = hbm_features(devfd, &f);

	if (ret)
		return ret;
	return f.self_node < HBMPOOL_MAX_NODES ? (int)f.self_node : -ERANGE;
}

void hbm_create_init(struct hbmpool_region_create *rc, uint64_t length,
		     uint64_t chunk_size, uint32_t policy,
		     const struct hbm_nodeset *nodes, uint32_t preferred,
		     const char *name)
{
	memset(rc, 0, sizeof(*rc));
	rc->size = sizeof(*rc);
	rc->length = length;
	rc->chunk_size = chunk_size;
	rc->policy = policy;
	if (nodes) {
		rc->nodes_ptr = (uintptr_t)nodes->w;
		rc->nr_node_bits = HBM_NODESET_BITS;
	}
	rc->preferred_node = preferred;
	if (name)
		snprintf(rc->name, sizeof(rc->name), "%s", name);
}

int hbm_create_replicas(struct hbmpool_region_create *rc, uint32_t replicas)
{
	if (replicas < 1 || replicas > HBMPOOL_REPLICAS_MAX)
		return -EINVAL;
	rc->replicas = replicas;
	return 0;
}

int hbm_region_create(int devfd, struct hbmpool_region_create *rc)
{
	int ret = ioctl(devfd, HBMPOOL_IOC_REGION_CREATE, rc);

	return ret < 0 ? -errno : ret;
}

int hbm_region_open(int devfd, const char *name, struct hbmpool_region_open *ro)
{
	int ret;

	memset(ro, 0, sizeof(*ro));
	ro->size = sizeof(*ro);
	if (strlen(name) >= sizeof(ro->name))
		return -ENAMETOOLONG;
	strcpy(ro->name, name);
	ret = ioctl(devfd, HBMPOOL_IOC_REGION_OPEN, ro);
	return ret < 0 ? -errno : ret;
}

int hbm_fdinfo_str(int fd, const char *key, char *buf, size_t len)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *v = line + klen + 1;

		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		v += strspn(v, " \t");
		v[strcspn(v, "\n")] = '\0';
		if (strlen(v) >= len) {
			ret = -ENOSPC;
			break;
		}
		strcpy(buf, v);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

int hbm_fdinfo_u64(int fd, const char *key, uint64_t *v)
{
	char buf[64];
	int ret = hbm_fdinfo_str(fd, key, buf, sizeof(buf));

	return ret ? ret : hbm_parse_u64(buf, v);
}

int hbm_fdinfo_stats(int fd, struct hbmpool_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	for (int i = 0; i < HBM_NR_COUNTERS; i++) {
		uint64_t v;
		int ret = hbm_fdinfo_u64(fd, hbm_counter_names[i], &v);

		if (ret)
			return ret;
		*hbm_counter(st, i) = v;
	}
	return 0;
}

int hbm_region_info(int fd, struct hbmpool_region_info *ri,
		    struct hbmpool_chunk_info *chunks, uint32_t max,
		    struct hbm_nodeset *nodes)
{
	memset(ri, 0, sizeof(*ri));
	ri->size = sizeof(*ri);
	if (chunks) {
		ri->chunks_ptr = (uintptr_t)chunks;
		ri->nr_chunks_max = max;
		ri->chunk_entry_size = sizeof(*chunks);
	}
	if (nodes) {
		ri->nodes_ptr = (uintptr_t)nodes->w;
		ri->nr_node_bits = HBM_NODESET_BITS;
	}
	return ioctl(fd, HBMPOOL_IOC_REGION_INFO, ri) < 0 ? -errno : 0;
}

int hbm_region_stats(int fd, struct hbmpool_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(fd, HBMPOOL_IOC_REGION_STATS, st) < 0 ? -errno : 0;
}

static int range_ioctl(int fd, unsigned long cmd, uint64_t off, uint64_t len,
		       struct hbmpool_range *out)
{
	struct hbmpool_range r;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.offset = off;
	r.length = len;
	if (ioctl(fd, cmd, &r) < 0) {
		int e = -errno;

		if (out)
			*out = r;
		return e;
	}
	if (out)
		*out = r;
	return 0;
}

int hbm_region_sync(int fd, uint64_t off, uint64_t len, struct hbmpool_range *out)
{
	return range_ioctl(fd, HBMPOOL_IOC_REGION_SYNC, off, len, out);
}

int hbm_region_prefetch(int fd, uint64_t off, uint64_t len, struct hbmpool_range *out)
{
	return range_ioctl(fd, HBMPOOL_IOC_REGION_PREFETCH, off, len, out);
}

const char *const hbm_counter_names[HBM_NR_COUNTERS] = {
	"faults", "fetches", "bytes_fetched", "writebacks",
	"bytes_written_back", "evictions", "errors", "timeouts",
};

__u64 *hbm_counter(struct hbmpool_stats *st, int i)
{
	__u64 *c[HBM_NR_COUNTERS] = {
		&st->faults, &st->fetches, &st->bytes_fetched, &st->writebacks,
		&st->bytes_written_back, &st->evictions, &st->errors, &st->timeouts,
	};

	return c[i];
}

int hbm_read_stats_dir(const char *dir, struct hbmpool_stats *st)
{
	char path[512];
	FILE *f;
	int ret;

	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	for (int i = 0; i < HBM_NR_COUNTERS; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, hbm_counter_names[i]);
		uint64_t v;

		ret = hbm_read_u64(path, &v);
		if (ret)
			return ret;
		*hbm_counter(st, i) = v;
	}
	snprintf(path, sizeof(path), "%s/fetch_latency_hist", dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	for (int i = 0; i < HBMPOOL_LAT_BUCKETS; i++) {
		unsigned long long lo, cnt;

		if (fscanf(f, "%llu %llu", &lo, &cnt) != 2) {
			fclose(f);
			return -EINVAL;
		}
		/* bucket i is [2^i, 2^(i+1)); bucket 0 may be shown as 0. */
		if (lo != (1ULL << i) && !(i == 0 && lo == 0)) {
			fclose(f);
			return -EINVAL;
		}
		st->lat_hist[i] = cnt;
	}
	fclose(f);
	return 0;
}

uint64_t hbm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
