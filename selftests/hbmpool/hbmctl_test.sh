#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# THEORY OF OPERATION
# tools/hbmctl/hbmctl, the admin CLI of the netlink family, end to end:
# every object and command, its -j output parsed as JSON and compared with
# what sysfs (/sys/kernel/hbmpool) or the region helper shows; the table
# output names the same things; a bad command line (unknown object or
# command, bad id, bad size, missing argument) exits 2 with the usage on
# stderr; a refusal by the kernel exits 1 with the errno text and the
# kernel's extack message on stderr (id out of range, existing node, absent
# node, unknown transport, value out of range, unprivileged caller); and
# "monitor -j" prints the events of a node add, change and del with
# consecutive sequence numbers; "domain status" without hbmpoold exits 1
# saying so.  Chunk moves: region move --wait of a region's chunk to its
# other node, resync list/show/cancel, node drain --wait and undrain, the
# resync parameters, node chunks, the resync events of monitor; bad
# command lines exit 2, an absent move exits 1 with the kernel's message.
# Commands a kernel does not have yet (domain-*, node-set, link-*,
# segment-get, region-get and the node's name/addr/port) are answered with
# EOPNOTSUPP: their checks then SKIP, naming the command.
# TAP output; exit 0 pass, 1 fail, 4 skip.
set -u

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
top=$here/../..
hbmctl=$top/tools/hbmctl/hbmctl
holder=$here/region_holder
py=/usr/bin/python3
sys=/sys/kernel/hbmpool
dbg=/sys/kernel/debug/hbmpool
nodes="40 41 42"
timeout0=
budget0=
ra0=
mon=
hpid=

cleanup() {
	local id
	[ -n "$mon" ] && kill "$mon" 2>/dev/null
	[ -n "$hpid" ] && kill "$hpid" 2>/dev/null && wait "$hpid" 2>/dev/null
	[ -n "$timeout0" ] && "$hbmctl" params set fetch-timeout-ms "$timeout0"
	[ -n "$budget0" ] && "$hbmctl" params set cache-budget-pages "$budget0"
	[ -n "$ra0" ] && "$hbmctl" params set readahead-max-pages "$ra0"
	for id in $nodes; do
		[ -d $sys/nodes/node"$id" ] && "$hbmctl" node del "$id"
	done
	rm -f "${out:-}" "${err:-}" "${events:-}" "${hold:-}" "${revents:-}"
}

# ctl ARGS...: hbmctl; stdout in $out, stderr in $err, its status returned
ctl() { "$hbmctl" "$@" >"$out" 2>"$err"; }
# rc WANT ARGS...: hbmctl exits WANT
rc() {
	local want=$1 got
	shift
	ctl "$@"
	got=$?
	[ "$got" = "$want" ] || { echo "# hbmctl $*: exit $got, not $want"; sed 's/^/# stderr: /' "$err"; return 1; }
}
# has FILE PATTERN...: FILE matches every PATTERN (fixed strings)
has() {
	local f=$1 p
	shift
	for p in "$@"; do
		grep -qF -- "$p" "$f" || { echo "# no '$p' in:"; sed 's/^/#   /' "$f"; return 1; }
	done
}
# usage_err ARGS...: exit 2, the usage on stderr, nothing on stdout
usage_err() { rc 2 "$@" && has "$err" "usage:" && [ ! -s "$out" ]; }
# refused ERRNO_TEXT EXTACK_TEXT ARGS...: exit 1, "hbmctl: ERRNO: ...EXTACK" on stderr
refused() {
	local e=$1 x=$2
	shift 2
	rc 1 "$@" && has "$err" "hbmctl: $e: " "$x"
}
# json EXPR: a Python expression over the last stdout parsed as JSON (j)
json() {
	"$py" -c "import json, sys; j = json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" "$out" ||
		{ echo "# JSON check failed: $1"; sed 's/^/#   /' "$out"; return 1; }
}
# missing ARGS...: the kernel has no such command (EOPNOTSUPP)
missing() { ! ctl "$@" && grep -q "Operation not supported" "$err"; }
# skip DESCRIPTION: one skipped result
skip() { ok "# SKIP $*"; }

