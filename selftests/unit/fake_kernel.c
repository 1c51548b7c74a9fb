// SPDX-License-Identifier: GPL-2.0
/*
 * A fake kernel for the agent's test: see fake_kernel.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_kernel.h"

static uint64_t ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Called with the lock held: one line in the log. */
static void fk_log(struct fake_kernel *fk, bool write, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fk_log(struct fake_kernel *fk, bool write, const char *fmt, ...)
{
	size_t room = sizeof(fk->log) - fk->log_len;
	va_list ap;
	int n;

	fk->calls++;
	if (write && fk->self_fenced && !fk->violations++)
		snprintf(fk->violation, sizeof(fk->violation), "a change after fence-self");
	va_start(ap, fmt);
	n = vsnprintf(fk->log + fk->log_len, room, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n + 1 < room) {
		fk->log_len += (size_t)n;
		fk->log[fk->log_len++] = '\n';
		fk->log[fk->log_len] = '\0';
	}
}

static void violate(struct fake_kernel *fk, const char *what, uint32_t id)
{
	if (!fk->violations++)
		snprintf(fk->violation, sizeof(fk->violation), "%s (node %u)", what, id);
}

static int fk_setup(void *ctx, const struct hbmd_kernel_setup *s, uint64_t *incarnation,
		    char *err, size_t errlen)
{
	struct fake_kernel *fk = ctx;

	pthread_mutex_lock(&fk->lock);
	fk_log(fk, true, "setup %s self %u key %zu segment %llu", s->domain, s->self_id, s->key_len,
	       (unsigned long long)s->segment_bytes);
	if (s->self_id != fk->self_id)
		violate(fk, "setup with another self id", s->self_id);
	else if (s->self_id < 1024)
		fk->capacity[s->self_id] = s->segment_bytes;
	*incarnation = fk->next_incarnation;
	pthread_mutex_unlock(&fk->lock);
	err[0] = '\0';
	(void)errlen;
	return 0;
}

static int fk_node_add(void *ctx, const struct hbmd_kernel_peer *p, char *err, size_t errlen)
{
	struct fake_kernel *fk = ctx;
	int ret = 0;

	pthread_mutex_lock(&fk->lock);
	fk_log(fk, true, "add %u %s:%u capacity %llu distance %u link %d", p->id, p->addr, p->port,
	       (unsigned long long)p->capacity, p->distance, p->link_type);
	if (p->id == fk->self_id || p->id >= 1024) {
		violate(fk, "add of this node or a bad id", p->id);
		ret = -EINVAL;
	} else if (fk->node[p->id] != FK_ABSENT) {
		violate(fk, "add of a node that is there", p->id);
		ret = -EEXIST;
	} else {
		fk->node[p->id] = FK_LIVE;
		fk->capacity[p->id] = p->capacity;
	}
	pthread_mutex_unlock(&fk->lock);
	snprintf(err, errlen, "%s", ret ? strerror(-ret) : "");
	return ret;
}

static int fk_node_remove(void *ctx, uint32_t id, char *err, size_t errlen)
{
	struct fake_kernel *fk = ctx;
	int ret = 0;

	pthread_mutex_lock(&fk->lock);
	fk_log(fk, true, "del %u%s", id, fk->refuse_del ? " refused" : "");
	if (fk->refuse_del) {
		fk->refuse_del--;
		ret = -EBUSY;
	} else if (id >= 1024 || fk->node[id] == FK_ABSENT) {
		violate(fk, "del of an unknown node", id);
		ret = -ENOENT;
	} else {
		fk->node[id] = FK_ABSENT;
	}
	pthread_mutex_unlock(&fk->lock);
	snprintf(err, errlen, "%s", ret ? strerror(-ret) : "");
	return ret;
}

static int fk_node_fence(void *ctx, uint32_t id, char *err, size_t errlen)
{
	struct fake_kernel *fk = ctx;
	int ret = 0;

	pthread_mutex_lock(&fk->lock);
	fk_log(fk, true, "fence %u", id);
	if (fk->unsupported) {
		ret = -EOPNOTSUPP;
	} else if (id >= 1024 || fk->node[id] != FK_LIVE) {
		violate(fk, "fence of a node that is not live", id);
		ret = -ENOENT;
	} else {
		fk->node[id] = FK_FENCED;
	}
	pthread_mutex_unlock(&fk->lock);
	snprintf(err, errlen, "%s", ret ? strerror(-ret) : "");
	return ret;
}

static int fk_set_epoch(void *ctx, uint64_t epoch, char *err, size_t errlen)
{
	struct fake_kernel *fk = ctx;
	int ret = 0;

	pthread_mutex_lock(&fk->lock);
	fk_log(fk, true, "epoch %llu", (unsigned long long)epoch);
	fk->set_epoch_calls++;
	if (fk->unsupported) {
		ret = -EOPNOTSUPP;
	} else if (epoch < fk->epoch) {
		violate(fk, "the epoch decreased", 0);
		ret = -EINVAL;
	} else {
		fk->epoch = epoch;
	}
	pthread_mutex_unlock(&fk->lock);
	snprintf(err, errlen, "%s", ret ? strerror(-ret) : "");
	return ret;
}

static int fk_epoch_read(void *ctx, uint64_t *epoch, char *err, size_t errlen)
{
	struct fake_kernel *fk = ctx;

	pthread_mutex_lock(&fk->lock);
	fk_log(fk, false, "epoch-read");
	*epoch = fk->epoch;	/* 0 when unsupported: never set */
	pthread_mutex_unlock(&fk->lock);
	snprintf(err, errlen, "%s", "");
	return 0;
}

static int fk_fence_self(void *ctx, char *err, size_t errlen)
{
	struct fake_kernel *fk = ctx;
	int ret = 0;

	pthread_mutex_lock(&fk->lock);
	fk_log(fk, true, "fence-self");
	if (fk->unsupported) {
		ret = -EOPNOTSUPP;
	} else {
		fk->self_fenced = true;
		fk->self_fenced_ms = ms();
	}
	pthread_mutex_unlock(&fk->lock);
	snprintf(err, errlen, "%s", ret ? strerror(-ret) : "");
	return ret;
}

static int fk_nodes_read(void *ctx, struct hbmd_kernel_node **nodes, size_t *n, char *err,
			 size_t errlen)
{
	struct fake_kernel *fk = ctx;
	struct hbmd_kernel_node *a = calloc(1025, sizeof(*a));
	size_t i;

	if (!a)
		return -ENOMEM;
	pthread_mutex_lock(&fk->lock);
	fk_log(fk, false, "nodes-read");
	*n = 0;
	a[(*n)++] = (struct hbmd_kernel_node){ .id = fk->self_id, .self = true,
		.state = fk->self_fenced ? HBMD_NODE_FENCED : 0,
		.capacity = fk->self_id < 1024 ? fk->capacity[fk->self_id] : 0 };
	for (i = 0; i < 1024; i++)
		if (fk->node[i] != FK_ABSENT)
			a[(*n)++] = (struct hbmd_kernel_node){
				.id = (uint32_t)i, .state = fk->node[i] == FK_FENCED ? 2 : 0,
				.capacity = fk->capacity[i], .free = fk->capacity[i] };
	pthread_mutex_unlock(&fk->lock);
	*nodes = a;
	snprintf(err, errlen, "%s", "");
	return 0;
}

static int fk_links_read(void *ctx, struct hbmd_kernel_link **links, size_t *n, char *err,
			 size_t errlen)
{
	struct fake_kernel *fk = ctx;
	struct hbmd_kernel_link *a = calloc(1 + sizeof(fk->links) / sizeof(fk->links[0]),
					    sizeof(*a));

	if (!a)
		return -ENOMEM;
	pthread_mutex_lock(&fk->lock);
	fk->link_reads++;
	memcpy(a, fk->links, fk->nr_links * sizeof(*a));
	*n = fk->nr_links;
	pthread_mutex_unlock(&fk->lock);
	*links = a;
	snprintf(err, errlen, "%s", "");
	return 0;
}

static int fk_stats_read(void *ctx, struct hbmd_kernel_stats *s, char *err, size_t errlen)
{
	struct fake_kernel *fk = ctx;

	pthread_mutex_lock(&fk->lock);
	*s = fk->stats;
	pthread_mutex_unlock(&fk->lock);
	snprintf(err, errlen, "%s", "");
	return 0;
}

void fk_set_link(struct fake_kernel *fk, const struct hbmd_kernel_link *l)
{
	unsigned int i;

	pthread_mutex_lock(&fk->lock);
	for (i = 0; i < fk->nr_links && fk->links[i].node_id != l->node_id; i++)
		;
	if (i < sizeof(fk->links) / sizeof(fk->links[0])) {
		fk->links[i] = *l;
		if (i == fk->nr_links)
			fk->nr_links++;
	}
	pthread_mutex_unlock(&fk->lock);
}

static void fk_close(void *ctx)
{
	(void)ctx;	/* the test owns it */
}

static const struct hbmd_kernel_ops fk_ops = {
	.setup = fk_setup,
	.node_add = fk_node_add,
	.node_remove = fk_node_remove,
	.node_fence = fk_node_fence,
	.epoch_read = fk_epoch_read,
	.set_epoch = fk_set_epoch,
	.fence_self = fk_fence_self,
	.nodes_read = fk_nodes_read,
	.links_read = fk_links_read,
	.close = fk_close,
	.stats_read = fk_stats_read,
};

void fk_init(struct fake_kernel *fk, uint32_t self_id, uint64_t incarnation, bool unsupported)
{
	memset(fk, 0, sizeof(*fk));
	pthread_mutex_init(&fk->lock, NULL);
	fk->self_id = self_id;
	fk->next_incarnation = incarnation;
	fk->unsupported = unsupported;
}

struct hbmd_kernel fk_kernel(struct fake_kernel *fk)
{
	return (struct hbmd_kernel){ .ops = &fk_ops, .ctx = fk };
}

int fk_find(struct fake_kernel *fk, const char *s)
{
	const char *p, *line;
	int n = 0, found = -1;

	pthread_mutex_lock(&fk->lock);
	for (line = fk->log; *line && found < 0; n++) {
		p = strchr(line, '\n');
		if (!p)
			p = line + strlen(line);
		if ((size_t)(p - line) >= strlen(s) && !strncmp(line, s, strlen(s)) &&
		    (line[strlen(s)] == ' ' || line + strlen(s) == p))
			found = n;
		line = *p ? p + 1 : p;
	}
	pthread_mutex_unlock(&fk->lock);
	return found;
}
