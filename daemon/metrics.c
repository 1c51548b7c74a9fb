// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpoold's metrics in the Prometheus text exposition format, version
 * 0.0.4: see metrics.h.  Pure logic: a snapshot in, text out.
 *
 * Every family is written whole, in one place: "# HELP name text",
 * "# TYPE name gauge|counter", then its samples, so that no name appears
 * in two places (the format forbids it).  Label values escape backslash,
 * double quote and newline; help texts escape backslash and newline.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

struct out {
	char *p;
	size_t len, cap;
	unsigned int labels;	/* of the sample being written */
	bool nomem;
};

static void put(struct out *o, const char *s, size_t n)
{
	char *p;

	if (o->nomem)
		return;
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;

		while (cap < o->len + n + 1)
			cap *= 2;
		p = realloc(o->p, cap);
		if (!p) {
			o->nomem = true;
			return;
		}
		o->p = p;
		o->cap = cap;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = '\0';
}

static void outf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void outf(struct out *o, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(o, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* s escaped: \\ and \n always, \" in label values (quote). */
static void escaped(struct out *o, const char *s, bool quote)
{
	for (; *s; s++) {
		if (*s == '\\')
			put(o, "\\\\", 2);
		else if (*s == '\n')
			put(o, "\\n", 2);
		else if (*s == '"' && quote)
			put(o, "\\\"", 2);
		else
			put(o, s, 1);
	}
}

static void family(struct out *o, const char *name, const char *type, const char *help)
{
	outf(o, "# HELP %s ", name);
	escaped(o, help, false);
	outf(o, "\n# TYPE %s %s\n", name, type);
}

static void sample(struct out *o, const char *name)
{
	put(o, name, strlen(name));
	o->labels = 0;
}

static void label(struct out *o, const char *key, const char *value)
{
	outf(o, "%c%s=\"", o->labels++ ? ',' : '{', key);
	escaped(o, value, true);
	put(o, "\"", 1);
}

static void label_id(struct out *o, const char *key, uint32_t id)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", id);
	label(o, key, v);
}

static void value_u(struct out *o, uint64_t v)
{
	outf(o, "%s %llu\n", o->labels ? "}" : "", (unsigned long long)v);
}

static void value_i(struct out *o, int64_t v)
{
	outf(o, "%s %lld\n", o->labels ? "}" : "", (long long)v);
}

static void value_f(struct out *o, double v)
{
	outf(o, "%s %.9g\n", o->labels ? "}" : "", v);
}

/* A family without labels and its one sample. */
static void gauge_u(struct out *o, const char *name, const char *help, uint64_t v)
{
	family(o, name, "gauge", help);
	sample(o, name);
	value_u(o, v);
}

static void gauge_i(struct out *o, const char *name, const char *help, int64_t v)
{
	family(o, name, "gauge", help);
	sample(o, name);
	value_i(o, v);
}

static void gauge_f(struct out *o, const char *name, const char *help, double v)
{
	family(o, name, "gauge", help);
	sample(o, name);
	value_f(o, v);
}

/* One sample per state of names[0..n), 1 for cur, 0 for the others; node: label node (-1: none). */
static void one_hot(struct out *o, const char *name, int64_t node, const char *const *names,
		    size_t n, const char *cur, int cur_i)
{
	size_t i;

	for (i = 0; i < n; i++) {
		sample(o, name);
		if (node >= 0)
			label_id(o, "node", (uint32_t)node);
		label(o, "state", names[i]);
		value_u(o, cur ? !strcmp(cur, names[i]) : (int)i == cur_i);
	}
}

#define N(a)	(sizeof(a) / sizeof((a)[0]))

static const char *const agent_states[] = { "new", "member", "fenced", "stopped" };
static const char *const member_states[] = { "self", "live", "fenced", "absent" };
/* enum hbmpool_nl_node_state, _link_state, _link_health, in their order */
static const char *const node_states[] = { "live", "unreachable", "fenced", "removed" };
static const char *const link_states[] = { "down", "up" };
static const char *const link_healths[] = { "down", "connecting", "live", "degraded" };

static void agent_part(struct out *o, const struct hbmd_metrics_snap *s)
{
	size_t i;

	family(o, "hbmpoold_info", "gauge", "This daemon's domain and node id (always 1).");
	sample(o, "hbmpoold_info");
	label(o, "domain", s->domain ? s->domain : "");
	label_id(o, "node", s->node_id);
	value_u(o, 1);

	family(o, "hbmpoold_agent_state", "gauge",
	       "The agent's state: new, member, fenced or stopped (one-hot).");
	one_hot(o, "hbmpoold_agent_state", -1, agent_states, N(agent_states), s->state, -1);
	gauge_u(o, "hbmpoold_fenced", "1 once this node fenced itself (final).", s->fenced);
	gauge_u(o, "hbmpoold_is_leader", "1 if this node is the domain's leader.", s->is_leader);
	gauge_f(o, "hbmpoold_lease_ttl_seconds", "The TTL of this node's etcd lease.",
		(double)s->lease_ttl_ms / 1000);
	gauge_f(o, "hbmpoold_lease_valid_seconds",
		"How much longer this node's lease is proven alive (0: not held).",
		(double)s->lease_valid_ms / 1000);
	gauge_u(o, "hbmpoold_incarnation", "The incarnation of this node's segment.",
		s->incarnation);

	family(o, "hbmpoold_kernel_read_ok", "gauge",
	       "1 if the kernel's nodes, links or stats could be read for this scrape.");
	sample(o, "hbmpoold_kernel_read_ok");
	label(o, "read", "nodes");
	value_u(o, s->nodes_ok);
	sample(o, "hbmpoold_kernel_read_ok");
	label(o, "read", "links");
	value_u(o, s->links_ok);
	sample(o, "hbmpoold_kernel_read_ok");
	label(o, "read", "stats");
	value_u(o, s->stats_ok);

	gauge_i(o, "hbmpool_domain_epoch", "The domain's membership epoch, as this node has it.",
		s->epoch);
	gauge_u(o, "hbmpool_domain_members", "How many members the domain has.", s->nr_members);
	gauge_i(o, "hbmpool_domain_leader", "The leader's node id (-1: none known).",
		s->leader_id);

	family(o, "hbmpool_member_up", "gauge",
	       "1 if the member is this node or live in this node's kernel.");
	for (i = 0; i < s->nr_members; i++) {
		sample(o, "hbmpool_member_up");
		label_id(o, "node", s->members[i].id);
		value_u(o, !strcmp(s->members[i].kernel, "self") ||
			   !strcmp(s->members[i].kernel, "live"));
	}
	family(o, "hbmpool_member_state", "gauge",
	       "How this node's kernel has the member: self, live, fenced or absent (one-hot).");
	for (i = 0; i < s->nr_members; i++)
		one_hot(o, "hbmpool_member_state", s->members[i].id, member_states,
			N(member_states), s->members[i].kernel, -1);
}

static void kernel_part(struct out *o, const struct hbmd_metrics_snap *s)
{
	static const struct {
		const char *name, *type, *help;
		size_t off;
	} stats[] = {
#define S(n, t, f, h) { n, t, h, offsetof(struct hbmd_kernel_stats, f) }
		S("hbmpool_faults_total", "counter", faults, "Page faults on hbmpool regions."),
		S("hbmpool_fetches_total", "counter", fetches, "Fetches from the homes."),
		S("hbmpool_fetched_bytes_total", "counter", bytes_fetched,
		  "Bytes fetched from the homes."),
		S("hbmpool_writebacks_total", "counter", writebacks, "Write-backs to the homes."),
		S("hbmpool_written_back_bytes_total", "counter", bytes_written_back,
		  "Bytes written back to the homes."),
		S("hbmpool_evictions_total", "counter", evictions, "Pages evicted from the cache."),
		S("hbmpool_errors_total", "counter", errors,
		  "Fetches and write-backs that failed."),
		S("hbmpool_timeouts_total", "counter", timeouts,
		  "Fetches and write-backs that timed out."),
		S("hbmpool_over_budget_total", "counter", over_budget,
		  "Times the cache went over its budget."),
		S("hbmpool_shrinker_freed_pages_total", "counter", shrinker_freed,
		  "Pages freed by the memory shrinker."),
		S("hbmpool_cached_pages", "gauge", cached_pages, "Pages in the cache now."),
		S("hbmpool_dirty_pages", "gauge", dirty_pages, "Dirty pages in the cache now."),
		S("hbmpool_regions", "gauge", regions, "Regions on this node."),
		S("hbmpool_region_lost_chunks", "gauge", lost_chunks,
		  "Chunks whose home lost its memory, over every region."),
		S("hbmpool_region_degraded_chunks", "gauge", degraded_chunks,
		  "Chunks with fewer good copies than their region's replicas, lost ones included, over every region."),
#undef S
	};
	size_t i;

	family(o, "hbmpool_node_state", "gauge",
	       "A node's state in this node's kernel: live, unreachable, fenced or removed (one-hot).");
	for (i = 0; s->nodes_ok && i < s->nr_nodes; i++)
		one_hot(o, "hbmpool_node_state", s->nodes[i].id, node_states, N(node_states),
			NULL, s->nodes[i].state);
	family(o, "hbmpool_node_capacity_bytes", "gauge",
	       "Bytes a node exports to the domain (this node: its cache budget).");
	for (i = 0; s->nodes_ok && i < s->nr_nodes; i++) {
		sample(o, "hbmpool_node_capacity_bytes");
		label_id(o, "node", s->nodes[i].id);
		value_u(o, s->nodes[i].capacity);
	}
	family(o, "hbmpool_node_free_bytes", "gauge", "Bytes free on a node.");
	for (i = 0; s->nodes_ok && i < s->nr_nodes; i++) {
		sample(o, "hbmpool_node_free_bytes");
		label_id(o, "node", s->nodes[i].id);
		value_u(o, s->nodes[i].free);
	}

	family(o, "hbmpool_link_oper_state", "gauge",
	       "A link's operational state: down or up (one-hot).");
	for (i = 0; s->links_ok && i < s->nr_links; i++)
		one_hot(o, "hbmpool_link_oper_state", s->links[i].node_id, link_states,
			N(link_states), NULL, s->links[i].oper_state);
	family(o, "hbmpool_link_health", "gauge",
	       "A link's health: down, connecting, live or degraded (one-hot).");
	for (i = 0; s->links_ok && i < s->nr_links; i++)
		if (s->links[i].health >= 0)
			one_hot(o, "hbmpool_link_health", s->links[i].node_id, link_healths,
				N(link_healths), NULL, s->links[i].health);
	family(o, "hbmpool_link_rtt_seconds", "gauge", "A link's last measured round-trip time.");
	for (i = 0; s->links_ok && i < s->nr_links; i++) {
		sample(o, "hbmpool_link_rtt_seconds");
		label_id(o, "node", s->links[i].node_id);
		value_f(o, (double)s->links[i].rtt_ns / 1e9);
	}

	for (i = 0; i < N(stats); i++) {
		family(o, stats[i].name, stats[i].type, stats[i].help);
		if (!s->stats_ok)
			continue;
		sample(o, stats[i].name);
		value_u(o, *(const uint64_t *)((const char *)&s->stats + stats[i].off));
	}
}

int hbmd_metrics_render(const struct hbmd_metrics_snap *s, char **text, size_t *len)
{
	struct out o = { 0 };

	agent_part(&o, s);
	kernel_part(&o, s);
	if (o.nomem || !o.p) {
		free(o.p);
		*text = NULL;
		*len = 0;
		return -ENOMEM;
	}
	*text = o.p;
	*len = o.len;
	return 0;
}
