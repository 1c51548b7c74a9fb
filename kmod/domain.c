// SPDX-License-Identifier: GPL-2.0
/*
 * The domain this node belongs to: its name, this node's id in it, and the
 * domain key its nodes authenticate with.  Name and id are settled before
 * the node meets others: they change only while this node is alone (no
 * other node in the table); the key may be replaced at any time and is
 * never given out.  The domain's generation is kept by events.c, which
 * counts its changes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <net/netlink.h>

#include "hbmpool.h"

u32 hbmpool_self_id;

/* hbmpool_domain_lock protects the name and the key. */
static DEFINE_SPINLOCK(hbmpool_domain_lock);
static char hbmpool_domain_name_buf[HBMPOOL_NAME_LEN];
static u8 hbmpool_domain_key[HBMPOOL_KEY_MAX];
static unsigned int hbmpool_domain_key_len;	/* 0: no key */
static u64 hbmpool_domain_epoch;		/* the control plane's; never goes back */

/* Whether a domain key is set (it is never read back). */
bool hbmpool_domain_key_set(void)
{
	return READ_ONCE(hbmpool_domain_key_len);
}

/*
 * Copies the domain key into @buf (HBMPOOL_KEY_MAX bytes) for a handshake;
 * returns its length, 0 if none is set.  The caller wipes @buf.
 */
unsigned int hbmpool_domain_key_get(u8 *buf)
{
	unsigned int len;

	spin_lock(&hbmpool_domain_lock);
	len = hbmpool_domain_key_len;
	memcpy(buf, hbmpool_domain_key, len);
	spin_unlock(&hbmpool_domain_lock);
	return len;
}

/* Module exit: the module's copy of the key is wiped (see hbmpool_domain_set()). */
void hbmpool_domain_exit(void)
{
	spin_lock(&hbmpool_domain_lock);
	memzero_explicit(hbmpool_domain_key, sizeof(hbmpool_domain_key));
	WRITE_ONCE(hbmpool_domain_key_len, 0);
	spin_unlock(&hbmpool_domain_lock);
}

/* The membership epoch the control plane last set (0: none). */
u64 hbmpool_domain_epoch_get(void)
{
	u64 e;

	spin_lock(&hbmpool_domain_lock);
	e = hbmpool_domain_epoch;
	spin_unlock(&hbmpool_domain_lock);
	return e;
}

/**
 * hbmpool_domain_epoch_set - the control plane's membership epoch
 * @epoch: the new one, not below the current one
 * @extack: the refusal's reason
 *
 * The epoch names the membership the node table reflects (hbmpoold: the
 * etcd revision of the last membership change); it is announced.
 * Return: 0, -EINVAL (it goes back), -ENODEV (the module is going).
 */
int hbmpool_domain_epoch_set(u64 epoch, struct netlink_ext_ack *extack)
{
	bool changed;
	int err;

	err = hbmpool_ctl_begin();
	if (err)
		return err;
	spin_lock(&hbmpool_domain_lock);
	if (epoch < hbmpool_domain_epoch) {
		spin_unlock(&hbmpool_domain_lock);
		hbmpool_ctl_end();
		NL_SET_ERR_MSG(extack, "epoch: below the current one (an epoch never goes back)");
		return -EINVAL;
	}
	changed = epoch != hbmpool_domain_epoch;
	hbmpool_domain_epoch = epoch;
	spin_unlock(&hbmpool_domain_lock);
	if (changed)
		hbmpool_event(HBMPOOL_EVENT_DOMAIN_CHANGE, NULL);
	hbmpool_ctl_end();
	return 0;
}

/* Copies the domain's name into @buf (HBMPOOL_NAME_LEN bytes). */
void hbmpool_domain_name(char *buf)
{
	spin_lock(&hbmpool_domain_lock);
	memcpy(buf, hbmpool_domain_name_buf, HBMPOOL_NAME_LEN);
	spin_unlock(&hbmpool_domain_lock);
}

/**
 * hbmpool_domain_set - name the domain, set this node's id in it, set its key
 * @name: NUL-terminated, shorter than HBMPOOL_NAME_LEN; NULL: unchanged
 * @self_id: 0..HBMPOOL_MAX_NODES - 1; NULL: unchanged
 * @key: HBMPOOL_KEY_MIN..HBMPOOL_KEY_MAX bytes; NULL: unchanged
 * @key_len: its length
 * @extack: the refusal's reason
 *
 * Name and id only while this node is alone; a new self id also needs that
 * no region exists.  Setting a name or id that is already set changes
 * nothing and announces nothing; a key is always announced (as set, never
 * its bytes).  The module never sends the key; the request that carried
 * it is netlink's (a caller that does not want it echoed in an error ack
 * sets NETLINK_CAP_ACK, as hbmctl does).
 *
 * Return: 0, -EINVAL, -EBUSY, -ENODEV (module going), -ENOMEM.
 */
int hbmpool_domain_set(const char *name, const u32 *self_id, const u8 *key,
		       unsigned int key_len, struct netlink_ext_ack *extack)
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
	if (key && (key_len < HBMPOOL_KEY_MIN || key_len > HBMPOOL_KEY_MAX)) {
		NL_SET_ERR_MSG(extack, "key: 16 to 64 bytes");
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
	spin_lock(&hbmpool_domain_lock);
	if (rename)
		strscpy(hbmpool_domain_name_buf, name, HBMPOOL_NAME_LEN);
	if (key) {
		memzero_explicit(hbmpool_domain_key, sizeof(hbmpool_domain_key));
		memcpy(hbmpool_domain_key, key, key_len);
		WRITE_ONCE(hbmpool_domain_key_len, key_len);
	}
	spin_unlock(&hbmpool_domain_lock);
	if (rename || move || key)
		hbmpool_event(HBMPOOL_EVENT_DOMAIN_CHANGE, NULL);
out_unlock:
	mutex_unlock(&hbmpool_nodes_lock);
	hbmpool_ctl_end();
	if (!err && rename)
		pr_info("domain \"%s\"\n", name);
	return err;
}
