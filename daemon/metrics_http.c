// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpoold's metrics endpoint (see metrics.h): libmicrohttpd driven by the
 * daemon's own loop.  MHD_USE_EPOLL without MHD_USE_INTERNAL_POLLING_THREAD
 * gives no thread: MHD keeps its sockets in an epoll set whose descriptor
 * the loop polls (an epoll descriptor is readable when one of its sockets
 * is ready), and MHD_run() then does the ready work without blocking;
 * MHD_get_timeout() says when it must run anyway (idle connections time
 * out).  The listening socket is made here, so that a failure to bind says
 * why, and the chosen port is known.
 *
 * A scrape runs the callback (collect and render) in the loop's thread:
 * nothing else runs meanwhile, so the agent's state needs no lock.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "config.h"
#include "loop.h"
#include "metrics.h"

#define CONN_LIMIT	32	/* concurrent connections */
#define CONN_TIMEOUT_S	10	/* an idle connection is closed */

struct hbmd_metrics {
	struct MHD_Daemon *d;
	hbmd_metrics_fn *fn;
	void *arg;
	int epfd;
	uint16_t port;
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status, const char *body,
			     bool allow)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8") !=
	    MHD_YES || (allow && MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD") !=
			 MHD_YES)) {
		MHD_destroy_response(r);
		return MHD_NO;
	}
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req_cls)
{
	struct hbmd_metrics *m = cls;
	struct MHD_Response *r;
	enum MHD_Result ret;
	size_t len;
	char *text;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)req_cls;
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, "not found: the metrics are at /metrics\n",
			     false);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: GET /metrics\n",
			     true);
	if (m->fn(m->arg, &text, &len))
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "the metrics could not be made\n",
			     false);
	r = MHD_create_response_from_buffer_with_free_callback(len, text, free);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				    HBMD_METRICS_CONTENT_TYPE) != MHD_YES) {
		MHD_destroy_response(r);
		return MHD_NO;
	}
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* The listening socket on listen; its port in *port.  fd or -errno (err). */
static int listen_on(const char *listen_addr, uint16_t *port, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, ret;

	if (hbm_config_parse_listen(listen_addr, &ss, &len)) {
		snprintf(err, errlen, "\"%s\": not ADDR:PORT or [ADDR6]:PORT", listen_addr);
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: socket: %s", listen_addr, strerror(errno));
		return ret;
	}
	/* SO_REUSEADDR: a restart binds again at once; never SO_REUSEPORT (two daemons) */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", listen_addr, strerror(errno));
		close(fd);
		return ret;
	}
	*port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
					       ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

int hbmd_metrics_open(const char *listen_addr, hbmd_metrics_fn *fn, void *arg,
		      struct hbmd_metrics **out, char *err, size_t errlen)
{
	struct hbmd_metrics *m = calloc(1, sizeof(*m));
	const union MHD_DaemonInfo *info;
	int fd;

	*out = NULL;
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->fn = fn;
	m->arg = arg;
	fd = listen_on(listen_addr, &m->port, err, errlen);
	if (fd < 0) {
		free(m);
		return fd;
	}
	m->d = MHD_start_daemon(MHD_USE_EPOLL, 0, NULL, NULL, answer, m,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)CONN_LIMIT,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)CONN_TIMEOUT_S,
				MHD_OPTION_END);
	if (!m->d) {
		snprintf(err, errlen, "%s: libmicrohttpd could not start", listen_addr);
		close(fd);
		free(m);
		return -EIO;
	}
	info = MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info || info->epoll_fd < 0) {
		snprintf(err, errlen, "%s: libmicrohttpd has no epoll descriptor", listen_addr);
		MHD_stop_daemon(m->d);	/* closes fd */
		free(m);
		return -EIO;
	}
	m->epfd = info->epoll_fd;
	*out = m;
	return 0;
}

int hbmd_metrics_fd(const struct hbmd_metrics *m)
{
	return m->epfd;
}

uint64_t hbmd_metrics_deadline(const struct hbmd_metrics *m)
{
	MHD_UNSIGNED_LONG_LONG t;

	if (MHD_get_timeout(m->d, &t) != MHD_YES)
		return UINT64_MAX;
	return hbmd_now_ms() + (uint64_t)t;
}

void hbmd_metrics_run(struct hbmd_metrics *m)
{
	MHD_run(m->d);
}

uint16_t hbmd_metrics_port(const struct hbmd_metrics *m)
{
	return m->port;
}

void hbmd_metrics_close(struct hbmd_metrics *m)
{
	if (!m)
		return;
	MHD_stop_daemon(m->d);
	free(m);
}
