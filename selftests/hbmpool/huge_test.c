// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpool huge mappings: a read fault in a read-only MAP_SHARED mapping with
 * MADV_HUGEPAGE, whose address agrees with the region offset modulo 2 MiB
 * and which covers the whole 2 MiB piece, in a region of 2 MiB chunks on a
 * node that copies without waiting, fetches the piece into one compound page
 * (a huge entry, always clean) and maps it with one PMD; a piece cached
 * whole in 4 KiB pages, clean and unmapped, is gathered into one instead
 * ("collapsed"), and one in use, dirty or partly cached is not; on a node
 * whose copies wait, a piece is fetched whole in 4 KiB pages, then gathered.
 * Whatever needs 4 KiB pages of the piece drops the entry first: a write
 * fault through any mapping, a read fault through a mapping that cannot
 * take a PMD, the loss of the node; eviction drops whole entries for room;
 * the huge_mappings parameter turns creation off.  Data is checked byte for
 * byte everywhere.
 *
 * The counters are debugfs hbmpool/huge ("created", "collapsed", "fetched",
 * "ahead", "mapped", "dropped", "evicted", "released", "alloc_failed",
 * "live", and the free 2 MiB pages "pooled" and "pool_recycled"): global and cumulative, so every check compares deltas, and while
 * a test's region is open live moves by exactly created + collapsed -
 * dropped - evicted.
 *
 * Known data at the home: a pattern written through the fixture's writable
 * mapping and synced; the mapping is then unmapped and the region's cache
 * emptied (a 16-page budget, as the other tests do, then drop_caches for the
 * last clean pages), so that every piece is first read from the home.
 *
 * A piece is fetched whole into an entry by a no-wait copy: the fixture
 * sets nowait_copy=1 on its node in both builds (hbmt_env_node() clears it
 * in the -ubsan build, see ../Makefile).  From a node whose copies wait
 * (latency_us, nowait_copy=0: as over TCP), a piece is fetched whole in
 * 4 KiB pages, then gathered ("fetched", "ahead"): the slow_node tests.
 * Every mapping that should take PMDs is placed explicitly (a PROT_NONE
 * reservation, then MAP_FIXED at a 2 MiB boundary); huge_read_maps_pmd also
 * checks that a plain mmap() of the region is 2 MiB aligned.
 *
 * Node 86 belongs to this binary.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/kernel-page-flags.h>

#include "kselftest_harness.h"
#include "hbmtest.h"

#define N_H		86		/* 32 MiB, distance 20 */
#define CAP_MIB		32
#define BUDGET		8192ULL		/* pages: 32 MiB, no eviction unless a test lowers it */
#define HUGE		(2 * HBMT_MIB)	/* a piece: one PMD, one default chunk */
#define HPAGES		(HUGE / HBMT_PAGE)
#define MAX_MAPS	4
#define HUGE_PARAM	"/sys/module/hbmpool/parameters/huge_mappings"
#define HUGE_DEBUGFS	HBM_DEBUGFS "/huge"
#define THP_SYSFS	"/sys/kernel/mm/transparent_hugepage"
#define ANY		(-1LL)		/* expect_huge(): any count */

FIXTURE(huge)
{
	struct hbmt_env env;
	struct hbmt_region r;
	char old_param[8];
	uint8_t *maps[MAX_MAPS];	/* the test's own mappings, unmapped at teardown */
	uint64_t map_len[MAX_MAPS];
};

/*
 * Huge mappings need a kernel with transparent huge pages, and the counters
 * need debugfs: without them the whole binary is skipped (kselftest exit 4).
 * A module without huge mappings fails in the fixture instead: it ships
 * with this test.
 */
static void __attribute__((constructor)) huge_require_env(void)
{
	const char *why;
	struct stat st;

	if (hbmt_env_missing())
		return;		/* hbmt_require_env() skips, saying why */
	if (stat(THP_SYSFS, &st))
		why = "a kernel without transparent huge pages (no " THP_SYSFS ")";
	else
		why = hbmt_debugfs_missing();
	if (why) {
		ksft_print_header();
		ksft_exit_skip("%s\n", why);
	}
}

FIXTURE_SETUP(huge)
{
	hbmt_env_setup(_metadata, &self->env, BUDGET, 5000);
	ASSERT_EQ(0, hbm_read_str(HUGE_PARAM, self->old_param, sizeof(self->old_param)))
		TH_LOG("%s: the module has no huge mappings", HUGE_PARAM);
	ASSERT_EQ(0, hbm_write_str(HUGE_PARAM, "Y"));
	hbmt_env_node(_metadata, &self->env, N_H, CAP_MIB, 20, NULL);
	ASSERT_EQ(0, hbm_node_knob(N_H, "nowait_copy", 1));
	/* room for order-9 pages: an allocation failure is not what is tested */
	hbm_write_str("/proc/sys/vm/compact_memory", "1");
}

FIXTURE_TEARDOWN(huge)
{
	for (int i = 0; i < MAX_MAPS; i++)
		if (self->maps[i])
			munmap(self->maps[i], self->map_len[i]);
	hbmt_region_close(&self->r);
	if (self->old_param[0])
		EXPECT_EQ(0, hbm_write_str(HUGE_PARAM, self->old_param));
	hbmt_env_teardown(_metadata, &self->env);
}

/* ---- the counters ---- */

struct huge_ctr {
	uint64_t created, collapsed, fetched, ahead, mapped, dropped, evicted, released,
		 alloc_failed, live, pooled, pool_recycled;
};

static const struct {
	const char *name;
	size_t off;
} huge_fields[] = {
	{ "created", offsetof(struct huge_ctr, created) },
	{ "collapsed", offsetof(struct huge_ctr, collapsed) },
	{ "fetched", offsetof(struct huge_ctr, fetched) },
	{ "ahead", offsetof(struct huge_ctr, ahead) },
	{ "mapped", offsetof(struct huge_ctr, mapped) },
	{ "dropped", offsetof(struct huge_ctr, dropped) },
	{ "evicted", offsetof(struct huge_ctr, evicted) },
	{ "released", offsetof(struct huge_ctr, released) },
	{ "alloc_failed", offsetof(struct huge_ctr, alloc_failed) },
	{ "live", offsetof(struct huge_ctr, live) },
	{ "pooled", offsetof(struct huge_ctr, pooled) },
	{ "pool_recycled", offsetof(struct huge_ctr, pool_recycled) },
};

#define NR_FIELDS	(sizeof(huge_fields) / sizeof(huge_fields[0]))

/* debugfs hbmpool/huge into *h: 0, -errno, or -EPROTO if a line is missing. */
static int huge_read(struct huge_ctr *h)
{
	char line[128], name[64];
	unsigned long long v;
	unsigned int seen = 0;
	FILE *f = fopen(HUGE_DEBUGFS, "re");

	if (!f)
		return -errno;
	memset(h, 0, sizeof(*h));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %llu", name, &v) != 2)
			continue;
		for (unsigned int i = 0; i < NR_FIELDS; i++) {
			if (!strcmp(name, huge_fields[i].name)) {
				*(uint64_t *)((char *)h + huge_fields[i].off) = v;
				seen |= 1U << i;
			}
		}
	}
	fclose(f);
	return seen == (1U << NR_FIELDS) - 1 ? 0 : -EPROTO;
}

static void huge_snap(struct __test_metadata *_metadata, struct huge_ctr *h)
{
	int ret = huge_read(h);

	ASSERT_EQ(0, ret) TH_LOG("%s: %s (want the lines created, collapsed, fetched, ahead, mapped, dropped, evicted, released, alloc_failed, live, pooled, pool_recycled)",
				 HUGE_DEBUGFS, strerror(-ret));
}

/* Polls until live is @want (at most 5 s); the last read in *h. */
static int wait_live(struct huge_ctr *h, uint64_t want)
{
	for (int t = 0; t < 5000; t += 20) {
		int ret = huge_read(h);

		if (ret)
			return ret;
		if (h->live == want)
			return 0;
		hbmt_sleep_ms(20);
	}
	return -ETIMEDOUT;
}