[ "$(id -u)" = 0 ] || skip_all "needs root"
[ -d $sys ] || skip_all "hbmpool.ko is not loaded"
[ -x "$hbmctl" ] || skip_all "tools/hbmctl/hbmctl not built (make tools)"
[ -x "$py" ] || skip_all "no python3"
out=$(mktemp)
err=$(mktemp)
trap cleanup EXIT
for id in $nodes; do
	[ -d $sys/nodes/node"$id" ] && "$hbmctl" node del "$id"
done

# --- the command line -----------------------------------------------------
check "help: usage on stdout, every object, exit 0" \
	sh -c "'$hbmctl' help >'$out' 2>'$err' && grep -q '^usage: hbmctl' '$out' && [ ! -s '$err' ] &&
	for o in domain node link segment region resync params stats monitor; do
		grep -q \"^  \$o\" '$out' || exit 1; done"
check "node help: the node commands on stdout, exit 0" \
	sh -c "'$hbmctl' node help >'$out' && grep -q 'node add ID capacity SIZE' '$out' && ! grep -q 'params set' '$out'"
check "unknown object: exit 2, usage on stderr" usage_err frobnicate show
check "unknown object: named on stderr" has "$err" "unknown object 'frobnicate'"
check "unknown command: exit 2, usage on stderr" usage_err node frob
check "unknown command: named on stderr" has "$err" "unknown command 'node frob'"
check "unknown option: exit 2" usage_err -x node show
check "bad node id: exit 2" usage_err node del 4x
check "bad node id: named on stderr" has "$err" "bad node id '4x'"
check "bad size: exit 2" usage_err node add 40 capacity 12Q distance 20
check "bad size: named on stderr" has "$err" "bad size '12Q'"
check "node add without a distance: exit 2" usage_err node add 40 capacity 8M
check "bad link type: exit 2" usage_err node add 40 capacity 8M distance 20 link warp
check "bad address: exit 2" usage_err node add 40 capacity 8M distance 20 addr 10.0.0.256
check "params set with nothing to set: exit 2" usage_err params set
check "link set without a state: exit 2" usage_err link set 40
check "monitor takes no argument: exit 2" usage_err monitor now
check "no node was created by the bad lines" [ ! -e $sys/nodes/node40 ]
# domain status reads hbmpoold's socket, not the kernel (the host test
# selftests/unit/hbmctl_daemon_test.sh drives it against a fake daemon)
check "domain status, no daemon there: exit 1, 'hbmpoold is not running'" \
	sh -c "rc=0; '$hbmctl' domain status --socket /nonexistent/hbmpoold.sock >'$out' 2>'$err' || rc=\$?;
	[ \$rc = 1 ] && [ ! -s '$out' ] && grep -qF 'hbmpoold is not running (no /nonexistent/hbmpoold.sock' '$err'"
check "domain status with an unknown argument: exit 2" usage_err domain status now

# --- params ---------------------------------------------------------------
timeout0=$(cat $sys/fetch_timeout_ms)
budget0=$(cat $sys/cache_budget_pages)
ra0=$(cat $sys/readahead_max_pages)
ctl -j params show
check "params show -j: what sysfs shows" \
	json "j['cache-budget-pages'] == $budget0 and j['fetch-timeout-ms'] == $timeout0 and j['readahead-max-pages'] == $ra0 and 'seq' in j"
ctl params show
check "params show: the table names the values" \
	sh -c "grep -Eq '^cache-budget-pages +$budget0\$' '$out' && grep -Eq '^fetch-timeout-ms +$timeout0\$' '$out'"
check "params set fetch-timeout-ms: exit 0" rc 0 params set fetch-timeout-ms 1234
check "params set fetch-timeout-ms: sysfs follows" [ "$(cat $sys/fetch_timeout_ms)" = 1234 ]
check "params set both: exit 0" rc 0 params set cache-budget-pages 512 fetch-timeout-ms 1500
check "params set both: sysfs follows" \
	[ "$(cat $sys/cache_budget_pages) $(cat $sys/fetch_timeout_ms)" = "512 1500" ]
