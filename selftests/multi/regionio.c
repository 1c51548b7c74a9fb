// SPDX-License-Identifier: GPL-2.0
/*
 * regionio: write and verify a shared hbmpool region from the command line,
 * for the multi-VM tests (selftests/multi/tcp_test.sh).  Runs in a guest.
 *
 *   regionio create --name N --size S [--chunk C] [--policy P] --nodes LIST
 *                   [--preferred ID] [--replicas K] [--hold] [--pidfile F]
 *       Create a SHARED region called N (mode 0600), print "region ID".
 *       --replicas K asks for K copies of every chunk (region_create.replicas;
 *       default 0, which the kernel takes as 1; a kernel without
 *       HBMPOOL_FEAT_REPLICAS refuses K > 1 with EINVAL).  A
 *       region lives while a descriptor or mapping of it exists, so without
 *       --hold it is gone when regionio exits; with --hold regionio keeps it
 *       open (and writes its pid to F) until SIGTERM/SIGINT, so that later
 *       invocations find it with REGION_OPEN.  P: interleave (default), bind,
 *       preferred (--preferred ID, default the first node of LIST).
 *   regionio write --name N --seed X [--order O] [--threads T]
 *       Open N by name, mmap it, write the pattern of seed X on every page
 *       (pages visited in order O, split among T threads), then the SYNC
 *       ioctl (msync if the kernel lacks it).  Exit 0 if every page was
 *       written and synced.
 *   regionio verify --name N --seed X [--order O] [--threads T]
 *                   [--expect-sigbus-on NODE [--max-cached M] | --allow-sigbus]
 *       Read every page: good (the pattern of seed X), bad (other bytes;
 *       the first few mismatches are printed with their page index; a bad
 *       page whose first wrong word is 0 is also counted in "zero"), or
 *       SIGBUS (caught per page).  Prints one line
 *         "verify: pages=.. good=.. bad=.. sigbus=.. secs=.. zero=.."
 *       and exits 0 only if every page is good.  With --allow-sigbus, a
 *       page may SIGBUS (the region lost every copy there) but bad bytes
 *       still fail: exit 0 iff bad = 0.  With --expect-sigbus-on
 *       NODE, the pages of chunks whose home (REGION_INFO) is NODE must
 *       SIGBUS and all the others must be good; a page of NODE that reads
 *       back good counts as "cached" (it was still in the local cache) and
 *       up to M (default 0) of them are accepted.  Bad bytes always fail.
 *       --huge maps the region read-only with MADV_HUGEPAGE (where mmap
 *       puts it: 2 MiB aligned), so that the kernel may map whole 2 MiB
 *       pieces with a PMD (Documentation/design.rst, "Huge (PMD) mappings").
 *   regionio info --name N
 *       Region id, length, chunk size, policy, node set, cached and dirty
 *       pages, and "node K: C chunks" for every home node (the node of each
 *       chunk's first copy); then "replicas K degraded D lost L" and
 *       "copies: C/G ..." (copies and good copies of every chunk) from
 *       REGION_INFO (all 0 on a kernel without replicated regions).
 *   regionio features
 *       "features 0x.." (GET_FEATURES) and "replicas yes|no"
 *       (HBMPOOL_FEAT_REPLICAS: region_create.replicas is understood).
 *
 * Orders: seq (default), rev, rand (a permutation from the seed), stride
 * (pages 0, 17, 34, ... then 1, 18, ...).
 *
 * The pattern: the 64-bit word at region offset o is
 * hbm_pattern_word(o, mix(X)) (tools/lib/hbmlib.h), mix = splitmix64, so
 * every word depends on the seed, the page index and the word index, and
 * two seeds never give the same page.  A page of zeros is always bad.
 *
 * Exit status: 0 success, 1 check failed, 2 usage, 3 system error.
 *
 * Build: cc -std=gnu11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -I uapi
 *        -I tools/lib -o regionio selftests/multi/regionio.c
 *        tools/lib/hbmlib.c -lpthread
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <linux/hbmpool.h>

#include "hbmlib.h"

#define DEV_PATH	"/dev/" HBMPOOL_DEV_NAME
#define MAX_REPORT	8	/* mismatching pages printed */
#define STRIDE		17

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_SYS = 3 };
enum order { ORD_SEQ, ORD_REV, ORD_RAND, ORD_STRIDE };

