#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# THEORY OF OPERATION
# The hbmpool generic netlink family, driven by the kernel's own ynl CLI
# (build/ynl, extracted from Debian's linux-source-6.12 by 'make ynl') with
# the project's spec: the spec, the uapi header and the running kernel's
# operations and policies agree (tools/netlink/check-spec.py --kernel);
# params get and set agree with sysfs; a value out of range, an empty set, a
# missing or unknown node and an unprivileged set are refused with the
# documented errno and an extack message; stats and node dumps carry what
# sysfs shows.  The monitor group: a listener sees one event per change,
# whatever made it (ynl, hbmctl, the transport), in order, with
# consecutive sequence numbers, also when several writers race; a get
# reports the sequence number its values reflect.
# TAP output; exit 0 pass, 1 fail, 4 skip.
set -u

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
top=$here/../..
ynl=$top/build/ynl
spec=$top/Documentation/netlink/specs/hbmpool.yaml
py=/usr/bin/python3
hbmctl=$top/tools/hbmctl/hbmctl
sys=/sys/kernel/hbmpool
node=46
timeout0=
mon=

cleanup() {
	[ -n "$mon" ] && kill "$mon" 2>/dev/null
	[ -n "$timeout0" ] && "$hbmctl" params set fetch-timeout-ms "$timeout0"
	[ -d $sys/nodes/node$node ] && "$hbmctl" node del $node
	rm -f "${out:-}" "${events:-}" "${ready:-}"
}

# nl ARGS...: the ynl CLI on the hbmpool spec; output in $out, status returned.
# The spec is validated against genetlink.yaml once (the first check), not
# on every call: that validation is most of a call's time in a TCG guest.
# The CLI reads the spec with yaml.safe_load(), PyYAML's pure-Python parser,
# a tenth of the C one's speed (libyaml): $ynl_run has it use the C one.
ynl_run='import runpy, sys, yaml
yaml.safe_load = lambda stream: yaml.load(stream, Loader=yaml.CSafeLoader)
sys.argv = sys.argv[1:]
sys.path.insert(0, sys.argv[0].rsplit("/", 1)[0])
runpy.run_path(sys.argv[0], run_name="__main__")'
nl() {
	"$py" -c "$ynl_run" "$ynl/tools/net/ynl/cli.py" --spec "$spec" --no-schema \
		--output-json "$@" >"$out" 2>&1
}
# has PATTERN: the last output matches
has() { grep -q -- "$1" "$out"; }
# refused ERRNO_TEXT EXTACK_TEXT ARGS...: nl fails, naming both
refused() {
	local e=$1 x=$2
	shift 2
	! nl "$@" && has "$e" && has "$x"
}
# json EXPR: a Python expression over the last output, parsed as JSON (j)
json() { "$py" -c "import json, sys; j = json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" "$out"; }

[ "$(id -u)" = 0 ] || skip_all "needs root"
[ -d $sys ] || skip_all "hbmpool.ko is not loaded"
[ -r "$ynl/tools/net/ynl/cli.py" ] || skip_all "no ynl in $ynl (make ynl)"
"$py" -c 'import yaml, jsonschema' 2>/dev/null || skip_all "python3-yaml or python3-jsonschema missing (make deps)"
[ -x "$hbmctl" ] || skip_all "tools/hbmctl/hbmctl not built (make tools)"
out=$(mktemp)
trap cleanup EXIT
echo "1..26"

check "the spec is valid against the kernel's genetlink schema" \
	"$py" -c 'import sys, yaml, jsonschema; jsonschema.validate(yaml.safe_load(open(sys.argv[1])), yaml.safe_load(open(sys.argv[2])))' \
	"$spec" "$ynl/Documentation/netlink/genetlink.yaml"

check "spec, uapi header and kernel agree (operations, flags, policies)" \
	"$py" "$top/tools/netlink/check-spec.py" --spec "$spec" \
	--header "$top/uapi/linux/hbmpool_nl.h" --kernel --ynl "$ynl"

timeout0=$(cat $sys/fetch_timeout_ms)
budget=$(cat $sys/cache_budget_pages)
nl --do params-get
check "params-get: what sysfs shows" \
	json "j['cache-budget-pages'] == $budget and j['fetch-timeout-ms'] == $timeout0"
