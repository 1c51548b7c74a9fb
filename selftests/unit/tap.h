/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TAP output of the host unit tests: ok(cond, fmt, ...) numbers each
 * result; tap_finish() prints the plan and "N passed, N failed" and gives
 * the exit status.  One test program per file includes it.
 */
#ifndef HBM_UNIT_TAP_H
#define HBM_UNIT_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int ntest, nfail;

static void ok(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	ntest++;
	printf("%sok %d - ", cond ? "" : "not ", ntest);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		nfail++;
}

static int tap_finish(void)
{
	printf("1..%d\n", ntest);
	printf("%d passed, %d failed\n", ntest - nfail, nfail);
	return nfail ? 1 : 0;
}

#endif /* HBM_UNIT_TAP_H */