check "params set out of range: ERANGE, naming the attribute" \
	refused "Numerical result out of range" "fetch-timeout-ms" params set fetch-timeout-ms 5
check "params set out of range: the value stays" [ "$(cat $sys/fetch_timeout_ms)" = 1500 ]
check "params set readahead-max-pages: exit 0" rc 0 params set readahead-max-pages 32
check "params set readahead-max-pages: sysfs follows" [ "$(cat $sys/readahead_max_pages)" = 32 ]
check "params set readahead-max-pages 513: ERANGE, naming the attribute" \
	refused "Numerical result out of range" "readahead-max-pages" params set readahead-max-pages 513
check "params set readahead-max-pages 0: ERANGE" \
	refused "Numerical result out of range" "readahead-max-pages" params set readahead-max-pages 0
check "params set readahead-max-pages out of range: the value stays" \
	[ "$(cat $sys/readahead_max_pages)" = 32 ]

# --- stats ----------------------------------------------------------------
ctl -j stats show
check "stats show -j: every counter and a 32-bucket histogram" \
	json "all(k in j for k in ('faults', 'fetches', 'bytes-fetched', 'writebacks', 'bytes-written-back', 'evictions', 'errors', 'timeouts', 'over-budget', 'shrinker-freed', 'cached-pages', 'dirty-pages')) and len(j['lat-hist']) == 32"
check "stats show -j: the counters sysfs shows" \
	json "j['faults'] == $(cat $sys/stats/faults) and j['evictions'] == $(cat $sys/stats/evictions) and j['shrinker-freed'] == $(cat $sys/stats/shrinker_freed)"
ctl stats show
check "stats show: a table" grep -Eq '^faults +[0-9]+$' "$out"

# --- nodes ----------------------------------------------------------------
check "node add: exit 0" rc 0 node add 40 capacity 8M distance 25 link scaleout
check "node add: sysfs shows the node as given, transport sim" \
	[ "$(cat $sys/nodes/node40/capacity_bytes) $(cat $sys/nodes/node40/distance) $(cat $sys/nodes/node40/link_type) $(cat $sys/nodes/node40/transport)" = "8388608 25 scaleout sim" ]
ctl -j node show
check "node show -j: node 0 and node 40 with their attributes" \
	json "any(n['id'] == 0 and n['transport'] == 'local' for n in j) and any(n['id'] == 40 and n['capacity'] == 8388608 and n['free'] == $(cat $sys/nodes/node40/free_bytes) and n['distance'] == 25 and n['link-type'] == 'scaleout' and n['state'] == 'live' and n['transport'] == 'sim' and 'faults' in n['stats'] for n in j)"
check "node show -j: as many nodes as sysfs" json "len(j) == $(find $sys/nodes/ -mindepth 1 -maxdepth 1 | wc -l)"
ctl -j -p node show 40
check "node show ID -j -p: that node alone, pretty" \
	json "len(j) == 1 and j[0]['id'] == 40 and j[0]['capacity'] == $(cat $sys/nodes/node40/capacity_bytes)"
check "node show ID -j -p: indented" grep -q '^  ' "$out"
ctl node show
check "node show: a table with a header, sizes human-readable" \
	sh -c "head -n 1 '$out' | grep -q '^ID ' && awk '\$1 == 40 && / scaleout / && / 8M / { f = 1 } END { exit !f }' '$out'"
check "node add, existing id: EEXIST with the kernel's message" \
	refused "File exists" "a node of that id exists" node add 40 capacity 8M distance 25
check "node add, id out of range: ERANGE naming the id" \
	refused "Numerical result out of range" "(attribute id)" node add 5000 capacity 8M distance 25
