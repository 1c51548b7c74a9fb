/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hbmb: the measurements of tools/hbmbench (hbmb_phase.c) and its --regions
 * mode (hbmb_regions.c).  hbmbench.c parses the options, sets the knobs,
 * runs the phases in pairs over alternating passes and prints the summary.
 */
#ifndef HBMB_H
#define HBMB_H

#include <stdint.h>

#include "hbmsys.h"

#define HBMB_PAGE	4096ULL
#define HBMB_LINE	64ULL
#define HBMB_HUGE	(2ULL << 20)	/* what one PMD maps (4 KiB base pages) */

enum hbmb_phase {
	SEQ_FAULT, SEQ_FAULT_HUGE, REREAD, REREAD_HUGE, REMAP_HUGE, SEQ_FAULT_RETRY, RAND_FAULT,
	EVICT_FAULT, PREAD_HBM, MEMCPY_WARM, ANON_FAULT, SEQ_FAULT_MT, RAND_FAULT_MT, ANON_FAULT_MT,
	WORK_2X, LOCAL_2X,
	WB_K1, WB_K2, WB_K3, WB_K4,	/* write + sync, k = 1..4 copies (--replicas) */
	HBMB_NPHASE
};

extern const char *const hbmb_phase_name[HBMB_NPHASE];

/* Every run of a phase in this process (all passes): the table. */
struct hbmb_result {
	uint64_t *lat;		/* per-page ns; phases without them have n == 0 */
	uint64_t n, cap;
	uint64_t total_ns;	/* sum of the timed loops */
	uint64_t sync_ns;	/* of which REGION_SYNC (the wb_kN phases) */
	uint64_t bytes;
	int ran;
};

extern struct hbmb_result hbmb_res[HBMB_NPHASE];

/* One step: the iterations of one phase in one pass. */
struct hbmb_meas {
	uint64_t total_ns, sync_ns, bytes;
	uint64_t lat_from, lat_to;	/* its samples: hbmb_res[phase].lat[from..to) */
	/*
	 * work_2x, local_2x: the part with the pages in order (time, then
	 * the rest is the random part) and the page faults of each part
	 * (getrusage(), minor and major)
	 */
	uint64_t inorder_ns, inorder_faults, random_faults;
	int ran;
};

struct hbmb_ctx {
	int dev;
	uint64_t size, npages, iters;
	unsigned int threads;		/* of the _mt phases */
	struct hbm_nodeset nodes;	/* the bench nodes */
	struct hbm_nodeset knobs;	/* simulated bench nodes with debugfs knobs */
	uint64_t budget;		/* cache budget of the phases that do not evict */
	uint64_t seed;			/* of the random orders, advanced per use */
	unsigned int replicas;		/* --replicas: wb_k1..wb_kN, 0: none */
	/*
	 * If set, called out of the clock after each iteration's part of
	 * seq_fault_huge, reread_huge and remap_huge, with that phase: the
	 * parts of a step follow each other, so whatever happened since the
	 * previous call (or since the step began) belongs to ph.
	 */
	void (*mark)(enum hbmb_phase ph);
};

/*
 * Runs ph ctx->iters times (a fresh region or mapping each time), appends
 * its samples to hbmb_res[ph] and sums the step into *m.  then: NULL, or
 * for ph REREAD_HUGE only, each iteration runs remap_huge right after it on
 * the same region (remap_huge runs no other way), its samples appended to
 * hbmb_res[REMAP_HUGE] and summed into *then.  0, or -1 after a message on
 * stderr.
 */
int hbmb_run(struct hbmb_ctx *c, enum hbmb_phase ph, struct hbmb_meas *m, struct hbmb_meas *then);

/* The chunk size of the regions of the phases (2 MiB unless they are small). */
uint64_t hbmb_chunk_size(const struct hbmb_ctx *c);

/* A percentile of samples [from, to) of phase ph (sorts a copy); 0 if none. */
uint64_t hbmb_percentile(enum hbmb_phase ph, uint64_t from, uint64_t to, double p);

/* --regions N: kernel memory per region against a memfd; exit status. */
int hbmb_regions(int dev, const struct hbm_nodeset *nodes, uint64_t n);

#endif /* HBMB_H */
