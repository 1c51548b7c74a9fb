// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpoold's control socket: see control.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "loop.h"

struct ctl_client {
	int fd;			/* -1: free slot */
	char *buf;		/* the view */
	size_t len, off;	/* its length, how much is sent */
	uint64_t stall_at;	/* dropped if nothing more is read by then */
};

struct hbmd_control {
	int lfd;
	char *path;
	hbmd_control_view_fn *view;
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
			fds[k++] = (struct pollfd){ .fd = c->c[i].fd, .events = POLLOUT };
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
		cl->fd = fd;
		ret = c->view(c->arg, &cl->buf);
		if (ret) {
			drop(cl);
			snprintf(err, errlen, "control socket: %s", strerror(-ret));
			return ret;
		}
		cl->len = strlen(cl->buf);
		cl->off = 0;
		cl->stall_at = hbmd_now_ms() + HBMD_CONTROL_STALL_MS;
		n++;
		push(cl);
	}
}

int hbmd_control_event(struct hbmd_control *c, int fd, short revents, char *err,
		       size_t errlen)
{
	uint64_t now = hbmd_now_ms();
	unsigned int i;

	if (fd >= 0 && fd == c->lfd)
		return revents ? accept_all(c, err, errlen) : 0;
	for (i = 0; i < HBMD_CONTROL_CLIENTS; i++) {
		struct ctl_client *cl = &c->c[i];

		if (cl->fd < 0)
			continue;
		if (fd >= 0 && cl->fd == fd && revents)
			push(cl);
		else if (fd < 0 && now >= cl->stall_at)
			drop(cl);	/* it reads nothing: the rest is lost to it */
	}
	return 0;
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
