// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpoold's control socket: see control.h.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>

#include "control.h"
#include "loop.h"

struct ctl_client {
	int fd;			/* -1: free slot */
	bool reading;		/* the request, else the answer is being sent */
	char req[HBMD_CONTROL_REQUEST_MAX + 1];
	size_t rlen;		/* bytes of req read */
	char *buf;		/* the answer: the view, or a request's */
	size_t len, off;	/* its length, how much is sent */
	/*
	 * reading: the view is sent (nothing read yet) or the request is
	 * refused (a line begun) by then; else: dropped if nothing more is
	 * read by then.
	 */
	uint64_t stall_at;
};

struct hbmd_control {
	int lfd;
	char *path;
	hbmd_control_view_fn *view;
	hbmd_control_request_fn *request;
	void *arg;
	struct ctl_client c[HBMD_CONTROL_CLIENTS];
};

int hbmd_control_open(const char *path, hbmd_control_view_fn *view, void *arg,
		      struct hbmd_control **out, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct hbmd_control *c;
	struct stat st;
	unsigned int i;
	int ret;

	*out = NULL;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: path too long for a unix socket", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	if (!lstat(path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "%s: exists and is not a socket", path);
			return -EEXIST;
		}
		unlink(path);	/* a daemon before us left it */
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->path = strdup(path))) {
		free(c);
		snprintf(err, errlen, "control socket: out of memory");
		return -ENOMEM;
	}
	c->view = view;
	c->arg = arg;
	for (i = 0; i < HBMD_CONTROL_CLIENTS; i++)
		c->c[i].fd = -1;
	c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->lfd < 0) {
		ret = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		goto err_free;
	}
	if (bind(c->lfd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0660) ||
	    listen(c->lfd, 16)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto err_close;
	}
	*out = c;
	return 0;

err_close:
	close(c->lfd);
err_free:
	free(c->path);
	free(c);
	return ret;
}

void hbmd_control_set_request(struct hbmd_control *c, hbmd_control_request_fn *request)
{
	c->request = request;
}

static unsigned int nr_clients(const struct hbmd_control *c)
{
	unsigned int i, n = 0;

	for (i = 0; i < HBMD_CONTROL_CLIENTS; i++)
		n += c->c[i].fd >= 0;
	return n;
}

unsigned int hbmd_control_fds(const struct hbmd_control *c, struct pollfd *fds,
			      unsigned int n)
{
	unsigned int i, k = 0;

	/* no more clients than slots: the others wait in the backlog */
	if (k < n && nr_clients(c) < HBMD_CONTROL_CLIENTS)
		fds[k++] = (struct pollfd){ .fd = c->lfd, .events = POLLIN };
	for (i = 0; i < HBMD_CONTROL_CLIENTS && k < n; i++)
		if (c->c[i].fd >= 0)
			fds[k++] = (struct pollfd){ .fd = c->c[i].fd,
						    .events = c->c[i].reading ? POLLIN : POLLOUT };
	return k;
}

uint64_t hbmd_control_deadline(const struct hbmd_control *c)
{
	uint64_t d = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < HBMD_CONTROL_CLIENTS; i++)
		if (c->c[i].fd >= 0 && c->c[i].stall_at < d)
			d = c->c[i].stall_at;
	return d;
}

static void drop(struct ctl_client *cl)
{
	close(cl->fd);
	free(cl->buf);
	*cl = (struct ctl_client){ .fd = -1 };
}

