// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP transport's data digest: the CRC32C of a run of pages, and which
 * implementation computes it.
 *
 * Two compute the same CRC32C: the crypto API's "crc32c" (the CPU's CRC32
 * instruction where it has one: crc32c-intel, -arm64, ...) and the
 * library's table-driven __crc32c_le().  On hardware the instruction is
 * several times faster; where it is emulated or trapped (a VM without the
 * instruction passed through, QEMU's TCG) the table can be several times
 * faster instead, and every byte of page data goes through the digest on
 * both sides of a link.  So, as the kernel's xor and raid6 code choose
 * their routines, the module times both over a few pages at load, keeps the
 * faster and says which (the log, debugfs "tcp_home": "digest").  The two
 * must agree on a test buffer, or the library is used.  Set at init,
 * read-only after.
 *
 * A home that keeps its pages' CRCs at rest (segment_digest.c) answers a
 * read with a digest made from them (hbmpool_tcp_digest_fold()), and a write
 * is checked against the digest made from its pages' own CRCs, which the
 * home keeps (hbmpool_tcp_pages_digest_each()).  A page's CRC at rest is
 * the raw CRC32C of its bytes alone (seed 0, no final inversion).  CRCs are
 * linear: the raw CRC of A || B from seed s is the raw CRC of A from s,
 * shifted over B's length, xor B's raw CRC from seed 0.  The shift over one
 * page is linear in the CRC's 32 bits too, so it is four lookups in tables
 * built at init from the library's __crc32c_le_shift(), which a self-test
 * checks against a digest of two whole pages.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/ktime.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "tcp.h"

/* The crypto API's "crc32c", if it is the one in use; NULL: the library's. */
static struct crypto_shash *hbmpool_crc32c_tfm;
/* Each implementation's speed at load, MB/s; 0: not measured. */
static unsigned int hbmpool_crc32c_mbps[2];

#define HBMPOOL_DIGEST_TEST_PAGES	4
#define HBMPOOL_DIGEST_TEST_ROUNDS	5

static u32 hbmpool_digest_shash(struct crypto_shash *tfm, struct page **pages,
				unsigned int nr)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	unsigned int i;
	__le32 out;

	/* crc32c's init, update and final cannot fail */
	desc->tfm = tfm;
	crypto_shash_init(desc);
	for (i = 0; i < nr; i++) {
		void *p = kmap_local_page(pages[i]);

		crypto_shash_update(desc, p, PAGE_SIZE);
		kunmap_local(p);
	}
	crypto_shash_final(desc, (u8 *)&out);
	return le32_to_cpu(out);	/* final inverted already */
}

static u32 hbmpool_digest_lib(struct page **pages, unsigned int nr)
{
	unsigned int i;
	u32 crc = ~0U;

	for (i = 0; i < nr; i++) {
		void *p = kmap_local_page(pages[i]);

		crc = hbmw_crc32c(crc, p, PAGE_SIZE);
		kunmap_local(p);
	}
	return ~crc;
}

/* The protocol's CRC32C of @nr whole pages by @tfm, or the library's if NULL. */
static u32 hbmpool_digest_by(struct crypto_shash *tfm, struct page **pages,
			     unsigned int nr)
{
	return tfm ? hbmpool_digest_shash(tfm, pages, nr) :
		     hbmpool_digest_lib(pages, nr);
}

/* The protocol's CRC32C (seed ~0, final inversion) of @nr whole pages. */
u32 hbmpool_tcp_pages_digest(struct page **pages, unsigned int nr)
{
	return hbmpool_digest_by(hbmpool_crc32c_tfm, pages, nr);
}

/* A raw CRC shifted over one page of zeros, byte by byte of the CRC. */
static u32 hbmpool_page_shift_tab[4][256];
/* The protocol's seed, ~0, shifted over one page */
static u32 hbmpool_seed_shifted;
/* The tables passed their self-test: runs may be digested from pages' CRCs */
static bool hbmpool_fold_ok;

