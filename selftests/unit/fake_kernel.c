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
#include <unistd.h>
#include <sys/eventfd.h>

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

/* Under the lock: one event to the subscriber (none before events_open). */
static void fk_emit(struct fake_kernel *fk, int kind, uint32_t id, int state, bool self,
		    bool fenced)
{
	struct hbmd_kernel_event *e;
	uint64_t one = 1;

	if (fk->evfd < 0)
		return;
	fk->evseq++;
	if (fk->evq_n == FK_EVQ) {
		fk->ev_lost = true;	/* the socket overran */
	} else {
		e = &fk->evq[fk->evq_n++];
		*e = (struct hbmd_kernel_event){ .kind = kind, .seq = fk->evseq, .id = id,
			.state = state, .health = -1, .self = self, .fenced = fenced,
			.epoch = fk->epoch };
	}
	if (write(fk->evfd, &one, sizeof(one)) != sizeof(one))
		fk->ev_lost = true;
}

/* A node event, then the domain's, as the kernel's hbmpool_event(). */
static void fk_emit_node(struct fake_kernel *fk, int kind, uint32_t id, int state)
{
	fk_emit(fk, kind, id, state, id == fk->self_id, false);
	fk_emit(fk, HBMD_KEV_DOMAIN, 0, 0, false, fk->self_fenced);
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
	/*
	 * Not a change the fence forbids: the kernel takes domain-set and
	 * segment-new on a fenced node, and a new segment is the way out.
	 */
	fk_log(fk, false, "setup %s self %u key %zu segment %llu%s", s->domain, s->self_id,
	       s->key_len, (unsigned long long)s->segment_bytes, fk->segment ? " (kept)" : "");
	if (s->self_id != fk->self_id)
		violate(fk, "setup with another self id", s->self_id);
	else if (s->self_id < 1024)
		fk->capacity[s->self_id] = s->segment_bytes;
	fk_emit(fk, HBMD_KEV_DOMAIN, 0, 0, false, fk->self_fenced);
	if (!fk->segment) {
		/* segment-new: a new incarnation, and the end of a fence */
		fk->segment = true;
		fk->incarnation = fk->next_incarnation;
		fk->self_fenced = false;
		fk_emit(fk, HBMD_KEV_SEGMENT, 0, 0, false, false);
	}
	*incarnation = fk->incarnation;
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
	if (p->failure_domain)
		fk_log(fk, true, "add %u %s:%u capacity %llu distance %u link %d failure-domain %u%s%s",
		       p->id, p->addr, p->port, (unsigned long long)p->capacity, p->distance,
		       p->link_type, p->failure_domain, p->device ? " shm " : "",
		       p->device ? p->device : "");
	else
		fk_log(fk, true, "add %u %s:%u capacity %llu distance %u link %d%s%s", p->id, p->addr,
		       p->port, (unsigned long long)p->capacity, p->distance, p->link_type,
		       p->device ? " shm " : "", p->device ? p->device : "");
	if (p->id == fk->self_id || p->id >= 1024) {
		violate(fk, "add of this node or a bad id", p->id);
		ret = -EINVAL;
	} else if (fk->node[p->id] != FK_ABSENT) {
		violate(fk, "add of a node that is there", p->id);
		ret = -EEXIST;
	} else if (p->distance < 11 || p->distance > 255 || p->link_type < 1 ||
		   p->link_type > 3) {
		violate(fk, "add with a distance or link type the kernel refuses", p->id);
		ret = -EINVAL;
	} else {
		fk->node[p->id] = FK_LIVE;
		fk->draining[p->id] = false;
		fk->capacity[p->id] = p->capacity;
		fk->failure_domain[p->id] = p->failure_domain;
		fk_emit_node(fk, HBMD_KEV_NODE_ADD, p->id, 0);
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
		fk->draining[id] = false;
		fk_emit_node(fk, HBMD_KEV_NODE_DEL, id, 0);
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
		fk_emit_node(fk, HBMD_KEV_NODE_CHANGE, id, HBMD_NODE_FENCED);
	}
	pthread_mutex_unlock(&fk->lock);
	snprintf(err, errlen, "%s", ret ? strerror(-ret) : "");
	return ret;
}

