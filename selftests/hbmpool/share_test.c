// SPDX-License-Identifier: GPL-2.0
/*
 * Shared regions: a region created with HBMPOOL_REGION_SHARED is opened by
 * name (HBMPOOL_IOC_REGION_OPEN) by other processes, a region's descriptor
 * is opened again through /proc/PID/fd/N, both permission-checked against
 * the creator and the mode; every mapping of a region, in any process, sees
 * one copy through one cache; fork() shares the mapping.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "hbmtest.h"

#define N_S	40
#define CAP_MIB	16
#define NPAGES	256
#define LEN	(NPAGES * HBMT_PAGE)
#define NOBODY	65534

FIXTURE(share)
{
	struct hbmt_env env;
	uint64_t nr0;
};

FIXTURE_SETUP(share)
{
	hbmt_env_setup(_metadata, &self->env, 16, 5000);
	hbmt_env_node(_metadata, &self->env, N_S, CAP_MIB, 20, NULL);
	ASSERT_EQ(0, hbm_global_u64("nr_regions", &self->nr0));
}

FIXTURE_TEARDOWN(share)
{
	uint64_t v;

	EXPECT_EQ(0, hbmt_wait_global("nr_regions", HBMT_EQ, self->nr0, 5000, &v))
		TH_LOG("nr_regions %llu, want %llu", (unsigned long long)v,
		       (unsigned long long)self->nr0);
	hbmt_env_teardown(_metadata, &self->env);
}

/* Creates a region on N_S; flags and mode as given.  fd or -errno. */
static int create(int devfd, const char *name, uint32_t flags, uint32_t mode,
		  uint32_t *id)
{
	struct hbmpool_region_create rc;
	int fd;

	hbm_create_init(&rc, LEN, 0, HBMPOOL_POLICY_BIND, HBM_NODES(N_S), 0, name);
	rc.flags = flags;
	rc.mode = mode;
	fd = hbm_region_create(devfd, &rc);
	if (fd >= 0 && id)
		*id = rc.region_id;
	return fd;
}

