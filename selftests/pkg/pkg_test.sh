#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian packages on a node ('make check-pkg', part of 'make check'):
# hbmpool-dkms, hbmpool-tools and hbmpoold (build/deb/, 'make deb') are
# installed with dpkg into a throwaway root -- an overlay whose lower layer is
# this machine's root and whose upper layer is a tmpfs, so that nothing
# reaches the real root -- and then:
#
#   in that root (chroot): dpkg installs them; the group hbmpool exists;
#   DKMS built and installed the module for the rig's kernel (KVER) at
#   install time and rebuilds it through the kernel's postinst hook, as for a
#   new kernel; modinfo names every parameter with its default, and
#   /etc/modprobe.d/hbmpool.conf lists every one; the tools are on PATH and
#   run; the uapi headers compile; bash completion loads; systemd-analyze
#   verify accepts the unit (and finds its man pages); man renders every
#   page without a warning;
#
#   in a VM booted on that root (selftests/pkg/pkg_guest.sh): modprobe loads
#   the DKMS-built module with an option from /etc/modprobe.d, udev gives
#   /dev/hbmpool to the group hbmpool, a member of that group (no root)
#   creates, writes and verifies a region, a user outside it is refused
#   (EACCES), and the member cannot change the domain (netlink, EPERM).
#
# TAP; exit 0 pass, 1 fail, 4 skipped (not root, no overlayfs, no packages).
# Environment: DEB_OUT (default build/deb), KVER (default the rig's kernel).
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/selftests/hbmpool/lib.sh"

debs=${DEB_OUT:-$repo/build/deb}
work=$repo/build/pkg
root=$work/root
log=$work/log
version=$(cat "$repo/VERSION")
KVER=${KVER:-$("$repo/tools/rig/kernel.sh" kver "$("$repo/tools/rig/kernel.sh" kdir)")}

[ "$(id -u)" = 0 ] || skip_all "needs root (mount, chroot, dpkg)"
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
	skip_all "no overlayfs on this kernel: no throwaway root"
grep -qw overlay /proc/filesystems || skip_all "no overlayfs on this kernel: no throwaway root"
[ -n "$KVER" ] || skip_all "no kernel headers found (make deps)"
pkgs=()
for p in hbmpool-dkms_"$version"_all hbmpool-tools_"$version"_amd64 hbmpoold_"$version"_amd64; do
	[ -f "$debs/$p.deb" ] || skip_all "$debs/$p.deb is missing: run 'make deb' first"
	pkgs+=("$debs/$p.deb")
done

mounts=()
cleanup() {
	local i
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
		umount -l "${mounts[i]}" 2>/dev/null
	done
}
trap cleanup EXIT
mnt() {	# mnt TARGET ARGS...: mount and remember it for cleanup
	local t=$1
	shift
	mount "$@" "$t" && mounts+=("$t")
}

# A leftover of an interrupted run.
for m in $(findmnt -rn -o TARGET | grep "^$work/" | sort -r); do umount -l "$m"; done
rm -rf "$work"
mkdir -p "$work/t" "$root" "$log"
mnt "$work/t" -t tmpfs -o size=4g,mode=0755 pkgtmp || skip_all "cannot mount a tmpfs"
mkdir "$work/t/upper" "$work/t/work"
mnt "$root" -t overlay -o "lowerdir=/,upperdir=$work/t/upper,workdir=$work/t/work" pkgroot ||
	skip_all "cannot mount an overlay on / (lowerdir=/)"
# The API file systems of the chroot (the VM mounts its own: they go first).
# /tmp stays the overlay's (writes go to its tmpfs layer): a tmpfs there
# would hide a checkout under /tmp, as CI's clean clone is.
root_mounts() {
	mnt "$root/proc" -t proc proc
	mnt "$root/sys" -t sysfs sys
	mnt "$root/dev" --bind /dev
	mnt "$root/run" -t tmpfs -o mode=0755 run
}
root_umounts() {
	local m
	for m in run dev sys proc; do umount "$root/$m"; done
}
root_mounts

