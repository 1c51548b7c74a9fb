#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replicated regions over the TCP transport, 4 VMs ('make bench-replica'):
# node loss to served-again time, re-replication throughput against iperf3,
# and the write-back cost of k = 2 and 3 copies against 1, every figure a
# ratio to a baseline measured in the same run.  Run on the host: it boots
# 4 VMs with tools/rig/multi.sh (run name replbench), each running
# multi-agent.sh, and drives them from the host side (this script again,
# with --host), as tools/rig/bench-tcp.sh does.  Needs the VM lock like any
# VM run: flock /tmp/hbmpool-vm.lock tools/rig/bench-replica.sh
#
# Setup: hbmpool.ko in every VM, one domain (a random key in $RIG_SYNC), VM K
# is node K at 10.77.0.K:7070 with a 256M segment; VM1 (the client) has the
# homes 2, 3, 4 as tcp nodes (scaleout), each home has node 1 (a star, as in
# selftests/multi/replica_test.sh: the client's kernel does every copy).
# VM1's fetch-timeout-ms is BENCH_REPL_TIMEOUT_MS (default 2000),
# resync-mbps 0 (unlimited).
#
# Steps, in this order:
#   iperf3 A   VM3 -> VM4 (home to home, -t 5) and VM3 -> VM1 (-R, the
#              client's link, the way fetches go), then
#   (c) write-back cost: VM1: tools/hbmbench --nodes 2,3,4 --replicas 3
#              --only-replicas --size WB_SIZE --passes WB_PASSES
#              --iterations 1: write + REGION_SYNC of regions with 1, 2, 3
#              copies, each k >= 2 next to a k = 1 run, the order
#              alternating per pass (hbmbench's wb_kN phases)
#   (a) stall: tools/bench/replica_probe (built here, on the host, into
#              $RIG_BUILD/replica_probe) on VM1 creates region P (SIZE,
#              CHUNK chunks, interleave over 2,3,4, k = 2), fills it, syncs,
#              then reads one word of every page in a loop with the cache
#              budget at 64 pages (nearly every access a fetch), timing
#              each access.  Epochs, started by the host: 0 warm-up (the
#              reader starts with the region in the cache); 1 baseline, from
#              the budget's change (8 s); 2 "cut": VM2's NIC down
#              (multi-ctl.sh cut), for timeout + 6 s; 3 VM2's NIC up again,
#              until VM1's link to 2 is live + 3 s; 4 "kill": VM2 quit
#              through QMP, for timeout + 6 s.  Per epoch
#              the longest access, p50, p99, bad words and SIGBUSes; the
#              stall of a scenario is its epoch's longest access, reported
#              against fetch-timeout-ms + 100 ms (the issue's goal) and
#              against the baseline epoch's longest access
#   (b) re-replication: the reader stops (the region stays), then in one
#              command on VM1: node 2 fenced, degraded-chunks of P polled
#              (every 250 ms: the poll costs VM1's one vCPU too) until 0;
#              then the jobs' ELAPSED-MS (resync list).  Bytes = P's chunks
#              that had a copy
#              on 2 (region show before the kill) x CHUNK; MB/s = bytes /
#              time from the fence; against iperf3 (A and B, both pairs)
#   iperf3 B   the same as A, in the reverse order (VM3 -> VM1, then VM3
#              -> VM4), after the re-replication
#
# Output: a summary (table, then key=value lines replica.KEY=V) on stdout and
# in $RIG_BUILD/bench-replica.txt; the raw outputs (iperf3 JSON, hbmbench,
# probe, region show before/after, dmesg) in $RIG_BUILD/bench-replica/.
# Numbers only: nothing here asserts on timing.  Exit status non-zero when a
# step failed or a guest kernel log shows a bug (multi.sh).
#
# Environment: BENCH_REPL_SIZE (region P, default 16M), BENCH_REPL_CHUNK
# (default 512K), BENCH_REPL_TIMEOUT_MS (VM1's fetch-timeout-ms, default
# 2000), BENCH_REPL_WB_SIZE (hbmbench regions, default 4M),
# BENCH_REPL_WB_PASSES (default 4), BENCH_REPL_CUT (1: the cut scenario
# before the kill, default 1), MULTI_TIMEOUT (the whole run, default
# 1800 s), RIG_BUILD, RIG_PREALLOC (default 1).
set -u
# guest memory backed on the host before boot (vm.sh --prealloc)
export RIG_PREALLOC=${RIG_PREALLOC:-1}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
rig=$repo/tools/rig
build=${RIG_BUILD:-$repo/build/rig}
probe=$build/replica_probe

