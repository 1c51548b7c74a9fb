// SPDX-License-Identifier: GPL-2.0
/* Keyed writes, one in flight per key: see etcd_writer.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_async.h"
#include "etcd_writer.h"

struct ew_key {
	struct ew_key *next;
	struct hbm_ewriter *w;
	char *key;
	struct hbm_etcd_req *req;	/* in flight */
	uint64_t tag;			/* of the write in flight */
	bool dead;			/* cancelled from its own callback */
	/* the write waiting for it */
	bool waiting, del;
	char *value;
	size_t len;
	int64_t lease;
	uint64_t wtag;
};

struct hbm_ewriter {
	struct hbm_etcd_async *as;
	hbm_ew_done_fn *fn;
	void *arg;
	struct ew_key *keys;
	unsigned int n;
	struct ew_key *calling;		/* its result is being passed on */
};

int hbm_ew_open(struct hbm_etcd_async *as, hbm_ew_done_fn *fn, void *arg,
		struct hbm_ewriter **out)
{
	struct hbm_ewriter *w = calloc(1, sizeof(*w));

	*out = w;
	if (!w)
		return -ENOMEM;
	w->as = as;
	w->fn = fn;
	w->arg = arg;
	return 0;
}

static struct ew_key *find(const struct hbm_ewriter *w, const char *key)
{
	struct ew_key *k;

	for (k = w->keys; k; k = k->next)
		if (!strcmp(k->key, key))
			return k;
	return NULL;
}

static void key_free(struct hbm_ewriter *w, struct ew_key *k)
{
	struct ew_key **p;

	for (p = &w->keys; *p; p = &(*p)->next)
		if (*p == k) {
			*p = k->next;
			w->n--;
			break;
		}
	if (k->req)
		hbm_etcd_async_cancel(w->as, k->req);
	free(k->value);
	free(k->key);
	free(k);
}

static void done(void *arg, struct hbm_etcd_result *r);

/* Send the waiting write of k; false if it could not start (dropped). */
static bool send_waiting(struct hbm_ewriter *w, struct ew_key *k)
{
	int ret;

	k->waiting = false;
	k->tag = k->wtag;
	if (k->del)
		ret = hbm_etcd_async_delete(w->as, k->key, false, done, k, &k->req);
	else
		ret = hbm_etcd_async_put(w->as, k->key, k->value, k->len, k->lease, done, k,
					 &k->req);
	free(k->value);
	k->value = NULL;
	if (ret)
		k->req = NULL;
	return !ret;
}

static void done(void *arg, struct hbm_etcd_result *r)
{
	struct ew_key *k = arg;
	struct hbm_ewriter *w = k->w;
	uint64_t tag = k->tag;

	k->req = NULL;
	if (k->waiting)
		send_waiting(w, k);	/* the newer value goes now, whatever this one did */
	w->calling = k;
	w->fn(w->arg, tag, r);
	w->calling = NULL;
	if (!k->dead && !k->req && k->waiting)
		send_waiting(w, k);	/* written again from the callback */
	if (k->dead || (!k->req && !k->waiting))
		key_free(w, k);
}

static int write_key(struct hbm_ewriter *w, const char *key, bool del, const void *value,
		     size_t len, int64_t lease, uint64_t tag)
{
	struct ew_key *k = find(w, key);
	char *v = NULL;

	if (!del) {
		v = malloc(len + 1);
		if (!v)
			return -ENOMEM;
		memcpy(v, value, len);
		v[len] = '\0';
	}
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (k)
			k->key = strdup(key);
		if (!k || !k->key) {
			free(k);
			free(v);
			return -ENOMEM;
		}
		k->w = w;
		k->next = w->keys;
		w->keys = k;
		w->n++;
	}
	free(k->value);
	k->value = v;
	k->len = len;
	k->del = del;
	k->lease = lease;
	k->wtag = tag;
	k->waiting = true;
	if (k->req || k == w->calling)
		return 0;	/* after the one in flight (or from its callback: done() sends it) */
	if (!send_waiting(w, k)) {
		key_free(w, k);
		return -ENOMEM;
	}
	return 0;
}

int hbm_ew_put(struct hbm_ewriter *w, const char *key, const void *value, size_t len,
	       int64_t lease, uint64_t tag)
{
	return write_key(w, key, false, value, len, lease, tag);
}

int hbm_ew_delete(struct hbm_ewriter *w, const char *key, uint64_t tag)
{
	return write_key(w, key, true, NULL, 0, 0, tag);
}

bool hbm_ew_busy(const struct hbm_ewriter *w, const char *key)
{
	return find(w, key) != NULL;
}

unsigned int hbm_ew_keys(const struct hbm_ewriter *w)
{
	return w->n;
}

void hbm_ew_cancel_all(struct hbm_ewriter *w)
{
	struct ew_key *k, *next;

	if (!w)
		return;
	for (k = w->keys; k; k = next) {
		next = k->next;
		if (k == w->calling) {
			/* freed when its callback returns; nothing more is sent */
			k->dead = true;
			k->waiting = false;
			if (k->req)
				hbm_etcd_async_cancel(w->as, k->req);
			k->req = NULL;
			continue;
		}
		key_free(w, k);
	}
}

void hbm_ew_free(struct hbm_ewriter *w)
{
	if (!w)
		return;
	hbm_ew_cancel_all(w);
	free(w);
}