static int moved_ok(long long want, uint64_t got)
{
	return want == ANY || (uint64_t)want == got;
}

/*
 * Since the snapshot *h: entries created (fetched whole) and collapsed
 * (gathered from cached 4 KiB pages), PMDs mapped, entries dropped and
 * evicted moved by exactly these counts (ANY: any), none was released, and
 * live moved by created + collapsed - dropped - evicted.  One diagnostic
 * line with every delta on a mismatch; *h becomes the new snapshot.
 */
static void expect_counts(struct __test_metadata *_metadata, const char *what,
			  struct huge_ctr *h, long long created, long long collapsed,
			  long long mapped, long long dropped, long long evicted)
{
	struct huge_ctr n;
	uint64_t c, g, m, d, e;
	int ok;

	huge_snap(_metadata, &n);
	c = n.created - h->created;
	g = n.collapsed - h->collapsed;
	m = n.mapped - h->mapped;
	d = n.dropped - h->dropped;
	e = n.evicted - h->evicted;
	ok = moved_ok(created, c) && moved_ok(collapsed, g) && moved_ok(mapped, m) &&
	     moved_ok(dropped, d) && moved_ok(evicted, e) && n.released == h->released &&
	     n.live - h->live == c + g - d - e;
	EXPECT_TRUE(ok) TH_LOG("%s: created +%llu (want %lld), collapsed +%llu (want %lld), mapped +%llu (want %lld), dropped +%llu (want %lld), evicted +%llu (want %lld), released +%llu (want 0), alloc_failed +%llu, live %llu -> %llu (want created + collapsed - dropped - evicted); -1 is any",
			       what, (unsigned long long)c, created, (unsigned long long)g, collapsed,
			       (unsigned long long)m, mapped,
			       (unsigned long long)d, dropped, (unsigned long long)e, evicted,
			       (unsigned long long)(n.released - h->released),
			       (unsigned long long)(n.alloc_failed - h->alloc_failed),
			       (unsigned long long)h->live, (unsigned long long)n.live);
	*h = n;
}

/* expect_counts() of a step that gathers no piece. */
static void expect_huge(struct __test_metadata *_metadata, const char *what,
			struct huge_ctr *h, long long created, long long mapped,
			long long dropped, long long evicted)
{
	expect_counts(_metadata, what, h, created, 0, mapped, dropped, evicted);
}

/* ---- regions, mappings, data ---- */

static void track(FIXTURE_DATA(huge) *self, uint8_t *m, uint64_t len)
{
	for (int i = 0; i < MAX_MAPS; i++) {
		if (!self->maps[i]) {
			self->maps[i] = m;
			self->map_len[i] = len;
			return;
		}
	}
	abort();	/* more mappings than MAX_MAPS: a bug of this file */
}

static int unmap(FIXTURE_DATA(huge) *self, uint8_t *m)
{
	for (int i = 0; i < MAX_MAPS; i++) {
		if (self->maps[i] == m) {
			self->maps[i] = NULL;
			return munmap(m, self->map_len[i]);
		}
	}
	return -1;
}

/*
 * mmap @len bytes of the region from @off, MAP_SHARED with @prot, at an
 * address that agrees with @off modulo 2 MiB, plus @skew: whatever the
 * region file's get_unmapped_area chooses, a PROT_NONE reservation three
 * pieces larger is taken, the region mapped over it with MAP_FIXED and the
 * rest given back.
 */
static uint8_t *map_at(FIXTURE_DATA(huge) *self, uint64_t off, uint64_t len, int prot,
		       uint64_t skew)
{
	uint64_t span = len + 3 * HUGE;
	uint8_t *res, *a, *m;

	res = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		return MAP_FAILED;
	a = (uint8_t *)(((uintptr_t)res + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	a += (off & (HUGE - 1)) + skew;
	m = mmap(a, len, prot, MAP_SHARED | MAP_FIXED, self->r.fd, (off_t)off);
	if (m == MAP_FAILED) {
		int e = errno;

		munmap(res, span);
		errno = e;
		return MAP_FAILED;
	}
	if (a > res)
		munmap(res, a - res);
	munmap(a + len, res + span - (a + len));
	track(self, m, len);
	return m;
}

/* map_at() with an error check, then madvise(@advice) unless it is -1. */
static uint8_t *map_checked(struct __test_metadata *_metadata, FIXTURE_DATA(huge) *self,
			    uint64_t off, uint64_t len, int prot, uint64_t skew, int advice)
{
	uint8_t *m = map_at(self, off, len, prot, skew);

	ASSERT_NE(MAP_FAILED, m) TH_LOG("mmap of %llu bytes from %llu: %s",
					(unsigned long long)len, (unsigned long long)off,
					strerror(errno));
	if (advice >= 0)
		ASSERT_EQ(0, madvise(m, len, advice)) TH_LOG("madvise(%d): %s", advice,
							      strerror(errno));
	return m;
}

/* A mapping that qualifies: read-only, MADV_HUGEPAGE, 2 MiB aligned. */
static uint8_t *map_huge(struct __test_metadata *_metadata, FIXTURE_DATA(huge) *self,
			 uint64_t off, uint64_t len)
{
	return map_checked(_metadata, self, off, len, PROT_READ, 0, MADV_HUGEPAGE);
}

/* The region's cached pages (fdinfo), UINT64_MAX if unreadable. */
static uint64_t region_cached(FIXTURE_DATA(huge) *self)
{
	uint64_t v = UINT64_MAX;

	hbm_fdinfo_u64(self->r.fd, "cached_pages", &v);
	return v;
}

/*
 * A region of @len bytes with @chunk (0: the default, 2 MiB) on N_H whose
 * home holds @seed's pattern and of which nothing is cached or mapped: the
 * pattern goes through the fixture's writable mapping, is synced, the
 * mapping goes, and the cache is emptied.
 */
static void open_region(struct __test_metadata *_metadata, FIXTURE_DATA(huge) *self,
			uint64_t len, uint64_t chunk, uint64_t seed, const char *name)
{
	uint64_t v = 0;
	int ret;

	ret = hbmt_region_open(&self->r, self->env.devfd, len, chunk, HBMPOOL_POLICY_BIND,
			       HBM_NODES(N_H), 0, name);
	ASSERT_EQ(0, ret) TH_LOG("create %s (%llu bytes): %s", name, (unsigned long long)len,
				 strerror(-ret));
	hbm_pattern_fill(self->r.map, len, 0, seed);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	ASSERT_EQ(0, munmap(self->r.map, len));
	self->r.map = NULL;
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", 16));
	ASSERT_EQ(0, hbmt_wait_global("cached_pages", HBMT_LE, 16, 5000, &v))
		TH_LOG("cached_pages %llu", (unsigned long long)v);
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", BUDGET));
	for (int i = 0; i < 20 && region_cached(self); i++)
		ASSERT_EQ(0, hbm_write_str("/proc/sys/vm/drop_caches", "2"));
	ASSERT_EQ(0, region_cached(self))
		TH_LOG("pages of the region still cached after sync, munmap and drop_caches");
}

/*
 * Region bytes [@off, @off + @len), read through @m (which maps the region
 * from @m_off), hold @seed's pattern.  Logs the first bad byte.
 */
static int data_ok(struct __test_metadata *_metadata, const uint8_t *m, uint64_t m_off,
		   uint64_t off, uint64_t len, uint64_t seed, const char *what)
{
	uint64_t first = 0;
	size_t bad = hbm_pattern_check(m + (off - m_off), len, off, seed, &first);

	EXPECT_EQ(0, bad) TH_LOG("%s: %zu wrong bytes in [%#llx, %#llx), the first at offset %#llx",
				 what, bad, (unsigned long long)off,
				 (unsigned long long)(off + len), (unsigned long long)first);
	return !bad;
}

/* @len bytes at @m (region offset 0) equal @want; logs the first difference. */
static int model_ok(struct __test_metadata *_metadata, const volatile uint8_t *m,
		    const uint8_t *want, uint64_t len, const char *what)
{
	uint64_t bad = 0, first = 0;

	for (uint64_t i = 0; i < len; i++) {
		if (m[i] != want[i] && !bad++)
			first = i;
	}
	EXPECT_EQ(0, bad) TH_LOG("%s: %llu wrong bytes, the first at offset %#llx (%#x, want %#x)",
				 what, (unsigned long long)bad, (unsigned long long)first,
				 bad ? m[first] : 0, bad ? want[first] : 0);
	return !bad;
}

/* ---- how the pages are mapped ---- */

#define PM_PRESENT	(1ULL << 63)
#define PM_PFN		((1ULL << 55) - 1)

/* Formats into @why and returns it. */
static const char * __attribute__((format(printf, 3, 4)))
whyf(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return why;
}

/*
 * The piece mapped at @addr, touched, is one compound page mapped in order:
 * its 512 pages present at consecutive PFNs from a 512-aligned one
 * (/proc/self/pagemap), the first a compound head and the others tails
 * (/proc/kpageflags).  Root only.  NULL, or what is wrong (in @why).
 */
static const char *piece_compound(const uint8_t *addr, char *why, size_t size)
{
	static uint64_t pm[HPAGES], kf[HPAGES];
	uint64_t pfn0;
	ssize_t n;
	int fd;

	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return whyf(why, size, "pagemap: %s", strerror(errno));
	n = pread(fd, pm, sizeof(pm), (off_t)((uintptr_t)addr / HBMT_PAGE * 8));
	close(fd);
	if (n != (ssize_t)sizeof(pm))
		return whyf(why, size, "pagemap: read %zd bytes", n);
	pfn0 = pm[0] & PM_PFN;
	for (unsigned int i = 0; i < HPAGES; i++) {
		if (!(pm[i] & PM_PRESENT))
			return whyf(why, size, "page %u not present", i);
		if ((pm[i] & PM_PFN) != pfn0 + i)
			return whyf(why, size, "page %u at PFN %#llx, page 0 at %#llx: not in order",
				    i, (unsigned long long)(pm[i] & PM_PFN),
				    (unsigned long long)pfn0);
	}
	if (!pfn0)
		return whyf(why, size, "pagemap shows no PFN (not CAP_SYS_ADMIN?)");
	if (pfn0 % HPAGES)
		return whyf(why, size, "first PFN %#llx is not 512-aligned",
			    (unsigned long long)pfn0);
	fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return whyf(why, size, "kpageflags: %s", strerror(errno));
	n = pread(fd, kf, sizeof(kf), (off_t)(pfn0 * 8));
	close(fd);
	if (n != (ssize_t)sizeof(kf))
		return whyf(why, size, "kpageflags: read %zd bytes", n);
	if (!(kf[0] & (1ULL << KPF_COMPOUND_HEAD)))
		return whyf(why, size, "PFN %#llx is not a compound head (flags %#llx)",
			    (unsigned long long)pfn0, (unsigned long long)kf[0]);
	for (unsigned int i = 1; i < HPAGES; i++) {
		if (!(kf[i] & (1ULL << KPF_COMPOUND_TAIL)))
			return whyf(why, size, "PFN %#llx is not a compound tail (flags %#llx)",
				    (unsigned long long)(pfn0 + i),
				    (unsigned long long)kf[i]);
	}
	return NULL;
}

/*
 * kB of the mapping that starts at @addr mapped by PMDs (its smaps
 * FilePmdMapped + ShmemPmdMapped), or -errno.
 */
static long long smaps_pmd_kb(const void *addr)
{
	unsigned long start, end;
	long long kb = -ENOENT, v;
	char line[256];
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			in = start == (uintptr_t)addr;
			if (in)
				kb = 0;
			continue;
		}
		if (in && (sscanf(line, "FilePmdMapped: %lld kB", &v) == 1 ||
			   sscanf(line, "ShmemPmdMapped: %lld kB", &v) == 1))
			kb += v;
	}
	fclose(f);
	return kb;
}

