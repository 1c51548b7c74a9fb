#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hbmctl domain status against a fake hbmpoold control socket (a small
# Python server of this test's, no daemon, no kernel, no etcd): the
# readable view (the node's state, the members table, the link matrix, in
# order), -j and -j -p (the daemon's JSON, the same object), the socket
# from --socket, --socket=, $HBMPOOLD_SOCKET; and every failure, each with
# exit 1, its message and nothing on stdout: no socket, a stale socket, an
# empty answer, garbage, JSON cut short, JSON with more after it, JSON that
# is no view, a server that never answers and one that answers a byte at a
# time (both within the 5 s bound, never a hang); a bad command line exits
# 2.  domain drain|undrain N: the request line it writes (then its
# half-close), the daemon's answer (ok: a line, -j: the answer; refused:
# its error, exit 1; a daemon that answers with its view: exit 1), bad
# node ids (exit 2); domain status writes nothing and half-closes (the view
# at once), shows DRAINING per member, the drains and their progress,
# the domain's replication (degraded and lost chunks, the members that have
# them, or "all copies good");
# domain leave: its request line.
# hbmctl is unit/hbmctl_san (tools/hbmctl built with ASan and UBSan;
# make -C selftests unit builds it), else $HBMCTL, else tools/hbmctl/hbmctl.
# TAP output, "N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
hbmctl=${HBMCTL:-}
if [ -z "$hbmctl" ]; then
	hbmctl=$top/selftests/unit/hbmctl_san
	[ -x "$hbmctl" ] || hbmctl=$top/tools/hbmctl/hbmctl
fi
py=/usr/bin/python3
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

if [ ! -x "$py" ]; then
	echo "# SKIP: no $py"
	echo "1..0"
	exit 4
fi
if [ ! -x "$hbmctl" ]; then
	ok 1 "$hbmctl is built (make -C tools hbmctl)"
	finish
fi
echo "# hbmctl: $hbmctl"

tmp=$(mktemp -d /tmp/hbmctl_daemon_test.XXXXXX)
srv_pid=
stop_server() {
	if [ -n "$srv_pid" ]; then
		kill "$srv_pid" 2>/dev/null
		wait "$srv_pid" 2>/dev/null
	fi
	srv_pid=
}
trap 'stop_server; rm -rf "$tmp"' EXIT
sock=$tmp/hbmpoold.sock
out=$tmp/out
err=$tmp/err

# The fake daemon: SOCK MODE [FILE]; answers every client until killed.
#   send FILE  the file's bytes, then close
#   silent     accept, never write
#   drip       one byte every 0.4 s, never ending
#   req FILE   read a line (or up to end of file, 3 s at most), append it
#              and "|" to SOCK.req, then send the file's bytes and close
cat > "$tmp/fake.py" <<'EOF'
import os, socket, sys, threading, time

path, mode = sys.argv[1], sys.argv[2]
data = open(sys.argv[3], "rb").read() if mode in ("send", "req") else b""
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(16)
open(path + ".ready", "w").close()
held = []

def drip(c):
    try:
        while True:
            c.send(b" ")
            time.sleep(0.4)
    except OSError:
        pass

while True:
    c, _ = s.accept()
    if mode == "send":
        c.sendall(data)
        c.close()
    elif mode == "req":
        c.settimeout(3)
        got = b""
        try:
            while b"\n" not in got:
                d = c.recv(4096)
                if not d:
                    break
                got += d
        except OSError:
            pass
        with open(path + ".req", "ab") as f:
            f.write(got + b"|")
        c.sendall(data)
        c.close()
    elif mode == "silent":
        held.append(c)
    else:
        threading.Thread(target=drip, args=(c,), daemon=True).start()
EOF

# serve MODE [FILE]: a fake daemon on $sock, ready to accept
serve() {
	stop_server
	rm -f "$sock" "$sock.ready"
	"$py" "$tmp/fake.py" "$sock" "$@" &
	srv_pid=$!
	for _ in $(seq 100); do
		[ -e "$sock.ready" ] && return 0
		sleep 0.05
	done
	echo "# the fake daemon did not start"
	return 1
}