# the message of the local node's id: "0 is the local node" before node ids
# became domain-wide, "that id is this node's own" since
check "node add, id 0: EINVAL, this node's own id" \
	sh -c "'$hbmctl' node add 0 capacity 8M distance 25 2>'$err'; [ \$? = 1 ] &&
	grep -Eq '^hbmctl: Invalid argument: .*(0 is the local node|that id is this node.s own)' '$err'"
check "node add, unknown transport: ENOENT" \
	refused "No such file or directory" "no such transport" node add 41 capacity 8M distance 25 transport rdma
check "node show, absent node: ENODEV" refused "No such device" "no such node" node show 62
if command -v setpriv >/dev/null; then
	"$hbmctl" node del 41 2>/dev/null
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$hbmctl" node add 41 capacity 8M distance 25 >"$out" 2>"$err"
	r=$?
	check "node add as nobody: exit 1, Operation not permitted" \
		sh -c "[ $r = 1 ] && grep -q '^hbmctl: Operation not permitted' '$err'"
	check "node add as nobody: no node" [ ! -e $sys/nodes/node41 ]
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$hbmctl" params set fetch-timeout-ms 999 >"$out" 2>"$err"
	r=$?
	check "params set as nobody: Operation not permitted, nothing changed" \
		sh -c "[ $r = 1 ] && grep -q 'Operation not permitted' '$err' && [ \$(cat $sys/fetch_timeout_ms) = 1500 ]"
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$hbmctl" -j node show 40 >"$out" 2>"$err"
	check "node show as nobody: allowed" json "j[0]['id'] == 40"
else
	for _ in 1 2 3 4; do skip "no setpriv"; done
fi
check "node del: exit 0" rc 0 node del 40
check "node del: the node is gone" [ ! -e $sys/nodes/node40 ]
check "node del, absent node: ENODEV with the kernel's message" \
	refused "No such device" "no such node" node del 40

# --- domain (new commands: skip where the kernel has none) ----------------
if missing domain show; then
	for _ in 1 2 3 4 5 6 7; do skip "domain-get: this hbmpool.ko answers EOPNOTSUPP"; done
else
	ctl -j domain show
	check "domain show -j: nodes as in sysfs, max-nodes, self-id, seq" \
		json "j['nr-nodes'] == $(find $sys/nodes/ -mindepth 1 -maxdepth 1 | wc -l) and j['max-nodes'] == 1024 and j['self-id'] == 0 and 'seq' in j and 'generation' in j"
	name0=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1])).get("name", ""))' "$out")
	check "domain set name: exit 0" rc 0 domain set name hbmctl-test
	ctl -j domain show
	check "domain show: the new name" json "j['name'] == 'hbmctl-test'"
	"$hbmctl" domain set name "${name0:-hbmpool}" >/dev/null 2>&1
	check "domain set self, out of range: ERANGE naming self-id" \
		refused "Numerical result out of range" "self-id" domain set self 4096
	ctl -j domain show
	e0=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1])).get("epoch", 0))' "$out")
	check "domain set epoch: exit 0, shown" \
		sh -c "'$hbmctl' domain set epoch $((e0 + 5)) && '$hbmctl' -j domain show | grep -Eq '\"epoch\": ?$((e0 + 5))[,}]'"
	check "domain set epoch lower: EINVAL, the epoch never goes back" \
		refused "Invalid argument" "never goes back" domain set epoch $((e0 + 4))
	check "domain set epoch, the same again: exit 0" rc 0 domain set epoch $((e0 + 5))
fi

# --- node name, address, port; node set -----------------------------------
if missing domain show; then
	for _ in $(seq 14); do skip "node name/addr/port, node-set: this hbmpool.ko has no domain-get, so none of them (EOPNOTSUPP)"; done