/* ---- huge entries made and mapped ---- */

/* Every piece of [0, @len) through @m is mapped with a PMD, each a compound page. */
static void expect_pmds(struct __test_metadata *_metadata, const uint8_t *m, uint64_t len)
{
	long long kb = smaps_pmd_kb(m);
	const char *bad;
	char why[160];

	EXPECT_EQ((long long)(len >> 10), kb) TH_LOG("smaps: %lld kB of the mapping mapped by PMDs",
						      kb);
	for (uint64_t p = 0; p < len / HUGE; p++) {
		bad = piece_compound(m + p * HUGE, why, sizeof(why));
		EXPECT_TRUE(bad == NULL) TH_LOG("piece %llu: %s", (unsigned long long)p, bad);
	}
}

/* 8 MiB read through a huge mapping: exact data, one entry created and one PMD mapped per piece: smaps counts 8 MiB mapped by PMDs, pagemap and kpageflags show each piece as one compound page of 512 pages in order; a second pass takes no fault.  A plain mmap() of the region is 2 MiB aligned. */
TEST_F(huge, huge_read_maps_pmd)
{
	const uint64_t len = 4 * HUGE, seed = 0x101;
	struct huge_ctr h, h0;
	uint8_t *m;

	open_region(_metadata, self, len, 0, seed, "read");
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, self->r.fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(0, (uintptr_t)m & (HUGE - 1))
		TH_LOG("mmap(NULL, 8 MiB) of the region at %p: not 2 MiB aligned (thp_get_unmapped_area)",
		       m);
	ASSERT_EQ(0, munmap(m, len));

	huge_snap(_metadata, &h);
	h0 = h;
	m = map_huge(_metadata, self, 0, len);
	for (uint64_t p = 0; p < 4; p++)
		data_ok(_metadata, m, 0, p * HUGE, HUGE, seed, "first read");
	expect_huge(_metadata, "4 pieces read", &h, 4, 4, 0, 0);
	EXPECT_EQ(0, h.alloc_failed - h0.alloc_failed) TH_LOG("order-9 allocations failed");
	expect_pmds(_metadata, m, len);
	for (uint64_t p = 0; p < 4; p++)
		data_ok(_metadata, m, 0, p * HUGE, HUGE, seed, "second read");
	expect_huge(_metadata, "read again: mapped already", &h, 0, 0, 0, 0);
}

/* A mapping that covers 1.5 pieces: the whole piece is huge, the half one is not; data exact. */
TEST_F(huge, no_huge_partial_piece)
{
	const uint64_t len = 2 * HUGE, seed = 0x102;
	struct huge_ctr h;
	uint8_t *m;

	open_region(_metadata, self, len, 0, seed, "partial");
	huge_snap(_metadata, &h);
	m = map_huge(_metadata, self, 0, HUGE + HUGE / 2);
	data_ok(_metadata, m, 0, 0, HUGE + HUGE / 2, seed, "1.5 pieces");
	expect_huge(_metadata, "a mapping of 1.5 pieces read", &h, 1, 1, 0, 0);
}

/* ---- mappings, regions and nodes that take no huge entry ---- */

/*
 * The no_huge_* tests read piece 0 in a way that must make no entry, then, as
 * a control, piece 2 (CTRL) in a way that must make one: the region and the
 * node could have had them.  Piece 1 is left alone: the 4 KiB path's
 * read-ahead may run from the end of a chunk into the next one, and a piece
 * with a 4 KiB page cached is never cached whole.
 */
#define NO_HUGE_LEN	(3 * HUGE)
#define CTRL		(2 * HUGE)

