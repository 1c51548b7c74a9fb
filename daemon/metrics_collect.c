// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpoold's metrics: the snapshot of one scrape (see metrics.h), from the
 * agent's in-memory view and three quick reads of the kernel (node-get and
 * link-get dumps, stats-get with a region-get dump).  Nothing here talks
 * to etcd.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "loop.h"
#include "metrics.h"

int hbmd_metrics_collect(const struct hbmd_agent *a, const char *domain, uint32_t node_id,
			 struct hbmd_metrics_snap *s)
{
	static const char *const states[] = { "new", "member", "fenced", "stopped" };
	const struct hbm_lease *l = hbmd_agent_lease(a);
	struct hbmd_kernel k = hbmd_agent_kernel(a);
	struct hbmd_agent_member m;
	uint64_t now = hbmd_now_ms();
	char err[256];
	size_t i, n;

	memset(s, 0, sizeof(*s));
	s->domain = domain;
	s->node_id = node_id;
	s->state = states[hbmd_agent_state(a)];
	s->fenced = hbmd_agent_state(a) == HBMD_AGENT_FENCED;
	s->is_leader = hbmd_agent_is_leader(a);
	s->epoch = hbmd_agent_epoch(a);
	s->leader_id = hbmd_agent_leader_id(a);
	s->incarnation = hbmd_agent_incarnation(a);
	s->lease_ttl_ms = l->ttl_ms;
	if (l->state == HBM_LEASE_HELD && l->valid_until > now)
		s->lease_valid_ms = l->valid_until - now;

	n = hbmd_agent_nr_members(a);
	s->members = calloc(n ? n : 1, sizeof(*s->members));
	if (!s->members)
		return -ENOMEM;
	for (i = 0; i < n && !hbmd_agent_member(a, i, &m); i++)
		s->members[s->nr_members++] = (struct hbmd_metrics_member){
			.id = m.id, .kernel = m.kernel };

	s->nodes_ok = !k.ops->nodes_read(k.ctx, &s->nodes, &s->nr_nodes, err, sizeof(err));
	s->links_ok = !k.ops->links_read(k.ctx, &s->links, &s->nr_links, err, sizeof(err));
	s->stats_ok = k.ops->stats_read && !k.ops->stats_read(k.ctx, &s->stats, err, sizeof(err));
	return 0;
}

void hbmd_metrics_snap_free(struct hbmd_metrics_snap *s)
{
	free(s->members);
	free(s->nodes);
	free(s->links);
	memset(s, 0, sizeof(*s));
}

int hbmd_metrics_scrape(void *arg, char **text, size_t *len)
{
	const struct hbmd_metrics_source *src = arg;
	struct hbmd_metrics_snap s;
	int ret;

	ret = hbmd_metrics_collect(src->agent, src->domain, src->node_id, &s);
	if (!ret)
		ret = hbmd_metrics_render(&s, text, len);
	hbmd_metrics_snap_free(&s);
	return ret;
}