# ctl ARGS...: hbmctl, stdout in $out, stderr in $err; its exit status in $rc
ctl() {
	timeout 20 "$hbmctl" "$@" >"$out" 2>"$err"
	rc=$?
}

# fails RC TEXT ARGS...: exit status RC, TEXT on stderr, nothing on stdout
fails() {
	local want=$1 text=$2
	shift 2
	ctl "$@"
	if [ "$rc" -ne "$want" ] || ! grep -qF -- "$text" "$err" || [ -s "$out" ]; then
		echo "# exit $rc (want $want); stderr:"
		sed 's/^/#   /' "$err"
		echo "# stdout:"
		sed 's/^/#   /' "$out"
		return 1
	fi
	return 0
}

# has REGEX: a line of $out matches (extended regex)
has() {
	grep -Eq -- "$1" "$out" && return 0
	echo "# no line matches: $1"
	sed 's/^/#   /' "$out"
	return 1
}

# The view of node 2 of a domain of three (ids 10, 1, 2: out of order, as
# etcd's keys sort), node 10 on IPv6; links out of order too.
now_ms=$(($(date +%s) * 1000))
cat > "$tmp/view.json" <<EOF
{"node":2,"state":"member","status":"member: node 2, 3 members, epoch 17, follower","epoch":17,"leader":1,"is_leader":false,"incarnation":4242,"lease":{"id":"7a3f0c","ttl_ms":2000,"proven_for_ms":1834},"members":[{"id":10,"addr":"fd00::a","port":7070,"segment_bytes":1073741824,"capacity":1073741824,"incarnation":77,"kernel":"fenced","location":{},"relation":"other","distance":80,"link_type":"scaleout"},{"id":1,"addr":"10.0.0.1","port":7070,"segment_bytes":1073741824,"capacity":1610612736,"incarnation":5,"kernel":"live","location":{"site":"s1","rack":"r1","tray":"t1"},"relation":"tray","distance":20,"link_type":"scaleup"},{"id":2,"addr":"10.0.0.2","port":7071,"segment_bytes":4294967296,"capacity":4294967296,"incarnation":4242,"kernel":"self","location":{"site":"s1","rack":"r1","tray":"t1"}}],"links":[{"from":2,"to":1,"state":"up","rtt_us":250,"error_pct":0,"changes":1,"since":$((now_ms - 75000))},{"from":1,"to":2,"state":"degraded","rtt_us":12500,"error_pct":3,"changes":2,"since":$((now_ms - 7200000))},{"from":10,"to":1,"state":"down","rtt_us":0,"error_pct":100,"changes":5,"since":$((now_ms - 5000))},{"from":1,"to":10,"state":"up","rtt_us":2000000,"error_pct":0,"changes":0,"since":0}]}
EOF

# --- the readable view ----------------------------------------------------
serve send "$tmp/view.json"
ctl domain status --socket "$sock"
[ "$rc" -eq 0 ] && [ ! -s "$err" ]
ok $? "domain status: exit 0, nothing on stderr"
has '^node +2$' && has '^state +member$' && has '^status +member: node 2, 3 members, epoch 17, follower$' &&
	has '^epoch +17$' && has '^leader +1$' && has '^is-leader +no$' && has '^incarnation +4242$'
ok $? "the node's state, status, epoch, leader, incarnation"
has '^lease +7a3f0c \(ttl 2000 ms, proven for 1834 ms\)$'
ok $? "the lease: id, ttl, proven for"
has '^members +3$' && has '^links +4: 2 up, 1 degraded, 1 down$'
ok $? "members and links counted, links by state"
has '^ID +ADDR +SEGMENT +CAPACITY +INCARNATION +KERNEL +LOCATION +RELATION +DISTANCE +LINK +DRAINING$' &&
	has '^1 +10\.0\.0\.1:7070 +1G +1\.5G +5 +live +site=s1,rack=r1,tray=t1 +tray +20 +scaleup +-$' &&
	has '^2 +10\.0\.0\.2:7071 +4G +4G +4242 +self +site=s1,rack=r1,tray=t1 +- +- +- +-$' &&
	has '^10 +\[fd00::a\]:7070 +1G +1G +77 +fenced +- +other +80 +scaleout +-$' &&
	has '^drains +-$'
