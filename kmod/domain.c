// SPDX-License-Identifier: GPL-2.0
/*
 * The domain this node belongs to: its name and this node's id in it.
 * Both are settled before the node meets others: they change only while
 * this node is alone (no other node in the table).  The domain's
 * generation is kept by events.c, which counts its changes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <net/netlink.h>

#include "hbmpool.h"

u32 hbmpool_self_id;

/* hbmpool_domain_lock protects hbmpool_domain_name_buf. */
static DEFINE_SPINLOCK(hbmpool_domain_lock);
static char hbmpool_domain_name_buf[HBMPOOL_NAME_LEN];

/* Copies the domain's name into @buf (HBMPOOL_NAME_LEN bytes). */
void hbmpool_domain_name(char *buf)
{
	spin_lock(&hbmpool_domain_lock);
	memcpy(buf, hbmpool_domain_name_buf, HBMPOOL_NAME_LEN);
	spin_unlock(&hbmpool_domain_lock);
}

/**
 * hbmpool_domain_set - name the domain, set this node's id in it
 * @name: NUL-terminated, shorter than HBMPOOL_NAME_LEN; NULL: unchanged
 * @self_id: 0..HBMPOOL_MAX_NODES - 1; NULL: unchanged
 * @extack: the refusal's reason
 *
 * Only while this node is alone; a new self id also needs that no region
 * exists.  Setting what is already set changes nothing and announces
 * nothing.  Return: 0, -EINVAL, -EBUSY, -ENODEV (module going), -ENOMEM.
 */
int hbmpool_domain_set(const char *name, const u32 *self_id,
		       struct netlink_ext_ack *extack)
{
	char cur[HBMPOOL_NAME_LEN];
	bool rename, move;
	int err;

	if (name && strnlen(name, HBMPOOL_NAME_LEN) >= HBMPOOL_NAME_LEN) {
		NL_SET_ERR_MSG(extack, "domain name: at most 31 bytes");
		return -EINVAL;
	}
	if (self_id && *self_id >= HBMPOOL_MAX_NODES) {
		NL_SET_ERR_MSG(extack, "self-id: 0..1023");
		return -EINVAL;
	}
	err = hbmpool_ctl_begin();
	if (err)
		return err;
	mutex_lock(&hbmpool_nodes_lock);
	hbmpool_domain_name(cur);
	rename = name && strcmp(cur, name);
	move = self_id && *self_id != hbmpool_self_id;
	if ((rename || move) && !hbmpool_node_alone()) {
		NL_SET_ERR_MSG(extack, "the domain has other nodes: remove them first");
		err = -EBUSY;
		goto out_unlock;
	}
	if (move) {
		err = hbmpool_self_move(*self_id, extack);
		if (err)
			goto out_unlock;
	}
	if (rename) {
		spin_lock(&hbmpool_domain_lock);
		strscpy(hbmpool_domain_name_buf, name, HBMPOOL_NAME_LEN);
		spin_unlock(&hbmpool_domain_lock);
	}
	if (rename || move)
		hbmpool_event(HBMPOOL_EVENT_DOMAIN_CHANGE, NULL);
out_unlock:
	mutex_unlock(&hbmpool_nodes_lock);
	hbmpool_ctl_end();
	if (!err && rename)
		pr_info("domain \"%s\"\n", name);
	return err;
}
