// SPDX-License-Identifier: GPL-2.0
/*
 * hbmbench: 4 KiB fault throughput and latency of hbmpool, each fault phase
 * next to a baseline over the same bytes measured in the same run, as
 * ratios.  Through the simulated fabric (added latency 0, bandwidth
 * unlimited) or any other transport (--node N: a node whose sysfs
 * nodes/nodeN/transport is "tcp", "shm", ...).
 *
 * Phases (tools/bench/hbmb_phase.c); "cold" is a new region, never touched:
 *   seq_fault        first touch of every page of a cold region, in order,
 *                    timed per page (clock_gettime around a one-byte read);
 *                    the cache has room for all of it
 *   seq_fault_huge   seq_fault through a read-only mapping (MAP_SHARED, no
 *                    PROT_WRITE) with MADV_HUGEPAGE at a 2 MiB-aligned address:
 *                    where the module's huge_mappings allows, a first touch
 *                    fetches its whole 2 MiB piece and maps it with one PMD.
 *                    Against memcpy_warm and against seq_fault; the PMDs it
 *                    mapped (debugfs "huge", read around each run) are
 *                    printed.  Skipped when the module has no huge_mappings
 *                    parameter
 *   reread, reread_huge
 *                    a new region, every page read once (one byte, in order)
 *                    through a read-write mapping so that the cache holds
 *                    all of it in 4 KiB pages, clean, and that mapping
 *                    unmapped, untimed; then the region mapped again and
 *                    every page touched first in order, timed as seq_fault.
 *                    reread maps it read-only with MADV_NOHUGEPAGE (4 KiB
 *                    pages, fault-around); reread_huge as seq_fault_huge,
 *                    where a first touch of a piece whose 512 pages are all
 *                    cached copies them into a 2 MiB page and maps it with
 *                    one PMD ("collapsed" in debugfs "huge").  reread_huge
 *                    against reread; the pieces it collapsed and the PMDs
 *                    it mapped are printed.  reread_huge is skipped when
 *                    seq_fault_huge is
 *   remap_huge       right after reread_huge, in the same step, on the same
 *                    region (one region per iteration for both): reread_huge's
 *                    mapping unmapped, the region mapped again as
 *                    seq_fault_huge maps it and every page touched first in
 *                    order, timed as seq_fault.  The pieces reread_huge
 *                    collapsed stay cached whole, so each is mapped by one
 *                    fault, without a copy.  Against reread (the same
 *                    measurement as reread_huge's); its own debugfs "huge"
 *                    counters are printed (collapsed and created 0, mapped
 *                    one per 2 MiB piece expected).  Runs with reread_huge
 *   rand_fault       seq_fault in a random order of the pages
 *   seq_fault_retry  seq_fault with the sim's nowait_copy knob at 0: every
 *                    miss drops mmap_lock and retries (sim only)
 *   seq_fault_evict  seq_fault with the cache budget at 1/4 of the region
 *                    (a working set 4 times the cache; --evict)
 *   seq_fault_mt, rand_fault_mt
 *                    seq_fault and rand_fault by --threads N threads, each on
 *                    a disjoint contiguous part of one cold region, pinned to
 *                    CPU i mod the CPUs; time from the first start to the
 *                    last end
 *   anon_fault_mt    anon_fault the same way: what the machine itself gains
 *                    from more threads when each fault allocates and zeroes
 *                    a page (--threads)
 *   work_2x          a workload on a cold region twice the cache budget:
 *                    every cache line read and written, pages in order, then
 *                    pages in a random order (--workload); with local_2x,
 *                    each part's time and page faults are printed as well
 *                    (work.* lines)
 * Baselines:
 *   memcpy_warm      memcpy of a region made warm (every page touched)
 *                    before the clock starts, 4 KiB at a time, timed per page
 *   anon_fault       first touch, by a one-byte write, of every page of a
 *                    fresh private anonymous mapping (4 KiB pages,
 *                    MADV_NOHUGEPAGE), random order: alloc + zero, the floor
 *                    of any fault-driven pager
 *   local_2x         work_2x on fresh anonymous memory, not pre-faulted:
 *                    both sides start from memory the process never touched,
 *                    as an application would, so local memory pays its
 *                    alloc + zero faults as the region pays its fetches
 *   pread_hbm        pread of the HBM bytes of a cold region from the node's
 *                    debugfs "hbm" file, 4 KiB at a time (sim only)
 *
 * Replicated write-back (--replicas K, 2..4; needs K bench nodes):
 *   wb_kN            a region with N copies of each chunk (region_create.
 *                    replicas), every page read first (fetched from one
 *                    copy, before the clock), then timed: every page
 *                    written (memset of 4 KiB, timed per page), then
 *                    REGION_SYNC of the whole region (every page written
 *                    back to every copy); the cache holds the region
 *   Pairs wb_kN against wb_k1 for N = 2..K, both sides next to each other in
 *   every pass, the order alternating as for the others: ratio of MB/s
 *   (write + sync) and of the sync alone ("sync MB/s": bytes / sync time).
 *   With simulated nodes (no latency) this is the CPU cost of the extra
 *   copies; over a transport, also the link's.  --only-replicas runs these
 *   pairs alone.
 *
 * Each pair (phase, baseline) is measured in every pass; odd passes run the
 * pairs in order, each phase before its baseline, even passes run the whole
 * sequence reversed, so that a machine that drifts favours neither side.
 * remap_huge/reread rides on reread_huge/reread: reread_huge + remap_huge
 * are one step (the region created in it, closed after remap_huge), so a
 * pass runs that step then reread, or reread then that step, and both
 * pairs take the same reread measurement as their baseline.
 * The summary gives each pair's ratio per pass, the min and the median, and
 * the goal of issue 12 where there is one.  Numbers only: nothing here
 * asserts on timing.  Knobs changed are restored at exit.
 *
 * Nodes that are not simulated have no debugfs knobs: theirs are left alone
 * and the sim-only phases are skipped, with a "note:" line.
 *
 * --regions N measures something else instead: the kernel memory a region
 * costs (tools/bench/hbmb_regions.c).
 *
 * The phases time every page with two clock_gettime() calls, a cost that
 * the phase and its baseline share and that pulls their ratio towards 1 when
 * the clock is slow (an emulated HPET in a VM whose TSC is not trusted): the
 * output gives the clocksource and what one reading costs.
 *
 * Output: a table (phase, pages/s, MB/s, p50/p99/p99.9 ns, all passes),
 * the goal lines, then "key=value" lines: clocksource, clock_read_ns (the
 * median gap between two back-to-back readings), transport.nodeN, param.NAME,
 * mbps.PHASE, lat.PHASE.p50_ns|p99_ns|p999_ns, ratio.* (all passes), and per
 * pair goal.KEY.passN (the ratio), goal.KEY.passN.phase and .baseline (its
 * terms: MB/s, ns for a percentile, ns for a time), goal.KEY.min,
 * goal.KEY.median, goal.KEY.target, goal.KEY.met (passes meeting the
 * target / passes).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hbmb.h"
#include "hbmcli.h"
#include "hbmlib.h"

/*
 * The parameter that bounds the fetch window (--window), set through the
 * netlink family's params-set and read from /sys/kernel/hbmpool/.
 */