ok $? "members table: id, addr:port ([v6]:port), segment, capacity, incarnation, kernel, location, relation, distance, link; draining and drains '-' from a daemon before drains"
[ "$(grep -E '^(1|2|10) ' "$out" | awk '{print $1}' | head -3 | tr '\n' ' ')" = "1 2 10 " ]
ok $? "members sorted by id"
has '^FROM +TO +STATE +RTT +ERRORS +CHANGES +SINCE$' &&
	has '^1 +2 +degraded +12\.5ms +3% +2 +2h00m ago$' &&
	has '^1 +10 +up +2\.0s +0% +0 +-$' &&
	has '^2 +1 +up +250us +0% +1 +1m(1[4-9]|[2-5][0-9])s ago$' &&
	has '^10 +1 +down +- +100% +5 +([4-9]|[1-4][0-9])s ago$'
ok $? "links table: from, to, state, rtt (us, ms, s, none), errors, changes, since"
[ "$(sed -n '/^FROM/,$p' "$out" | awk 'NR > 1 {print $1 "-" $2}' | tr '\n' ' ')" = "1-2 1-10 2-1 10-1 " ]
ok $? "links sorted by from, then to"

# --- JSON ----------------------------------------------------------------
same_json='import json, sys; a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2])); sys.exit(a != b)'
ctl -j domain status --socket "$sock"
[ "$rc" -eq 0 ] && [ "$(wc -l < "$out")" -eq 1 ] && "$py" -c "$same_json" "$tmp/view.json" "$out"
ok $? "-j: one line, the daemon's object as it sent it"
ctl -j -p domain status --socket "$sock"
[ "$rc" -eq 0 ] && [ "$(wc -l < "$out")" -gt 20 ] && "$py" -c "$same_json" "$tmp/view.json" "$out"
ok $? "-j -p: indented, the same object"

# --- where the socket is --------------------------------------------------
HBMPOOLD_SOCKET=$sock ctl domain status
[ "$rc" -eq 0 ] && has '^node +2$'
ok $? "\$HBMPOOLD_SOCKET names the socket"
ctl domain status --socket="$sock"
[ "$rc" -eq 0 ] && has '^node +2$'
ok $? "--socket=PATH"
HBMPOOLD_SOCKET=$tmp/nothing-here ctl domain status --socket "$sock"
[ "$rc" -eq 0 ] && has '^node +2$'
ok $? "--socket wins over \$HBMPOOLD_SOCKET"
HBMPOOLD_SOCKET=$tmp/nothing-here fails 1 "hbmpoold is not running (no $tmp/nothing-here: No such file or directory)" \
	domain status
ok $? "\$HBMPOOLD_SOCKET absent: exit 1, 'hbmpoold is not running (no PATH: ...)'"

# --- a daemon just started: no leader, no members, no links key ----------
echo '{"node":3,"state":"new","status":"joining","epoch":0,"leader":null,"is_leader":false,"incarnation":0,"lease":{"id":"0","ttl_ms":2000,"proven_for_ms":0},"members":[]}' \
	> "$tmp/new.json"
serve send "$tmp/new.json"
ctl domain status --socket "$sock"
[ "$rc" -eq 0 ] && has '^leader +none$' && has '^members +0$' && has '^links +-$' &&
	! grep -q '^ID\|^FROM' "$out"
ok $? "no leader: 'none'; no members, no links: no tables"
ctl -j domain status --socket "$sock"
[ "$rc" -eq 0 ] && "$py" -c "$same_json" "$tmp/new.json" "$out"
ok $? "-j: leader null kept"
stop_server

# --- failures: exit 1, a message, nothing on stdout -----------------------
fails 1 "hbmpoold is not running (no $tmp/absent.sock: No such file or directory)" \
	domain status --socket "$tmp/absent.sock"
