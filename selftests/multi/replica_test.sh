#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replicated regions (region_create.replicas = k) across 6 VMs of the
# multi-VM rig over the in-kernel TCP transport: copies die, get cut off,
# freeze, come back empty, and the application never sees an error, a
# stale byte or a zero while a good copy is left; when none is, it sees
# SIGBUS.  Driven from the host (--host, run by tools/rig/multi.sh -c)
# through tools/rig/multi-ctl.sh, like tcp_test.sh.  TAP on stdout; the last
# line is "N passed, N failed".  Needs kmod/hbmpool.ko and
# tools/hbmctl/hbmctl (make module tools); builds selftests/multi/regionio.
#
#   make module tools && selftests/multi/replica_test.sh
#   (the TAP is in $RIG_BUILD/multi-replica/host.log, the VMs' logs in
#   $RIG_BUILD/out-replica-K/)
#
# Exit status: 0 pass, 1 fail, 4 skip (KSFT_SKIP: the module has no
# HBMPOOL_FEAT_REPLICAS; the VMs are booted to find out, about a minute).
#
# Why 6 VMs: VM1 is the client (it serves no chunk of its regions) and
# VM2..VM6 are homes.  "node set N state fenced" is final (a fenced node
# comes back only as a new node entry), and the scenarios need, with every
# fence kept: R1 three homes with one dying (2,3,6: 6 dies), R2 four homes
# at its start with two dying (2,3,4,5: 5, then 4).  Five homes give that
# without re-adding a fenced node; R3..R5 only need 2 and 3, which never
# get fenced.  Each VM has 1 vCPU and 1 GiB; under TCG on 2 host cores the
# run takes about N minutes (see the last "# [Ns] checks done").
#
# Set-up: every VM K is node K of domain "rig" (one random key), listens on
# 10.77.0.K:7070 and exports a 64 MiB segment; VM1 has nodes 2..6 (tcp,
# capacity 64M, distance 20, scaleout), each home has node 1 only (a star:
# the client's kernel does the copying; homes never talk to each other).
# VM1: cache budget 256 pages (1 MiB), fetch timeout 5000 ms.  Regions are
# 4 MiB in 512 KiB chunks (8 chunks; R2's is 8 MiB in 1 MiB chunks),
# interleaved, held open by "regionio create --hold --replicas K", and
# checked by regionio write/verify (every word a function of seed, page and
# word: zeros and an older seed's bytes are bad).  The daemon is not used:
# the script plays the leader (it fences a dead node on VM1).
#
#   0 set-up: VMs up, domain joined, VM1's links to 2..6 and the homes'
#     links to 1 live within 60 s; HBMPOOL_FEAT_REPLICAS (else SKIP)
#   R3 cut a copy's link mid-write-back: r3 (k=2 over 2,3) written round
#     after round (write + REGION_SYNC, then verify) while VM3's link is cut:
#     every round exact, one whole round after the cut; every chunk's copy
#     on 3 is outdated (outdated-node-id) and region degraded (8 chunks);
#     restore: degraded-chunks 0 again (time printed), every chunk 2 good
#     copies on 2,3, exact; then VM2 cut: read from 3's repaired copies
#     alone, exact
#   R4 freeze VM2 (8 s, past the fetch timeout) while VM1 verifies r4v
#     (k=2 over 2,3) round after round and writes r4 (k=2 over 2,3) with a
#     new seed: the write and its verify exact, every verify round exact
#     (one after the thaw); then VM3 cut, so that only VM2's copies (stale
#     if the kernel did not mark them) can serve r4: no bad byte (good, or
#     SIGBUS where VM2's copy is outdated and not repaired yet); restore:
#     degraded-chunks 0, exact
#   R5 VM3 killed and started again (new segment, new incarnation): r5
#     (k=2 over 2,3, written before the kill, not after) verifies exact with
#     VM3 dead; after the restart VM3's copies (now zeros) are never read:
#     with VM2 cut, no bad byte and no zero; VM1's region shows chunks
#     degraded after the restart (a watcher in VM1, REGION_INFO, while
#     re-replication is limited to 1 MiB/s), then degraded-chunks 0; VM2 cut
#     again: VM3's new copies alone give exact data
#   R1 k=2 over 2,3,6 with a writer (rA, write+verify rounds) and a verifier
#     (rV) running: kill VM6; both see zero errors (no SIGBUS, no bad byte)
#     in rounds begun after the kill; the script fences node 6 on VM1;
#     degraded-chunks of both regions 0 within 180 s (re-replication time
#     printed, from the fence and from the kill); every chunk 2 good copies
#     on 2,3; a round after that exact; VM2 cut: the copies on 3 alone give
#     exact data
#   R2 k=3 over 2,3,4,5 (rB) with a writer running, re-replication limited
#     (resync-mbps 1, resync-jobs 1): kill VM5, fence 5; once a replicate
#     job is copying, kill VM4 and fence it: the writer's rounds (one begun
#     after the second death) exact; every chunk ends with good copies on
#     2 and 3 (re-replication onto the homes left), degraded-chunks 8 (k=3
#     cannot be met with 2 homes), lost-chunks 0; exact
#   R6 the last copy dying: rC (k=2 over 4,5) written before R2 loses both
#     homes there: a verify begun right after VM4's kill (its last copy
#     dead, not fenced yet) ends in bounded time with no bad byte; after
#     the fence lost-chunks = 8 and every page SIGBUSes (never zeros or
#     stale bytes: bad = 0)
#   T teardown: regions released; VM2 and VM3 delete their node and
#     segment and unload; VM1 unloads (nodes still set, three of them
#     fenced); no BUG, WARNING or KASAN report in VM1..VM3's kernel logs
#
# The JSON members the checks read are named once below (J_*), with the
# alternatives accepted; the hbmctl commands used: domain set, node set
# (addr, state fenced), node add, segment add/del, params set
# (cache-budget-pages, fetch-timeout-ms, resync-mbps, resync-jobs),
# -j link show, -j segment show, -j region show ID chunks (or --chunks),
# -j resync list.
#
# Environment: MULTI_TIMEOUT (whole run, default 1200 s), RIG_BUILD, KVER,
# RIG_KERNEL and HBMPOOL_KO (another kernel and its module),
# REPLICA_TEST_FREEZE (seconds, default 8), REPLICA_TEST_PLUMBING=1 (a dry
# run of the script's own plumbing on a module without replicas: regions
# get one copy, and the replica checks are expected to fail instead of the
# test skipping), REPLICA_TEST_ONLY (a list of R1..R6, e.g. "R1 R2": the
# others are not run; R6 needs R2).
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
rig=$repo/tools/rig
build=${RIG_BUILD:-$repo/build/rig}
RUN=replica

