// SPDX-License-Identifier: GPL-2.0
/*
 * State-change events.  Every change of a node or a parameter, whatever
 * path made it (netlink, sysfs, a transport), goes through here: it is
 * numbered with the domain-wide sequence number and announced to the
 * netlink monitor group, in number order, one number per event.  A reader
 * that holds the numbering (hbmpool_events_hold()) sees state and number
 * agree: what it reads reflects exactly the events numbered so far.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>

#include "hbmpool.h"

/* hbmpool_events_lock protects hbmpool_seq and orders the events it numbers. */
static DEFINE_MUTEX(hbmpool_events_lock);
static u64 hbmpool_seq;

/* @node was created, removed, or changed state (@ev). May sleep. */
void hbmpool_event_node(struct hbmpool_node *node, enum hbmpool_event ev)
{
	mutex_lock(&hbmpool_events_lock);
	hbmpool_nl_notify_node(node, ev, ++hbmpool_seq);
	mutex_unlock(&hbmpool_events_lock);
}

/* A parameter changed. May sleep. */
void hbmpool_event_params(void)
{
	mutex_lock(&hbmpool_events_lock);
	hbmpool_nl_notify_params(++hbmpool_seq);
	mutex_unlock(&hbmpool_events_lock);
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