static uint8_t *map(int fd, int prot)
{
	void *p = mmap(NULL, LEN, prot, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Opening by name gives the same region: writes through either mapping are seen by the other, through one cache. */
TEST_F(share, open_by_name)
{
	struct hbmpool_region_open ro;
	uint32_t id;
	uint64_t v, bad;
	uint8_t *a, *b;
	int fa, fb;

	fa = create(self->env.devfd, "share-a", HBMPOOL_REGION_SHARED, 0, &id);
	ASSERT_LE(0, fa) TH_LOG("create: %s", strerror(-fa));
	fb = hbm_region_open(self->env.devfd, "share-a", &ro);
	ASSERT_LE(0, fb) TH_LOG("open: %s", strerror(-fb));
	EXPECT_NE(fa, fb);
	EXPECT_EQ((uint32_t)fb, ro.fd);
	EXPECT_EQ(id, ro.region_id);
	EXPECT_TRUE(fcntl(fb, F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(0, hbm_global_u64("nr_regions", &v));
	EXPECT_EQ(self->nr0 + 1, v);
	ASSERT_EQ(0, hbm_fdinfo_u64(fb, "hbmpool-region", &v));
	EXPECT_EQ(id, v);
	ASSERT_EQ(0, hbm_fdinfo_u64(fb, "shared", &v));
	EXPECT_EQ(1, v);

	a = map(fa, PROT_READ | PROT_WRITE);
	b = map(fb, PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	/* 256 pages through a 16-page cache: both sides evict and refetch */
	hbm_pattern_fill(a, LEN, 0, 1);
	EXPECT_EQ(0, hbm_pattern_check(b, LEN, 0, 1, &bad)) TH_LOG("first bad byte %llu", (unsigned long long)bad);
	hbm_pattern_fill(b, LEN / 2, 0, 2);
	EXPECT_EQ(0, hbm_pattern_check(a, LEN / 2, 0, 2, &bad)) TH_LOG("first bad byte %llu", (unsigned long long)bad);
	EXPECT_EQ(0, hbm_pattern_check(a + LEN / 2, LEN / 2, LEN / 2, 1, &bad));
	/* one cache: the same page is one page in both mappings */
	a[7] = 0x5a;
	EXPECT_EQ(0x5a, b[7]);

	/* the creator's fd goes; the opener keeps the region */
	munmap(a, LEN);
	close(fa);
	EXPECT_EQ(0, hbm_pattern_check(b + LEN / 2, LEN / 2, LEN / 2, 1, &bad));
	fa = hbm_region_open(self->env.devfd, "share-a", &ro);
	ASSERT_LE(0, fa);
	close(fa);
	munmap(b, LEN);
	close(fb);
	EXPECT_EQ(0, hbmt_wait_global("nr_regions", HBMT_EQ, self->nr0, 5000, &v));
	EXPECT_EQ(-ENOENT, hbm_region_open(self->env.devfd, "share-a", &ro));
}

/* Bad requests: each gets its errno, and nothing is left behind. */
TEST_F(share, bad_requests)
{
	struct hbmpool_region_open ro;
	uint64_t free0, v;
	int fa, fb, ret;

	ASSERT_EQ(0, hbm_node_u64(N_S, "free_bytes", &free0));
	fa = create(self->env.devfd, "dup", HBMPOOL_REGION_SHARED, 0, NULL);
	ASSERT_LE(0, fa);
	/* a shared name is unique, even with only a mapping left */
	void *m = mmap(NULL, LEN, PROT_READ, MAP_SHARED, fa, 0);

	ASSERT_NE(MAP_FAILED, m);
	close(fa);
	EXPECT_EQ(-EEXIST, create(self->env.devfd, "dup", HBMPOOL_REGION_SHARED, 0, NULL));
	/* an unshared region may have any name, and is not found by it */
	fb = create(self->env.devfd, "dup", 0, 0, NULL);
	EXPECT_LE(0, fb);
	close(fb);
	fb = create(self->env.devfd, "private", 0, 0, NULL);
	ASSERT_LE(0, fb);
	EXPECT_EQ(-ENOENT, hbm_region_open(self->env.devfd, "private", &ro));
	/* REGION_OPEN belongs to /dev/hbmpool */
	memset(&ro, 0, sizeof(ro));
	ro.size = sizeof(ro);
	strcpy(ro.name, "dup");
	EXPECT_EQ(-1, ioctl(fb, HBMPOOL_IOC_REGION_OPEN, &ro));
	EXPECT_EQ(ENOTTY, errno);
	close(fb);
	munmap(m, LEN);

	EXPECT_EQ(-EINVAL, create(self->env.devfd, "", HBMPOOL_REGION_SHARED, 0, NULL));
	EXPECT_EQ(-EINVAL, create(self->env.devfd, "m", HBMPOOL_REGION_SHARED, 01000, NULL));
	EXPECT_EQ(-EINVAL, create(self->env.devfd, "m", 0, 04600, NULL));
	EXPECT_EQ(-EINVAL, create(self->env.devfd, "m", 1U << 5, 0, NULL));

	EXPECT_EQ(-ENOENT, hbm_region_open(self->env.devfd, "nosuch", &ro));
	EXPECT_EQ(-EINVAL, hbm_region_open(self->env.devfd, "", &ro));
	memset(&ro, 0, sizeof(ro));
	ro.size = sizeof(ro);
	memset(ro.name, 'x', sizeof(ro.name));		/* no NUL */
	EXPECT_EQ(-1, ioctl(self->env.devfd, HBMPOOL_IOC_REGION_OPEN, &ro));
	EXPECT_EQ(EINVAL, errno);
	memset(&ro, 0, sizeof(ro));
	strcpy(ro.name, "x");
	ro.size = sizeof(ro);
	ro.flags = 1;
	EXPECT_EQ(-1, ioctl(self->env.devfd, HBMPOOL_IOC_REGION_OPEN, &ro));
	EXPECT_EQ(EINVAL, errno);
	ro.flags = 0;
	ro.reserved[1] = 1;
	EXPECT_EQ(-1, ioctl(self->env.devfd, HBMPOOL_IOC_REGION_OPEN, &ro));
	EXPECT_EQ(EINVAL, errno);
	ro.reserved[1] = 0;
	ro.size = HBMPOOL_REGION_OPEN_SIZE_VER0 - 8;
	EXPECT_EQ(-1, ioctl(self->env.devfd, HBMPOOL_IOC_REGION_OPEN, &ro));
	EXPECT_EQ(EINVAL, errno);

	ret = hbmt_wait_global("nr_regions", HBMT_EQ, self->nr0, 5000, &v);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(0, hbm_node_u64(N_S, "free_bytes", &v));
	EXPECT_EQ(free0, v);
}

/* /proc/self/fd/N opens the region again (same id, same data); its size cannot be changed. */
TEST_F(share, proc_fd_reopen)
{
	char path[64];
	struct stat st;
	uint32_t id;
	uint64_t v, bad;
	uint8_t *a, *b;
	int fa, fb;

	fa = create(self->env.devfd, "", 0, 0, &id);
	ASSERT_LE(0, fa);
	ASSERT_EQ(0, fstat(fa, &st));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(0600, st.st_mode & 07777);
	EXPECT_EQ(LEN, (uint64_t)st.st_size);
	EXPECT_EQ(getuid(), st.st_uid);
	a = map(fa, PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, a);
	hbm_pattern_fill(a, LEN, 0, 3);

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fa);
	fb = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fb) TH_LOG("open %s: %s", path, strerror(errno));
	ASSERT_EQ(0, hbm_fdinfo_u64(fb, "hbmpool-region", &v));
	EXPECT_EQ(id, v);
	b = map(fb, PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, b);
	EXPECT_EQ(0, hbm_pattern_check(b, LEN, 0, 3, &bad));
	/* read-only opens map read-only */
	close(fb);
	fb = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fb);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fb, 0));
	close(fb);

	EXPECT_EQ(-1, ftruncate(fa, 0));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(-1, open(path, O_RDWR | O_TRUNC));
	EXPECT_EQ(EPERM, errno);
	ASSERT_EQ(0, fstat(fa, &st));
	EXPECT_EQ(LEN, (uint64_t)st.st_size);
	EXPECT_EQ(0, hbm_pattern_check(a, LEN, 0, 3, &bad));

	munmap(b, LEN);
	munmap(a, LEN);
	close(fa);
}