if [ "${1:-}" != --host ]; then
	for f in kmod/hbmpool.ko tools/hbmbench tools/hbmctl/hbmctl; do
		[ -e "$repo/$f" ] || { echo "bench-replica: $f is not built (make module all)" >&2; exit 1; }
	done
	command -v iperf3 >/dev/null || { echo "bench-replica: no iperf3 (make deps)" >&2; exit 1; }
	mkdir -p "$build"
	l=$repo/tools/lib
	nl=$(pkg-config --cflags libnl-genl-3.0 2>/dev/null || echo -I/usr/include/libnl3)
	# shellcheck disable=SC2086 # a list of words
	${CC:-cc} -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I"$repo/uapi" -I"$l" $nl \
		-o "$probe" "$repo/tools/bench/replica_probe.c" "$l/hbmlib.c" "$l/hbmsys.c" "$l/hbmnl.c" \
		-lnl-genl-3 -lnl-3 || { echo "bench-replica: cannot build $probe" >&2; exit 1; }
	rc=0
	"$rig/multi.sh" -r replbench -n 4 --shm 0 -t "${MULTI_TIMEOUT:-1800}" \
		-c "$here/bench-replica.sh --host" -- "$rig/multi-agent.sh" || rc=$?
	log=$build/multi-replbench/host.log
	if [ "$rc" != 0 ]; then
		echo "bench-replica: the run failed (exit $rc); host side: $log" >&2
		tail -20 "$log" >&2
	fi
	exit $rc
fi

# --- host side, run by multi.sh -c
cd "$repo" || exit 1
ctl() { "$rig/multi-ctl.sh" "$@"; }
die() { echo "bench-replica: $*" >&2; ctl stop; exit 1; }
say() { echo "bench-replica: [$((SECONDS))s] $*"; }
raw=$build/bench-replica
summary=$build/bench-replica.txt
rm -rf "$raw"
mkdir -p "$raw"
H=tools/hbmctl/hbmctl
size=${BENCH_REPL_SIZE:-16M}
chunk=${BENCH_REPL_CHUNK:-512K}
to_ms=${BENCH_REPL_TIMEOUT_MS:-2000}
wb_size=${BENCH_REPL_WB_SIZE:-4M}
wb_passes=${BENCH_REPL_WB_PASSES:-4}
do_cut=${BENCH_REPL_CUT:-1}
victim=2
pdir=$RIG_SYNC/probe
kv=$raw/kv.txt
: >"$kv"
put() { echo "replica.$1=$2" >>"$kv"; }
failed=0

ctl agents -t 600 1 2 3 4 || die "the VMs' agents did not come up"
head -c 32 /dev/urandom >"$RIG_SYNC/key"
for k in 1 2 3 4; do
	cmd="insmod kmod/hbmpool.ko && $H domain set name rig self $k key-file $RIG_SYNC/key &&
		$H node set $k addr 10.77.0.$k port 7070 && $H segment add 256M"
	if [ $k = 1 ]; then
		for j in 2 3 4; do
			cmd="$cmd && $H node add $j capacity 256M distance 20 transport tcp link scaleout addr 10.77.0.$j port 7070"
		done
		cmd="$cmd && $H params set fetch-timeout-ms $to_ms resync-mbps 0"
	else
		cmd="$cmd && $H node add 1 capacity 256M distance 20 transport tcp link scaleout addr 10.77.0.1 port 7070"
	fi
	ctl exec -t 180 $k "$cmd" || die "VM$k: the hbmpool setup failed"