if [ "${1:-}" != --host ]; then
	[ -r "${HBMPOOL_KO:-$repo/kmod/hbmpool.ko}" ] || { echo "replica_test: ${HBMPOOL_KO:-kmod/hbmpool.ko} not built (make module)" >&2; exit 1; }
	[ -x "$repo/tools/hbmctl/hbmctl" ] || { echo "replica_test: tools/hbmctl/hbmctl not built (make tools)" >&2; exit 1; }
	"$here/build-regionio.sh" "$build/regionio" || { echo "replica_test: cannot build regionio" >&2; exit 1; }
	# shellcheck source=selftests/multi/outer.sh
	. "$here/outer.sh"
	skipf=$build/multi-$RUN/skip
	rm -f "$skipf"
	rc=0
	MULTI_TIMEOUT=${MULTI_TIMEOUT:-1200} multi_outer $RUN 6 "$here/replica_test.sh" --shm 0 || rc=$?
	if [ $rc = 0 ] && [ -s "$skipf" ]; then
		echo "replica_test: SKIP: $(cat "$skipf")"
		exit 4
	fi
	exit $rc
fi

# --- host side, run by multi.sh -c ---
# shellcheck source=selftests/hbmpool/lib.sh
. "$repo/selftests/hbmpool/lib.sh"
N=$MULTI_NODES
PORT=7070
RIO=$build/regionio		# the same path in the guests
H=tools/hbmctl/hbmctl		# the agents run in the repository
LOOP="env RIO=$RIO RIG_SYNC=$RIG_SYNC bash $here/replica_loop.sh"
SIZE=2M CHUNK=256K NCH=8	# NCH: chunks of a region (SIZE / CHUNK)
NPG=512				# pages of a region (SIZE / 4 KiB)
BSIZE=4M BCHUNK=512K		# R2's region: 8 chunks of 512 KiB
BUDGET=128 TIMEOUT_MS=5000
UP="live|degraded"		# a link that carries requests (degraded: slow)
FREEZE=${REPLICA_TEST_FREEZE:-8}
PLUMB=${REPLICA_TEST_PLUMBING:-0}
ONLY=${REPLICA_TEST_ONLY:-R1 R2 R3 R4 R5 R6}
KEY=$RIG_SYNC/domain.key

# JSON members read by the checks: "name|alternative|...", first found wins.
J_HEALTH="health|link-health"		# link show: down/connecting/live/degraded
J_OPER="oper-state"			# fallback when there is no health: up -> live
J_NODE="node-id"			# link show: the link's node
J_INCARNATION="incarnation"		# segment show
J_REPLICAS="replicas"			# region show ID
J_DEGRADED="degraded-chunks|degraded_chunks"
J_LOST="lost-chunks|lost_chunks"
J_CHUNK="chunk|chunks"			# region show ID chunks: the chunk list
J_COPY="copy-node-id|copy-node-ids|copies"	# per chunk, multi: every copy
J_OUTDATED="outdated-node-id|outdated-node-ids|outdated"	# per chunk, multi
J_GOOD="good-copies|good_copies"	# per chunk
J_KIND="kind"				# resync list: move / replicate
J_STATE="state"				# resync list: copying / done / failed...

ctl() { "$rig/multi-ctl.sh" "$@"; }
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
want() { [[ " $ONLY " == *" $1 "* ]]; }
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
# round.
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
			return 1
		fi
		sleep 1
	done
}
star_links() {
	local j
	for ((j = 2; j <= N; j++)); do echo "1:$j $j:1"; done
}

# setup_cmd K: the commands that load the module and join VM K to the
# domain (star: VM1 knows every home, a home knows VM1); setup K runs them.
setup() { gx "$1" "$(setup_cmd "$1")"; }
setup_cmd() {
	local k=$1 j cmd
	cmd="set -ex; insmod ${HBMPOOL_KO:-$repo/kmod/hbmpool.ko}
$H domain set name rig self $k key-file $KEY
$H node set $k addr 10.77.0.$k port $PORT
$H segment add 64M"
	for ((j = 1; j <= N; j++)); do
		[ $j = "$k" ] && continue
		[ "$k" != 1 ] && [ $j != 1 ] && continue
		cmd="$cmd
$H node add $j capacity 64M distance 20 transport tcp link scaleout addr 10.77.0.$j port $PORT"
	done
	cmd="$cmd
$H params set cache-budget-pages $BUDGET fetch-timeout-ms $TIMEOUT_MS"
	printf '%s\n' "$cmd"
}

