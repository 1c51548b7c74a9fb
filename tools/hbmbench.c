// SPDX-License-Identifier: GPL-2.0
/*
 * hbmbench: 4 KiB fault throughput and latency of hbmpool through the
 * simulated fabric (added latency 0, bandwidth unlimited) or through any
 * other transport (tcp: a region homed on another machine), next to two
 * baselines over the same bytes:
 *   pread   the node's debugfs "hbm" file (opened once) read 4 KiB at a
 *           time: a kernel copy out of the very HBM pages the faults fetch
 *           from;
 *   memcpy  a user-space memcpy of the warm (already cached and mapped)
 *           region, 4 KiB at a time.
 * Fault phases time each first touch (clock_gettime around a read of the
 * page's first byte) on a cold region; the cache budget is raised so that
 * nothing is evicted, except in the optional --evict phase (budget = 1/8 of
 * the region).  Knobs changed are restored at exit.  Numbers only: nothing
 * here asserts on timing.
 *
 * Nodes that are not simulated (sysfs nodes/nodeN/transport other than
 * "sim", e.g. "tcp") have no debugfs "hbm" file and no latency, bandwidth
 * or nowait_copy knob: their knobs are left alone, and when any bench node
 * is not simulated the sim-only phases (pread_hbm, seq_fault_retry) are
 * skipped, with a "note:" line saying so.  The other phases run as usual;
 * an outside baseline of such a link (iperf3) is the caller's job
 * (tools/rig/bench-tcp.sh).
 *
 * --regions N measures something else instead: the kernel memory a region
 * costs (Slab + Percpu of /proc/meminfo, per region, N one-page regions
 * held open), against a one-page memfd as the baseline, in the same run.
 *
 * usage: hbmbench [--size SIZE] [--node N | --nodes LIST] [--iterations N] [--evict]
 *        hbmbench --regions N [--node N | --nodes LIST]
 * Output: a table, then machine-readable "key=value" lines
 * (transport.nodeN=..., mbps.PHASE=..., lat.PHASE.p50_ns|p99_ns|p999_ns=...,
 * ratio.seq_fault_vs_memcpy=0.xx, ...); ratios are fault throughput over
 * baseline throughput.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "hbmcli.h"
#include "hbmlib.h"
#include "hbmsys.h"

#define PAGE 4096ULL

enum phase {
	SEQ_FAULT, SEQ_FAULT_RETRY, RAND_FAULT, EVICT_FAULT, PREAD_HBM, MEMCPY_WARM, NPHASE
};

static const char *const phase_name[NPHASE] = {
	"seq_fault", "seq_fault_retry", "rand_fault", "seq_fault_evict", "pread_hbm",
	"memcpy_warm",
};

struct result {
	uint64_t *lat;		/* per-page ns, all iterations */
	uint64_t n;
	uint64_t total_ns;	/* sum of the timed loops */
	uint64_t bytes;
	uint64_t p50, p99, p999;	/* ns, set by print_row() */
	int ran;
};

static struct result res[NPHASE];
static uint64_t old_budget;
static int budget_saved;
static struct hbm_nodeset nodes_used;	/* the bench nodes */
static uint64_t old_latency[HBMPOOL_MAX_NODES], old_bw[HBMPOOL_MAX_NODES];
static uint64_t old_nowait[HBMPOOL_MAX_NODES];
static struct hbm_nodeset knobs_saved;	/* nodes whose debugfs knobs we changed */

static void restore(void)
{
	if (budget_saved)
		hbm_set_global_u64("cache_budget_pages", old_budget);
	for (int i = hbm_nodeset_first(&knobs_saved); i >= 0;
	     i = hbm_nodeset_next(&knobs_saved, i)) {
		hbm_node_knob((unsigned int)i, "latency_us", old_latency[i]);
		hbm_node_knob((unsigned int)i, "bandwidth_mbps", old_bw[i]);
		hbm_node_knob((unsigned int)i, "nowait_copy", old_nowait[i]);
	}
}