static struct opts {
	const char *cmd;
	const char *name;
	uint64_t size, chunk, seed;
	int have_seed;
	uint32_t policy;
	int have_nodes;
	struct hbm_nodeset nodes;
	long preferred;
	int hold;
	const char *pidfile;
	enum order order;
	unsigned int threads;
	long expect_node;	/* -1: none */
	uint64_t max_cached;
	int allow_sigbus;
	int huge;
	uint32_t replicas;
} o = { .policy = HBMPOOL_POLICY_INTERLEAVE, .preferred = -1,
	.threads = 1, .expect_node = -1 };

static void usage(void)
{
	fprintf(stderr,
		"usage: regionio create --name N --size S [--chunk C] [--policy interleave|bind|preferred|weighted-interleave]\n"
		"                       --nodes LIST [--preferred ID] [--replicas K] [--hold] [--pidfile F]\n"
		"       regionio write  --name N --seed X [--order seq|rev|rand|stride] [--threads T]\n"
		"       regionio verify --name N --seed X [--order seq|rev|rand|stride] [--threads T]\n"
		"                       [--expect-sigbus-on NODE [--max-cached M] | --allow-sigbus] [--huge]\n"
		"       regionio info   --name N\n"
		"       regionio features\n");
	exit(EXIT_USAGE);
}

static void die_sys(const char *what, int err)
{
	fprintf(stderr, "regionio: %s: %s\n", what, strerror(err));
	exit(EXIT_SYS);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t num(const char *opt, const char *s, int size)
{
	uint64_t v;

	if ((size ? hbm_parse_size(s, &v) : hbm_parse_u64(s, &v)) != 0) {
		fprintf(stderr, "regionio: --%s: bad value '%s'\n", opt, s);
		usage();
	}
	return v;
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "policy", required_argument, NULL, 'p' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "preferred", required_argument, NULL, 'P' },
		{ "hold", no_argument, NULL, 'H' },
		{ "pidfile", required_argument, NULL, 'f' },
		{ "seed", required_argument, NULL, 'x' },
		{ "order", required_argument, NULL, 'o' },
		{ "threads", required_argument, NULL, 't' },
		{ "expect-sigbus-on", required_argument, NULL, 'e' },
		{ "max-cached", required_argument, NULL, 'm' },
		{ "allow-sigbus", no_argument, NULL, 'A' },
		{ "huge", no_argument, NULL, 'u' },
		{ "replicas", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	if (argc < 2)
		usage();
	o.cmd = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (!*optarg || strlen(optarg) >= HBMPOOL_NAME_LEN) {
				fprintf(stderr, "regionio: --name: 1..%d characters\n",
					HBMPOOL_NAME_LEN - 1);
				usage();
			}
			o.name = optarg;
			break;
		case 's': o.size = num("size", optarg, 1); break;
		case 'c': o.chunk = num("chunk", optarg, 1); break;
		case 'p':
			if (!strcmp(optarg, "interleave"))
				o.policy = HBMPOOL_POLICY_INTERLEAVE;
			else if (!strcmp(optarg, "bind"))
				o.policy = HBMPOOL_POLICY_BIND;
			else if (!strcmp(optarg, "preferred"))
				o.policy = HBMPOOL_POLICY_PREFERRED;
			else if (!strcmp(optarg, "weighted-interleave"))
				o.policy = HBMPOOL_POLICY_WEIGHTED_INTERLEAVE;
			else
				usage();
			break;
		case 'N':
			if (hbm_parse_nodelist(optarg, 0, HBMPOOL_MAX_NODES - 1, &o.nodes)) {
				fprintf(stderr, "regionio: --nodes: bad list '%s'\n", optarg);
				usage();
			}
			o.have_nodes = 1;
			break;
		case 'P': o.preferred = (long)num("preferred", optarg, 0); break;
		case 'H': o.hold = 1; break;
		case 'f': o.pidfile = optarg; break;
		case 'x': o.seed = num("seed", optarg, 0); o.have_seed = 1; break;
		case 'o':
			if (!strcmp(optarg, "seq"))
				o.order = ORD_SEQ;
			else if (!strcmp(optarg, "rev"))
				o.order = ORD_REV;
			else if (!strcmp(optarg, "rand"))
				o.order = ORD_RAND;
			else if (!strcmp(optarg, "stride"))
				o.order = ORD_STRIDE;
			else
				usage();
			break;
		case 't':
			o.threads = (unsigned int)num("threads", optarg, 0);
			if (o.threads < 1 || o.threads > 64)
				usage();
			break;
		case 'e':
			o.expect_node = (long)num("expect-sigbus-on", optarg, 0);
			if (o.expect_node >= HBMPOOL_MAX_NODES)
				usage();
			break;
		case 'm': o.max_cached = num("max-cached", optarg, 0); break;
		case 'A': o.allow_sigbus = 1; break;
		case 'u': o.huge = 1; break;
		case 'R': {
			uint64_t v = num("replicas", optarg, 0);

			if (v > UINT32_MAX)
				usage();
			o.replicas = (uint32_t)v;
			break;
		}
		default: usage();
		}
	}
	if (!strcmp(o.cmd, "features") && optind == argc)
		return;
	if (optind != argc || !o.name || (o.allow_sigbus && o.expect_node >= 0))
		usage();
}

