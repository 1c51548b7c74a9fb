// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl domain status: hbmpoold's view of the domain, read from the
 * daemon's control socket (daemon/control.h): connect, half-close (no
 * request: the view at once), read one JSON object until end of file.
 * hbmctl domain drain|undrain N: the same with one request line
 * ({"cmd":"drain","node":N}) before the half-close; hbmctl domain leave:
 * {"cmd":"leave"}; the answer is
 * {"ok":true,...} or {"ok":false,"error":"...","errno":E}.  The view is the daemon's, not the
 * kernel's: "domain show" stays the kernel's (netlink), so that its output
 * and JSON keys do not change and each command fails for its own reason
 * (no module, no daemon).  This path never opens netlink.
 *
 * The socket: --socket PATH, else $HBMPOOLD_SOCKET, else
 * /run/hbmpool/hbmpoold.sock.  Connecting and reading together take at most
 * CTL_DAEMON_TIMEOUT_MS: a daemon that never answers, or answers a byte at
 * a time, is an error, never a hang.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "hbmctl.h"
#include "output.h"

#define CTL_DAEMON_SOCKET	"/run/hbmpool/hbmpoold.sock"
#define CTL_DAEMON_TIMEOUT_MS	5000
/* A 1024-node domain's full link matrix is ~100 MiB of JSON. */
#define CTL_DAEMON_MAX		(256u << 20)
#define CTL_WAIT_POLL_MS	1000	/* --wait: the view this often */

/* --wait: a daemon gone is no message of daemon_connect()'s (the caller says) */
static bool connect_quiet;
static int connect_errno;

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Connect to path within timeout_ms (a unix connect waits for room in the
 * backlog up to SO_SNDTIMEO).  Returns the descriptor or -1 (said).
 */
static int daemon_connect(const char *path, int timeout_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = timeout_ms / 1000,
			      .tv_usec = (timeout_ms % 1000) * 1000 };
	int fd, e;

	if (!*path || strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "hbmctl: %s: not a unix socket path (empty or too long)\n", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "hbmctl: socket: %s\n", strerror(errno));
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv))) {
		fprintf(stderr, "hbmctl: setsockopt: %s\n", strerror(errno));
		close(fd);
		return -1;
	}
	if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return fd;
	e = errno;
	close(fd);
	connect_errno = e;
	if (connect_quiet && (e == ENOENT || e == ECONNREFUSED))
		return -1;
	switch (e) {
	case ENOENT:
		fprintf(stderr, "hbmctl: hbmpoold is not running (no %s: %s)\n", path, strerror(e));
		break;
	case ECONNREFUSED:
		fprintf(stderr, "hbmctl: hbmpoold is not running (%s: %s: nothing listens there)\n",
			path, strerror(e));
		break;
	case EACCES:
	case EPERM:
		fprintf(stderr, "hbmctl: %s: %s (the socket is mode 0660: run as root or as its group)\n",
			path, strerror(e));
		break;
	case EAGAIN:
	case EINPROGRESS:
	case ETIMEDOUT:
		fprintf(stderr, "hbmctl: hbmpoold did not accept on %s within %d ms (its backlog is full)\n",
			path, timeout_ms);
		break;
	default:
		fprintf(stderr, "hbmctl: %s: %s\n", path, strerror(e));
	}
	return -1;
}

/*
 * Read until end of file, all of it by deadline (monotonic ms).  Returns
 * the bytes (malloc'ed, NUL-terminated, length in *len) or NULL (said).
 */