else
	check "node add with name, IPv4 address and port: exit 0" \
		rc 0 node add 41 capacity 16M distance 20 name n41 addr 10.1.2.3 port 7000
	ctl -j node show 41
	check "node show: name, address (4 bytes, printed back) and port" \
		json "j[0]['name'] == 'n41' and j[0]['addr'] == '10.1.2.3' and j[0]['port'] == 7000"
	check "node set distance, link, IPv6 address: exit 0" \
		rc 0 node set 41 distance 30 link scaleacross addr fe80::1:2 port 7001
	ctl -j node show 41
	check "node set: the node and sysfs follow" \
		sh -c "[ \"\$(cat $sys/nodes/node41/distance) \$(cat $sys/nodes/node41/link_type)\" = '30 scaleacross' ]" &&
		json "j[0]['addr'] == 'fe80::1:2' and j[0]['port'] == 7001 and j[0]['distance'] == 30"
	ctl node show 41
	check "node show: the address in the table" has "$out" "[fe80::1:2]:7001" "n41"
	check "node set, absent node: ENODEV" refused "No such device" "no such node" node set 62 distance 30
	# weight and draining: 16 MiB at distance 30 weighs 16 * 10 / 30 = 5
	ctl -j node show 41
	check "node show -j: weight 0 (automatic), effective-weight 5, not draining" \
		json "j[0]['weight'] == 0 and j[0]['effective-weight'] == 5 and j[0]['draining'] is False"
	check "node set weight and draining on: exit 0" rc 0 node set 41 weight 7 draining on
	ctl -j node show 41
	check "node set weight, draining: shown, and in sysfs" \
		sh -c "[ \"\$(cat $sys/nodes/node41/weight) \$(cat $sys/nodes/node41/effective_weight) \$(cat $sys/nodes/node41/draining)\" = '7 7 1' ]" &&
		json "j[0]['weight'] == 7 and j[0]['effective-weight'] == 7 and j[0]['draining'] is True"
	ctl node show 41
	check "node show: weight and draining in the table" \
		sh -c "head -n 1 '$out' | grep -q 'WEIGHT' && awk '\$1 == 41 && / 7 / && / yes / { f = 1 } END { exit !f }' '$out'"
	check "node set weight auto, draining off: exit 0, automatic again" \
		sh -c "'$hbmctl' node set 41 weight auto draining off && [ \"\$(cat $sys/nodes/node41/weight) \$(cat $sys/nodes/node41/effective_weight) \$(cat $sys/nodes/node41/draining)\" = '0 5 0' ]"
	check "node set weight 65536: refused by hbmctl (exit 2)" usage_err node set 41 weight 65536
	check "node set draining maybe: refused by hbmctl (exit 2)" usage_err node set 41 draining maybe
	check "node set weight on this node's entry: EINVAL with the kernel's message" \
		refused "Invalid argument" "not for this node's own entry" node set 0 weight 3
fi

# --- links ----------------------------------------------------------------
[ -d $sys/nodes/node41 ] || "$hbmctl" node add 41 capacity 16M distance 20
if missing link show; then
	for _ in 1 2 3 4 5; do skip "link-get/link-set: this hbmpool.ko answers EOPNOTSUPP"; done
else
	ctl -j link show
	check "link show -j: a link to node 41, up, none to node 0" \
		json "any(l['node-id'] == 41 and l['admin-state'] == 'up' and l['oper-state'] == 'up' and l['transport'] == 'sim' for l in j) and not any(l['node-id'] == 0 for l in j)"
	check "link set down: exit 0" rc 0 link set 41 down
	ctl -j link show 41
	check "link show NODE: admin and oper state down" \
		json "len(j) == 1 and j[0]['admin-state'] == 'down' and j[0]['oper-state'] == 'down'"
	"$hbmctl" link set 41 up
	ctl link show 41
	check "link show: a table, up again" sh -c "awk '\$1 == 41 && \$2 == \"up\" { f = 1 } END { exit !f }' '$out'"
	check "link set, absent node: ENODEV" refused "No such device" "" link set 62 up
fi

# --- segment --------------------------------------------------------------
if missing segment show; then
	for _ in 1 2 3 4 5 6; do skip "segment-get: this hbmpool.ko answers EOPNOTSUPP"; done
