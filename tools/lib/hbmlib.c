// SPDX-License-Identifier: GPL-2.0
/*
 * hbmlib: pure logic shared by the hbmpool tools and selftests.  No system
 * calls here; see hbmlib.h.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/hbmpool.h>

#include "hbmlib.h"

static int parse_digits(const char **sp, uint64_t *out)
{
	const char *s = *sp;
	unsigned int base = 10;
	uint64_t v = 0;
	int n = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (;; s++, n++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && isxdigit((unsigned char)*s))
			d = (tolower((unsigned char)*s) - 'a') + 10;
		else
			break;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	if (!n)
		return -EINVAL;
	*sp = s;
	*out = v;
	return 0;
}

/* A number (decimal or 0x hex), with a size suffix if units, then the end. */
static int parse_number(const char *s, int units, uint64_t *out)
{
	unsigned int shift = 0;
	uint64_t v;
	int ret;

	if (!s)
		return -EINVAL;
	ret = parse_digits(&s, &v);
	if (ret)
		return ret;
	if (units) {
		switch (*s) {
		case 'k': case 'K': shift = 10; s++; break;
		case 'm': case 'M': shift = 20; s++; break;
		case 'g': case 'G': shift = 30; s++; break;
		case 't': case 'T': shift = 40; s++; break;
		default: break;
		}
		if (shift && s[0] == 'i' && s[1] == 'B')
			s += 2;
		else if (s[0] == 'B')
			s++;
	}
	if (*s)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = v << shift;
	return 0;
}

int hbm_parse_u64(const char *s, uint64_t *out)
{
	return parse_number(s, 0, out);
}

int hbm_parse_size(const char *s, uint64_t *out)
{
	return parse_number(s, 1, out);
}

int hbm_parse_nodelist(const char *s, unsigned int min_id, unsigned int max_id,
		       uint64_t *mask)
{
	uint64_t m = 0;

	if (!s || !*s || max_id > 63 || min_id > max_id)
		return -EINVAL;
	for (;;) {
		uint64_t a, b;
		const char *p = s;

		if (!isdigit((unsigned char)*p) || parse_digits(&p, &a))
			return -EINVAL;
		b = a;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p) || parse_digits(&p, &b))
				return -EINVAL;
		}
		if (a < min_id || b > max_id || a > b)
			return -EINVAL;
		for (uint64_t i = a; i <= b; i++)
			m |= 1ULL << i;
		if (*p == '\0')
			break;
		if (*p != ',')
			return -EINVAL;
		s = p + 1;
	}
	*mask = m;
	return 0;
}