#define WINDOW_PARAM	"readahead_max_pages"

#define MAX_PASSES	20
#define MAX_THREADS	64

/*
 * seq_fault_huge, reread_huge: the module parameter that turns huge
 * mappings on, and the debugfs counters of huge mappings (one "NAME N" line
 * each).
 */
#define HUGE_PARAM	"/sys/module/hbmpool/parameters/huge_mappings"
#define HUGE_DEBUGFS	HBM_DEBUGFS "/huge"

enum need { ALWAYS, SIM, HUGE, EVICT, THREADS, WORKLOAD, REPL2, REPL3, REPL4, NNEED };
enum metric { MBPS, P50, P99, TIME, SYNC_MBPS };

/*
 * host: -1, or the pair whose steps measure this one too: its phase runs
 * in the host's phase step, right after the host's phase on the same
 * regions (hbmb_run()'s then), its baseline is the host's measurement.
 */
static const struct pair {
	enum hbmb_phase a, b;	/* phase, its baseline */
	enum need need;
	int host;
} pairs[] = {
	{ SEQ_FAULT, MEMCPY_WARM, ALWAYS, -1 },
	{ RAND_FAULT, ANON_FAULT, ALWAYS, -1 },
	{ EVICT_FAULT, SEQ_FAULT, EVICT, -1 },
	{ WORK_2X, LOCAL_2X, WORKLOAD, -1 },
	{ SEQ_FAULT_MT, SEQ_FAULT, THREADS, -1 },
	{ RAND_FAULT_MT, RAND_FAULT, THREADS, -1 },
	{ ANON_FAULT_MT, ANON_FAULT, THREADS, -1 },
	{ SEQ_FAULT, SEQ_FAULT_RETRY, SIM, -1 },
	{ SEQ_FAULT, PREAD_HBM, SIM, -1 },
	{ WB_K2, WB_K1, REPL2, -1 },
	{ WB_K3, WB_K1, REPL3, -1 },
	{ WB_K4, WB_K1, REPL4, -1 },
	{ SEQ_FAULT_HUGE, MEMCPY_WARM, HUGE, -1 },
	{ SEQ_FAULT_HUGE, SEQ_FAULT, HUGE, -1 },
	{ REREAD_HUGE, REREAD, HUGE, -1 },
	{ REMAP_HUGE, REREAD, HUGE, 14 },
};
#define NPAIR (sizeof(pairs) / sizeof(pairs[0]))

/* A ratio of a pair; target 0: no goal, shown for information. */
static struct goal {
	const char *key;
	unsigned int pair;
	enum metric metric;
	int at_most;		/* the goal is ratio <= target, else >= */
	double target;		/* per thread if per_thread (x --threads) */
	int per_thread;
} goals[] = {
	{ "seq_fault_vs_memcpy_warm", 0, MBPS, 0, 0.6, 0 },
	{ "seq_fault_huge_vs_memcpy_warm", 12, MBPS, 0, 0, 0 },
	{ "seq_fault_huge_vs_seq_fault", 13, MBPS, 0, 0, 0 },
	{ "reread_huge_vs_reread", 14, MBPS, 0, 0, 0 },
	{ "remap_huge_vs_reread", 15, MBPS, 0, 0, 0 },
	{ "rand_fault_vs_anon_fault_p50", 1, P50, 1, 1.25, 0 },
	{ "rand_fault_vs_anon_fault_p99", 1, P99, 1, 1.2, 0 },
	{ "seq_fault_evict_vs_seq_fault", 2, MBPS, 0, 0.6, 0 },
	{ "work_2x_vs_local_2x_time", 3, TIME, 1, 2.0, 0 },
	{ "seq_fault_mt_vs_seq_fault", 4, MBPS, 0, 0.9, 1 },
	{ "rand_fault_mt_vs_rand_fault", 5, MBPS, 0, 0.9, 1 },
	{ "anon_fault_mt_vs_anon_fault", 6, MBPS, 0, 0, 0 },
	{ "seq_fault_vs_seq_fault_retry", 7, MBPS, 0, 0, 0 },
	{ "seq_fault_vs_pread_hbm", 8, MBPS, 0, 0, 0 },
	{ "wb_k2_vs_wb_k1", 9, MBPS, 0, 0, 0 },
	{ "wb_k2_vs_wb_k1_sync", 9, SYNC_MBPS, 0, 0, 0 },
	{ "wb_k3_vs_wb_k1", 10, MBPS, 0, 0, 0 },
	{ "wb_k3_vs_wb_k1_sync", 10, SYNC_MBPS, 0, 0, 0 },
	{ "wb_k4_vs_wb_k1", 11, MBPS, 0, 0, 0 },
	{ "wb_k4_vs_wb_k1_sync", 11, SYNC_MBPS, 0, 0, 0 },
};
#define NGOAL (sizeof(goals) / sizeof(goals[0]))

static const char *const metric_name[] = { "MB/s", "p50", "p99", "time", "sync MB/s" };

static struct hbmb_ctx ctx;
static struct hbmb_meas meas[MAX_PASSES][NPAIR][2];
static uint64_t old_budget, old_window;
static int budget_saved, window_saved;
static uint64_t old_latency[HBMPOOL_MAX_NODES], old_bw[HBMPOOL_MAX_NODES];
static uint64_t old_nowait[HBMPOOL_MAX_NODES];