else
	ctl -j segment show
	check "segment show -j: size, provider, used" \
		json "isinstance(j['size'], int) and isinstance(j['provider'], str) and j['used'] <= j['size']"
	ctl segment show
	check "segment show: a table" grep -Eq '^provider +[a-z]' "$out"
	if "$hbmctl" -j segment show | grep -Eq '"size": ?0,'; then
		check "domain fence: exit 0, domain show says fenced" \
			sh -c "'$hbmctl' segment add 4M && '$hbmctl' domain fence && '$hbmctl' -j domain show | grep -q '\"fenced\"'"
		check "domain fence again: exit 0" rc 0 domain fence
		check "a fenced node's segment can be deleted" rc 0 segment del
		check "a new segment ends the fence" \
			sh -c "'$hbmctl' segment add 4M && ! '$hbmctl' -j domain show | grep -q '\"fenced\"'"
		"$hbmctl" segment del >/dev/null 2>&1
	else
		for _ in 1 2 3 4; do skip "domain fence: this node exports a segment already"; done
	fi
fi

# --- regions --------------------------------------------------------------
if missing region show; then
	for _ in 1 2 3 4 5; do skip "region-get: this hbmpool.ko answers EOPNOTSUPP"; done
elif [ ! -x "$holder" ]; then
	for _ in 1 2 3 4 5; do skip "$holder not built (make selftests)"; done
else
	hold=$(mktemp)
	"$holder" 41 fd >"$hold" 2>&1 &
	hpid=$!
	for _ in $(seq 100); do grep -q '^ready' "$hold" && break; sleep 0.1; done
	rid=$(awk '/^ready/ { print $2 }' "$hold")
	ctl -j region show
	check "region show -j: the helper's region, bound to node 41, 64K" \
		json "any(r['id'] == ${rid:-0} and r['length'] == 65536 and r['policy'] == 'bind' and r['node-id'] == [41] for r in j)"
	ctl -j region show "${rid:-0}" chunks
	check "region show ID chunks -j: one chunk per nr-chunks, by index, on node 41" \
		json "len(j) == 1 and len(j[0]['chunk']) == j[0]['nr-chunks'] and [c['index'] for c in j[0]['chunk']] == list(range(j[0]['nr-chunks'])) and all(c['node-id'] == 41 for c in j[0]['chunk'])"
	ctl region show chunks
	check "region show chunks: the table and the chunks" has "$out" "region ${rid:-x} chunks:" "INDEX"
	kill "$hpid" && wait "$hpid"
	hpid=
	"$holder" 41 fd weighted-interleave >"$hold" 2>&1 &
	hpid=$!
	for _ in $(seq 100); do grep -q '^ready' "$hold" && break; sleep 0.1; done
	rid=$(awk '/^ready/ { print $2 }' "$hold")
	ctl -j region show "${rid:-0}"
	check "region show -j: policy weighted-interleave by name" \
		json "len(j) == 1 and j[0]['policy'] == 'weighted-interleave'"
	kill "$hpid" && wait "$hpid"
	hpid=
	check "region show, absent region: refused" rc 1 region show 999999
fi

# --- chunk moves ------------------------------------------------------------
check "region move without a chunk: exit 2" usage_err region move 1
check "region move, bad chunk index: exit 2" usage_err region move 1 x
check "region move, to without a node: exit 2" usage_err region move 1 0 to
check "region move, unknown argument: exit 2" usage_err region move 1 0 over 3
check "resync show, bad id: exit 2" usage_err resync show x
check "resync show, bad id: named on stderr" has "$err" "bad move id 'x'"
check "resync cancel without an id: exit 2" usage_err resync cancel
check "resync list with an argument: exit 2" usage_err resync list 3
check "node drain without a node: exit 2" usage_err node drain
check "node drain --jobs 0: exit 2" usage_err node drain 41 --jobs 0
check "node drain, unknown argument: exit 2" usage_err node drain 41 now
check "node undrain, two ids: exit 2" usage_err node undrain 41 42
check "params set resync-jobs without a value: exit 2" usage_err params set resync-jobs
if missing resync list; then
	for _ in $(seq 23); do skip "resync-get: this hbmpool.ko answers EOPNOTSUPP"; done