/* Send what the client's socket takes; drop the client when all is sent. */
static void push(struct ctl_client *cl)
{
	ssize_t w;

	while (cl->off < cl->len) {
		w = send(cl->fd, cl->buf + cl->off, cl->len - cl->off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;		/* the loop polls for POLLOUT */
		if (w <= 0) {
			drop(cl);	/* the client went away */
			return;
		}
		cl->off += (size_t)w;
		cl->stall_at = hbmd_now_ms() + HBMD_CONTROL_STALL_MS;
	}
	drop(cl);			/* all sent: end of file */
}

/* Start sending the answer (malloc'ed, taken); NULL: out of memory, dropped. */
static void answer(struct ctl_client *cl, char *buf)
{
	cl->reading = false;
	if (!buf) {
		drop(cl);
		return;
	}
	cl->buf = buf;
	cl->len = strlen(buf);
	cl->off = 0;
	cl->stall_at = hbmd_now_ms() + HBMD_CONTROL_STALL_MS;
	push(cl);
}

static char *reply(bool ok, const char *cmd, int64_t node, int e, const char *why)
{
	json_object *o = json_object_new_object();
	char *s = NULL;
	int bad = !o;

	if (bad)
		return NULL;
	bad |= json_object_object_add(o, "ok", json_object_new_boolean(ok));
	if (ok) {
		bad |= json_object_object_add(o, "cmd", json_object_new_string(cmd));
		if (node >= 0)
			bad |= json_object_object_add(o, "node", json_object_new_int64(node));
	} else {
		bad |= json_object_object_add(o, "error", json_object_new_string(why));
		bad |= json_object_object_add(o, "errno", json_object_new_int(e));
	}
	if (!bad)
		s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return s;
}

static void refuse(struct ctl_client *cl, int e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void refuse(struct ctl_client *cl, int e, const char *fmt, ...)
{
	char why[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	answer(cl, reply(false, NULL, 0, e, why));
}

/* The view, as the answer; -errno for a log line if it cannot be made. */
static int view(struct hbmd_control *c, struct ctl_client *cl, char *err, size_t errlen)
{
	char *buf = NULL;
	int ret = c->view(c->arg, &buf);

	if (ret) {
		drop(cl);
		snprintf(err, errlen, "control socket: %s", strerror(-ret));
		return ret;
	}
	answer(cl, buf);
	return 0;
}

/* The request line (req[0..len), no "\n"): answered. */
static int request(struct hbmd_control *c, struct ctl_client *cl, size_t len, char *err,
		   size_t errlen)
{
	struct json_tokener *tok;
	json_object *o = NULL, *v;
	enum json_tokener_error jerr;
	const char *cmd;
	char why[256] = "";
	size_t end;
	int64_t node;
	int ret;

	while (len && isspace((unsigned char)cl->req[len - 1]))
		len--;
	end = 0;
	while (end < len && isspace((unsigned char)cl->req[end]))
		end++;
	if (end == len)
		return view(c, cl, err, errlen);	/* an empty line: the view */
	tok = json_tokener_new_ex(8);
	if (!tok) {
		drop(cl);
		return 0;
	}
	o = json_tokener_parse_ex(tok, cl->req, (int)len);
	jerr = json_tokener_get_error(tok);
	if (jerr == json_tokener_success && json_tokener_get_parse_end(tok) < len)
		jerr = json_tokener_error_parse_unexpected;
	json_tokener_free(tok);
	if (jerr != json_tokener_success) {
		json_object_put(o);
		refuse(cl, EINVAL, "the request is not one line of JSON: %s",
		       jerr == json_tokener_continue ? "it ends before its JSON does" :
		       json_tokener_error_desc(jerr));
		return 0;
	}
	if (!json_object_is_type(o, json_type_object)) {
		refuse(cl, EINVAL, "the request is not a JSON object");
		goto out;
	}
	if (!json_object_object_get_ex(o, "cmd", &v) || !json_object_is_type(v, json_type_string)) {
		refuse(cl, EINVAL, "the request has no string \"cmd\"");
		goto out;
	}
	cmd = json_object_get_string(v);
	if (!strcmp(cmd, "view")) {
		json_object_put(o);
		return view(c, cl, err, errlen);
	}
	if (!strcmp(cmd, "leave")) {
		if (!c->request) {
			refuse(cl, EOPNOTSUPP, "leave: this daemon takes no requests");
			goto out;
		}
		ret = c->request(c->arg, cmd, HBMD_CONTROL_NO_NODE, why, sizeof(why));
		if (ret)
			refuse(cl, -ret, "leave: %s", *why ? why : strerror(-ret));
		else
			answer(cl, reply(true, cmd, -1, 0, NULL));
		goto out;
	}
	if (strcmp(cmd, "drain") && strcmp(cmd, "undrain")) {
		refuse(cl, EINVAL, "unknown command '%.64s' (view, drain, undrain, leave)", cmd);
		goto out;
	}
	if (!json_object_object_get_ex(o, "node", &v) || !json_object_is_type(v, json_type_int)) {
		refuse(cl, EINVAL, "%s: no integer \"node\"", cmd);
		goto out;
	}
	errno = 0;
	node = json_object_get_int64(v);
	if (errno || node < 0 || node > HBMD_CONTROL_NODE_MAX) {
		refuse(cl, EINVAL, "%s: node %.32s is not a node id (0..%d)", cmd,
		       json_object_to_json_string(v), HBMD_CONTROL_NODE_MAX);
		goto out;
	}
	if (!c->request) {
		refuse(cl, EOPNOTSUPP, "%s: this daemon takes no requests", cmd);
		goto out;
	}
	ret = c->request(c->arg, cmd, (uint32_t)node, why, sizeof(why));
	if (ret)
		refuse(cl, -ret, "%s node %lld: %s", cmd, (long long)node,
		       *why ? why : strerror(-ret));
	else
		answer(cl, reply(true, cmd, node, 0, NULL));
out:
	json_object_put(o);
	return 0;
}

/*
 * Read what the client wrote: a request line, or end of file before
 * anything (the view).  Returns -errno for a log line (the view could not
 * be made), else 0.
 */
static int pull(struct hbmd_control *c, struct ctl_client *cl, char *err, size_t errlen)
{
	char *nl;
	ssize_t r;

	while (cl->fd >= 0 && cl->reading) {
		r = recv(cl->fd, cl->req + cl->rlen, HBMD_CONTROL_REQUEST_MAX + 1 - cl->rlen,
			 MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return 0;	/* the loop polls for POLLIN */
		if (r < 0) {
			drop(cl);	/* the client went away */
			return 0;
		}
		if (!r)			/* end of file: what it wrote is the request */
			return cl->rlen ? request(c, cl, cl->rlen, err, errlen) :
					  view(c, cl, err, errlen);
		nl = memchr(cl->req + cl->rlen, '\n', (size_t)r);
		cl->rlen += (size_t)r;
		if (nl)
			return request(c, cl, (size_t)(nl - cl->req), err, errlen);
		if (cl->rlen > HBMD_CONTROL_REQUEST_MAX) {
			refuse(cl, E2BIG, "the request is over %d bytes", HBMD_CONTROL_REQUEST_MAX);
			return 0;
		}
		cl->stall_at = hbmd_now_ms() + HBMD_CONTROL_STALL_MS;	/* a line begun */
	}
	return 0;
}

static int accept_all(struct hbmd_control *c, char *err, size_t errlen)
{
	struct ctl_client *cl;
	unsigned int i;
	int fd, ret, n = 0;

	for (;;) {
		for (i = 0; i < HBMD_CONTROL_CLIENTS && c->c[i].fd >= 0; i++)
			;
		if (i == HBMD_CONTROL_CLIENTS)
			return n;	/* the others wait in the backlog */
		fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
				return n;
			snprintf(err, errlen, "control socket: accept: %s", strerror(errno));
			return -errno;
		}
		cl = &c->c[i];
		*cl = (struct ctl_client){ .fd = fd, .reading = true,
					   .stall_at = hbmd_now_ms() + HBMD_CONTROL_WAIT_MS };
		n++;
		ret = pull(c, cl, err, errlen);	/* it may have written already */
		if (ret)
			return ret;
	}
}

int hbmd_control_event(struct hbmd_control *c, int fd, short revents, char *err,
		       size_t errlen)
{
	uint64_t now = hbmd_now_ms();
	unsigned int i;
	int ret = 0;

	if (fd >= 0 && fd == c->lfd)
		return revents ? accept_all(c, err, errlen) : 0;
	for (i = 0; i < HBMD_CONTROL_CLIENTS; i++) {
		struct ctl_client *cl = &c->c[i];

		if (cl->fd < 0)
			continue;
		if (fd >= 0 && cl->fd == fd && revents && cl->reading)
			ret = pull(c, cl, err, errlen);
		else if (fd >= 0 && cl->fd == fd && revents)
			push(cl);
		else if (fd < 0 && now >= cl->stall_at && cl->reading && !cl->rlen)
			ret = view(c, cl, err, errlen);	/* it wrote nothing: the view */
		else if (fd < 0 && now >= cl->stall_at && cl->reading)
			refuse(cl, ETIMEDOUT, "the request line did not end within %d ms",
			       HBMD_CONTROL_STALL_MS);
		else if (fd < 0 && now >= cl->stall_at)
			drop(cl);	/* it reads nothing: the rest is lost to it */
	}
	return ret;
}

void hbmd_control_close(struct hbmd_control *c)
{
	unsigned int i;

	if (!c)
		return;
	for (i = 0; i < HBMD_CONTROL_CLIENTS; i++)
		if (c->c[i].fd >= 0)
			drop(&c->c[i]);
	close(c->lfd);
	unlink(c->path);
	free(c->path);
	free(c);
}