static int fk_node_failure_domain(void *ctx, uint32_t id, uint32_t failure_domain,
				  char *err, size_t errlen)
{
	struct fake_kernel *fk = ctx;
	int ret = 0;

	pthread_mutex_lock(&fk->lock);
	fk_log(fk, true, "failure-domain %u %u", id, failure_domain);
	if (fk->unsupported) {
		ret = -EOPNOTSUPP;
	} else if (id >= 1024 || id == fk->self_id || fk->node[id] == FK_ABSENT) {
		violate(fk, "failure domain of this node or an unknown node", id);
		ret = -ENODEV;
	} else {
		fk->failure_domain[id] = failure_domain;
		fk_emit_node(fk, HBMD_KEV_NODE_CHANGE, id,
			     fk->node[id] == FK_FENCED ? HBMD_NODE_FENCED : 0);
	}
	pthread_mutex_unlock(&fk->lock);
	snprintf(err, errlen, "%s", ret ? strerror(-ret) : "");
	return ret;
}

static int fk_node_place(void *ctx, uint32_t id, uint32_t distance, int link_type, char *err,
			 size_t errlen)
{
	struct fake_kernel *fk = ctx;
	int ret = 0;

	pthread_mutex_lock(&fk->lock);
	fk_log(fk, true, "place %u distance %u link %d", id, distance, link_type);
	if (id >= 1024 || id == fk->self_id || fk->node[id] == FK_ABSENT) {
		violate(fk, "place of this node or an unknown node", id);
		ret = -ENODEV;
	} else if (distance < 11 || distance > 255 || link_type < 1 || link_type > 3) {
		violate(fk, "place with a distance or link type the kernel refuses", id);
		ret = -EINVAL;
	} else {
		fk_emit_node(fk, HBMD_KEV_NODE_CHANGE, id,
			     fk->node[id] == FK_FENCED ? HBMD_NODE_FENCED : 0);
	}
	pthread_mutex_unlock(&fk->lock);
	snprintf(err, errlen, "%s", ret ? strerror(-ret) : "");
	return ret;
}

static int fk_node_drain(void *ctx, uint32_t id, bool draining, char *err, size_t errlen)
{
	struct fake_kernel *fk = ctx;
	int ret = 0;

	pthread_mutex_lock(&fk->lock);
	fk_log(fk, true, "drain %u %d", id, draining);
	if (id >= 1024 || id == fk->self_id || fk->node[id] == FK_ABSENT) {
		violate(fk, "drain of this node or an unknown node", id);
		ret = -ENODEV;
	} else {
		fk->draining[id] = draining;
		fk_emit_node(fk, HBMD_KEV_NODE_CHANGE, id,
			     fk->node[id] == FK_FENCED ? HBMD_NODE_FENCED : 0);
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
		fk_emit(fk, HBMD_KEV_DOMAIN, 0, 0, false, fk->self_fenced);
	}
	pthread_mutex_unlock(&fk->lock);
	snprintf(err, errlen, "%s", ret ? strerror(-ret) : "");
	return ret;
}

static int fk_domain_read(void *ctx, struct hbmd_kernel_domain *d, char *err, size_t errlen)
{
	struct fake_kernel *fk = ctx;

	pthread_mutex_lock(&fk->lock);
	fk_log(fk, false, "domain-read");
	d->epoch = fk->epoch;	/* 0 when unsupported: never set */
	d->fenced = fk->self_fenced;
	pthread_mutex_unlock(&fk->lock);
	snprintf(err, errlen, "%s", "");
	return 0;
}

/*
 * Under the lock: domain-set fenced, as the kernel does it: the domain's
 * flag (the self node's state does not change), one domain event if it
 * was not up yet.
 */
