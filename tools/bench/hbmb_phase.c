// SPDX-License-Identifier: GPL-2.0
/*
 * hbmb_phase: one phase of hbmbench, measured.  Fault phases time each first
 * touch of a page (clock_gettime around a one-byte read) on a cold region;
 * the baselines do the same amount of work without hbmpool, or without a
 * fault.  See the comment at the top of tools/hbmbench.c for what each
 * phase is.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "hbmb.h"
#include "hbmlib.h"

const char *const hbmb_phase_name[HBMB_NPHASE] = {
	"seq_fault", "seq_fault_huge", "reread", "reread_huge", "remap_huge", "seq_fault_retry",
	"rand_fault", "seq_fault_evict", "pread_hbm", "memcpy_warm", "anon_fault", "seq_fault_mt",
	"rand_fault_mt", "anon_fault_mt", "work_2x", "local_2x", "wb_k1", "wb_k2", "wb_k3", "wb_k4",
};

struct hbmb_result hbmb_res[HBMB_NPHASE];

/* Room for n more samples of ph; the pointer to the first. */
static uint64_t *lat_reserve(enum hbmb_phase ph, uint64_t n)
{
	struct hbmb_result *r = &hbmb_res[ph];

	if (r->n + n > r->cap) {
		uint64_t cap = r->cap ? r->cap : 4096;
		uint64_t *lat;

		while (cap < r->n + n)
			cap *= 2;
		lat = realloc(r->lat, cap * sizeof(*lat));
		if (!lat)
			return NULL;
		r->lat = lat;
		r->cap = cap;
	}
	return r->lat + r->n;
}

uint64_t hbmb_percentile(enum hbmb_phase ph, uint64_t from, uint64_t to, double p)
{
	uint64_t n = to - from, v, *c;

	if (!n || !hbmb_res[ph].lat)
		return 0;
	c = malloc(n * sizeof(*c));
	if (!c)
		return 0;
	memcpy(c, hbmb_res[ph].lat + from, n * sizeof(*c));
	hbm_sort_u64(c, n);
	v = hbm_percentile_sorted(c, n, p);
	free(c);
	return v;
}

uint64_t hbmb_chunk_size(const struct hbmb_ctx *c)
{
	uint64_t cs = 2ULL << 20;

	/* 2 MiB chunks unless the region is small: spread over every node. */
	while (cs > HBMB_PAGE && c->size / cs < 4 * (uint64_t)hbm_nodeset_count(&c->nodes))
		cs /= 2;
	return cs;
}

/*
 * seq_fault_huge's, reread_huge's and remap_huge's mapping of fd's size
 * bytes: MAP_SHARED without PROT_WRITE, MADV_HUGEPAGE, at a 2 MiB-aligned address,
 * so that address and region offset agree modulo 2 MiB (offset 0).  The
 * region file aligns a mapping of 2 MiB or more by itself
 * (thp_get_unmapped_area); not to depend on that, size + 2 MiB of
 * PROT_NONE anonymous memory is reserved, the region mapped MAP_FIXED at
 * the first 2 MiB boundary in it and the rest of the reservation unmapped.
 * MAP_FAILED with errno set on failure.
 */
