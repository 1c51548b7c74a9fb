#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
THEORY OF OPERATION
What this node brings to the domain: the segment it exports (netlink
segment-new, segment-get, segment-del; hbmctl segment add/show/del) and the
domain key it will authenticate with.  A "ram" segment reserves its
memory at once (MemAvailable drops by its size) and gives it back when
deleted; segment-get and the segment-change-ntf events report it; a second
segment, an unknown provider, a size not page aligned or larger than the
memory can give are refused with their errno and a message, changing
nothing; deleting without a segment is ENOENT; every new segment has a new
incarnation.  The shm provider and transport refuse what they cannot use
(this VM has no ivshmem device): provider shm without a device (EINVAL), on
an unknown device (ENODEV), a device with the ram provider (EINVAL); a shm
node on an unknown device (ENODEV) or without one (EINVAL), a device for a
tcp node (EINVAL), each with a message; the
multi-VM shm_test.sh tests them with devices.  This node's id moves (domain-set self-id) only while it is
alone, and its entry moves with it.  A domain key is set (domain-set key, hbmctl domain set
key-file) and reported only as set: its bytes are in no reply and no event.
hbmctl drives the same operations, with -j output checked.
TAP output; exit 0 pass, 1 fail, 4 skip.
"""
import errno
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nlraw  # noqa: E402

HBMCTL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                      "hbmctl", "hbmctl")
MIB = 1 << 20
tap = nlraw.Tap()
result = tap.result


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def refused(g, want, name, **kw):
    try:
        g.do("segment-new", **kw)
    except nlraw.NlError as e:
        result(e.errno == want and bool(e.msg), name, f"{e}")
        return
    result(False, name, "accepted")


def main():
    why = nlraw.skip_reason()
    if why:
        print(f"1..0 # SKIP {why}")
        return 4
    g = nlraw.Genl()
    mon = nlraw.Genl()
    mon.subscribe()
    try:
        s = g.do("segment-get")
        result(s["size"] == 0 and s["provider"] == "none" and s["used"] == 0,
               "no segment after load: size 0, provider none", f"{s}")
        before = mem_available()
        g.do("segment-new", size=64 * MIB)
        after = mem_available()
        s = g.do("segment-get")
        result(s["size"] == 64 * MIB and s["provider"] == "ram" and s["used"] == 0,
               "segment-new 64 MiB: segment-get shows it, provider ram, none used", f"{s}")
        result(before - after >= 48 * MIB,
               "its memory is reserved at once (MemAvailable drops by its size)",
               f"{(before - after) >> 20} MiB")
        ev = mon.events(timeout=2.0)
        result([e[0] for e in ev] == ["segment-change-ntf"] and ev[0][1]["size"] == 64 * MIB
               and ev[0][1]["seq"] == s["seq"],
               "one segment-change-ntf event, with the segment and its seq", f"{ev}")
        refused(g, errno.EEXIST, "a second segment: EEXIST with a message", size=8 * MIB)
        refused(g, errno.ENOENT, "an unknown provider: ENOENT with a message",
                size=8 * MIB, provider="gpu")
        refused(g, errno.EINVAL, "a size not page aligned: EINVAL with a message",
                size=8 * MIB + 1)
        s2 = g.do("segment-get")
        result(s2["size"] == 64 * MIB and not mon.events(timeout=0.5),
               "refusals change nothing and announce nothing", f"{s2}")
        g.do("segment-del")
        s = g.do("segment-get")
        result(s["size"] == 0 and s["provider"] == "none", "segment-del: no segment", f"{s}")
        # freed pages may wait a while in per-CPU lists: half of it at least
        result(mem_available() - after >= 32 * MIB, "its memory is given back",
               f"{(mem_available() - after) >> 20} MiB")
        ev = mon.events(timeout=2.0)
        result([e[0] for e in ev] == ["segment-change-ntf"] and ev[0][1]["size"] == 0,
               "one segment-change-ntf event, without a segment", f"{ev}")
        try:
            g.do("segment-del")
            result(False, "segment-del without a segment: ENOENT", "accepted")
        except nlraw.NlError as e:
            result(e.errno == errno.ENOENT and bool(e.msg),
                   "segment-del without a segment: ENOENT with a message", str(e))
        refused(g, errno.ENOMEM, "more than the memory can give: ENOMEM with a message",
                size=1 << 40)
        refused(g, errno.EINVAL, "provider shm without a device: EINVAL with a message",
                size=MIB, provider="shm")
        refused(g, errno.ENODEV, "provider shm on an unknown device: ENODEV with a message",
                size=MIB, provider="shm", device="0000:00:1f.7")
        refused(g, errno.EINVAL, "a device with the ram provider: EINVAL with a message",
                size=MIB, provider="ram", device="0000:00:11.0")
        for name, want, kw in (
                ("a shm node on an unknown device: ENODEV with a message", errno.ENODEV,
                 {"transport": "shm", "device": "0000:00:1f.7"}),
                ("a shm node without a device: EINVAL with a message", errno.EINVAL,
                 {"transport": "shm"}),
                ("a device for a tcp node: EINVAL with a message", errno.EINVAL,
                 {"transport": "tcp", "device": "0000:00:11.0"})):
            try:
                g.do("node-new", id=1000, capacity=MIB, distance=20, **kw)
                g.do("node-del", id=1000)
                result(False, name, "accepted")
            except nlraw.NlError as e:
                result(e.errno == want and bool(e.msg), name, f"{e}")
        result(g.do("segment-get")["size"] == 0, "...and nothing is left reserved")
        incs = []
        for _ in range(2):
            g.do("segment-new", size=MIB)
            incs.append(g.do("segment-get")["incarnation"])
            g.do("segment-del")
        result(all(incs) and incs[0] != incs[1] and g.do("segment-get")["incarnation"] == 0,
               "each new segment has a new incarnation; none without one", f"{incs}")
        mon.events(timeout=0.5)

        # the domain key
        key = bytes(range(0x40, 0x40 + 32))
        d = g.do("domain-get")
        result("key-set" not in d, "no domain key after load", f"{d}")
        g.raw("domain-set", g.spec.encode("domain", "key", key))
        raw = g.raw("domain-get")[0][2]
        d = g.spec.decode("domain", raw)
        ev = mon.events(timeout=2.0)
        evraw = [e for e in ev if e[0] == "domain-change-ntf"]
        result(d.get("key-set") is True and key not in raw,
               "domain-set key: domain-get says key-set, without its bytes", f"{d}")
        result(len(evraw) == 1 and evraw[0][1].get("key-set") is True and
               "key" not in evraw[0][1] and "unknown" not in evraw[0][1],
               "one domain-change event, key-set and no key", f"{ev}")

        # this node's id in the domain
        g.do("node-new", id=9, capacity=MIB, distance=20)
        try:
            g.do("domain-set", self_id=5)
            result(False, "self-id while another node exists: EBUSY", "accepted")
        except nlraw.NlError as e:
            result(e.errno == errno.EBUSY and bool(e.msg),
                   "self-id while another node exists: EBUSY with a message", str(e))
        g.do("node-del", id=9)
        mon.events(timeout=0.5)
        g.do("domain-set", self_id=5)
        nodes = {n["id"]: n for n in g.dump("node-get")}
        ev = [n for n, _ in mon.events(timeout=2.0)]
        result(g.do("domain-get")["self-id"] == 5 and list(nodes) == [5] and
               nodes[5].get("self") is True and nodes[5]["transport"] == "local" and
               os.path.isdir("/sys/kernel/hbmpool/nodes/node5") and
               not os.path.exists("/sys/kernel/hbmpool/nodes/node0"),
               "domain-set self-id 5: this node's entry moves to id 5", f"{nodes}")
        result(ev.count("node-add-ntf") == 1 and ev.count("node-del-ntf") == 1,
               "...announced as the new entry added and the old one removed", f"{ev}")
        g.do("node-new", id=0, capacity=MIB, distance=20)
        result(g.do("node-get", id=0)["transport"] == "sim",
               "id 0 is an ordinary id now: a remote node takes it")
        g.do("node-del", id=0)
        g.do("domain-set", self_id=0)
        result(g.do("domain-get")["self-id"] == 0 and
               [n["id"] for n in g.dump("node-get")] == [0], "and back to 0")

        if os.access(HBMCTL, os.X_OK):
            r = subprocess.run([HBMCTL, "segment", "add", "8M"], capture_output=True,
                               text=True, check=False)
            j = json.loads(subprocess.run([HBMCTL, "-j", "segment", "show"],
                                          capture_output=True, text=True,
                                          check=False).stdout or "{}")
            result(r.returncode == 0 and j.get("size") == 8 * MIB and
                   j.get("provider") == "ram",
                   "hbmctl segment add 8M; segment show -j shows it", f"{r.stderr} {j}")
            r = subprocess.run([HBMCTL, "segment", "add", "8M"], capture_output=True,
                               text=True, check=False)
            result(r.returncode == 1 and "File exists" in r.stderr and
                   "exports a segment" in r.stderr,
                   "hbmctl segment add again: exit 1 with the kernel's message", r.stderr)
            r = subprocess.run([HBMCTL, "segment", "del"], capture_output=True, text=True,
                               check=False)
            result(r.returncode == 0 and g.do("segment-get")["size"] == 0,
                   "hbmctl segment del", r.stderr)
            kf = "/tmp/hbmpool-key-test"
            with open(kf, "wb") as f:
                f.write(os.urandom(48))
            r = subprocess.run([HBMCTL, "domain", "set", "key-file", kf], capture_output=True,
                               text=True, check=False)
            result(r.returncode == 0, "hbmctl domain set key-file: a 48-byte key", r.stderr)
            with open(kf, "wb") as f:
                f.write(os.urandom(10))
            r = subprocess.run([HBMCTL, "domain", "set", "key-file", kf], capture_output=True,
                               text=True, check=False)
            os.unlink(kf)
            result(r.returncode == 1 and "16 to 64 bytes" in r.stderr,
                   "hbmctl domain set key-file: a 10-byte file is refused", r.stderr)
        else:
            for _ in range(5):
                print(f"ok {tap.n + 1} # SKIP {HBMCTL} not built (make tools)")
                tap.n += 1
    finally:
        try:
            g.do("segment-del")
        except nlraw.NlError:
            pass
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