/* The fault fast path (a CPU copy under mmap_lock) on or off on every bench node. */
static int set_nowait(int on)
{
	for (int i = hbm_nodeset_first(&knobs_saved); i >= 0;
	     i = hbm_nodeset_next(&knobs_saved, i))
		if (hbm_node_knob((unsigned int)i, "nowait_copy", (uint64_t)on))
			return -1;
	return 0;
}

/* debugfs nodeN/hbm, opened once so the baseline times only the copy. */
static int hbm_fd[HBMPOOL_MAX_NODES];

static ssize_t hbm_read_page(unsigned int node, void *buf, uint64_t off)
{
	if (node >= HBMPOOL_MAX_NODES)
		return -EINVAL;
	if (!hbm_fd[node]) {
		char path[128];

		snprintf(path, sizeof(path), HBM_DEBUGFS "/node%u/hbm", node);
		hbm_fd[node] = open(path, O_RDONLY | O_CLOEXEC);
		if (hbm_fd[node] < 0)
			return -errno;
	}
	return pread(hbm_fd[node], buf, PAGE, (off_t)off);
}

static void record(enum phase ph, uint64_t ns)
{
	res[ph].lat[res[ph].n++] = ns;
}

static int region_new(int dev, uint64_t size, struct hbmpool_region_create *rc, uint8_t **m)
{
	int fd;

	hbm_create_init(rc, size, 0, HBMPOOL_POLICY_INTERLEAVE, &nodes_used, 0, "hbmbench");
	/* 2 MiB chunks unless the region is small: spread over every node. */
	rc->chunk_size = 2ULL << 20;
	while (rc->chunk_size > PAGE && size / rc->chunk_size < 4 * (uint64_t)hbm_nodeset_count(&nodes_used))
		rc->chunk_size /= 2;
	fd = hbm_region_create(dev, rc);
	if (fd >= 0) {
		*m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (*m == MAP_FAILED) {
			int e = -errno;

			close(fd);
			fd = e;
		}
	}
	if (fd < 0)
		fprintf(stderr, "hbmbench: create and map %llu bytes: %s\n",
			(unsigned long long)size, strerror(-fd));
	return fd;
}

static void fault_pass(enum phase ph, uint8_t *m, uint64_t npages, const uint32_t *order)
{
	uint64_t start = hbm_now_ns();

	for (uint64_t i = 0; i < npages; i++) {
		uint64_t p = order ? order[i] : i;
		uint64_t t0 = hbm_now_ns();

		(void)*(volatile uint8_t *)(m + p * PAGE);
		record(ph, hbm_now_ns() - t0);
	}
	res[ph].total_ns += hbm_now_ns() - start;
	res[ph].bytes += npages * PAGE;
	res[ph].ran = 1;
}

/* One fault pass over a new cold region, which is then unmapped and closed. */
static int cold_pass(int dev, uint64_t size, struct hbmpool_region_create *rc,
		     enum phase ph, const uint32_t *order)
{
	uint8_t *m;
	int fd = region_new(dev, size, rc, &m);

	if (fd < 0)
		return fd;
	fault_pass(ph, m, size / PAGE, order);
	munmap(m, size);
	close(fd);
	return 0;
}

static void print_row(enum phase ph)
{
	struct result *r = &res[ph];
	double secs = (double)r->total_ns / 1e9;

	if (!r->ran || !r->n)
		return;
	hbm_sort_u64(r->lat, r->n);
	r->p50 = hbm_percentile_sorted(r->lat, r->n, 50);
	r->p99 = hbm_percentile_sorted(r->lat, r->n, 99);
	r->p999 = hbm_percentile_sorted(r->lat, r->n, 99.9);
	printf("%-16s %10.0f %10.1f %10llu %10llu %10llu\n", phase_name[ph],
	       (double)r->n / secs, (double)r->bytes / secs / 1e6,
	       (unsigned long long)r->p50, (unsigned long long)r->p99,
	       (unsigned long long)r->p999);
}

static double mbps(enum phase ph)
{
	return res[ph].total_ns ? (double)res[ph].bytes / ((double)res[ph].total_ns / 1e9) / 1e6 : 0;
}

