// SPDX-License-Identifier: GPL-2.0
/*
 * hbmdemo: show hbmpool working end to end.
 *
 * Creates a region 4x the current cache budget, interleaved over every
 * remote node that is up (with --replicas K, K copies of every chunk on
 * distinct nodes), fills it with an address-dependent pattern, verifies
 * every byte, syncs, and prints the placement per node and the region's
 * counters with fetch-latency percentiles.
 *
 * usage: hbmdemo [--chunk SIZE] [--seed N] [--replicas K]
 * Exit 0 only if every byte verified and SYNC succeeded; 1 otherwise.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hbmcli.h"
#include "hbmlib.h"
#include "hbmsys.h"

static void usage(FILE *f, const char *argv0)
{
	fprintf(f, "usage: %s [--chunk SIZE] [--seed N] [--replicas K]\n"
		"  --chunk SIZE    chunk size (default: the largest power of two <= region/(2*nodes), min 4k)\n"
		"  --seed N        pattern seed (default 0x4842)\n"
		"  --replicas K    copies of every chunk, on K distinct nodes, 1..%d (default 1)\n",
		argv0, HBMPOOL_REPLICAS_MAX);
}

static void hist_pct(const struct hbmpool_stats *st, double p, char *buf, size_t len)
{
	int b = hbm_hist_percentile(st->lat_hist, HBMPOOL_LAT_BUCKETS, p);

	if (b < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "< %llu ns", 1ULL << (b + 1));
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "chunk", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 's' },
		{ "replicas", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct hbm_node nodes[HBMPOOL_MAX_NODES];
	struct hbmpool_features feat;
	struct hbmpool_region_create rc;
	struct hbmpool_region_info ri;
	struct hbmpool_chunk_info *ch;
	struct hbmpool_stats st;
	struct hbmpool_range rg;
	uint64_t budget, len, chunk = 0, seed = 0x4842, bad_off = 0, replicas = 1;
	struct hbm_nodeset remote;
	size_t nbad;
	char hs[32], p50[32], p99[32], p999[32], list[256];
	int n, nremote = 0, dev, fd, ret, c, self, failed = 0;
	uint8_t *m;

	while ((c = getopt_long(argc, argv, "c:s:r:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (hbm_parse_size(optarg, &chunk))
				return hbm_cli_bad("chunk", optarg, NULL);
			break;
		case 's':
			if (hbm_parse_u64(optarg, &seed))
				return hbm_cli_bad("seed", optarg, NULL);
			break;
		case 'r':
			if (hbm_parse_u64(optarg, &replicas) || replicas < 1 ||
			    replicas > HBMPOOL_REPLICAS_MAX) {
				snprintf(list, sizeof(list), "(copies of every chunk: 1..%d)",
					 HBMPOOL_REPLICAS_MAX);
				return hbm_cli_bad("replicas", optarg, list);
			}
			break;
		default:	/* 'h', or an unknown option */
			return hbm_cli_usage(usage, argv[0], c == 'h');
		}
	}

	ret = hbm_global_u64("cache_budget_pages", &budget);
	if (ret) {
		fprintf(stderr, "hbmdemo: %s/cache_budget_pages: %s (is hbmpool.ko loaded?)\n",
			HBM_SYSFS, strerror(-ret));
		return 1;
	}
	n = hbm_list_nodes(nodes, HBMPOOL_MAX_NODES);
	if (n < 0) {
		fprintf(stderr, "hbmdemo: %s/nodes: %s\n", HBM_SYSFS, strerror(-n));
		return 1;
	}
	dev = hbm_dev_open();
	if (dev < 0) {
		fprintf(stderr, "hbmdemo: open %s: %s\n", HBM_DEV, strerror(-dev));
		return 1;
	}
	ret = hbm_features(dev, &feat);
	if (ret) {
		fprintf(stderr, "hbmdemo: GET_FEATURES: %s\n", strerror(-ret));
		return 1;
	}
	if (replicas > 1 && !(feat.features & HBMPOOL_FEAT_REPLICAS)) {
		fprintf(stderr, "hbmdemo: --replicas %llu: this kernel has no replicated regions (no HBMPOOL_FEAT_REPLICAS)\n",
			(unsigned long long)replicas);
		return 1;
	}
	self = hbm_self_node(dev);
	if (self < 0) {
		fprintf(stderr, "hbmdemo: GET_FEATURES: %s\n", strerror(-self));
		return 1;
	}
	hbm_nodeset_zero(&remote);
	for (int i = 0; i < n; i++) {
		if (nodes[i].id != (uint32_t)self && !strcmp(nodes[i].state, "up")) {
			hbm_nodeset_set(&remote, nodes[i].id);
			nremote++;
		}
	}
	if (!nremote) {
		fprintf(stderr, "hbmdemo: no remote node is up; create one, e.g.\n"
			"  hbmctl node add 1 capacity 64M distance 20\n");
		return 1;
	}
	if ((uint64_t)nremote < replicas) {
		fprintf(stderr, "hbmdemo: --replicas %llu needs %llu remote nodes up, there are %d\n",
			(unsigned long long)replicas, (unsigned long long)replicas, nremote);
		return 1;
	}
	len = 4 * budget * (uint64_t)sysconf(_SC_PAGESIZE);
	if (!chunk) {
		chunk = 4096;
		while (chunk * 2 <= len / (2 * (uint64_t)nremote) && chunk < (2ULL << 20))
			chunk *= 2;
	}

	hbm_create_init(&rc, len, chunk, HBMPOOL_POLICY_INTERLEAVE, &remote, 0, "hbmdemo");
	if (replicas > 1)
		hbm_create_replicas(&rc, (uint32_t)replicas);	/* checked above */
	fd = hbm_region_create(dev, &rc);
	if (fd < 0) {
		fprintf(stderr, "hbmdemo: create %s interleaved over nodes %s, %llu cop%s of each chunk: %s\n",
			hbm_human_size(len, hs, sizeof(hs)),
			hbm_nodeset_format(&remote, list, sizeof(list)),
			(unsigned long long)replicas, replicas > 1 ? "ies" : "y", strerror(-fd));
		return 1;
	}
	printf("region %u: %s (4 x budget of %llu pages), chunk %s, interleave over %d node(s), %llu cop%s of each chunk\n",
	       rc.region_id, hbm_human_size(len, hs, sizeof(hs)), (unsigned long long)budget,
	       hbm_human_size(chunk, p50, sizeof(p50)), nremote, (unsigned long long)replicas,
	       replicas > 1 ? "ies" : "y");

	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		perror("hbmdemo: mmap");
		return 1;
	}
	hbm_pattern_fill(m, len, 0, seed);
	nbad = hbm_pattern_check(m, len, 0, seed, &bad_off);
	if (nbad) {
		fprintf(stderr, "hbmdemo: VERIFY FAILED: %zu of %llu bytes differ, first at offset %llu\n",
			nbad, (unsigned long long)len, (unsigned long long)bad_off);
		failed = 1;
	} else {
		printf("verify: all %llu bytes correct\n", (unsigned long long)len);
	}
	ret = hbm_region_sync(fd, 0, 0, &rg);
	if (ret) {
		fprintf(stderr, "hbmdemo: SYNC failed: %s (%llu pages failed)\n", strerror(-ret),
			(unsigned long long)rg.pages_failed);
		failed = 1;
	} else {
		printf("sync: %llu dirty pages written back\n", (unsigned long long)rg.pages_done);
	}

	ch = calloc(len / chunk + 1, sizeof(*ch));
	if (!ch || hbm_region_info(fd, &ri, ch, (uint32_t)(len / chunk + 1), NULL)) {
		fprintf(stderr, "hbmdemo: REGION_INFO failed\n");
		return 1;
	}
	if (replicas > 1)
		printf("copies: %u of each chunk, %u chunk(s) degraded, %u lost\n",
		       ri.replicas, ri.degraded_chunks, ri.lost_chunks);
	printf("\nplacement%s\n%-6s %-8s %-12s %8s %8s %12s\n",
	       replicas > 1 ? " (of each chunk's first copy)" : "", "node", "distance", "link",
	       "chunks", "share", "bytes");
	for (int i = 0; i < n; i++) {
		uint64_t cnt = 0;

		for (uint32_t k = 0; k < ri.nr_chunks; k++)
			cnt += ch[k].node == nodes[i].id;
		if (!cnt)
			continue;
		printf("%-6u %-8u %-12s %8llu %7.1f%% %12s\n", nodes[i].id, nodes[i].distance,
		       nodes[i].link_type, (unsigned long long)cnt, 100.0 * (double)cnt / ri.nr_chunks,
		       hbm_human_size(cnt * chunk, hs, sizeof(hs)));
	}

	if (hbm_region_stats(fd, &st)) {
		fprintf(stderr, "hbmdemo: REGION_STATS failed\n");
		return 1;
	}
	hist_pct(&st, 50, p50, sizeof(p50));
	hist_pct(&st, 99, p99, sizeof(p99));
	hist_pct(&st, 99.9, p999, sizeof(p999));
	printf("\nregion stats\n");
	for (int i = 0; i < HBM_NR_COUNTERS; i++)
		printf("  %-20s %llu\n", hbm_counter_names[i], (unsigned long long)*hbm_counter(&st, i));
	printf("  %-20s p50 %s, p99 %s, p99.9 %s (log2 buckets)\n", "fetch latency", p50, p99, p999);
	printf("\n%s\n", failed ? "FAILED" : "OK");

	munmap(m, len);
	close(fd);
	close(dev);
	free(ch);
	return failed;
}