static char *daemon_read(int fd, const char *path, int64_t deadline, int timeout_ms, size_t *len)
{
	size_t cap = 0, n = 0;
	char *buf = NULL, *nb;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - mono_ms();
		ssize_t r;
		int ret;

		if (left <= 0)
			goto timeout;
		ret = poll(&p, 1, (int)left);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0) {
			fprintf(stderr, "hbmctl: poll: %s\n", strerror(errno));
			goto fail;
		}
		if (!ret)
			goto timeout;
		if (cap - n < 65536 + 1) {
			cap = cap ? cap * 2 : 65536 * 2;
			if (cap > CTL_DAEMON_MAX + 1)
				cap = CTL_DAEMON_MAX + 1;
			if (cap - n < 2) {
				fprintf(stderr, "hbmctl: hbmpoold's answer on %s is over %u MiB\n",
					path, CTL_DAEMON_MAX >> 20);
				goto fail;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				fprintf(stderr, "hbmctl: out of memory\n");
				goto fail;
			}
			buf = nb;
		}
		r = recv(fd, buf + n, cap - n - 1, MSG_DONTWAIT);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0 && errno == ECONNRESET && n)
			break;	/* closed with our request unread (a daemon that reads none) */
		if (r < 0) {
			fprintf(stderr, "hbmctl: %s: %s\n", path, strerror(errno));
			goto fail;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	if (!n) {
		fprintf(stderr, "hbmctl: hbmpoold closed %s without an answer\n", path);
		goto fail;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
timeout:
	fprintf(stderr, "hbmctl: hbmpoold did not answer on %s within %d ms (%zu bytes read)\n",
		path, timeout_ms, n);
fail:
	free(buf);
	return NULL;
}

/* What a view must hold to be one; NULL if it does, else what is wrong. */
static const char *view_invalid(json_object *v)
{
	static const struct {
		const char *key;
		json_type type;
		const char *why;
	} top[] = {
		{ "node", json_type_int, "no integer \"node\"" },
		{ "state", json_type_string, "no string \"state\"" },
		{ "epoch", json_type_int, "no integer \"epoch\"" },
		{ "members", json_type_array, "no array \"members\"" },
	};
	json_object *x, *arr;
	size_t i, n;

	if (!json_object_is_type(v, json_type_object))
		return "not a JSON object";
	for (i = 0; i < sizeof(top) / sizeof(top[0]); i++)
		if (!json_object_object_get_ex(v, top[i].key, &x) ||
		    !json_object_is_type(x, top[i].type))
			return top[i].why;
	json_object_object_get_ex(v, "members", &arr);
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		x = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(x, json_type_object) ||
		    !json_object_object_get_ex(x, "id", &x) || !json_object_is_type(x, json_type_int))
			return "a member that is no object with an integer \"id\"";
	}
	/* replication: a daemon before replicated regions had none */
	if (json_object_object_get_ex(v, "replication", &x) &&
	    (!json_object_is_type(x, json_type_object) ||
	     (json_object_object_get_ex(x, "by_member", &arr) &&
	      !json_object_is_type(arr, json_type_array))))
		return "\"replication\" is not an object with an array \"by_member\"";
	/* links: a daemon before link health had none */
	if (!json_object_object_get_ex(v, "links", &arr))
		return NULL;
	if (!json_object_is_type(arr, json_type_array))
		return "\"links\" is not an array";
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		json_object *l = json_object_array_get_idx(arr, i);

		if (!json_object_is_type(l, json_type_object) ||
		    !json_object_object_get_ex(l, "from", &x) || !json_object_is_type(x, json_type_int) ||
		    !json_object_object_get_ex(l, "to", &x) || !json_object_is_type(x, json_type_int))
			return "a link that is no object with integer \"from\" and \"to\"";
	}
	return NULL;
}