# hold NAME NODES K [SIZE CHUNK]: VM1 creates region NAME over NODES with K
# copies of each chunk, held open by a background regionio.
hold() {
	local name=$1 nodes=$2 k=$3 size=${4:-$SIZE} chunk=${5:-$CHUNK} rep=""
	[ -n "$REPL" ] && rep="--replicas $k"
	ctl exec 1 "setsid $RIO create --name $name --size $size --chunk $chunk --policy interleave --nodes $nodes $rep --hold --pidfile /tmp/hold.$name.pid >/tmp/hold.$name.log 2>&1 </dev/null &" >/dev/null &&
		gx 1 "for i in \$(seq 100); do grep -q holding /tmp/hold.$name.log && { cat /tmp/hold.$name.log; $RIO info --name $name; exit 0; }; sleep 0.1; done; cat /tmp/hold.$name.log; exit 1"
}
# release NAME: VM1's holder of NAME exits; the region is gone.
release() {
	gx 1 "p=\$(cat /tmp/hold.$1.pid) && kill \$p && for i in \$(seq 100); do kill -0 \$p 2>/dev/null || exit 0; sleep 0.1; done; exit 1"
}
region_id() { q 1 "$RIO info --name $1" | sed -n 's/^region \([0-9]*\) .*/\1/p'; }
# rio [-t SECS] ARGS...: regionio ARGS in VM1, bounded in the guest too.
rio() {
	local t=240
	if [ "$1" = -t ]; then t=$2; shift 2; fi
	gx -t $((t + 30)) 1 "timeout -k 5 $t $RIO $*"
}
# rio_out [-t SECS] ARGS...: the same, its output on stdout (for parsing),
# its status returned.
rio_out() {
	local t=240
	if [ "$1" = -t ]; then t=$2; shift 2; fi
	ctl exec -t $((t + 30)) 1 "timeout -k 5 $t $RIO $*" 2>&1
}
# flush: evict VM1's cache, so that the next verify fetches every page.
flush() { gx 1 "$H params set cache-budget-pages 16 && sleep 1 && $H params set cache-budget-pages $BUDGET"; }
klog_clean() { gx "$1" "dmesg >/tmp/dmesg.now && $rig/klog-check.sh /tmp/dmesg.now"; }
comment() { sed 's/^/# /'; }