static u32 hbmpool_shift_page(u32 crc)
{
	return hbmpool_page_shift_tab[0][crc & 0xff] ^
	       hbmpool_page_shift_tab[1][(crc >> 8) & 0xff] ^
	       hbmpool_page_shift_tab[2][(crc >> 16) & 0xff] ^
	       hbmpool_page_shift_tab[3][crc >> 24];
}

/* Whether a home may keep its pages' CRCs and answer reads from them. */
bool hbmpool_tcp_digest_fold_ok(void)
{
	return hbmpool_fold_ok;
}

/**
 * hbmpool_tcp_digest_fold - the digest of a run from its pages' CRCs
 * @crc: each page's raw CRC32C (seed 0, no inversion)
 * @nr: pages
 *
 * Only when hbmpool_tcp_digest_fold_ok().  Return: the protocol's CRC32C of
 * the run, as hbmpool_tcp_pages_digest() of the pages would compute it.
 */
u32 hbmpool_tcp_digest_fold(const u32 *crc, unsigned int nr)
{
	u32 x = ~0U;
	unsigned int i;

	for (i = 0; i < nr; i++)
		x = hbmpool_shift_page(x) ^ crc[i];
	return ~x;
}

/**
 * hbmpool_tcp_pages_digest_each - digest a run of pages, and each page
 * @pages: the pages
 * @nr: how many
 * @crc: out: each page's raw CRC32C (seed 0, no inversion), for a home to
 *	keep; meaningless unless hbmpool_tcp_digest_fold_ok()
 *
 * Return: the protocol's CRC32C of the run.
 */
u32 hbmpool_tcp_pages_digest_each(struct page **pages, unsigned int nr,
				  u32 *crc)
{
	unsigned int i;

	if (!hbmpool_fold_ok)
		return hbmpool_tcp_pages_digest(pages, nr);
	/* raw CRC from 0 = the raw CRC from ~0, less ~0 shifted over the page */
	for (i = 0; i < nr; i++)
		crc[i] = ~hbmpool_digest_by(hbmpool_crc32c_tfm, &pages[i], 1) ^
			 hbmpool_seed_shifted;
	return hbmpool_tcp_digest_fold(crc, nr);
}

/*
 * Builds the shift tables, and checks them and the seed's shift against
 * the library's digest of two pages of a pattern: the protocol's digest of
 * the two, folded from their raw CRCs, and each page's raw CRC from its
 * protocol digest.
 */
