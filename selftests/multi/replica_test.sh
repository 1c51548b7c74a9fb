#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replicated regions (region_create.replicas = k) across 5 VMs of the
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
# HBMPOOL_FEAT_REPLICAS; the VMs are booted to find that out).
#
# Why 5 VMs: VM1 is the client (it serves no chunk of its regions), VM2..5
# are homes.  "node set N state fenced" is final (a fenced node comes back
# only as a new node entry), so the deaths are planned once: R3, R4 and R5
# only use homes 2 and 3 (cut, frozen, restarted, never fenced); then 5
# and 4 die one after the other, the second during the re-replication the
# first started, which is at the same time R2 (k=3 over 2..5), R1 (k=2 over
# 2,3,4, a writer on it: 4 is a copy's VM) and R6 (k=2 over 4,5: its last
# copy dies).  Six VMs would give R1 a death of its own, but under TCG on
# 2 host cores every VM costs (1 vCPU, 1 GiB each): five take about 8
# minutes here (458 s, the host lightly loaded; 6 VMs on a loaded host
# took over 20), the run's own count is its last "# [Ns] checks done".
#
# Set-up: every VM K is node K of domain "rig" (one random key), listens on
# 10.77.0.K:7070 and exports a 64 MiB segment; VM1 has nodes 2..5 (tcp,
# capacity 64M, distance 20, scaleout), each home has node 1 only (a star:
# the client's kernel does the copying; homes never talk to each other).
# VM1: cache budget 128 pages (512 KiB), fetch timeout 5000 ms.  Regions
# are 2 MiB in 256 KiB chunks (8 chunks; rB: 8 MiB in 1 MiB chunks),
# interleaved, held open by "regionio create --hold --replicas K", and
# checked by regionio write/verify (every word a function of seed, page and
# word: zeros and an older seed's bytes are bad).  The daemon is not used:
# the script plays the leader (it fences a dead node on VM1).  A link is
# "up" when its health is live or degraded (slow: these VMs are).
#
#   0 set-up: VMs up, domain joined, VM1's links to 2..5 and the homes'
#     links to 1 up within 90 s; HBMPOOL_FEAT_REPLICAS (else SKIP); a k=5
#     region is refused
#   R3 cut a copy's link mid-write-back: r3 (k=2 over 2,3) written round
#     after round (write + REGION_SYNC, then verify) while VM3's link is cut:
#     every round exact, one whole round after the cut; every chunk's copy
#     on 3 is outdated (outdated-node-id), 8 chunks degraded, none lost;
#     exact with 3 cut; restore: degraded-chunks 0 again (time printed),
#     every chunk 2 good copies on 2,3, exact
#   R4 freeze VM2 (at least 8 s, past the fetch timeout) while VM1 verifies
#     r4v (k=2 over 2,3) round after round: every round exact (one begun
#     in the freeze, one after the thaw); VM1 writes r4 (k=2 over 2,3)
#     with a new seed during the freeze: no error, and every chunk's copy
#     on 2 is outdated; VM3 cut before the thaw, so that only VM2's stale
#     copies are reachable: every page of r4 SIGBUSes (but the 16 a flush
#     may leave in the cache, good data), no bad byte (stale) and no zero;
#     restore: degraded-chunks 0, 2 good copies, exact
#   R5 VM3 killed and started again (new segment, new incarnation): r5
#     (k=2 over 2,3, written before the kill, not after) verifies exact with
#     VM3 dead; VM2 cut, VM3 back: its copies (zeros now) are not good
#     (good copies on 2 only, 8 chunks degraded) and never read: every
#     page SIGBUSes (but 16 cached), no bad byte, no zero; VM2 restored: degraded-chunks
#     0, 2 good copies on 2,3; VM2 cut again: VM3's new copies alone give
#     exact data
#   R1, R2, R6 (one act): rA (k=2 over 2,3,4) with a writer (write+verify
#     rounds, new seeds), rB (k=3 over 2,3,4,5) with a verifier, rC (k=2
#     over 4,5); re-replication limited (resync-mbps 1, resync-jobs 1);
#     kill VM5, fence 5 and at once kill VM4 (R2: the second death during
#     the first re-replication, 6 MiB at 1 MiB/s: replicate jobs must still
#     be copying right after the kill; R1: a copy's VM of rA); rounds of
#     both loops begun after the kill, then the fence of 4 and the limits
#     lifted:
#     R1: rA's degraded-chunks 0 within 180 s of the fence (time printed,
#       from the fence and from the kill), every chunk 2 good copies on
#       2,3, no lost chunk; every writer round exact (no SIGBUS, no bad
#       byte, no error), one after the re-replication;
#     R2: rB ends with good copies on exactly 2 and 3 (re-replication onto
#       the homes left), degraded-chunks 8 (k=3 cannot be met), lost 0;
#       every verifier round exact;
#     R6: a verify of rC begun right after VM4's kill (its last copy dead,
#       not fenced yet) ends with no bad byte; after the fence rC has
#       lost-chunks 8 and every page SIGBUSes (but 16 cached: good data),
#       none is a zero or stale;
#     then VM2 cut: rA and rB read from node 3 alone are exact
#   T teardown: regions released; VM2 and VM3 delete their node and
#     segment and unload; VM1 unloads (nodes still set, two of them dead
#     and fenced); no BUG, WARNING or KASAN report in VM1..VM3's kernel logs
#
# The JSON members the checks read are named once below (J_*), with the
# alternatives accepted; the hbmctl commands used: domain set, node set
# (addr, state fenced), node add, segment add/del, params set
# (cache-budget-pages, fetch-timeout-ms, resync-mbps, resync-jobs),
# -j link show, -j segment show, -j region show ID chunks (or --chunks),
# -j resync list.
#
# Environment: MULTI_TIMEOUT (whole run, default 1500 s), RIG_BUILD, KVER,
# RIG_KERNEL and HBMPOOL_KO (another kernel and its module),
# REPLICA_TEST_FREEZE (seconds, default 8), REPLICA_TEST_PLUMBING=1 (a dry
# run of the script's own plumbing on a module without replicas: regions
# get one copy, and the replica checks are expected to fail instead of the
# test skipping), REPLICA_TEST_ONLY (a list of R1 R3 R4 R5 to run; R1
# stands for the R1/R2/R6 act), REPLICA_TEST_HBMCTL (another hbmctl, an
# absolute path the guests see too).
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
rig=$repo/tools/rig
build=${RIG_BUILD:-$repo/build/rig}
RUN=replica

