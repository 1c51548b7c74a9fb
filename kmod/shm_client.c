// SPDX-License-Identifier: GPL-2.0
/*
 * The transport "shm", client side: how this node reaches the segment of a
 * remote home that shares its memory through an ivshmem device (shm.h).
 *
 * It is the TCP transport (tcp_client.c) with another data path: the same
 * connection, handshake, ALLOC, FREE, PING and reconnection, every op but
 * attach, release and copy_nowait, and the same per-node state, which
 * struct hbmpool_shm_node extends with the home's device.  READ and WRITE
 * are CPU copies from and to that device, made only while the connection
 * is up and the device's header matches what its handshake said:
 *
 *  - hbmpool_shm_xfer(), from the connection's tx_work, instead of sending
 *    the request (struct hbmpool_tcp_data_path, tcp_client.h);
 *  - hbmpool_shm_check(), after the handshake, before the connection is
 *    used (the same hook);
 *  - hbmpool_shm_copy_nowait(), ->copy_nowait() on the fault fast path.
 *
 * debugfs nodeN/shm counts the copies and makes probe copies for the
 * tests.  Documentation/design.rst, "The shm transport".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/gfp.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

#include "hbmpool.h"
#include "shm.h"
#include "tcp_client.h"

/* A node of the transport "shm": node->priv. */
struct hbmpool_shm_node {
	struct hbmpool_tcp_node tn;	/* first: to_tn() reads node->priv */
	struct hbmpool_shm_dev *dev;	/* the home's device, held; set by attach */
	atomic64_t copies;		/* copies made */
	atomic64_t refused;		/* copies refused (bounds, incarnation) */
};

static struct hbmpool_shm_node *to_sn(struct hbmpool_tcp_node *tn)
{
	return container_of(tn, struct hbmpool_shm_node, tn);
}

/*
 * A READ or WRITE is a copy, now (tx_work, process context).
 * Out of the segment: refused, counted, failed.  The home's header no
 * longer says the incarnation the connection was made with: the command
 * goes back first on the send list and the connection fails, so that the
 * reconnection learns what became of the home (reset_work retries it, or
 * fails it when the home's memory is new).  Returns true when the
 * connection failed.
 */
static bool hbmpool_shm_xfer(struct hbmpool_tcp_conn *conn,
			     struct hbmpool_tcp_cmd *cmd)
{
	struct hbmpool_tcp_node *tn = conn->tn;
	struct hbmpool_shm_node *sn = to_sn(tn);
	struct hbmpool_req *req = cmd->req;
	u64 inc, size;
	int err;

	spin_lock(&tn->lock);
	inc = tn->incarnation;
	size = tn->seg_size;
	spin_unlock(&tn->lock);
	err = hbmpool_shm_copy(sn->dev, inc, size, cmd->op == HBMW_OP_WRITE,
			       cmd->offset, req->pages, req->nr_pages);
	if (err == -ESTALE) {
		atomic64_inc(&sn->refused);
		spin_lock(&conn->lock);
		list_add(&cmd->list, &conn->send_list);
		spin_unlock(&conn->lock);
		hbmpool_tcp_conn_fail(conn, err);
		return true;
	}
	if (err == -ERANGE) {
		atomic64_inc(&sn->refused);
		pr_warn_ratelimited("node %u: shm %s of [%llu, +%u) refused: out of the segment (%llu bytes)\n",
				    tn->node->id, cmd->op == HBMW_OP_WRITE ? "write" : "read",
				    cmd->offset, cmd->length, size);
		err = -EIO;
	} else if (err) {
		pr_warn_ratelimited("node %u: shm read of [%llu, +%u) failed: poisoned memory\n",
				    tn->node->id, cmd->offset, cmd->length);
	} else {
		atomic64_inc(&sn->copies);
	}
	hbmpool_tcp_cmd_done(tn, cmd, err);
	return false;
}

/*
 * The home's device holds the segment the handshake told of (node,
 * domain, incarnation, size), or the connection is refused like a failed
 * handshake (-EPERM, counted), and tried again later.
 */
static int hbmpool_shm_check(struct hbmpool_tcp_node *tn,
			     const struct hbmw_challenge *ch)
{
	int err = hbmpool_shm_verify(to_sn(tn)->dev, tn->node->id,
				     le64_to_cpu(ch->incarnation),
				     le64_to_cpu(ch->segment_size));

	if (err)
		pr_warn_ratelimited("node %u: its shm device does not hold the segment of the handshake (%d)\n",
				    tn->node->id, err);
	return err ? -EPERM : 0;
}

/* What the TCP transport calls instead of its own data path. */
static const struct hbmpool_tcp_data_path hbmpool_shm_data_path = {
	.xfer = hbmpool_shm_xfer,
	.check = hbmpool_shm_check,
};

/* ---- the transport's operations: TCP's, with copies for READ and WRITE ---- */

/*
 * A copy of @nr pages from the home's segment at @offset into @pages, as
 * the fault's fast path makes it: while the connection is up, at the
 * incarnation and within the size it was verified with.  -ENOLINK: not
 * up; else hbmpool_shm_copy()'s answer, a refusal counted.  Never sleeps.
 */
static int hbmpool_shm_read(struct hbmpool_tcp_node *tn, u64 offset,
			    struct page **pages, unsigned int nr)
{
	struct hbmpool_shm_node *sn = to_sn(tn);
	u64 inc, size;
	bool up;
	int err;

