// SPDX-License-Identifier: GPL-2.0
/*
 * State-change events.  Every change of the domain, a node, a link, a
 * region or a parameter, whatever path made it (netlink, sysfs, a
 * transport, an ioctl), goes through hbmpool_event(): it is numbered with
 * the domain-wide sequence number and announced to the netlink monitor
 * group, in number order, one number per event.  A reader that holds the
 * numbering (hbmpool_events_hold()) reads state that reflects at least the
 * events numbered so far; a change whose event is not numbered yet may show
 * too, and its event, which carries the whole object, follows.
 *
 * The domain's generation counts its membership changes (a node created,
 * removed or changing state) and its settings changes; each of those
 * events is followed by a domain-change event that carries it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>

#include "hbmpool.h"

/*
 * hbmpool_events_lock protects hbmpool_seq and hbmpool_generation, and
 * orders the events they number.
 */
static DEFINE_MUTEX(hbmpool_events_lock);
static u64 hbmpool_seq;
static u64 hbmpool_generation;

static bool hbmpool_event_membership(enum hbmpool_event ev)
{
	return ev == HBMPOOL_EVENT_NODE_ADD || ev == HBMPOOL_EVENT_NODE_DEL ||
	       ev == HBMPOOL_EVENT_NODE_CHANGE;
}

/**
 * hbmpool_event - announce a change
 * @ev: what changed
 * @obj: the node or region it changed (see enum hbmpool_event), or NULL
 *
 * May sleep.  The object must stay valid until this returns.
 */
void hbmpool_event(enum hbmpool_event ev, void *obj)
{
	bool domain = ev == HBMPOOL_EVENT_DOMAIN_CHANGE ||
		      hbmpool_event_membership(ev);

	mutex_lock(&hbmpool_events_lock);
	if (domain)
		hbmpool_generation++;
	if (ev != HBMPOOL_EVENT_DOMAIN_CHANGE)
		hbmpool_nl_notify(ev, obj, ++hbmpool_seq);
	if (domain)
		hbmpool_nl_notify(HBMPOOL_EVENT_DOMAIN_CHANGE, NULL, ++hbmpool_seq);
	mutex_unlock(&hbmpool_events_lock);
}

/* Under hbmpool_events_hold(): the domain's generation. */
u64 hbmpool_domain_generation(void)
{
	lockdep_assert_held(&hbmpool_events_lock);
	return hbmpool_generation;
}

/*
 * Until hbmpool_events_release(), no event is numbered: a snapshot taken
 * meanwhile reflects the returned sequence number.
 */
u64 hbmpool_events_hold(void)
{
	mutex_lock(&hbmpool_events_lock);
	return hbmpool_seq;
}

void hbmpool_events_release(void)
{
	mutex_unlock(&hbmpool_events_lock);
}