done

# link_live K J: VM K's link to node J is live (one check).
link_live() { ctl exec "$1" "$H -j link show $2" 2>/dev/null | grep -q '"health": *"live"'; }
wait_live() {	# SECS K:J...
	local end=$((SECONDS + $1)) p
	shift
	for p in "$@"; do
		until link_live "${p%:*}" "${p#*:}"; do
			[ $SECONDS -lt $end ] || return 1
			sleep 1
		done
	done
}
wait_live 180 1:2 1:3 1:4 2:1 3:1 4:1 || die "links not live after 180 s: $(ctl exec 1 "$H link show" 2>&1)"
say "links 1<->2,3,4 live"
to_ms=$(ctl exec 1 'cat /sys/kernel/hbmpool/fetch_timeout_ms' 2>/dev/null | tr -d '\r')
put fetch_timeout_ms "${to_ms:-?}"
ctl exec 1 "$H link show; $H node show; $H params show" >"$raw/setup.txt" 2>&1

# iperf3 servers on VM1 and VM4 (VM3 is the client of both runs).
for k in 1 4; do
	ctl exec $k 'setsid iperf3 -s -p 5201 >/tmp/iperf3-s.log 2>&1 </dev/null & echo $! >/tmp/iperf3-s.pid' >/dev/null ||
		die "VM$k: iperf3 -s did not start"
done
sleep 1
iperf_mbps() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print("%.2f" % (d["end"]["sum_received"]["bits_per_second"] / 8e6))' "$1" 2>/dev/null
}
run_iperf() {	# $1: A or B
	local o
	if [ "$1" = A ]; then o="hh cl"; else o="cl hh"; fi
	for w in $o; do
		case $w in
		hh) ctl exec -t 90 3 'iperf3 -c 10.77.0.4 -p 5201 -t 5 -J' >"$raw/iperf3.$1.home-home.json" 2>&1 ;;
		cl) ctl exec -t 90 1 'iperf3 -c 10.77.0.3 -p 5201 -t 5 -R -J' >"$raw/iperf3.$1.client.json" 2>&1 ;;
		esac
	done
}
# VM3 has no server for the client's run (-R: VM1 connects to VM3).
ctl exec 3 'setsid iperf3 -s -p 5201 >/tmp/iperf3-s.log 2>&1 </dev/null & echo $! >/tmp/iperf3-s.pid' >/dev/null ||
	die "VM3: iperf3 -s did not start"
sleep 1
ctl exec 1 'busybox ping -c 10 -q 10.77.0.3' >"$raw/ping.txt" 2>&1
put ping_avg_ms "$(sed -n 's|.*min/avg/max = [0-9.]*/\([0-9.]*\)/.*|\1|p' "$raw/ping.txt")"

say "iperf3 A"
run_iperf A

# (c) write-back cost of k = 2, 3 against k = 1.
say "hbmbench --replicas 3"
wbf=$raw/hbmbench.txt
ctl exec -t 1500 1 "tools/hbmbench --nodes 2,3,4 --replicas 3 --only-replicas --size $wb_size --passes $wb_passes --iterations 1" \
	>"$wbf" 2>&1 || { echo "bench-replica: hbmbench failed:"; tail -5 "$wbf"; failed=1; }
hb() { sed -n "s/^$1=//p" "$wbf" | head -1; }
for key in wb_k2_vs_wb_k1 wb_k2_vs_wb_k1_sync wb_k3_vs_wb_k1 wb_k3_vs_wb_k1_sync; do
	for ((p = 1; p <= wb_passes; p++)); do
		put "wb.$key.pass$p" "$(hb "goal.$key.pass$p")"
	done
	put "wb.$key.median" "$(hb "goal.$key.median")"
