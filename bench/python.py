# SPDX-License-Identifier: MIT
#
# bench/python.py -r ROUNDS: the Python workload of bench/run.sh, a CPU-bound
# program of fixed work (ROUNDS rounds of recursion, a dict loop and string
# formatting, the same each round), so that a profiler's cost shows as a
# longer run.  Prints a checksum of one round on stdout (the same for any
# ROUNDS); with XP_TARGET_VERBOSE set, a line "python: ROUNDS rounds in W s
# wall, C s CPU" on stderr, as the C targets do.
import os
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def tally(words):
    counts = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    return sum(v * len(k) for k, v in counts.items())


def spell(i):
    return "%d:%x" % (i % 97, i % 251)


def one_round():
    return fib(16) + tally([spell(i) for i in range(300)])


def main():
    if len(sys.argv) != 3 or sys.argv[1] != "-r" or not sys.argv[2].isdigit():
        sys.exit("usage: python.py -r ROUNDS")
    rounds = int(sys.argv[2])
    w0, c0 = time.perf_counter(), time.thread_time()
    s = 0
    for _ in range(rounds):
        s = one_round()
    w1, c1 = time.perf_counter(), time.thread_time()
    print(s)
    if os.environ.get("XP_TARGET_VERBOSE"):
        print("python: %d rounds in %.6f s wall, %.6f s CPU" % (rounds, w1 - w0, c1 - c0),
              file=sys.stderr)


main()
