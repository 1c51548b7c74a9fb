// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of hbmpoold's control socket (daemon/control.c), without an
 * agent: the view is a test string.
 *
 *  1. a small view: a client reads it whole, then end of file;
 *  2. a view of 4 MiB (far more than a socket buffer): a client that
 *     starts reading only after 300 ms still gets every byte, and no call
 *     of the control socket blocks meanwhile;
 *  3. a client that reads nothing is dropped after HBMD_CONTROL_STALL_MS,
 *     and another one is served at the same time;
 *  4. HBMD_CONTROL_CLIENTS + 2 clients at once: all served (the extra
 *     ones wait in the backlog);
 *  5. a view that fails: the client gets end of file, the error is told;
 *  6. close removes the socket file.
 * TAP output.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "tap.h"

#include "control.h"
#include "loop.h"

static char *view_text;
static int view_err;
static unsigned int views;

static int view(void *arg, char **json)
{
	(void)arg;
	views++;
	if (view_err)
		return view_err;
	*json = strdup(view_text);
	return *json ? 0 : -ENOMEM;
}

static uint64_t worst_ms;

/* Run the control socket's side for ms: poll its descriptors, serve. */
static void serve(struct hbmd_control *c, unsigned int ms)
{
	uint64_t end = hbmd_now_ms() + ms, t, d;
	struct pollfd fds[1 + HBMD_CONTROL_CLIENTS];
	char err[256];
	unsigned int n, i;
	int timeout;

	while ((t = hbmd_now_ms()) < end) {
		n = hbmd_control_fds(c, fds, 1 + HBMD_CONTROL_CLIENTS);
		d = hbmd_control_deadline(c);
		timeout = (int)(end - t);
		if (d != UINT64_MAX && d < end)
			timeout = d > t ? (int)(d - t) : 0;
		if (poll(fds, n, timeout) < 0 && errno != EINTR)
			return;
		for (i = 0; i < n; i++) {
			if (!fds[i].revents)
				continue;
			t = hbmd_now_ms();
			if (hbmd_control_event(c, fds[i].fd, fds[i].revents, err, sizeof(err)) < 0)
				printf("# %s\n", err);
			if (hbmd_now_ms() - t > worst_ms)
				worst_ms = hbmd_now_ms() - t;
		}
		if (hbmd_now_ms() >= hbmd_control_deadline(c))
			hbmd_control_event(c, -1, 0, err, sizeof(err));
	}
}

