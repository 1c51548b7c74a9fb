/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hbmpoold's control socket (unix, stream, [control] socket in the
 * config).  A client connects and either:
 *
 *  - writes nothing: it reads one JSON object, the daemon's view of the
 *    domain (hbmd_agent_json()), then end of file.  The daemon waits
 *    HBMD_CONTROL_WAIT_MS for a request before it sends the view; a client
 *    that half-closes (shutdown(SHUT_WR)) or writes an empty line gets it
 *    at once.  Clients of before requests (which read at once and write
 *    nothing) thus still get the view, HBMD_CONTROL_WAIT_MS later;
 *  - writes one request, one line of JSON ended by "\n" (or by its
 *    half-close), at most HBMD_CONTROL_REQUEST_MAX bytes, its first byte
 *    within HBMD_CONTROL_WAIT_MS of the connect and each next one within
 *    HBMD_CONTROL_STALL_MS, then reads the answer, one JSON object, then
 *    end of file:
 *
 *      {"cmd": "view"}                 the view, as above
 *      {"cmd": "drain", "node": N}     node N (0..1023) takes no new chunks
 *      {"cmd": "undrain", "node": N}   it takes them again
 *      {"cmd": "leave"}                this node drains itself, then leaves
 *                                      the domain and the daemon exits 0
 *
 *    answered {"ok": true, "cmd": "drain", "node": N} ({"ok": true,
 *    "cmd": "leave"}: the leave began; the view's "leaving" follows it), or
 *    {"ok": false, "error": "...", "errno": E} (E positive: EINVAL for a
 *    request that is no JSON object, has no string "cmd", an unknown one,
 *    no integer "node" or one out of range; E2BIG for a request over
 *    HBMD_CONTROL_REQUEST_MAX bytes; ETIMEDOUT for a line not ended within
 *    HBMD_CONTROL_STALL_MS; else what the request function returned).
 *    Anything after the line is ignored.
 *
 * Never blocking the daemon's loop on a client: the request is read and
 * the answer written as the client sends and reads (the loop polls the
 * client for POLLIN, then POLLOUT while some is left), however large the
 * view is (the link matrix grows as N²).  The request function itself is
 * the caller's (hbmpoold's: one etcd call, bounded as its others are).  A
 * client that reads nothing for HBMD_CONTROL_STALL_MS is dropped, and at
 * most HBMD_CONTROL_CLIENTS are served at once (the next ones wait in the
 * listen backlog).
 */
#ifndef HBMPOOLD_CONTROL_H
#define HBMPOOLD_CONTROL_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#define HBMD_CONTROL_CLIENTS	8
#define HBMD_CONTROL_STALL_MS	5000
#define HBMD_CONTROL_WAIT_MS	200	/* a silent client: the view after this */
#define HBMD_CONTROL_REQUEST_MAX 1024	/* bytes of a request line, "\n" included */
#define HBMD_CONTROL_NODE_MAX	1023	/* a node id in a request */
#define HBMD_CONTROL_NO_NODE	UINT32_MAX	/* leave: a request of no node */

struct hbmd_control;

/* The view to send: a malloc'ed NUL-terminated string, or -errno. */
typedef int hbmd_control_view_fn(void *arg, char **json);
/*
 * A request (cmd "drain" or "undrain", node checked to be 0..1023; or
 * "leave", node HBMD_CONTROL_NO_NODE): 0, or -errno with the reason in err.
 */
typedef int hbmd_control_request_fn(void *arg, const char *cmd, uint32_t node, char *err,
				    size_t errlen);

/*
 * Listen on path (a stale socket there is replaced; anything else there
 * is an error), mode 0660, non-blocking.  0, or -errno with the reason in
 * err.
 */
int hbmd_control_open(const char *path, hbmd_control_view_fn *view, void *arg,
		      struct hbmd_control **out, char *err, size_t errlen);
/*
 * What answers drain, undrain and leave (called with the view's arg).  Without
 * one, they are answered EOPNOTSUPP.
 */
void hbmd_control_set_request(struct hbmd_control *c, hbmd_control_request_fn *request);
/* The descriptors to poll (at most 1 + HBMD_CONTROL_CLIENTS); how many. */
unsigned int hbmd_control_fds(const struct hbmd_control *c, struct pollfd *fds,
			      unsigned int n);
/*
 * When a client is due (a silent one gets the view, a stalled one is
 * dropped; UINT64_MAX: none), hbmd_now_ms().
 */
uint64_t hbmd_control_deadline(const struct hbmd_control *c);
/*
 * After a wait: fd is ready (revents), or -1 when the deadline passed.
 * Returns how many clients were accepted, or -errno (reason in err) for a
 * failure worth a log line; a client that went away is not one.
 */
int hbmd_control_event(struct hbmd_control *c, int fd, short revents, char *err,
		       size_t errlen);
/* Close every client and the socket, and remove it (NULL: nothing). */
void hbmd_control_close(struct hbmd_control *c);

#endif /* HBMPOOLD_CONTROL_H */
