/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the hbmpool kselftests.  Tests include it after
 * kselftest_harness.h to get the fixture helpers at the end.  Functions taking "struct __test_metadata *_metadata"
 * may use ASSERT_*()/EXPECT_*() like a test body.
 *
 * Conventions of every test binary:
 *  - each binary owns a disjoint range of simulated node ids (see the
 *    HBMT_NODE_* of the .c file), so binaries never collide;
 *  - setup removes any leftover node with those ids (a previous run that
 *    crashed), creates its nodes, and saves cache_budget_pages and
 *    fetch_timeout_ms; teardown unmaps and closes the regions first, then
 *    removes the nodes and restores both knobs;
 *  - each binary ends with the harness's own TEST_HARNESS_MAIN; before it
 *    runs, a constructor here (hbmt_require_env) exits 4 (KSFT_SKIP) with a
 *    reason if not root or the module is not loaded.
 */
#ifndef HBMTEST_H
#define HBMTEST_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <linux/hbmpool.h>

#include "hbmlib.h"
#include "hbmsys.h"

#define HBMT_PAGE	4096ULL
#define HBMT_MIB	(1ULL << 20)
#define HBMT_MAX_NODES	8

/* One region: fd plus its whole-length MAP_SHARED mapping. */
struct hbmt_region {
	int fd;
	uint8_t *map;
	uint64_t len;
	uint32_t id;
};

/* What a fixture set up and must undo. */
struct hbmt_env {
	int devfd;
	int nnodes;
	unsigned int nodes[HBMT_MAX_NODES];
	uint64_t old_budget;
	uint64_t old_timeout;
	int knobs_saved;
};

/* NULL if the tests can run, else why not (not root, no module, ...). */
const char *hbmt_env_missing(void);
/* NULL if debugfs/hbmpool is there. */
const char *hbmt_debugfs_missing(void);

/*
 * Touch one u64 at addr.  Returns 0, or SIGBUS if the access raised SIGBUS
 * (then *fault_addr, if non-NULL, is the si_addr).  Thread-safe: each thread
 * has its own jump buffer.  Any other signal is left to its default action.
 */
int hbmt_probe_read(const volatile void *addr, uint64_t *val, void **fault_addr);
int hbmt_probe_write(volatile void *addr, uint64_t val, void **fault_addr);

/* Create a region and mmap it whole (MAP_SHARED, RW).  0 or -errno. */
int hbmt_region_open(struct hbmt_region *r, int devfd, uint64_t len,
		     uint64_t chunk, uint32_t policy,
		     const struct hbm_nodeset *nodes, uint32_t preferred,
		     const char *name);
/* The same with a prepared request (e.g. with replicas).  0 or -errno. */
int hbmt_region_open_rc(struct hbmt_region *r, int devfd,
			struct hbmpool_region_create *rc);
/*
 * For a test binary's constructor: a kernel without @feature (an
 * HBMPOOL_FEAT_* bit) skips the whole binary (kselftest exit 4), saying
 * @why; an unusable environment is left to the fixtures to report.
 */
void hbmt_require_feature(uint64_t feature, const char *why);
/* munmap + close; safe on a zeroed or already closed region. */
void hbmt_region_close(struct hbmt_region *r);

/*
 * Region stats once they stop moving (two reads 50 ms apart agree; the
 * background evictor may still be running right after a burst of faults).
 * Gives up after ~5 s and returns the last read.  0 or -errno.
 */
int hbmt_stats_settled(int fd, struct hbmpool_stats *st);
/* Same for a sysfs stats/ directory. */
int hbmt_stats_dir_settled(const char *dir, struct hbmpool_stats *st);

/* Poll a global sysfs counter until cond holds or timeout_ms passes. */
enum hbmt_cmp { HBMT_EQ, HBMT_LE, HBMT_GE };
int hbmt_wait_global(const char *name, enum hbmt_cmp cmp, uint64_t want,
		     unsigned int timeout_ms, uint64_t *last);
int hbmt_wait_node(unsigned int id, const char *attr, enum hbmt_cmp cmp,
		   uint64_t want, unsigned int timeout_ms, uint64_t *last);
