// SPDX-License-Identifier: GPL-2.0
/*
 * Data written into region pages by the kernel on a process's behalf —
 * through get_user_pages()/pin_user_pages() or a copy to user memory — is
 * never lost to eviction.  A 16-page cache, a thread that keeps the evictor
 * busy on a second region, and every kernel-side writer: process_vm_writev,
 * /proc/self/mem, O_DIRECT reads from a RAM disk, io_uring reads (plain and
 * into registered buffers), vmsplice both ways, read() from a file.  Each
 * writer puts 32-64 pages at a time into a region, repeated; after every
 * transfer the pages are evicted and every byte of the region is checked.
 */
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "kselftest_harness.h"
#include "hbmtest.h"

#define N_G		44
#define CAP_MIB		32
#define BUDGET		16
#define NPAGES		512
#define LEN		(NPAGES * HBMT_PAGE)
#define XFER_MIN	32
#define XFER_MAX	64
#define ROUNDS		10
#define RAMDISK		"/dev/ram0"

enum writer {
	W_PROCESS_VM_WRITEV,
	W_PROC_MEM,
	W_O_DIRECT,
	W_URING,
	W_URING_FIXED,
	W_VMSPLICE_IN,
	W_VMSPLICE_HELD,
	W_FILE_READ,
};

FIXTURE(gup)
{
	struct hbmt_env env;
	struct hbmt_region r;
	struct hbmt_region ballast;
	uint64_t seed_of[NPAGES];	/* the pattern seed each page must hold */
	uint8_t *src;			/* XFER_MAX pages, page aligned */
	int srcfd;			/* the writer's source: RAM disk or file */
	struct io_uring ring;
	int ring_ok;
	pthread_t thrasher;
	volatile int stop;
	int thrashing;
	int skipped;	/* the 6.1 harness runs the body after a SKIP in setup */
};

FIXTURE_VARIANT(gup)
{
	enum writer writer;
};

FIXTURE_VARIANT_ADD(gup, process_vm_writev) { .writer = W_PROCESS_VM_WRITEV };
FIXTURE_VARIANT_ADD(gup, proc_self_mem) { .writer = W_PROC_MEM };
FIXTURE_VARIANT_ADD(gup, o_direct_ramdisk) { .writer = W_O_DIRECT };
FIXTURE_VARIANT_ADD(gup, io_uring_read) { .writer = W_URING };
FIXTURE_VARIANT_ADD(gup, io_uring_fixed_buffers) { .writer = W_URING_FIXED };
FIXTURE_VARIANT_ADD(gup, vmsplice_into_region) { .writer = W_VMSPLICE_IN };
FIXTURE_VARIANT_ADD(gup, vmsplice_held_pages) { .writer = W_VMSPLICE_HELD };
FIXTURE_VARIANT_ADD(gup, read_from_file) { .writer = W_FILE_READ };

/* Reads the ballast region over and over: the cache stays over budget. */
static void *thrash(void *arg)
{
	FIXTURE_DATA(gup) *self = arg;
	volatile uint8_t sink;

	while (!self->stop)
		for (uint64_t o = 0; o < LEN && !self->stop; o += HBMT_PAGE)
			sink = self->ballast.map[o];
	(void)sink;
	return NULL;
}

static bool ramdisk_ready(void)
{
	struct stat st;

	if (stat(RAMDISK, &st))
		(void)!system("modprobe brd rd_nr=1 rd_size=8192 >/dev/null 2>&1");
	return !stat(RAMDISK, &st) && S_ISBLK(st.st_mode);
}