static void fk_fence(struct fake_kernel *fk)
{
	if (fk->self_fenced)
		return;
	fk->self_fenced = true;
	fk->self_fenced_ms = ms();
	fk_emit(fk, HBMD_KEV_DOMAIN, 0, 0, false, true);
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
		fk_fence(fk);
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
	/* live, fenced or not: the kernel never fences its self node */
	a[(*n)++] = (struct hbmd_kernel_node){ .id = fk->self_id, .self = true,
		.capacity = fk->self_id < 1024 ? fk->capacity[fk->self_id] : 0 };
	for (i = 0; i < 1024; i++)
		if (fk->node[i] != FK_ABSENT)
			a[(*n)++] = (struct hbmd_kernel_node){
				.id = (uint32_t)i, .state = fk->node[i] == FK_FENCED ? 2 : 0,
				.draining = fk->draining[i],
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

static int fk_segment_del(void *ctx, char *err, size_t errlen)
{
	struct fake_kernel *fk = ctx;
	int ret = 0;

	pthread_mutex_lock(&fk->lock);
	fk_log(fk, true, "segment-del");
	if (fk->segment) {
		fk->segment = false;
		fk_emit(fk, HBMD_KEV_SEGMENT, 0, 0, false, false);
	} else {
		snprintf(err, errlen, "no segment");
		ret = -ENOENT;
	}
	pthread_mutex_unlock(&fk->lock);
	return ret;
}

static int fk_placement_params(void *ctx, uint32_t full_pct, bool avoid_degraded, char *err,
			       size_t errlen)
{
	struct fake_kernel *fk = ctx;

	(void)err;
	(void)errlen;
	pthread_mutex_lock(&fk->lock);
	if (full_pct < 1 || full_pct > 100)
		violate(fk, "placement_params: full_pct %u", full_pct);
	fk->full_pct = full_pct;
	fk->avoid_degraded = avoid_degraded;
	fk->placement_calls++;
	pthread_mutex_unlock(&fk->lock);
	return 0;
}

static int fk_stats_read(void *ctx, struct hbmd_kernel_stats *s, char *err, size_t errlen)
{
	struct fake_kernel *fk = ctx;

	pthread_mutex_lock(&fk->lock);
	*s = fk->stats;
	fk->stats_reads++;
	pthread_mutex_unlock(&fk->lock);
	snprintf(err, errlen, "%s", "");
	return 0;
}

void fk_region_change(struct fake_kernel *fk, uint32_t region, uint32_t degraded, uint32_t lost,
		      const struct hbmd_kernel_stats *s)
{
	pthread_mutex_lock(&fk->lock);
	fk->stats = *s;
	fk_emit(fk, HBMD_KEV_REGION_CHANGE, region, 0, false, false);
	if (fk->evq_n && fk->evq[fk->evq_n - 1].kind == HBMD_KEV_REGION_CHANGE) {
		fk->evq[fk->evq_n - 1].degraded = degraded;
		fk->evq[fk->evq_n - 1].lost = lost;
	}
	pthread_mutex_unlock(&fk->lock);
}

void fk_set_link(struct fake_kernel *fk, const struct hbmd_kernel_link *l)
{
	unsigned int i;

	pthread_mutex_lock(&fk->lock);
	for (i = 0; i < fk->nr_links && fk->links[i].node_id != l->node_id; i++)
		;
	if (i < sizeof(fk->links) / sizeof(fk->links[0])) {
		bool change = i == fk->nr_links || fk->links[i].oper_state != l->oper_state;

		fk->links[i] = *l;
		if (i == fk->nr_links)
			fk->nr_links++;
		if (change) {	/* link-change-ntf: oper state */
			fk_emit(fk, HBMD_KEV_LINK, l->node_id, l->oper_state, false, false);
			if (fk->evq_n && fk->evq[fk->evq_n - 1].kind == HBMD_KEV_LINK)
				fk->evq[fk->evq_n - 1].health = l->health;
		}
	}
	pthread_mutex_unlock(&fk->lock);
}

static int fk_events_open(void *ctx, char *err, size_t errlen)
{
	struct fake_kernel *fk = ctx;
	int ret;

	pthread_mutex_lock(&fk->lock);
	fk_log(fk, false, "events-open");
	if (fk->evfd < 0)
		fk->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ret = fk->evfd < 0 ? -errno : fk->evfd;
	fk->evq_n = 0;
	fk->ev_lost = false;
	pthread_mutex_unlock(&fk->lock);
	snprintf(err, errlen, "%s", ret < 0 ? strerror(-ret) : "");
	return ret;
}

static int fk_events_read(void *ctx, struct hbmd_kernel_event *ev, size_t n, char *err,
			  size_t errlen)
{
	struct fake_kernel *fk = ctx;
	uint64_t v, one = 1;
	size_t k = 0;

	pthread_mutex_lock(&fk->lock);
	fk->events_reads++;
	if (fk->evfd < 0) {
		pthread_mutex_unlock(&fk->lock);
		snprintf(err, errlen, "no event channel");
		return -EINVAL;
	}
	if (read(fk->evfd, &v, sizeof(v)) < 0)
		v = 0;	/* nothing pending */
	if (fk->ev_lost && n) {
		/* as the socket: what was queued before the loss is gone */
		ev[k++] = (struct hbmd_kernel_event){ .kind = HBMD_KEV_OVERRUN, .health = -1 };
		fk->ev_lost = false;
		fk->evq_n = 0;
		fk->overruns_read++;
	}
	for (; k < n && fk->evq_n; k++) {
		ev[k] = fk->evq[0];
		memmove(fk->evq, fk->evq + 1, --fk->evq_n * sizeof(fk->evq[0]));
	}
	if (fk->evq_n && write(fk->evfd, &one, sizeof(one)) != sizeof(one))
		fk->ev_lost = true;
	pthread_mutex_unlock(&fk->lock);
	err[0] = '\0';
	(void)errlen;
	return (int)k;
}

void fk_overrun(struct fake_kernel *fk)
{
	uint64_t one = 1;

	pthread_mutex_lock(&fk->lock);
	fk->ev_lost = true;
	if (fk->evfd >= 0 && write(fk->evfd, &one, sizeof(one)) != sizeof(one))
		violate(fk, "eventfd write", 0);
	pthread_mutex_unlock(&fk->lock);
}

int fk_operator(struct fake_kernel *fk, const char *op, uint32_t id, bool notify)
{
	int ret = 0, fd;

	pthread_mutex_lock(&fk->lock);
	fk_log(fk, false, "op-%s %u%s", op, id, notify ? "" : " (event lost)");
	fd = fk->evfd;
	if (!notify)
		fk->evfd = -1;	/* no event */
	if (!strcmp(op, "fence-self")) {
		fk_fence(fk);
	} else if (!strcmp(op, "segment-del")) {
		/* allowed while fenced; the fence stays until a new segment */
		if (fk->segment) {
			fk->segment = false;
			fk_emit(fk, HBMD_KEV_SEGMENT, 0, 0, false, false);
		} else {
			ret = -ENOENT;
		}
	} else if (id >= 1024 || id == fk->self_id) {
		ret = -EINVAL;
	} else if (!strcmp(op, "del") && fk->node[id] != FK_ABSENT) {
		fk->node[id] = FK_ABSENT;
		fk->draining[id] = false;
		fk_emit_node(fk, HBMD_KEV_NODE_DEL, id, 0);
	} else if (!strcmp(op, "fence") && fk->node[id] == FK_LIVE) {
		fk->node[id] = FK_FENCED;
		fk_emit_node(fk, HBMD_KEV_NODE_CHANGE, id, HBMD_NODE_FENCED);
	} else if (!strcmp(op, "add") && fk->node[id] == FK_ABSENT) {
		fk->node[id] = FK_LIVE;
		fk->capacity[id] = 1 << 20;
		fk_emit_node(fk, HBMD_KEV_NODE_ADD, id, 0);
	} else {
		ret = -EINVAL;
	}
	if (!notify) {
		fk->evfd = fd;
		fk->evseq += 2;	/* the numbers of the lost events */
	}
	pthread_mutex_unlock(&fk->lock);
	return ret;
}

unsigned int fk_count(struct fake_kernel *fk, const char *s)
{
	const char *line, *p;
	unsigned int n = 0;
	size_t len = strlen(s);

	pthread_mutex_lock(&fk->lock);
	for (line = fk->log; *line; line = *p ? p + 1 : p) {
		p = strchr(line, '\n');
		if (!p)
			p = line + strlen(line);
		if ((size_t)(p - line) >= len && !strncmp(line, s, len) &&
		    (line + len == p || line[len] == ' '))
			n++;
	}
	pthread_mutex_unlock(&fk->lock);
	return n;
}

static void fk_close(void *ctx)
{
	struct fake_kernel *fk = ctx;	/* the test owns it; the events go */

	pthread_mutex_lock(&fk->lock);
	if (fk->evfd >= 0)
		close(fk->evfd);
	fk->evfd = -1;
	fk->evq_n = 0;
	fk->ev_lost = false;
	pthread_mutex_unlock(&fk->lock);
}

static const struct hbmd_kernel_ops fk_ops = {
	.setup = fk_setup,
	.node_add = fk_node_add,
	.node_remove = fk_node_remove,
	.node_fence = fk_node_fence,
	.node_place = fk_node_place,
	.node_failure_domain = fk_node_failure_domain,
	.node_drain = fk_node_drain,
	.domain_read = fk_domain_read,
	.set_epoch = fk_set_epoch,
	.fence_self = fk_fence_self,
	.nodes_read = fk_nodes_read,
	.links_read = fk_links_read,
	.close = fk_close,
	.stats_read = fk_stats_read,
	.placement_params = fk_placement_params,
	.segment_del = fk_segment_del,
	.events_open = fk_events_open,
	.events_read = fk_events_read,
};

void fk_init(struct fake_kernel *fk, uint32_t self_id, uint64_t incarnation, bool unsupported)
{
	memset(fk, 0, sizeof(*fk));
	pthread_mutex_init(&fk->lock, NULL);
	fk->self_id = self_id;
	fk->next_incarnation = incarnation;
	fk->unsupported = unsupported;
	fk->evfd = -1;
	fk->avoid_degraded = -1;
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