# rshow NAME: "hbmctl -j region show ID chunks" of VM1's region NAME.
rshow() {
	local id out
	id=$(region_id "$1")
	[ -n "$id" ] || return 1
	out=$(q 1 "$H -j region show $id chunks") && [ -n "$out" ] ||
		out=$(q 1 "$H -j region show $id --chunks")
	[ -n "$out" ] && printf '%s\n' "$out"
}
# rnum NAME KEYS: a numeric member of region NAME (region show), or -1.
rnum() {
	local v
	v=$(rshow "$1" | jval "$2") && [[ "$v" =~ ^[0-9]+$ ]] && echo "$v" || echo -1
}
# chunkq WHAT ARG: a question about the chunks of the region show JSON on
# stdin; prints the answer (and a per-chunk summary on stderr); exit 1 on
# no JSON or no chunks.
#   good K NODES   "yes" if every chunk has K good copies, on distinct
#                  nodes of NODES (a comma list), its good-copies member
#                  agreeing; else why not
#   goodset NODES  "yes" if every chunk's good copies are exactly NODES
#   outdated N     the chunks whose copy on N is outdated
#   holds N        the chunks with a copy (good or not) on N
#   summary        one line: index:copies/outdated/good-copies per chunk
chunkq() {
	/usr/bin/python3 -c '
import json, sys
what, arg = sys.argv[1], sys.argv[2]
J = dict(zip(("chunk", "copy", "outdated", "good", "node"), (s.split("|") for s in sys.argv[3:8])))
def get(o, k, d=None):
    return next((o[x] for x in J[k] if x in o), d)
def ids(v):
    if v is None:
        return []
    return [int(x) for x in (v if isinstance(v, list) else [v])]
try:
    d = json.load(sys.stdin)
    r = d[0] if isinstance(d, list) else d
    ch = get(r, "chunk")
    assert isinstance(ch, list) and ch
except (ValueError, AssertionError, IndexError, KeyError, TypeError):
    print("no chunks")
    sys.exit(1)
rows = []
for c in ch:
    copies = ids(get(c, "copy"))
    if not copies and get(c, "node") is not None:
        copies = ids(get(c, "node"))
    out = ids(get(c, "outdated"))
    goodn = [x for x in copies if x not in out]
    rows.append((c.get("index", -1), copies, out, goodn, get(c, "good"), bool(c.get("lost"))))
print(" ".join("%s:%s/%s/%s%s" % (i, ",".join(map(str, cp)) or "-", ",".join(map(str, o)) or "-",
      g if g is not None else "?", "/lost" if l else "") for i, cp, o, gn, g, l in rows), file=sys.stderr)
if what == "good":
    k, nodes = arg.split(" ", 1)
    k, nodes = int(k), set(int(x) for x in nodes.split(","))
    bad = []
    for i, cp, o, gn, g, l in rows:
        if len(gn) != k or len(set(gn)) != k or not set(gn) <= nodes or (g is not None and int(g) != k):
            bad.append("%s:good=%s(%s)" % (i, ",".join(map(str, gn)), g))
    print("yes" if not bad else "no: " + " ".join(bad))
elif what == "goodset":
    nodes = sorted(set(int(x) for x in arg.split(",")))
    bad = ["%s:%s" % (i, ",".join(map(str, gn))) for i, cp, o, gn, g, l in rows if sorted(gn) != nodes]
    print("yes" if not bad else "no: " + " ".join(bad))
elif what == "outdated":
    print(sum(1 for r in rows if int(arg) in r[2]))
elif what == "holds":
    print(sum(1 for r in rows if int(arg) in r[1]))
else:
    print("ok")
' "$1" "$2" "$J_CHUNK" "$J_COPY" "$J_OUTDATED" "$J_GOOD" "node-id"
}
# chunks NAME WHAT ARG: chunkq on region NAME; the summary as a comment.
chunks() {
	local js ans
	js=$(rshow "$1") || { echo "no region"; return 0; }
	ans=$(chunkq "$2" "$3" <<<"$js" 2>/tmp/replica_chunkq.$$) || true
	echo "# $1 chunks (index:copies/outdated/good-copies): $(cat /tmp/replica_chunkq.$$)" >&2
	rm -f /tmp/replica_chunkq.$$
	echo "$ans"
}
# region_state NAME: a comment line with replicas, degraded and lost chunks.
region_state() {
	local js
	js=$(rshow "$1")
	echo "# $1: replicas=$(jval "$J_REPLICAS" <<<"$js" || echo ?) degraded-chunks=$(jval "$J_DEGRADED" <<<"$js" || echo ?) lost-chunks=$(jval "$J_LOST" <<<"$js" || echo ?)"
}
# wait_degraded SECS WANT NAME...: degraded-chunks of every region NAME is
# WANT within SECS; prints the seconds it took in $waited.
waited=0
wait_degraded() {
	local secs=$1 want=$2 end=$((SECONDS + $1)) start=$SECONDS r v pending
	shift 2
	while :; do
		pending=""
		for r in "$@"; do
			v=$(rnum "$r" "$J_DEGRADED")
			[ "$v" = "$want" ] || pending="$pending $r=$v"
		done
		waited=$((SECONDS - start))
		[ -z "$pending" ] && return 0
		if [ $SECONDS -ge $end ]; then
			echo "# after ${secs}s degraded-chunks:$pending"
			return 1
		fi
		sleep 1
	done
}
# replicating: "A B": replicate jobs copying now, replicate jobs in all.
replicating() {
	q 1 "$H -j resync list" | /usr/bin/python3 -c '
import json, sys
kk, sk = sys.argv[1].split("|"), sys.argv[2].split("|")
try:
    d = json.load(sys.stdin)
except ValueError:
    d = []
d = d if isinstance(d, list) else [d]
rep = [j for j in d if str(next((j[k] for k in kk if k in j), "")) in ("replicate", "1")]
print(sum(1 for j in rep if next((j[k] for k in sk if k in j), "") == "copying"), len(rep))
' "$J_KIND" "$J_STATE"
}

# Background loops in VM1 (replica_loop.sh): job ids in $job_*; their
# output is $RIG_SYNC/cmd/JOB.out, readable here while they run.
loop() { ctl spawn 1 "$LOOP $*"; }
# begun JOB: wait (120 s at most) until JOB began its first round, then 2 s
# more, so that a fault comes in the middle of its work.
begun() {
	local end=$((SECONDS + 120))
	until grep -q '^begin ' "$RIG_SYNC/cmd/$1.out" 2>/dev/null; do
		[ $SECONDS -ge $end ] && { echo "# job $1 did not begin in 120 s"; return 1; }
		sleep 0.5
	done
	sleep 2
}
# rounds JOB REGEX: how many "round" lines of JOB match REGEX so far.
rounds() { grep -c "^round .*$2" "$RIG_SYNC/cmd/$1.out" 2>/dev/null || echo 0; }
# wait_rounds SECS JOB REGEX: JOB printed a round matching REGEX (or ended).
wait_rounds() {
	local end=$((SECONDS + $1))
	until gt "$(rounds "$2" "$3")" 0; do
		ctl "done" "$2" && return 1
		[ $SECONDS -ge $end ] && { echo "# no round matching '$3' after $1 s"; return 1; }
		sleep 2
	done
}
# loop_end WHAT JOB: wait for JOB; check that every round was exact and that
# one began after the fault (after=1 or 2) and one after its end (after=2);
# sets $lastseed.
lastseed=""
loop_end() {
	local what=$1 job=$2 out rc=0 total bad a1 a2
	out=$(ctl result -t 600 "$job" 2>&1) || rc=$?
	printf '%s\n' "$out" | grep -v '^round \|^begin ' | grep -v ' bad=0 .*sigbus=0 ' | head -n 20 | comment
	total=$(grep -c '^round ' <<<"$out")
	bad=$(grep '^round ' <<<"$out" | grep -vc ' rc=0$')
	a1=$(grep -c '^round .* after=[12] ' <<<"$out")
	a2=$(grep -c '^round .* after=2 ' <<<"$out")
	lastseed=$(grep '^round ' <<<"$out" | tail -n 1 | sed -n 's/.* seed \([0-9]*\) .*/\1/p')
	echo "# $what: $total rounds, $a1 begun during or after the fault, $a2 after it, $bad not exact (job exit $rc)"
	check "$what: $total rounds ($a1 begun with the fault on, $a2 after it), every one exact: no bad byte, no SIGBUS, no error" \
		test "$rc" = 0 -a "$total" -gt 0 -a "$bad" = 0 -a "$a1" -gt 0 -a "$a2" -gt 0
}
# nobad WHAT ARGS...: regionio verify ARGS --allow-sigbus in VM1: exit 0
# (no bad byte, every page good or SIGBUS); the counts in $vgood, $vsig.
vgood=-1 vsig=-1
nobad() {
	local what=$1 out rc=0
	shift
	out=$(rio_out verify "$@" --allow-sigbus) || rc=$?
	printf '%s\n' "$out" | comment
	vgood=$(sed -n 's/^verify:.* good=\([0-9]*\) .*/\1/p' <<<"$out")
	vsig=$(sed -n 's/^verify:.* sigbus=\([0-9]*\) .*/\1/p' <<<"$out")
	check "$what: no bad byte, no zero (good ${vgood:-?}, SIGBUS ${vsig:-?})" \
		test "$rc" = 0 -a -n "$vgood"
}

