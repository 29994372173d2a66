#!/usr/bin/env python3
"""The host's wake-up floor for a real-time thread, the same kind of timed sleep a pump
thread does: SCHED_FIFO priority 10 (as the pump), timer slack 1 ns, sleeps of 500 us (a
64 KB super-packet's time at 1 Gbit/s), lateness = wake-up - due. Whatever load the machine
carries when this runs shows in the figures; the pump's release lateness cannot be lower.

usage: sudo python3 bench/wakeup_floor.py [SECONDS]
"""
import ctypes
import os
import sys
import time

PR_SET_TIMERSLACK = 29
PERIOD_S = 500e-6


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0)
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    late = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        due = time.monotonic() + PERIOD_S
        time.sleep(PERIOD_S)
        late.append((time.monotonic() - due) * 1e6)
    late.sort()
    n = len(late)
    pick = lambda q: late[min(n - 1, int(n * q))]
    print(f"{n} timed sleeps of 500 us under SCHED_FIFO: late p50 {pick(0.5):.0f} us, "
          f"p99 {pick(0.99):.0f} us, p99.9 {pick(0.999):.0f} us, max {late[-1]:.0f} us")


if __name__ == "__main__":
    main()