ok $? "no socket: 'hbmpoold is not running (no PATH: ...)'"
fails 1 "hbmpoold is not running (no $tmp/absent.sock" -j domain status --socket "$tmp/absent.sock"
ok $? "no socket, -j: the same, nothing on stdout"
# the fake daemon was killed: its socket is left, nobody listens
[ -S "$sock" ] && fails 1 "hbmpoold is not running ($sock: Connection refused: nothing listens there)" \
	domain status --socket "$sock"
ok $? "a stale socket: 'hbmpoold is not running (PATH: Connection refused ...)'"
: > "$tmp/plain"
fails 1 "Connection refused" domain status --socket "$tmp/plain"
ok $? "a file that is no socket: refused, exit 1"

answer() {	# answer NAME TEXT...: a file the fake daemon sends
	printf '%b' "$2" > "$tmp/$1"
	serve send "$tmp/$1"
}
answer empty ''
fails 1 "hbmpoold closed $sock without an answer" domain status --socket "$sock"
ok $? "an empty answer: 'closed without an answer'"
answer garbage 'HTTP/1.1 400 Bad Request\r\n\r\n\0\377'
fails 1 "hbmpoold's answer on $sock is not JSON" domain status --socket "$sock"
ok $? "garbage: 'is not JSON'"
fails 1 "is not JSON" -j domain status --socket "$sock"
ok $? "garbage, -j: not passed through"
head -c 300 "$tmp/view.json" > "$tmp/cut"
serve send "$tmp/cut"
fails 1 "ends before its JSON does (300 bytes)" -j domain status --socket "$sock"
ok $? "JSON cut short: 'ends before its JSON does'"
answer more '{"node":1,"state":"new","epoch":0,"members":[]} {"node":2}'
fails 1 "has more after its JSON" -j domain status --socket "$sock"
ok $? "JSON with more after it: refused"
answer newline '{"node":1,"state":"new","epoch":0,"members":[]}\r\n \n'
ctl domain status --socket "$sock"
[ "$rc" -eq 0 ] && has '^node +1$'
ok $? "JSON and white space after it: fine"
answer array '[1, 2, 3]'
fails 1 "is not its view of the domain: not a JSON object" -j domain status --socket "$sock"
ok $? "a JSON array: not a view"
answer noint '{"node":"2","state":"member","epoch":17,"members":[]}'
fails 1 "is not its view of the domain: no integer \"node\"" -j domain status --socket "$sock"
ok $? "a string node id: not a view"
answer nomembers '{"node":2,"state":"member","epoch":17}'
fails 1 "no array \"members\"" domain status --socket "$sock"
ok $? "no members: not a view"
answer badmember '{"node":2,"state":"member","epoch":17,"members":[{"addr":"x"}]}'
fails 1 "a member that is no object with an integer \"id\"" domain status --socket "$sock"
ok $? "a member without an id: not a view"
answer badlinks '{"node":2,"state":"member","epoch":17,"members":[],"links":{"from":1}}'
fails 1 "\"links\" is not an array" domain status --socket "$sock"
ok $? "links not an array: not a view"
answer badlink '{"node":2,"state":"member","epoch":17,"members":[],"links":[{"from":1,"to":"2"}]}'
fails 1 "a link that is no object with integer \"from\" and \"to\"" domain status --socket "$sock"
ok $? "a link with a string 'to': not a view"
answer deep "$(printf '[%.0s' $(seq 5000))"
fails 1 "is not JSON" domain status --socket "$sock"
ok $? "5000 nested arrays: refused (nesting too deep), no crash"

serve silent
t0=$(date +%s%N)
fails 1 "hbmpoold did not answer on $sock within 5000 ms (0 bytes read)" domain status --socket "$sock"
r=$?
t=$((($(date +%s%N) - t0) / 1000000))
[ $r -eq 0 ] && [ "$t" -ge 4500 ] && [ "$t" -lt 9000 ]
ok $? "a daemon that never answers: exit 1 after the 5 s timeout (${t} ms)"
serve drip
t0=$(date +%s%N)
fails 1 "hbmpoold did not answer on $sock within 5000 ms" domain status --socket "$sock"
r=$?
t=$((($(date +%s%N) - t0) / 1000000))
[ $r -eq 0 ] && [ "$t" -ge 4500 ] && [ "$t" -lt 9000 ] && grep -q "bytes read" "$err"
ok $? "a daemon that answers a byte at a time: the timeout bounds it all (${t} ms)"
stop_server