/* The control: piece 2 read through @m (which maps the region from 0; NULL: a new mapping of piece 2 that qualifies) makes one entry. */
static void control(struct __test_metadata *_metadata, FIXTURE_DATA(huge) *self,
		    const uint8_t *m, uint64_t seed, struct huge_ctr *h)
{
	uint64_t m_off = 0;

	if (!m) {
		m_off = CTRL;
		m = map_huge(_metadata, self, m_off, HUGE);
	}
	data_ok(_metadata, m, m_off, CTRL, HUGE, seed, "piece 2 (control)");
	expect_huge(_metadata, "control: piece 2 read through a mapping that qualifies", h,
		    1, 1, 0, 0);
}

/*
 * A region of NO_HUGE_LEN with known data, and a mapping of @len bytes from
 * 0 (@prot, @skew and @advice as for map_checked()) through which piece 0
 * reads exact and makes no entry: the mapping, for the control.
 */
static uint8_t *no_huge_read(struct __test_metadata *_metadata, FIXTURE_DATA(huge) *self,
			     struct huge_ctr *h, uint64_t seed, const char *name, uint64_t len,
			     int prot, uint64_t skew, int advice, const char *what)
{
	uint8_t *m;

	open_region(_metadata, self, NO_HUGE_LEN, 0, seed, name);
	huge_snap(_metadata, h);
	m = map_checked(_metadata, self, 0, len, prot, skew, advice);
	data_ok(_metadata, m, 0, 0, HUGE, seed, "piece 0");
	expect_huge(_metadata, what, h, 0, 0, 0, 0);
	return m;
}

/* Without MADV_HUGEPAGE: piece 0 reads exact, no entry; after madvise(MADV_HUGEPAGE) the same mapping makes one of piece 2. */
TEST_F(huge, no_huge_without_madvise)
{
	struct huge_ctr h;
	uint8_t *m = no_huge_read(_metadata, self, &h, 0x201, "nomadv", NO_HUGE_LEN, PROT_READ,
				  0, -1, "piece 0 read without MADV_HUGEPAGE");

	ASSERT_EQ(0, madvise(m, NO_HUGE_LEN, MADV_HUGEPAGE));
	control(_metadata, self, m, 0x201, &h);
}

/* A writable mapping (read only, with MADV_HUGEPAGE): no entry, data exact. */
TEST_F(huge, no_huge_writable)
{
	struct huge_ctr h;

	no_huge_read(_metadata, self, &h, 0x202, "writable", HUGE, PROT_READ | PROT_WRITE, 0,
		     MADV_HUGEPAGE, "piece 0 read through a writable mapping");
	control(_metadata, self, NULL, 0x202, &h);
}

/* MADV_NOHUGEPAGE: no entry; MADV_HUGEPAGE on the same mapping then makes one of piece 2. */
TEST_F(huge, no_huge_madv_nohugepage)
{
	struct huge_ctr h;
	uint8_t *m = no_huge_read(_metadata, self, &h, 0x203, "nohuge", NO_HUGE_LEN, PROT_READ,
				  0, MADV_NOHUGEPAGE, "piece 0 read under MADV_NOHUGEPAGE");

	ASSERT_EQ(0, madvise(m, NO_HUGE_LEN, MADV_HUGEPAGE));
	control(_metadata, self, m, 0x203, &h);
}

/* huge_mappings=N: a mapping that qualifies makes no entry; back to Y, it makes one of piece 2. */
TEST_F(huge, no_huge_param_off)
{
	struct huge_ctr h;
	uint8_t *m;

	ASSERT_EQ(0, hbm_write_str(HUGE_PARAM, "N"));
	m = no_huge_read(_metadata, self, &h, 0x204, "paramoff", NO_HUGE_LEN, PROT_READ, 0,
			 MADV_HUGEPAGE, "piece 0 read with huge_mappings=N");
	ASSERT_EQ(0, hbm_write_str(HUGE_PARAM, "Y"));
	control(_metadata, self, m, 0x204, &h);
}

/* A mapping 4 KiB off the 2 MiB boundary of its offset (read only, MADV_HUGEPAGE): no entry, data exact. */
TEST_F(huge, no_huge_misaligned)
{
	struct huge_ctr h;
	uint8_t *m = no_huge_read(_metadata, self, &h, 0x205, "misaligned", HUGE, PROT_READ,
				  HBMT_PAGE, MADV_HUGEPAGE,
				  "piece 0 read through a misaligned mapping");

	EXPECT_EQ(HBMT_PAGE, (uintptr_t)m & (HUGE - 1));
	control(_metadata, self, NULL, 0x205, &h);
}

/* 1 MiB chunks: a mapping that qualifies makes no entry; data exact. */
TEST_F(huge, no_huge_small_chunk)
{
	const uint64_t seed = 0x206;
	struct huge_ctr h;
	uint8_t *m;

	open_region(_metadata, self, 2 * HUGE, HUGE / 2, seed, "smallchunk");
	huge_snap(_metadata, &h);
	m = map_huge(_metadata, self, 0, 2 * HUGE);
	data_ok(_metadata, m, 0, 0, 2 * HUGE, seed, "2 pieces");
	expect_huge(_metadata, "a region of 1 MiB chunks read", &h, 0, 0, 0, 0);
}

/*
 * Since the snapshot *h (not moved): pieces fetched whole over a link that
 * waits, for a fault (@fetched) and ahead of a reader in order (@ahead).
 */
static void expect_fetched(struct __test_metadata *_metadata, const char *what,
			   const struct huge_ctr *h, uint64_t fetched, uint64_t ahead)
{
	struct huge_ctr n;

	huge_snap(_metadata, &n);
	EXPECT_TRUE(n.fetched - h->fetched == fetched && n.ahead - h->ahead == ahead)
		TH_LOG("%s: fetched +%llu (want %llu), ahead +%llu (want %llu)", what,
		       (unsigned long long)(n.fetched - h->fetched), (unsigned long long)fetched,
		       (unsigned long long)(n.ahead - h->ahead), (unsigned long long)ahead);
}

/*
 * A node whose copies wait (latency_us=100, then nowait_copy=0): a piece of
 * which nothing is cached is fetched whole in one request, and the retried
 * fault gathers it (collapsed, not created) and maps a PMD; the next piece
 * is fetched ahead, so that a reader in order finds it cached: piece 0 is
 * fetched and piece 1 ahead; piece 1 is gathered as it is, and fetches
 * nothing ahead (the sim node has a no-wait copy, which declines only when
 * asked: a gathering fetches ahead only over a link without one, tcp_test
 * H); piece 3 is fetched and piece 4 ahead; back to a no-wait node, piece 4
 * is gathered and piece 2 fetched into its entry (created).  Data exact,
 * every piece a PMD.
 */
TEST_F(huge, slow_node_fetches_whole)
{
	const uint64_t seed = 0x207;
	struct huge_ctr h, f;
	uint8_t *m;

	open_region(_metadata, self, 5 * HUGE, 0, seed, "slownode");
	huge_snap(_metadata, &h);
	m = map_huge(_metadata, self, 0, 5 * HUGE);
	ASSERT_EQ(0, hbm_node_knob(N_H, "latency_us", 100));
	f = h;
	data_ok(_metadata, m, 0, 0, HUGE, seed, "piece 0");
	expect_counts(_metadata, "piece 0 read from a node with latency_us=100", &h, 0, 1, 1, 0, 0);
	expect_fetched(_metadata, "piece 0", &f, 1, 1);
	f = h;
	data_ok(_metadata, m, 0, HUGE, HUGE, seed, "piece 1");
	expect_counts(_metadata, "piece 1, fetched ahead, read", &h, 0, 1, 1, 0, 0);
	expect_fetched(_metadata, "piece 1", &f, 0, 0);
	ASSERT_EQ(0, hbm_node_knob(N_H, "latency_us", 0));
	ASSERT_EQ(0, hbm_node_knob(N_H, "nowait_copy", 0));
	f = h;
	data_ok(_metadata, m, 0, 3 * HUGE, HUGE, seed, "piece 3");
	expect_counts(_metadata, "piece 3 read from a node with nowait_copy=0", &h, 0, 1, 1, 0, 0);
	expect_fetched(_metadata, "piece 3", &f, 1, 1);
	ASSERT_EQ(0, hbm_node_knob(N_H, "nowait_copy", 1));
	f = h;
	data_ok(_metadata, m, 0, 4 * HUGE, HUGE, seed, "piece 4");
	data_ok(_metadata, m, 0, 2 * HUGE, HUGE, seed, "piece 2");
	expect_counts(_metadata, "piece 4, fetched ahead, and piece 2, not cached, read", &h,
		      1, 1, 2, 0, 0);
	expect_fetched(_metadata, "pieces 4 and 2", &f, 0, 0);
	expect_pmds(_metadata, m, 5 * HUGE);
	data_ok(_metadata, m, 0, 0, 5 * HUGE, seed, "5 pieces, again");
}