	spin_lock(&tn->lock);
	up = !tn->shut && tn->conn && !READ_ONCE(tn->conn->dead) &&
	     hbmpool_lstate_up(tn->health.state);
	inc = tn->incarnation;
	size = tn->seg_size;
	spin_unlock(&tn->lock);
	if (!up)
		return -ENOLINK;
	err = hbmpool_shm_copy(sn->dev, inc, size, false, offset, pages, nr);
	if (err) {
		atomic64_inc(&sn->refused);
		return err;
	}
	atomic64_inc(&sn->copies);
	atomic64_add((u64)nr << PAGE_SHIFT, &tn->bytes);
	return 0;
}

/*
 * debugfs nodeN/shm: reading shows the copies made and refused; writing
 * "OFFSET PAGES" (PAGES 1..16) makes one copy as a fetch would, into
 * scratch pages: the write fails with its error (-ERANGE out of the
 * segment, -ESTALE another incarnation, -ENOLINK no connection).  For the
 * tests of the checks.
 */
#define HBMPOOL_SHM_PROBE_MAX	16

static int hbmpool_shm_dbg_show(struct seq_file *m, void *unused)
{
	struct hbmpool_shm_node *sn = to_sn(m->private);

	seq_printf(m, "copies %lld\nrefused %lld\n",
		   atomic64_read(&sn->copies), atomic64_read(&sn->refused));
	return 0;
}

static int hbmpool_shm_dbg_open(struct inode *inode, struct file *file)
{
	return single_open(file, hbmpool_shm_dbg_show, inode->i_private);
}

static ssize_t hbmpool_shm_dbg_write(struct file *file, const char __user *ubuf,
				     size_t len, loff_t *ppos)
{
	struct hbmpool_tcp_node *tn = ((struct seq_file *)file->private_data)->private;
	struct page *pages[HBMPOOL_SHM_PROBE_MAX] = {};
	unsigned int nr, i;
	char buf[48];
	u64 offset;
	int err;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	if (sscanf(buf, "%llu %u", &offset, &nr) != 2 || !nr ||
	    nr > HBMPOOL_SHM_PROBE_MAX)
		return -EINVAL;
	err = -ENOMEM;
	for (i = 0; i < nr; i++) {
		pages[i] = alloc_page(GFP_KERNEL);
		if (!pages[i])
			goto out_free;
	}
	err = hbmpool_shm_read(tn, offset, pages, nr);
out_free:
	for (i = 0; i < nr && pages[i]; i++)
		__free_page(pages[i]);
	return err ? err : len;
}

static const struct file_operations hbmpool_shm_dbg_fops = {
	.owner = THIS_MODULE,
	.open = hbmpool_shm_dbg_open,
	.read = seq_read,
	.write = hbmpool_shm_dbg_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static int hbmpool_shm_attach(struct hbmpool_node *node, const void *params)
{
	struct hbmpool_tcp_node *tn = to_tn(node);
	struct hbmpool_shm_node *sn = to_sn(tn);
	struct hbmpool_node_conf conf;

	hbmpool_node_conf_read(node, &conf);
	sn->dev = hbmpool_shm_dev_get(conf.device);
	if (!sn->dev) {
		pr_warn("node %u: no ivshmem device \"%s\" bound to hbmpool\n",
			node->id, conf.device);
		return -ENODEV;
	}
	tn->data = &hbmpool_shm_data_path;
	/* the core removes the node's directory before ->release() */
	debugfs_create_file("shm", 0600, node->debugfs, tn, &hbmpool_shm_dbg_fops);
	return hbmpool_tcp_attach(node, params);
}

static void hbmpool_shm_release(struct hbmpool_node *node)
{
	hbmpool_tcp_release(node);
	hbmpool_shm_dev_put(to_sn(to_tn(node))->dev);
}

/*
 * The fault's fast path: a copy from the home's device while the link is
 * up; anything else (no connection, a copy refused) is the slow path's,
 * through tx_work, which reports it.  Never sleeps.
 */
static int hbmpool_shm_copy_nowait(struct hbmpool_node *node, u64 offset,
				   struct page **pages, unsigned int nr)
{
	return hbmpool_shm_read(to_tn(node), offset, pages, nr) ? -EAGAIN : 0;
}

static const struct hbmpool_transport_ops hbmpool_shm_ops = {
	.attach = hbmpool_shm_attach,
	.submit = hbmpool_tcp_submit,
	.copy_nowait = hbmpool_shm_copy_nowait,
	.alloc_chunks = hbmpool_tcp_alloc_chunks,
	.free_chunks = hbmpool_tcp_free_chunks,
	.free_bytes = hbmpool_tcp_free_bytes,
	.shutdown = hbmpool_tcp_shutdown,
	.release = hbmpool_shm_release,
	.link_admin = hbmpool_tcp_link_admin,
	.link_info = hbmpool_tcp_link_info,
	.fence = hbmpool_tcp_fence,
};

static struct hbmpool_transport hbmpool_shm_transport = {
	.name = "shm",
	.owner = THIS_MODULE,
	.api = HBMPOOL_TRANSPORT_API,
	.node_priv_size = sizeof(struct hbmpool_shm_node),
	.req_pdu_size = sizeof(struct hbmpool_tcp_cmd),
	.ops = &hbmpool_shm_ops,
};

int hbmpool_shm_client_init(void)
{
	int err;

	err = hbmpool_shm_pci_init();
	if (err)
		return err;
	err = hbmpool_transport_register(&hbmpool_shm_transport);
	if (err)
		hbmpool_shm_pci_exit();
	return err;
}

void hbmpool_shm_client_exit(void)
{
	hbmpool_transport_unregister(&hbmpool_shm_transport);
	hbmpool_shm_pci_exit();
}