t0=$SECONDS
for ((k = 1; k <= N; k++)); do
	check "VM$k boots and its agent runs" ctl agents -t 400 "$k"
done
[ "$fails" = 0 ] || bail "VMs did not come up"
stamp "all up"
head -c 32 /dev/urandom >"$KEY"
declare -A sjob
for ((k = 1; k <= N; k++)); do		# all at once: the VMs are slow
	sjob[$k]=$(ctl spawn $k "$(setup_cmd $k)")
done
for ((k = 1; k <= N; k++)); do
	out=$(ctl result -t 300 "${sjob[$k]}" 2>&1) && rc=0 || rc=$?
	[ "$rc" = 0 ] || printf '%s\n' "$out" | comment
	check "VM$k joins domain rig as node $k (segment 64M)" test "$rc" = 0
done
[ "$fails" = 0 ] || bail "set-up failed"
# shellcheck disable=SC2046 # words
set -- $(star_links)
LINKS=("$@")
check "0: VM1's links to 2..$N and theirs to 1 are up ($UP) within 90 s" wait_links 90 "$UP" "${LINKS[@]}"

feat=$(q 1 "$RIO features")
echo "# VM1: $(tr '\n' ' ' <<<"$feat")"
REPL=1
if ! grep -q '^replicas yes' <<<"$feat"; then
	if [ "$PLUMB" = 1 ]; then
		echo "# REPLICA_TEST_PLUMBING=1: the module has no replicas; regions get one copy, replica checks will fail"
		REPL=""
	else
		echo "# SKIP: the module has no HBMPOOL_FEAT_REPLICAS (replicated regions)"
		echo "kernel module without HBMPOOL_FEAT_REPLICAS (replicated regions)" >"$MULTI_DIR/skip"
		ok "0: module probed (no replicas: skipping R1..R6)"
		gx 1 "rmmod hbmpool" >/dev/null
		ctl stop
		echo "1..$n"
		exit 0
	fi
fi
check "0: a k=5 region is refused (EINVAL: more than HBMPOOL_REPLICAS_MAX)" \
	gx 1 "! $RIO create --name big --size $SIZE --chunk $CHUNK --nodes 2,3,4,5,6 --replicas 5"
stamp "set-up done"

# --- R3. cut a copy's link during write-back
if want R3; then
check "R3: VM1 holds r3 (k=2 over 2,3)" hold r3 2,3 2
check "R3: r3 has replicas 2" test "$(rnum r3 "$J_REPLICAS")" = 2
check "R3: every chunk of r3 has 2 good copies, on 2 and 3" test "$(chunks r3 good "2 2,3")" = yes
check "R3: VM1 writes r3 (seed 300)" rio write --name r3 --seed 300
check "R3: VM1 verifies r3: exact" rio verify --name r3 --seed 300 --order rand
check "R3: flush VM1's cache" flush
job_w=$(loop wv r3 300 r3)
check "R3: VM1's writer of r3 runs" begun "$job_w"
check "R3: cut VM3's link while VM1 writes r3" ctl cut 3
ctl mark r3.dead
ctl mark r3.done
loop_end "R3: VM1's writer of r3 across the cut" "$job_w"
s3=$lastseed
check "R3: VM1's link to 3 is down (not live)" wait_links 60 "down|connecting" 1:3
o3=$(chunks r3 outdated 3)
check "R3: every chunk's copy on node 3 is outdated ($o3 of $NCH)" test "$o3" = $NCH
region_state r3
check "R3: r3 has $NCH degraded chunks, none lost" \
	test "$(rnum r3 "$J_DEGRADED")" = $NCH -a "$(rnum r3 "$J_LOST")" = 0
