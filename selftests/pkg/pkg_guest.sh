#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of pkg_test.sh: runs in a VM whose root is the throwaway
# root the packages were installed into (never on its own).  udev as on a
# node (systemd-udevd), then modprobe, the device's group and mode, a region
# created by a member of the group hbmpool, refusals of the others.  TAP
# results numbered from PKG_TAP_BASE + 1.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/selftests/hbmpool/lib.sh"
n=${PKG_TAP_BASE:-0}
version=${PKG_VERSION:?}
rio=${REGIONIO:?}

[ -f /var/lib/dpkg/info/hbmpool-dkms.list ] ||
	skip_all "this root has no hbmpool-dkms: run pkg_test.sh, not this script"

run() {	# run CMD...: its output as TAP comments
	local out rc=0
	out=$("$@" 2>&1) || rc=$?
	[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/# /'
	return $rc
}
as() {	# as USER CMD...: CMD as USER with USER's groups, no capability
	local u=$1
	shift
	setpriv --reuid="$u" --regid="$u" --init-groups --inh-caps=-all --bounding-set=-all "$@"
}
hold=
cleanup() {	# the holder is setpriv's child: kill it by its pidfile
	[ -s /tmp/hold.pid ] && kill "$(cat /tmp/hold.pid)" 2>/dev/null
	[ -n "$hold" ] && wait "$hold" 2>/dev/null
	rm -f /tmp/hold.pid
	hold=
}
trap cleanup EXIT

check "systemd-udevd runs" run /lib/systemd/systemd-udevd --daemon
check "modprobe hbmpool" run modprobe hbmpool
check "the module loaded is DKMS's, version $version" sh -c \
	"[ \"\$(cat /sys/module/hbmpool/version)\" = $version ] &&
	 modinfo -n hbmpool | grep -q /updates/dkms/hbmpool.ko"
check "modprobe applied /etc/modprobe.d/hbmpool.conf (cache_pages=4096)" \
	grep -qx 4096 /sys/module/hbmpool/parameters/cache_pages
# udevadm settle does nothing here (the rig's root is a chroot, and udevadm
# knows it): wait for udevd's change of the group, at most 30 s.
dev_owned() {
	local st=
	for _ in $(seq 300); do
		st=$(stat -c '%U:%G %a' /dev/hbmpool 2>/dev/null)
		[ "$st" = "root:hbmpool 660" ] && break
		sleep 0.1
	done
	echo "# /dev/hbmpool: ${st:-missing}"
	[ "$st" = "root:hbmpool 660" ]
}
check "udev: /dev/hbmpool is root:hbmpool, mode 0660" dev_owned

for k in 2 3; do
	check "root: sim node $k" run hbmctl node add $k capacity 64M distance 20 transport sim
done

# A member of hbmpool, no root, no capability: a shared region of 8 MiB on
# nodes 2 and 3, written and read back (regionio's pattern, every page).
as hbmuser "$rio" create --name pkg --size 8M --chunk 2M --nodes 2,3 --hold \
	--pidfile /tmp/hold.pid >/tmp/hold.out 2>&1 &
hold=$!
for _ in $(seq 100); do grep -q holding /tmp/hold.out && break; sleep 0.1; done
sed 's/^/# /' /tmp/hold.out
check "hbmuser (group hbmpool, no capability) creates a region" grep -q holding /tmp/hold.out
check "hbmuser writes every page of it" run as hbmuser "$rio" write --name pkg --seed 11
check "hbmuser reads every page back" run as hbmuser "$rio" verify --name pkg --seed 11
shows_region() { as hbmuser hbmctl region show >/tmp/show.out 2>&1; sed 's/^/# /' /tmp/show.out; grep -qw pkg /tmp/show.out; }
check "hbmuser: hbmctl region show (netlink, read only) lists it" shows_region
cleanup

refused() {	# refused USER ERRTEXT CMD...: CMD as USER fails, saying ERRTEXT
	local u=$1 e=$2 out
	shift 2
	if out=$(as "$u" "$@" 2>&1); then
		printf '%s\n' "$out" | sed 's/^/# /'
		echo "# succeeded"
		return 1
	fi
	printf '%s\n' "$out" | sed 's/^/# /'
	grep -qi "$e" <<<"$out"
}
check "hbmother (not in hbmpool) cannot create a region: permission denied" \
	refused hbmother 'permission denied' "$rio" create --name other --size 2M --nodes 2
check "hbmuser cannot change the domain: hbmctl node add is refused (EPERM)" \
	refused hbmuser 'not permitted' hbmctl node add 4 capacity 64M distance 20 transport sim
no_node4() {
	hbmctl node show >/tmp/nodes.out 2>&1 || return 1
	sed 's/^/# /' /tmp/nodes.out
	grep -qw 2 /tmp/nodes.out && ! grep -qE '^ *(node )?4\b' /tmp/nodes.out
}
check "no node 4 was added (node show lists 2, not 4)" no_node4

for k in 2 3; do run hbmctl node del $k; done
check "modprobe -r hbmpool" run modprobe -r hbmpool
echo "1..$n"
[ "$fails" -eq 0 ]