if [ "${1:-}" != --host ]; then
	[ -r "${HBMPOOL_KO:-$repo/kmod/hbmpool.ko}" ] || { echo "replica_test: ${HBMPOOL_KO:-kmod/hbmpool.ko} not built (make module)" >&2; exit 1; }
	[ -x "${REPLICA_TEST_HBMCTL:-$repo/tools/hbmctl/hbmctl}" ] || { echo "replica_test: ${REPLICA_TEST_HBMCTL:-tools/hbmctl/hbmctl} not built (make tools)" >&2; exit 1; }
	"$here/build-regionio.sh" "$build/regionio" || { echo "replica_test: cannot build regionio" >&2; exit 1; }
	# shellcheck source=selftests/multi/outer.sh
	. "$here/outer.sh"
	skipf=$build/multi-$RUN/skip
	rm -f "$skipf"
	rc=0
	MULTI_TIMEOUT=${MULTI_TIMEOUT:-1500} multi_outer $RUN 5 "$here/replica_test.sh" --shm 0 || rc=$?
	if [ $rc = 0 ] && [ -s "$skipf" ]; then
		echo "replica_test: SKIP: $(cat "$skipf")"
		exit 4
	fi
	exit $rc
fi

# --- host side, run by multi.sh -c ---
# shellcheck source=selftests/hbmpool/lib.sh
. "$repo/selftests/hbmpool/lib.sh"
# shellcheck source=selftests/multi/host_lib.sh
. "$repo/selftests/multi/host_lib.sh"
N=$MULTI_NODES
PORT=7070
RIO=$build/regionio		# the same path in the guests
H=${REPLICA_TEST_HBMCTL:-tools/hbmctl/hbmctl}	# the agents run in the repository
LOOP="env RIO=$RIO RIG_SYNC=$RIG_SYNC bash $here/replica_loop.sh"
SIZE=2M CHUNK=256K NCH=8	# NCH: chunks of a region (SIZE / CHUNK)
NPG=512				# pages of a region (SIZE / 4 KiB)
BSIZE=8M BCHUNK=1M		# R2's region: 8 chunks of 1 MiB
BUDGET=128 TIMEOUT_MS=5000
UP="live|degraded"		# a link that carries requests (degraded: slow)
FREEZE=${REPLICA_TEST_FREEZE:-8}
PLUMB=${REPLICA_TEST_PLUMBING:-0}
ONLY=${REPLICA_TEST_ONLY:-R1 R3 R4 R5}
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
J_COPY="copy-node-id|copy-node-ids"	# per chunk, multi: its good copies
J_OUTDATED="outdated-node-id|outdated-node-ids"	# per chunk, multi: the others
J_GOOD="good-copies|good_copies"	# per chunk
J_KIND="kind"				# resync list: move / replicate
J_STATE="state"				# resync list: copying / done / failed...