/* Run fn in a child that gave up root (uid/gid nobody, no capabilities); its exit status. */
static int as_nobody(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
			_exit(100);
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -ECHILD;
	return WEXITSTATUS(status);
}

struct open_args {
	int devfd;
	int fd;
	const char *name;
};

/* 0: opened by name; 1: EACCES; else another failure. */
static int try_open_name(void *p)
{
	struct open_args *a = p;
	struct hbmpool_region_open ro;
	int fd = hbm_region_open(a->devfd, a->name, &ro);

	if (fd >= 0)
		return 0;
	return fd == -EACCES ? 1 : 2;
}

static int try_open_proc(void *p)
{
	struct open_args *a = p;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", a->fd);
	fd = open(path, O_RDWR);
	if (fd >= 0)
		return 0;
	return errno == EACCES ? 1 : 2;
}

/* The mode decides who else may open a region, by name or by path; the creator's uid owns it. */
TEST_F(share, permissions)
{
	struct open_args a = { .devfd = self->env.devfd };
	int fp, fo;

	if (geteuid())
		SKIP(return, "needs root to switch to an unprivileged user");
	fp = create(self->env.devfd, "perm-private", HBMPOOL_REGION_SHARED, 0, NULL);
	ASSERT_LE(0, fp);
	fo = create(self->env.devfd, "perm-open", HBMPOOL_REGION_SHARED, 0666, NULL);
	ASSERT_LE(0, fo);

	a.name = "perm-private";
	EXPECT_EQ(1, as_nobody(try_open_name, &a));
	a.name = "perm-open";
	EXPECT_EQ(0, as_nobody(try_open_name, &a));
	a.fd = fp;
	EXPECT_EQ(1, as_nobody(try_open_proc, &a));
	a.fd = fo;
	EXPECT_EQ(0, as_nobody(try_open_proc, &a));
	/* root may, as for any file */
	struct hbmpool_region_open ro;
	int fd = hbm_region_open(self->env.devfd, "perm-private", &ro);

	EXPECT_LE(0, fd);
	if (fd >= 0)
		close(fd);
	close(fp);
	close(fo);
}

/* After fork() the child shares the mapping: each sees the other's writes; the child's exit keeps the region. */
TEST_F(share, fork_shares)
{
	struct hbmt_region r;
	uint64_t bad;
	int status;
	pid_t pid;

	ASSERT_EQ(0, hbmt_region_open(&r, self->env.devfd, LEN, 0, HBMPOOL_POLICY_BIND,
				      HBM_NODES(N_S), 0, "fork"));
	hbm_pattern_fill(r.map, LEN, 0, 4);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (hbm_pattern_check(r.map, LEN, 0, 4, NULL))
			_exit(1);
		hbm_pattern_fill(r.map + LEN / 2, LEN / 2, LEN / 2, 5);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("the child did not see the parent's data");
	EXPECT_EQ(0, hbm_pattern_check(r.map, LEN / 2, 0, 4, &bad));
	EXPECT_EQ(0, hbm_pattern_check(r.map + LEN / 2, LEN / 2, LEN / 2, 5, &bad))
		TH_LOG("first bad byte %llu", (unsigned long long)bad);
	hbmt_region_close(&r);
}

/* A region created by another process lives on with whoever opened it after the creator exited. */
TEST_F(share, outlives_creator)
{
	struct hbmpool_region_open ro;
	int go[2], done[2], status, fd;
	uint64_t bad, v;
	uint8_t *m;
	char c;
	pid_t pid;

	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int cfd = create(self->env.devfd, "creator", HBMPOOL_REGION_SHARED, 0, NULL);
		uint8_t *cm = cfd >= 0 ? map(cfd, PROT_READ | PROT_WRITE) : NULL;

		if (!cm)
			_exit(1);
		hbm_pattern_fill(cm, LEN, 0, 6);
		if (write(done[1], "x", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(0);
	}
	ASSERT_EQ(1, read(done[0], &c, 1));
	fd = hbm_region_open(self->env.devfd, "creator", &ro);
	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(-fd));
	ASSERT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	m = map(fd, PROT_READ);
	ASSERT_NE(NULL, m);
	EXPECT_EQ(0, hbm_pattern_check(m, LEN, 0, 6, &bad))
		TH_LOG("first bad byte %llu", (unsigned long long)bad);
	ASSERT_EQ(0, hbm_global_u64("nr_regions", &v));
	EXPECT_EQ(self->nr0 + 1, v);
	munmap(m, LEN);
	close(fd);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
}

TEST_HARNESS_MAIN