/*
 * A region of @pieces pieces (@seed's data, nothing cached), the counters
 * in *@h, and a huge mapping of it with MADV_RANDOM, returned, after the
 * node's @knob was set to @value (a node whose copies wait).
 */
static uint8_t *slow_random_region(struct __test_metadata *_metadata,
				   FIXTURE_DATA(huge) *self, struct huge_ctr *h,
				   unsigned int pieces, uint64_t seed, const char *name,
				   const char *knob, unsigned int value)
{
	uint8_t *m;

	open_region(_metadata, self, pieces * HUGE, 0, seed, name);
	huge_snap(_metadata, h);
	m = map_huge(_metadata, self, 0, pieces * HUGE);
	ASSERT_EQ(0, madvise(m, pieces * HUGE, MADV_RANDOM));
	ASSERT_EQ(0, hbm_node_knob(N_H, knob, value)) TH_LOG("node %d: %s=%u", N_H, knob, value);
	return m;
}

/*
 * MADV_RANDOM on a node whose copies wait: each piece touched is fetched
 * whole and gathered, none ahead.  Then fail_fetch=1: a piece's fetch
 * fails, and the fault that needed it gets SIGBUS (its page is fetched
 * again, alone, and fails); with fail_fetch=0 the piece reads exact in
 * 4 KiB pages (what the failed fetch left is not a whole piece).
 */
TEST_F(huge, slow_node_random_and_failure)
{
	const uint64_t seed = 0x208;
	struct huge_ctr h, f;
	uint64_t v = 0;
	uint8_t *m;

	m = slow_random_region(_metadata, self, &h, 3, seed, "slowrand", "nowait_copy", 0);
	f = h;
	data_ok(_metadata, m, 0, HUGE, HUGE, seed, "piece 1");
	data_ok(_metadata, m, 0, 0, HUGE, seed, "piece 0");
	expect_counts(_metadata, "pieces 1 and 0 read under MADV_RANDOM", &h, 0, 2, 2, 0, 0);
	expect_fetched(_metadata, "pieces 1 and 0", &f, 2, 0);
	expect_pmds(_metadata, m, 2 * HUGE);

	ASSERT_EQ(0, hbm_node_knob(N_H, "fail_fetch", 1));
	f = h;
	EXPECT_EQ(SIGBUS, hbmt_probe_read(m + 2 * HUGE + 5 * HBMT_PAGE, &v, NULL))
		TH_LOG("a page of piece 2, whose fetch fails");
	expect_fetched(_metadata, "piece 2 with fail_fetch=1", &f, 1, 0);
	ASSERT_EQ(0, hbm_node_knob(N_H, "fail_fetch", 0));
	data_ok(_metadata, m, 0, 2 * HUGE, HUGE, seed, "piece 2 after fail_fetch=0");
	expect_counts(_metadata, "piece 2 read after its failed fetch", &h, 0, 0, 0, 0, 0);
	data_ok(_metadata, m, 0, 0, 2 * HUGE, seed, "pieces 0 and 1, again");
}

/*
 * A task killed while it waits for its piece's whole fetch (latency_us
 * 1000000, the most: the request takes 1 s, time enough to see the fetch
 * start and kill the task even in a loaded VM): it dies at once, the fetch
 * completes without it, and the piece, cached whole, is gathered by the
 * next huge mapping, nothing fetched again (MADV_RANDOM: no piece ahead);
 * data exact.
 */
