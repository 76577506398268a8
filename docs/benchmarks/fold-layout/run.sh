#!/bin/bash
# Self-play at the README job's settings before and after libtorch's network is folded
# for inference (batch norm folded into the convolutions, weights cast once,
# channels-last activations), alternating processes, one round each:
#   OLD: xqz-torch built from 5809d77 (git worktree add /tmp/old 5809d77, then in it
#        `source scripts/env.sh && cargo build --release --bin xqz-torch`)
#   NEW: xqz-torch built from the commit BENCHMARKS names
# Run from the repository root on an otherwise idle machine; output: contention.txt.
OLD=${OLD:-/tmp/old/target/release/xqz-torch}
NEW=${NEW:-target/release/xqz-torch}
for r in 1 2 3; do
  for side in old new; do
    bin=$OLD; [ "$side" = new ] && bin=$NEW
    echo "== round $r $side"
    "$bin" bench contention --config configs/quickstart.toml --seconds 15 --rounds 1 \
      --backends native-f32,torch-f32,torch-bf16,auto 2>&1 | grep -E "^round|auto:"
  done
done