static int client(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Read what is there (non-blocking) into buf; 1 at end of file, 0 if more
 * may come, -1 on an error.
 */
static int drain(int fd, char *buf, size_t cap, size_t *len)
{
	ssize_t r;

	for (;;) {
		r = read(fd, buf + *len, cap - *len);
		if (r > 0) {
			*len += (size_t)r;
			if (*len == cap)
				return -1;
			continue;
		}
		if (!r)
			return 1;
		return errno == EAGAIN ? 0 : -1;
	}
}

/* Serve and read until end of file (or limit ms); 1 at end of file. */
static int read_all(struct hbmd_control *c, int fd, char *buf, size_t cap, size_t *len,
		    unsigned int limit)
{
	uint64_t end = hbmd_now_ms() + limit;
	int r = 0;

	while (!r && hbmd_now_ms() < end) {
		serve(c, 5);
		r = drain(fd, buf, cap, len);
	}
	return r;
}

int main(void)
{
	char dir[] = "/tmp/hbm_control.XXXXXX", path[128], err[256], *buf;
	size_t big = 4u << 20, cap = big + 16, len, lens[HBMD_CONTROL_CLIENTS + 2];
	int fds[HBMD_CONTROL_CLIENTS + 2], fd, fd2, ret, r;
	struct hbmd_control *c = NULL;
	unsigned int i, done;
	uint64_t t0;
	struct stat st;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/ctl.sock", dir);
	buf = malloc(cap * (HBMD_CONTROL_CLIENTS + 2));
	view_text = malloc(big + 1);
	if (!buf || !view_text) {
		printf("Bail out! out of memory\n");
		return 1;
	}
	for (len = 0; len < big; len++)
		view_text[len] = (char)('a' + len % 26);
	view_text[big] = 0;

	ret = hbmd_control_open(path, view, NULL, &c, err, sizeof(err));
	ok(!ret && !stat(path, &st) && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0660,
	   "open: a socket, mode 0660%s%s", ret ? ": " : "", ret ? err : "");
	if (ret)
		return tap_finish();

	/* 1. small */
	view_text[16] = 0;
	fd = client(path);
	len = 0;
	r = read_all(c, fd, buf, cap, &len, 2000);
	ok(r == 1 && len == 16 && !memcmp(buf, "abcdefghijklmnop", 16),
	   "a small view: read whole (%zu bytes), then end of file", len);
	close(fd);
	view_text[16] = 'q';

	/* 2. big, read late */
	worst_ms = 0;
	fd = client(path);
	serve(c, 300);
	len = 0;
	r = read_all(c, fd, buf, cap, &len, 20000);
	ok(r == 1 && len == big && !memcmp(buf, view_text, big),
	   "a 4 MiB view, read from 300 ms on: every byte (%zu), then end of file", len);
	ok(worst_ms < 100, "no call of the control socket blocked (the longest: %llu ms)",
	   (unsigned long long)worst_ms);
	close(fd);

	/* 3. a client that reads nothing, beside one that reads */
	fd = client(path);
	serve(c, 50);
	fd2 = client(path);
	len = 0;
	r = read_all(c, fd2, buf, cap, &len, 20000);
	ok(r == 1 && len == big, "a second client is served while the first reads nothing");
	close(fd2);
	t0 = hbmd_now_ms();
	serve(c, HBMD_CONTROL_STALL_MS + 500);
	len = 0;
	r = drain(fd, buf, cap, &len);
	ok(r == 1 && len > 0 && len < big,
	   "the client that read nothing: dropped after %d ms (end of file after %zu bytes)",
	   HBMD_CONTROL_STALL_MS, len);
	ok(hbmd_control_deadline(c) == UINT64_MAX, "no client left (%llu ms)",
	   (unsigned long long)(hbmd_now_ms() - t0));
	close(fd);

	/* 4. more clients than slots */
	for (i = 0; i < HBMD_CONTROL_CLIENTS + 2; i++) {
		fds[i] = client(path);
		lens[i] = 0;
	}
	t0 = hbmd_now_ms();
	for (done = 0; done < HBMD_CONTROL_CLIENTS + 2 && hbmd_now_ms() - t0 < 30000;) {
		serve(c, 5);
		for (i = 0, done = 0; i < HBMD_CONTROL_CLIENTS + 2; i++) {
			r = fds[i] < 0 ? -1 : drain(fds[i], buf + i * cap, cap, &lens[i]);
			done += r == 1 && lens[i] == big;
		}
	}
	ok(done == HBMD_CONTROL_CLIENTS + 2, "%d clients at once (%d slots): all %u served whole",
	   HBMD_CONTROL_CLIENTS + 2, HBMD_CONTROL_CLIENTS, done);
	for (i = 0; i < HBMD_CONTROL_CLIENTS + 2; i++)
		close(fds[i]);

	/* 5. a view that fails */
	view_err = -ENOMEM;
	fd = client(path);
	r = 0;
	len = 0;
	t0 = hbmd_now_ms();
	while (!r && hbmd_now_ms() - t0 < 2000) {
		struct pollfd p[1 + HBMD_CONTROL_CLIENTS];
		unsigned int n = hbmd_control_fds(c, p, 1 + HBMD_CONTROL_CLIENTS);

		if (poll(p, n, 10) > 0 && p[0].revents)
			ret = hbmd_control_event(c, p[0].fd, p[0].revents, err, sizeof(err));
		r = drain(fd, buf, cap, &len);
	}
	ok(r == 1 && len == 0 && ret == -ENOMEM && strstr(err, "Cannot allocate memory"),
	   "a view that fails: end of file at once, the error told (%s)", err);
	close(fd);
	view_err = 0;

	/* 6. close */
	hbmd_control_close(c);
	ok(stat(path, &st) && errno == ENOENT, "close removes the socket file");
	hbmd_control_close(NULL);
	rmdir(dir);
	free(buf);
	free(view_text);
	return tap_finish();
}