# in_root CMD...: run CMD in the throwaway root, output to the log of this
# step (shown as TAP comments when it fails).
step=0
in_root() {
	step=$((step + 1))
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@" >"$log/$step.txt" 2>&1
	local rc=$?
	[ $rc = 0 ] || sed 's/^/# /' "$log/$step.txt" | tail -n 30
	return $rc
}
out() { cat "$log/$step.txt"; }

echo "# throwaway root $root (overlay on /, upper layer on tmpfs); kernel $KVER"

# Whatever this machine has of hbmpool already must not hide a failure.
if chroot "$root" sh -c 'command -v dkms' >/dev/null; then
	chroot "$root" dkms remove "hbmpool/$version" --all >/dev/null 2>&1
fi
rm -rf "$root/usr/src/hbmpool-$version" "$root/lib/modules/$KVER/updates/dkms/hbmpool.ko"
chroot "$root" sh -c 'getent group hbmpool >/dev/null && groupdel hbmpool' 2>/dev/null

cp "${pkgs[@]}" "$root/run/"
check "dpkg -i hbmpool-dkms hbmpool-tools hbmpoold" \
	in_root dpkg -i /run/hbmpool-dkms_"$version"_all.deb \
	/run/hbmpool-tools_"$version"_amd64.deb /run/hbmpoold_"$version"_amd64.deb
check "dpkg: all three installed and configured" in_root sh -c \
	"dpkg-query -W -f='\${db:Status-Abbrev} \${Package} \${Version}\n' hbmpool-dkms hbmpool-tools hbmpoold |
	 awk '\$1 == \"ii\" && \$3 == \"$version\" { n++ } END { exit n != 3 }'"
check "the group hbmpool exists (sysusers.d)" in_root getent group hbmpool
ko=/lib/modules/$KVER/updates/dkms/hbmpool.ko
check "DKMS built and installed hbmpool $version for $KVER at install" \
	in_root sh -c "dkms status -m hbmpool -v $version -k $KVER | grep -q ': installed' && test -f $ko"

# A new kernel: its postinst hook (what installing linux-image-* runs) has
# DKMS build the module for it.  Undoing the build for KVER first (the
# version stays added) makes KVER that new kernel.
check "dkms unbuild -k $KVER: the module is gone, hbmpool/$version stays added" \
	in_root sh -c "dkms unbuild hbmpool/$version -k $KVER && test ! -e $ko &&
		dkms status -m hbmpool -v $version | grep -q ': added'"
check "the kernel postinst hook (/etc/kernel/postinst.d/dkms $KVER) rebuilds it" \
	in_root sh -c "/etc/kernel/postinst.d/dkms $KVER && test -f $ko &&
		dkms status -m hbmpool -v $version -k $KVER | grep -q ': installed'"
check "depmod: modprobe finds hbmpool in updates/dkms for $KVER" \
	in_root sh -c "modinfo -k $KVER -n hbmpool | grep -qx $ko"

modinfo_ok() {
	in_root modinfo -k "$KVER" hbmpool || return 1
	local parms bad=0 p
	grep -q "^version: *$version\$" "$log/$step.txt" || { echo "# version is not $version"; bad=1; }
	grep -q '^description: .' "$log/$step.txt" || { echo "# no description"; bad=1; }
	grep -q '^license: *GPL' "$log/$step.txt" || { echo "# no GPL license"; bad=1; }
	parms=$(sed -n 's/^parm: *\([a-z_0-9]*\):.*/\1/p' "$log/$step.txt")
	[ -n "$parms" ] || { echo "# no parameter"; return 1; }
	while IFS= read -r l; do
		case "$l" in
		*default*) ;;
		*) echo "# no default: $l"; bad=1 ;;
		esac
	done < <(grep '^parm:' "$log/$step.txt")
	for p in $parms; do
		grep -q "^#options hbmpool $p=" "$root/etc/modprobe.d/hbmpool.conf" ||
			{ echo "# /etc/modprobe.d/hbmpool.conf does not list $p"; bad=1; }
	done
	[ $bad = 0 ]
}
check "modinfo: version $version, description, license, every parameter with a default" modinfo_ok
check "modinfo: every parameter's description gives its unit" in_root sh -c \
	"modinfo -k $KVER -F parm hbmpool | grep -vE '\\b(ms|pages|per 1024)\\b' | grep . && exit 1 || exit 0"
