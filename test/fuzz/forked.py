"""One case in a forked child under a deadline: how the fuzzers survive a crash, an abort or a hang of the code
under test (tlx-verify, a Triton compile) and pay the imports once."""
from __future__ import annotations

import os
import signal
import sys
import threading
import time


def run_forked(child, timeout_s: float) -> tuple[int, bool]:
    """(wait status, hung) of `child()` run in a forked child, killed after `timeout_s` seconds. The child's
    process ends with `child` (status 70 if it returns or raises without ending it). Forks with no other
    thread of this process running (e.g. a Z3 context being made): a fork copies no thread but the caller."""
    for t in threading.enumerate():
        if t is not threading.current_thread() and not t.daemon:
            t.join()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            child()
        finally:
            os._exit(70)
    deadline = time.monotonic() + timeout_s
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status, False
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            return os.waitpid(pid, 0)[1], True
        time.sleep(0.002)
