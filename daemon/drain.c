// SPDX-License-Identifier: GPL-2.0
/*
 * The drain planner: see drain.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drain.h"

void hbm_drain_init(struct hbm_drain *d)
{
	memset(d, 0, sizeof(*d));
}

void hbm_drain_free(struct hbm_drain *d)
{
	free(d->e);
	memset(d, 0, sizeof(*d));
}

void hbm_drain_pass_free(struct hbm_drain_pass *p)
{
	free(p->pick);
	free(p->forget);
	free(p->gave_up);
	memset(p, 0, sizeof(*p));
}

uint64_t hbm_drain_backoff_ms(unsigned int failures)
{
	uint64_t ms = HBM_DRAIN_BACKOFF_MIN_MS;

	while (failures > 1 && ms < HBM_DRAIN_BACKOFF_MAX_MS) {
		ms *= 2;
		failures--;
	}
	return ms < HBM_DRAIN_BACKOFF_MAX_MS ? ms : HBM_DRAIN_BACKOFF_MAX_MS;
}

static struct hbm_drain_entry *find(const struct hbm_drain *d, uint32_t region, uint32_t chunk)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (d->e[i].region == region && d->e[i].chunk == chunk)
			return &d->e[i];
	return NULL;
}

const struct hbm_drain_entry *hbm_drain_find(const struct hbm_drain *d, uint32_t region,
					     uint32_t chunk)
{
	return find(d, region, chunk);
}

static struct hbm_drain_entry *get(struct hbm_drain *d, const struct hbm_drain_chunk *c)
{
	struct hbm_drain_entry *e = find(d, c->region, c->chunk);

	if (e)
		return e;
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;

		e = realloc(d->e, cap * sizeof(*e));
		if (!e)
			return NULL;
		d->e = e;
		d->cap = cap;
	}
	e = &d->e[d->n++];
	memset(e, 0, sizeof(*e));
	e->region = c->region;
	e->chunk = c->chunk;
	e->node = c->node;
	e->seen = true;
	return e;
}

static void fail(struct hbm_drain *d, struct hbm_drain_entry *e, int error, uint64_t now)
{
	e->failures++;
	e->last_error = error;
	e->retry_at = now + hbm_drain_backoff_ms(e->failures);
	d->failed++;
}

static const struct hbm_drain_move *move_of(const struct hbm_drain_move *m, size_t nm,
					    uint32_t id)
{
	size_t i;

	for (i = 0; i < nm; i++)
		if (m[i].id == id)
			return &m[i];
	return NULL;
}

static bool copying(const struct hbm_drain_move *m, size_t nm, uint32_t region, uint32_t chunk)
{
	size_t i;

	for (i = 0; i < nm; i++)
		if (m[i].state == HBM_DRAIN_COPYING && m[i].region == region &&
		    m[i].chunk == chunk)
			return true;
	return false;
}

/* Our moves that ended: done, or failures with their back-off. */
static void moves_ended(struct hbm_drain *d, const struct hbm_drain_move *m, size_t nm,
			uint64_t now, struct hbm_drain_pass *p)
{
	const struct hbm_drain_move *mv;
	size_t i;

	for (i = 0; i < d->n; i++) {
		struct hbm_drain_entry *e = &d->e[i];

		if (!e->move_id)
			continue;
		mv = move_of(m, nm, e->move_id);
		if (!mv) {
			e->move_id = 0;	/* gone (expired, deleted): no verdict */
			continue;
		}
		if (mv->state == HBM_DRAIN_COPYING)
			continue;
		p->forget[p->nforget++] = e->move_id;
		e->move_id = 0;
		if (mv->state == HBM_DRAIN_DONE) {
			d->moved++;
			e->failures = 0;
			e->retry_at = 0;
			e->given_up = false;
		} else {
			fail(d, e, mv->state == HBM_DRAIN_CANCELLED ? ECANCELED :
				   mv->error > 0 ? mv->error : EIO, now);
		}
	}
}

