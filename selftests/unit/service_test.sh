#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# daemon/hbmpoold.service through 'systemd-analyze verify', with ExecStart
# pointed at the daemon just built (daemon/hbmpoold), and its hardening
# checked to be there.  Skipped (exit 4) without systemd-analyze.  TAP
# output, "N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
unit=$top/daemon/hbmpoold.service
bin=$top/daemon/hbmpoold
n=0 fail=0

ok() {	# ok STATUS TEXT
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fail=$((fail + 1))
	fi
}

finish() {
	echo "1..$n"
	echo "$((n - fail)) passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit $?
}

for want in Type=notify WatchdogSec= NotifyAccess=main CapabilityBoundingSet=CAP_NET_ADMIN \
	    NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes \
	    "RestrictAddressFamilies=AF_UNIX AF_NETLINK AF_INET AF_INET6" \
	    RestartPreventExitStatus=78; do
	grep -q "^$want" "$unit"
	ok $? "hbmpoold.service has $want"
done

if ! command -v systemd-analyze >/dev/null; then
	echo "# SKIP systemd-analyze verify: systemd-analyze not found (package systemd)"
	echo "1..$n"
	echo "$((n - fail)) passed, $fail failed"
	[ "$fail" -eq 0 ] || exit 1
	exit 4
fi
if [ ! -x "$bin" ]; then
	ok 1 "$bin is built (make -C daemon)"
	finish
fi
tmp=$(mktemp -d /tmp/service_test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
sed "s|^ExecStart=/usr/local/sbin/hbmpoold|ExecStart=$bin|" "$unit" > "$tmp/hbmpoold.service"
out=$(systemd-analyze verify --man=no "$tmp/hbmpoold.service" 2>&1)
rc=$?
[ -n "$out" ] && while IFS= read -r l; do echo "# $l"; done <<< "$out"
[ "$rc" -eq 0 ] && [ -z "$out" ]
ok $? "systemd-analyze verify: no error, no warning"

# A unit that is wrong must fail, or the check above proves nothing.
mkdir "$tmp/bad"
sed 's/^Type=notify/Type=notifyy/' "$tmp/hbmpoold.service" > "$tmp/bad/hbmpoold.service"
out=$(systemd-analyze verify --man=no "$tmp/bad/hbmpoold.service" 2>&1)
echo "$out" | grep -q "notifyy"
ok $? "systemd-analyze verify reports a bad Type= (the check can fail)"
finish
