// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpool counters: per-CPU where the fault path of every region meets
 * (one set per node, one global), summed on read; one plain atomic set per
 * region, which costs its size once instead of once per CPU.
 *
 * A fetched page is one sample of the fetch latency histogram, and a fetch
 * moves whole pages, so neither the pages nor their bytes are counted apart:
 * readers derive HBMPOOL_STAT_FETCHES from the histogram's total and
 * HBMPOOL_STAT_BYTES_FETCHED from that, and a fetch costs the fault path
 * one counter update per set, not three.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/percpu.h>
#include <linux/log2.h>
#include <linux/string.h>

#include "hbmpool.h"

struct hbmpool_counters hbmpool_global_stats;

/* Fills in the counters that follow from others (see above). */
static void hbmpool_stats_derive(u64 *out)
{
	u64 fetches = 0;
	int i;

	for (i = 0; i < HBMPOOL_LAT_BUCKETS; i++)
		fetches += out[HBMPOOL_STAT_LAT0 + i];
	out[HBMPOOL_STAT_FETCHES] = fetches;
	out[HBMPOOL_STAT_BYTES_FETCHED] = fetches << PAGE_SHIFT;
}

int hbmpool_counters_init(struct hbmpool_counters *c)
{
	c->pcpu = __alloc_percpu(sizeof(u64) * HBMPOOL_NR_STATS, sizeof(u64));
	return c->pcpu ? 0 : -ENOMEM;
}

void hbmpool_counters_free(struct hbmpool_counters *c)
{
	free_percpu(c->pcpu);
	c->pcpu = NULL;
}

void hbmpool_counters_read(const struct hbmpool_counters *c, u64 *out)
{
	int cpu, i;

	memset(out, 0, sizeof(u64) * HBMPOOL_NR_STATS);
	for_each_possible_cpu(cpu) {
		const u64 *v = per_cpu_ptr(c->pcpu, cpu);

		for (i = 0; i < HBMPOOL_NR_STATS; i++)
			out[i] += READ_ONCE(v[i]);
	}
	hbmpool_stats_derive(out);
}

void hbmpool_region_stats_read(const struct hbmpool_region_stats *rs, u64 *out)
{
	int i;

	for (i = 0; i < HBMPOOL_NR_STATS; i++)
		out[i] = atomic64_read(&rs->v[i]);
	hbmpool_stats_derive(out);
}

void hbmpool_count3(struct hbmpool_region_stats *region,
		    struct hbmpool_node *node, enum hbmpool_stat s, u64 n)
{
	if (region)
		atomic64_add(n, &region->v[s]);
	if (node)
		hbmpool_count(&node->stats, s, n);
	hbmpool_count(&hbmpool_global_stats, s, n);
}

void hbmpool_count_fetched(struct hbmpool_region_stats *region,
			   struct hbmpool_node *node, unsigned int nr, u64 ns)
{
	unsigned int b = ns ? ilog2(ns) : 0;
	enum hbmpool_stat lat;

	if (b >= HBMPOOL_LAT_BUCKETS)
		b = HBMPOOL_LAT_BUCKETS - 1;
	lat = HBMPOOL_STAT_LAT0 + b;
	hbmpool_count3(region, node, lat, nr);
}