elif [ ! -x "$holder" ]; then
	for _ in $(seq 23); do skip "$holder not built (make selftests)"; done
else
	ctl -j params show
	mbps0=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["resync-mbps"])' "$out")
	check "params show -j: resync-mbps and resync-jobs" json "'resync-mbps' in j and j['resync-jobs'] >= 1"
	check "params set resync-mbps: exit 0, shown" \
		sh -c "'$hbmctl' params set resync-mbps 77 && '$hbmctl' params show | grep -Eq '^resync-mbps +77\$'"
	check "params set resync-jobs 65: ERANGE, naming the attribute" \
		refused "Numerical result out of range" "resync-jobs" params set resync-jobs 65
	"$hbmctl" params set resync-mbps "${mbps0:-0}"
	check "resync show, absent move: exit 1 with the kernel's message" \
		refused "No such file or directory" "" resync show 999999
	check "resync cancel, absent move: exit 1" rc 1 resync cancel 999999
	check "region move, absent region: exit 1, ENOENT" \
		refused "No such file or directory" "" region move 999999 0 to 41
	[ -d $sys/nodes/node42 ] || "$hbmctl" node add 42 capacity 16M distance 90
	revents=$(mktemp)
	"$hbmctl" -j monitor >"$revents" 2>/dev/null &
	mon=$!
	for _ in $(seq 100); do
		"$hbmctl" params set fetch-timeout-ms 2000
		grep -q params-change-ntf "$revents" && break
		sleep 0.1
	done
	hold=${hold:-$(mktemp)}
	"$holder" 41,42 fd >"$hold" 2>&1 &
	hpid=$!
	for _ in $(seq 100); do grep -q '^ready' "$hold" && break; sleep 0.1; done
	rid=$(awk '/^ready/ { print $2 }' "$hold")
	ctl -j region show "${rid:-0}" chunks
	check "the holder's chunk is on node 41" json "j[0]['chunk'][0]['node-id'] == 41"
	ctl -j node show 41
	check "node show -j: chunks 1 on node 41" json "j[0]['chunks'] == 1"
	check "region move to 42 --wait: exit 0" rc 0 -j region move "${rid:-0}" 0 to 42 --wait
	check "region move --wait -j: the move, done, from 41 to 42" \
		json "j['state'] == 'done' and j['from-node-id'] == 41 and j['to-node-id'] == 42 and j['pages-done'] == j['pages']"
	mid=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$out" 2>/dev/null)
	ctl -j region show "${rid:-0}" chunks
	check "region show chunks -j: the chunk on node 42, not moving" \
		json "j[0]['chunk'][0]['node-id'] == 42 and 'syncing-node-id' not in j[0]['chunk'][0]"
	ctl -j node show
	check "node show -j: chunks 0 on 41, 1 on 42" \
		json "[n['chunks'] for n in j if n['id'] in (41, 42)] == [0, 1]"
	ctl -j resync list
	check "resync list -j: the move, done" json "any(m['id'] == ${mid:-0} and m['state'] == 'done' for m in j)"
	ctl resync show "${mid:-0}"
	check "resync show ID: a table naming the state" has "$out" "STATE" " done "
	check "region move to its home: exit 1" rc 1 region move "${rid:-0}" 0 to 42
	check "region move to a node outside the node set: exit 1" \
		rc 1 region move "${rid:-0}" 0 to 40
	check "node drain 42 --wait: exit 0" rc 0 node drain 42 --wait
	check "node drain: 0 chunks left on stdout" has "$out" "node 42: 0 chunks left"
	ctl -j region show "${rid:-0}" chunks
	check "node drain: the chunk back on node 41" json "j[0]['chunk'][0]['node-id'] == 41"
	check "node drain: node 42 draining" [ "$(cat $sys/nodes/node42/draining)" = 1 ]
	check "node undrain: exit 0, not draining" \
		sh -c "'$hbmctl' node undrain 42 && [ \$(cat $sys/nodes/node42/draining) = 0 ]"
	kill "$mon" 2>/dev/null
	wait "$mon" 2>/dev/null
	mon=
	check "monitor -j: resync-change-ntf of the move, ending done" \
		"$py" - "$revents" "${mid:-0}" <<'PYEOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mv = [e for e in ev if e["event"] == "resync-change-ntf" and e.get("id") == int(sys.argv[2])]
