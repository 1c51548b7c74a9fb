#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side helpers of the multi-VM tests (tcp_test.sh, shm_test.sh,
# replica_test.sh), sourced after selftests/hbmpool/lib.sh.  The caller sets
# rig (tools/rig), H (hbmctl's path in the guests), n (the TAP counter of
# lib.sh), t0 (SECONDS at the start, for stamp) and, for links and
# wait_links, the JSON member names J_HEALTH, J_OPER and J_NODE.
# shellcheck shell=bash disable=SC2154

ctl() { "$rig/multi-ctl.sh" "$@"; }
# check DESCRIPTION COMMAND...: lib.sh's check, then how long COMMAND took
# when that was 5 s or more ("#   (12 s)"), so that a run shows where its
# time goes.
check() {
	local d=$1 s=$SECONDS
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
	[ $((SECONDS - s)) -lt 5 ] || echo "#   ($((SECONDS - s)) s)"
}
# gx [-t SECS] K CMD: run CMD in VM K; its output as TAP comments.
gx() {
	local t=120
	if [ "$1" = -t ]; then t=$2; shift 2; fi
	local out rc=0
	out=$(ctl exec -t "$t" "$@" 2>&1) || rc=$?
	[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/# /'
	return $rc
}
# q [-t SECS] K CMD: CMD's stdout in VM K (stderr dropped), for parsing.
q() {
	local t=60
	if [ "$1" = -t ]; then t=$2; shift 2; fi
	ctl exec -t "$t" "$1" "$2 2>/dev/null" 2>/dev/null
}
bail() { echo "Bail out! $*"; echo "1..$n"; exit 1; }
stamp() { echo "# [$((SECONDS - t0))s] $*"; }
gt() { [ "$1" -gt "$2" ] 2>/dev/null; }
# jval KEYS: the member KEYS of the JSON on stdin (the first element of an
# array, then nested objects), printed; 1 if absent or no JSON.
jval() {
	/usr/bin/python3 -c '
import json, sys
keys = sys.argv[1].split("|")
try:
    d = json.loads(sys.stdin.read())
except ValueError:
    sys.exit(1)
if isinstance(d, list):
    d = d[0] if d else {}
def find(o):
    if isinstance(o, dict):
        for k in keys:
            if k in o:
                return o[k]
        for v in o.values():
            r = find(v)
            if r is not None:
                return r
    elif isinstance(o, list):
        for v in o:
            r = find(v)
            if r is not None:
                return r
    return None
v = find(d)
if v is None:
    sys.exit(1)
print(str(v).lower() if isinstance(v, bool) else v)
' "$1"
}
# hj K KEYS ARGS...: member KEYS of "hbmctl -j ARGS" in VM K.
hj() {
	local k=$1 keys=$2
	shift 2
	q "$k" "$H -j $*" | jval "$keys"
}
# counter K KEYS ARGS...: a numeric member, or -1.
counter() {
	local v
	v=$(hj "$@") && [[ "$v" =~ ^[0-9]+$ ]] && echo "$v" || echo -1
}
# klog_clean K: VM K's kernel log so far passes tools/rig/klog-check.sh.
klog_clean() { gx "$1" "dmesg >/tmp/dmesg.now && $rig/klog-check.sh /tmp/dmesg.now"; }
# links K: "NODE HEALTH" for every link of VM K (one hbmctl call).
links() {
	q "$1" "$H -j link show" | /usr/bin/python3 -c '
import json, sys
hk, ok, nk = (s.split("|") for s in sys.argv[1:4])
try:
    d = json.load(sys.stdin)
except ValueError:
    sys.exit(1)
for l in d if isinstance(d, list) else [d]:
    node = next((l[k] for k in nk if k in l), "?")
    h = next((l[k] for k in hk if k in l), None)
    if h is None:
        h = next((l[k] for k in ok if k in l), "?")
        h = "live" if h == "up" else h
    print(node, h)
' "$J_HEALTH" "$J_OPER" "$J_NODE"
}
# wait_links SECS WANT_REGEX K:J...: every link K->J has a health matching
# WANT_REGEX within SECS (one deadline for all); one hbmctl call per VM and
# round.  On a timeout, the links and last kernel messages of each VM with
# a link left behind, as comments.
wait_links() {
	local secs=$1 re=$2 end=$((SECONDS + $1)) p k h pending
	shift 2
	local -A seen
	while :; do
		seen=()
		pending=""
		for p in "$@"; do
			k=${p%:*}
			if [ -z "${seen[$k]+x}" ]; then
				seen[$k]=$(links "$k" | tr '\n' ',')
			fi
			h=$(tr ',' '\n' <<<"${seen[$k]}" | sed -n "s/^${p#*:} //p")
			[[ "${h:-?}" =~ ^($re)$ ]] || pending="$pending VM$k->${p#*:}=${h:-?}"
		done
		[ -z "$pending" ] && { stamp "links $* are $re"; return 0; }
		if [ $SECONDS -ge $end ]; then
			echo "# after ${secs}s:$pending"
			for k in "${!seen[@]}"; do
				[[ "$pending" == *" VM$k->"* ]] || continue
				echo "# VM$k:"
				q "$k" "$H link show; dmesg | grep hbmpool | tail -n 30" | sed 's/^/#   /'
			done
			return 1
		fi
		sleep 1
	done
}