# --- drains --------------------------------------------------------------
# a view with drains: node 1 draining, node 7 (no member) too
"$py" -c 'import json, sys
v = json.load(open(sys.argv[1]))
for m in v["members"]:
    m["draining"] = m["id"] == 1
v["drains"] = [1, 7]
json.dump(v, open(sys.argv[2], "w"))' "$tmp/view.json" "$tmp/dview.json"
rm -f "$sock.req"
serve req "$tmp/dview.json"
t0=$(date +%s%N)
ctl domain status --socket "$sock"
t=$((($(date +%s%N) - t0) / 1000000))
[ "$rc" -eq 0 ] && [ "$t" -lt 2000 ] && [ "$(cat "$sock.req")" = "|" ]
ok $? "domain status writes nothing and half-closes: the view at once (${t} ms)"
has '^1 +10\.0\.0\.1:7070 .* +scaleup +yes$' && has '^10 +\[fd00::a\]:7070 .* +scaleout +no$' &&
	has '^drains +1 7$'
ok $? "status: DRAINING per member, the drains (members or not)"

# the drains' progress: a section of its own, and the leaving flag
"$py" -c 'import json, sys
v = json.load(open(sys.argv[1]))
v["leaving"] = True
v["drain_progress"] = [{"node": 1, "chunks_left": 2, "bytes_left": 4194304, "failures": 1,
                        "lost": 0, "members": 3, "reported": 2, "not_reported": [5],
                        "done": False, "by_member": []},
                       {"node": 7, "chunks_left": 0, "bytes_left": 0, "failures": 0,
                        "lost": 2, "members": 3, "reported": 3, "not_reported": [],
                        "done": True, "by_member": []}]
json.dump(v, open(sys.argv[2], "w"))' "$tmp/dview.json" "$tmp/pview.json"
serve req "$tmp/pview.json"
ctl domain status --socket "$sock"
[ "$rc" -eq 0 ] && has '^DRAINED +CHUNKS-LEFT +BYTES-LEFT +FAILURES +LOST +REPORTED +WAITING-FOR +DONE$' &&
	has '^1 +2 +4(\.0)?M +1 +0 +2/3 +5 +no$' && has '^7 +0 +0B +0 +2 +3/3 +- +yes$' &&
	has '^leaving +yes$'
ok $? "status: the drains' progress (chunks and bytes left, failures, lost, members reported, waiting for, done), leaving"

# --wait --timeout: a drain that never ends (member 5 never reports)
"$py" -c 'import json, sys
v = json.load(open(sys.argv[1]))
v["ok"] = True
json.dump(v, open(sys.argv[2], "w"))' "$tmp/pview.json" "$tmp/pwait.json"
serve req "$tmp/pwait.json"
ctl domain drain 1 --wait --timeout 2 --socket "$sock"
[ "$rc" -eq 1 ] &&
	has '^node 1: 2 chunks \(4(\.0)?M\) left, 1 failures, 2/3 members reported \(waiting for node 5\)$' &&
	grep -q "hbmctl: not drained after 2 s: node 1: .*(waiting for node 5); the drain goes on in hbmpoold" "$err"
ok $? "drain --wait --timeout 2: the progress names the member not reported; exit 1 after 2 s"
ctl domain drain 7 --wait --socket "$sock"
[ "$rc" -eq 0 ] && has '^node 7: 0 chunks \(0B\) left, 0 failures, 2 lost \(nothing to move\), 3/3 members reported$' &&
	has '^node 7: drained'
ok $? "drain --wait of a drain done with lost chunks: they are said, exit 0"
for bad in "--timeout" "--timeout 0" "--timeout x" "--timeout 5"; do
	# shellcheck disable=SC2086
	ctl domain drain 1 $bad --socket "$sock"
	[ "$rc" -eq 2 ] || break
done
[ "$rc" -eq 2 ] && grep -q "'--timeout' goes with '--wait'" "$err"
ok $? "--timeout without seconds, 0, x, or without --wait: exit 2"
stop_server