static void hbmpool_fold_init(void)
{
	u32 bit[32], crc[2], whole;
	unsigned int b, k, v;
	u8 *buf;

	for (b = 0; b < 32; b++)
		bit[b] = __crc32c_le_shift(1U << b, PAGE_SIZE);
	for (k = 0; k < 4; k++) {
		for (v = 0; v < 256; v++) {
			u32 t = 0;

			for (b = 0; b < 8; b++)
				if (v & BIT(b))
					t ^= bit[8 * k + b];
			hbmpool_page_shift_tab[k][v] = t;
		}
	}
	hbmpool_seed_shifted = __crc32c_le_shift(~0U, PAGE_SIZE);

	buf = kmalloc(2 * PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		return;		/* untested: reads are digested again */
	for (b = 0; b < 2 * PAGE_SIZE; b++)
		buf[b] = (u8)(b * 13 + (b >> 7));
	whole = ~__crc32c_le(~0U, buf, 2 * PAGE_SIZE);
	for (k = 0; k < 2; k++)
		crc[k] = __crc32c_le(~0U, buf + k * PAGE_SIZE, PAGE_SIZE) ^
			 hbmpool_seed_shifted;
	hbmpool_fold_ok = hbmpool_tcp_digest_fold(crc, 2) == whole &&
			  crc[0] == __crc32c_le(0, buf, PAGE_SIZE);
	if (!hbmpool_fold_ok)
		pr_warn("TCP data digests: digests folded from pages' CRCs are wrong: digests at rest not used\n");
	kfree(buf);
}

/* MB/s of @tfm (NULL: the library), the best of a few rounds over @pages. */
static unsigned int hbmpool_digest_rate(struct crypto_shash *tfm,
					struct page **pages, u32 *crc)
{
	u64 best = U64_MAX, t;
	unsigned int i;

	for (i = 0; i < HBMPOOL_DIGEST_TEST_ROUNDS; i++) {
		t = ktime_get_ns();
		*crc = hbmpool_digest_by(tfm, pages, HBMPOOL_DIGEST_TEST_PAGES);
		best = min(best, ktime_get_ns() - t);
	}
	/* bytes per ns, times 1000: MB/s */
	return div64_u64((u64)HBMPOOL_DIGEST_TEST_PAGES * PAGE_SIZE * 1000,
			 max_t(u64, best, 1));
}

/*
 * Times @tfm against the library over a few pages of a fixed pattern.
 * Returns false when the library is faster or the two disagree.
 */
static bool hbmpool_digest_prefer(struct crypto_shash *tfm)
{
	struct page *pages[HBMPOOL_DIGEST_TEST_PAGES] = {};
	u32 crc_tfm, crc_lib;
	bool keep = true;	/* unmeasured (no memory): the instruction */
	unsigned int i, j;

	for (i = 0; i < HBMPOOL_DIGEST_TEST_PAGES; i++) {
		u8 *p;

		pages[i] = alloc_page(GFP_KERNEL);
		if (!pages[i]) {
			pr_info("TCP data digests by %s, not timed (no memory)\n",
				crypto_shash_driver_name(tfm));
			goto out;
		}
		p = kmap_local_page(pages[i]);
		for (j = 0; j < PAGE_SIZE; j++)
			p[j] = (u8)(i * 131 + j * 7);
		kunmap_local(p);
	}
	hbmpool_crc32c_mbps[0] = hbmpool_digest_rate(tfm, pages, &crc_tfm);
	hbmpool_crc32c_mbps[1] = hbmpool_digest_rate(NULL, pages, &crc_lib);
	if (crc_tfm != crc_lib) {
		pr_warn("TCP data digests: %s and the library disagree (%08x, %08x): using the library\n",
			crypto_shash_driver_name(tfm), crc_tfm, crc_lib);
		keep = false;
		goto out;
	}
	keep = hbmpool_crc32c_mbps[0] >= hbmpool_crc32c_mbps[1];
	pr_info("TCP data digests by %s (%s %u MB/s, lib-crc32c %u MB/s)\n",
		keep ? crypto_shash_driver_name(tfm) : "lib-crc32c",
		crypto_shash_driver_name(tfm), hbmpool_crc32c_mbps[0],
		hbmpool_crc32c_mbps[1]);
out:
	for (i = 0; i < HBMPOOL_DIGEST_TEST_PAGES && pages[i]; i++)
		__free_page(pages[i]);
	return keep;
}

int hbmpool_tcp_digest_init(void)
{
	struct crypto_shash *tfm;

	hbmpool_fold_init();
	tfm = crypto_alloc_shash("crc32c", 0, 0);

	if (IS_ERR(tfm)) {
		pr_info("no crc32c in the crypto API (%ld): TCP data digests by the library's CRC32C\n",
			PTR_ERR(tfm));
		return 0;
	}
	if (!hbmpool_digest_prefer(tfm)) {
		crypto_free_shash(tfm);
		return 0;
	}
	hbmpool_crc32c_tfm = tfm;
	return 0;
}

void hbmpool_tcp_digest_exit(void)
{
	crypto_free_shash(hbmpool_crc32c_tfm);	/* NULL is fine */
	hbmpool_crc32c_tfm = NULL;
}

/* Which CRC32C the data digests use and what each did at load, for debugfs. */
void hbmpool_tcp_digest_show(struct seq_file *m)
{
	seq_printf(m, "digest %s\n", hbmpool_crc32c_tfm ?
		   crypto_shash_driver_name(hbmpool_crc32c_tfm) : "lib-crc32c");
	if (hbmpool_crc32c_mbps[1])
		seq_printf(m, "digest_mbps crypto %u lib %u\n",
			   hbmpool_crc32c_mbps[0], hbmpool_crc32c_mbps[1]);
}