TEST_F(huge, slow_node_killed_waiting)
{
	const uint64_t seed = 0x209;
	uint64_t v = 0, bytes0 = 0, bytes = 0;
	struct huge_ctr h, f, n;
	int status = 0;
	uint8_t *m;
	pid_t pid;

	m = slow_random_region(_metadata, self, &h, 2, seed, "slowkill", "latency_us", 1000000);
	f = h;
	ASSERT_EQ(0, hbm_fdinfo_u64(self->r.fd, "bytes_fetched", &bytes0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(hbm_pattern_check(m, HBMT_PAGE, 0, seed, &v) ? 1 : 0);
	/* kill it once its fetch is out, while the fetch takes 1 s */
	for (int t = 0; t < 250 && !huge_read(&n) && n.fetched == f.fetched; t++)
		hbmt_sleep_ms(20);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("the child was not killed while it waited: status %#x", status);
	expect_fetched(_metadata, "piece 0, by the child", &f, 1, 0);
	/* the fetch ends about 1 s after it began: the piece's bytes are counted */
	for (int t = 0; t < 250; t++) {
		ASSERT_EQ(0, hbm_fdinfo_u64(self->r.fd, "bytes_fetched", &bytes));
		if (bytes >= bytes0 + HUGE)
			break;
		hbmt_sleep_ms(20);
	}
	ASSERT_EQ(bytes0 + HUGE, bytes) TH_LOG("piece 0's fetch has not ended 5 s after the kill");
	ASSERT_EQ(HPAGES, region_cached(self)) TH_LOG("piece 0 is not cached whole");
	/*
	 * The fetch counts its bytes, then unlocks the pages and drops its
	 * references to them (design.rst, "Huge (PMD) mappings"): a gathering
	 * before it is through finds a page held.  Give it time to finish.
	 */
	hbmt_sleep_ms(100);
	ASSERT_EQ(0, hbm_node_knob(N_H, "latency_us", 0));
	ASSERT_EQ(0, unmap(self, m));
	m = map_huge(_metadata, self, 0, 2 * HUGE);
	expect_counts(_metadata, "the killed child's fault", &h, 0, 0, 0, 0, 0);
	f = h;
	data_ok(_metadata, m, 0, 0, HUGE, seed, "piece 0, after the kill");
	expect_counts(_metadata, "piece 0, fetched for the killed child", &h, 0, 1, 1, 0, 0);
	expect_fetched(_metadata, "piece 0, after the kill", &f, 0, 0);
	expect_pmds(_metadata, m, HUGE);
}

/* ---- pieces cached in 4 KiB pages, gathered into an entry ---- */

/*
 * Pieces read through a 4 KiB mapping, which is then unmapped, are cached
 * whole in 4 KiB pages: the next mapping that qualifies gathers each into
 * an entry (collapsed, not created: nothing is fetched) and maps it with a
 * PMD; the region's cached pages stay as they were (the entries take the
 * pages' charge), and the data is exact.
 */
TEST_F(huge, collapse_cached_piece)
{
	const uint64_t len = 2 * HUGE, seed = 0x311;
	uint64_t cached, now;
	struct huge_ctr h;
	uint8_t *plain, *ro;

	open_region(_metadata, self, len, 0, seed, "collapse");
	huge_snap(_metadata, &h);
	plain = map_checked(_metadata, self, 0, len, PROT_READ, 0, MADV_NOHUGEPAGE);
	data_ok(_metadata, plain, 0, 0, len, seed, "4 KiB mapping");
	ASSERT_EQ(0, unmap(self, plain));
	expect_huge(_metadata, "2 pieces read through a 4 KiB mapping", &h, 0, 0, 0, 0);
	cached = region_cached(self);
	ASSERT_EQ(2 * HPAGES, cached) TH_LOG("the region's cached pages after reading it all");

	ro = map_huge(_metadata, self, 0, len);
	data_ok(_metadata, ro, 0, 0, len, seed, "huge mapping");
	expect_counts(_metadata, "2 pieces cached in 4 KiB pages, read through a huge mapping",
		      &h, 0, 2, 2, 0, 0);
	expect_pmds(_metadata, ro, len);
	now = region_cached(self);
	EXPECT_EQ(cached, now) TH_LOG("cached pages %llu before the gathering, %llu after",
				      (unsigned long long)cached, (unsigned long long)now);
	data_ok(_metadata, ro, 0, 0, len, seed, "huge mapping, again");
}

/*
 * What keeps a cached piece in 4 KiB pages, each with data exact through a
 * huge mapping that takes no PMD for it: piece 0 mapped by another
 * mapping, piece 1 with a page written and not yet synced, piece 2 with
 * two of its pages cached (read-ahead off).  Once each qualifies (that
 * mapping gone, a sync, the rest read), a new huge mapping gathers all
 * three.
 */
TEST_F(huge, collapse_refused)
{
	const uint64_t len = 3 * HUGE, seed = 0x312;
	volatile uint8_t *b;
	uint8_t *rw, *plain0, *sparse, *ro;
	struct huge_ctr h;

	open_region(_metadata, self, len, 0, seed, "norecollapse");
	huge_snap(_metadata, &h);
	rw = map_checked(_metadata, self, HUGE, HUGE, PROT_READ | PROT_WRITE, 0, MADV_NOHUGEPAGE);
	data_ok(_metadata, rw, HUGE, HUGE, HUGE, seed, "piece 1, writable mapping");
	b = rw + 100;
	*b = *b;		/* the same byte: the page is dirty, the data the pattern */
	ASSERT_EQ(0, unmap(self, rw));
	plain0 = map_checked(_metadata, self, 0, HUGE, PROT_READ, 0, MADV_NOHUGEPAGE);
	data_ok(_metadata, plain0, 0, 0, HUGE, seed, "piece 0, kept mapped");
	sparse = map_checked(_metadata, self, 2 * HUGE, HUGE, PROT_READ, 0, MADV_RANDOM);
	data_ok(_metadata, sparse, 2 * HUGE, 2 * HUGE, HBMT_PAGE, seed, "piece 2, first page");
	data_ok(_metadata, sparse, 2 * HUGE, 3 * HUGE - HBMT_PAGE, HBMT_PAGE, seed,
		"piece 2, last page");
	ASSERT_EQ(0, unmap(self, sparse));
	expect_huge(_metadata, "pieces read through 4 KiB mappings", &h, 0, 0, 0, 0);

	ro = map_huge(_metadata, self, 0, len);
	data_ok(_metadata, ro, 0, 0, len, seed, "huge mapping");
	expect_counts(_metadata, "a piece mapped elsewhere, one dirty, one partly cached", &h,
		      0, 0, 0, 0, 0);
	ASSERT_EQ(0, unmap(self, ro));
	ASSERT_EQ(0, unmap(self, plain0));
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));

	ro = map_huge(_metadata, self, 0, len);
	data_ok(_metadata, ro, 0, 0, len, seed, "huge mapping, again");
	expect_counts(_metadata, "the same pieces unmapped, clean and whole", &h, 0, 3, 3, 0, 0);
	expect_pmds(_metadata, ro, len);
}

/* ---- what drops an entry ---- */

/*
 * Bytes of piece 0 written through a second, writable mapping drop its entry
 * (only that one), and the huge mapping then reads them, before and after
 * SYNC: its PMD went with the entry.  The huge mapping made writable by
 * mprotect() drops piece 1's entry at its first write; both mappings, and
 * after SYNC the home, hold exactly what was written.
 */
TEST_F(huge, write_drops_and_is_seen)
{
	const uint64_t len = 2 * HUGE, seed = 0x301;
	struct hbmpool_chunk_info ch[2];
	struct hbmpool_region_info ri;
	uint8_t *want, *ro, *rw, *home;
	struct huge_ctr h;
	long long kb;

	want = malloc(len);
	home = malloc(HUGE);
	ASSERT_TRUE(want && home);
	hbm_pattern_fill(want, len, 0, seed);
	open_region(_metadata, self, len, 0, seed, "write");
	huge_snap(_metadata, &h);
	ro = map_huge(_metadata, self, 0, len);
	model_ok(_metadata, ro, want, len, "huge mapping, first read");
	expect_huge(_metadata, "2 pieces read", &h, 2, 2, 0, 0);

	rw = map_checked(_metadata, self, 0, len, PROT_READ | PROT_WRITE, 0, -1);
	hbm_pattern_fill(rw + 5 * HBMT_PAGE, HBMT_PAGE, 5 * HBMT_PAGE, seed + 1);
	hbm_pattern_fill(want + 5 * HBMT_PAGE, HBMT_PAGE, 5 * HBMT_PAGE, seed + 1);
	rw[HUGE / 2 + 3] ^= 0xff;
	want[HUGE / 2 + 3] ^= 0xff;
	expect_huge(_metadata, "piece 0 written through a second mapping", &h, 0, 0, 1, 0);
	model_ok(_metadata, ro, want, HUGE, "huge mapping, piece 0 after the write (no SYNC)");
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	model_ok(_metadata, ro, want, HUGE, "huge mapping, piece 0 after SYNC");
	model_ok(_metadata, rw, want, HUGE, "writable mapping, piece 0");
	huge_snap(_metadata, &h);
	kb = smaps_pmd_kb(ro);
	EXPECT_EQ(2048, kb) TH_LOG("smaps: %lld kB of the huge mapping mapped by PMDs: want piece 1's",
				   kb);

	ASSERT_EQ(0, mprotect(ro, len, PROT_READ | PROT_WRITE));
	hbm_pattern_fill(ro + HUGE + 7 * HBMT_PAGE, HBMT_PAGE, HUGE + 7 * HBMT_PAGE, seed + 2);
	hbm_pattern_fill(want + HUGE + 7 * HBMT_PAGE, HBMT_PAGE, HUGE + 7 * HBMT_PAGE, seed + 2);
	ro[len - 1] = 0x5a;
	want[len - 1] = 0x5a;
	expect_huge(_metadata, "piece 1 written through the huge mapping after mprotect", &h,
		    0, 0, 1, 0);
	model_ok(_metadata, ro, want, len, "mprotected mapping");
	model_ok(_metadata, rw, want, len, "writable mapping");

	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	ASSERT_EQ(0, hbm_region_info(self->r.fd, &ri, ch, 2, NULL));
	ASSERT_EQ(2, ri.nr_chunks);
	for (int c = 0; c < 2; c++) {
		ASSERT_EQ((ssize_t)HUGE, hbm_hbm_pread(ch[c].node, home, HUGE, ch[c].node_offset));
		model_ok(_metadata, home, want + c * HUGE, HUGE, c ? "home of piece 1" : "home of piece 0");
	}
	free(home);
	free(want);
}

/* A read fault through a mapping that cannot take a PMD (no MADV_HUGEPAGE) drops the piece's entry, only that one: piece 1 stays mapped by its PMD; both mappings read exact data. */
TEST_F(huge, read_4k_drops)
{
	const uint64_t len = 2 * HUGE, seed = 0x302;
	struct huge_ctr h;
	uint8_t *ro, *plain;
	long long kb;

	open_region(_metadata, self, len, 0, seed, "read4k");
	huge_snap(_metadata, &h);
	ro = map_huge(_metadata, self, 0, len);
	data_ok(_metadata, ro, 0, 0, len, seed, "huge mapping");
	expect_huge(_metadata, "2 pieces read", &h, 2, 2, 0, 0);
	plain = map_checked(_metadata, self, 0, len, PROT_READ, 0, -1);
	data_ok(_metadata, plain, 0, 0, HUGE, seed, "4 KiB mapping, piece 0");
	expect_huge(_metadata, "piece 0 read through a 4 KiB mapping", &h, 0, 0, 1, 0);
	kb = smaps_pmd_kb(ro);
	EXPECT_EQ(2048, kb) TH_LOG("smaps: %lld kB of the huge mapping mapped by PMDs: want piece 1's",
				   kb);
	data_ok(_metadata, ro, 0, 0, len, seed, "huge mapping after the drop");
}