nl --do params-set --json '{"fetch-timeout-ms": 1234}'
check "params-set: sysfs follows" [ "$(cat $sys/fetch_timeout_ms)" = 1234 ]
check "params-set: out of range is ERANGE, naming the attribute" \
	refused "Numerical result out of range" "fetch-timeout-ms" \
	--do params-set --json '{"fetch-timeout-ms": 5}'
check "params-set: the value stays" [ "$(cat $sys/fetch_timeout_ms)" = 1234 ]
check "params-set: nothing to set is EINVAL with a message" \
	refused "Invalid argument" "no parameter to set" --do params-set --json '{}'
if command -v setpriv >/dev/null; then
	if setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$py" "$ynl/tools/net/ynl/cli.py" --spec "$spec" --no-schema \
		--do params-set --json '{"fetch-timeout-ms": 999}' >"$out" 2>&1; then
		nok "params-set: an unprivileged caller gets EPERM (it succeeded)"
	else
		check "params-set: an unprivileged caller gets EPERM" has "Operation not permitted"
	fi
	check "params-set: ...and changes nothing" [ "$(cat $sys/fetch_timeout_ms)" = 1234 ]
else
	ok "# SKIP no setpriv"
	ok "# SKIP no setpriv"
fi

nl --do stats-get
check "stats-get: counters and a 32-bucket histogram" \
	json "'faults' in j and 'cached-pages' in j and len(j['lat-hist']) == 32"

"$hbmctl" node add $node capacity 8M distance 25 link scaleout
nl --dump node-get
check "node-get dump: node 0 and the new node, with their attributes" \
	json "any(n['id'] == 0 and n['transport'] == 'local' for n in j) and any(n['id'] == $node and n['transport'] == 'sim' and n['distance'] == 25 and n['link-type'] == 'scaleout' and n['state'] == 'live' and n['capacity'] == 8 << 20 and n['free'] == 8 << 20 and 'faults' in n['stats'] for n in j)"
nl --do node-get --json "{\"id\": $node}"
check "node-get do: the node" json "j['id'] == $node and j['free'] == $(cat $sys/nodes/node$node/free_bytes)"
check "node-get do: an absent node is ENODEV, named" \
	refused "No such device" "no such node" --do node-get --json '{"id": 62}'
check "node-get do: an id above the maximum is ERANGE" \
	refused "Numerical result out of range" "id" --do node-get --json '{"id": 1024}'
check "node-get do: without an id, EINVAL naming the missing attribute" \
	refused "Invalid argument" "id" --do node-get --json '{}'

# node-new / node-del
nl --do node-new --json '{"id": 48, "capacity": 8388608, "distance": 30, "link-type": "scaleacross"}'
check "node-new: the node exists with its attributes" \
	[ "$(cat $sys/nodes/node48/link_type) $(cat $sys/nodes/node48/capacity_bytes) $(cat $sys/nodes/node48/transport)" = "scaleacross 8388608 sim" ]
check "node-new: an existing id is EEXIST with a message" \
	refused "File exists" "a node of that id exists" \
	--do node-new --json '{"id": 48, "capacity": 8388608, "distance": 30}'
check "node-new: this node's own id (0) is EINVAL" \
	refused "Invalid argument" "that id is this node's own" \
	--do node-new --json '{"id": 0, "capacity": 8388608, "distance": 30}'
check "node-new: without a capacity, EINVAL naming it" \
	refused "Invalid argument" "capacity" --do node-new --json '{"id": 49, "distance": 30}'
check "node-new: an unknown transport is ENOENT" \
	refused "No such file or directory" "no such transport" \
	--do node-new --json '{"id": 49, "capacity": 8388608, "distance": 30, "transport": "rdma"}'
nl --do node-del --json '{"id": 48}'
check "node-del: the node is gone" [ ! -e $sys/nodes/node48 ]
check "node-del: an absent node is ENODEV" \
	refused "No such device" "no such node" --do node-del --json '{"id": 48}'

