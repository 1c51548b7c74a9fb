// SPDX-License-Identifier: GPL-2.0
/*
 * hbmb_regions: hbmbench --regions N, the kernel memory a region costs
 * (Slab + Percpu of /proc/meminfo, per region, N one-page regions held
 * open), against a one-page memfd as the baseline, in the same run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "hbmb.h"

/* A /proc/meminfo field in bytes, or -1. */
static long long meminfo_bytes(const char *field)
{
	size_t flen = strlen(field);
	long long kb = -1;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, flen) && line[flen] == ':') {
			kb = atoll(line + flen + 1);
			break;
		}
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/* Kernel memory that objects of this program hold: slab and per-CPU. */
static void kmem(long long *slab, long long *percpu)
{
	/* let deferred frees (RCU, per-CPU slab caches) settle */
	usleep(200 * 1000);
	*slab = meminfo_bytes("Slab");
	*percpu = meminfo_bytes("Percpu");
}

/*
 * --regions N: N one-page regions held open, then N one-page memfds, each
 * measured as kernel memory per object.
 */
int hbmb_regions(int dev, const struct hbm_nodeset *nodes, uint64_t n)
{
	struct rlimit rl = { .rlim_cur = n + 64, .rlim_max = n + 64 };
	long long slab0, pcpu0, slab1, pcpu1, slab2, pcpu2;
	struct hbmpool_region_create rc;
	int *fds = calloc(n, sizeof(*fds));
	double reg_slab, reg_pcpu, mfd_slab, mfd_pcpu;
	uint64_t i;

	if (!fds || setrlimit(RLIMIT_NOFILE, &rl)) {
		fprintf(stderr, "hbmbench: cannot hold %llu descriptors\n", (unsigned long long)n);
		return 1;
	}
	kmem(&slab0, &pcpu0);
	for (i = 0; i < n; i++) {
		hbm_create_init(&rc, HBMB_PAGE, HBMB_PAGE, HBMPOOL_POLICY_INTERLEAVE, nodes, 0, "");
		fds[i] = hbm_region_create(dev, &rc);
		if (fds[i] < 0) {
			fprintf(stderr, "hbmbench: region %llu: %s\n", (unsigned long long)i,
				strerror(-fds[i]));
			return 1;
		}
	}
	kmem(&slab1, &pcpu1);
	for (i = 0; i < n; i++)
		close(fds[i]);
	kmem(&slab0, &pcpu0);	/* the baseline starts from the same point */
	for (i = 0; i < n; i++) {
		fds[i] = memfd_create("hbmbench", MFD_CLOEXEC);
		if (fds[i] < 0 || ftruncate(fds[i], HBMB_PAGE)) {
			perror("hbmbench: memfd");
			return 1;
		}
	}
	kmem(&slab2, &pcpu2);
	for (i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	reg_slab = (double)(slab1 - slab0) / n;
	reg_pcpu = (double)(pcpu1 - pcpu0) / n;
	mfd_slab = (double)(slab2 - slab0) / n;
	mfd_pcpu = (double)(pcpu2 - pcpu0) / n;
	printf("%-24s %14s %14s\n", "object (one page)", "slab B/obj", "percpu B/obj");
	printf("%-24s %14.0f %14.0f\n", "hbmpool region", reg_slab, reg_pcpu);
	printf("%-24s %14.0f %14.0f\n", "memfd (baseline)", mfd_slab, mfd_pcpu);
	printf("regions.n=%llu\n", (unsigned long long)n);
	printf("regions.slab_bytes_per_region=%.0f\n", reg_slab);
	printf("regions.percpu_bytes_per_region=%.0f\n", reg_pcpu);
	printf("regions.slab_bytes_per_memfd=%.0f\n", mfd_slab);
	printf("ratio.region_vs_memfd_kmem=%.2f\n",
	       (reg_slab + reg_pcpu) / (mfd_slab + mfd_pcpu));
	return 0;
}
