// SPDX-License-Identifier: GPL-2.0
/*
 * Non-harness helpers of the hbmpool selftests (see hbmtest.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest.h"

#include "hbmlib.h"
#include "hbmsys.h"
#include "hbmtest.h"

const char *hbmt_env_missing(void)
{
	struct stat st;

	if (geteuid() != 0)
		return "needs root";
	if (stat(HBM_DEV, &st) || !S_ISCHR(st.st_mode))
		return HBM_DEV " missing: is hbmpool.ko loaded?";
	if (stat(HBM_SYSFS, &st))
		return HBM_SYSFS " missing: is hbmpool.ko loaded?";
	return NULL;
}

const char *hbmt_debugfs_missing(void)
{
	struct stat st;

	if (stat(HBM_DEBUGFS, &st))
		return HBM_DEBUGFS " missing: is debugfs mounted?";
	return NULL;
}

static __thread sigjmp_buf probe_jb;
static __thread volatile sig_atomic_t probe_armed;
static __thread void *volatile probe_addr;

static void probe_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!probe_armed) {
		/* Not ours: die of it, as without a handler. */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	probe_armed = 0;
	probe_addr = si->si_addr;
	siglongjmp(probe_jb, 1);
}

static void probe_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = probe_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

/* One u64 read (write == 0, into *val) or write (of *val) at addr. */
static int probe(volatile uint64_t *addr, uint64_t *val, int write, void **fault_addr)
{
	probe_install();
	if (sigsetjmp(probe_jb, 1)) {
		if (fault_addr)
			*fault_addr = probe_addr;
		return SIGBUS;
	}
	probe_armed = 1;
	if (write)
		*addr = *val;
	else
		*val = *addr;
	probe_armed = 0;
	return 0;
}

int hbmt_probe_read(const volatile void *addr, uint64_t *val, void **fault_addr)
{
	return probe((volatile uint64_t *)addr, val, 0, fault_addr);
}

int hbmt_probe_write(volatile void *addr, uint64_t val, void **fault_addr)
{
	return probe(addr, &val, 1, fault_addr);
}

int hbmt_region_open_rc(struct hbmt_region *r, int devfd,
			struct hbmpool_region_create *rc)
{
	void *m;
	int fd;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	fd = hbm_region_create(devfd, rc);
	if (fd < 0)
		return fd;
	m = mmap(NULL, rc->length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		int e = -errno;

		close(fd);
		return e;
	}
	r->fd = fd;
	r->map = m;
	r->len = rc->length;
	r->id = rc->region_id;
	return 0;
}

int hbmt_region_open(struct hbmt_region *r, int devfd, uint64_t len,
		     uint64_t chunk, uint32_t policy,
		     const struct hbm_nodeset *nodes, uint32_t preferred,
		     const char *name)
{
	struct hbmpool_region_create rc;

	hbm_create_init(&rc, len, chunk, policy, nodes, preferred, name);
	return hbmt_region_open_rc(r, devfd, &rc);
}

void hbmt_require_feature(uint64_t feature, const char *why)
{
	struct hbmpool_features f;
	int fd;

	if (hbmt_env_missing())
		return;		/* hbmt_require_env() skips, saying why */
	fd = hbm_dev_open();
	if (fd < 0)
		return;		/* the fixture fails, naming the error */
	if (!hbm_features(fd, &f) && !(f.features & feature)) {
		close(fd);
		ksft_print_header();
		ksft_exit_skip("%s\n", why);
	}
	close(fd);
}

void hbmt_region_close(struct hbmt_region *r)
{
	if (r->map)
		munmap(r->map, r->len);
	if (r->fd > 0)
		close(r->fd);
	r->map = NULL;
	r->fd = -1;
}

void hbmt_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Reads stats until two reads 50 ms apart agree (at most 5 s). */
static int stats_settled(int (*read)(const void *src, struct hbmpool_stats *st),
			 const void *src, struct hbmpool_stats *st)
{
	struct hbmpool_stats prev;
	int ret = read(src, &prev);

	for (int i = 0; !ret && i < 100; i++) {
		hbmt_sleep_ms(50);
		ret = read(src, st);
		if (!ret && !memcmp(&prev, st, sizeof(*st)))
			return 0;
		prev = *st;
	}
	if (!ret)
		*st = prev;
	return ret;
}

static int read_fd_stats(const void *src, struct hbmpool_stats *st)
{
	return hbm_region_stats(*(const int *)src, st);
}

static int read_dir_stats(const void *src, struct hbmpool_stats *st)
{
	return hbm_read_stats_dir(src, st);
}

int hbmt_stats_settled(int fd, struct hbmpool_stats *st)
{
	return stats_settled(read_fd_stats, &fd, st);
}

int hbmt_stats_dir_settled(const char *dir, struct hbmpool_stats *st)
{
	return stats_settled(read_dir_stats, dir, st);
}

static int cmp_ok(enum hbmt_cmp cmp, uint64_t v, uint64_t want)
{
	switch (cmp) {
	case HBMT_EQ: return v == want;
	case HBMT_LE: return v <= want;
	case HBMT_GE: return v >= want;
	}
	return 0;
}

static int wait_path(const char *path, enum hbmt_cmp cmp, uint64_t want,
		     unsigned int timeout_ms, uint64_t *last)
{
	uint64_t v = 0;
	int ret;

	for (unsigned int t = 0;; t += 20) {
		ret = hbm_read_u64(path, &v);
		if (last)
			*last = v;
		if (ret)
			return ret;
		if (cmp_ok(cmp, v, want))
			return 0;
		if (t >= timeout_ms)
			return -ETIMEDOUT;
		hbmt_sleep_ms(20);
	}
}

int hbmt_wait_global(const char *name, enum hbmt_cmp cmp, uint64_t want,
		     unsigned int timeout_ms, uint64_t *last)
{
	char path[256];

	snprintf(path, sizeof(path), HBM_SYSFS "/%s", name);
	return wait_path(path, cmp, want, timeout_ms, last);
}

int hbmt_wait_node(unsigned int id, const char *attr, enum hbmt_cmp cmp,
		   uint64_t want, unsigned int timeout_ms, uint64_t *last)
{
	char path[256];

	snprintf(path, sizeof(path), HBM_SYSFS "/nodes/node%u/%s", id, attr);
	return wait_path(path, cmp, want, timeout_ms, last);
}

int hbmt_wait_gone(const char *path, unsigned int timeout_ms)
{
	struct stat st;

	for (unsigned int t = 0;; t += 20) {
		if (stat(path, &st) && errno == ENOENT)
			return 0;
		if (t >= timeout_ms)
			return -ETIMEDOUT;
		hbmt_sleep_ms(20);
	}
}

int hbmt_kernel_config(const char *option)
{
	char cmd[160];
	int st;

	if (access("/proc/config.gz", R_OK))
		return -ENOENT;
	if (snprintf(cmd, sizeof(cmd), "zgrep -qx '%s=y' /proc/config.gz", option) >=
	    (int)sizeof(cmd) || strchr(option, '\''))
		return -EINVAL;
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) > 1)
		return -ENOENT;
	return WEXITSTATUS(st) == 0;
}

int64_t hbmt_meminfo_kb(const char *field)
{
	size_t flen = strlen(field);
	char line[256];
	FILE *f = fopen("/proc/meminfo", "re");
	int64_t v = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		long long kb;

		if (!strncmp(line, field, flen) && line[flen] == ':' &&
		    sscanf(line + flen + 1, "%lld", &kb) == 1) {
			v = kb;
			break;
		}
	}
	fclose(f);
	return v;
}
