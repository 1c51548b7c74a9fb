// SPDX-License-Identifier: GPL-2.0
/*
 * replacement_model: the page misses of hbmbench's 2x-cache workload
 * (work_2x) under several replacement policies, as a model with no kernel
 * and no timing.
 *
 * The workload touches every page of a region of N pages in order, then
 * every page again in a random order (a permutation); the cache holds C
 * pages.  Every page of the in-order part misses (the region is cold);
 * the model counts the misses of the random part, which is what separates
 * work_2x from local memory (Documentation/performance.rst, "What bounds
 * the 2 x cache workload").  A miss with the cache full evicts one page.
 *
 * Policies:
 *   fifo    the page cached longest goes
 *   clock   CLOCK as in kmod/cache.c: the hand passes over a page whose
 *           reference bit is set (clearing it), a hit sets the bit; new
 *           pages enter with the bit clear (clock) or set (clock-ref)
 *   mru     the page touched last goes
 *   opt     Belady's: a page with no further use goes first, else the one
 *           used furthest ahead (the floor of any policy)
 *
 * usage: replacement_model [PAGES [CACHE [SEED]]]   (default 16384 7680 1:
 *        64 MiB in 4 KiB pages, the cache at hbmbench's budget of half the
 *        region less the evictor's low watermark, budget / 16)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum policy { FIFO, CLOCK, CLOCK_REF, MRU, OPT, NPOLICY };
static const char *const policy_name[NPOLICY] = { "fifo", "clock", "clock-ref", "mru", "opt" };

#define NONE UINT32_MAX

struct model {
	enum policy pol;
	uint32_t n, cap, nr;	/* pages, cache size, pages cached */
	uint32_t *ring;		/* fifo, clock: cached pages in arrival order */
	uint32_t head;		/* ring index of the oldest (the hand) */
	uint8_t *cached, *ref;
	uint32_t *next_use;	/* opt: position of the next use, NONE if none */
	uint32_t last;		/* mru: the page touched last */
	uint32_t *slot;		/* opt, mru: ring slot of each cached page */
};

static uint64_t rng_state;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* The ring as a plain array of cached pages for mru and opt: slot[page]. */
static void set_remove(struct model *m, uint32_t page)
{
	uint32_t s = m->slot[page], moved = m->ring[m->nr - 1];

	m->ring[s] = moved;
	m->slot[moved] = s;
	m->nr--;
}

static uint32_t victim(struct model *m)
{
	uint32_t v, best = 0, i;

	switch (m->pol) {
	case FIFO:
		v = m->ring[m->head];
		m->head = (m->head + 1) % m->cap;
		m->nr--;
		return v;
	case CLOCK:
	case CLOCK_REF:
		for (;;) {
			v = m->ring[m->head];
			m->head = (m->head + 1) % m->cap;
			if (!m->ref[v]) {
				m->nr--;
				return v;
			}
			m->ref[v] = 0;
			/* passed over: moves to the tail, as list_move_tail() */
			m->ring[(m->head + m->nr - 1) % m->cap] = v;
		}
	case MRU:
		v = m->last;
		set_remove(m, v);
		return v;
	case OPT:
	default:
		for (i = 0; i < m->nr; i++) {
			v = m->ring[i];
			if (m->next_use[v] == NONE) {
				best = i;
				break;
			}
			if (m->next_use[v] > m->next_use[m->ring[best]])
				best = i;
		}
		v = m->ring[best];
		set_remove(m, v);
		return v;
	}
}

static void insert(struct model *m, uint32_t page)
{
	if (m->pol == FIFO || m->pol == CLOCK || m->pol == CLOCK_REF) {
		m->ring[(m->head + m->nr) % m->cap] = page;
	} else {
		m->ring[m->nr] = page;
		m->slot[page] = m->nr;
	}
	m->nr++;
	m->cached[page] = 1;
	m->ref[page] = m->pol == CLOCK_REF;
}

/* One access; returns 1 on a miss. */
static int touch(struct model *m, uint32_t page)
{
	int miss = !m->cached[page];

	if (miss) {
		if (m->nr == m->cap)
			m->cached[victim(m)] = 0;
		insert(m, page);
	} else {
		m->ref[page] = 1;
	}
	m->last = page;
	return miss;
}

static uint64_t run(enum policy pol, uint32_t n, uint32_t cap, const uint32_t *order)
{
	struct model m = { .pol = pol, .n = n, .cap = cap };
	uint64_t misses = 0;
	uint32_t i;

	m.ring = calloc(cap, sizeof(*m.ring));
	m.cached = calloc(n, 1);
	m.ref = calloc(n, 1);
	m.next_use = calloc(n, sizeof(*m.next_use));
	m.slot = calloc(n, sizeof(*m.slot));
	if (!m.ring || !m.cached || !m.ref || !m.next_use || !m.slot) {
		fprintf(stderr, "replacement_model: out of memory\n");
		exit(1);
	}
	/* during the part in order, each page's next use is in the random part */
	for (i = 0; i < n; i++)
		m.next_use[order[i]] = n + i;
	for (i = 0; i < n; i++)
		touch(&m, i);
	for (i = 0; i < n; i++) {
		m.next_use[order[i]] = NONE;	/* touched once in this part */
		misses += touch(&m, order[i]);
	}
	free(m.ring);
	free(m.cached);
	free(m.ref);
	free(m.next_use);
	free(m.slot);
	return misses;
}

int main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 16384;
	uint32_t cap = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 7680;
	uint32_t *order, i;

	rng_state = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
	if (!rng_state || n < 2 || !cap || cap >= n) {
		fprintf(stderr, "usage: replacement_model [PAGES [CACHE < PAGES [SEED != 0]]]\n");
		return 2;
	}
	order = malloc(n * sizeof(*order));
	if (!order)
		return 1;
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(rng() % (i + 1)), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	printf("pages %u, cache %u: misses of the random part (of %u pages)\n", n, cap, n);
	for (int p = 0; p < NPOLICY; p++)
		printf("%-10s %6llu\n", policy_name[p],
		       (unsigned long long)run((enum policy)p, n, cap, order));
	free(order);
	return 0;
}