# The defaults in /etc/modprobe.d/hbmpool.conf are the module's.
defaults_ok() {
	local p d c bad=0
	in_root modinfo -k "$KVER" -F parm hbmpool || return 1
	while IFS= read -r l; do
		p=${l%%:*}
		d=$(sed -n 's/.*default \([0-9]*\).*/\1/p' <<<"$l")
		c=$(sed -n "s/^#options hbmpool $p=\\([0-9]*\\)\$/\\1/p" "$root/etc/modprobe.d/hbmpool.conf")
		if [ -z "$d" ] || [ "$d" != "$c" ]; then
			echo "# $p: modinfo default '$d', modprobe.d '$c'"
			bad=1
		fi
	done <"$log/$step.txt"
	[ $bad = 0 ]
}
check "/etc/modprobe.d/hbmpool.conf shows each parameter's default as modinfo does" defaults_ok

# shellcheck disable=SC2016 # expanded in the root's shell
check "hbmctl and hbmpoold are on PATH (/usr/sbin)" in_root sh -c \
	'[ "$(command -v hbmctl)" = /usr/sbin/hbmctl ] && [ "$(command -v hbmpoold)" = /usr/sbin/hbmpoold ]'
check "hbmctl --help runs" in_root hbmctl --help
check "hbmpoold refuses the example config as is (exit 78, file:line: key)" in_root sh -c \
	'hbmpoold -f -c /usr/share/doc/hbmpoold/hbmpoold.conf.example; [ $? = 78 ]'
check "the uapi headers compile (<linux/hbmpool.h>, <linux/hbmpool_nl.h>)" in_root sh -c \
	'printf "#include <linux/hbmpool.h>\n#include <linux/hbmpool_nl.h>\nint main(void) { return sizeof(struct hbmpool_region_create) == 0; }\n" |
	 gcc -std=c11 -Wall -Werror -x c -o /run/uapi - && /run/uapi'
check "bash completion of hbmctl loads" in_root bash -c \
	'. /usr/share/bash-completion/completions/hbmctl && complete -p hbmctl'
# shellcheck disable=SC2016 # expanded in the root's shell
check "systemd-analyze verify accepts hbmpoold.service (with its man pages)" in_root sh -c \
	'out=$(systemd-analyze verify --man=yes /lib/systemd/system/hbmpoold.service 2>&1); rc=$?
	 [ -n "$out" ] && echo "$out"; [ $rc = 0 ] && [ -z "$out" ]'
# shellcheck disable=SC2016 # expanded in the root's shell
check "the unit is installed disabled" in_root sh -c \
	'[ "$(systemctl is-enabled hbmpoold.service 2>/dev/null)" = disabled ]'
man_ok() {
	local page=$1 file
	in_root man -w "$page" || return 1
	file=$(out)
	in_root sh -c "LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z $file >/run/man.out && test -s /run/man.out"
}
check "man renders hbmctl(8) without a warning" man_ok hbmctl
check "man renders hbmpoold(8) without a warning" man_ok hbmpoold
check "man renders hbmpoold.conf(5) without a warning" man_ok hbmpoold.conf

# The users of the guest test: a member of hbmpool and a stranger.
check "users: hbmuser in the group hbmpool, hbmother not" in_root sh -c \
	'useradd -M -G hbmpool hbmuser && useradd -M hbmother'
# An operator's option: the guest checks that modprobe applied it.
check "an option set in /etc/modprobe.d/hbmpool.conf" \
	sed -i 's/^#options hbmpool cache_pages=16384$/options hbmpool cache_pages=4096/' \
	"$root/etc/modprobe.d/hbmpool.conf"

# The guest's data checker, built here (the guest sees it through the root).
rio=$repo/build/rig/regionio
"$repo/selftests/multi/build-regionio.sh" "$rio" || echo "# cannot build $rio"

