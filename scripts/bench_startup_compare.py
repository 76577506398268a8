#!/usr/bin/env python3
"""Start-up of `perft --depth 1` under several xqz binaries, alternating, 30 runs each, medians.

Usage: scripts/bench_startup_compare.py OLD_XQZ NEW_XQZ NEW_XQZ_TORCH

OLD_XQZ is a binary from before the split (e.g. commit 40104cd built with
`CARGO_TARGET_DIR=/tmp/old cargo build --release --bin xqz` in a worktree). Wall time is
spawn to exit. Peak memory is the child's ru_maxrss (from wait4) for OLD and NEW_XQZ_TORCH,
and for NEW_XQZ its own VmHWM (XQZ_REPORT_PEAK_RSS), because ru_maxrss never reads below
the few MB of this Python parent. docs/BENCHMARKS.md has the figures."""

import os
import statistics
import subprocess
import sys
import time

old, new, torch = sys.argv[1:4]
res = {k: ([], []) for k in ("old", "new", "torch")}
for _ in range(30):
    for k, b in (("old", old), ("new", new), ("torch", torch)):
        t0 = time.perf_counter()
        p = subprocess.Popen([b, "perft", "--depth", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env=dict(os.environ, XQZ_REPORT_PEAK_RSS="1"))
        err = p.stderr.read().decode()
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
        assert os.waitstatus_to_exitcode(status) == 0
        self_kib = [int(l.split()[1]) for l in err.splitlines() if l.startswith("peak_rss_kib ")]
        kib = ru.ru_maxrss if k != "new" else self_kib[0]
        res[k][0].append(dt); res[k][1].append(kib)
for k in ("old", "new", "torch"):
    print(f"{k:6} ({'VmHWM' if k == 'new' else 'ru_maxrss'}) {statistics.median(res[k][0])*1e3:8.1f} ms wall {statistics.median(res[k][1])/1024:8.1f} MB peak RSS")