/* ---- SIGBUS per page ---- */

static __thread sigjmp_buf bus_jb;
static __thread volatile sig_atomic_t bus_armed;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (!bus_armed) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	bus_armed = 0;
	siglongjmp(bus_jb, 1);
}

static void sigbus_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL))
		die_sys("sigaction", errno);
}

/* ---- the region ---- */

struct region {
	int fd;
	uint32_t id;
	uint64_t len, chunk, page, npages;
	uint32_t nr_chunks;
	uint32_t *home;		/* home node of each chunk, or NULL */
	uint32_t *copies;	/* copies of each chunk (nr_copies), or NULL */
	uint32_t *good;		/* of which good (good_copies), or NULL */
	struct hbmpool_region_info info;
	struct hbm_nodeset set;
	uint8_t *map;
};

static int dev_open(void)
{
	int fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die_sys("open " DEV_PATH, errno);
	return fd;
}

static uint64_t features(int dev, uint32_t *page)
{
	struct hbmpool_features f;

	memset(&f, 0, sizeof(f));
	f.size = sizeof(f);
	if (ioctl(dev, HBMPOOL_IOC_GET_FEATURES, &f) < 0)
		die_sys("GET_FEATURES", errno);
	if (page)
		*page = f.page_size ? f.page_size : (uint32_t)sysconf(_SC_PAGESIZE);
	return f.features;
}

static void region_info(struct region *r, int with_chunks)
{
	struct hbmpool_region_info *in = &r->info;
	struct hbmpool_chunk_info *ci = NULL;

	memset(in, 0, sizeof(*in));
	in->size = sizeof(*in);
	hbm_nodeset_zero(&r->set);
	in->nodes_ptr = (uintptr_t)r->set.w;
	in->nr_node_bits = HBM_NODESET_BITS;
	if (ioctl(r->fd, HBMPOOL_IOC_REGION_INFO, in) < 0)
		die_sys("REGION_INFO", errno);
	r->id = in->region_id;
	r->len = in->length;
	r->chunk = in->chunk_size;
	r->nr_chunks = in->nr_chunks;
	if (!with_chunks || !r->nr_chunks)
		return;
	ci = calloc(r->nr_chunks, sizeof(*ci));
	r->home = calloc(r->nr_chunks, sizeof(*r->home));
	r->copies = calloc(r->nr_chunks, sizeof(*r->copies));
	r->good = calloc(r->nr_chunks, sizeof(*r->good));
	if (!ci || !r->home || !r->copies || !r->good)
		die_sys("calloc", ENOMEM);
	memset(in, 0, sizeof(*in));
	in->size = sizeof(*in);
	in->chunks_ptr = (uintptr_t)ci;
	in->nr_chunks_max = r->nr_chunks;
	in->chunk_entry_size = sizeof(*ci);
	if (ioctl(r->fd, HBMPOOL_IOC_REGION_INFO, in) < 0)
		die_sys("REGION_INFO (chunks)", errno);
	for (uint32_t i = 0; i < r->nr_chunks; i++) {
		r->home[i] = ci[i].node;
		r->copies[i] = ci[i].nr_copies;
		r->good[i] = ci[i].good_copies;
	}
	free(ci);
}