# The VM: the throwaway root is its root (the chroot's /proc, /sys, ... are
# unmounted first: the guest mounts its own).
root_umounts
vmout=$work/vm.txt
rc=0
RIG_HOSTROOT=$root "$repo/tools/rig/vm.sh" -i pkg -q -t "${RIG_TIMEOUT:-600}" \
	-e "PKG_VERSION=$version" -e "REGIONIO=$rio" -e "PKG_TAP_BASE=$n" \
	-- selftests/pkg/pkg_guest.sh >/dev/null 2>&1 || rc=$?
tr -d '\r' <"$repo/build/rig/out-pkg/console.log" | grep -E '^(not )?ok |^# ' |
	grep -v '^# rig' >"$vmout"
cat "$vmout"
got=$(grep -cE '^(not )?ok ' "$vmout")
n=$((n + got))
fails=$((fails + $(grep -c '^not ok ' "$vmout")))
if [ "$rc" != 0 ] && [ "$(grep -c '^not ok ' "$vmout")" = 0 ]; then
	nok "the VM ended with status $rc (build/rig/out-pkg/console.log)"
fi
"$repo/tools/rig/klog-check.sh" "$repo/build/rig/out-pkg/dmesg.txt" >/dev/null 2>&1 ||
	nok "the guest kernel log shows a bug (build/rig/out-pkg/dmesg.txt)"

# Back in the root: removal, then the checkout's own 'make dkms' and
# 'make install' (what a developer does on a node without the packages).
root_mounts
check "dpkg --purge hbmpool-dkms: DKMS removes the module and its sources" in_root sh -c \
	"dpkg --purge hbmpool-dkms && test ! -e $ko && test ! -e /usr/src/hbmpool-$version &&
	 test ! -e /etc/modprobe.d/hbmpool.conf && ! dkms status -m hbmpool | grep -q ."
check "make dkms (the checkout) builds and installs hbmpool $version for $KVER" in_root sh -c \
	"make -C $repo --no-print-directory dkms && test -f $ko &&
	 dkms status -m hbmpool -v $version -k $KVER | grep -q ': installed' &&
	 modinfo -k $KVER -F version hbmpool | grep -qx $version"
check "make dkms-remove undoes it" in_root sh -c \
	"make -C $repo --no-print-directory dkms-remove && test ! -e $ko &&
	 test ! -e /usr/src/hbmpool-$version && ! dkms status -m hbmpool | grep -q ."
stage=/run/stage
want="usr/local/sbin/hbmctl usr/local/sbin/hbmpoold usr/local/share/man/man8/hbmctl.8
usr/local/share/man/man8/hbmpoold.8 usr/local/share/man/man5/hbmpoold.conf.5
usr/local/share/bash-completion/completions/hbmctl usr/local/include/linux/hbmpool.h
usr/local/include/linux/hbmpool_nl.h usr/local/share/doc/hbmpool/hbmpoold.conf.example
usr/local/lib/systemd/system/hbmpoold.service usr/local/lib/udev/rules.d/60-hbmpool.rules
usr/local/lib/sysusers.d/hbmpool.conf etc/modprobe.d/hbmpool.conf
usr/src/hbmpool-$version/dkms.conf usr/src/hbmpool-$version/Kbuild
usr/src/hbmpool-$version/kmod/Kbuild usr/src/hbmpool-$version/kmod/main.c
usr/src/hbmpool-$version/uapi/linux/hbmpool.h"
# shellcheck disable=SC2016 # expanded in the root's shell
check "make install DESTDIR=$stage: every file, the unit's ExecStart in PREFIX" in_root sh -c \
	"make -C $repo --no-print-directory install DESTDIR=$stage >/dev/null &&
	 for f in \$(echo '$want'); do test -f $stage/\$f || { echo missing \$f; exit 1; }; done &&
	 grep -q '^ExecStart=/usr/local/sbin/hbmpoold ' $stage/usr/local/lib/systemd/system/hbmpoold.service &&
	 grep -qx 'PACKAGE_VERSION=\"$version\"' $stage/usr/src/hbmpool-$version/dkms.conf"

echo "1..$n"
echo "# $((n - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