# monitor: subscribe, then change things by every path; a last change to a
# sentinel value ends the listener
events=$(mktemp)
ready=$events.ready
"$py" - "$ynl" "$spec" "$events" "$ready" <<'PYEOF' &
import json, sys, time, yaml
ynl, spec, out, ready = sys.argv[1:5]
yaml.safe_load = lambda stream: yaml.load(stream, Loader=yaml.CSafeLoader)
sys.path.insert(0, ynl + "/tools/net/ynl")
from lib import YnlFamily
y = YnlFamily(spec, "")
y.ntf_subscribe("monitor")
open(ready, "w").close()
ev, deadline = [], time.time() + 120
while time.time() < deadline:
    y.check_ntf()
    while y.async_msg_queue:
        ev.append(y.async_msg_queue.pop(0))
    if ev and ev[-1]["msg"].get("fetch-timeout-ms") == 4321:
        break
    time.sleep(0.05)
json.dump(ev, open(out, "w"))
PYEOF
mon=$!
for _ in $(seq 600); do
	[ -e "$ready" ] && break
	sleep 0.1
done
nl --do params-get
seq0=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["seq"])' "$out")
"$hbmctl" params set fetch-timeout-ms "3000"
nl --do params-set --json '{"fetch-timeout-ms": 3001}'
nl --do node-new --json "{\"id\": $((node + 1)), \"capacity\": 4194304, \"distance\": 20}"
echo 1 >/sys/kernel/debug/hbmpool/node$((node + 1))/link_down
echo 0 >/sys/kernel/debug/hbmpool/node$((node + 1))/link_down
nl --do node-del --json "{\"id\": $((node + 1))}"
writers=()
for w in 1 2 3 4; do
	( for i in $(seq 10); do "$hbmctl" params set fetch-timeout-ms "$((2000 + w * 100 + i))"; done ) &
	writers+=($!)
done
wait "${writers[@]}"
"$hbmctl" params set fetch-timeout-ms "4321"
wait "$mon"
mon=
rm -f "$ready"
nl --do params-get
# the events, in order: (name, seq, node id or None, state or None)
check "monitor: one event per change, in order, none missing" \
	"$py" - "$events" "${seq0:-x}" "$((node + 1))" <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))
seq0, nid = int(sys.argv[2]), int(sys.argv[3])
names = [e["name"] for e in ev]
# every membership change is followed by the domain's new generation; a
# link going down or up changes the node (its state) and the link
dom = "domain-change-ntf"
want = (["params-change-ntf"] * 2 +
        ["node-add-ntf", dom, "node-change-ntf", dom, "link-change-ntf",
         "node-change-ntf", dom, "link-change-ntf", "node-del-ntf", dom] +
        ["params-change-ntf"] * 41)
if names != want:
    sys.exit(f"events {names} != {want}")
seqs = [e["msg"]["seq"] for e in ev]
if seqs != list(range(seq0 + 1, seq0 + 1 + len(want))):
    sys.exit(f"sequence numbers {seqs} are not {seq0 + 1}..")
nev = [e for e in ev if e["name"].startswith("node-")]
states = [e["msg"].get("state") for e in nev]
if states != ["live", "unreachable", "live", "removed"] or any(e["msg"]["id"] != nid for e in nev):
    sys.exit(f"node events {nev}")
lev = [e["msg"]["oper-state"] for e in ev if e["name"] == "link-change-ntf"]
if lev != ["down", "up"]:
    sys.exit(f"link events {lev}")
gens = [e["msg"]["generation"] for e in ev if e["name"] == dom]
if gens != list(range(gens[0], gens[0] + 4)):
    sys.exit(f"domain generations {gens}")
if ev[1]["msg"]["fetch-timeout-ms"] != 3001:
    sys.exit(f"params event {ev[1]}")
PYEOF
check "monitor: a get reflects the last event's sequence number" \
	json "j['seq'] == ${seq0:-0} + 53"
check "monitor: the values of the last event are the current ones" \
	"$py" -c 'import json,sys; e=json.load(open(sys.argv[1]))[-1]["msg"]; sys.exit(e["fetch-timeout-ms"] != int(open("/sys/kernel/hbmpool/fetch_timeout_ms").read()))' "$events"
nl --dump node-get
check "node-get dump: every node carries the sequence number it reflects" \
	json "all(n['seq'] == ${seq0:-0} + 53 for n in j)"

[ "$fails" -eq 0 ]
