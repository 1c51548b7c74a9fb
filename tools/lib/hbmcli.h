/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hbmcli: command-line conventions shared by the hbmpool tools (not the
 * selftests): exit status 2 and a message on stderr for a bad command line,
 * --help prints the usage on stdout and exits 0.
 */
#ifndef HBMCLI_H
#define HBMCLI_H

#include <stdio.h>

/* A tool's usage text, written to f. */
typedef void hbm_usage_fn(FILE *f, const char *argv0);

/*
 * For getopt's 'h' (help != 0: usage on stdout, returns 0) and anything it
 * does not know (usage on stderr, returns 2): main() returns the result.
 */
static inline int hbm_cli_usage(hbm_usage_fn *usage, const char *argv0, int help)
{
	usage(help ? stdout : stderr, argv0);
	return help ? 0 : 2;
}

/* "bad --OPT 'ARG' HINT" on stderr (hint may be NULL); returns 2. */
static inline int hbm_cli_bad(const char *opt, const char *arg, const char *hint)
{
	fprintf(stderr, "bad --%s '%s'%s%s\n", opt, arg, hint ? " " : "", hint ? hint : "");
	return 2;
}

#endif /* HBMCLI_H */