/*
 * HUGE_DEBUGFS: its counters, in the order it prints them; "live" is a
 * level.  "collapsed" is not there before the module gathered cached pieces
 * (reads 0 then).
 */
enum {
	H_CREATED, H_COLLAPSED, H_MAPPED, H_DROPPED, H_EVICTED, H_RELEASED, H_ALLOC_FAILED, H_LIVE,
	NHUGE
};
static const char *const huge_name[NHUGE] = {
	"created", "collapsed", "mapped", "dropped", "evicted", "released", "alloc_failed", "live",
};
#define HUGE_NEEDED	(((1U << NHUGE) - 1) & ~(1U << H_COLLAPSED))

/*
 * The phases whose runs are counted by readings of HUGE_DEBUGFS: one before
 * a step, one after each iteration's part of each phase (ctx.mark).
 */
static const enum hbmb_phase huge_phase[] = { SEQ_FAULT_HUGE, REREAD_HUGE, REMAP_HUGE };
#define NHP (sizeof(huge_phase) / sizeof(huge_phase[0]))

static char huge_param[8];		/* HUGE_PARAM's value, "" if there is none */
static int huge_dbg;			/* HUGE_DEBUGFS read around every run so far */
static int huge_collapsed;		/* it has a "collapsed" line */
static uint64_t huge_delta[NHP][MAX_PASSES][NHUGE];	/* per pass; H_LIVE: after its last run */
static uint64_t huge_runs[NHP][MAX_PASSES];		/* regions it faulted per pass */
static uint64_t huge_last[NHUGE];	/* the last reading in the step that runs */
static unsigned int huge_pass;		/* that step's pass */

static void restore(void)
{
	if (budget_saved)
		hbm_set_global_u64("cache_budget_pages", old_budget);
	if (window_saved)
		hbm_set_global_u64(WINDOW_PARAM, old_window);
	for (int i = hbm_nodeset_first(&ctx.knobs); i >= 0; i = hbm_nodeset_next(&ctx.knobs, i)) {
		hbm_node_knob((unsigned int)i, "latency_us", old_latency[i]);
		hbm_node_knob((unsigned int)i, "bandwidth_mbps", old_bw[i]);
		hbm_node_knob((unsigned int)i, "nowait_copy", old_nowait[i]);
	}
}

/* Zero added latency and no bandwidth cap on every simulated bench node. */
static void sim_knobs(const char transport[][16])
{
	if (access(HBM_DEBUGFS, F_OK))
		return;
	for (int i = hbm_nodeset_first(&ctx.nodes); i >= 0; i = hbm_nodeset_next(&ctx.nodes, i)) {
		if (strcmp(transport[i], "sim") ||
		    hbm_readf_u64(&old_latency[i], HBM_DEBUGFS "/node%d/latency_us", i))
			continue;
		hbm_readf_u64(&old_bw[i], HBM_DEBUGFS "/node%d/bandwidth_mbps", i);
		if (hbm_readf_u64(&old_nowait[i], HBM_DEBUGFS "/node%d/nowait_copy", i))
			old_nowait[i] = 1;
		hbm_nodeset_set(&ctx.knobs, (unsigned int)i);
		hbm_node_knob((unsigned int)i, "latency_us", 0);
		hbm_node_knob((unsigned int)i, "bandwidth_mbps", 0);
	}
}

/*
 * The counters of HUGE_DEBUGFS: 0, or -errno (-EINVAL: not every one but
 * "collapsed" is there).  *collapsed: whether "collapsed" is.
 */
static int huge_read(uint64_t v[NHUGE], int *collapsed)
{
	char buf[512], name[32], *line, *save;
	unsigned long long x;
	unsigned int seen = 0;
	int e = hbm_read_str(HUGE_DEBUGFS, buf, sizeof(buf));

	if (e)
		return e;
	v[H_COLLAPSED] = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%31s %llu", name, &x) != 2)
			continue;
		for (unsigned int i = 0; i < NHUGE; i++)
			if (!strcmp(name, huge_name[i])) {
				v[i] = x;
				seen |= 1U << i;
			}
	}
	if (collapsed)
		*collapsed = !!(seen & (1U << H_COLLAPSED));
	return (seen & HUGE_NEEDED) == HUGE_NEEDED ? 0 : -EINVAL;
}

static void huge_unreadable(int e)
{
	printf("note: %s: %s: seq_fault_huge, reread_huge and remap_huge run, but how many "
	       "PMDs they mapped is not shown\n",
	       HUGE_DEBUGFS, e == -EINVAL ? "not the counters expected" : strerror(-e));
	huge_dbg = 0;
}

/* Its index in huge_phase[], or -1. */
static int huge_index(enum hbmb_phase ph)
{
	for (unsigned int i = 0; i < NHP; i++)
		if (huge_phase[i] == ph)
			return (int)i;
	return -1;
}

/*
 * Whether seq_fault_huge, reread_huge and remap_huge run: the module has
 * HUGE_PARAM.  Notes what keeps their mappings from PMDs: the parameter
 * off, no whole 2 MiB piece in a region or in a chunk, a node whose
 * transport waits for its copies (seq_fault_huge only: reread_huge's and
 * remap_huge's pieces are cached already).
 */
