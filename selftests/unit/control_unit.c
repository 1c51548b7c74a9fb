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
 *     (1-4: clients that write nothing, as before requests: the view
 *     after HBMD_CONTROL_WAIT_MS);
 *  5. a view that fails: the client gets end of file, the error is told;
 *  6. requests: a silent client gets the view after HBMD_CONTROL_WAIT_MS
 *     (not before), a half-closed one or an empty line at once;
 *     {"cmd":"view"}; drain and undrain (ended by "\n" or by the
 *     half-close) reach the request function and are answered ok; no
 *     request function: EOPNOTSUPP; its error passed on; bad JSON, no
 *     object, no "cmd", an unknown one, no integer "node", one out of
 *     range, 500 nested arrays, a request over HBMD_CONTROL_REQUEST_MAX
 *     bytes, a line never ended (ETIMEDOUT after HBMD_CONTROL_STALL_MS,
 *     while another client is served): each an error answer, never a
 *     crash, no call blocking;
 *  7. close removes the socket file.
 * TAP output.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
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

/* The request function: what it was asked, what it answers. */
static char req_cmd[16];
static uint32_t req_node;
static unsigned int reqs;
static int req_ret;

static int request(void *arg, const char *cmd, uint32_t node, char *err, size_t errlen)
{
	(void)arg;
	reqs++;
	snprintf(req_cmd, sizeof(req_cmd), "%s", cmd);
	req_node = node;
	if (req_ret)
		snprintf(err, errlen, "the test says no");
	return req_ret;
}

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

/*
 * A client that writes req (len bytes; NULL: nothing), half-closes if
 * shut, and reads the answer into out (NUL-terminated); how long it took
 * (ms), the answer's read status in *r.
 */
static uint64_t ask(struct hbmd_control *c, const char *path, const char *req, size_t len,
		    bool shut, char *out, size_t cap, int *r)
{
	uint64_t t0 = hbmd_now_ms();
	size_t n = 0, off = 0;
	int fd = client(path);

	*r = -1;
	out[0] = 0;
	if (fd < 0)
		return 0;
	while (req && off < len) {
		ssize_t w = write(fd, req + off, len - off);

		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN)
			break;
		serve(c, 5);
	}
	if (shut)
		shutdown(fd, SHUT_WR);
	*r = read_all(c, fd, out, cap - 1, &n, 10000);
	out[n] = 0;
	close(fd);
	return hbmd_now_ms() - t0;
}

#define ASK(req, shut) ask(c, path, (req), strlen(req), (shut), buf, cap, &r)