# --- replication ----------------------------------------------------------
# members 1 and 10 report degraded chunks (10 lost one), 2 all good
"$py" -c 'import json, sys
v = json.load(open(sys.argv[1]))
v["replication"] = {"regions": 3, "degraded_regions": 2, "degraded_chunks": 5, "lost_chunks": 1,
                    "members_degraded": 2,
                    "by_member": [{"id": 1, "regions": 1, "degraded_regions": 1,
                                   "degraded_chunks": 3, "lost_chunks": 0, "updated": 1},
                                  {"id": 2, "regions": 1, "degraded_regions": 0,
                                   "degraded_chunks": 0, "lost_chunks": 0, "updated": 1},
                                  {"id": 10, "regions": 1, "degraded_regions": 1,
                                   "degraded_chunks": 2, "lost_chunks": 1, "updated": 1}]}
json.dump(v, open(sys.argv[2], "w"))
v["replication"] = {"regions": 1, "degraded_regions": 0, "degraded_chunks": 0, "lost_chunks": 0,
                    "members_degraded": 0,
                    "by_member": [{"id": 2, "regions": 1, "degraded_regions": 0,
                                   "degraded_chunks": 0, "lost_chunks": 0, "updated": 1}]}
json.dump(v, open(sys.argv[3], "w"))' "$tmp/view.json" "$tmp/rview.json" "$tmp/gview.json"
serve send "$tmp/rview.json"
ctl domain status --socket "$sock"
[ "$rc" -eq 0 ] && has '^replication +5 chunks of 2 regions degraded, 1 lost \(members 1 10\)$' &&
	has '^MEMBER +REPLICATED-REGIONS +DEGRADED-REGIONS +DEGRADED-CHUNKS +LOST-CHUNKS$' &&
	has '^1 +1 +1 +3 +0$' && has '^10 +1 +1 +2 +1$' && ! grep -Eq '^2 +1 +0 +0 +0$' "$out"
ok $? "status: the domain's degraded and lost chunks, the members that have them (not those all good)"
ctl -j domain status --socket "$sock"
[ "$rc" -eq 0 ] && "$py" -c "$same_json" "$tmp/rview.json" "$out"
ok $? "-j: \"replication\" as the daemon sent it"
serve send "$tmp/gview.json"
ctl domain status --socket "$sock"
[ "$rc" -eq 0 ] && has '^replication +all copies good$' && ! grep -q '^MEMBER' "$out"
ok $? "status: 'replication all copies good', no table"
serve send "$tmp/view.json"
ctl domain status --socket "$sock"
[ "$rc" -eq 0 ] && has '^replication +-$'
ok $? "a daemon before replicated regions: 'replication -'"
answer badrepl '{"node":2,"state":"member","epoch":17,"members":[],"replication":[1]}'
fails 1 "\"replication\" is not an object with an array \"by_member\"" domain status --socket "$sock"
ok $? "replication not an object: not a view"
answer badrepl2 '{"node":2,"state":"member","epoch":17,"members":[],"replication":{"degraded_chunks":1,"by_member":[7,{"id":"x","degraded_chunks":"y"}]}}'
ctl domain status --socket "$sock"
[ "$rc" -eq 0 ] && has '^replication +1 chunk of 0 regions degraded, 0 lost$'
ok $? "odd members in by_member: skipped, no crash"
stop_server

