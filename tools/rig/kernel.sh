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

case "${1:-}" in
kdir) kdir ;;
kver)
	if [ $# -ge 2 ]; then kver "$2"; else kver "$(kdir)"; fi ;;
*)
	echo "usage: $0 kdir | kver [KDIR]" >&2
	exit 2 ;;
esac