static void test_requests(struct hbmd_control *c, const char *path, char *buf, size_t cap)
{
	static const struct {
		const char *req, *want, *what;
	} bad[] = {
		{ "{not json\n", "{\"ok\":false,\"error\":\"the request is not one line of JSON: ",
		  "bad JSON" },
		{ "{\"cmd\":\"drain\",\n", "it ends before its JSON does\",\"errno\":22}",
		  "JSON cut by its newline" },
		{ "{\"cmd\":\"view\"} x\n", "not one line of JSON", "more after the JSON" },
		{ "[1,2]\n", "{\"ok\":false,\"error\":\"the request is not a JSON object\",\"errno\":22}",
		  "an array" },
		{ "{\"node\":3}\n", "\"error\":\"the request has no string \\\"cmd\\\"\",\"errno\":22}",
		  "no cmd" },
		{ "{\"cmd\":7}\n", "no string \\\"cmd\\\"", "cmd not a string" },
		{ "{\"cmd\":\"explode\",\"node\":1}\n",
		  "\"error\":\"unknown command 'explode' (view, drain, undrain, leave)\",\"errno\":22}",
		  "an unknown command" },
		{ "{\"cmd\":\"drain\"}\n", "\"error\":\"drain: no integer \\\"node\\\"\",\"errno\":22}",
		  "drain without node" },
		{ "{\"cmd\":\"drain\",\"node\":\"3\"}\n", "drain: no integer", "a string node" },
		{ "{\"cmd\":\"undrain\",\"node\":2.5}\n", "undrain: no integer", "a fraction" },
		{ "{\"cmd\":\"drain\",\"node\":1024}\n",
		  "\"error\":\"drain: node 1024 is not a node id (0..1023)\",\"errno\":22}", "node 1024" },
		{ "{\"cmd\":\"drain\",\"node\":-1}\n", "node -1 is not a node id", "node -1" },
		{ "{\"cmd\":\"drain\",\"node\":99999999999999999999999}\n", "\"errno\":22}",
		  "a node id beyond 64 bits" },
	};
	char big[HBMD_CONTROL_REQUEST_MAX + 200], deep[600];
	unsigned int i, v0;
	uint64_t t;
	int r, fd;

	/* no request function yet */
	t = ASK("{\"cmd\":\"drain\",\"node\":3}\n", false);
	ok(r == 1 && !strcmp(buf, "{\"ok\":false,\"error\":\"drain: this daemon takes no requests\",\"errno\":95}"),
	   "no request function: EOPNOTSUPP (%s)", buf);
	hbmd_control_set_request(c, request);

	/* the view, three ways */
	v0 = views;
	t = ASK("", false);
	ok(r == 1 && !strcmp(buf, "{\"view\":1}") && t >= HBMD_CONTROL_WAIT_MS - 5 && t < 2000 &&
	   views == v0 + 1,
	   "a client that writes nothing: the view after %d ms (%llu ms)", HBMD_CONTROL_WAIT_MS,
	   (unsigned long long)t);
	t = ASK("", true);
	ok(r == 1 && !strcmp(buf, "{\"view\":1}") && t < HBMD_CONTROL_WAIT_MS - 50,
	   "a client that half-closes: the view at once (%llu ms)", (unsigned long long)t);
	t = ASK("\n", false);
	ok(r == 1 && !strcmp(buf, "{\"view\":1}") && t < HBMD_CONTROL_WAIT_MS - 50,
	   "an empty line: the view at once (%llu ms)", (unsigned long long)t);
	t = ASK(" {\"cmd\": \"view\"} \r\n", false);
	ok(r == 1 && !strcmp(buf, "{\"view\":1}") && t < HBMD_CONTROL_WAIT_MS - 50,
	   "{\"cmd\":\"view\"}: the view (%llu ms)", (unsigned long long)t);
	ok(reqs == 0, "no request function called for views (%u)", reqs);

	/* drain and undrain */
	t = ASK("{\"cmd\":\"drain\",\"node\":3}\n", false);
	ok(r == 1 && !strcmp(buf, "{\"ok\":true,\"cmd\":\"drain\",\"node\":3}") && reqs == 1 &&
	   !strcmp(req_cmd, "drain") && req_node == 3,
	   "drain 3: the request function asked, ok (%s, %llu ms)", buf, (unsigned long long)t);
	ASK("{\"node\":1023,\"cmd\":\"undrain\"}", true);
	ok(r == 1 && !strcmp(buf, "{\"ok\":true,\"cmd\":\"undrain\",\"node\":1023}") && reqs == 2 &&
	   !strcmp(req_cmd, "undrain") && req_node == 1023,
	   "undrain 1023, ended by the half-close: ok (%s)", buf);
	ASK("{\"cmd\":\"leave\"}\n", false);
	ok(r == 1 && !strcmp(buf, "{\"ok\":true,\"cmd\":\"leave\"}") && reqs == 3 &&
	   !strcmp(req_cmd, "leave") && req_node == HBMD_CONTROL_NO_NODE,
	   "leave: no node, the request function asked with none, ok (%s)", buf);
	ASK("{\"cmd\":\"drain\",\"node\":0}\n{\"cmd\":\"undrain\",\"node\":0}\n", false);
	ok(r == 1 && reqs == 4 && !strcmp(req_cmd, "drain") && req_node == 0 &&
	   strstr(buf, "\"ok\":true"),
	   "two lines: the first one answered, the rest ignored (%s)", buf);
	req_ret = -EAGAIN;
	ASK("{\"cmd\":\"drain\",\"node\":5}\n", false);
	ok(r == 1 && !strcmp(buf, "{\"ok\":false,\"error\":\"drain node 5: the test says no\",\"errno\":11}"),
	   "the request function's error passed on, with its errno (%s)", buf);
	req_ret = 0;

	/* bad requests */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unsigned int r0 = reqs;

		ASK(bad[i].req, false);
		ok(r == 1 && strstr(buf, bad[i].want) && reqs == r0,
		   "%s: refused, the function not called (%s)", bad[i].what, buf);
	}
	memset(deep, '[', sizeof(deep) - 2);
	deep[sizeof(deep) - 2] = '\n';
	deep[sizeof(deep) - 1] = 0;
	ASK(deep, false);
	ok(r == 1 && strstr(buf, "not one line of JSON") && strstr(buf, "\"errno\":22"),
	   "500 nested arrays: refused, no crash (%s)", buf);
	memset(big, ' ', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	ASK(big, false);
	/* the rest unread when the daemon closes: ECONNRESET may follow the answer */
	ok(r != 0 && !strcmp(buf, "{\"ok\":false,\"error\":\"the request is over 1024 bytes\",\"errno\":7}"),
	   "a request over %d bytes: E2BIG (%s)", HBMD_CONTROL_REQUEST_MAX, buf);

	/* a line never ended: refused after the stall time; others served meanwhile */
	fd = client(path);
	if (write(fd, "{\"cmd\"", 6) != 6)
		printf("# write: %s\n", strerror(errno));
	serve(c, 50);
	t = ASK("{\"cmd\":\"view\"}\n", false);
	ok(r == 1 && !strcmp(buf, "{\"view\":1}") && t < 1000,
	   "another client served while a line is pending (%llu ms)", (unsigned long long)t);
	{
		size_t n = 0;
		uint64_t t0 = hbmd_now_ms();

		r = read_all(c, fd, buf, cap - 1, &n, HBMD_CONTROL_STALL_MS + 3000);
		buf[n] = 0;
		t = hbmd_now_ms() - t0;
	}
	ok(r == 1 && strstr(buf, "did not end within 5000 ms\",\"errno\":110}") &&
	   t >= HBMD_CONTROL_STALL_MS - 1500,
	   "a line never ended: ETIMEDOUT after %d ms (%llu ms: %s)", HBMD_CONTROL_STALL_MS,
	   (unsigned long long)t, buf);
	close(fd);
	ok(worst_ms < 100, "no call of the control socket took long (worst %llu ms)",
	   (unsigned long long)worst_ms);
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

	/* 5. a view that fails (a half-closed client: the view at once) */
	view_err = -ENOMEM;
	fd = client(path);
	shutdown(fd, SHUT_WR);
	r = 0;
	len = 0;
	ret = 0;
	t0 = hbmd_now_ms();
	while (!r && hbmd_now_ms() - t0 < 2000) {
		struct pollfd p[1 + HBMD_CONTROL_CLIENTS];
		unsigned int n = hbmd_control_fds(c, p, 1 + HBMD_CONTROL_CLIENTS), j;

		if (poll(p, n, 10) > 0)
			for (j = 0; j < n; j++)
				if (p[j].revents && !ret)
					ret = hbmd_control_event(c, p[j].fd, p[j].revents, err,
								 sizeof(err));
		r = drain(fd, buf, cap, &len);
	}
	ok(r == 1 && len == 0 && ret == -ENOMEM && strstr(err, "Cannot allocate memory"),
	   "a view that fails: end of file at once, the error told (%s)", err);
	close(fd);
	view_err = 0;

	/* 6. requests */
	strcpy(view_text, "{\"view\":1}");
	test_requests(c, path, buf, cap);

	/* 7. close */
	hbmd_control_close(c);
	ok(stat(path, &st) && errno == ENOENT, "close removes the socket file");
	hbmd_control_close(NULL);
	rmdir(dir);
	free(buf);
	free(view_text);
	return tap_finish();
}
