/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What kmod/wire.h and kmod/wire.c need of the kernel, for their user-space
 * unit test (wire_unit.c).  Little-endian hosts only, as the
 * rig's.
 */
#ifndef _HBMPOOL_WIRE_USER_H
#define _HBMPOOL_WIRE_USER_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/types.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "wire_user.h: little-endian hosts only"
#endif

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

#define cpu_to_le16(x)	((__force __le16)(u16)(x))
#define cpu_to_le32(x)	((__force __le32)(u32)(x))
#define cpu_to_le64(x)	((__force __le64)(u64)(x))
#define le16_to_cpu(x)	((__force u16)(__le16)(x))
#define le32_to_cpu(x)	((__force u32)(__le32)(x))
#define le64_to_cpu(x)	((__force u64)(__le64)(x))

#ifndef __force
#define __force
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#endif /* _HBMPOOL_WIRE_USER_H */