FIXTURE_SETUP(gup)
{
	enum writer w = variant->writer;
	int ret;

	self->srcfd = -1;
	hbmt_env_setup(_metadata, &self->env, BUDGET, 5000);
	hbmt_env_node(_metadata, &self->env, N_G, CAP_MIB, 20, NULL);
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, LEN, 0, HBMPOOL_POLICY_BIND,
				      HBM_NODES(N_G), 0, "gup"));
	ASSERT_EQ(0, hbmt_region_open(&self->ballast, self->env.devfd, LEN, 0,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_G), 0, "ballast"));
	self->src = aligned_alloc(HBMT_PAGE, XFER_MAX * HBMT_PAGE);
	ASSERT_NE(NULL, self->src);
	hbm_pattern_fill(self->r.map, LEN, 0, 0);
	memset(self->seed_of, 0, sizeof(self->seed_of));

	if (w == W_O_DIRECT || w == W_URING || w == W_URING_FIXED) {
		self->skipped = !ramdisk_ready();
		if (self->skipped)
			SKIP(return, "no %s (modprobe brd failed): O_DIRECT needs a block device",
			     RAMDISK);
		self->srcfd = open(RAMDISK, O_RDWR | O_DIRECT | O_CLOEXEC);
		ASSERT_LE(0, self->srcfd) TH_LOG("%s: %s", RAMDISK, strerror(errno));
	} else if (w == W_FILE_READ) {
		char path[] = "/tmp/hbmpool-gup-XXXXXX";

		self->srcfd = mkstemp(path);
		ASSERT_LE(0, self->srcfd);
		unlink(path);
	}
	if (w == W_URING || w == W_URING_FIXED) {
		ret = io_uring_queue_init(8, &self->ring, 0);
		self->skipped = ret == -ENOSYS || ret == -EPERM;
		if (self->skipped)
			SKIP(return, "io_uring not available: %s", strerror(-ret));
		ASSERT_EQ(0, ret) TH_LOG("io_uring_queue_init: %s", strerror(-ret));
		self->ring_ok = 1;
	}
	if (w == W_URING_FIXED) {
		struct iovec iov = { .iov_base = self->r.map, .iov_len = LEN };

		ret = io_uring_register_buffers(&self->ring, &iov, 1);
		/*
		 * 6.1 refuses file-backed memory as a registered buffer
		 * (io_uring/rsrc.c: only shmem and hugetlbfs); later kernels
		 * may accept it, and then the test runs.
		 */
		self->skipped = ret == -EOPNOTSUPP;
		if (self->skipped)
			SKIP(return, "this kernel's io_uring refuses registered buffers in a file mapping (EOPNOTSUPP)");
		ASSERT_EQ(0, ret) TH_LOG("io_uring_register_buffers: %s", strerror(-ret));
	}
	ASSERT_EQ(0, pthread_create(&self->thrasher, NULL, thrash, self));
	self->thrashing = 1;
}

FIXTURE_TEARDOWN(gup)
{
	uint64_t v;

	self->stop = 1;
	if (self->thrashing)
		pthread_join(self->thrasher, NULL);
	if (self->ring_ok)
		io_uring_queue_exit(&self->ring);
	if (self->srcfd >= 0)
		close(self->srcfd);
	free(self->src);
	hbmt_region_close(&self->ballast);
	hbmt_region_close(&self->r);
	EXPECT_EQ(0, hbmt_wait_global("dirty_pages", HBMT_EQ, 0, 5000, &v))
		TH_LOG("dirty_pages %llu after close", (unsigned long long)v);
	hbmt_env_teardown(_metadata, &self->env);
}

/* Puts the source (len bytes at self->src) where the writer reads it from. */
static int stage(FIXTURE_DATA(gup) *self, size_t len)
{
	if (self->srcfd < 0)
		return 0;
	return pwrite(self->srcfd, self->src, len, 0) == (ssize_t)len ? 0 : -errno;
}

static int uring_read(struct io_uring *ring, int fd, void *dst, size_t len, bool fixed)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int ret;

	if (!sqe)
		return -EBUSY;
	if (fixed)
		io_uring_prep_read_fixed(sqe, fd, dst, len, 0, 0);
	else
		io_uring_prep_read(sqe, fd, dst, len, 0);
	ret = io_uring_submit_and_wait(ring, 1);
	if (ret < 0)
		return ret;
	ret = io_uring_wait_cqe(ring, &cqe);
	if (ret)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return ret == (int)len ? 0 : ret < 0 ? ret : -EIO;
}

/* The pipe holds references to the region pages while they are overwritten. */
static int vmsplice_held(uint8_t *dst, const uint8_t *src, size_t len)
{
	struct iovec iov = { .iov_base = dst, .iov_len = len };
	int p[2], ret = 0;
	ssize_t n;
	char buf[4096];

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	if (fcntl(p[1], F_SETPIPE_SZ, (int)len) < (int)len ||
	    vmsplice(p[1], &iov, 1, 0) != (ssize_t)len) {
		ret = -errno;
		goto out;
	}
	memcpy(dst, src, len);
	hbmt_sleep_ms(20);	/* the evictor meets the held pages */
	while (len && (n = read(p[0], buf, sizeof(buf))) > 0)
		len -= n;
out:
	close(p[0]);
	close(p[1]);
	return ret;
}

