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

void hbm_nodeset_zero(struct hbm_nodeset *s)
{
	memset(s, 0, sizeof(*s));
}

void hbm_nodeset_set(struct hbm_nodeset *s, unsigned int id)
{
	if (id < HBM_NODESET_BITS)
		s->w[id / 64] |= 1ULL << (id % 64);
}

void hbm_nodeset_clear(struct hbm_nodeset *s, unsigned int id)
{
	if (id < HBM_NODESET_BITS)
		s->w[id / 64] &= ~(1ULL << (id % 64));
}

int hbm_nodeset_test(const struct hbm_nodeset *s, unsigned int id)
{
	return id < HBM_NODESET_BITS && (s->w[id / 64] >> (id % 64)) & 1;
}

int hbm_nodeset_empty(const struct hbm_nodeset *s)
{
	for (unsigned int i = 0; i < HBM_NODESET_WORDS; i++)
		if (s->w[i])
			return 0;
	return 1;
}

int hbm_nodeset_equal(const struct hbm_nodeset *a, const struct hbm_nodeset *b)
{
	return !memcmp(a->w, b->w, sizeof(a->w));
}

unsigned int hbm_nodeset_count(const struct hbm_nodeset *s)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < HBM_NODESET_WORDS; i++)
		n += (unsigned int)__builtin_popcountll(s->w[i]);
	return n;
}

int hbm_nodeset_next(const struct hbm_nodeset *s, int prev)
{
	unsigned int id = prev < 0 ? 0 : (unsigned int)prev + 1;

	while (id < HBM_NODESET_BITS) {
		uint64_t w = s->w[id / 64] >> (id % 64);

		if (w)
			return (int)(id + (unsigned int)__builtin_ctzll(w));
		id = (id / 64 + 1) * 64;
	}
	return -1;
}

int hbm_nodeset_first(const struct hbm_nodeset *s)
{
	return hbm_nodeset_next(s, -1);
}

unsigned int hbm_nodeset_bits(const struct hbm_nodeset *s)
{
	for (unsigned int i = HBM_NODESET_WORDS; i > 0; i--)
		if (s->w[i - 1])
			return (i - 1) * 64 + 64 - (unsigned int)__builtin_clzll(s->w[i - 1]);
	return 0;
}

const char *hbm_nodeset_format(const struct hbm_nodeset *s, char *buf, size_t len)
{
	size_t used = 0;
	int a = hbm_nodeset_first(s);

	if (!len)
		return buf;
	buf[0] = '\0';
	while (a >= 0) {
		int b = a, n;

		while (hbm_nodeset_test(s, (unsigned int)b + 1))
			b++;
		if (a == b)
			n = snprintf(buf + used, len - used, "%s%d", used ? "," : "", a);
		else
			n = snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", a, b);
		if (n < 0 || (size_t)n >= len - used) {
			buf[used] = '\0';	/* whole entries only */
			break;
		}
		used += (size_t)n;
		a = hbm_nodeset_next(s, b);
	}
	return buf;
}

struct hbm_nodeset *hbm_nodeset_of(struct hbm_nodeset *s, const unsigned int *ids,
				   size_t n)
{
	hbm_nodeset_zero(s);
	for (size_t i = 0; i < n; i++)
		hbm_nodeset_set(s, ids[i]);
	return s;
}

int hbm_parse_nodelist(const char *s, unsigned int min_id, unsigned int max_id,
		       struct hbm_nodeset *set)
{
	struct hbm_nodeset m;

	if (!s || !*s || max_id >= HBM_NODESET_BITS || min_id > max_id)
		return -EINVAL;
	hbm_nodeset_zero(&m);
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
			hbm_nodeset_set(&m, (unsigned int)i);
		if (*p == '\0')
			break;
		if (*p != ',')
			return -EINVAL;
		s = p + 1;
	}
	*set = m;
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

/* One node of the set in the model: id, distance, room left. */
struct place_node {
	uint32_t id;
	uint32_t distance;
	uint64_t free_bytes;
	uint32_t weight;
	int64_t credit;
};

/* (distance, id) ascending. */
static int place_before(const struct place_node *a, const struct place_node *b)
{
	return a->distance < b->distance || (a->distance == b->distance && a->id < b->id);
}