static void region_open(struct region *r, int with_chunks, int map)
{
	struct hbmpool_region_open op;
	uint32_t page;
	int dev = dev_open();
	int fd;

	memset(r, 0, sizeof(*r));
	features(dev, &page);
	memset(&op, 0, sizeof(op));
	op.size = sizeof(op);
	snprintf(op.name, sizeof(op.name), "%s", o.name);
	fd = ioctl(dev, HBMPOOL_IOC_REGION_OPEN, &op);
	if (fd < 0) {
		int e = errno;

		fprintf(stderr, "regionio: REGION_OPEN '%s': %s%s\n", o.name, strerror(e),
			e == ENOENT ? " (no such shared region; is 'regionio create --hold' running?)" : "");
		exit(EXIT_SYS);
	}
	close(dev);
	r->fd = fd;
	r->page = page;
	region_info(r, with_chunks);
	r->npages = r->len / r->page;
	if (!map)
		return;
	r->map = mmap(NULL, r->len, o.huge ? PROT_READ : PROT_READ | PROT_WRITE,
		      MAP_SHARED, r->fd, 0);
	if (r->map == MAP_FAILED)
		die_sys("mmap", errno);
	if (o.huge && madvise(r->map, r->len, MADV_HUGEPAGE))
		die_sys("madvise(MADV_HUGEPAGE)", errno);
}

static uint32_t page_home(const struct region *r, uint64_t pg)
{
	uint64_t c = pg * r->page / r->chunk;

	return r->home && c < r->nr_chunks ? r->home[c] : UINT32_MAX;
}

/* The pages in the order asked for. */
static uint32_t *page_order(uint64_t n)
{
	uint32_t *v = malloc(n * sizeof(*v));
	uint64_t k = 0;

	if (!v)
		die_sys("malloc", ENOMEM);
	switch (o.order) {
	case ORD_SEQ:
		for (uint64_t i = 0; i < n; i++)
			v[i] = (uint32_t)i;
		break;
	case ORD_REV:
		for (uint64_t i = 0; i < n; i++)
			v[i] = (uint32_t)(n - 1 - i);
		break;
	case ORD_RAND:
		hbm_permutation(v, n, mix(o.seed ^ 0x5eedULL));
		break;
	case ORD_STRIDE:
		for (uint64_t s = 0; s < STRIDE; s++)
			for (uint64_t i = s; i < n; i += STRIDE)
				v[k++] = (uint32_t)i;
		break;
	}
	return v;
}

static const char *order_name(void)
{
	static const char *const names[] = { "seq", "rev", "rand", "stride" };

	return names[o.order];
}

/* ---- create ---- */

static volatile sig_atomic_t stop;

