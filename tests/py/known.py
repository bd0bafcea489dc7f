# SPDX-License-Identifier: MIT
# A Python program whose profile is known by construction, for the 6xxx
# tests: the main thread runs a, b, deep (recursion 150 deep) and digest
# (hashlib's C code under it) for set shares of its CPU time while a
# second thread runs worker, each timed with its own time.thread_time();
# then it runs itself again as a child process (fork and exec) that runs
# child_work.  It prints "measured NAME SECONDS" per function.  The hot
# line of hot() is marked HOT.
import hashlib
import subprocess
import sys
import threading
import time

SCALE = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0


def hot(n):
    t = 0
    for i in range(n):
        t = (t * 31 + i * i * i + (i ^ 12345) * 7 + (i % 97) * (i % 89) + (t >> 3)) % 1000000007  # HOT
    return t


def a(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        hot(200)


def b(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        hot(200)


def deep(n, seconds):
    if n:
        return deep(n - 1, seconds)
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        hot(200)


def digest(seconds):
    data = b"x" * (1 << 20)
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        hashlib.sha256(data).digest()


def worker(seconds, out):
    start = time.thread_time()
    end = start + seconds
    while time.thread_time() < end:
        hot(200)
    out.append(time.thread_time() - start)


def child_work(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        hot(200)


def timed(name, fn, *args):
    start = time.thread_time()
    fn(*args)
    print("measured %s %.6f" % (name, time.thread_time() - start), flush=True)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        timed("child_work", child_work, 0.3 * SCALE)
        return
    out = []
    t = threading.Thread(target=worker, args=(0.4 * SCALE, out))
    t.start()
    timed("a", a, 0.6 * SCALE)
    timed("b", b, 0.3 * SCALE)
    timed("deep", deep, 150, 0.3 * SCALE)
    timed("digest", digest, 0.3 * SCALE)
    t.join()
    print("measured worker %.6f" % out[0], flush=True)
    subprocess.run([sys.executable, sys.argv[0], "child", str(SCALE)], check=True)


main()