/* Poll until path does not exist; 0 or -ETIMEDOUT. */
int hbmt_wait_gone(const char *path, unsigned int timeout_ms);

/* A field of /proc/meminfo in kB, or -errno. */
int64_t hbmt_meminfo_kb(const char *field);

/*
 * Whether the running kernel was built with option ("CONFIG_KASAN"): 1, 0,
 * or -ENOENT when it does not say (no /proc/config.gz).
 */
int hbmt_kernel_config(const char *option);

void hbmt_sleep_ms(unsigned int ms);

/* ---- fixture helpers: only with the harness (hbmtest.c has none) ---- */
#ifdef __KSELFTEST_HARNESS_H

/* Skip-or-prepare: open /dev/hbmpool, save and set the knobs. */
static inline void hbmt_env_setup(struct __test_metadata *_metadata,
				  struct hbmt_env *e, uint64_t budget,
				  uint64_t timeout_ms)
{
	const char *why = hbmt_env_missing();

	memset(e, 0, sizeof(*e));
	e->devfd = -1;
	if (why)
		SKIP(return, "%s", why);
	e->devfd = hbm_dev_open();
	ASSERT_LE(0, e->devfd) TH_LOG("open %s: %s", HBM_DEV, strerror(-e->devfd));
	ASSERT_EQ(0, hbm_global_u64("cache_budget_pages", &e->old_budget));
	ASSERT_EQ(0, hbm_global_u64("fetch_timeout_ms", &e->old_timeout));
	e->knobs_saved = 1;
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", budget));
	ASSERT_EQ(0, hbm_set_global_u64("fetch_timeout_ms", timeout_ms));
}

/* Create simulated node id (removing a leftover one first). */
static inline void hbmt_env_node(struct __test_metadata *_metadata,
				 struct hbmt_env *e, unsigned int id,
				 unsigned int cap_mib, unsigned int distance,
				 const char *link)
{
	int ret;

	ASSERT_LT(e->nnodes, HBMT_MAX_NODES);
	hbm_node_del(id);	/* leftover of a crashed run; ENODEV is normal */
	ret = hbm_node_add(id, cap_mib, distance, link);
	ASSERT_EQ(0, ret) TH_LOG("new_node %u %u %u: %s", id, cap_mib, distance,
				 strerror(-ret));
	e->nodes[e->nnodes++] = id;
#ifdef HBMT_SLOW_PATH
	/* see ../Makefile: this build exercises the retry path */
	ret = hbm_node_knob(id, "nowait_copy", 0);
	ASSERT_EQ(0, ret) TH_LOG("node %u: nowait_copy=0: %s", id, strerror(-ret));
#endif
}

/* Mirror of setup; the caller has closed every region already. */
static inline void hbmt_env_teardown(struct __test_metadata *_metadata,
				     struct hbmt_env *e)
{
	for (int i = e->nnodes - 1; i >= 0; i--) {
		int ret = hbm_node_del(e->nodes[i]);

		/* ENODEV: the test removed it itself. */
		EXPECT_TRUE(ret == 0 || ret == -ENODEV)
			TH_LOG("del_node %u: %s", e->nodes[i], strerror(-ret));
	}
	if (e->knobs_saved) {
		EXPECT_EQ(0, hbm_set_global_u64("cache_budget_pages", e->old_budget));
		EXPECT_EQ(0, hbm_set_global_u64("fetch_timeout_ms", e->old_timeout));
	}
	if (e->devfd >= 0)
		close(e->devfd);
	e->devfd = -1;
}

/*
 * Before any test and before the harness's main(): without root or without
 * the module, exit 4 (KSFT_SKIP) with the reason, as "TAP version 13" and
 * "1..0 # SKIP why" (tools/rig/run-tests.sh counts that as one skip).
 * A constructor, so that every test binary ends with plain TEST_HARNESS_MAIN.
 */
static void __attribute__((constructor)) hbmt_require_env(void)
{
	const char *why = hbmt_env_missing();

	if (why) {
		ksft_print_header();
		ksft_exit_skip("%s\n", why);
	}
}

#endif /* __KSELFTEST_HARNESS_H */

#endif /* HBMTEST_H */
