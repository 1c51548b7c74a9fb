/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hbmpoold's control socket (unix, stream, [control] socket in the
 * config): a client connects and reads one JSON object, the daemon's view
 * of the domain (hbmd_agent_json()), then end of file.  No request yet:
 * the commands of "hbmctl domain ..." (drain...) are to come.
 */
#ifndef HBMPOOLD_CONTROL_H
#define HBMPOOLD_CONTROL_H

#include <stddef.h>

struct hbmd_agent;

/*
 * Listen on path (a stale socket there is replaced; anything else there
 * is an error), mode 0660.  Returns the listening descriptor (non-blocking)
 * or -errno with the reason in err.
 */
int hbmd_control_open(const char *path, char *err, size_t errlen);
/*
 * The listening descriptor is readable: answer every waiting client.
 * Returns how many were answered, or -errno (reason in err) for a failure
 * worth a log line; a client that went away is not one.
 */
int hbmd_control_serve(int fd, struct hbmd_agent *a, char *err, size_t errlen);
void hbmd_control_close(int fd, const char *path);

#endif /* HBMPOOLD_CONTROL_H */