done
for ph in wb_k1 wb_k2 wb_k3; do
	put "wb.mbps.$ph" "$(hb "mbps.$ph")"
	put "wb.sync_mbps.$ph" "$(hb "sync_mbps.$ph")"
done

# (a) the stall.
say "probe: region P ($size, $chunk chunks, k=2 over 2,3,4)"
rm -rf "$pdir"
mkdir -p "$pdir"
ctl exec 1 "setsid $probe --dir $pdir --size $size --chunk $chunk --nodes 2,3,4 --replicas 2 >/tmp/probe.log 2>&1 </dev/null & echo \$! >/tmp/probe.pid" >/dev/null ||
	die "VM1: the probe did not start"
for ((i = 0; i < 600; i++)); do
	[ -e "$pdir/ready" ] && break
	# shellcheck disable=SC2016 # expanded in the guest
	ctl exec 1 'kill -0 $(cat /tmp/probe.pid)' >/dev/null 2>&1 || die "the probe died: $(ctl exec 1 'cat /tmp/probe.log')"
	sleep 1
done
[ -e "$pdir/ready" ] || die "the probe is not ready after 600 s"
rid=$(sed -n 's/^ready region \([0-9]*\) .*/\1/p' "$pdir/ready")
say "probe ready: $(cat "$pdir/ready")"
ctl exec 1 "$H params set cache-budget-pages 64" || die "VM1: cache-budget-pages 64 refused"
ctl exec 1 "$H -j region show $rid chunks" >"$raw/region.before.json" 2>&1
nvict=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = d[0] if isinstance(d, list) else d
ch = r.get("chunk") or r.get("chunks") or []
def ids(v):
    return [] if v is None else [int(x) for x in (v if isinstance(v, list) else [v])]
print(sum(1 for c in ch if int(sys.argv[2]) in ids(c.get("copy-node-id")) + ids(c.get("outdated-node-id"))))
' "$raw/region.before.json" $victim 2>/dev/null)
put size "$size"
put chunk "$chunk"
put chunks_on_victim "${nvict:-?}"

mark=0
next_mark() { mark=$((mark + 1)); : >"$pdir/mark.$mark"; }
hold_s=$(((to_ms + 999) / 1000 + 6))
# The reader ran on a warm cache until now: the baseline starts here.
next_mark
base_epoch=$mark
sleep 8
if [ "$do_cut" = 1 ]; then
	say "cut VM$victim's NIC (epoch $((mark + 1)))"
	next_mark
	cut_epoch=$mark
	ctl cut $victim || { echo "bench-replica: cut failed"; failed=1; }
	sleep $hold_s
	ctl restore $victim || { echo "bench-replica: restore failed"; failed=1; }
	next_mark
	say "restored (epoch $mark)"
	wait_live 120 1:$victim || { echo "bench-replica: VM1's link to $victim not live 120 s after the restore"; failed=1; }
	sleep 3
fi
next_mark
kill_epoch=$mark
say "kill VM$victim (epoch $mark)"
ctl kill $victim || die "kill of VM$victim failed"
sleep $hold_s
: >"$pdir/stop"
for ((i = 0; i < 120; i++)); do
	[ -e "$pdir/result" ] && break
	sleep 1
done
[ -e "$pdir/result" ] || die "no result from the probe: $(ctl exec 1 'cat /tmp/probe.log')"
cp "$pdir/result" "$raw/probe.result.txt"
ep() { sed -n "s/^epoch $1 .*\b$2=\([0-9]*\).*/\1/p" "$pdir/result"; }
base_max=$(ep $base_epoch max_ns)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b > 0) printf "%.3f", a / b; else print "?" }'; }
for sc in baseline cut restored kill; do
	case $sc in
	baseline) e=$base_epoch ;;
	cut) [ "$do_cut" = 1 ] || continue; e=$cut_epoch ;;
	restored) [ "$do_cut" = 1 ] || continue; e=$((cut_epoch + 1)) ;;
	kill) e=$kill_epoch ;;
	esac
	for f in n p50_ns p99_ns max_ns max_at_ms bad sigbus dur_ms; do
		put "stall.$sc.$f" "$(ep "$e" $f)"
	done
	mx=$(ep "$e" max_ns)
	put "stall.$sc.ratio_vs_timeout_plus_100ms" "$(ratio "$mx" $(((to_ms + 100) * 1000000)))"
	put "stall.$sc.ratio_vs_baseline_max" "$(ratio "$mx" "$base_max")"