static void *map_huge(int fd, uint64_t size)
{
	uint64_t span = size + HBMB_HUGE, lead;
	uint8_t *res, *m;
	int e;

	res = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		return MAP_FAILED;
	lead = (HBMB_HUGE - (uintptr_t)res % HBMB_HUGE) % HBMB_HUGE;
	m = mmap(res + lead, size, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
	if (m == MAP_FAILED) {
		e = errno;
		munmap(res, span);
		errno = e;
		return MAP_FAILED;
	}
	if (lead)
		munmap(res, lead);
	munmap(m + size, span - lead - size);
	if (madvise(m, size, MADV_HUGEPAGE)) {
		e = errno;
		fprintf(stderr, "hbmbench: madvise(MADV_HUGEPAGE) of a region's mapping: %s%s\n",
			strerror(e),
			e == EINVAL ? " (a kernel without transparent huge pages?)" : "");
		munmap(m, size);
		errno = e;
		return MAP_FAILED;
	}
	return m;
}

/*
 * k copies of each chunk: 1 leaves region_create.replicas 0 (any kernel).
 * huge: mapped read-only with MADV_HUGEPAGE, 2 MiB-aligned (map_huge()),
 * else read-write where mmap puts it.
 */
static int region_new_k(struct hbmb_ctx *c, uint8_t **m, struct hbmpool_region_create *rc,
			unsigned int k, int huge)
{
	int fd;

	hbm_create_init(rc, c->size, 0, HBMPOOL_POLICY_INTERLEAVE, &c->nodes, 0, "hbmbench");
	if (k > 1 && hbm_create_replicas(rc, k)) {
		fprintf(stderr, "hbmbench: replicas %u: not 1..%u\n", k, HBMPOOL_REPLICAS_MAX);
		return -EINVAL;
	}
	rc->chunk_size = hbmb_chunk_size(c);
	fd = hbm_region_create(c->dev, rc);
	if (fd >= 0) {
		*m = huge ? map_huge(fd, c->size) :
			    mmap(NULL, c->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (*m == MAP_FAILED) {
			int e = -errno;

			close(fd);
			fd = e;
		}
	}
	if (fd < 0)
		fprintf(stderr, "hbmbench: create and map %llu bytes (%u cop%s%s): %s\n",
			(unsigned long long)c->size, k, k == 1 ? "y" : "ies",
			huge ? ", read-only, MADV_HUGEPAGE" : "", strerror(-fd));
	return fd;
}

static int region_new(struct hbmb_ctx *c, uint8_t **m, struct hbmpool_region_create *rc)
{
	return region_new_k(c, m, rc, 1, 0);
}

/*
 * Private anonymous memory in 4 KiB pages (no transparent huge page: one
 * fault per page, like the region), or NULL after a message.
 */
static uint8_t *anon_new(uint64_t size)
{
	void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED) {
		perror("hbmbench: mmap anonymous");
		return NULL;
	}
	madvise(m, size, MADV_NOHUGEPAGE);
	return m;
}

/* Pages [lo, hi) of m touched by one thread, in order or in order[0..hi-lo). */
struct toucher {
	uint8_t *m;
	uint64_t lo, hi;
	const uint32_t *order;
	uint64_t *lat;		/* hi - lo samples */
	int write;		/* write a byte (anonymous: alloc + zero) instead of reading one */
	int cpu;		/* pin to it, or -1 */
	pthread_barrier_t *start;
	uint64_t t0, t1;
};

static void *touch(void *arg)
{
	struct toucher *t = arg;

	if (t->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(t->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	if (t->start)
		pthread_barrier_wait(t->start);
	t->t0 = hbm_now_ns();
	for (uint64_t i = 0; i < t->hi - t->lo; i++) {
		uint8_t *p = t->m + (t->lo + (t->order ? t->order[i] : i)) * HBMB_PAGE;
		uint64_t s = hbm_now_ns();

		if (t->write)
			*(volatile uint8_t *)p = 1;
		else
			(void)*(volatile uint8_t *)p;
		t->lat[i] = hbm_now_ns() - s;
	}
	t->t1 = hbm_now_ns();
	return NULL;
}

/*
 * First touch of every page of m by nthreads threads on disjoint contiguous
 * parts, each in order or in a random order of its part.  One thread: the
 * caller's, unpinned; more: thread i pinned to CPU i (mod the CPUs), started
 * together; the time is from the first start to the last end.
 */
static int touch_all(struct hbmb_ctx *c, enum hbmb_phase ph, uint8_t *m, int rand,
		     int write, unsigned int nthreads, struct hbmb_meas *meas)
{
	uint64_t *lat = lat_reserve(ph, c->npages);
	struct toucher t[64];
	pthread_barrier_t start;
	uint32_t *order = NULL;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t t0 = UINT64_MAX, t1 = 0;
	unsigned int i;

	if (nthreads > 64 || !lat)
		return -1;
	if (rand) {
		order = malloc(c->npages * sizeof(*order));
		if (!order)
			return -1;
	}
	if (nthreads > 1)
		pthread_barrier_init(&start, NULL, nthreads);
	for (i = 0; i < nthreads; i++) {
		t[i] = (struct toucher){
			.m = m, .lo = c->npages * i / nthreads, .hi = c->npages * (i + 1) / nthreads,
			.write = write, .cpu = nthreads > 1 && ncpu > 1 ? (int)(i % ncpu) : -1,
			.start = nthreads > 1 ? &start : NULL,
		};
		t[i].lat = lat + t[i].lo;
		if (order) {
			hbm_permutation(order + t[i].lo, t[i].hi - t[i].lo, ++c->seed);
			t[i].order = order + t[i].lo;
		}
	}
	if (nthreads == 1) {
		touch(&t[0]);
	} else {
		pthread_t tid[64];

		for (i = 0; i < nthreads; i++)
			if (pthread_create(&tid[i], NULL, touch, &t[i])) {
				fprintf(stderr, "hbmbench: cannot start thread %u\n", i);
				exit(1);	/* the others wait on the barrier */
			}
		for (i = 0; i < nthreads; i++)
			pthread_join(tid[i], NULL);
		pthread_barrier_destroy(&start);
	}
	for (i = 0; i < nthreads; i++) {
		t0 = t[i].t0 < t0 ? t[i].t0 : t0;
		t1 = t[i].t1 > t1 ? t[i].t1 : t1;
	}
	free(order);
	hbmb_res[ph].n += c->npages;
	meas->total_ns += t1 - t0;
	meas->bytes += c->size;
	return 0;
}

/*
 * One fault pass of a new cold region, which is then unmapped and closed;
 * seq_fault_huge's mapping is read-only with MADV_HUGEPAGE (map_huge()).
 */
static int cold_pass(struct hbmb_ctx *c, enum hbmb_phase ph, int rand, unsigned int nthreads,
		     struct hbmb_meas *meas)
{
	struct hbmpool_region_create rc;
	uint8_t *m;
	int fd = region_new_k(c, &m, &rc, 1, ph == SEQ_FAULT_HUGE), ret;

	if (fd < 0)
		return -1;
	ret = touch_all(c, ph, m, rand, 0, nthreads, meas);
	munmap(m, c->size);
	close(fd);
	if (ph == SEQ_FAULT_HUGE && c->mark)
		c->mark(ph);
	return ret;
}

/*
 * reread, reread_huge: a new region, every page read once (one byte, in
 * order) through its read-write mapping so that the cache holds all of it
 * in 4 KiB pages, clean, then that mapping unmapped; all untimed.  Then the
 * region mapped again and every page touched first in order, timed as
 * seq_fault: reread through a read-only mapping with MADV_NOHUGEPAGE (4 KiB
 * pages, fault-around), reread_huge through map_huge(), where the first
 * touch of a piece may gather its 512 cached pages into a PMD.
 *
 * then (reread_huge only, else NULL): remap_huge next, on the same region:
 * reread_huge's mapping unmapped, the region mapped by map_huge() again and
 * every page touched first in order, timed the same way, summed into *then.
 * The pieces reread_huge gathered stay cached whole: every one is mapped
 * by one fault, without a copy.  The region is closed after it.
 *
 * c->mark(REREAD_HUGE) after reread_huge's touch when remap_huge follows,
 * else after the region is closed; c->mark(REMAP_HUGE) after it is closed.
 */
static int reread_pass(struct hbmb_ctx *c, enum hbmb_phase ph, struct hbmb_meas *meas,
		       struct hbmb_meas *then)
{
	struct hbmpool_region_create rc;
	uint8_t *m;
	int fd = region_new(c, &m, &rc), ret;

	if (fd < 0)
		return -1;
	madvise(m, c->size, MADV_NOHUGEPAGE);	/* 4 KiB pages in the cache */
	for (uint64_t p = 0; p < c->npages; p++)
		(void)*(volatile uint8_t *)(m + p * HBMB_PAGE);
	munmap(m, c->size);
	if (ph == REREAD_HUGE) {
		m = map_huge(fd, c->size);
	} else {
		m = mmap(NULL, c->size, PROT_READ, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED)
			madvise(m, c->size, MADV_NOHUGEPAGE);
	}
	if (m == MAP_FAILED) {
		fprintf(stderr, "hbmbench: map a cached region again%s: %s\n",
			ph == REREAD_HUGE ? " (read-only, MADV_HUGEPAGE)" : "", strerror(errno));
		close(fd);
		return -1;
	}
	ret = touch_all(c, ph, m, 0, 0, 1, meas);
	munmap(m, c->size);
	if (then && !ret) {
		if (c->mark)
			c->mark(REREAD_HUGE);
		m = map_huge(fd, c->size);
		if (m == MAP_FAILED) {
			fprintf(stderr, "hbmbench: map a region cached by reread_huge again "
				"(read-only, MADV_HUGEPAGE): %s\n", strerror(errno));
			close(fd);
			return -1;
		}
		ret = touch_all(c, REMAP_HUGE, m, 0, 0, 1, then);
		munmap(m, c->size);
	}
	close(fd);
	if (ph == REREAD_HUGE && c->mark)
		c->mark(then ? REMAP_HUGE : REREAD_HUGE);
	return ret;
}

/* The fault fast path (a CPU copy under mmap_lock) on or off on every simulated node. */
static int set_nowait(struct hbmb_ctx *c, int on)
{
	for (int i = hbm_nodeset_first(&c->knobs); i >= 0; i = hbm_nodeset_next(&c->knobs, i))
		if (hbm_node_knob((unsigned int)i, "nowait_copy", (uint64_t)on))
			return -1;
	return 0;
}

static int set_budget(uint64_t pages)
{
	if (pages < 16)
		pages = 16;
	if (hbm_set_global_u64("cache_budget_pages", pages)) {
		fprintf(stderr, "hbmbench: cannot set cache_budget_pages to %llu\n",
			(unsigned long long)pages);
		return -1;
	}
	return 0;
}

/* debugfs nodeN/hbm, opened once so that the baseline times only the copy. */
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
	return pread(hbm_fd[node], buf, HBMB_PAGE, (off_t)off);
}

/* pread of the HBM bytes of a new region, 4 KiB at a time. */
static int pread_pass(struct hbmb_ctx *c, uint8_t *buf, struct hbmb_meas *meas)
{
	uint64_t *lat = lat_reserve(PREAD_HBM, c->npages), start;
	struct hbmpool_region_create rc;
	struct hbmpool_region_info ri;
	struct hbmpool_chunk_info *ch;
	uint8_t *m;
	int fd = region_new(c, &m, &rc), ret = -1;
	uint32_t nch;

	if (fd < 0)
		return -1;
	nch = (uint32_t)(c->size / rc.chunk_size + 1);
	ch = calloc(nch, sizeof(*ch));
	if (!lat || !ch || hbm_region_info(fd, &ri, ch, nch, NULL)) {
		fprintf(stderr, "hbmbench: REGION_INFO failed\n");
		goto out;
	}
	start = hbm_now_ns();
	for (uint64_t p = 0; p < c->npages; p++) {
		uint64_t off = p * HBMB_PAGE, k = off / ri.chunk_size, t0 = hbm_now_ns();

		if (hbm_read_page(ch[k].node, buf, ch[k].node_offset + off % ri.chunk_size) !=
		    (ssize_t)HBMB_PAGE) {
			fprintf(stderr, "hbmbench: pread of node%u/hbm failed\n", ch[k].node);
			goto out;
		}
		lat[p] = hbm_now_ns() - t0;
	}
	meas->total_ns += hbm_now_ns() - start;
	meas->bytes += c->size;
	hbmb_res[PREAD_HBM].n += c->npages;
	ret = 0;
out:
	free(ch);
	munmap(m, c->size);
	close(fd);
	return ret;
}

/* memcpy out of a region made warm (every page touched) before the clock starts. */
static int memcpy_pass(struct hbmb_ctx *c, uint8_t *buf, struct hbmb_meas *meas)
{
	uint64_t *lat = lat_reserve(MEMCPY_WARM, c->npages), start;
	struct hbmpool_region_create rc;
	uint8_t *m;
	int fd = region_new(c, &m, &rc);

	if (fd < 0 || !lat)
		return -1;
	for (uint64_t p = 0; p < c->npages; p++)
		(void)*(volatile uint8_t *)(m + p * HBMB_PAGE);
	start = hbm_now_ns();
	for (uint64_t p = 0; p < c->npages; p++) {
		uint64_t t0 = hbm_now_ns();

		memcpy(buf, m + p * HBMB_PAGE, HBMB_PAGE);
		__asm__ volatile("" : : "r"(buf) : "memory");
		lat[p] = hbm_now_ns() - t0;
	}
	meas->total_ns += hbm_now_ns() - start;
	meas->bytes += c->size;
	hbmb_res[MEMCPY_WARM].n += c->npages;
	munmap(m, c->size);
	close(fd);
	return 0;
}

/* Read and write one word of every cache line of a page. */
static inline void rmw_page(uint8_t *p)
{
	for (uint64_t l = 0; l < HBMB_PAGE; l += HBMB_LINE)
		(*(volatile uint64_t *)(p + l))++;
}

/* The page faults of this process so far, minor and major. */
static uint64_t faults(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt;
}

/*
 * The 2x-cache workload on m (cold, c->size bytes): every cache line read
 * and written, pages in order, then again with the pages in a random order
 * (lines in order within a page).  Only the loops are timed; the first
 * loop's time and each loop's page faults are kept apart as well.
 */
static int workload(struct hbmb_ctx *c, uint8_t *m, struct hbmb_meas *meas)
{
	uint32_t *order = malloc(c->npages * sizeof(*order));
	uint64_t start, mid, end, f0, f1;

	if (!order)
		return -1;
	hbm_permutation(order, c->npages, ++c->seed);
	f0 = faults();
	start = hbm_now_ns();
	for (uint64_t p = 0; p < c->npages; p++)
		rmw_page(m + p * HBMB_PAGE);
	mid = hbm_now_ns();
	f1 = faults();
	for (uint64_t p = 0; p < c->npages; p++)
		rmw_page(m + order[p] * HBMB_PAGE);
	end = hbm_now_ns();
	/* out of the clock: getrusage() is a system call */
	meas->random_faults += faults() - f1;
	meas->inorder_faults += f1 - f0;
	meas->inorder_ns += mid - start;
	meas->total_ns += end - start;
	meas->bytes += 2 * c->size;
	free(order);
	return 0;
}

/*
 * wb_kN: a region with k copies of each chunk, made warm (every page read,
 * so every page is fetched, from one copy, before the clock starts: the
 * fetch costs the same for any k), then the clock: every page written
 * (memset of its 4 KiB, timed per page), then REGION_SYNC of the whole
 * region, which writes every page back to every copy and returns when all
 * took it.  The cache budget holds the region, so nothing is evicted or
 * written back before the sync (except by the kernel's own flusher, if it
 * runs meanwhile: the same for every k).  Time: writes + sync; the sync
 * alone in sync_ns.
 */
static int wb_pass(struct hbmb_ctx *c, enum hbmb_phase ph, unsigned int k, struct hbmb_meas *meas)
{
	uint64_t *lat = lat_reserve(ph, c->npages), start, s0;
	struct hbmpool_region_create rc;
	struct hbmpool_range out;
	uint8_t *m;
	int fd = region_new_k(c, &m, &rc, k, 0), e;

	if (fd < 0 || !lat) {
		if (fd >= 0) {
			munmap(m, c->size);
			close(fd);
		}
		return -1;
	}
	for (uint64_t p = 0; p < c->npages; p++)
		(void)*(volatile uint8_t *)(m + p * HBMB_PAGE);
	start = hbm_now_ns();
	for (uint64_t p = 0; p < c->npages; p++) {
		uint64_t t0 = hbm_now_ns();

		memset(m + p * HBMB_PAGE, (int)(p + c->seed) | 1, HBMB_PAGE);
		lat[p] = hbm_now_ns() - t0;
	}
	s0 = hbm_now_ns();
	e = hbm_region_sync(fd, 0, c->size, &out);
	meas->sync_ns += hbm_now_ns() - s0;
	meas->total_ns += hbm_now_ns() - start;
	meas->bytes += c->size;
	hbmb_res[ph].n += c->npages;
	c->seed++;
	munmap(m, c->size);
	close(fd);
	if (e) {
		fprintf(stderr, "hbmbench: REGION_SYNC of a %u-copy region: %s\n", k, strerror(-e));
		return -1;
	}
	return 0;
}

static int one(struct hbmb_ctx *c, enum hbmb_phase ph, uint8_t *buf, struct hbmb_meas *m,
	       struct hbmb_meas *then)
{
	struct hbmpool_region_create rc;
	uint8_t *a;
	int fd, ret;

	switch (ph) {
	case SEQ_FAULT:
	case SEQ_FAULT_HUGE:
		return cold_pass(c, ph, 0, 1, m);
	case REREAD:
	case REREAD_HUGE:
		return reread_pass(c, ph, m, then);
	case RAND_FAULT:
		return cold_pass(c, ph, 1, 1, m);
	case SEQ_FAULT_MT:
		return cold_pass(c, ph, 0, c->threads, m);
	case RAND_FAULT_MT:
		return cold_pass(c, ph, 1, c->threads, m);
	case SEQ_FAULT_RETRY:
		/* The fast path off: every miss drops mmap_lock and retries. */
		if (set_nowait(c, 0))
			return -1;
		ret = cold_pass(c, ph, 0, 1, m);
		return set_nowait(c, 1) ? -1 : ret;
	case EVICT_FAULT:
		/* A working set 4 times the cache. */
		if (set_budget(c->npages / 4))
			return -1;
		ret = cold_pass(c, ph, 0, 1, m);
		return set_budget(c->budget) ? -1 : ret;
	case PREAD_HBM:
		return pread_pass(c, buf, m);
	case MEMCPY_WARM:
		return memcpy_pass(c, buf, m);
	case ANON_FAULT:
	case ANON_FAULT_MT:
		a = anon_new(c->size);
		if (!a)
			return -1;
		ret = touch_all(c, ph, a, 1, 1, ph == ANON_FAULT ? 1 : c->threads, m);
		munmap(a, c->size);
		return ret;
	case WORK_2X:
		/* A working set twice the cache. */
		if (set_budget(c->npages / 2))
			return -1;
		fd = region_new(c, &a, &rc);
		ret = fd < 0 ? -1 : workload(c, a, m);
		if (fd >= 0) {
			munmap(a, c->size);
			close(fd);
		}
		return set_budget(c->budget) ? -1 : ret;
	case LOCAL_2X:
		/* Not pre-faulted: both sides start from fresh memory. */
		a = anon_new(c->size);
		if (!a)
			return -1;
		ret = workload(c, a, m);
		munmap(a, c->size);
		return ret;
	case WB_K1:
	case WB_K2:
	case WB_K3:
	case WB_K4:
		return wb_pass(c, ph, (unsigned int)(ph - WB_K1) + 1, m);
	default:
		return -1;
	}
}

/* The end of a step of ph: its totals into the table, the step into *m. */
static void step_done(enum hbmb_phase ph, struct hbmb_meas *step, struct hbmb_meas *m)
{
	step->lat_to = hbmb_res[ph].n;
	step->ran = 1;
	hbmb_res[ph].total_ns += step->total_ns;
	hbmb_res[ph].sync_ns += step->sync_ns;
	hbmb_res[ph].bytes += step->bytes;
	hbmb_res[ph].ran = 1;
	*m = *step;
}

int hbmb_run(struct hbmb_ctx *c, enum hbmb_phase ph, struct hbmb_meas *m, struct hbmb_meas *then)
{
	static uint8_t *buf;
	struct hbmb_meas step = { .lat_from = hbmb_res[ph].n };
	struct hbmb_meas step2 = { .lat_from = hbmb_res[REMAP_HUGE].n };

	if (ph == REMAP_HUGE || (then && ph != REREAD_HUGE)) {
		fprintf(stderr, "hbmbench: remap_huge runs only right after reread_huge\n");
		return -1;
	}
	if (!buf)
		buf = aligned_alloc(HBMB_PAGE, HBMB_PAGE);
	if (!buf)
		return -1;
	for (uint64_t it = 0; it < c->iters; it++)
		if (one(c, ph, buf, &step, then ? &step2 : NULL)) {
			fprintf(stderr, "hbmbench: phase %s%s failed\n", hbmb_phase_name[ph],
				then ? " (then remap_huge)" : "");
			return -1;
		}
	step_done(ph, &step, m);
	if (then)
		step_done(REMAP_HUGE, &step2, then);
	return 0;
}