want() { [[ " $ONLY " == *" $1 "* ]]; }

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
# Its id goes to RID[NAME].
declare -A RID
hold() {
	local name=$1 nodes=$2 k=$3 size=${4:-$SIZE} chunk=${5:-$CHUNK} rep="" out rc=0
	[ -n "$REPL" ] && rep="--replicas $k"
	out=$(ctl exec 1 "setsid $RIO create --name $name --size $size --chunk $chunk --policy interleave --nodes $nodes $rep --hold --pidfile /tmp/hold.$name.pid >/tmp/hold.$name.log 2>&1 </dev/null &
for i in \$(seq 100); do grep -q holding /tmp/hold.$name.log && { cat /tmp/hold.$name.log; $RIO info --name $name; exit 0; }; sleep 0.1; done; cat /tmp/hold.$name.log; exit 1" 2>&1) || rc=$?
	printf '%s\n' "$out" | comment
	RID[$name]=$(sed -n 's/^region \([0-9]*\)$/\1/p' <<<"$out" | head -n 1)
	return $rc
}
# release NAME...: VM1's holders of every NAME exit; the regions are gone.
release() {
	local c="" n
	for n; do
		c="$c p=\$(cat /tmp/hold.$n.pid) && kill \$p && for i in \$(seq 100); do kill -0 \$p 2>/dev/null || break; sleep 0.1; done && ! kill -0 \$p 2>/dev/null &&"
	done
	gx 1 "$c true"
}
region_id() {
	if [ -n "${RID[$1]:-}" ]; then
		echo "${RID[$1]}"
	else
		q 1 "$RIO info --name $1" | sed -n 's/^region \([0-9]*\) .*/\1/p'
	fi
}
# FLUSH: evicts VM1's cache (a budget of 16 pages for a second), so that
# the next verify fetches every page; flush runs it.
FLUSH="$H params set cache-budget-pages 16 && sleep 1 && $H params set cache-budget-pages $BUDGET"
LEFT=16		# pages a flush may leave in the cache (good data, not fetched)
flush() { gx 1 "$FLUSH"; }
# rio [-t SECS] [-f] ARGS...: regionio ARGS in VM1 (-f: after a flush, in
# the same call), bounded in the guest too.
rio() {
	local t=240 f=""
	if [ "$1" = -t ]; then t=$2; shift 2; fi
	if [ "$1" = -f ]; then f="$FLUSH && "; shift; fi
	gx -t $((t + 30)) 1 "$f timeout -k 5 $t $RIO $*"
}
# rio_out [-t SECS] [-f] ARGS...: the same, its output on stdout (for
# parsing), its status returned.
rio_out() {
	local t=240 f=""
	if [ "$1" = -t ]; then t=$2; shift 2; fi
	if [ "$1" = -f ]; then f="$FLUSH && "; shift; fi
	ctl exec -t $((t + 30)) 1 "$f timeout -k 5 $t $RIO $*" 2>&1
}
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
# (copy-node-id lists a chunk's good copies, outdated-node-id the others:
# outdated, or on a fenced node or an old incarnation; a chunk without
# copy-node-id at all, on a kernel without replicas, has its node-id.)
#   hasset NODES   the chunks whose good copies are exactly NODES
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
    if get(c, "copy") is None and get(c, "good") is None and get(c, "node") is not None:
        copies = ids(get(c, "node"))
    out = ids(get(c, "outdated"))
    goodn = [x for x in copies if x not in out]
    copies = copies + [x for x in out if x not in copies]
    rows.append((c.get("index", -1), copies, out, goodn, get(c, "good"), bool(c.get("lost"))))
print("# chunks (index:copies/outdated/good-copies): " + " ".join("%s:%s/%s/%s%s" % (i, ",".join(map(str, cp)) or "-", ",".join(map(str, o)) or "-",
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
elif what == "hasset":
    nodes = sorted(set(int(x) for x in arg.split(",")))
    print(sum(1 for r in rows if sorted(r[3]) == nodes))
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
	echo "# $1 $(sed 's/^# //' /tmp/replica_chunkq.$$)" >&2
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
# repair_diag NAME...: what VM1 says about a repair that did not end: the
# regions' chunks (with any copy being filled), the resync jobs, the nodes
# and links, and the module's last kernel messages.
repair_diag() {
	local r id
	for r in "$@"; do
		id=$(region_id "$r")
		[ -n "$id" ] && q 1 "$H region show $id chunks" | comment
	done
	q 1 "$H resync list" | comment
	q 1 "$H node show" | comment
	q 1 "$H link show" | comment
	q 1 "dmesg | grep hbmpool | tail -n 60" | comment
}
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
			repair_diag "$@"
			return 1
		fi
		sleep 1
	done
}
# replicating: "A B STATES": replicate jobs copying now, replicate jobs in
# all, and how many are in each state.
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
st = [str(next((j[k] for k in sk if k in j), "?")) for j in rep]
print(st.count("copying"), len(rep), " ".join("%s=%d" % (x, st.count(x)) for x in sorted(set(st))))
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
# nobad WHAT ARGS...: a flush, then regionio verify ARGS --allow-sigbus in
# VM1: exit 0
# (no bad byte, every page good or SIGBUS); the counts in $vgood, $vsig.
vgood=-1 vsig=-1
nobad() {
	local what=$1 out rc=0
	shift
	out=$(rio_out -f verify "$@" --allow-sigbus) || rc=$?
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
grep -q '^replicas \(yes\|no\)$' <<<"$feat" || bail "cannot read VM1's module features (regionio features)"
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
	gx 1 "! $RIO create --name big --size $SIZE --chunk $CHUNK --nodes 2,3,4,5 --replicas 5"
stamp "set-up done"

# --- R3. cut a copy's link during write-back
if want R3; then
check "R3: VM1 holds r3 (k=2 over 2,3)" hold r3 2,3 2
check "R3: r3 has replicas 2" test "$(rnum r3 "$J_REPLICAS")" = 2
check "R3: every chunk of r3 has 2 good copies, on 2 and 3" test "$(chunks r3 good "2 2,3")" = yes
check "R3: VM1 writes r3 (seed 300), verifies it (exact) and flushes its cache" \
	rio write --name r3 --seed 300 "&&" "$RIO" verify --name r3 --seed 300 --order rand "&&" "$FLUSH"
job_w=$(loop wv r3 300 r3)
check "R3: VM1's writer of r3 runs" begun "$job_w"
check "R3: cut VM3's link while VM1 writes r3" ctl cut 3
ctl mark r3.dead
ctl mark r3.done
loop_end "R3: VM1's writer of r3 across the cut" "$job_w"
s3=$lastseed
check "R3: VM1's link to 3 is down (not live)" wait_links 60 "down|connecting" 1:3
js=$(rshow r3)
o3=$(chunkq outdated 3 <<<"$js")
check "R3: every chunk's copy on node 3 is outdated ($o3 of $NCH)" test "$o3" = $NCH
d=$(jval "$J_DEGRADED" <<<"$js") l=$(jval "$J_LOST" <<<"$js")
check "R3: r3 has $NCH degraded chunks ($d), none lost ($l)" test "$d" = $NCH -a "$l" = 0
check "R3: VM1 verifies r3 (seed $s3) with 3 cut: exact" rio -f verify --name r3 --seed "$s3" --order rand
check "R3: restore VM3's link" ctl restore 3
check "R3: VM1's link to 3 is up again within 60 s" wait_links 60 "$UP" 1:3
wait_degraded 120 0 r3; r=$?
check "R3: r3's degraded-chunks back to 0 within 120 s of the restore (${waited}s)" test $r = 0
echo "# R3: repair after the restore took ${waited}s (polled every second)"
check "R3: every chunk of r3 has 2 good copies on 2,3 again" test "$(chunks r3 good "2 2,3")" = yes
check "R3: VM1 verifies r3: exact" rio -f verify --name r3 --seed "$s3" --order seq
check "R3: VM1 releases r3" release r3
stamp "R3 done"
fi

# --- R4. freeze a copy's VM past the fetch timeout
if want R4; then
check "R4: VM1 holds r4 (k=2 over 2,3)" hold r4 2,3 2
check "R4: VM1 holds r4v (k=2 over 2,3)" hold r4v 2,3 2
check "R4: VM1 writes r4 (seed 400) and r4v (seed 410)" \
	rio write --name r4 --seed 400 "&&" "$RIO" write --name r4v --seed 410 "&&" "$FLUSH"
job_v=$(loop v r4v 410 r4)
check "R4: VM1's verifier of r4v runs" begun "$job_v"
check "R4: freeze VM2" ctl freeze 2
ctl mark r4.dead
tf=$SECONDS
# r4 written (every page, then REGION_SYNC) while VM2 is frozen: the
# write-backs to 2 cannot complete, so its copies must end outdated
out=$(ctl exec -t 330 1 "timeout -k 5 300 $RIO write --name r4 --seed 401" 2>&1) && rc=0 || rc=$?
printf '%s\n' "$out" | comment
check "R4: VM1 writes r4 (seed 401) with VM2 frozen: no error ($((SECONDS - tf))s)" test "$rc" = 0
o2=$(chunks r4 outdated 2)
check "R4: every chunk's copy of r4 on the frozen node 2 is outdated ($o2 of $NCH)" test "$o2" = $NCH
# VM3 cut before the thaw: VM2's copies, which missed the write (seed 400
# there), are all VM1 can reach, and no repair can start (no good copy is
# reachable): reading them would be reading stale bytes
check "R4: cut VM3's link (VM2 still frozen)" ctl cut 3
sleep $((FREEZE - (SECONDS - tf) > 0 ? FREEZE - (SECONDS - tf) : 0))
check "R4: thaw VM2 after $((SECONDS - tf))s (fetch timeout ${TIMEOUT_MS} ms)" ctl thaw 2
ctl mark r4.done
loop_end "R4: VM1's verifier of r4v across the freeze" "$job_v"
nobad "R4: VM1 reads r4 with only the thawed VM2's outdated copies reachable" --name r4 --seed 401 --order rand
check "R4: ... every page not left in VM1's cache by the flush ($LEFT at most) SIGBUSes: no fetch from an outdated copy (${vsig:-?} of $NPG)" \
	test "${vsig:-0}" -ge $((NPG - LEFT))
check "R4: restore VM3's link" ctl restore 3
check "R4: links to 2 and 3 up within 60 s" wait_links 60 "$UP" 1:2 1:3 2:1 3:1
wait_degraded 120 0 r4; r=$?
check "R4: r4's degraded-chunks 0 within 120 s (${waited}s)" test $r = 0
check "R4: every chunk of r4 has 2 good copies on 2,3" test "$(chunks r4 good "2 2,3")" = yes
check "R4: VM1 verifies r4: exact" rio -f verify --name r4 --seed 401 --order rev
check "R4: VM1 verifies r4v: exact" rio verify --name r4v --seed 410 --order seq
check "R4: VM1 releases r4 and r4v" release r4 r4v
stamp "R4 done"
fi

# --- R5. a home comes back with a new incarnation
if want R5; then
check "R5: VM1 holds r5 (k=2 over 2,3)" hold r5 2,3 2
check "R5: VM1 writes r5 (seed 500) and verifies it: exact" \
	rio write --name r5 --seed 500 "&&" "$RIO" verify --name r5 --seed 500
inc0=$(hj 3 "$J_INCARNATION" segment show)
check "R5: flush VM1's cache" flush
check "R5: kill VM3" ctl kill 3
check "R5: VM1 verifies r5 with VM3 dead: exact (fail-over to 2)" rio verify --name r5 --seed 500 --order rand
region_state r5
# VM2 cut before VM3 is back: no repair can start (no good copy is
# reachable), and VM3's copies of the old incarnation (zeros now) are all
# VM1 can reach
check "R5: cut VM2's link" ctl cut 2
check "R5: start VM3 again" ctl start -t 400 3
check "R5: VM3's agent runs again" ctl agents -t 120 3
check "R5: VM3 joins the domain again" setup 3
inc1=$(hj 3 "$J_INCARNATION" segment show)
check "R5: VM3's new segment has a new incarnation ($inc0 -> $inc1)" \
	test -n "$inc0" -a -n "$inc1" -a "$inc0" != "$inc1"
check "R5: VM1's link to 3 is up within 60 s" wait_links 60 "$UP" 1:3 3:1
check "R5: no chunk of r5 has a good copy on the new VM3 (good copies: 2 only)" \
	test "$(chunks r5 goodset 2)" = yes
check "R5: r5 has $NCH degraded chunks, none lost" \
	test "$(rnum r5 "$J_DEGRADED")" = $NCH -a "$(rnum r5 "$J_LOST")" = 0
nobad "R5: VM1 reads r5 with 2 cut and 3 new" --name r5 --seed 500 --order rand
check "R5: ... every page not left in VM1's cache by the flush ($LEFT at most) SIGBUSes: no fetch from VM3's new segment (${vsig:-?} of $NPG)" \
	test "${vsig:-0}" -ge $((NPG - LEFT))
check "R5: restore VM2's link" ctl restore 2
check "R5: links to 2 and 3 up within 60 s" wait_links 60 "$UP" 1:2 1:3 2:1 3:1
wait_degraded 180 0 r5; r=$?
check "R5: r5's degraded-chunks 0 within 180 s of the restore (${waited}s)" test $r = 0
check "R5: every chunk of r5 has 2 good copies on 2,3" test "$(chunks r5 good "2 2,3")" = yes
check "R5: cut VM2's link again" ctl cut 2
check "R5: VM1 verifies r5 from VM3's new copies alone: exact" rio -f verify --name r5 --seed 500 --order seq
check "R5: restore VM2's link" ctl restore 2
check "R5: VM1's link to 2 up within 60 s" wait_links 60 "$UP" 1:2
check "R5: VM1 releases r5" release r5
stamp "R5 done"
fi

# --- R1, R2, R6. Two homes die, the second during the re-replication
# that the first started: for rB (k=3 over 2,3,4,5) that is R2, for rA (k=2
# over 2,3,4: a writer runs on it) the second death is R1's, and rC (k=2
# over 4,5) loses its last copy (R6).  A verifier runs on rB throughout.
if want R1; then
check "R1: VM1 holds rA (k=2 over 2,3,4)" hold rA 2,3,4 2
check "R2: VM1 holds rB (k=3 over 2,3,4,5, 8 MiB in 1 MiB chunks)" hold rB 2,3,4,5 3 $BSIZE $BCHUNK
check "R6: VM1 holds rC (k=2 over 4,5)" hold rC 4,5 2
check "R1: every chunk of rA has 2 good copies on distinct nodes of 2,3,4" test "$(chunks rA good "2 2,3,4")" = yes
h4=$(chunks rA holds 4)
check "R1: node 4 holds copies of rA ($h4 chunks)" gt "$h4" 0
check "R2: rB has replicas 3" test "$(rnum rB "$J_REPLICAS")" = 3
check "R2: every chunk of rB has 3 good copies on distinct nodes of 2..5" test "$(chunks rB good "3 2,3,4,5")" = yes
check "R6: every chunk of rC has 2 good copies on 4,5" test "$(chunks rC good "2 4,5")" = yes
check "R1: VM1 writes rA (seed 100), rB (seed 200) and rC (seed 600), verifies rC (exact)" \
	rio write --name rA --seed 100 "&&" "$RIO" write --name rB --seed 200 "&&" \
	"$RIO" write --name rC --seed 600 "&&" "$RIO" verify --name rC --seed 600
check "R2: VM1 limits re-replication (resync-mbps 1, resync-jobs 1) and flushes its cache" \
	gx 1 "$H params set resync-mbps 1 resync-jobs 1 && $FLUSH"
job_w=$(loop wv rA 100 r1)
job_v=$(loop v rB 200 r1)
check "R1: VM1's writer of rA runs" begun "$job_w"
check "R2: VM1's verifier of rB runs" begun "$job_v"
check "R2: kill VM5 (copies of rB and rC)" ctl kill 5
check "R2: VM1's link to 5 leaves live within 60 s" wait_links 60 "down|connecting" 1:5
check "R2: VM1 fences node 5 (the leader's decision, played by the test)" gx 1 "$H node set 5 state fenced"
# at once: 6 MiB of rB to copy at 1 MiB/s, one job at a time
check "R1: kill VM4 during the re-replication (copies of rA, rB, rC)" ctl kill 4
tk=$SECONDS
ctl mark r1.dead
rj=$(replicating)
check "R2: replicate jobs were still copying right after the kill (copying, all, states: $rj)" gt "${rj%% *}" 0
# rC's last copy (on 4) is dead and not fenced yet: a verify now
job_c=$(ctl spawn 1 "timeout -k 5 300 $RIO verify --name rC --seed 600 --order rand --allow-sigbus")
check "R1: VM1's link to 4 leaves live within 60 s" wait_links 60 "down|connecting" 1:4
check "R1: the writer of rA did a round begun after the kill, within 300 s" wait_rounds 300 "$job_w" "after=1"
check "R2: the verifier of rB did a round begun after the kill, within 300 s" wait_rounds 300 "$job_v" "after=1"
check "R1: VM1 fences node 4" gx 1 "$H node set 4 state fenced"
tf=$SECONDS
check "R1: VM1 lifts the re-replication limits" gx 1 "$H params set resync-mbps 0 resync-jobs 4"
echo "# R2: replicate jobs after the fence of 4 (copying, all, states): $(replicating)"
wait_degraded 180 0 rA; r=$?
check "R1: rA's degraded-chunks 0 within 180 s of the fence (${waited}s)" test $r = 0
echo "# R1: re-replication: k=2 again ${waited}s after the fence, $((SECONDS - tk))s after the kill (polled every second)"
check "R1: every chunk of rA has 2 good copies on 2,3" test "$(chunks rA good "2 2,3")" = yes
end=$((SECONDS + 180))
gs=""
while [ $SECONDS -lt $end ]; do
	gs=$(chunks rB goodset 2,3 2>/dev/null)
	[ "$gs" = yes ] && break
	sleep 2
done
check "R2: every chunk of rB ends with good copies on exactly 2 and 3 within 180 s ($gs)" test "$gs" = yes
ctl mark r1.done
loop_end "R1: VM1's writer of rA (k=2) across both deaths" "$job_w"
sA=$lastseed
loop_end "R2: VM1's verifier of rB (k=3) across both deaths" "$job_v"
js=$(rshow rB)
d=$(jval "$J_DEGRADED" <<<"$js") l=$(jval "$J_LOST" <<<"$js")
check "R2: rB has $NCH degraded chunks ($d: k=3, 2 homes left) and no lost one ($l)" test "$d" = $NCH -a "$l" = 0
check "R1: rA has no lost chunk" test "$(rnum rA "$J_LOST")" = 0
out=$(ctl result -t 330 "$job_c" 2>&1) && rc=0 || rc=$?
printf '%s\n' "$out" | comment
check "R6: VM1's verify of rC begun as its last copy died ends, no bad byte, no zero" \
	test "$rc" = 0 -a -n "$(grep '^verify:.* bad=0 ' <<<"$out")"
region_state rC
check "R6: rC reports lost-chunks $NCH (every chunk)" test "$(rnum rC "$J_LOST")" = $NCH
nobad "R6: VM1 reads rC with both copies gone" --name rC --seed 600 --order seq
check "R6: ... every page of rC not left in VM1's cache by the flush ($LEFT at most) SIGBUSes (${vsig:-?} of $NPG)" \
	test "${vsig:-0}" -ge $((NPG - LEFT))
check "R1: cut VM2's link (the copies on 3 alone)" ctl cut 2
check "R1: VM1 verifies rA (seed $sA) from node 3 alone: exact" rio -f verify --name rA --seed "$sA" --order rand
check "R2: VM1 verifies rB from node 3 alone: exact" rio verify --name rB --seed 200 --order rev
check "R1: restore VM2's link" ctl restore 2
check "R1: VM1's link to 2 up within 60 s" wait_links 60 "$UP" 1:2
check "R1: VM1 releases rA, rB and rC" release rA rB rC
stamp "R1, R2, R6 done"
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
