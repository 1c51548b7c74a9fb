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

#include "agent.h"
#include "control.h"

int hbmd_control_open(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, ret;

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
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return ret;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0660) || listen(fd, 16)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	return fd;
}

int hbmd_control_serve(int fd, struct hbmd_agent *a, char *err, size_t errlen)
{
	int c, n = 0, ret;
	size_t len, off;
	ssize_t w;
	char *json;

	for (;;) {
		c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c < 0) {
			if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
				return n;
			ret = -errno;
			snprintf(err, errlen, "control socket: accept: %s", strerror(errno));
			return ret;
		}
		ret = hbmd_agent_json(a, &json);
		if (ret) {
			close(c);
			snprintf(err, errlen, "control socket: %s", strerror(-ret));
			return ret;
		}
		/* what the socket buffer takes; a client that does not read loses the rest */
		len = strlen(json);
		for (off = 0; off < len; off += (size_t)w) {
			w = send(c, json + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (w <= 0)
				break;
		}
		free(json);
		close(c);
		n++;
	}
}

void hbmd_control_close(int fd, const char *path)
{
	if (fd < 0)
		return;
	close(fd);
	unlink(path);
}