if not mv or mv[-1].get("state") != "done" or mv[0].get("region-id") is None:
    sys.exit(f"resync events of move {sys.argv[2]}: {mv}")
PYEOF
	check "resync cancel of a move that ended: exit 0, forgotten" \
		sh -c "'$hbmctl' resync cancel ${mid:-0} && ! '$hbmctl' resync show ${mid:-0} 2>/dev/null"
	kill "$hpid" && wait "$hpid"
	hpid=
	rm -f "$revents"
	"$hbmctl" node del 42
fi

# --- monitor --------------------------------------------------------------
# Subscribe, then change the timeout until the first event shows the
# listener is in; then a node add, change(s) and del.
events=$(mktemp)
"$hbmctl" -j monitor >"$events" 2>"$err" &
mon=$!
for _ in $(seq 100); do
	"$hbmctl" params set fetch-timeout-ms 2000
	grep -q params-change-ntf "$events" && break
	sleep 0.1
done
sleep 0.2
nchanges=2
"$hbmctl" node add 42 capacity 4M distance 20
echo 1 >$dbg/node42/link_down
echo 0 >$dbg/node42/link_down
if ! missing node set 42 distance 44; then
	nchanges=3
fi
"$hbmctl" node del 42
for _ in $(seq 100); do grep -q node-del-ntf "$events" && break; sleep 0.1; done
kill "$mon" 2>/dev/null
wait "$mon" 2>/dev/null
mon=
fails0=$fails
check "monitor -j: add, $nchanges changes, del of node 42, consecutive seq" \
	"$py" - "$events" "$nchanges" <<'PYEOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
nch = int(sys.argv[2])
# after the warm-up's params events: every event in order, numbered one by
# one (a newer kernel also announces the domain's generation and the link)
while ev and ev[0]["event"] == "params-change-ntf":
    last = ev.pop(0)["seq"]
if not ev:
    sys.exit("no event after the warm-up")
seqs = [e["seq"] for e in ev]
if seqs != list(range(last + 1, last + 1 + len(ev))):
    sys.exit(f"seq {seqs} not consecutive from {last + 1}")
node = [e for e in ev if e["event"].startswith("node-")]
names = [e["event"] for e in node]
want = ["node-add-ntf"] + ["node-change-ntf"] * nch + ["node-del-ntf"]
if names != want:
    sys.exit(f"events {names} != {want}")
if any(e["id"] != 42 for e in node):
    sys.exit(f"not node 42: {node}")
if [e.get("state") for e in node[1:3]] != ["unreachable", "live"] or node[-1]["state"] != "removed":
    sys.exit(f"states {[e.get('state') for e in node]}")
if node[0]["capacity"] != 4 << 20 or node[0]["transport"] != "sim":
    sys.exit(f"add event {node[0]}")
if nch == 3 and node[3]["distance"] != 44:
    sys.exit(f"set event {node[3]}")
PYEOF
[ "$fails" = "$fails0" ] || { sed 's/^/# events: /' "$events"; sed 's/^/# stderr: /' "$err"; }
"$hbmctl" monitor >"$events" 2>"$err" &
mon=$!
for _ in $(seq 100); do
	"$hbmctl" params set fetch-timeout-ms 2001
	grep -q params-change-ntf "$events" && break
	sleep 0.1
done
kill "$mon" 2>/dev/null
wait "$mon" 2>/dev/null
mon=
check "monitor: one line per event, named, with seq" \
	grep -Eq '^params-change-ntf .*fetch-timeout-ms 2001.* seq [0-9]+|^params-change-ntf .*seq [0-9]+.*fetch-timeout-ms 2001' "$events"

echo "1..$n"
[ "$fails" -eq 0 ]
