#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install every Debian 12 package needed to build, lint, run the rig and the
# tests (called by 'make deps').  Non-interactive and idempotent: when all the
# packages are installed already it touches neither apt nor the network.
#
# It also makes sure the kernel the rig boots matches the headers the module
# is built against: /boot/vmlinuz-KVER must exist for KVER = the release of
# KDIR (see kernel.sh); if not, linux-image-KVER is installed.
#
# Extra packages: make deps DEPS_EXTRA="pkg ..."
set -euo pipefail
RIG_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

PKGS=(
	# kernel to build against and to boot, kernel sources for the kselftest
	# harness and checkpatch
	linux-image-amd64 linux-headers-amd64 linux-source-6.1
	# toolchain
	gcc make libc6-dev pkg-config kmod perl python3 xz-utils
	# userspace libraries of tools/ and selftests/ (libnl: the netlink
	# family; json-c: hbmctl -j; liburing: io_uring tests)
	libnl-3-dev libnl-genl-3-dev libjson-c-dev liburing-dev
	# the kernel's ynl netlink tools (linux-source-6.12 has them, 6.1 not),
	# which check the netlink spec against the running kernel
	linux-source-6.12 python3-yaml python3-jsonschema
	# lint
	sparse shellcheck
	# rig (iperf3: the baseline of make bench-tcp)
	qemu-system-x86 busybox-static cpio gzip coreutils util-linux iperf3
	# hbmpoold (daemon/): etcd (its client's unit test starts one on
	# 127.0.0.1), libcurl for etcd's JSON gateway, inih for the config;
	# libsystemd (sd_notify) and libmicrohttpd (the metrics endpoint)
	etcd-server libcurl4-openssl-dev libinih-dev libsystemd-dev libmicrohttpd-dev
	# packages (make deb, make check-pkg): debhelper with dh-dkms, lintian;
	# dkms, man and udev in the throwaway root the packages are tested in
	debhelper dh-dkms dkms lintian man-db groff-base udev systemd
)
# shellcheck disable=SC2206 # a list of words by design
PKGS+=(${DEPS_EXTRA:-})

missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	[ "${st:0:2}" = ii ] || missing+=("$p")
done

apt_install() {
	if [ "$(id -u)" != 0 ]; then
		echo "deps: need root to install: $*" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	if [ "${updated:-0}" = 0 ]; then
		apt-get update -q
		updated=1
	fi
	apt-get install -y -q --no-install-recommends "$@" </dev/null
}

if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	apt_install "${missing[@]}"
fi

kdir=$("$RIG_DIR/kernel.sh" kdir)
if [ -z "$kdir" ] || [ ! -d "$kdir" ]; then
	echo "deps: no kernel headers found (KDIR=${KDIR:-})" >&2
	exit 1
fi
kver=$("$RIG_DIR/kernel.sh" kver "$kdir")
if [ ! -r "/boot/vmlinuz-$kver" ] || [ ! -r "/lib/modules/$kver/modules.dep" ]; then
	echo "deps: headers are $kver but /boot/vmlinuz-$kver is missing: installing linux-image-$kver"
	apt_install "linux-image-$kver"
fi
echo "deps: ok (kernel $kver, headers $kdir)"
