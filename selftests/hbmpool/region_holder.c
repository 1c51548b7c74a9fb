// SPDX-License-Identifier: GPL-2.0
/*
 * Helper of unload.sh: creates a 64 KiB region bound to NODES, maps it,
 * writes every page, then holds it until SIGTERM/SIGINT.
 *
 * usage: region_holder NODES [fd|map] [bind|weighted-interleave]
 *        (NODES: a node list of remote nodes 1..1023, e.g. 41 or 41,42;
 *        the policy, bind by default: on the nearest of them)
 *   fd   keep the fd and the mapping (default)
 *   map  close the fd, keep only the mapping
 *
 * Prints "ready REGION_ID" on stdout once holding; exits 0 on the signal,
 * 1 on any error (with a message on stderr).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hbmlib.h"
#include "hbmsys.h"

static volatile sig_atomic_t stop;

int main(int argc, char **argv)
{
	const uint64_t len = 64 * 1024;
	struct hbmpool_region_create rc;
	struct hbm_nodeset nodes;
	sigset_t waitmask;
	uint32_t policy = HBMPOOL_POLICY_BIND;
	int dev, fd, keep_fd = 1;
	uint8_t *m;

	if (argc < 2 || hbm_parse_nodelist(argv[1], 0, HBMPOOL_MAX_NODES - 1, &nodes) ||
	    (argc > 2 && strcmp(argv[2], "fd") && strcmp(argv[2], "map")) ||
	    (argc > 3 && strcmp(argv[3], "bind") && strcmp(argv[3], "weighted-interleave"))) {
		fprintf(stderr, "usage: %s NODES [fd|map] [bind|weighted-interleave]\n", argv[0]);
		return 1;
	}
	if (argc > 3 && !strcmp(argv[3], "weighted-interleave"))
		policy = HBMPOOL_POLICY_WEIGHTED_INTERLEAVE;
	if (argc > 2 && !strcmp(argv[2], "map"))
		keep_fd = 0;
	hbm_stop_signals(&stop, &waitmask);

	dev = hbm_dev_open();
	if (dev < 0) {
		fprintf(stderr, "open %s: %s\n", HBM_DEV, strerror(-dev));
		return 1;
	}
	hbm_create_init(&rc, len, 0, policy, &nodes, 0, "holder");
	fd = hbm_region_create(dev, &rc);
	close(dev);
	if (fd < 0) {
		fprintf(stderr, "create: %s\n", strerror(-fd));
		return 1;
	}
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		fprintf(stderr, "mmap: %s\n", strerror(errno));
		return 1;
	}
	hbm_pattern_fill(m, len, 0, 1);
	if (hbm_pattern_check(m, len, 0, 1, NULL)) {
		fprintf(stderr, "data mismatch\n");
		return 1;
	}
	if (!keep_fd)
		close(fd);
	printf("ready %u\n", rc.region_id);
	fflush(stdout);
	/* Signals stay blocked except inside sigsuspend(): no lost wake-up. */
	while (!stop)
		sigsuspend(&waitmask);
	return 0;
}