check "R3: flush VM1's cache" flush
check "R3: VM1 verifies r3 (seed $s3) with 3 cut: exact" rio verify --name r3 --seed "$s3" --order rand
check "R3: restore VM3's link" ctl restore 3
check "R3: VM1's link to 3 is up again within 60 s" wait_links 60 "$UP" 1:3
wait_degraded 120 0 r3; r=$?
check "R3: r3's degraded-chunks back to 0 within 120 s of the restore (${waited}s)" test $r = 0
echo "# R3: repair after the restore took ${waited}s (polled every second)"
check "R3: every chunk of r3 has 2 good copies on 2,3 again" test "$(chunks r3 good "2 2,3")" = yes
check "R3: flush VM1's cache" flush
check "R3: VM1 verifies r3: exact" rio verify --name r3 --seed "$s3" --order seq
check "R3: cut VM2's link (only 3's repaired copies left)" ctl cut 2
check "R3: flush VM1's cache" flush
check "R3: VM1 verifies r3 from node 3 alone: exact" rio verify --name r3 --seed "$s3" --order rand
check "R3: restore VM2's link" ctl restore 2
check "R3: VM1's link to 2 is live again within 60 s" wait_links 60 "$UP" 1:2
check "R3: VM1 releases r3" release r3
stamp "R3 done"
fi

# --- R4. freeze a copy's VM past the fetch timeout
if want R4; then
check "R4: VM1 holds r4 (k=2 over 2,3)" hold r4 2,3 2
check "R4: VM1 holds r4v (k=2 over 2,3)" hold r4v 2,3 2
check "R4: VM1 writes r4 (seed 400)" rio write --name r4 --seed 400
check "R4: VM1 writes r4v (seed 410)" rio write --name r4v --seed 410
check "R4: flush VM1's cache" flush
job_v=$(loop v r4v 410 r4)
check "R4: VM1's verifier of r4v runs" begun "$job_v"
check "R4: freeze VM2" ctl freeze 2
ctl mark r4.dead
tf=$SECONDS
# a write (every page, then REGION_SYNC) and its check while VM2 is frozen
job_w=$(ctl spawn 1 "timeout -k 5 300 $RIO write --name r4 --seed 401 && timeout -k 5 300 $RIO verify --name r4 --seed 401 --order rand")
sleep $((FREEZE - (SECONDS - tf) > 0 ? FREEZE - (SECONDS - tf) : 0))
check "R4: thaw VM2 after $((SECONDS - tf))s (fetch timeout ${TIMEOUT_MS} ms)" ctl thaw 2
ctl mark r4.done
out=$(ctl result -t 330 "$job_w" 2>&1) && rc=0 || rc=$?
printf '%s\n' "$out" | comment
check "R4: VM1's write of r4 (seed 401) begun in the freeze and its verify: no error, exact" test "$rc" = 0
loop_end "R4: VM1's verifier of r4v across the freeze" "$job_v"
region_state r4
chunks r4 summary x >/dev/null
# VM3 cut: whatever VM1 reads of r4 now comes from VM2, whose copies
# missed the writes of the freeze (seed 400 there) unless the kernel marked
# them outdated (SIGBUS: no good copy reachable) or repaired them (good).
check "R4: cut VM3's link" ctl cut 3
check "R4: flush VM1's cache" flush
nobad "R4: VM1 verifies r4 (seed 401) from the thawed VM2 alone" --name r4 --seed 401 --order rand
check "R4: restore VM3's link" ctl restore 3
check "R4: links to 2 and 3 live within 60 s" wait_links 60 "$UP" 1:2 1:3 2:1 3:1
wait_degraded 120 0 r4; r=$?
check "R4: r4's degraded-chunks 0 within 120 s (${waited}s)" test $r = 0
check "R4: every chunk of r4 has 2 good copies on 2,3" test "$(chunks r4 good "2 2,3")" = yes
check "R4: flush VM1's cache" flush
check "R4: VM1 verifies r4: exact" rio verify --name r4 --seed 401 --order rev
check "R4: VM1 verifies r4v: exact" rio verify --name r4v --seed 410 --order seq
check "R4: VM1 releases r4" release r4
check "R4: VM1 releases r4v" release r4v
stamp "R4 done"
fi

# --- R5. a home comes back with a new incarnation
if want R5; then
check "R5: VM1 holds r5 (k=2 over 2,3)" hold r5 2,3 2
check "R5: VM1 writes r5 (seed 500)" rio write --name r5 --seed 500
check "R5: VM1 verifies r5: exact" rio verify --name r5 --seed 500
r5=$(region_id r5)
inc0=$(hj 3 "$J_INCARNATION" segment show)
check "R5: flush VM1's cache" flush
check "R5: kill VM3" ctl kill 3
check "R5: VM1 verifies r5 with VM3 dead: exact (fail-over to 2)" rio verify --name r5 --seed 500 --order rand
region_state r5
# Re-replication slowed down, and a watcher of r5's degraded chunks in
# VM1 (REGION_INFO, every 0.2 s), so that the repair after the restart is
# seen however fast the host polls.
check "R5: VM1 limits re-replication to 1 MiB/s" gx 1 "$H params set resync-mbps 1"
job_watch=$(ctl spawn 1 "m=0; while [ ! -e $RIG_SYNC/r5.watched ]; do d=\$($RIO info --name r5 | sed -n 's/^replicas [0-9]* degraded \([0-9]*\) .*/\1/p'); [ \"\${d:-0}\" -gt \$m ] && m=\$d; sleep 0.2; done; echo max-degraded=\$m")
check "R5: start VM3 again" ctl start -t 400 3
check "R5: VM3's agent runs again" ctl agents -t 120 3
check "R5: VM3 joins the domain again" setup 3
inc1=$(hj 3 "$J_INCARNATION" segment show)
check "R5: VM3's new segment has a new incarnation ($inc0 -> $inc1)" \
	test -n "$inc0" -a -n "$inc1" -a "$inc0" != "$inc1"
