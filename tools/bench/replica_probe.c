// SPDX-License-Identifier: GPL-2.0
/*
 * replica_probe: the client side of tools/rig/bench-replica.sh.  One process
 * creates a replicated region, fills it, then reads it page by page in a
 * loop, timing every access, through epochs that the host starts by
 * creating files, and holds the region until told to let go.
 *
 *   replica_probe --dir DIR --size SIZE --chunk SIZE --nodes LIST
 *                 --replicas K [--name NAME]
 *
 * 1. REGION_CREATE (interleave over LIST, K copies per chunk), mmap, every
 *    page written (its first word: page index ^ a seed; the rest a fill),
 *    REGION_SYNC; then "ready region ID" on stdout and the file DIR/ready.
 * 2. Reader: pages in order, cyclically, one 8-byte read per page timed by
 *    clock_gettime (the cache budget, set by the caller far below the
 *    region, makes nearly every access a fetch).  Every 100 ms it looks for
 *    DIR/mark.E+1: its appearance starts epoch E+1.  Per epoch: accesses,
 *    bad words, SIGBUSes, p50, p99 and the longest access (ns), and when it
 *    began (ms after the epoch's start).  DIR/stop ends the reader: the
 *    epochs' lines go to stdout and to DIR/result ("epoch E n=.. p50_ns=..
 *    p99_ns=.. max_ns=.. max_at_ms=.. bad=.. sigbus=.. dur_ms=..").
 * 3. Holds the region (so that it can be re-replicated) until DIR/release
 *    or SIGTERM.
 *
 * DIR is a directory the host can write and the guest can see (the rig's
 * RIG_SYNC).  Numbers only: nothing is asserted on timing.
 */
#include <errno.h>
#include <getopt.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hbmlib.h"
#include "hbmsys.h"

#define PAGE		4096ULL
#define MAX_EPOCH	16
#define SEED		0x5eed1234abcdULL

struct epoch {
	uint64_t *lat, n, cap;
	uint64_t max_ns, max_at_ns, start_ns, end_ns;
	uint64_t bad, sigbus;
};

static struct epoch ep[MAX_EPOCH];
static sigjmp_buf jb;
static volatile sig_atomic_t in_read, term;

static void on_sigbus(int sig)
{
	(void)sig;
	if (in_read)
		siglongjmp(jb, 1);
	_exit(3);
}

static void on_term(int sig)
{
	(void)sig;
	term = 1;
}

/* One timed 8-byte read: 0 (value in *v), or 1 after a SIGBUS. */
static __attribute__((noinline)) int timed_read(const uint8_t *p, uint64_t *v, uint64_t *t0,
						uint64_t *t1)
{
	in_read = 1;
	*t0 = hbm_now_ns();
	if (sigsetjmp(jb, 1) == 0) {
		*v = *(const volatile uint64_t *)p;
		*t1 = hbm_now_ns();
		in_read = 0;
		return 0;
	}
	*t1 = hbm_now_ns();
	in_read = 0;
	return 1;
}

static int exists(const char *dir, const char *name)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