static int huge_setup(const char transport[][16])
{
	uint64_t cs = hbmb_chunk_size(&ctx), v[NHUGE];
	int e = hbm_read_str(HUGE_PARAM, huge_param, sizeof(huge_param));

	if (e) {
		huge_param[0] = '\0';
		printf("note: %s: %s: the module has no huge mappings; seq_fault_huge, "
		       "reread_huge and remap_huge are skipped\n", HUGE_PARAM, strerror(-e));
		return 0;
	}
	if (strcmp(huge_param, "Y"))
		printf("note: huge_mappings is %s: seq_fault_huge, reread_huge and remap_huge "
		       "map 4 KiB pages only\n", huge_param);
	if (ctx.size < HBMB_HUGE)
		printf("note: a region of %llu KiB holds no whole 2 MiB piece: seq_fault_huge, "
		       "reread_huge and remap_huge map 4 KiB pages only\n",
		       (unsigned long long)(ctx.size >> 10));
	else if (cs < HBMB_HUGE)
		printf("note: regions of %llu KiB over %d node(s) have %llu KiB chunks, under "
		       "2 MiB: seq_fault_huge, reread_huge and remap_huge map 4 KiB pages only "
		       "(a larger --size or fewer nodes)\n",
		       (unsigned long long)(ctx.size >> 10), hbm_nodeset_count(&ctx.nodes),
		       (unsigned long long)(cs >> 10));
	for (int i = hbm_nodeset_first(&ctx.nodes); i >= 0; i = hbm_nodeset_next(&ctx.nodes, i))
		if (strcmp(transport[i], "sim") && strcmp(transport[i], "shm"))
			printf("note: node %d's transport %s waits for its copies: "
			       "seq_fault_huge maps 4 KiB pages of its chunks\n", i, transport[i]);
	e = huge_read(v, &huge_collapsed);
	if (e) {
		huge_unreadable(e);
	} else {
		huge_dbg = 1;
		if (!huge_collapsed)
			printf("note: %s has no \"collapsed\" line (a module that does not gather "
			       "cached pieces): reread_huge and remap_huge run, their collapsed "
			       "pieces are not shown\n", HUGE_DEBUGFS);
	}
	return 1;
}

/*
 * ctx.mark while a counted step runs: what HUGE_DEBUGFS counted since the
 * last reading, added to ph's counts of the step's pass.
 */
static void huge_mark(enum hbmb_phase ph)
{
	int hp = huge_index(ph), e;
	uint64_t h[NHUGE];

	if (hp < 0 || !huge_dbg)
		return;
	e = huge_read(h, NULL);
	if (e) {
		huge_unreadable(e);
		return;
	}
	for (unsigned int i = 0; i < NHUGE; i++)
		huge_delta[hp][huge_pass][i] = i == H_LIVE ? h[i] :
					       huge_delta[hp][huge_pass][i] + (h[i] - huge_last[i]);
	memcpy(huge_last, h, sizeof(h));
}

/*
 * One step of pass k: ph into *m, and remap_huge into *then if not NULL
 * (ph is reread_huge).  HUGE_DEBUGFS read before a step of seq_fault_huge
 * or reread_huge, then by huge_mark() after each iteration's part of each.
 */
static int run_step(unsigned int k, enum hbmb_phase ph, struct hbmb_meas *m,
		    struct hbmb_meas *then)
{
	int hp = huge_index(ph), e;

	ctx.mark = NULL;
	if (hp >= 0 && huge_dbg) {
		e = huge_read(huge_last, NULL);
		if (e) {
			huge_unreadable(e);
		} else {
			huge_pass = k;
			ctx.mark = huge_mark;
		}
	}
	e = hbmb_run(&ctx, ph, m, then);
	ctx.mark = NULL;
	if (e)
		return -1;
	if (hp < 0)
		return 0;
	huge_runs[hp][k] += ctx.iters;
	if (then)
		huge_runs[huge_index(REMAP_HUGE)][k] += ctx.iters;
	return 0;
}

/*
 * What huge_phase[hp] did over the passes: a human line, or key=value lines
 * (seq_fault_huge's "huge.NAME", reread_huge's "huge.reread_huge.NAME",
 * remap_huge's "huge.remap_huge.NAME").
 */
static void print_huge_of(unsigned int hp, unsigned int passes, int kv)
{
	uint64_t sum[NHUGE] = { 0 }, pieces = 0;
	const char *name = hbmb_phase_name[huge_phase[hp]];
	char pre[48];

	if (!hbmb_res[huge_phase[hp]].ran || !huge_dbg)
		return;
	for (unsigned int k = 0; k < passes; k++) {
		for (unsigned int i = 0; i < NHUGE; i++)
			sum[i] = i == H_LIVE ? huge_delta[hp][k][i] : sum[i] + huge_delta[hp][k][i];
		pieces += huge_runs[hp][k] * (ctx.size / HBMB_HUGE);
	}
	snprintf(pre, sizeof(pre), "huge.%s%s", hp ? name : "", hp ? "." : "");
	if (kv) {
		printf("%spieces=%llu\n", pre, (unsigned long long)pieces);
		for (unsigned int i = 0; i < NHUGE; i++)
			if (i != H_COLLAPSED || huge_collapsed)
				printf("%s%s=%llu\n", pre, huge_name[i], (unsigned long long)sum[i]);
		for (unsigned int k = 0; k < passes; k++) {
			printf("%spass%u.mapped=%llu\n", pre, k + 1,
			       (unsigned long long)huge_delta[hp][k][H_MAPPED]);
			if (huge_phase[hp] != SEQ_FAULT_HUGE && huge_collapsed)
				printf("%spass%u.collapsed=%llu\n", pre, k + 1,
				       (unsigned long long)huge_delta[hp][k][H_COLLAPSED]);
		}
		return;
	}
	printf("huge %s", name);
	if (huge_phase[hp] != SEQ_FAULT_HUGE && huge_collapsed) {
		printf(" pieces collapsed:");
		for (unsigned int k = 0; k < passes; k++)
			printf(" pass%u %llu", k + 1,
			       (unsigned long long)huge_delta[hp][k][H_COLLAPSED]);
		printf(";");
	}
	printf(" PMDs mapped:");
	for (unsigned int k = 0; k < passes; k++)
		printf(" pass%u %llu", k + 1, (unsigned long long)huge_delta[hp][k][H_MAPPED]);
	printf("; total %llu for %llu 2 MiB pieces; created %llu", (unsigned long long)sum[H_MAPPED],
	       (unsigned long long)pieces, (unsigned long long)sum[H_CREATED]);
	if (huge_collapsed)
		printf(", collapsed %llu", (unsigned long long)sum[H_COLLAPSED]);
	printf(", alloc_failed %llu\n", (unsigned long long)sum[H_ALLOC_FAILED]);
}

/* The PMDs of seq_fault_huge, reread_huge, remap_huge: human lines, or key=value lines. */
static void print_huge(unsigned int passes, int kv)
{
	for (unsigned int hp = 0; hp < NHP; hp++)
		print_huge_of(hp, passes, kv);
}

static double mbps_of(uint64_t bytes, uint64_t ns)
{
	return ns ? (double)bytes / ((double)ns / 1e9) / 1e6 : 0;
}

