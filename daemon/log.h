/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hbmpoold's log: one line per message on stderr, with its syslog level.
 * Under systemd (stderr connected to the journal, $JOURNAL_STREAM) each
 * line starts with "<N>", which journald takes as the priority; on a
 * terminal it starts with "hbmpoold: LEVEL: ".
 */
#ifndef HBMPOOLD_LOG_H
#define HBMPOOLD_LOG_H

#include <syslog.h>

/* Messages above max_level (LOG_INFO by default, LOG_DEBUG with -v) are dropped. */
void hbmd_log_init(int max_level);
void hbmd_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, as the agent's log callback (arg unused). */
void hbmd_log_cb(void *arg, int level, const char *msg);

#endif /* HBMPOOLD_LOG_H */
