#!/usr/bin/env python3
"""Start-up of an exported player: wall time from spawn to `ucciok` and the process's
peak resident memory (VmHWM) then, for the player's own launcher (the libtorch-free
`xqz`, native backend; copied to a temporary directory and started with a bare
environment) and, as the reference in the same run, for `xqz-torch ucci --player` on
the same directory (what a player ran before). Runs alternate; medians are printed.

Usage: scripts/bench_player.py [RUNS]   (after scripts/setup; writes a scratch run
with a 3x32 network trained for 2 steps on the master games, and exports it)
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
XQZ_TORCH = os.path.join(ROOT, "target", "release", "xqz-torch")
PGN = os.path.join(ROOT, "tests", "data", "hu_ronghua_1391_iccs.pgn")


def start_up(cmd, cwd, env):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    p.stdin.write("ucci\n")
    p.stdin.flush()
    for line in p.stdout:
        if line.strip() == "ucciok":
            break
    wall = time.perf_counter() - t0
    with open(f"/proc/{p.pid}/status") as f:
        hwm = next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
    p.stdin.write("quit\n")
    p.stdin.flush()
    p.wait()
    return wall * 1e3, hwm / 1024


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    work = tempfile.mkdtemp(prefix="xqz-bench-player-")
    try:
        run = os.path.join(work, "run")
        cfg = os.path.join(work, "train.toml")
        with open(cfg, "w") as f:
            f.write("[train]\nnet = { blocks = 3, channels = 32 }\nbatch_size = 32\n"
                    "device = \"cpu\"\n")
        subprocess.run([XQZ_TORCH, "train", "--run", run, "--config", cfg, "--steps", "2",
                        "--pgn", PGN], check=True, stdout=subprocess.DEVNULL)
        player = os.path.join(work, "player")
        subprocess.run([XQZ_TORCH, "export", "--run", run, "--out", player], check=True,
                       stdout=subprocess.DEVNULL)
        away = os.path.join(work, "away")
        shutil.copytree(player, away)
        size = os.path.getsize(os.path.join(away, "xqz")) / 1e6
        bare = {"PATH": "/usr/bin:/bin"}
        full = dict(os.environ)
        own, ref = [], []
        for _ in range(runs):
            own.append(start_up([os.path.join(away, "xqzero-engine")], away, bare))
            ref.append(start_up([XQZ_TORCH, "ucci", "--player", player], work,
                                dict(full, XQZ_BACKEND="torch")))
        med = lambda xs, i: statistics.median(x[i] for x in xs)
        print(f"exported player (xqz {size:.1f} MB, copied away, bare environment): "
              f"ucciok after {med(own, 0):.1f} ms, peak RSS {med(own, 1):.1f} MB")
        print(f"reference, xqz-torch ucci --player (libtorch): "
              f"ucciok after {med(ref, 0):.1f} ms, peak RSS {med(ref, 1):.1f} MB")
        print(f"medians of {runs} alternating runs")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
