/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sorted arrays: the position of a key, for the tables that keep their
 * entries in key order (members by id, replication reports by member,
 * links by (from, to)) and insert or drop one at a time.
 */
#ifndef HBMPOOLD_SORTED_H
#define HBMPOOLD_SORTED_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The index of the first of the n elements of size bytes at base that is
 * not before key (cmp(key, elem) > 0 means elem comes before key), as
 * bsearch() compares; *found says whether that element equals key.
 */
static inline size_t hbm_sorted_pos(const void *base, size_t n, size_t size, const void *key,
				    int (*cmp)(const void *key, const void *elem), bool *found)
{
	const char *b = base;
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cmp(key, b + mid * size) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < n && cmp(key, b + lo * size) == 0;
	return lo;
}

#endif