/* A memory error in a piece cached whole (MADV_HWPOISON on its huge mapping): the next mapping of the piece drops the entry and reads the home's data through 4 KiB pages, exact; the other piece keeps its PMD. */
TEST_F(huge, poisoned_piece_dropped)
{
	const uint64_t len = 2 * HUGE, seed = 0x303;
	struct huge_ctr h;
	uint8_t *ro;

	open_region(_metadata, self, len, 0, seed, "poison");
	huge_snap(_metadata, &h);
	ro = map_huge(_metadata, self, 0, len);
	data_ok(_metadata, ro, 0, 0, len, seed, "huge mapping");
	expect_huge(_metadata, "2 pieces read", &h, 2, 2, 0, 0);
	/* the core cannot split the compound page: EBUSY, the error recorded */
	if (madvise(ro + 5 * HBMT_PAGE, HBMT_PAGE, MADV_HWPOISON) && errno != EBUSY)
		SKIP(return, "MADV_HWPOISON: %s (needs CONFIG_MEMORY_FAILURE and CAP_SYS_ADMIN)",
		     strerror(errno));
	ASSERT_EQ(0, unmap(self, ro));
	ro = map_huge(_metadata, self, 0, len);
	data_ok(_metadata, ro, 0, 0, len, seed, "a new huge mapping after the error");
	expect_huge(_metadata, "piece 0 dropped, piece 1 mapped again", &h, 0, ANY, 1, 0);
	EXPECT_EQ(2048, smaps_pmd_kb(ro)) TH_LOG("smaps: want piece 1 alone mapped by a PMD");
}

/* get_user_pages on PMDs: process_vm_readv (pins) and vmsplice (GUP-fast) read exact data from a huge mapping, one piece mapped before, the other faulted by GUP; nothing is dropped and the PMD stays. */
TEST_F(huge, gup_reads_huge)
{
	const uint64_t len = 2 * HUGE, seed = 0x401, step = 64 * 1024;
	struct iovec local, remote;
	struct huge_ctr h;
	uint8_t *ro, *buf;
	long long kb;
	int p[2];

	buf = malloc(len);
	ASSERT_NE(NULL, buf);
	open_region(_metadata, self, len, 0, seed, "gup");
	huge_snap(_metadata, &h);
	ro = map_huge(_metadata, self, 0, len);
	data_ok(_metadata, ro, 0, 0, HUGE, seed, "piece 0 by the CPU");
	expect_huge(_metadata, "piece 0 read", &h, 1, 1, 0, 0);

	local = (struct iovec){ .iov_base = buf, .iov_len = len };
	remote = (struct iovec){ .iov_base = ro, .iov_len = len };
	memset(buf, 0, len);
	ASSERT_EQ((ssize_t)len, process_vm_readv(getpid(), &local, 1, &remote, 1, 0))
		TH_LOG("process_vm_readv: %s", strerror(errno));
	data_ok(_metadata, buf, 0, 0, len, seed, "process_vm_readv");
	expect_huge(_metadata, "process_vm_readv of 2 pieces", &h, ANY, ANY, 0, 0);

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	memset(buf, 0, len);
	for (uint64_t o = 0; o < len; o += step) {
		struct iovec iov = { .iov_base = ro + o, .iov_len = step };
		ssize_t n = vmsplice(p[1], &iov, 1, 0);

		ASSERT_EQ((ssize_t)step, n) TH_LOG("vmsplice at %#llx: %s", (unsigned long long)o,
						   strerror(errno));
		for (uint64_t got = 0; got < step; got += n) {
			n = read(p[0], buf + o + got, step - got);
			ASSERT_LT(0, n);
		}
	}
	close(p[0]);
	close(p[1]);
	data_ok(_metadata, buf, 0, 0, len, seed, "vmsplice");
	expect_huge(_metadata, "vmsplice of 2 pieces", &h, 0, 0, 0, 0);
	kb = smaps_pmd_kb(ro);
	EXPECT_LE(2048, kb) TH_LOG("smaps: %lld kB mapped by PMDs: piece 0's PMD went", kb);
	free(buf);
}

/* A forked child reads a huge mapping of its parent exactly: it maps the parent's entries (a PMD each), creating and dropping none. */
TEST_F(huge, fork_child_reads)
{
	const uint64_t len = 2 * HUGE, seed = 0x501;
	struct huge_ctr h;
	int status = 0;
	uint8_t *ro;
	pid_t pid;

	open_region(_metadata, self, len, 0, seed, "fork");
	huge_snap(_metadata, &h);
	ro = map_huge(_metadata, self, 0, len);
	data_ok(_metadata, ro, 0, 0, len, seed, "parent");
	expect_huge(_metadata, "2 pieces read by the parent", &h, 2, 2, 0, 0);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		uint64_t first = 0;
		size_t bad = hbm_pattern_check(ro, len, 0, seed, &first);

		if (bad)
			fprintf(stderr, "# child: %zu wrong bytes, the first at offset %#llx\n", bad,
				(unsigned long long)first);
		_exit(bad ? 1 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("the child read wrong data or died: status %#x", status);
	expect_huge(_metadata, "2 pieces read by the child", &h, 0, 2, 0, 0);
	data_ok(_metadata, ro, 0, 0, len, seed, "parent after the child");
}

/* munmap of 4 KiB inside a huge-mapped piece: the rest reads exact (piece 0 through 4 KiB pages, its entry dropped; piece 1 still by its PMD), the hole gives SIGSEGV. */
TEST_F(huge, partial_munmap)
{
	const uint64_t len = 2 * HUGE, seed = 0x601, hole = 10 * HBMT_PAGE;
	struct huge_ctr h;
	int status = 0;
	uint8_t *ro;
	long long kb;
	pid_t pid;

	open_region(_metadata, self, len, 0, seed, "munmap");
	huge_snap(_metadata, &h);
	ro = map_huge(_metadata, self, 0, len);
	data_ok(_metadata, ro, 0, 0, len, seed, "before");
	expect_huge(_metadata, "2 pieces read", &h, 2, 2, 0, 0);
	ASSERT_EQ(0, munmap(ro + hole, HBMT_PAGE));
	data_ok(_metadata, ro, 0, 0, hole, seed, "piece 0 before the hole");
	data_ok(_metadata, ro, 0, hole + HBMT_PAGE, len - hole - HBMT_PAGE, seed, "after the hole");
	expect_huge(_metadata, "read around a hole in piece 0", &h, 0, 0, 1, 0);
	kb = smaps_pmd_kb(ro + hole + HBMT_PAGE);
	EXPECT_EQ(2048, kb) TH_LOG("smaps: %lld kB mapped by PMDs after the hole: want piece 1's", kb);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		prctl(PR_SET_DUMPABLE, 0);	/* no core file */
		(void)*(volatile uint8_t *)(ro + hole);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
		TH_LOG("reading the hole: status %#x, want SIGSEGV", status);
}

/* A budget of two entries and 8 pieces read in order twice: exact data, entries evicted whole, and at the end the cache and the live entries fit the budget. */
TEST_F_TIMEOUT(huge, eviction, 60)
{
	const uint64_t len = 8 * HUGE, seed = 0x701, budget = 2 * HPAGES;
	struct huge_ctr h0, h1, hx;
	uint64_t max_live = 0, cached = 0;
	char what[64];
	uint8_t *ro;

	open_region(_metadata, self, len, 0, seed, "evict");
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", budget));
	huge_snap(_metadata, &h0);
	ro = map_huge(_metadata, self, 0, len);
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t p = 0; p < 8; p++) {
			snprintf(what, sizeof(what), "pass %d, piece %llu", pass, (unsigned long long)p);
			ASSERT_TRUE(data_ok(_metadata, ro, 0, p * HUGE, HUGE, seed, what));
			huge_snap(_metadata, &hx);
			if (hx.live > max_live)
				max_live = hx.live;
		}
	}
	EXPECT_EQ(0, hbmt_wait_global("cached_pages", HBMT_LE, budget, 5000, &cached))
		TH_LOG("cached_pages %llu, budget %llu", (unsigned long long)cached,
		       (unsigned long long)budget);
	huge_snap(_metadata, &h1);
	TH_LOG("created %llu, evicted %llu, alloc_failed %llu, live at most %llu, now %llu",
	       (unsigned long long)(h1.created - h0.created),
	       (unsigned long long)(h1.evicted - h0.evicted),
	       (unsigned long long)(h1.alloc_failed - h0.alloc_failed),
	       (unsigned long long)max_live, (unsigned long long)h1.live);
	EXPECT_LT(2, h1.created - h0.created) TH_LOG("more entries than the budget holds were made");
	EXPECT_LT(0, h1.evicted - h0.evicted) TH_LOG("no entry evicted");
	EXPECT_EQ(0, h1.dropped - h0.dropped) TH_LOG("entries dropped: nothing needed 4 KiB pages");
	EXPECT_EQ(h1.live - h0.live, h1.created - h0.created - (h1.evicted - h0.evicted))
		TH_LOG("live != created - evicted");
	EXPECT_GE(budget, h1.live * HPAGES) TH_LOG("%llu live entries over a budget of %llu pages",
						   (unsigned long long)h1.live,
						   (unsigned long long)budget);
	data_ok(_metadata, ro, 0, 0, len, seed, "after eviction");
}