check "R5: cut VM2's link (only VM3's copies of the old incarnation, now zeros, left)" ctl cut 2
check "R5: VM1's link to 3 is up within 60 s" wait_links 60 "$UP" 1:3 3:1
check "R5: flush VM1's cache" flush
nobad "R5: VM1 verifies r5 with 2 cut, 3 new" --name r5 --seed 500 --order rand
check "R5: restore VM2's link" ctl restore 2
check "R5: links to 2 and 3 live within 60 s" wait_links 60 "$UP" 1:2 1:3 2:1 3:1
wait_degraded 180 0 r5; r=$?
check "R5: r5's degraded-chunks 0 within 180 s (${waited}s, at 1 MiB/s)" test $r = 0
ctl mark r5.watched
out=$(ctl result -t 60 "$job_watch" 2>&1)
md=$(sed -n 's/^max-degraded=//p' <<<"$out")
check "R5: r5 was degraded after the restart (most degraded chunks seen: ${md:-?}), then repaired" gt "${md:-0}" 0
check "R5: VM1 lifts the re-replication limit" gx 1 "$H params set resync-mbps 0"
check "R5: every chunk of r5 has 2 good copies on 2,3" test "$(chunks r5 good "2 2,3")" = yes
check "R5: cut VM2's link again" ctl cut 2
check "R5: flush VM1's cache" flush
check "R5: VM1 verifies r5 from VM3's new copies alone: exact" rio verify --name r5 --seed 500 --order seq
check "R5: restore VM2's link" ctl restore 2
check "R5: VM1's link to 2 live within 60 s" wait_links 60 "$UP" 1:2
check "R5: VM1 releases r5 (region $r5)" release r5
stamp "R5 done"
fi

# --- R1. k=2 over three homes, one dies, a writer and a verifier running
if want R1; then
check "R1: VM1 holds rA (k=2 over 2,3,6)" hold rA 2,3,6 2
check "R1: VM1 holds rV (k=2 over 2,3,6)" hold rV 2,3,6 2
check "R1: every chunk of rA has 2 good copies on distinct nodes of 2,3,6" test "$(chunks rA good "2 2,3,6")" = yes
h6=$(( $(chunks rA holds 6) + $(chunks rV holds 6) ))
check "R1: node 6 holds copies of rA and rV ($h6 chunks)" gt "$h6" 0
check "R1: VM1 writes rA (seed 100)" rio write --name rA --seed 100
check "R1: VM1 writes rV (seed 110)" rio write --name rV --seed 110
check "R1: VM1 verifies rV: exact" rio verify --name rV --seed 110
check "R1: flush VM1's cache" flush
job_w=$(loop wv rA 100 r1)
job_v=$(loop v rV 110 r1)
check "R1: VM1's writer of rA runs" begun "$job_w"
check "R1: VM1's verifier of rV runs" begun "$job_v"
check "R1: kill VM6 (copies of rA and rV)" ctl kill 6
tk=$SECONDS
ctl mark r1.dead
check "R1: VM1's link to 6 leaves live within 60 s" wait_links 60 "down|connecting" 1:6
check "R1: the writer did a round begun after the kill, within 300 s" wait_rounds 300 "$job_w" "after=1"
check "R1: the verifier did a round begun after the kill, within 300 s" wait_rounds 300 "$job_v" "after=1"
region_state rA
check "R1: VM1 fences node 6 (the leader's decision, played by the test)" gx 1 "$H node set 6 state fenced"
tf=$SECONDS
wait_degraded 180 0 rA rV; r=$?
check "R1: rA's and rV's degraded-chunks 0 within 180 s of the fence (${waited}s)" test $r = 0
echo "# R1: re-replication: k=2 again ${waited}s after the fence, $((SECONDS - tk))s after the kill (polled every second)"
ctl mark r1.done
check "R1: every chunk of rA has 2 good copies on 2,3" test "$(chunks rA good "2 2,3")" = yes
check "R1: every chunk of rV has 2 good copies on 2,3" test "$(chunks rV good "2 2,3")" = yes
loop_end "R1: VM1's writer of rA" "$job_w"
sA=$lastseed
loop_end "R1: VM1's verifier of rV" "$job_v"
check "R1: rA and rV have no lost chunk" test "$(rnum rA "$J_LOST")" = 0 -a "$(rnum rV "$J_LOST")" = 0
check "R1: cut VM2's link (the copies on 3 alone)" ctl cut 2
check "R1: flush VM1's cache" flush
check "R1: VM1 verifies rA (seed $sA) from node 3 alone: exact" rio verify --name rA --seed "$sA" --order rand
check "R1: VM1 verifies rV from node 3 alone: exact" rio verify --name rV --seed 110 --order rev
check "R1: restore VM2's link" ctl restore 2
check "R1: VM1's link to 2 live within 60 s" wait_links 60 "$UP" 1:2
check "R1: VM1 releases rA" release rA
check "R1: VM1 releases rV" release rV
stamp "R1 done"
fi