/* splitmix64's finaliser: a bijection, so distinct offsets give distinct words. */
uint64_t hbm_pattern_word(uint64_t offset, uint64_t seed)
{
	uint64_t z = offset ^ seed;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint8_t hbm_pattern_byte(uint64_t offset, uint64_t seed)
{
	return (uint8_t)(hbm_pattern_word(offset & ~7ULL, seed) >> (8 * (offset & 7)));
}

void hbm_pattern_fill(void *buf, size_t len, uint64_t offset, uint64_t seed)
{
	uint8_t *b = buf;
	size_t i = 0;

	/* Byte-wise up to an 8-aligned offset, then whole words. */
	for (; i < len && ((offset + i) & 7); i++)
		b[i] = hbm_pattern_byte(offset + i, seed);
	for (; i + 8 <= len; i += 8) {
		uint64_t w = hbm_pattern_word(offset + i, seed);

		for (int k = 0; k < 8; k++)
			b[i + k] = (uint8_t)(w >> (8 * k));
	}
	for (; i < len; i++)
		b[i] = hbm_pattern_byte(offset + i, seed);
}

size_t hbm_pattern_check(const void *buf, size_t len, uint64_t offset,
			 uint64_t seed, uint64_t *first_bad)
{
	const uint8_t *b = buf;
	size_t bad = 0;

	for (size_t i = 0; i < len; ) {
		if (!((offset + i) & 7) && i + 8 <= len) {
			uint64_t w = hbm_pattern_word(offset + i, seed);
			uint64_t got = 0;

			for (int k = 0; k < 8; k++)
				got |= (uint64_t)b[i + k] << (8 * k);
			if (got == w) {
				i += 8;
				continue;
			}
			for (int k = 0; k < 8; k++) {
				if (b[i + k] != (uint8_t)(w >> (8 * k))) {
					if (!bad && first_bad)
						*first_bad = offset + i + k;
					bad++;
				}
			}
			i += 8;
			continue;
		}
		if (b[i] != hbm_pattern_byte(offset + i, seed)) {
			if (!bad && first_bad)
				*first_bad = offset + i;
			bad++;
		}
		i++;
	}
	return bad;
}

uint64_t hbm_rand(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ULL;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

void hbm_permutation(uint32_t *v, size_t n, uint64_t seed)
{
	uint64_t st = seed;

	for (size_t i = 0; i < n; i++)
		v[i] = (uint32_t)i;
	for (size_t i = n; i > 1; i--) {
		size_t j = hbm_rand(&st) % i;
		uint32_t t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

void hbm_sort_u64(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
}

/* Nearest rank: the smallest value with at least p% of samples <= it. */
static uint64_t rank_of(uint64_t n, double p)
{
	double r;
	uint64_t k;

	if (p <= 0)
		return 1;
	if (p >= 100)
		return n;
	r = p / 100.0 * (double)n;
	k = (uint64_t)r;
	if ((double)k < r)
		k++;
	return k ? k : 1;
}

uint64_t hbm_percentile_sorted(const uint64_t *v, size_t n, double p)
{
	if (!n)
		return 0;
	return v[rank_of(n, p) - 1];
}

uint64_t hbm_hist_total(const __u64 *hist, unsigned int nbuckets)
{
	uint64_t t = 0;

	for (unsigned int i = 0; i < nbuckets; i++)
		t += hist[i];
	return t;
}

int hbm_hist_percentile(const __u64 *hist, unsigned int nbuckets, double p)
{
	uint64_t total = hbm_hist_total(hist, nbuckets), want, cum = 0;

	if (!total)
		return -1;
	want = rank_of(total, p);
	for (unsigned int i = 0; i < nbuckets; i++) {
		cum += hist[i];
		if (cum >= want)
			return (int)i;
	}
	return (int)nbuckets - 1;	/* not reached */
}

static const struct hbm_node_model *find_node(const struct hbm_node_model *nodes,
					      size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (nodes[i].id == id)
			return &nodes[i];
	return NULL;
}

int hbm_place(uint32_t policy, const struct hbm_node_model *nodes, size_t nnodes,
	      uint64_t nodemask, uint32_t preferred, uint64_t length,
	      uint64_t chunk_size, uint32_t *out, size_t max_out)
{
	uint32_t order[64];
	uint64_t freeb[64];
	size_t n = 0;
	uint64_t nr_chunks;

	if (nnodes > 64)
		return -E2BIG;
	if (policy > HBMPOOL_POLICY_MAX || !nodemask || (nodemask & 1) ||
	    !chunk_size || !length)
		return -EINVAL;
	if (policy == HBMPOOL_POLICY_PREFERRED) {
		if (preferred >= 64 || !(nodemask & (1ULL << preferred)))
			return -EINVAL;
	} else if (preferred) {
		return -EINVAL;
	}
	/* The set, ascending by id. */
	for (uint32_t id = 1; id < 64; id++) {
		const struct hbm_node_model *nm;

		if (!(nodemask & (1ULL << id)))
			continue;
		nm = find_node(nodes, nnodes, id);
		if (!nm)
			return -ENODEV;
		order[n] = id;
		freeb[n] = nm->free_bytes;
		n++;
	}
	nr_chunks = length / chunk_size + !!(length % chunk_size);
	if (nr_chunks > INT32_MAX)
		return -ENOSPC;

	if (policy == HBMPOOL_POLICY_INTERLEAVE) {
		for (size_t k = 0; k < n; k++) {
			uint64_t share = nr_chunks / n + (k < nr_chunks % n);

			if (share && freeb[k] / chunk_size < share)
				return -ENOSPC;
		}
		for (uint64_t i = 0; i < nr_chunks && i < max_out; i++)
			out[i] = order[i % n];
		return (int)nr_chunks;
	}

	/* bind and preferred: sort the set by (distance, id). */
	for (size_t a = 1; a < n; a++) {
		for (size_t b = a; b > 0; b--) {
			uint32_t da = find_node(nodes, nnodes, order[b - 1])->distance;
			uint32_t db = find_node(nodes, nnodes, order[b])->distance;
			uint64_t tf;
			uint32_t t;

			if (da < db || (da == db && order[b - 1] < order[b]))
				break;
			t = order[b - 1]; order[b - 1] = order[b]; order[b] = t;
			tf = freeb[b - 1]; freeb[b - 1] = freeb[b]; freeb[b] = tf;
		}
	}
	if (policy == HBMPOOL_POLICY_PREFERRED) {
		/* Move the preferred node to the front, keep the rest in order. */
		size_t k = 0;

		while (order[k] != preferred)
			k++;
		for (; k > 0; k--) {
			uint32_t t = order[k - 1];
			uint64_t tf = freeb[k - 1];

			order[k - 1] = order[k]; order[k] = t;
			freeb[k - 1] = freeb[k]; freeb[k] = tf;
		}
	}
	{
		size_t k = 0;

		for (uint64_t i = 0; i < nr_chunks; i++) {
			while (k < n && freeb[k] < chunk_size)
				k++;
			if (k == n)
				return -ENOSPC;
			freeb[k] -= chunk_size;
			if (i < max_out)
				out[i] = order[k];
		}
	}
	return (int)nr_chunks;
}

const char *hbm_human_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	unsigned int u = 0;

	while (v >= 1024.0 && u < 6) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}
