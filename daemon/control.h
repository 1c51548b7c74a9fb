/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hbmpoold's control socket (unix, stream, [control] socket in the
 * config): a client connects and reads one JSON object, the daemon's view
 * of the domain (hbmd_agent_json()), then end of file.  No request yet:
 * the commands of "hbmctl domain ..." (drain...) are to come.
 *
 * Never blocking the daemon's loop: the view is built when a client
 * connects and written as the client reads it (the loop polls the client
 * for POLLOUT while some is left), however large it is (the link matrix
 * grows as N²).  A client that reads nothing for HBMD_CONTROL_STALL_MS is
 * dropped, and at most HBMD_CONTROL_CLIENTS are served at once (the next
 * ones wait in the listen backlog).
 */
#ifndef HBMPOOLD_CONTROL_H
#define HBMPOOLD_CONTROL_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#define HBMD_CONTROL_CLIENTS	8
#define HBMD_CONTROL_STALL_MS	5000

struct hbmd_control;

/* The view to send: a malloc'ed NUL-terminated string, or -errno. */
typedef int hbmd_control_view_fn(void *arg, char **json);

/*
 * Listen on path (a stale socket there is replaced; anything else there
 * is an error), mode 0660, non-blocking.  0, or -errno with the reason in
 * err.
 */
int hbmd_control_open(const char *path, hbmd_control_view_fn *view, void *arg,
		      struct hbmd_control **out, char *err, size_t errlen);
/* The descriptors to poll (at most 1 + HBMD_CONTROL_CLIENTS); how many. */
unsigned int hbmd_control_fds(const struct hbmd_control *c, struct pollfd *fds,
			      unsigned int n);
/* When a stalled client is to be dropped (UINT64_MAX: none), hbmd_now_ms(). */
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
