#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Which kernel do we build against and boot?  One place for the rule, used by
# the Makefile and by the rig scripts.
#
#   kernel.sh kdir         print KDIR: $KDIR if set, else /lib/modules/$(uname -r)/build
#                          if it exists, else the newest /usr/src/linux-headers-*-amd64
#   kernel.sh kver [KDIR]  print the kernel release of KDIR (e.g. 6.1.0-56-amd64);
#                          the rig boots /boot/vmlinuz-KVER with /lib/modules/KVER
#   kernel.sh imgver IMAGE print the release of an x86 bzImage (for RIG_KERNEL)
set -euo pipefail

kdir() {
	if [ -n "${KDIR:-}" ]; then
		printf '%s\n' "$KDIR"
		return
	fi
	local d
	d="/lib/modules/$(uname -r)/build"
	if [ -d "$d" ]; then
		printf '%s\n' "$d"
		return
	fi
	# Newest Debian amd64 headers; empty output if there are none.
	find /usr/src -maxdepth 1 -name 'linux-headers-*-amd64' -type d 2>/dev/null |
		sort -V | tail -n 1
}

kver() {
	local d=$1 v=""
	[ -n "$d" ] || return 0
	# Debian's headers have include/config/kernel.release = upstream version
	# (6.1.x); the real release string is in utsrelease.h.
	if [ -r "$d/include/generated/utsrelease.h" ]; then
		v=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$d/include/generated/utsrelease.h")
	fi
	if [ -z "$v" ]; then
		v=$(basename "$(readlink -f "$d")")
		v=${v#linux-headers-}
	fi
	printf '%s\n' "$v"
}

# The x86 boot protocol: the 16-bit word at 0x20e is the offset, minus 0x200,
# of a NUL-terminated "RELEASE (builder) #N ..." string.
imgver() {
	local img=$1 off
	off=$(od -An -tu2 -j 526 -N 2 "$img" | tr -d ' ')
	[ -n "$off" ] || return 0
	dd if="$img" bs=1 skip=$((off + 512)) count=256 2>/dev/null |
		tr '\0' '\n' | head -n 1 | cut -d' ' -f1
}

case "${1:-}" in
kdir) kdir ;;
imgver)
	[ $# -ge 2 ] || { echo "usage: $0 imgver IMAGE" >&2; exit 2; }
	imgver "$2" ;;
kver)
	if [ $# -ge 2 ]; then kver "$2"; else kver "$(kdir)"; fi ;;
*)
	echo "usage: $0 kdir | kver [KDIR] | imgver IMAGE" >&2
	exit 2 ;;
esac