/*
 * A region of two pieces holding @seed's pattern, read through a huge
 * mapping (returned; *@h0 the counters before, *@h after), then its fd
 * closed: the mapping keeps the region and its entries.
 */
static uint8_t *two_pieces_read_closed(struct __test_metadata *_metadata,
				       FIXTURE_DATA(huge) *self, uint64_t seed, const char *name,
				       struct huge_ctr *h0, struct huge_ctr *h)
{
	uint8_t *ro;

	open_region(_metadata, self, 2 * HUGE, 0, seed, name);
	huge_snap(_metadata, h0);
	*h = *h0;
	ro = map_huge(_metadata, self, 0, 2 * HUGE);
	data_ok(_metadata, ro, 0, 0, 2 * HUGE, seed, "read");
	expect_huge(_metadata, "2 pieces read", h, 2, 2, 0, 0);
	EXPECT_EQ(0, close(self->r.fd));
	self->r.fd = -1;
	return ro;
}

/* munmap of @ro releases the region: live goes back to @h0's (into *@h). */
static void release_wait(struct __test_metadata *_metadata, FIXTURE_DATA(huge) *self,
			 uint8_t *ro, const struct huge_ctr *h0, struct huge_ctr *h)
{
	ASSERT_EQ(0, unmap(self, ro));
	EXPECT_EQ(0, wait_live(h, h0->live)) TH_LOG("live %llu 5 s after the release, was %llu",
						     (unsigned long long)h->live,
						     (unsigned long long)h0->live);
}

/* Release: with the fd closed, the mapping keeps the region and its entries (and reads exact); munmap releases the region, and live returns to what it was, its entries counted as released, neither dropped nor evicted. */
TEST_F(huge, release)
{
	const uint64_t len = 2 * HUGE, seed = 0x801;
	struct huge_ctr h0, h;
	uint8_t *ro;

	ro = two_pieces_read_closed(_metadata, self, seed, "release", &h0, &h);
	expect_huge(_metadata, "fd closed, mapping kept", &h, 0, 0, 0, 0);
	data_ok(_metadata, ro, 0, 0, len, seed, "read after close");
	release_wait(_metadata, self, ro, &h0, &h);
	EXPECT_EQ(2, h.released - h0.released) TH_LOG("entries released with the region");
	EXPECT_EQ(h0.dropped, h.dropped) TH_LOG("a release is not a drop");
	EXPECT_EQ(h0.evicted, h.evicted) TH_LOG("a release is not an eviction");
}

/*
 * The 2 MiB pages of a released region's pieces go to the free-page pool,
 * and the next pieces take them: a new region, never written (its home
 * reads as zeros), read through a huge mapping, reads zeros everywhere,
 * not the old region's pattern that its pages held.
 */
TEST_F(huge, pooled_pages_reused)
{
	const uint64_t len = 2 * HUGE, seed = 0x901;
	struct huge_ctr h0, h;
	uint64_t nonzero = 0;
	uint8_t *ro;
	int ret;

	ro = two_pieces_read_closed(_metadata, self, seed, "pool-a", &h0, &h);
	release_wait(_metadata, self, ro, &h0, &h);
	EXPECT_LE(2, h.pooled) TH_LOG("2 MiB pages in the pool after the release: %llu",
				      (unsigned long long)h.pooled);

	ret = hbmt_region_open(&self->r, self->env.devfd, len, 0, HBMPOOL_POLICY_BIND,
			       HBM_NODES(N_H), 0, "pool-b");
	ASSERT_EQ(0, ret) TH_LOG("create pool-b: %s", strerror(-ret));
	ASSERT_EQ(0, munmap(self->r.map, len));
	self->r.map = NULL;
	huge_snap(_metadata, &h0);
	ro = map_huge(_metadata, self, 0, len);
	for (uint64_t i = 0; i < len; i++)
		nonzero += ro[i] != 0;
	EXPECT_EQ(0, nonzero) TH_LOG("a new region read %llu non-zero bytes through pooled pages",
				     (unsigned long long)nonzero);
	expect_pmds(_metadata, ro, len);
	huge_snap(_metadata, &h);
	EXPECT_LE(2, h.pool_recycled - h0.pool_recycled)
		TH_LOG("2 MiB pages taken from the pool for 2 pieces: %llu",
		       (unsigned long long)(h.pool_recycled - h0.pool_recycled));
}

/* The loss of the node (fenced) drops its entries, and their PMDs go: a read of the huge mapping gets SIGBUS, not old data. */
TEST_F(huge, node_loss_drops)
{
	const uint64_t len = 2 * HUGE, seed = 0x901;
	struct huge_ctr h0, h;
	uint64_t v = 0;
	uint8_t *ro;

	open_region(_metadata, self, len, 0, seed, "nodeloss");
	huge_snap(_metadata, &h0);
	h = h0;
	ro = map_huge(_metadata, self, 0, len);
	data_ok(_metadata, ro, 0, 0, len, seed, "read");
	expect_huge(_metadata, "2 pieces read", &h, 2, 2, 0, 0);
	ASSERT_EQ(0, hbm_node_fence(N_H));
	EXPECT_EQ(0, wait_live(&h, h0.live)) TH_LOG("live %llu 5 s after the fence, was %llu",
						     (unsigned long long)h.live,
						     (unsigned long long)h0.live);
	EXPECT_EQ(2, h.dropped - h0.dropped) TH_LOG("entries dropped for the node loss");
	EXPECT_EQ(0, h.evicted - h0.evicted);
	for (uint64_t p = 0; p < 2; p++) {
		EXPECT_EQ(SIGBUS, hbmt_probe_read(ro + p * HUGE + 64, &v, NULL))
			TH_LOG("piece %llu read %#llx after its node was lost", (unsigned long long)p,
			       (unsigned long long)v);
	}
}

TEST_HARNESS_MAIN
