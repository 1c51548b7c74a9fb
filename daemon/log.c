// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpoold's log (see log.h).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

static int log_max = LOG_INFO;
static bool log_journal;

void hbmd_log_init(int max_level)
{
	log_max = max_level;
	log_journal = getenv("JOURNAL_STREAM") != NULL;
}

static const char *level_name(int level)
{
	static const char *const names[] = {
		"emergency", "alert", "critical", "error", "warning", "notice", "info", "debug",
	};

	return level >= 0 && level <= LOG_DEBUG ? names[level] : "?";
}

static void emit(int level, const char *msg)
{
	if (level > log_max)
		return;
	if (log_journal)
		fprintf(stderr, "<%d>%s\n", level, msg);
	else
		fprintf(stderr, "hbmpoold: %s: %s\n", level_name(level), msg);
}

void hbmd_log(int level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	emit(level, buf);
}

void hbmd_log_cb(void *arg, int level, const char *msg)
{
	(void)arg;
	emit(level, msg);
}