static int cmd_create(void)
{
	struct hbmpool_region_create rc;
	sigset_t waitmask;
	int dev, fd;

	if (!o.size || !o.have_nodes)
		usage();
	hbm_stop_signals(&stop, &waitmask);

	dev = dev_open();
	memset(&rc, 0, sizeof(rc));
	rc.size = sizeof(rc);
	rc.flags = HBMPOOL_REGION_SHARED;
	rc.length = o.size;
	rc.chunk_size = o.chunk;
	rc.nodes_ptr = (uintptr_t)o.nodes.w;
	rc.nr_node_bits = HBM_NODESET_BITS;
	rc.policy = o.policy;
	if (o.policy == HBMPOOL_POLICY_PREFERRED)
		rc.preferred_node = o.preferred >= 0 ? (uint32_t)o.preferred :
				    (uint32_t)hbm_nodeset_first(&o.nodes);
	rc.mode = 0600;
	rc.replicas = o.replicas;
	snprintf(rc.name, sizeof(rc.name), "%s", o.name);
	fd = ioctl(dev, HBMPOOL_IOC_REGION_CREATE, &rc);
	if (fd < 0) {
		int e = errno;

		if (o.replicas > 1 && !(features(dev, NULL) & HBMPOOL_FEAT_REPLICAS))
			fprintf(stderr, "regionio: the kernel lacks HBMPOOL_FEAT_REPLICAS (replicated regions)\n");
		die_sys("REGION_CREATE", e);
	}
	close(dev);
	printf("region %u\n", rc.region_id);
	fflush(stdout);
	if (!o.hold) {
		close(fd);
		return EXIT_OK;
	}
	if (o.pidfile) {
		FILE *f = fopen(o.pidfile, "w");

		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
			die_sys(o.pidfile, errno);
	}
	printf("holding %s\n", o.name);
	fflush(stdout);
	while (!stop)
		sigsuspend(&waitmask);
	close(fd);
	if (o.pidfile)
		unlink(o.pidfile);
	printf("released %s\n", o.name);
	return EXIT_OK;
}

/* ---- write / verify ---- */

struct work {
	pthread_t tid;
	const struct region *r;
	const uint32_t *pages;
	uint64_t n;
	int verify;
	uint64_t good, bad, zero, sigbus, cached, expected_sigbus, unexpected_sigbus;
};

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint reported;

static void report(const struct region *r, uint64_t pg, const char *what,
		   uint64_t woff, uint64_t got, uint64_t want)
{
	if (atomic_fetch_add(&reported, 1) >= MAX_REPORT)
		return;
	pthread_mutex_lock(&report_lock);
	if (what)
		printf("  page %llu (chunk %llu, node %u): %s\n", (unsigned long long)pg,
		       (unsigned long long)(pg * r->page / r->chunk), page_home(r, pg), what);
	else
		printf("  page %llu (chunk %llu, node %u): word at +%llu is 0x%016llx, want 0x%016llx\n",
		       (unsigned long long)pg, (unsigned long long)(pg * r->page / r->chunk),
		       page_home(r, pg), (unsigned long long)woff,
		       (unsigned long long)got, (unsigned long long)want);
	pthread_mutex_unlock(&report_lock);
}

/* 0 good, 1 bad (reported), 2 bad with a zero word first (reported), SIGBUS. */
static int do_page(struct work *w, uint64_t pg)
{
	const struct region *r = w->r;
	volatile uint64_t *p = (volatile uint64_t *)(r->map + pg * r->page);
	uint64_t base = pg * r->page, seed = mix(o.seed);
	uint64_t nw = r->page / 8;

	if (sigsetjmp(bus_jb, 1))
		return SIGBUS;
	bus_armed = 1;
	if (!w->verify) {
		for (uint64_t i = 0; i < nw; i++)
			p[i] = hbm_pattern_word(base + 8 * i, seed);
		bus_armed = 0;
		return 0;
	}
	for (uint64_t i = 0; i < nw; i++) {
		uint64_t want = hbm_pattern_word(base + 8 * i, seed), got = p[i];

		if (got != want) {
			bus_armed = 0;
			report(r, pg, NULL, 8 * i, got, want);
			return got ? 1 : 2;
		}
	}
	bus_armed = 0;
	return 0;
}

