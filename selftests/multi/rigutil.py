#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Guest-side helpers of the multi-VM rig test (rig_test.sh).

usage:
  rigutil.py serve PORT              TCP echo server (threads), forever
  rigutil.py probe HOST PORT SECS    connect, echo a line; 0 if done within
                                     SECS, 1 if not (prints why)
  rigutil.py stall HOST PORT GO SECS connect and echo once, print
                                     "connected", then wait until file GO
                                     exists, send a line and time the echo:
                                     prints "echo after X.Ys"; 0 if it came
                                     within SECS
  rigutil.py shmw PATH TEXT          write TEXT at offset 0 of the mmapped
                                     file PATH (an ivshmem BAR2 resource)
  rigutil.py shmr PATH LEN           print the first LEN bytes of PATH,
                                     mmapped (NULs stripped)
"""

import mmap
import os
import socket
import socketserver
import sys
import time


class Echo(socketserver.StreamRequestHandler):
    def handle(self):
        for line in self.rfile:
            self.wfile.write(line)


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def echo_once(sock, f, msg):
    sock.sendall(msg)
    got = f.readline()
    if got != msg:
        raise OSError("echo mismatch: %r" % got)


def probe(host, port, secs):
    t0 = time.monotonic()
    try:
        with socket.create_connection((host, port), timeout=secs) as s:
            s.settimeout(max(0.1, secs - (time.monotonic() - t0)))
            echo_once(s, s.makefile("rb"), b"probe %d\n" % os.getpid())
    except OSError as e:
        print("probe %s:%d: %s after %.1fs" % (host, port, e or "timeout", time.monotonic() - t0))
        return 1
    print("probe %s:%d: echo after %.2fs" % (host, port, time.monotonic() - t0))
    return 0


def stall(host, port, go, secs):
    s = socket.create_connection((host, port), timeout=30)
    f = s.makefile("rb")
    echo_once(s, f, b"first\n")
    print("connected", flush=True)
    while not os.path.exists(go):
        time.sleep(0.1)
    t0 = time.monotonic()
    s.settimeout(secs)
    try:
        echo_once(s, f, b"second\n")
    except OSError as e:
        print("no echo after %.1fs: %s" % (time.monotonic() - t0, e or "timeout"))
        return 1
    print("echo after %.1fs" % (time.monotonic() - t0))
    return 0


def shm_map(path):
    fd = os.open(path, os.O_RDWR | os.O_SYNC)
    size = os.fstat(fd).st_size
    m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    os.close(fd)
    return m


def main(a):
    if len(a) >= 3 and a[1] == "serve":
        with Server(("0.0.0.0", int(a[2])), Echo) as srv:
            srv.serve_forever()
    if len(a) == 5 and a[1] == "probe":
        return probe(a[2], int(a[3]), float(a[4]))
    if len(a) == 6 and a[1] == "stall":
        return stall(a[2], int(a[3]), a[4], float(a[5]))
    if len(a) == 4 and a[1] == "shmw":
        m = shm_map(a[2])
        data = a[3].encode()
        m[0:len(data) + 1] = data + b"\0"
        m.flush()
        return 0
    if len(a) == 4 and a[1] == "shmr":
        m = shm_map(a[2])
        print(m[0:int(a[3])].split(b"\0")[0].decode(errors="replace"))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