static int vmsplice_in(uint8_t *dst, const uint8_t *src, size_t len)
{
	int p[2], ret = 0;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	for (size_t done = 0; done < len; ) {
		size_t n = len - done < 65536 ? len - done : 65536;
		struct iovec iov = { .iov_base = dst + done, .iov_len = n };

		if (write(p[1], src + done, n) != (ssize_t)n ||
		    vmsplice(p[0], &iov, 1, 0) != (ssize_t)n) {
			ret = -errno ?: -EIO;
			break;
		}
		done += n;
	}
	close(p[0]);
	close(p[1]);
	return ret;
}

/* One transfer of len bytes from self->src into dst by the variant's writer. */
static int put(FIXTURE_DATA(gup) *self, enum writer w, uint8_t *dst, size_t len)
{
	struct iovec local = { .iov_base = self->src, .iov_len = len };
	struct iovec remote = { .iov_base = dst, .iov_len = len };
	int fd, ret;

	ret = stage(self, len);
	if (ret)
		return ret;
	switch (w) {
	case W_PROCESS_VM_WRITEV:
		return process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len ?
		       0 : -errno;
	case W_PROC_MEM:
		fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		ret = pwrite(fd, self->src, len, (off_t)(uintptr_t)dst) == (ssize_t)len ?
		      0 : -errno;
		close(fd);
		return ret;
	case W_O_DIRECT:
	case W_FILE_READ:
		return pread(self->srcfd, dst, len, 0) == (ssize_t)len ? 0 : -errno;
	case W_URING:
		return uring_read(&self->ring, self->srcfd, dst, len, false);
	case W_URING_FIXED:
		return uring_read(&self->ring, self->srcfd, dst, len, true);
	case W_VMSPLICE_IN:
		return vmsplice_in(dst, self->src, len);
	case W_VMSPLICE_HELD:
		return vmsplice_held(dst, self->src, len);
	}
	return -EINVAL;
}

/* Every page of the region against the model; the number of bad pages. */
static int check_all(struct __test_metadata *_metadata, FIXTURE_DATA(gup) *self)
{
	int bad = 0;

	for (uint64_t p = 0; p < NPAGES; p++) {
		uint64_t first;

		if (hbm_pattern_check(self->r.map + p * HBMT_PAGE, HBMT_PAGE, p * HBMT_PAGE,
				      self->seed_of[p], &first)) {
			if (!bad++)
				TH_LOG("page %llu: old or wrong data from byte %llu (seed %llu)",
				       (unsigned long long)p, (unsigned long long)first,
				       (unsigned long long)self->seed_of[p]);
		}
	}
	return bad;
}

/* Reads the whole ballast: no page of the region stays cached. */
static void evict_region(FIXTURE_DATA(gup) *self)
{
	volatile uint8_t sink;

	for (int pass = 0; pass < 2; pass++)
		for (uint64_t o = 0; o < LEN; o += HBMT_PAGE)
			sink = self->ballast.map[o];
	(void)sink;
}

/* Transfers of 32-64 pages under eviction; the data of every one survives. */
TEST_F_TIMEOUT(gup, writes_survive_eviction, 240)
{
	uint64_t rng = 0x9e3779b97f4a7c15ULL ^ variant->writer;
	struct hbmpool_stats st;

	if (self->skipped)
		return;
	for (int round = 1; round <= ROUNDS; round++) {
		uint64_t n, p, seed = 1000 * (variant->writer + 1) + round;
		int ret, bad;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		n = XFER_MIN + rng % (XFER_MAX - XFER_MIN + 1);
		p = (rng >> 16) % (NPAGES - n + 1);
		hbm_pattern_fill(self->src, n * HBMT_PAGE, p * HBMT_PAGE, seed);
		ret = put(self, variant->writer, self->r.map + p * HBMT_PAGE, n * HBMT_PAGE);
		ASSERT_EQ(0, ret) TH_LOG("round %d: %llu pages at %llu: %s", round,
					 (unsigned long long)n, (unsigned long long)p,
					 strerror(-ret));
		for (uint64_t i = p; i < p + n; i++)
			self->seed_of[i] = seed;
		evict_region(self);
		bad = check_all(_metadata, self);
		ASSERT_EQ(0, bad) TH_LOG("round %d: %d pages lost their data", round, bad);
	}
	/* the cache was under pressure: pages were written back and evicted */
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	EXPECT_LT(0, st.writebacks);
	EXPECT_LT(NPAGES, st.evictions);
	EXPECT_EQ(0, st.errors);
}

TEST_HARNESS_MAIN