/* Write the request line (or nothing), then half-close: the daemon answers at once. */
static int daemon_send(int fd, const char *path, const char *req)
{
	size_t off = 0, len = req ? strlen(req) : 0;
	ssize_t w;

	while (off < len) {
		w = send(fd, req + off, len - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EPIPE || errno == ECONNRESET))
			return 0;	/* it closed first: what it said tells why */
		if (w < 0) {
			fprintf(stderr, "hbmctl: sending the request on %s: %s\n", path,
				strerror(errno));
			return -1;
		}
		off += (size_t)w;
	}
	/* a daemon that closed first (it answered without reading) is fine */
	if (shutdown(fd, SHUT_WR) && errno != ENOTCONN) {
		fprintf(stderr, "hbmctl: %s: shutdown: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The daemon's answer to req (NULL: the view), parsed, and checked to be a
 * view when req is NULL; NULL (said) on any error.
 */
static json_object *daemon_ask(const char *path, const char *req)
{
	int64_t deadline = mono_ms() + CTL_DAEMON_TIMEOUT_MS;
	struct json_tokener *tok;
	json_object *v = NULL;
	enum json_tokener_error jerr;
	const char *why;
	size_t len = 0, end;
	char *buf;
	int fd;

	fd = daemon_connect(path, CTL_DAEMON_TIMEOUT_MS);
	if (fd < 0)
		return NULL;
	if (daemon_send(fd, path, req)) {
		close(fd);
		return NULL;
	}
	buf = daemon_read(fd, path, deadline, CTL_DAEMON_TIMEOUT_MS, &len);
	close(fd);
	if (!buf)
		return NULL;
	tok = json_tokener_new();
	if (!tok) {
		free(buf);
		fprintf(stderr, "hbmctl: out of memory\n");
		return NULL;
	}
	/* trailing characters: whitespace is fine, anything else is not (below) */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
	v = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	while (jerr == json_tokener_success && end < len && strchr(" \t\r\n", buf[end]))
		end++;
	if (jerr == json_tokener_continue) {
		fprintf(stderr, "hbmctl: hbmpoold's answer on %s ends before its JSON does (%zu bytes)\n",
			path, len);
	} else if (jerr != json_tokener_success) {
		fprintf(stderr, "hbmctl: hbmpoold's answer on %s is not JSON: %s (at byte %zu of %zu)\n",
			path, json_tokener_error_desc(jerr), end, len);
	} else if (end < len) {
		fprintf(stderr, "hbmctl: hbmpoold's answer on %s has more after its JSON (at byte %zu of %zu)\n",
			path, end, len);
	} else if (!req && (why = view_invalid(v))) {
		fprintf(stderr, "hbmctl: hbmpoold's answer on %s is not its view of the domain: %s\n",
			path, why);
	} else {
		json_tokener_free(tok);
		free(buf);
		return v;
	}
	json_object_put(v);
	json_tokener_free(tok);
	free(buf);
	return NULL;
}

/* --- the readable view ---------------------------------------------------- */

static const char *leader_cell(json_object *o, char *buf, size_t len)
{
	json_object *v;

	if (!json_object_object_get_ex(o, "leader", &v) || !json_object_is_type(v, json_type_int))
		return "none";
	snprintf(buf, len, "%" PRId64, json_object_get_int64(v));
	return buf;
}

static int64_t get_i64(json_object *o, const char *key, int64_t dflt)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return dflt;
	return json_object_get_int64(v);
}

static const char *lease_cell(json_object *o, char *buf, size_t len)
{
	json_object *l, *id;

	if (!json_object_object_get_ex(o, "lease", &l) || !json_object_is_type(l, json_type_object))
		return "-";
	if (!json_object_object_get_ex(l, "id", &id))
		id = NULL;
	snprintf(buf, len, "%s (ttl %" PRId64 " ms, proven for %" PRId64 " ms)",
		 id ? json_object_get_string(id) : "-", get_i64(l, "ttl_ms", 0),
		 get_i64(l, "proven_for_ms", 0));
	return buf;
}

static const char *count_cell(json_object *o, const char *key, char *buf, size_t len)
{
	json_object *a;
	size_t i, n, up = 0, degraded = 0, down = 0;

	if (!json_object_object_get_ex(o, key, &a))
		return "-";
	n = json_object_array_length(a);
	if (strcmp(key, "links") || !n) {
		snprintf(buf, len, "%zu", n);
		return buf;
	}
	for (i = 0; i < n; i++) {
		json_object *s;
		const char *st;

		if (!json_object_object_get_ex(json_object_array_get_idx(a, i), "state", &s))
			continue;
		st = json_object_get_string(s);
		up += !strcmp(st, "up");
		degraded += !strcmp(st, "degraded");
		down += !strcmp(st, "down");
	}
	snprintf(buf, len, "%zu: %zu up, %zu degraded, %zu down", n, up, degraded, down);
	return buf;
}

static const char *members_cell(json_object *o, char *buf, size_t len)
{
	return count_cell(o, "members", buf, len);
}

static const char *links_cell(json_object *o, char *buf, size_t len)
{
	return count_cell(o, "links", buf, len);
}

/* "addr:port", "[addr6]:port" or "-". */
static const char *addr_cell(json_object *row, char *buf, size_t len)
{
	json_object *a;
	const char *s;

	if (!json_object_object_get_ex(row, "addr", &a) || !json_object_is_type(a, json_type_string))
		return "-";
	s = json_object_get_string(a);
	snprintf(buf, len, strchr(s, ':') ? "[%s]:%" PRId64 : "%s:%" PRId64, s,
		 get_i64(row, "port", 0));
	return buf;
}

/* A member's location, "site/rack/tray" of the levels it names; "-" if none. */
static const char *location_cell(json_object *row, char *buf, size_t len)
{
	static const char *const levels[] = { "site", "rack", "tray" };
	json_object *lo, *v;
	size_t n = 0;
	unsigned int i;

	if (!json_object_object_get_ex(row, "location", &lo) ||
	    !json_object_is_type(lo, json_type_object))
		return "-";
	buf[0] = '\0';
	for (i = 0; i < sizeof(levels) / sizeof(levels[0]) && n < len; i++) {
		if (!json_object_object_get_ex(lo, levels[i], &v) ||
		    !json_object_is_type(v, json_type_string))
			continue;
		n += snprintf(buf + n, len - n, "%s%s=%s", n ? "," : "", levels[i],
			      json_object_get_string(v));
	}
	return buf[0] ? buf : "-";
}

/* 250 -> "250us", 12500 -> "12.5ms", 2000000 -> "2.0s"; 0 (none yet) -> "-". */
static const char *rtt_cell(json_object *row, char *buf, size_t len)
{
	int64_t us = get_i64(row, "rtt_us", 0);

	if (us <= 0)
		return "-";
	if (us < 1000)
		snprintf(buf, len, "%" PRId64 "us", us);
	else if (us < 1000000)
		snprintf(buf, len, "%.1fms", (double)us / 1e3);
	else
		snprintf(buf, len, "%.1fs", (double)us / 1e6);
	return buf;
}

static const char *errors_cell(json_object *row, char *buf, size_t len)
{
	json_object *v;

	if (!json_object_object_get_ex(row, "error_pct", &v) || !json_object_is_type(v, json_type_int))
		return "-";
	snprintf(buf, len, "%" PRId64 "%%", json_object_get_int64(v));
	return buf;
}

/* How long ago the link last changed (the wall clock of its FROM node). */
static const char *since_cell(json_object *row, char *buf, size_t len)
{
	int64_t since = get_i64(row, "since", 0), now, s;
	struct timespec ts;

	if (since <= 0)
		return "-";
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	s = now > since ? (now - since) / 1000 : 0;	/* a clock ahead of ours: now */
	if (s < 60)
		snprintf(buf, len, "%" PRId64 "s ago", s);
	else if (s < 3600)
		snprintf(buf, len, "%" PRId64 "m%02" PRId64 "s ago", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%" PRId64 "h%02" PRId64 "m ago", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, len, "%" PRId64 "d%02" PRId64 "h ago", s / 86400, s % 86400 / 3600);
	return buf;
}

static int cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

static int by_id(const void *a, const void *b)
{
	json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b;

	return cmp_i64(get_i64(x, "id", 0), get_i64(y, "id", 0));
}

static int by_from_to(const void *a, const void *b)
{
	json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b;
	int c = cmp_i64(get_i64(x, "from", 0), get_i64(y, "from", 0));

	return c ? c : cmp_i64(get_i64(x, "to", 0), get_i64(y, "to", 0));
}

/* The drained node ids, "none", or "-" (a daemon before drains). */
static const char *drains_cell(json_object *o, char *buf, size_t len)
{
	json_object *a;
	size_t i, n, k = 0;

	if (!json_object_object_get_ex(o, "drains", &a) || !json_object_is_type(a, json_type_array))
		return "-";
	n = json_object_array_length(a);
	if (!n)
		return "none";
	buf[0] = '\0';
	for (i = 0; i < n && k < len; i++)
		k += snprintf(buf + k, len - k, "%s%" PRId64, i ? " " : "",
			      json_object_get_int64(json_object_array_get_idx(a, i)));
	return buf;
}

#define NCOLS(c) ((int)(sizeof(c) / sizeof((c)[0])))

/* A member's report, or the totals: degraded or lost chunks. */
static bool repl_degraded(json_object *o)
{
	return get_i64(o, "degraded_chunks", 0) > 0 || get_i64(o, "lost_chunks", 0) > 0;
}

/*
 * The domain's replication: "all copies good", or "3 chunks of 1 region
 * degraded, 0 lost (member 1)", "(members 1 4)"; "-" from a daemon before
 * replicated regions.
 */
static const char *replication_cell(json_object *o, char *buf, size_t len)
{
	json_object *r, *bm = NULL, *m;
	int64_t chunks, regions;
	size_t i, n, k, who = 0;

	if (!json_object_object_get_ex(o, "replication", &r) ||
	    !json_object_is_type(r, json_type_object))
		return "-";
	if (!repl_degraded(r))
		return "all copies good";
	chunks = get_i64(r, "degraded_chunks", 0);
	regions = get_i64(r, "degraded_regions", 0);
	k = (size_t)snprintf(buf, len, "%" PRId64 " chunk%s of %" PRId64 " region%s degraded, %"
			     PRId64 " lost", chunks, chunks == 1 ? "" : "s", regions,
			     regions == 1 ? "" : "s", get_i64(r, "lost_chunks", 0));
	json_object_object_get_ex(r, "by_member", &bm);
	n = json_object_array_length(bm);
	for (i = 0; i < n && k < len; i++) {
		m = json_object_array_get_idx(bm, i);
		if (!repl_degraded(m))
			continue;
		k += (size_t)snprintf(buf + k, len - k, "%s%" PRId64, who++ ? " " :
				      get_i64(r, "members_degraded", 0) > 1 ? " (members " :
									      " (member ",
				      get_i64(m, "id", -1));
	}
	if (who && k < len)
		snprintf(buf + k, len - k, ")");
	return buf;
}

/* The members whose chunks are degraded or lost (a new array, NULL: none). */
static json_object *repl_rows(json_object *v)
{
	json_object *r, *bm, *rows = NULL, *m;
	size_t i, n;

	if (!json_object_object_get_ex(v, "replication", &r) ||
	    !json_object_object_get_ex(r, "by_member", &bm))
		return NULL;
	n = json_object_array_length(bm);
	for (i = 0; i < n; i++) {
		m = json_object_array_get_idx(bm, i);
		if (!json_object_is_type(m, json_type_object) || !repl_degraded(m))
			continue;
		if (!rows)
			rows = json_object_new_array();
		if (rows)
			json_object_array_add(rows, json_object_get(m));
	}
	return rows;
}

/* A drain's members that reported, of the members: "2/3". */
static const char *reported_cell(json_object *row, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRId64 "/%" PRId64, get_i64(row, "reported", 0),
		 get_i64(row, "members", 0));
	return buf;
}

static const char *done_cell(json_object *row, char *buf, size_t len)
{
	json_object *x;

	(void)buf;
	(void)len;
	if (!json_object_object_get_ex(row, "done", &x))
		return "-";
	return json_object_get_boolean(x) ? "yes" : "no";
}

static void print_view(json_object *v)
{
	static const struct out_col head[] = {
		{ "node", "node", F_STR, NULL },
		{ "state", "state", F_STR, NULL },
		{ "status", "status", F_STR, NULL },
		{ "epoch", "epoch", F_STR, NULL },
		{ "leader", NULL, F_FUNC, leader_cell },
		{ "is-leader", "is_leader", F_STR, NULL },
		{ "incarnation", "incarnation", F_STR, NULL },
		{ "lease", NULL, F_FUNC, lease_cell },
		{ "members", NULL, F_FUNC, members_cell },
		{ "links", NULL, F_FUNC, links_cell },
		{ "drains", NULL, F_FUNC, drains_cell },
		{ "leaving", "leaving", F_STR, NULL },
		{ "replication", NULL, F_FUNC, replication_cell },
	};
	static const struct out_col members[] = {
		{ "ID", "id", F_STR, NULL },
		{ "ADDR", NULL, F_FUNC, addr_cell },
		{ "SEGMENT", "segment_bytes", F_SIZE, NULL },
		{ "CAPACITY", "capacity", F_SIZE, NULL },
		{ "INCARNATION", "incarnation", F_STR, NULL },
		{ "KERNEL", "kernel", F_STR, NULL },
		{ "LOCATION", NULL, F_FUNC, location_cell },
		{ "RELATION", "relation", F_STR, NULL },
		{ "DISTANCE", "distance", F_STR, NULL },
		{ "LINK", "link_type", F_STR, NULL },
		{ "DRAINING", "draining", F_STR, NULL },
	};
	static const struct out_col drains[] = {
		{ "DRAINED", "node", F_STR, NULL },
		{ "CHUNKS-LEFT", "chunks_left", F_STR, NULL },
		{ "BYTES-LEFT", "bytes_left", F_SIZE, NULL },
		{ "FAILURES", "failures", F_STR, NULL },
		{ "LOST", "lost", F_STR, NULL },
		{ "REPORTED", NULL, F_FUNC, reported_cell },
		{ "WAITING-FOR", "not_reported", F_STR, NULL },
		{ "DONE", NULL, F_FUNC, done_cell },
	};
	static const struct out_col repl[] = {
		{ "MEMBER", "id", F_STR, NULL },
		{ "REPLICATED-REGIONS", "regions", F_STR, NULL },
		{ "DEGRADED-REGIONS", "degraded_regions", F_STR, NULL },
		{ "DEGRADED-CHUNKS", "degraded_chunks", F_STR, NULL },
		{ "LOST-CHUNKS", "lost_chunks", F_STR, NULL },
	};
	static const struct out_col links[] = {
		{ "FROM", "from", F_STR, NULL },
		{ "TO", "to", F_STR, NULL },
		{ "STATE", "state", F_STR, NULL },
		{ "RTT", NULL, F_FUNC, rtt_cell },
		{ "ERRORS", NULL, F_FUNC, errors_cell },
		{ "CHANGES", "changes", F_STR, NULL },
		{ "SINCE", NULL, F_FUNC, since_cell },
	};
	json_object *a;

	out_kv(v, head, NCOLS(head));
	json_object_object_get_ex(v, "members", &a);
	if (json_object_array_length(a)) {
		json_object_array_sort(a, by_id);
		putchar('\n');
		out_table(a, members, NCOLS(members));
	}
	if (json_object_object_get_ex(v, "drain_progress", &a) &&
	    json_object_is_type(a, json_type_array) && json_object_array_length(a)) {
		putchar('\n');
		out_table(a, drains, NCOLS(drains));
	}
	a = repl_rows(v);
	if (a) {
		json_object_array_sort(a, by_id);
		putchar('\n');
		out_table(a, repl, NCOLS(repl));
		json_object_put(a);
	}
	if (json_object_object_get_ex(v, "links", &a) && json_object_array_length(a)) {
		json_object_array_sort(a, by_from_to);
		putchar('\n');
		out_table(a, links, NCOLS(links));
	}
}

/* The daemon's socket: $HBMPOOLD_SOCKET if set, else the default. */
static const char *socket_default(void)
{
	const char *path = getenv("HBMPOOLD_SOCKET");

	return path && *path ? path : CTL_DAEMON_SOCKET;
}

/*
 * argv[*i] as "--socket PATH" or "--socket=PATH": 1 (*path set, *i past
 * it), 0 if it is something else, or minus the exit status of a usage error.
 */
static int socket_arg(int argc, char **argv, int *i, const char **path)
{
	if (!strcmp(argv[*i], "--socket")) {
		if (*i + 1 >= argc)
			return -ctl_bad(&ctl_obj_domain, "'%s' needs a path", argv[*i]);
		*path = argv[++*i];
		return 1;
	}
	if (!strncmp(argv[*i], "--socket=", 9)) {
		*path = argv[*i] + 9;
		return 1;
	}
	return 0;
}

int ctl_domain_status(int argc, char **argv)
{
	const char *path = socket_default();
	json_object *v;
	int i, r;

	for (i = 1; i < argc; i++) {
		r = socket_arg(argc, argv, &i, &path);
		if (r < 0)
			return -r;
		if (!r)
			return ctl_bad(&ctl_obj_domain, "unknown argument '%s'", argv[i]);
	}
	v = daemon_ask(path, NULL);
	if (!v)
		return CTL_EXIT_FAIL;
	if (ctl.json)
		out_json(v);
	else
		print_view(v);
	json_object_put(v);
	return fflush(stdout) ? CTL_EXIT_FAIL : 0;
}

/* The view's progress of node id's drain (NULL: none). */
static json_object *progress_of(json_object *v, int64_t id)
{
	json_object *a, *row;
	size_t i;

	if (!json_object_object_get_ex(v, "drain_progress", &a) ||
	    !json_object_is_type(a, json_type_array))
		return NULL;
	for (i = 0; i < json_object_array_length(a); i++) {
		row = json_object_array_get_idx(a, i);
		if (json_object_is_type(row, json_type_object) && get_i64(row, "node", -1) == id)
			return row;
	}
	return NULL;
}

/* The members a drain's progress has no report from: " (waiting for 2, 5)", or "". */
static void not_reported(json_object *row, char *buf, size_t len)
{
	json_object *a;
	size_t i, n, off = 0;

	*buf = '\0';
	if (!json_object_object_get_ex(row, "not_reported", &a) ||
	    !json_object_is_type(a, json_type_array) || !(n = json_object_array_length(a)))
		return;
	for (i = 0; i < n && off + 24 < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%" PRId64,
					i ? ", " : " (waiting for node ",
					json_object_get_int64(json_object_array_get_idx(a, i)));
	if (off + 2 < len)
		snprintf(buf + off, len - off, ")");
}

/* One line of progress, into line. */
static void progress_text(json_object *row, int64_t id, char *line, size_t len)
{
	char size[32], lost[48] = "", wait[160];

	out_size((uint64_t)get_i64(row, "bytes_left", 0), size, sizeof(size));
	if (get_i64(row, "lost", 0) > 0)
		snprintf(lost, sizeof(lost), ", %" PRId64 " lost (nothing to move)",
			 get_i64(row, "lost", 0));
	not_reported(row, wait, sizeof(wait));
	snprintf(line, len,
		 "node %" PRId64 ": %" PRId64 " chunks (%s) left, %" PRId64
		 " failures%s, %" PRId64 "/%" PRId64 " members reported%s",
		 id, get_i64(row, "chunks_left", 0), size, get_i64(row, "failures", 0), lost,
		 get_i64(row, "reported", 0), get_i64(row, "members", 0), wait);
}

/* One line of progress, printed when it differs from the last (in last). */
static void progress_line(json_object *row, int64_t id, char *last, size_t len)
{
	char line[384];

	progress_text(row, id, line, sizeof(line));
	if (strcmp(line, last)) {
		/* -j: the drain's progress object, one line each */
		printf("%s\n", ctl.json ? json_object_to_json_string_ext(row, JSON_C_TO_STRING_PLAIN) :
		       line);
		fflush(stdout);
		snprintf(last, len, "%s", line);
	}
}

/* A line of --wait's end, not with -j (whose lines are the progress objects). */
static int wait_end(const char *fmt, int64_t id)
{
	if (!ctl.json)
		printf(fmt, id);
	return fflush(stdout) ? CTL_EXIT_FAIL : 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/*
 * --wait on a drain of id (-j: each new progress object on a line of its
 * own, no other line): until every member reports no chunk left on it
 * (0), the drain ends (undrained: 1), the daemon goes (1) or timeout_s
 * passes (1, naming what it waits for; 0: no limit).  leave: the daemon's
 * own drain; the daemon going after it was done is the leave done (0).
 */
static int drain_wait(const char *path, int64_t id, bool leave, uint32_t timeout_s)
{
	char last[384] = "", line[384];
	bool done = false, seen = false;
	json_object *v, *row;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		connect_quiet = leave;
		connect_errno = 0;
		v = daemon_ask(path, NULL);
		connect_quiet = false;
		if (!v) {
			if (!leave || (connect_errno != ENOENT && connect_errno != ECONNREFUSED))
				return CTL_EXIT_FAIL;
			if (done)
				return wait_end("node %" PRId64 ": left the domain (hbmpoold exited)\n",
						id);
			fprintf(stderr, "hbmctl: hbmpoold on %s went away before node %" PRId64
				" was drained: see its log\n", path, id);
			return CTL_EXIT_FAIL;
		}
		if (leave && id < 0)
			id = get_i64(v, "node", -1);
		if (leave && json_object_get_boolean(json_object_object_get(v, "left"))) {
			json_object_put(v);
			return wait_end("node %" PRId64 ": left the domain (hbmpoold exits)\n", id);
		}
		row = progress_of(v, id);
		if (row) {
			json_object *x;

			seen = true;
			progress_line(row, id, last, sizeof(last));
			done = json_object_object_get_ex(row, "done", &x) &&
			       json_object_get_boolean(x);
			if (done && !leave) {
				json_object_put(v);
				return wait_end("node %" PRId64
						": drained (no member has a chunk left on it)\n", id);
			}
		} else if (seen || (leave && !json_object_get_boolean(
				json_object_object_get(v, "leaving")) && !done)) {
			json_object *st = json_object_object_get(v, "state");

			if (leave && st && !strcmp(json_object_get_string(st), "stopped")) {
				done = true;	/* left: the socket goes next */
			} else {
				json_object_put(v);
				fprintf(stderr, "hbmctl: the drain of node %" PRId64
					" ended before it was done (undrained?)\n", id);
				return CTL_EXIT_FAIL;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (timeout_s && t.tv_sec - t0.tv_sec >= (time_t)timeout_s) {
			row = progress_of(v, id);
			if (row)
				progress_text(row, id, line, sizeof(line));
			else
				snprintf(line, sizeof(line), "node %" PRId64 ": no progress yet", id);
			fprintf(stderr, "hbmctl: not drained after %u s: %s; the %s goes on in hbmpoold\n",
				timeout_s, line, leave ? "leave" : "drain");
			json_object_put(v);
			return CTL_EXIT_FAIL;
		}
		json_object_put(v);
		sleep_ms(CTL_WAIT_POLL_MS);
	}
}

/* argv[*i] as "--timeout SECONDS": 1 (*s set, *i past it), 0, or minus a usage error's status. */
static int timeout_arg(int argc, char **argv, int *i, uint32_t *s)
{
	if (strcmp(argv[*i], "--timeout"))
		return 0;
	if (*i + 1 >= argc)
		return -ctl_bad(&ctl_obj_domain, "'--timeout' needs a number of seconds");
	if (ctl_parse_u32(argv[*i + 1], s) || !*s)
		return -ctl_bad(&ctl_obj_domain, "bad --timeout '%s': seconds, at least 1",
				argv[*i + 1]);
	++*i;
	return 1;
}

/* The answer to a request: 0 if ok (printed with -j), else said, 1. */
static int answer_ok(json_object *v, const char *path, const char *what)
{
	json_object *x;

	if (!json_object_is_type(v, json_type_object) ||
	    !json_object_object_get_ex(v, "ok", &x) || !json_object_is_type(x, json_type_boolean)) {
		fprintf(stderr,
			"hbmctl: hbmpoold on %s did not answer the request (no \"ok\" in its answer: a daemon without requests?)\n",
			path);
		return CTL_EXIT_FAIL;
	}
	if (!json_object_get_boolean(x)) {
		const char *why = "no reason given";

		if (json_object_object_get_ex(v, "error", &x) && json_object_is_type(x, json_type_string))
			why = json_object_get_string(x);
		fprintf(stderr, "hbmctl: hbmpoold refused to %s: %s\n", what, why);
		return CTL_EXIT_FAIL;
	}
	if (ctl.json)
		out_json(v);
	return 0;
}

/*
 * hbmctl domain drain|undrain N [--wait [--timeout S]] [--socket PATH]: the
 * request, and the daemon's answer: 0 if ok (a line; -j: the answer), else
 * its error on stderr and exit 1.  drain --wait: then the domain-wide
 * progress, until every member reports no chunk left on N (or S seconds).
 */
int ctl_domain_drain(int argc, char **argv)
{
	const char *path = socket_default(), *node = NULL;
	bool on = !strcmp(argv[0], "drain"), wait = false;
	uint32_t timeout_s = 0;
	json_object *v;
	char req[96], what[64];
	uint32_t id;
	int i, r, rc;

	for (i = 1; i < argc; i++) {
		r = socket_arg(argc, argv, &i, &path);
		if (!r && on)
			r = timeout_arg(argc, argv, &i, &timeout_s);
		if (r < 0)
			return -r;
		if (r)
			continue;
		if (on && !strcmp(argv[i], "--wait")) {
			wait = true;
			continue;
		}
		if (node)
			return ctl_bad(&ctl_obj_domain, "unknown argument '%s'", argv[i]);
		node = argv[i];
	}
	if (!node)
		return ctl_bad(&ctl_obj_domain, "domain %s needs a node id", argv[0]);
	if (timeout_s && !wait)
		return ctl_bad(&ctl_obj_domain, "'--timeout' goes with '--wait'");
	if (ctl_parse_u32(node, &id) || id > 1023)
		return ctl_bad(&ctl_obj_domain, "bad node id '%s': 0..1023", node);
	snprintf(req, sizeof(req), "{\"cmd\":\"%s\",\"node\":%u}\n", argv[0], id);
	v = daemon_ask(path, req);
	if (!v)
		return CTL_EXIT_FAIL;
	snprintf(what, sizeof(what), "%s node %u", argv[0], id);
	rc = answer_ok(v, path, what);
	json_object_put(v);
	if (rc)
		return rc;
	if (!ctl.json)
		printf("node %u: %s\n", id, on ?
		       "draining (it takes no new chunks; every member moves its chunks off it)" :
		       "no longer draining (it takes new chunks)");
	if (fflush(stdout))
		return CTL_EXIT_FAIL;
	return wait ? drain_wait(path, id, false, timeout_s) : 0;
}

/*
 * hbmctl domain leave [--wait [--timeout S]] [--socket PATH]: this node
 * drains itself, then leaves the domain and hbmpoold exits 0.  --wait: the
 * progress, until hbmpoold has left (or S seconds: exit 1, still leaving).
 */
int ctl_domain_leave(int argc, char **argv)
{
	const char *path = socket_default();
	bool wait = false;
	uint32_t timeout_s = 0;
	json_object *v;
	int i, r, rc;

	for (i = 1; i < argc; i++) {
		r = socket_arg(argc, argv, &i, &path);
		if (!r)
			r = timeout_arg(argc, argv, &i, &timeout_s);
		if (r < 0)
			return -r;
		if (r)
			continue;
		if (!strcmp(argv[i], "--wait")) {
			wait = true;
			continue;
		}
		return ctl_bad(&ctl_obj_domain, "unknown argument '%s'", argv[i]);
	}
	if (timeout_s && !wait)
		return ctl_bad(&ctl_obj_domain, "'--timeout' goes with '--wait'");
	v = daemon_ask(path, "{\"cmd\":\"leave\"}\n");
	if (!v)
		return CTL_EXIT_FAIL;
	rc = answer_ok(v, path, "leave");
	json_object_put(v);
	if (rc)
		return rc;
	if (!ctl.json)
		printf("leaving: this node drains itself, then leaves the domain\n");
	if (fflush(stdout))
		return CTL_EXIT_FAIL;
	return wait ? drain_wait(path, -1, true, timeout_s) : 0;
}