static double mbps(enum hbmb_phase ph)
{
	return mbps_of(hbmb_res[ph].bytes, hbmb_res[ph].total_ns);
}

static double metric(enum hbmb_phase ph, const struct hbmb_meas *m, enum metric k)
{
	switch (k) {
	case MBPS:
		return mbps_of(m->bytes, m->total_ns);
	case P50:
		return (double)hbmb_percentile(ph, m->lat_from, m->lat_to, 50);
	case P99:
		return (double)hbmb_percentile(ph, m->lat_from, m->lat_to, 99);
	case SYNC_MBPS:
		return mbps_of(m->bytes, m->sync_ns);
	default:
		return (double)m->total_ns;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * A clock reading dearer than this (the HPET under TCG: 1-3 us) is a large
 * part of what a page costs (a warm copy of one: about 1.5-3 us there).
 */
#define CLOCK_DEAR_NS	500

/* What one hbm_now_ns() costs: the median gap between back-to-back reads. */
static uint64_t clock_read_ns(void)
{
	enum { N = 1001 };
	static uint64_t t[N];

	for (unsigned int i = 0; i < N; i++)
		t[i] = hbm_now_ns();
	for (unsigned int i = 0; i + 1 < N; i++)
		t[i] = t[i + 1] - t[i];
	qsort(t, N - 1, sizeof(t[0]), cmp_u64);
	return t[(N - 1) / 2];
}

static void print_row(enum hbmb_phase ph)
{
	struct hbmb_result *r = &hbmb_res[ph];
	double secs = (double)r->total_ns / 1e9;

	if (!r->ran || !r->total_ns)
		return;
	if (!r->n) {
		printf("%-16s %10s %10.1f %10s %10s %10s\n", hbmb_phase_name[ph], "-",
		       (double)r->bytes / secs / 1e6, "-", "-", "-");
		return;
	}
	printf("%-16s %10.0f %10.1f %10llu %10llu %10llu\n", hbmb_phase_name[ph],
	       (double)r->n / secs, (double)r->bytes / secs / 1e6,
	       (unsigned long long)hbmb_percentile(ph, 0, r->n, 50),
	       (unsigned long long)hbmb_percentile(ph, 0, r->n, 99),
	       (unsigned long long)hbmb_percentile(ph, 0, r->n, 99.9));
}

/*
 * The pair work_2x/local_2x, split: each side's part with the pages in
 * order and its random part, in ms per pass and page faults per page, and
 * work_2x's random part in units of local_2x's whole time (what the goal
 * has left for it once the part in order is paid).
 */
static void print_work_parts(unsigned int passes, int kv)
{
	static const char *const side[2] = { "work_2x", "local_2x" };
	unsigned int pr;

	for (pr = 0; pr < NPAIR; pr++)
		if (pairs[pr].a == WORK_2X && pairs[pr].b == LOCAL_2X)
			break;
	if (pr == NPAIR || !meas[0][pr][0].ran || !meas[0][pr][1].ran)
		return;
	for (unsigned int k = 0; k < passes; k++) {
		const struct hbmb_meas *w = &meas[k][pr][0], *l = &meas[k][pr][1];
		double pages = (double)ctx.npages * (double)ctx.iters;

		for (int i = 0; i < 2; i++) {
			const struct hbmb_meas *m = i ? l : w;
			double in_ms = (double)m->inorder_ns / 1e6;
			double rand_ms = (double)(m->total_ns - m->inorder_ns) / 1e6;
			double in_fpp = (double)m->inorder_faults / pages;
			double rand_fpp = (double)m->random_faults / pages;

			if (kv) {
				printf("work.%s.pass%u.inorder_ms=%.1f\nwork.%s.pass%u.random_ms=%.1f\n"
				       "work.%s.pass%u.inorder_faults_per_page=%.2f\n"
				       "work.%s.pass%u.random_faults_per_page=%.2f\n",
				       side[i], k + 1, in_ms, side[i], k + 1, rand_ms,
				       side[i], k + 1, in_fpp, side[i], k + 1, rand_fpp);
				continue;
			}
			printf("%s%s: in order %.0f ms (%.2f faults/page), random %.0f ms "
			       "(%.2f faults/page)", i ? "; " : "", side[i], in_ms, in_fpp,
			       rand_ms, rand_fpp);
		}
		if (!kv)
			printf("; work_2x random part / local_2x %.2f  [pass%u]\n",
			       l->total_ns ? (double)(w->total_ns - w->inorder_ns) /
					     (double)l->total_ns : 0, k + 1);
	}
}

/* Every goal of a pair that ran: a human line, then its key=value lines. */
static void print_goals(unsigned int passes, int kv)
{
	for (unsigned int g = 0; g < NGOAL; g++) {
		const struct goal *gl = &goals[g];
		const struct pair *p = &pairs[gl->pair];
		double r[MAX_PASSES], s[MAX_PASSES], va[MAX_PASSES], vb[MAX_PASSES], med;
		unsigned int met = 0;

		if (!meas[0][gl->pair][0].ran)
			continue;
		for (unsigned int k = 0; k < passes; k++) {
			double a = metric(p->a, &meas[k][gl->pair][0], gl->metric);
			double b = metric(p->b, &meas[k][gl->pair][1], gl->metric);

			va[k] = a;
			vb[k] = b;
			r[k] = s[k] = b > 0 ? a / b : 0;
			met += gl->at_most ? r[k] <= gl->target : r[k] >= gl->target;
		}
		qsort(s, passes, sizeof(s[0]), cmp_double);
		med = passes % 2 ? s[passes / 2] : (s[passes / 2 - 1] + s[passes / 2]) / 2;
		if (kv) {
			for (unsigned int k = 0; k < passes; k++)
				printf("goal.%s.pass%u=%.3f\ngoal.%s.pass%u.phase=%.1f\n"
				       "goal.%s.pass%u.baseline=%.1f\n", gl->key, k + 1, r[k],
				       gl->key, k + 1, va[k], gl->key, k + 1, vb[k]);
			printf("goal.%s.min=%.3f\ngoal.%s.median=%.3f\n", gl->key, s[0], gl->key, med);
			if (gl->target > 0)
				printf("goal.%s.target=%s%.2f\ngoal.%s.met=%u/%u\n", gl->key,
				       gl->at_most ? "<=" : ">=", gl->target, gl->key, met, passes);
			continue;
		}
		if (gl->target > 0)
			printf("goal %s/%s %s %s %.2f:", hbmb_phase_name[p->a], hbmb_phase_name[p->b],
			       metric_name[gl->metric], gl->at_most ? "<=" : ">=", gl->target);
		else
			printf("ratio %s/%s %s:", hbmb_phase_name[p->a], hbmb_phase_name[p->b],
			       metric_name[gl->metric]);
		for (unsigned int k = 0; k < passes; k++)
			printf(" pass%u %.2f", k + 1, r[k]);
		printf("; min %.2f median %.2f", s[0], med);
		if (gl->target > 0)
			printf("; met in %u/%u", met, passes);
		printf("\n");
	}
}

static void usage(FILE *f, const char *argv0)
{
	fprintf(f, "usage: %s [--size SIZE] [--node N | --nodes LIST] [--passes N] [--iterations N]\n"
		"          [--evict] [--workload] [--threads N] [--window PAGES]\n"
		"          [--replicas K [--only-replicas]]\n"
		"       %s --regions N [--node N | --nodes LIST]\n"
		"  --size SIZE       bytes per region (default 8M; k/M/G suffixes)\n"
		"  --node N          use remote node N (0..1023, not this node's id; any transport)\n"
		"  --nodes LIST      use nodes, e.g. 1,3-5,700 (default: every remote node up)\n"
		"  --passes N        passes over every pair, the odd ones phase first, the even\n"
		"                    ones baseline first (1..%d, default 2)\n"
		"  --iterations N    runs of each phase per pass (1..1000, default 3)\n"
		"  --evict           add seq_fault_evict: the cache budget at 1/4 of the region\n"
		"  --workload        add work_2x against local_2x: the cache budget at 1/2\n"
		"  --threads N       add seq_fault_mt, rand_fault_mt and anon_fault_mt with N\n"
		"                    threads (2..%d)\n"
		"  --window PAGES    set " WINDOW_PARAM " (the fetch window bound) for the\n"
		"                    run, restored at exit\n"
		"  --replicas K      add wb_k1..wb_kK: write + REGION_SYNC of regions with\n"
		"                    1..K copies per chunk (2..4; K bench nodes at least),\n"
		"                    each k >= 2 against k = 1\n"
		"  --only-replicas   with --replicas: only those pairs\n"
		"  --regions N       instead: kernel memory per region, N one-page regions,\n"
		"                    against a one-page memfd\n"
		"Unless --only-replicas, seq_fault_huge (seq_fault through a read-only, 2 MiB-\n"
		"aligned MADV_HUGEPAGE mapping) runs against memcpy_warm and against seq_fault,\n"
		"reread_huge (a region cached whole in 4 KiB pages, mapped again as\n"
		"seq_fault_huge maps) against reread (mapped again in 4 KiB pages), and\n"
		"remap_huge (right after reread_huge, the same region unmapped and mapped\n"
		"again as seq_fault_huge maps: its pieces now cached whole) against the same\n"
		"reread, when the module has a huge_mappings parameter\n",
		argv0, argv0, MAX_PASSES, MAX_THREADS);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "node", required_argument, NULL, 'n' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "passes", required_argument, NULL, 'p' },
		{ "iterations", required_argument, NULL, 'i' },
		{ "evict", no_argument, NULL, 'e' },
		{ "workload", no_argument, NULL, 'w' },
		{ "threads", required_argument, NULL, 't' },
		{ "window", required_argument, NULL, 'W' },
		{ "regions", required_argument, NULL, 'r' },
		{ "replicas", required_argument, NULL, 'R' },
		{ "only-replicas", no_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v, nregions = 0, passes = 2, window = 0;
	struct hbm_node nodes[HBMPOOL_MAX_NODES];
	int c, n, self, all_sim = 1, only_repl = 0, want[NNEED] = { 1, 1, 0, 0, 0, 0, 0, 0, 0 };
	char transport[HBMPOOL_MAX_NODES][16];
	char list[256], clocksource[64];
	uint64_t clock_ns;

	ctx.size = 8ULL << 20;
	ctx.iters = 3;
	ctx.threads = 1;
	while ((c = getopt_long(argc, argv, "s:n:N:p:i:ewt:W:r:R:Oh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (hbm_parse_size(optarg, &ctx.size) || !ctx.size || ctx.size % HBMB_PAGE ||
			    ctx.size / HBMB_PAGE > UINT32_MAX)
				return hbm_cli_bad("size", optarg, "(a non-zero multiple of 4 KiB)");
			break;
		case 'n':
			if (hbm_parse_u64(optarg, &v) || v >= HBMPOOL_MAX_NODES)
				return hbm_cli_bad("node", optarg, "(0..1023)");
			hbm_nodeset_zero(&ctx.nodes);
			hbm_nodeset_set(&ctx.nodes, (unsigned int)v);
			break;
		case 'N':
			if (hbm_parse_nodelist(optarg, 0, HBMPOOL_MAX_NODES - 1, &ctx.nodes))
				return hbm_cli_bad("nodes", optarg, "(ids 0..1023, e.g. 1,3-5)");
			break;
		case 'p':
			if (hbm_parse_u64(optarg, &passes) || !passes || passes > MAX_PASSES)
				return hbm_cli_bad("passes", optarg, "(1..20)");
			break;
		case 'i':
			if (hbm_parse_u64(optarg, &ctx.iters) || !ctx.iters || ctx.iters > 1000)
				return hbm_cli_bad("iterations", optarg, "(1..1000)");
			break;
		case 'e':
			want[EVICT] = 1;
			break;
		case 'w':
			want[WORKLOAD] = 1;
			break;
		case 't':
			if (hbm_parse_u64(optarg, &v) || v < 2 || v > MAX_THREADS)
				return hbm_cli_bad("threads", optarg, "(2..64)");
			ctx.threads = (unsigned int)v;
			want[THREADS] = 1;
			break;
		case 'W':
			if (hbm_parse_u64(optarg, &window) || !window || window > UINT32_MAX)
				return hbm_cli_bad("window", optarg, "(pages, 1 or more)");
			break;
		case 'r':
			if (hbm_parse_u64(optarg, &nregions) || !nregions || nregions > 1000000)
				return hbm_cli_bad("regions", optarg, "(1..1000000)");
			break;
		case 'R':
			if (hbm_parse_u64(optarg, &v) || v < 2 || v > HBMPOOL_REPLICAS_MAX)
				return hbm_cli_bad("replicas", optarg, "(2..4)");
			ctx.replicas = (unsigned int)v;
			break;
		case 'O':
			only_repl = 1;
			break;
		default:	/* 'h', or an unknown option */
			return hbm_cli_usage(usage, argv[0], c == 'h');
		}
	}
	if (optind < argc) {
		fprintf(stderr, "hbmbench: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (only_repl && !ctx.replicas) {
		fprintf(stderr, "hbmbench: --only-replicas needs --replicas K\n");
		return 2;
	}
	for (unsigned int k = 2; k <= ctx.replicas; k++)
		want[REPL2 + k - 2] = 1;
	if (only_repl)
		for (int w = 0; w < REPL2; w++)
			want[w] = 0;
	ctx.npages = ctx.size / HBMB_PAGE;
	if (want[THREADS] && ctx.npages < ctx.threads) {
		fprintf(stderr, "hbmbench: --threads %u needs a region of at least as many pages\n",
			ctx.threads);
		return 2;
	}
	for (unsigned int g = 0; g < NGOAL; g++)
		if (goals[g].per_thread)
			goals[g].target *= ctx.threads;

	n = hbm_list_nodes(nodes, HBMPOOL_MAX_NODES);
	if (n < 0) {
		fprintf(stderr, "hbmbench: %s/nodes: %s (is hbmpool.ko loaded?)\n", HBM_SYSFS, strerror(-n));
		return 1;
	}
	ctx.dev = hbm_dev_open();
	if (ctx.dev < 0) {
		fprintf(stderr, "hbmbench: open %s: %s\n", HBM_DEV, strerror(-ctx.dev));
		return 1;
	}
	self = hbm_self_node(ctx.dev);
	if (self < 0) {
		fprintf(stderr, "hbmbench: GET_FEATURES: %s\n", strerror(-self));
		return 1;
	}
	if (hbm_nodeset_test(&ctx.nodes, (unsigned int)self)) {
		fprintf(stderr, "hbmbench: node %d is this node, not a remote one\n", self);
		return 2;
	}
	if (hbm_nodeset_empty(&ctx.nodes)) {
		for (int i = 0; i < n; i++)
			if (nodes[i].id != (uint32_t)self && !strcmp(nodes[i].state, "up"))
				hbm_nodeset_set(&ctx.nodes, nodes[i].id);
		if (hbm_nodeset_empty(&ctx.nodes)) {
			fprintf(stderr, "hbmbench: no remote node is up (hbmctl node add 1 capacity 64M distance 20)\n");
			return 1;
		}
	}
	if (nregions)
		return hbmb_regions(ctx.dev, &ctx.nodes, nregions);
	if (ctx.replicas > (unsigned int)hbm_nodeset_count(&ctx.nodes)) {
		fprintf(stderr, "hbmbench: --replicas %u needs as many bench nodes (%s)\n", ctx.replicas,
			hbm_nodeset_format(&ctx.nodes, list, sizeof(list)));
		return 2;
	}

	/* The transport of each bench node: sim-only phases need every one to be "sim". */
	memset(transport, 0, sizeof(transport));
	for (int i = 0; i < n; i++)
		if (nodes[i].id < HBMPOOL_MAX_NODES)
			snprintf(transport[nodes[i].id], sizeof(transport[0]), "%s",
				 nodes[i].transport[0] ? nodes[i].transport : "unknown");
	for (int i = hbm_nodeset_first(&ctx.nodes); i >= 0; i = hbm_nodeset_next(&ctx.nodes, i)) {
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

	atexit(restore);
	sim_knobs((const char (*)[16])transport);
	want[SIM] = !only_repl && all_sim && hbm_nodeset_equal(&ctx.knobs, &ctx.nodes);
	if (!want[SIM] && !only_repl)
		printf("note: not every bench node is simulated with debugfs knobs: the sim-only "
		       "phases pread_hbm (debugfs nodeN/hbm) and seq_fault_retry (nowait_copy 0) "
		       "are skipped\n");
	want[HUGE] = want[ALWAYS] && huge_setup((const char (*)[16])transport);
	if (hbm_global_u64("cache_budget_pages", &old_budget) == 0)
		budget_saved = 1;
	ctx.budget = 2 * ctx.npages + 64;
	if (hbm_set_global_u64("cache_budget_pages", ctx.budget)) {
		fprintf(stderr, "hbmbench: cannot raise cache_budget_pages to %llu\n",
			(unsigned long long)ctx.budget);
		return 1;
	}
	if (window) {
		int e;

		if (hbm_global_u64(WINDOW_PARAM, &old_window)) {
			fprintf(stderr, "hbmbench: --window: no %s/%s\n", HBM_SYSFS, WINDOW_PARAM);
			return 1;
		}
		e = hbm_set_global_u64(WINDOW_PARAM, window);
		if (e) {
			fprintf(stderr, "hbmbench: bad --window '%llu': the kernel refused %s: %s\n",
				(unsigned long long)window, WINDOW_PARAM, strerror(-e));
			return 2;
		}
		window_saved = 1;
	}

	/*
	 * Odd passes: every pair in order, phase first; even passes: all
	 * reversed.  A pair with a host has no steps of its own: its phase
	 * runs in the host's phase step, its baseline is the host's.
	 */
	for (unsigned int k = 0; k < passes; k++) {
		for (unsigned int s = 0; s < 2 * NPAIR; s++) {
			unsigned int step = k % 2 ? 2 * NPAIR - 1 - s : s;
			unsigned int pr = step / 2, side = step % 2;
			int rider = -1;

			if (!want[pairs[pr].need] || pairs[pr].host >= 0)
				continue;
			for (unsigned int q = 0; q < NPAIR; q++)
				if (pairs[q].host == (int)pr && want[pairs[q].need])
					rider = (int)q;
			if (run_step(k, side ? pairs[pr].b : pairs[pr].a, &meas[k][pr][side],
				     rider >= 0 && !side ? &meas[k][rider][0] : NULL))
				return 1;
			if (rider >= 0 && side)
				meas[k][rider][1] = meas[k][pr][1];
		}
	}

	printf("hbmbench: %llu KiB regions, nodes %s, %llu pass(es) x %llu iteration(s), "
	       "4 KiB pages, threads %u, %s %llu\n", (unsigned long long)(ctx.size >> 10),
	       hbm_nodeset_format(&ctx.nodes, list, sizeof(list)), (unsigned long long)passes,
	       (unsigned long long)ctx.iters, ctx.threads, WINDOW_PARAM,
	       (unsigned long long)(hbm_global_u64(WINDOW_PARAM, &v) ? 0 : v));
	if (hbm_read_str("/sys/devices/system/clocksource/clocksource0/current_clocksource",
			 clocksource, sizeof(clocksource)))
		snprintf(clocksource, sizeof(clocksource), "unknown");
	clock_ns = clock_read_ns();
	printf("hbmbench: clocksource %s, one clock reading %llu ns (every page is timed with two)\n",
	       clocksource, (unsigned long long)clock_ns);
	if (clock_ns > CLOCK_DEAR_NS)
		printf("note: a clock reading costs more than %u ns, about what a page costs: it is "
		       "in every phase and its baseline, and pulls every ratio towards 1 (boot the "
		       "VM with tsc=reliable)\n", CLOCK_DEAR_NS);
	printf("%-16s %10s %10s %10s %10s %10s\n", "phase", "pages/s", "MB/s", "p50_ns", "p99_ns", "p99.9_ns");
	for (int ph = 0; ph < HBMB_NPHASE; ph++)
		print_row((enum hbmb_phase)ph);
	printf("\n");
	print_goals((unsigned int)passes, 0);
	print_work_parts((unsigned int)passes, 0);
	print_huge((unsigned int)passes, 0);
	printf("\n");
	printf("clocksource=%s\nclock_read_ns=%llu\n", clocksource, (unsigned long long)clock_ns);
	for (int i = hbm_nodeset_first(&ctx.nodes); i >= 0; i = hbm_nodeset_next(&ctx.nodes, i))
		printf("transport.node%d=%s\n", i, transport[i]);
	if (!hbm_global_u64(WINDOW_PARAM, &v))
		printf("param.%s=%llu\n", WINDOW_PARAM, (unsigned long long)v);
	if (huge_param[0])
		printf("param.huge_mappings=%s\n", huge_param);
	printf("passes=%llu\niterations=%llu\nthreads=%u\nreplicas=%u\n", (unsigned long long)passes,
	       (unsigned long long)ctx.iters, ctx.threads, ctx.replicas);
	for (int ph = 0; ph < HBMB_NPHASE; ph++)
		if (hbmb_res[ph].ran)
			printf("mbps.%s=%.1f\n", hbmb_phase_name[ph], mbps((enum hbmb_phase)ph));
	for (int ph = WB_K1; ph <= WB_K4; ph++)
		if (hbmb_res[ph].ran)
			printf("sync_mbps.%s=%.1f\n", hbmb_phase_name[ph],
			       mbps_of(hbmb_res[ph].bytes, hbmb_res[ph].sync_ns));
	for (int ph = 0; ph < HBMB_NPHASE; ph++) {
		uint64_t nn = hbmb_res[ph].n;

		if (hbmb_res[ph].ran && nn)
			printf("lat.%s.p50_ns=%llu\nlat.%s.p99_ns=%llu\nlat.%s.p999_ns=%llu\n",
			       hbmb_phase_name[ph], (unsigned long long)hbmb_percentile(ph, 0, nn, 50),
			       hbmb_phase_name[ph], (unsigned long long)hbmb_percentile(ph, 0, nn, 99),
			       hbmb_phase_name[ph], (unsigned long long)hbmb_percentile(ph, 0, nn, 99.9));
	}
	if (hbmb_res[PREAD_HBM].ran) {
		printf("ratio.seq_fault_vs_pread=%.3f\n", mbps(SEQ_FAULT) / mbps(PREAD_HBM));
		printf("ratio.rand_fault_vs_pread=%.3f\n", mbps(RAND_FAULT) / mbps(PREAD_HBM));
	}
	if (hbmb_res[SEQ_FAULT].ran && hbmb_res[MEMCPY_WARM].ran)
		printf("ratio.seq_fault_vs_memcpy=%.3f\n", mbps(SEQ_FAULT) / mbps(MEMCPY_WARM));
	if (hbmb_res[SEQ_FAULT_HUGE].ran && hbmb_res[MEMCPY_WARM].ran)
		printf("ratio.seq_fault_huge_vs_memcpy=%.3f\n",
		       mbps(SEQ_FAULT_HUGE) / mbps(MEMCPY_WARM));
	if (hbmb_res[SEQ_FAULT_HUGE].ran && hbmb_res[SEQ_FAULT].ran)
		printf("ratio.seq_fault_huge_vs_seq_fault=%.3f\n",
		       mbps(SEQ_FAULT_HUGE) / mbps(SEQ_FAULT));
	if (hbmb_res[REREAD_HUGE].ran && hbmb_res[REREAD].ran)
		printf("ratio.reread_huge_vs_reread=%.3f\n", mbps(REREAD_HUGE) / mbps(REREAD));
	if (hbmb_res[REMAP_HUGE].ran && hbmb_res[REREAD].ran)
		printf("ratio.remap_huge_vs_reread=%.3f\n", mbps(REMAP_HUGE) / mbps(REREAD));
	if (hbmb_res[RAND_FAULT].ran && hbmb_res[MEMCPY_WARM].ran)
		printf("ratio.rand_fault_vs_memcpy=%.3f\n", mbps(RAND_FAULT) / mbps(MEMCPY_WARM));
	if (hbmb_res[SEQ_FAULT_RETRY].ran)
		printf("ratio.seq_fault_vs_seq_fault_retry=%.3f\n",
		       mbps(SEQ_FAULT) / mbps(SEQ_FAULT_RETRY));
	if (hbmb_res[EVICT_FAULT].ran)
		printf("ratio.evict_fault_vs_seq_fault=%.3f\n", mbps(EVICT_FAULT) / mbps(SEQ_FAULT));
	print_huge((unsigned int)passes, 1);
	print_goals((unsigned int)passes, 1);
	print_work_parts((unsigned int)passes, 1);
	close(ctx.dev);
	return 0;
}