echo '{"ok":true,"cmd":"leave"}' > "$tmp/leave.json"
rm -f "$sock.req"
serve req "$tmp/leave.json"
ctl domain leave --socket "$sock"
[ "$rc" -eq 0 ] && [ ! -s "$err" ] && [ "$(cat "$sock.req")" = '{"cmd":"leave"}
|' ] && has '^leaving: this node drains itself, then leaves the domain$'
ok $? "domain leave: the request line, then 'leaving'"
ctl domain leave bogus --socket "$sock"
[ "$rc" -eq 2 ] && grep -q "unknown argument 'bogus'" "$err"
ok $? "domain leave with an unknown argument: exit 2"

echo '{"ok":true,"cmd":"drain","node":3}' > "$tmp/ok.json"
rm -f "$sock.req"
serve req "$tmp/ok.json"
ctl domain drain 3 --socket "$sock"
[ "$rc" -eq 0 ] && [ ! -s "$err" ] && [ "$(cat "$sock.req")" = '{"cmd":"drain","node":3}
|' ] && has '^node 3: draining \(it takes no new chunks; every member moves its chunks off it\)$'
ok $? "domain drain 3: the request line, then 'node 3: draining'"
ctl domain undrain 3 --socket="$sock"
[ "$rc" -eq 0 ] && grep -qF '|{"cmd":"undrain","node":3}' "$sock.req" &&
	has '^node 3: no longer draining \(it takes new chunks\)$'
ok $? "domain undrain 3: its request line, 'no longer draining'"
HBMPOOLD_SOCKET=$sock ctl -j domain drain 1023
[ "$rc" -eq 0 ] && grep -qF '|{"cmd":"drain","node":1023}' "$sock.req" &&
	"$py" -c "$same_json" "$tmp/ok.json" "$out"
ok $? "-j domain drain 1023 (\$HBMPOOLD_SOCKET): the daemon's answer"
echo '{"ok":false,"error":"this daemon is not a member of the domain (joining)","errno":11}' > "$tmp/no.json"
serve req "$tmp/no.json"
fails 1 "hbmctl: hbmpoold refused to drain node 3: this daemon is not a member of the domain (joining)" \
	domain drain 3 --socket "$sock"
ok $? "refused: exit 1, the daemon's reason"
fails 1 "hbmpoold refused to undrain node 3" -j domain undrain 3 --socket "$sock"
ok $? "refused, -j: exit 1, nothing on stdout"
echo '{"ok":false,"errno":5}' > "$tmp/noreason.json"
serve req "$tmp/noreason.json"
fails 1 "hbmpoold refused to drain node 2: no reason given" domain drain 2 --socket "$sock"
ok $? "refused without a reason: exit 1"
serve send "$tmp/view.json"
fails 1 "did not answer the request (no \"ok\" in its answer" domain drain 3 --socket "$sock"
ok $? "a daemon that answers with its view (before requests): exit 1"
answer garbage2 'nope'
fails 1 "is not JSON" domain drain 3 --socket "$sock"
ok $? "garbage for an answer: exit 1"
stop_server
fails 1 "hbmpoold is not running" domain drain 3 --socket "$tmp/absent.sock"
ok $? "drain, no socket: 'hbmpoold is not running'"
ctl domain drain
[ "$rc" -eq 2 ] && grep -q "domain drain needs a node id" "$err" && [ ! -s "$out" ]
ok $? "drain without an id: exit 2"
badok=0
for bad in x 1024 -1 3x ''; do
	ctl domain undrain "$bad" --socket "$sock"
	if [ "$rc" -ne 2 ] || ! grep -q "bad node id '$bad': 0..1023" "$err"; then
		badok=1
		break
	fi
done
[ "$badok" -eq 0 ]
ok $? "bad node ids (x, 1024, -1, 3x, empty): exit 2"
ctl domain drain 1 2 --socket "$sock"
[ "$rc" -eq 2 ] && grep -q "unknown argument '2'" "$err"
ok $? "two ids: exit 2"

# --- the command line -----------------------------------------------------
ctl domain status --socket
[ "$rc" -eq 2 ] && grep -q "'--socket' needs a path" "$err" && grep -q 'domain status \[--socket PATH\]' "$err"
ok $? "--socket without a path: exit 2, usage"
ctl domain status now
[ "$rc" -eq 2 ] && grep -q "unknown argument 'now'" "$err"
ok $? "an unknown argument: exit 2"
ctl domain help
[ "$rc" -eq 0 ] && has '^  domain status \[--socket PATH\]' &&
	has '^  domain drain ID \[--wait \[--timeout S\]\] \[--socket PATH\]' &&
	has '^  domain undrain ID \[--socket PATH\]' &&
	has '^  domain leave \[--wait \[--timeout S\]\] \[--socket PATH\]'
ok $? "domain help lists domain status, drain, undrain, leave"

finish