static void *worker(void *arg)
{
	struct work *w = arg;

	for (uint64_t i = 0; i < w->n; i++) {
		uint64_t pg = w->pages[i];
		int on_node = o.expect_node >= 0 && page_home(w->r, pg) == (uint32_t)o.expect_node;
		int res = do_page(w, pg);

		if (res == SIGBUS) {
			w->sigbus++;
			if (on_node) {
				w->expected_sigbus++;
			} else {
				w->unexpected_sigbus++;
				report(w->r, pg, "SIGBUS", 0, 0, 0);
			}
		} else if (res) {
			w->bad++;
			if (res == 2)
				w->zero++;
		} else if (on_node) {
			w->cached++;
			w->good++;
		} else {
			w->good++;
		}
	}
	return NULL;
}

static int cmd_io(int verify)
{
	struct region r;
	struct work *ws, tot;
	uint32_t *pages;
	uint64_t per, off = 0;
	double t0;
	int ok;

	if (!o.have_seed || (!verify && (o.expect_node >= 0 || o.huge)))
		usage();
	region_open(&r, 1, 1);
	sigbus_install();
	pages = page_order(r.npages);
	ws = calloc(o.threads, sizeof(*ws));
	if (!ws)
		die_sys("calloc", ENOMEM);
	per = (r.npages + o.threads - 1) / o.threads;
	t0 = now();
	for (unsigned int t = 0; t < o.threads; t++) {
		struct work *w = &ws[t];

		w->r = &r;
		w->verify = verify;
		w->pages = pages + off;
		w->n = off < r.npages ? (r.npages - off < per ? r.npages - off : per) : 0;
		off += w->n;
		if (o.threads == 1) {
			worker(w);
			continue;
		}
		errno = pthread_create(&w->tid, NULL, worker, w);
		if (errno)
			die_sys("pthread_create", errno);
	}
	memset(&tot, 0, sizeof(tot));
	for (unsigned int t = 0; t < o.threads; t++) {
		struct work *w = &ws[t];

		if (o.threads > 1)
			pthread_join(w->tid, NULL);
		tot.good += w->good;
		tot.bad += w->bad;
		tot.zero += w->zero;
		tot.sigbus += w->sigbus;
		tot.cached += w->cached;
		tot.expected_sigbus += w->expected_sigbus;
		tot.unexpected_sigbus += w->unexpected_sigbus;
	}

	if (!verify) {
		struct hbmpool_range rg;
		int dev = dev_open();
		int sync_err = 0;
		uint64_t failed = 0, done = 0;

		if (features(dev, NULL) & HBMPOOL_FEAT_REGION_SYNC) {
			memset(&rg, 0, sizeof(rg));
			rg.size = sizeof(rg);
			if (ioctl(r.fd, HBMPOOL_IOC_REGION_SYNC, &rg) < 0)
				sync_err = errno;
			done = rg.pages_done;
			failed = rg.pages_failed;
		} else if (msync(r.map, r.len, MS_SYNC)) {
			sync_err = errno;
		}
		close(dev);
		ok = !tot.sigbus && !sync_err && !failed;
		printf("write: region=%u name=%s seed=%llu order=%s threads=%u pages=%llu written=%llu sigbus=%llu synced=%llu sync_failed=%llu sync=%s secs=%.2f\n",
		       r.id, o.name, (unsigned long long)o.seed, order_name(), o.threads,
		       (unsigned long long)r.npages, (unsigned long long)tot.good,
		       (unsigned long long)tot.sigbus, (unsigned long long)done,
		       (unsigned long long)failed, sync_err ? strerror(sync_err) : "ok",
		       now() - t0);
		return ok ? EXIT_OK : EXIT_FAIL;
	}

	if (o.expect_node < 0) {
		/* --allow-sigbus: every page good or SIGBUS, none bad */
		ok = o.allow_sigbus ? !tot.bad && tot.good + tot.sigbus == r.npages :
				      tot.good == r.npages;
		printf("verify: region=%u name=%s seed=%llu order=%s pages=%llu good=%llu bad=%llu sigbus=%llu secs=%.2f zero=%llu%s%s\n",
		       r.id, o.name, (unsigned long long)o.seed, order_name(),
		       (unsigned long long)r.npages, (unsigned long long)tot.good,
		       (unsigned long long)tot.bad, (unsigned long long)tot.sigbus,
		       now() - t0, (unsigned long long)tot.zero,
		       o.allow_sigbus ? " allow-sigbus" : "", ok ? "" : " FAIL");
	} else {
		/* Pages of the node: SIGBUS, or good if still cached (up to max_cached). */
		ok = !tot.bad && !tot.unexpected_sigbus && tot.cached <= o.max_cached &&
		     tot.good + tot.expected_sigbus == r.npages;
		printf("verify: region=%u name=%s seed=%llu order=%s pages=%llu good=%llu bad=%llu sigbus=%llu expect-sigbus-on=%ld expected_sigbus=%llu unexpected_sigbus=%llu cached=%llu secs=%.2f zero=%llu%s\n",
		       r.id, o.name, (unsigned long long)o.seed, order_name(),
		       (unsigned long long)r.npages, (unsigned long long)tot.good,
		       (unsigned long long)tot.bad, (unsigned long long)tot.sigbus,
		       o.expect_node, (unsigned long long)tot.expected_sigbus,
		       (unsigned long long)tot.unexpected_sigbus,
		       (unsigned long long)tot.cached, now() - t0,
		       (unsigned long long)tot.zero, ok ? "" : " FAIL");
	}
	return ok ? EXIT_OK : EXIT_FAIL;
}