/* A /proc/meminfo field in bytes, or -1. */
static long long meminfo_bytes(const char *field)
{
	size_t flen = strlen(field);
	long long kb = -1;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, flen) && line[flen] == ':') {
			kb = atoll(line + flen + 1);
			break;
		}
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/* Kernel memory that objects of this program hold: slab and per-CPU. */
static void kmem(long long *slab, long long *percpu)
{
	/* let deferred frees (RCU, per-CPU slab caches) settle */
	usleep(200 * 1000);
	*slab = meminfo_bytes("Slab");
	*percpu = meminfo_bytes("Percpu");
}

/*
 * --regions N: N one-page regions held open, then N one-page memfds, each
 * measured as kernel memory per object.
 */
static int bench_regions(int dev, uint64_t n)
{
	struct rlimit rl = { .rlim_cur = n + 64, .rlim_max = n + 64 };
	long long slab0, pcpu0, slab1, pcpu1, slab2, pcpu2;
	struct hbmpool_region_create rc;
	int *fds = calloc(n, sizeof(*fds));
	double reg_slab, reg_pcpu, mfd_slab, mfd_pcpu;
	uint64_t i;

	if (!fds || setrlimit(RLIMIT_NOFILE, &rl)) {
		fprintf(stderr, "hbmbench: cannot hold %llu descriptors\n", (unsigned long long)n);
		return 1;
	}
	kmem(&slab0, &pcpu0);
	for (i = 0; i < n; i++) {
		hbm_create_init(&rc, PAGE, PAGE, HBMPOOL_POLICY_INTERLEAVE, &nodes_used, 0, "");
		fds[i] = hbm_region_create(dev, &rc);
		if (fds[i] < 0) {
			fprintf(stderr, "hbmbench: region %llu: %s\n", (unsigned long long)i,
				strerror(-fds[i]));
			return 1;
		}
	}
	kmem(&slab1, &pcpu1);
	for (i = 0; i < n; i++)
		close(fds[i]);
	kmem(&slab0, &pcpu0);	/* the baseline starts from the same point */
	for (i = 0; i < n; i++) {
		fds[i] = memfd_create("hbmbench", MFD_CLOEXEC);
		if (fds[i] < 0 || ftruncate(fds[i], PAGE)) {
			perror("hbmbench: memfd");
			return 1;
		}
	}
	kmem(&slab2, &pcpu2);
	for (i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	reg_slab = (double)(slab1 - slab0) / n;
	reg_pcpu = (double)(pcpu1 - pcpu0) / n;
	mfd_slab = (double)(slab2 - slab0) / n;
	mfd_pcpu = (double)(pcpu2 - pcpu0) / n;
	printf("%-24s %14s %14s\n", "object (one page)", "slab B/obj", "percpu B/obj");
	printf("%-24s %14.0f %14.0f\n", "hbmpool region", reg_slab, reg_pcpu);
	printf("%-24s %14.0f %14.0f\n", "memfd (baseline)", mfd_slab, mfd_pcpu);
	printf("regions.n=%llu\n", (unsigned long long)n);
	printf("regions.slab_bytes_per_region=%.0f\n", reg_slab);
	printf("regions.percpu_bytes_per_region=%.0f\n", reg_pcpu);
	printf("regions.slab_bytes_per_memfd=%.0f\n", mfd_slab);
	printf("ratio.region_vs_memfd_kmem=%.2f\n",
	       (reg_slab + reg_pcpu) / (mfd_slab + mfd_pcpu));
	return 0;
}

static void usage(FILE *f, const char *argv0)
{
	fprintf(f, "usage: %s [--size SIZE] [--node N | --nodes LIST] [--iterations N] [--evict]\n"
		"  --size SIZE       bytes per region (default 8M; k/M/G suffixes)\n"
		"  --node N          use remote node N (0..1023, not this node's id)\n"
		"  --nodes LIST      use nodes, e.g. 1,3-5,700 (default: every remote node up)\n"
		"  --iterations N    repeat each phase N times (default 3)\n"
		"  --evict           add a sequential fault phase with budget = size/8\n"
		"  --regions N       instead: kernel memory per region, N one-page regions,\n"
		"                    against a one-page memfd\n", argv0);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "node", required_argument, NULL, 'n' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "iterations", required_argument, NULL, 'i' },
		{ "evict", no_argument, NULL, 'e' },
		{ "regions", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t size = 8ULL << 20, iters = 3, npages, v, nregions = 0;
	struct hbm_node nodes[HBMPOOL_MAX_NODES];
	struct hbmpool_region_create rc;
	int c, n, dev, self, evict = 0, have_debugfs, all_sim = 1;
	char transport[HBMPOOL_MAX_NODES][16];
	char list[256];
	uint32_t *perm;
	uint8_t *buf;

	while ((c = getopt_long(argc, argv, "s:n:N:i:er:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (hbm_parse_size(optarg, &size) || !size || size % PAGE)
				return hbm_cli_bad("size", optarg, "(a non-zero multiple of 4 KiB)");
			break;
		case 'n':
			if (hbm_parse_u64(optarg, &v) || v >= HBMPOOL_MAX_NODES)
				return hbm_cli_bad("node", optarg, "(0..1023)");
			hbm_nodeset_zero(&nodes_used);
			hbm_nodeset_set(&nodes_used, (unsigned int)v);
			break;
		case 'N':
			if (hbm_parse_nodelist(optarg, 0, HBMPOOL_MAX_NODES - 1, &nodes_used))
				return hbm_cli_bad("nodes", optarg, "(ids 0..1023, e.g. 1,3-5)");
			break;
		case 'i':
			if (hbm_parse_u64(optarg, &iters) || !iters || iters > 1000)
				return hbm_cli_bad("iterations", optarg, "(1..1000)");
			break;
		case 'e':
			evict = 1;
			break;
		case 'r':
			if (hbm_parse_u64(optarg, &nregions) || !nregions || nregions > 1000000)
				return hbm_cli_bad("regions", optarg, "(1..1000000)");
			break;
		default:	/* 'h', or an unknown option */
			return hbm_cli_usage(usage, argv[0], c == 'h');
		}
	}
	npages = size / PAGE;

	n = hbm_list_nodes(nodes, HBMPOOL_MAX_NODES);
	if (n < 0) {
		fprintf(stderr, "hbmbench: %s/nodes: %s (is hbmpool.ko loaded?)\n", HBM_SYSFS, strerror(-n));
		return 1;
	}
	dev = hbm_dev_open();
	if (dev < 0) {
		fprintf(stderr, "hbmbench: open %s: %s\n", HBM_DEV, strerror(-dev));
		return 1;
	}
	self = hbm_self_node(dev);
	if (self < 0) {
		fprintf(stderr, "hbmbench: GET_FEATURES: %s\n", strerror(-self));
		return 1;
	}
	if (hbm_nodeset_test(&nodes_used, (unsigned int)self)) {
		fprintf(stderr, "hbmbench: node %d is this node, not a remote one\n", self);
		return 2;
	}
	if (hbm_nodeset_empty(&nodes_used)) {
		for (int i = 0; i < n; i++)
			if (nodes[i].id != (uint32_t)self && !strcmp(nodes[i].state, "up"))
				hbm_nodeset_set(&nodes_used, nodes[i].id);
		if (hbm_nodeset_empty(&nodes_used)) {
			fprintf(stderr, "hbmbench: no remote node is up (hbmctl node add 1 capacity 64M distance 20)\n");
			return 1;
		}
	}
	if (nregions)
		return bench_regions(dev, nregions);

	/* The transport of each bench node: sim-only phases need every one to be "sim". */
	memset(transport, 0, sizeof(transport));
	for (int i = 0; i < n; i++)
		if (nodes[i].id < HBMPOOL_MAX_NODES)
			snprintf(transport[nodes[i].id], sizeof(transport[0]), "%s",
				 nodes[i].transport[0] ? nodes[i].transport : "unknown");
	for (int i = hbm_nodeset_first(&nodes_used); i >= 0; i = hbm_nodeset_next(&nodes_used, i)) {
		if (!transport[i][0]) {
			fprintf(stderr, "hbmbench: node %d does not exist\n", i);
			return 1;
		}
		if (strcmp(transport[i], "sim")) {
			printf("note: node %d uses transport %s, not the simulated fabric: its latency, "
			       "bandwidth and nowait_copy knobs are left alone\n", i, transport[i]);
			all_sim = 0;
		}
	}
	if (!all_sim)
		printf("note: not every bench node is simulated: the sim-only phases pread_hbm "
		       "(debugfs nodeN/hbm) and seq_fault_retry (nowait_copy 0) are skipped\n");
	for (int ph = 0; ph < NPHASE; ph++) {
		res[ph].lat = calloc(npages * iters, sizeof(uint64_t));
		if (!res[ph].lat)
			return 1;
	}
	perm = calloc(npages, sizeof(*perm));
	buf = aligned_alloc(PAGE, PAGE);
	if (!perm || !buf)
		return 1;

	/* Zero added latency, no bandwidth cap; a budget with room for everything. */
	atexit(restore);
	have_debugfs = !access(HBM_DEBUGFS, F_OK);
	for (int i = hbm_nodeset_first(&nodes_used); i >= 0 && have_debugfs;
	     i = hbm_nodeset_next(&nodes_used, i)) {
		char path[128];

		if (strcmp(transport[i], "sim"))
			continue;

		snprintf(path, sizeof(path), HBM_DEBUGFS "/node%d/latency_us", i);
		if (hbm_read_u64(path, &old_latency[i]))
			continue;
		snprintf(path, sizeof(path), HBM_DEBUGFS "/node%d/bandwidth_mbps", i);
		hbm_read_u64(path, &old_bw[i]);
		snprintf(path, sizeof(path), HBM_DEBUGFS "/node%d/nowait_copy", i);
		if (hbm_read_u64(path, &old_nowait[i]))
			old_nowait[i] = 1;
		hbm_nodeset_set(&knobs_saved, (unsigned int)i);
		hbm_node_knob((unsigned int)i, "latency_us", 0);
		hbm_node_knob((unsigned int)i, "bandwidth_mbps", 0);
	}
	if (hbm_global_u64("cache_budget_pages", &old_budget) == 0)
		budget_saved = 1;
	if (hbm_set_global_u64("cache_budget_pages", 2 * npages + 64)) {
		fprintf(stderr, "hbmbench: cannot raise cache_budget_pages to %llu\n",
			(unsigned long long)(2 * npages + 64));
		return 1;
	}

	for (uint64_t it = 0; it < iters; it++) {
		struct hbmpool_chunk_info *ch;
		struct hbmpool_region_info ri;
		uint8_t *m;
		int fd;
		uint64_t start;

		/* Sequential cold faults; the region stays for the baselines. */
		fd = region_new(dev, size, &rc, &m);
		if (fd < 0)
			return 1;
		fault_pass(SEQ_FAULT, m, npages, NULL);

		/* The same with the fast path off: every miss drops mmap_lock and retries. */
		if (have_debugfs && all_sim && !set_nowait(0)) {
			if (cold_pass(dev, size, &rc, SEQ_FAULT_RETRY, NULL))
				return 1;
			set_nowait(1);
		}

		/* Random cold faults on a second region. */
		hbm_permutation(perm, npages, it + 1);
		if (cold_pass(dev, size, &rc, RAND_FAULT, perm))
			return 1;

		/* Baseline a: pread of the same HBM bytes, 4 KiB at a time. */
		ch = calloc(size / rc.chunk_size + 1, sizeof(*ch));
		if (have_debugfs && all_sim && ch && !hbm_region_info(fd, &ri, ch, (uint32_t)(size / rc.chunk_size + 1), NULL)) {
			start = hbm_now_ns();
			for (uint64_t p = 0; p < npages; p++) {
				uint64_t off = p * PAGE, k = off / ri.chunk_size;
				uint64_t t0 = hbm_now_ns();

				if (hbm_read_page(ch[k].node, buf,
						  ch[k].node_offset + off % ri.chunk_size) != (ssize_t)PAGE) {
					fprintf(stderr, "hbmbench: pread of node%u/hbm failed\n", ch[k].node);
					return 1;
				}
				record(PREAD_HBM, hbm_now_ns() - t0);
			}
			res[PREAD_HBM].total_ns += hbm_now_ns() - start;
			res[PREAD_HBM].bytes += size;
			res[PREAD_HBM].ran = 1;
		}
		free(ch);

		/* Baseline b: memcpy of the warm mapped region. */
		start = hbm_now_ns();
		for (uint64_t p = 0; p < npages; p++) {
			uint64_t t0 = hbm_now_ns();

			memcpy(buf, m + p * PAGE, PAGE);
			__asm__ volatile("" : : "r"(buf) : "memory");
			record(MEMCPY_WARM, hbm_now_ns() - t0);
		}
		res[MEMCPY_WARM].total_ns += hbm_now_ns() - start;
		res[MEMCPY_WARM].bytes += size;
		res[MEMCPY_WARM].ran = 1;
		munmap(m, size);
		close(fd);

		/* Optional: sequential faults with eviction (budget = size/8). */
		if (evict) {
			uint64_t b = npages / 8 < 16 ? 16 : npages / 8;

			hbm_set_global_u64("cache_budget_pages", b);
			if (cold_pass(dev, size, &rc, EVICT_FAULT, NULL))
				return 1;
			hbm_set_global_u64("cache_budget_pages", 2 * npages + 64);
		}
	}

	printf("hbmbench: %llu x %llu KiB region(s), nodes %s, %llu iteration(s), 4 KiB pages\n",
	       (unsigned long long)(2 + !!evict + res[SEQ_FAULT_RETRY].ran), (unsigned long long)(size >> 10),
	       hbm_nodeset_format(&nodes_used, list, sizeof(list)), (unsigned long long)iters);
	printf("%-16s %10s %10s %10s %10s %10s\n", "phase", "pages/s", "MB/s", "p50_ns", "p99_ns", "p99.9_ns");
	for (int ph = 0; ph < NPHASE; ph++)
		print_row((enum phase)ph);
	printf("\n");
	for (int i = hbm_nodeset_first(&nodes_used); i >= 0; i = hbm_nodeset_next(&nodes_used, i))
		printf("transport.node%d=%s\n", i, transport[i]);
	for (int ph = 0; ph < NPHASE; ph++) {
		if (res[ph].ran)
			printf("mbps.%s=%.1f\n", phase_name[ph], mbps((enum phase)ph));
	}
	for (int ph = 0; ph < NPHASE; ph++) {
		if (res[ph].ran && res[ph].n)
			printf("lat.%s.p50_ns=%llu\nlat.%s.p99_ns=%llu\nlat.%s.p999_ns=%llu\n",
			       phase_name[ph], (unsigned long long)res[ph].p50,
			       phase_name[ph], (unsigned long long)res[ph].p99,
			       phase_name[ph], (unsigned long long)res[ph].p999);
	}
	if (res[PREAD_HBM].ran) {
		printf("ratio.seq_fault_vs_pread=%.3f\n", mbps(SEQ_FAULT) / mbps(PREAD_HBM));
		printf("ratio.rand_fault_vs_pread=%.3f\n", mbps(RAND_FAULT) / mbps(PREAD_HBM));
	}
	printf("ratio.seq_fault_vs_memcpy=%.3f\n", mbps(SEQ_FAULT) / mbps(MEMCPY_WARM));
	printf("ratio.rand_fault_vs_memcpy=%.3f\n", mbps(RAND_FAULT) / mbps(MEMCPY_WARM));
	if (res[SEQ_FAULT_RETRY].ran)
		printf("ratio.seq_fault_vs_seq_fault_retry=%.3f\n",
		       mbps(SEQ_FAULT) / mbps(SEQ_FAULT_RETRY));
	if (res[EVICT_FAULT].ran)
		printf("ratio.evict_fault_vs_seq_fault=%.3f\n", mbps(EVICT_FAULT) / mbps(SEQ_FAULT));
	close(dev);
	return 0;
}