done

# (b) re-replication from the fence until degraded-chunks is 0.
say "fence node $victim; re-replication of region $rid"
ctl exec -t 900 1 "t0=\$(date +%s%N); $H node set $victim state fenced || exit 1
	d=-1; while :; do
		d=\$($H -j region show $rid | grep -o '\"degraded-chunks\": *[0-9]*' | grep -o '[0-9]*\$')
		[ \"\$d\" = 0 ] && break
		[ \$(( (\$(date +%s%N) - t0) / 1000000000 )) -ge 800 ] && { echo timeout degraded=\$d; exit 1; }
		sleep 0.25
	done; echo rerepl_ms=\$(( (\$(date +%s%N) - t0) / 1000000 ))" >"$raw/rerepl.txt" 2>&1 ||
	{ echo "bench-replica: re-replication did not end: $(cat "$raw/rerepl.txt")"; failed=1; }
ctl exec 1 "$H -j region show $rid chunks" >"$raw/region.after.json" 2>&1
rr_ms=$(sed -n 's/^rerepl_ms=//p' "$raw/rerepl.txt")
chunk_b=$(numfmt --from=iec "$chunk")
rr_bytes=$(( ${nvict:-0} * chunk_b ))
rr_mbps=$(awk -v b="$rr_bytes" -v ms="${rr_ms:-0}" 'BEGIN { if (ms > 0) printf "%.2f", b / (ms / 1000) / 1e6; else print "?" }')
put rerepl.ms "${rr_ms:-?}"
put rerepl.bytes "$rr_bytes"
put rerepl.mbps "$rr_mbps"
ctl exec 1 "$H resync list" >"$raw/resync.txt" 2>&1
# The replicate jobs: count, sum and max of ELAPSED-MS.
read -r njobs jsum jmax < <(awk '$2 == "replicate" && $7 == "done" { n++; s += $(NF - 1); if ($(NF - 1) > m) m = $(NF - 1) }
	END { printf "%d %d %d\n", n, s, m }' "$raw/resync.txt")
put rerepl.jobs "$njobs"
put rerepl.job_ms_sum "$jsum"
put rerepl.job_ms_max "$jmax"
put rerepl.job_mbps_mean "$(awk -v n="$njobs" -v s="$jsum" -v c="$(numfmt --from=iec "$chunk")" 'BEGIN { if (s > 0) printf "%.3f", n * c / (s / 1000) / 1e6; else print "?" }')"

say "iperf3 B"
run_iperf B
for p in A B; do
	hh=$(iperf_mbps "$raw/iperf3.$p.home-home.json")
	cl=$(iperf_mbps "$raw/iperf3.$p.client.json")
	if [ -z "$hh" ] || [ -z "$cl" ]; then
		echo "bench-replica: iperf3 $p: no result"
		failed=1
	fi
	put "iperf3.$p.home_home_mbps" "${hh:-?}"
	put "iperf3.$p.client_mbps" "${cl:-?}"
	put "rerepl.ratio_vs_home_home.$p" "$(ratio "$rr_mbps" "$hh")"
	put "rerepl.ratio_vs_client.$p" "$(ratio "$rr_mbps" "$cl")"
done

# The kernel's view, then teardown.
for k in 1 3 4; do
	ctl exec $k "$H link show; $H resync list; dmesg" >"$raw/vm$k.dmesg.txt" 2>&1
done
: >"$pdir/release"
# shellcheck disable=SC2016 # expanded in the guest
ctl exec -t 60 1 'p=$(cat /tmp/probe.pid); for i in $(seq 100); do kill -0 $p 2>/dev/null || exit 0; sleep 0.2; done; kill $p; exit 1' >/dev/null 2>&1
for k in 3 4 1; do
	# shellcheck disable=SC2016 # expanded in the guest
	ctl exec -t 120 $k 'kill $(cat /tmp/iperf3-s.pid) 2>/dev/null; rmmod hbmpool' >"$raw/vm$k.rmmod.txt" 2>&1 ||
		{ echo "bench-replica: VM$k: rmmod failed: $(cat "$raw/vm$k.rmmod.txt")"; failed=1; }
done

g() { sed -n "s/^replica\.$1=//p" "$kv" | head -1; }
{
	echo "bench-replica: $(date -u +%Y-%m-%dT%H:%MZ), kernel $(ctl exec 1 'uname -r' 2>/dev/null), 4 VMs (TCG, 1 vCPU each, memory preallocated: $RIG_PREALLOC), commit $(git -C "$repo" describe --always --dirty 2>/dev/null)"
	echo "VM1 client, VM2..4 homes over TCP; fetch-timeout-ms ${to_ms:-?}; region P $size in $chunk chunks, k=2 over 2,3,4; victim VM$victim"
	echo
	echo "(a) node loss -> served again (longest single access of the reader; goal: <= timeout + 100 ms)"
	printf '%-10s %8s %10s %10s %10s %9s %9s %5s %6s\n' epoch accesses p50_ns p99_ns max_ms "max/(to+100)" "max/base" bad sigbus
	for sc in baseline cut restored kill; do
		[ -n "$(g "stall.$sc.n")" ] || continue
		printf '%-10s %8s %10s %10s %10s %9s %9s %5s %6s\n' $sc "$(g stall.$sc.n)" "$(g stall.$sc.p50_ns)" \
			"$(g stall.$sc.p99_ns)" "$(awk -v x="$(g stall.$sc.max_ns)" 'BEGIN { printf "%.1f", x / 1e6 }')" \
			"$(g stall.$sc.ratio_vs_timeout_plus_100ms)" "$(g stall.$sc.ratio_vs_baseline_max)" \
			"$(g stall.$sc.bad)" "$(g stall.$sc.sigbus)"
	done
	echo
	echo "(b) re-replication after the fence: ${nvict:-?} chunks x $chunk = $rr_bytes bytes in ${rr_ms:-?} ms = $rr_mbps MB/s"
	echo "    $njobs replicate jobs done, ELAPSED-MS sum $jsum max $jmax (one job alone: $(g rerepl.job_mbps_mean) MB/s)"
	printf '%-6s %14s %9s %14s %9s\n' iperf3 home-home_MB/s ratio client_MB/s ratio
	for p in A B; do
		printf '%-6s %14s %9s %14s %9s\n' $p "$(g iperf3.$p.home_home_mbps)" "$(g rerepl.ratio_vs_home_home.$p)" \
			"$(g iperf3.$p.client_mbps)" "$(g rerepl.ratio_vs_client.$p)"
	done
	echo
	echo "(c) write-back (write + REGION_SYNC), hbmbench --replicas 3 --size $wb_size, ratios to k=1 (MB/s; < 1: slower)"
	printf '%-20s' ratio
	for ((p = 1; p <= wb_passes; p++)); do printf ' %8s' pass$p; done
	printf ' %8s\n' median
	for key in wb_k2_vs_wb_k1 wb_k2_vs_wb_k1_sync wb_k3_vs_wb_k1 wb_k3_vs_wb_k1_sync; do
		printf '%-20s' $key
		for ((p = 1; p <= wb_passes; p++)); do printf ' %8s' "$(g wb.$key.pass$p)"; done
		printf ' %8s\n' "$(g wb.$key.median)"
	done
	echo
	cat "$kv"
} | tee "$summary"
echo "bench-replica: summary in $summary, raw outputs in $raw/"
ctl stop
exit $failed
