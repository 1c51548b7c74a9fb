/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Standard base64 (RFC 4648, "+/" and "=" padding), as etcd's JSON gateway
 * carries keys and values.
 */
#ifndef HBMPOOLD_BASE64_H
#define HBMPOOLD_BASE64_H

#include <stddef.h>

/* The encoding of len bytes, NUL-terminated (malloc'ed); NULL if no memory. */
char *hbm_b64_encode(const void *data, size_t len);

/*
 * Decode the NUL-terminated s into a malloc'ed buffer (NUL-terminated too,
 * the NUL not counted in *len).  Returns 0, -EINVAL if s is not base64
 * (bad character, bad length or padding), -ENOMEM.
 */
int hbm_b64_decode(const char *s, char **out, size_t *len);

#endif /* HBMPOOLD_BASE64_H */