/* ---- info ---- */

static const char *policy_name(uint32_t p)
{
	switch (p) {
	case HBMPOOL_POLICY_BIND: return "bind";
	case HBMPOOL_POLICY_INTERLEAVE: return "interleave";
	case HBMPOOL_POLICY_PREFERRED: return "preferred";
	case HBMPOOL_POLICY_WEIGHTED_INTERLEAVE: return "weighted-interleave";
	}
	return "?";
}

static int cmd_info(void)
{
	struct region r;
	char buf[256];
	uint32_t *count;

	region_open(&r, 1, 0);
	printf("region %u name %s length %llu chunk %llu chunks %u policy %s nodes %s cached %llu dirty %llu\n",
	       r.id, r.info.name, (unsigned long long)r.len, (unsigned long long)r.chunk,
	       r.nr_chunks, policy_name(r.info.policy),
	       hbm_nodeset_format(&r.set, buf, sizeof(buf)),
	       (unsigned long long)r.info.cached_pages, (unsigned long long)r.info.dirty_pages);
	count = calloc(HBMPOOL_MAX_NODES, sizeof(*count));
	if (!count)
		die_sys("calloc", ENOMEM);
	for (uint32_t i = 0; i < r.nr_chunks; i++)
		if (r.home[i] < HBMPOOL_MAX_NODES)
			count[r.home[i]]++;
	for (unsigned int n = 0; n < HBMPOOL_MAX_NODES; n++)
		if (count[n])
			printf("node %u: %u chunks\n", n, count[n]);
	free(count);
	printf("replicas %u degraded %u lost %u\n", r.info.replicas,
	       r.info.degraded_chunks, r.info.lost_chunks);
	printf("copies:");
	for (uint32_t i = 0; i < r.nr_chunks; i++)
		printf(" %u/%u", r.copies[i], r.good[i]);
	printf("\n");
	return EXIT_OK;
}

static int cmd_features(void)
{
	int dev = dev_open();
	uint64_t f = features(dev, NULL);

	close(dev);
	printf("features 0x%llx\nreplicas %s\n", (unsigned long long)f,
	       f & HBMPOOL_FEAT_REPLICAS ? "yes" : "no");
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv);
	if (!strcmp(o.cmd, "create"))
		return cmd_create();
	if (!strcmp(o.cmd, "write"))
		return cmd_io(0);
	if (!strcmp(o.cmd, "verify"))
		return cmd_io(1);
	if (!strcmp(o.cmd, "info"))
		return cmd_info();
	if (!strcmp(o.cmd, "features"))
		return cmd_features();
	usage();
	return EXIT_USAGE;
}
