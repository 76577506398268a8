#!/bin/bash
# One sync-mode self-play generation (24 games, as the README job plays between gates)
# on the README job's best network, native f32 against `auto`, alternating, three rounds:
# each round on a fresh copy of the run directory, the same seed.
#   RUN: the README job's run directory (runs/quickstart-7e5c60c)
#   BIN: the directory of the release xqz-torch
# Prints each round's `selfplay` event figures; output: generations.txt.
RUN=${RUN:-runs/quickstart-7e5c60c}
BIN=${BIN:-target/release}
for r in 1 2 3; do
  for backend in native auto; do
    copy=$(mktemp -d)
    cp -r "$RUN"/. "$copy"/
    rm -f "$copy"/events.jsonl
    XQZ_BACKEND=$backend "$BIN/xqz-torch" selfplay --run "$copy" --games 24 --seed 1 --quiet >/dev/null 2>&1
    python3 - "$copy/events.jsonl" "$r" "$backend" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if '"selfplay"' in l]
g = sum(e["games"] for e in ev); p = sum(e["positions"] for e in ev)
s = sum(e["seconds"] for e in ev); n = sum(e["evaluations"] for e in ev)
b = ev[-1].get("backend")
print(f"round {sys.argv[2]} {sys.argv[3]:>6} ({b}): {g} games, {p} positions in {s:.1f} s: "
      f"{p / s:.1f} positions/s, {n / s:.0f} evaluations/s, average batch {ev[-1]['average_batch']:.1f}")
PY
    rm -rf "$copy"
  done
done