/* Entries of chunks no longer listed, and those with nothing to remember. */
static void prune(struct hbm_drain *d)
{
	size_t i, j;

	for (i = j = 0; i < d->n; i++) {
		if (!d->e[i].seen || (!d->e[i].move_id && !d->e[i].failures))
			continue;
		d->e[j++] = d->e[i];
	}
	d->n = j;
}

int hbm_drain_plan(struct hbm_drain *d, const struct hbm_drain_chunk *c, size_t nc,
		   const struct hbm_drain_move *m, size_t nm, unsigned int jobs, uint64_t now,
		   struct hbm_drain_pass *p)
{
	size_t i, k, room, ncand = 0;
	size_t *cand;
	unsigned int f;

	memset(p, 0, sizeof(*p));
	p->next_ms = UINT64_MAX;
	p->pick = calloc(nc + 1, sizeof(*p->pick));
	p->gave_up = calloc(nc + 1, sizeof(*p->gave_up));
	p->forget = calloc(d->n + 1, sizeof(*p->forget));
	cand = calloc(nc + 1, sizeof(*cand));
	if (!p->pick || !p->gave_up || !p->forget || !cand) {
		free(cand);
		hbm_drain_pass_free(p);
		return -ENOMEM;
	}
	if (!jobs)
		jobs = 1;
	moves_ended(d, m, nm, now, p);
	for (i = 0; i < d->n; i++)
		d->e[i].seen = false;
	for (i = 0; i < nc; i++) {
		struct hbm_drain_entry *e = find(d, c[i].region, c[i].chunk);

		if (c[i].lost)
			continue;	/* nothing to move: forgotten with its failures */
		if (e)
			e->seen = true;
		if (c[i].syncing || (e && e->move_id) || copying(m, nm, c[i].region, c[i].chunk)) {
			p->in_flight++;
			continue;
		}
		if (e && e->failures >= HBM_DRAIN_GIVE_UP && !e->given_up) {
			e->given_up = true;
			p->gave_up[p->ngave_up++] = i;
		}
		if (e && e->retry_at > now) {
			if (e->retry_at < p->next_ms)
				p->next_ms = e->retry_at;
			continue;
		}
		cand[ncand++] = i;
	}
	prune(d);
	/* fewest failures first, in list order among equals: a bad chunk never starves the rest */
	room = p->in_flight < jobs ? jobs - p->in_flight : 0;
	for (f = 0; p->npick < room && ncand; f++) {
		for (i = k = 0; i < ncand; i++) {
			const struct hbm_drain_chunk *ci = &c[cand[i]];
			const struct hbm_drain_entry *e = find(d, ci->region, ci->chunk);
			unsigned int ef = e ? e->failures : 0;

			if (ef <= f && p->npick < room)
				p->pick[p->npick++] = cand[i];
			else
				cand[k++] = cand[i];
		}
		ncand = k;
	}
	free(cand);
	if (p->in_flight || p->npick || ncand)
		p->next_ms = now + HBM_DRAIN_PASS_MS;
	return 0;
}

int hbm_drain_issued(struct hbm_drain *d, const struct hbm_drain_chunk *c, int ret,
		     uint32_t id, uint64_t now)
{
	struct hbm_drain_entry *e;

	if (ret == -EBUSY)
		return 0;	/* someone else's move of it: the next pass sees it syncing */
	e = get(d, c);
	if (!e)
		return -ENOMEM;
	if (!ret) {
		e->move_id = id;
		return 0;
	}
	fail(d, e, -ret, now);
	return 0;
}

void hbm_drain_progress(const struct hbm_drain *d, const struct hbm_drain_chunk *c, size_t nc,
			uint32_t node, struct hbm_drain_progress *p)
{
	const struct hbm_drain_entry *e;
	size_t i;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < nc; i++) {
		if (c[i].node != node)
			continue;
		if (c[i].lost) {
			p->lost++;
			continue;
		}
		p->chunks_left++;
		p->bytes_left += c[i].bytes;
		e = find(d, c[i].region, c[i].chunk);
		if (c[i].syncing || (e && e->move_id))
			p->moving++;
		if (e && e->failures) {
			p->failures++;
			if (e->failures >= HBM_DRAIN_GIVE_UP)
				p->given_up++;
		}
	}
}