static void touch_file(const char *dir, const char *name, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int add(struct epoch *e, uint64_t v)
{
	if (e->n == e->cap) {
		uint64_t cap = e->cap ? 2 * e->cap : 65536;
		uint64_t *l = realloc(e->lat, cap * sizeof(*l));

		if (!l)
			return -1;
		e->lat = l;
		e->cap = cap;
	}
	e->lat[e->n++] = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "size", required_argument, NULL, 's' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "replicas", required_argument, NULL, 'k' },
		{ "name", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL, *name = "replprobe";
	uint64_t size = 32ULL << 20, chunk = 1ULL << 20, k = 2, npages, cur = 0, next_check;
	struct hbmpool_region_create rc;
	struct hbmpool_region_info ri;
	struct hbm_nodeset nodes;
	struct sigaction sa;
	char line[1024], *out = NULL;
	size_t outlen = 0;
	FILE *res;
	uint8_t *m;
	int c, dev, fd, e;
	unsigned int ne = 1;

	hbm_nodeset_zero(&nodes);
	while ((c = getopt_long(argc, argv, "d:s:c:N:k:n:", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 's':
			if (hbm_parse_size(optarg, &size) || !size || size % PAGE)
				return 2;
			break;
		case 'c':
			if (hbm_parse_size(optarg, &chunk) || !chunk || chunk % PAGE)
				return 2;
			break;
		case 'N':
			if (hbm_parse_nodelist(optarg, 0, HBMPOOL_MAX_NODES - 1, &nodes))
				return 2;
			break;
		case 'k':
			if (hbm_parse_u64(optarg, &k) || !k || k > HBMPOOL_REPLICAS_MAX)
				return 2;
			break;
		case 'n':
			name = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s --dir DIR --size SIZE --chunk SIZE --nodes LIST "
				"--replicas K [--name NAME]\n", argv[0]);
			return 2;
		}
	}
	if (!dir || hbm_nodeset_empty(&nodes)) {
		fprintf(stderr, "replica_probe: --dir and --nodes are needed\n");
		return 2;
	}
	npages = size / PAGE;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigaction(SIGBUS, &sa, NULL);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	dev = hbm_dev_open();
	if (dev < 0) {
		fprintf(stderr, "replica_probe: open: %s\n", strerror(-dev));
		return 1;
	}
	hbm_create_init(&rc, size, chunk, HBMPOOL_POLICY_INTERLEAVE, &nodes, 0, name);
	if (k > 1 && hbm_create_replicas(&rc, (uint32_t)k)) {
		fprintf(stderr, "replica_probe: replicas %llu refused\n", (unsigned long long)k);
		return 1;
	}
	fd = hbm_region_create(dev, &rc);
	if (fd < 0) {
		fprintf(stderr, "replica_probe: create: %s\n", strerror(-fd));
		return 1;
	}
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		perror("replica_probe: mmap");
		return 1;
	}
	for (uint64_t p = 0; p < npages; p++) {
		memset(m + p * PAGE, 0xa5, PAGE);
		*(uint64_t *)(m + p * PAGE) = p ^ SEED;
	}
	e = hbm_region_sync(fd, 0, size, NULL);
	if (e) {
		fprintf(stderr, "replica_probe: sync: %s\n", strerror(-e));
		return 1;
	}
	memset(&ri, 0, sizeof(ri));
	if (hbm_region_info(fd, &ri, NULL, 0, NULL)) {
		fprintf(stderr, "replica_probe: REGION_INFO failed\n");
		return 1;
	}
	snprintf(line, sizeof(line), "ready region %llu replicas %llu size %llu chunk %llu\n",
		 (unsigned long long)ri.region_id, (unsigned long long)k, (unsigned long long)size,
		 (unsigned long long)chunk);
	fputs(line, stdout);
	fflush(stdout);
	touch_file(dir, "ready", line);

	/* The reader, through the epochs the host starts. */
	ep[0].start_ns = hbm_now_ns();
	next_check = ep[0].start_ns + 100000000ULL;
	for (uint64_t i = 0; !term; i++) {
		uint64_t p = i % npages, t0, t1, v = 0;
		struct epoch *E = &ep[cur];

		if (timed_read(m + p * PAGE, &v, &t0, &t1))
			E->sigbus++;
		else if (v != (p ^ SEED))
			E->bad++;
		if (add(E, t1 - t0))
			return 1;
		if (t1 - t0 > E->max_ns) {
			E->max_ns = t1 - t0;
			E->max_at_ns = t0 - E->start_ns;
		}
		if (t1 >= next_check) {
			char mk[32];

			next_check = t1 + 100000000ULL;
			if (exists(dir, "stop"))
				break;
			snprintf(mk, sizeof(mk), "mark.%llu", (unsigned long long)cur + 1);
			if (cur + 1 < MAX_EPOCH && exists(dir, mk)) {
				E->end_ns = hbm_now_ns();
				cur++;
				ne = (unsigned int)cur + 1;
				ep[cur].start_ns = E->end_ns;
			}
		}
	}
	ep[cur].end_ns = hbm_now_ns();

	res = open_memstream(&out, &outlen);
	if (!res)
		return 1;
	for (unsigned int i = 0; i < ne; i++) {
		struct epoch *E = &ep[i];
		uint64_t p50 = 0, p99 = 0;

		if (E->n) {
			hbm_sort_u64(E->lat, E->n);
			p50 = hbm_percentile_sorted(E->lat, E->n, 50);
			p99 = hbm_percentile_sorted(E->lat, E->n, 99);
		}
		fprintf(res, "epoch %u n=%llu p50_ns=%llu p99_ns=%llu max_ns=%llu max_at_ms=%llu "
			"bad=%llu sigbus=%llu dur_ms=%llu\n", i, (unsigned long long)E->n,
			(unsigned long long)p50, (unsigned long long)p99,
			(unsigned long long)E->max_ns, (unsigned long long)(E->max_at_ns / 1000000),
			(unsigned long long)E->bad, (unsigned long long)E->sigbus,
			(unsigned long long)((E->end_ns - E->start_ns) / 1000000));
	}
	fclose(res);
	fputs(out, stdout);
	fflush(stdout);
	touch_file(dir, "result", out);

	/* Hold the region until released. */
	while (!term && !exists(dir, "release"))
		usleep(200000);
	munmap(m, size);
	close(fd);
	close(dev);
	return 0;
}