# --- R2 (and R6). k=3 over four homes: two die, the second during the
# re-replication that the first started; rC (k=2 over 4,5) loses both.
if want R2; then
check "R2: VM1 holds rB (k=3 over 2,3,4,5, 8 MiB in 1 MiB chunks)" hold rB 2,3,4,5 3 $BSIZE $BCHUNK
check "R2: rB has replicas 3" test "$(rnum rB "$J_REPLICAS")" = 3
check "R2: every chunk of rB has 3 good copies on distinct nodes of 2..5" test "$(chunks rB good "3 2,3,4,5")" = yes
h5=$(chunks rB holds 5)
check "R2: node 5 holds copies of rB ($h5 chunks)" gt "$h5" 0
if want R6; then
	check "R6: VM1 holds rC (k=2 over 4,5)" hold rC 4,5 2
	check "R6: every chunk of rC has 2 good copies on 4,5" test "$(chunks rC good "2 4,5")" = yes
	check "R6: VM1 writes rC (seed 600)" rio write --name rC --seed 600
	check "R6: VM1 verifies rC: exact" rio verify --name rC --seed 600
fi
check "R2: VM1 writes rB (seed 200)" rio write --name rB --seed 200
check "R2: VM1 limits re-replication (resync-mbps 1, resync-jobs 1)" \
	gx 1 "$H params set resync-mbps 1 resync-jobs 1"
check "R2: flush VM1's cache" flush
job_w=$(loop wv rB 200 r2)
check "R2: VM1's writer of rB runs" begun "$job_w"
check "R2: kill VM5" ctl kill 5
check "R2: VM1's link to 5 leaves live within 60 s" wait_links 60 "down|connecting" 1:5
# a watcher in VM1 marks r2.copying once a resync job is copying (only
# replicate jobs run in this test): the host waits for the marker, not for
# hbmctl round trips, to kill VM4 while the re-replication runs
ctl spawn 1 "for i in \$(seq 900); do [ -e $RIG_SYNC/r2.watched ] && exit 0; $H -j resync list 2>/dev/null | grep -q '\"copying\"' && { touch $RIG_SYNC/r2.copying; exit 0; }; sleep 0.1; done; exit 1" >/dev/null
check "R2: VM1 fences node 5" gx 1 "$H node set 5 state fenced"
check "R2: VM1 sees a replicate job copying within 90 s" ctl wait -t 90 r2.copying
ctl mark r2.watched
rj=$(replicating)
echo "# R2: replicate jobs before the second kill (copying, all): $rj"
check "R2: kill VM4 during the re-replication" ctl kill 4
echo "# R2: replicate jobs right after the kill (copying, all): $(replicating)"
ctl mark r2.dead
if want R6; then
	# rC's last copy (on 4) is dead and not fenced yet: a verify now
	job_c=$(ctl spawn 1 "timeout -k 5 300 $RIO verify --name rC --seed 600 --order rand --allow-sigbus")
fi
check "R2: VM1's link to 4 leaves live within 60 s" wait_links 60 "down|connecting" 1:4
check "R2: VM1 fences node 4" gx 1 "$H node set 4 state fenced"
check "R2: VM1 lifts the re-replication limit" gx 1 "$H params set resync-mbps 0 resync-jobs 4"
end=$((SECONDS + 180))
gs=""
while [ $SECONDS -lt $end ]; do
	gs=$(chunks rB goodset 2,3 2>/dev/null)
	[ "$gs" = yes ] && break
	sleep 2
done
check "R2: every chunk of rB ends with good copies on exactly 2 and 3 within 180 s ($gs)" test "$gs" = yes
chunks rB summary x >/dev/null
ctl mark r2.done
loop_end "R2: VM1's writer of rB across both deaths" "$job_w"
sB=$lastseed
region_state rB
check "R2: rB has $NCH degraded chunks (k=3, 2 homes left) and no lost one" \
	test "$(rnum rB "$J_DEGRADED")" = $NCH -a "$(rnum rB "$J_LOST")" = 0
check "R2: flush VM1's cache" flush
check "R2: VM1 verifies rB (seed $sB): exact" rio verify --name rB --seed "$sB" --order rand
if want R6; then
	out=$(ctl result -t 330 "$job_c" 2>&1) && rc=0 || rc=$?
	printf '%s\n' "$out" | comment
	check "R6: VM1's verify of rC begun as its last copy died ends, no bad byte, no zero" \
		test "$rc" = 0 -a -n "$(grep '^verify:.* bad=0 ' <<<"$out")"
	region_state rC
	check "R6: rC reports lost-chunks $NCH (every chunk)" test "$(rnum rC "$J_LOST")" = $NCH
	check "R6: flush VM1's cache" flush
	nobad "R6: VM1 verifies rC with both copies gone" --name rC --seed 600 --order seq
	check "R6: ... every page of rC SIGBUSes (${vsig:-?} of $NPG)" \
		test "${vsig:-0}" = $NPG -a "${vgood:-1}" = 0
	check "R6: VM1 releases rC" release rC
	stamp "R6 done"
fi
check "R2: VM1 releases rB" release rB
stamp "R2 done"
fi

# --- T. teardown
check "T: VM1 has no region left" gx 1 "! $RIO info --name rB >/dev/null 2>&1 && ! $RIO info --name r3 >/dev/null 2>&1"
for k in 2 3; do
	check "T: VM$k deletes its node and segment and unloads" \
		gx -t 120 $k "set -x; timeout 60 $H node del 1 && timeout 60 $H segment del && timeout 60 rmmod hbmpool"
done
check "T: VM1 (nodes set, dead and fenced ones too) unloads" gx -t 120 1 "timeout 60 rmmod hbmpool"
for k in 1 2 3; do
	check "T: VM$k's kernel log has no BUG, WARNING or KASAN report" klog_clean $k
done
stamp "checks done"
ctl stop
echo "1..$n"
[ "$fails" -eq 0 ]