int hbm_place(uint32_t policy, const struct hbm_node_model *nodes, size_t nnodes,
	      const struct hbm_nodeset *set, uint32_t self, uint32_t preferred,
	      uint64_t length, uint64_t chunk_size, uint32_t *out, size_t max_out)
{
	struct place_node *order;
	uint64_t nr_chunks;
	size_t n = 0;
	int id, ret;

	if (policy > HBMPOOL_POLICY_MAX || !set || hbm_nodeset_empty(set) ||
	    hbm_nodeset_test(set, self) || !chunk_size || !length)
		return -EINVAL;
	if (policy == HBMPOOL_POLICY_PREFERRED) {
		if (!hbm_nodeset_test(set, preferred))
			return -EINVAL;
	} else if (preferred) {
		return -EINVAL;
	}
	order = calloc(hbm_nodeset_count(set), sizeof(*order));
	if (!order)
		return -ENOMEM;
	/* The set, ascending by id. */
	for (id = hbm_nodeset_first(set); id >= 0; id = hbm_nodeset_next(set, id)) {
		const struct hbm_node_model *nm = find_node(nodes, nnodes, (uint32_t)id);

		if (!nm) {
			ret = -ENODEV;
			goto out;
		}
		order[n].id = (uint32_t)id;
		order[n].distance = nm->distance;
		order[n].free_bytes = nm->free_bytes;
		order[n].weight = nm->weight ? nm->weight : 1;
		n++;
	}
	ret = -ENOSPC;
	nr_chunks = length / chunk_size + !!(length % chunk_size);
	if (nr_chunks > INT32_MAX)
		goto out;

	if (policy == HBMPOOL_POLICY_INTERLEAVE ||
	    policy == HBMPOOL_POLICY_WEIGHTED_INTERLEAVE) {
		size_t next = 0;

		for (uint64_t i = 0; i < nr_chunks; i++) {
			size_t best = n;
			int64_t total = 0;

			for (size_t j = 0; j < n; j++) {
				size_t k = policy == HBMPOOL_POLICY_INTERLEAVE ? (next + j) % n : j;

				if (order[k].free_bytes < chunk_size)
					continue;
				if (policy == HBMPOOL_POLICY_INTERLEAVE) {
					best = k;
					next = (k + 1) % n;
					break;
				}
				order[k].credit += order[k].weight;
				total += order[k].weight;
				if (best == n || order[k].credit > order[best].credit)
					best = k;
			}
			if (best == n)
				goto out;
			order[best].credit -= total;
			order[best].free_bytes -= chunk_size;
			if (i < max_out)
				out[i] = order[best].id;
		}
		ret = (int)nr_chunks;
		goto out;
	}

	/* bind and preferred: sort the set by (distance, id) (insertion sort: stable, n <= 1024). */
	for (size_t a = 1; a < n; a++) {
		struct place_node t = order[a];
		size_t b = a;

		for (; b > 0 && place_before(&t, &order[b - 1]); b--)
			order[b] = order[b - 1];
		order[b] = t;
	}
	if (policy == HBMPOOL_POLICY_PREFERRED) {
		/* Move the preferred node to the front, keep the rest in order. */
		size_t k = 0;
		struct place_node t;

		while (order[k].id != preferred)
			k++;
		t = order[k];
		memmove(&order[1], &order[0], k * sizeof(*order));
		order[0] = t;
	}
	{
		size_t k = 0;

		for (uint64_t i = 0; i < nr_chunks; i++) {
			while (k < n && order[k].free_bytes < chunk_size)
				k++;
			if (k == n)
				goto out;
			order[k].free_bytes -= chunk_size;
			if (i < max_out)
				out[i] = order[k].id;
		}
	}
	ret = (int)nr_chunks;
out:
	free(order);
	return ret;
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

static volatile sig_atomic_t *hbm_stop_flag;

static void hbm_on_stop(int sig)
{
	(void)sig;
	*hbm_stop_flag = 1;
}

void hbm_stop_signals(volatile sig_atomic_t *flag, sigset_t *waitmask)
{
	struct sigaction sa;
	sigset_t block;

	hbm_stop_flag = flag;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = hbm_on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, waitmask);
	sigdelset(waitmask, SIGTERM);
	sigdelset(waitmask, SIGINT);
}
