#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
THEORY OF OPERATION
The monitor group of the hbmpool netlink family under concurrency.
1. Four threads make N changes between them (node-new, node-set,
   link-set, node-del, params-set, domain changes): a listener subscribed
   before gets exactly the events those changes must produce, in order,
   with consecutive sequence numbers, none missing, none extra.
2. Subscribe-then-dump: while writers keep changing nodes and links, a
   client subscribes, dumps nodes and links, and applies to each object
   only the events numbered after the dump's view of it; once the writers
   stop, what it reconstructed equals a fresh dump exactly (names,
   distances, states, weights, draining flags).
TAP output; exit 0 pass, 1 fail, 4 skip.
"""
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nlraw  # noqa: E402

BASE_ID = 700
tap = nlraw.Tap()
result = tap.result



def drain(g, until_seq, timeout=30.0):
    """Events until one numbered until_seq (or the timeout)."""
    out, end = [], time.time() + timeout
    while time.time() < end:
        out += g.events(timeout=0.2)
        if out and out[-1][1].get("seq", 0) >= until_seq:
            break
    return out


def current_seq(g):
    return g.do("domain-get")["seq"]


def writer(w, rounds, errors):
    g = nlraw.Genl()
    try:
        for i in range(rounds):
            nid = BASE_ID + w * 10 + i % 10
            g.do("node-new", id=nid, capacity=1 << 20, distance=20 + w)
            g.do("node-set", id=nid, name=f"w{w}r{i}")
            g.do("link-set", node_id=nid, admin_state=0)
            g.do("link-set", node_id=nid, admin_state=1)
            g.do("node-del", id=nid)
            g.do("params-set", fetch_timeout_ms=3000 + w * 100 + i)
    except nlraw.NlError as e:
        errors.append(f"writer {w}: {e}")
    g.close()


def test_ordered():
    mon = nlraw.Genl()
    mon.subscribe()
    g = nlraw.Genl()
    seq0 = current_seq(g)
    threads, errors = [], []
    writers, rounds = 4, 12
    for w in range(writers):
        t = threading.Thread(target=writer, args=(w, rounds, errors))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    last = current_seq(g)
    ev = drain(mon, last)
    result(not errors, "the writers' changes all succeeded", "; ".join(errors))
    # per round: node-add + domain, node-change + domain, link (down), link (up),
    # node-del + domain, params
    per_round = 2 + 2 + 1 + 1 + 2 + 1
    want = writers * rounds * per_round
    result(len(ev) == want, f"{want} changes, {want} events", f"{len(ev)} events")
    seqs = [e[1].get("seq") for e in ev]
    result(seqs == list(range(seq0 + 1, seq0 + 1 + len(ev))),
           "consecutive sequence numbers, in order, no gap",
           f"{seqs[:10]}... from {seq0 + 1}")
    counts = {}
    for name, _ in ev:
        counts[name] = counts.get(name, 0) + 1
    n = writers * rounds
    expect = {"node-add-ntf": n, "node-change-ntf": n, "node-del-ntf": n,
              "link-change-ntf": 2 * n, "params-change-ntf": n, "domain-change-ntf": 3 * n}
    result(counts == expect, "each kind of event as often as its change", f"{counts}")
    # each node's own events are in the order its writer made them
    per_node = {}
    for name, a in ev:
        if name.startswith("node-") or name.startswith("link-"):
            per_node.setdefault(a.get("id", a.get("node-id")), []).append(name)
    cycle = ["node-add-ntf", "node-change-ntf", "link-change-ntf", "link-change-ntf",
             "node-del-ntf"]
    bad = [k for k, v in per_node.items() if v != cycle * (len(v) // len(cycle)) or
           len(v) % len(cycle)]
    result(not bad, "every node's events follow its writer's order", f"nodes {bad}")
    gens = [a["generation"] for name, a in ev if name == "domain-change-ntf"]
    result(gens == sorted(gens) and len(set(gens)) == len(gens),
           "the domain's generation increases with every membership change", f"{gens[:8]}")
    mon.close()
    g.close()


def snapshot(g):
    nodes = {n["id"]: n for n in g.dump("node-get")}
    links = {lk["node-id"]: lk for lk in g.dump("link-get")}
    return nodes, links


def view(nodes, links):
    return ({i: (n["name"], n["distance"], n["state"], n["weight"], n["draining"],
                 n["effective-weight"]) for i, n in nodes.items()},
            {i: lk["admin-state"] for i, lk in links.items()})


def churn(stop, seed, errors):
    """Random changes to the nodes BASE_ID + 20 * seed .. + 19 until stop."""
    g = nlraw.Genl()
    rnd = random.Random(seed)
    present = set()
    try:
        while not stop.is_set():
            nid = BASE_ID + 20 * seed + rnd.randrange(20)
            op = rnd.randrange(4)
            try:
                if nid not in present:
                    g.do("node-new", id=nid, capacity=1 << 20, distance=20 + rnd.randrange(50))
                    present.add(nid)
                elif op == 0:
                    g.do("node-del", id=nid)
                    present.discard(nid)
                elif op == 1:
                    g.do("node-set", id=nid, name=f"n{rnd.randrange(1000)}",
                         distance=11 + rnd.randrange(200),
                         weight=rnd.randrange(4), draining=rnd.randrange(2))
                else:
                    g.do("link-set", node_id=nid, admin_state=rnd.randrange(2))
            except nlraw.NlError as e:
                errors.append(str(e))
        for nid in present:
            g.do("node-del", id=nid)
    finally:
        g.close()


def test_subscribe_then_dump():
    stop = threading.Event()
    errors = []
    # two writers, each with its own ids
    threads = [threading.Thread(target=churn, args=(stop, s, errors)) for s in (0, 1)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    mon = nlraw.Genl()
    mon.subscribe()
    nodes, links = snapshot(mon)
    events = []
    time.sleep(2.0)
    stop.set()
    for t in threads:
        t.join()
    g = nlraw.Genl()
    last = current_seq(g)
    events += drain(mon, last)
    # apply events newer than each object's snapshot
    for name, a in events:
        s = a["seq"]
        if name in ("node-add-ntf", "node-change-ntf"):
            if a["id"] not in nodes or nodes[a["id"]]["seq"] < s:
                nodes[a["id"]] = a
        elif name == "node-del-ntf":
            if a["id"] in nodes and nodes[a["id"]]["seq"] < s:
                del nodes[a["id"]]
            if a["id"] in links and links[a["id"]]["seq"] < s:
                del links[a["id"]]
        elif name == "link-change-ntf":
            if a["node-id"] not in links or links[a["node-id"]]["seq"] < s:
                links[a["node-id"]] = a
    # a node added after the link dump passed its id has no link entry yet
    for i, n in nodes.items():
        if i not in links and n.get("transport") != "local":
            links[i] = {"admin-state": 1, "seq": n["seq"]}
    fnodes, flinks = snapshot(g)
    result(not errors, "the writers' changes succeeded", "; ".join(errors[:3]))
    got, want = view(nodes, links), view(fnodes, flinks)
    result(got == want, "subscribe-then-dump reconstructs exactly the final state",
           f"{got} != {want}")
    result(len(events) > 0, "changes happened while the client watched", "no event")
    mon.close()
    g.close()


def main():
    why = nlraw.skip_reason()
    if why:
        print(f"1..0 # SKIP {why}")
        return 4
    g = nlraw.Genl()
    t0 = g.do("params-get")["fetch-timeout-ms"]
    try:
        test_ordered()
        test_subscribe_then_dump()
    finally:
        g.do("params-set", fetch_timeout_ms=t0)
        for n in g.dump("node-get"):
            if BASE_ID <= n["id"] < BASE_ID + 50:
                g.do("node-del", id=n["id"])
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
