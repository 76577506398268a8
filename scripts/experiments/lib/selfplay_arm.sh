# Shared by the self-play experiments of docs/lab/ (selfplay_quiescence,
# selfplay_lr, value_quiescence, selfplay_visits, selfplay_book, selfplay_mix,
# selfplay_value_weight; cpu2h_post, pretrain_value_weight, pretrain_continued and
# selfplay_which_head use its matches):
# one arm is the README's main job (configs/quickstart.toml) without its final match,
# so that its whole budget goes to the loop, with the arm's own edits;
# then the run's exported best player against the same run's pre-trained network, both
# at the exported budget (their own engine.toml: 800 visits, leaf quiescence 0.75), on
# random 8-ply openings. That head-to-head is the decisive figure: did self-play make
# the shipped player stronger than pre-training alone?
#
# Source it from the repository root; XQZ names the binary (default target/release/xqz).

# The run's pre-trained network (the last accepted one at or before pre-training's last
# step, the rule of `xq_pipeline::gauntlet::contenders`) and its chosen best player (the
# last export: the end-of-run choice, or the accepted network's).
selfplay_arm_models() { # RUN
  python3 - "$1/events.jsonl" <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
end = max((e["step"] for e in events if e["kind"] == "train" and e.get("phase") == "supervised"), default=None)
promoted = [e for e in events if e["kind"] == "promote"]
pre = [e for e in promoted if end is None or e["step"] <= end]
pretrained = (pre[-1] if end is not None else promoted[0])["model"]
best = [e["model"] for e in events if e["kind"] == "export"][-1]
print(pretrained, best)
PY
}

# The README job's config for an experiment's run OUT/ARM, written to OUT/ARM.toml:
# its run directory, [run] seed SEED, no final match (its reserve goes to the loop),
# the master games by absolute path, then SEDS, further sed expressions.
arm_config() { # OUT ARM SEED [SEDS...]
  local out=$1 arm=$2 seed=$3 edits=() e
  shift 3
  for e in "$@"; do edits+=(-e "$e"); done
  sed -e "s|^dir = .*|dir = \"$out/$arm\"|" \
    -e "s|^seed = .*|seed = $seed|" \
    -e "s|^final_reserve_minutes = .*|final_reserve_minutes = 0|" \
    -e "s|^final_games = .*|final_games = 0|" \
    -e "s|\"\.\./tests/data/|\"$(realpath tests/data)/|" \
    "${edits[@]}" \
    configs/quickstart.toml >"$out/$arm.toml"
}

# One arm: OUT/ARM.toml, the run OUT/ARM (log OUT/ARM.log) and the head-to-head
# OUT/ARM-best-vs-pretrained.{json,pgn}. SEDS are further sed expressions on the config.
# A run already finished and a match already written are kept.
selfplay_arm() { # OUT ARM SEED MINUTES GAMES [SEDS...]
  local out=$1 arm=$2 seed=$3 minutes=$4 games=$5
  shift 5
  local xqz=${XQZ:-target/release/xqz}
  arm_config "$out" "$arm" "$seed" "s|^budget_minutes = .*|budget_minutes = $minutes|" "$@"
  if ! grep -q '"finished": true' "$out/$arm/state.json" 2>/dev/null; then
    rm -rf "${out:?}/$arm"
    "$xqz" run --config "$out/$arm.toml" >"$out/$arm.log" 2>&1
  fi
  local pretrained best
  read -r pretrained best < <(selfplay_arm_models "$out/$arm")
  echo "$arm: pre-trained $pretrained, best $best"
  experiment_match "$out" "$arm-best-vs-pretrained" "player:$out/$arm/players/$best" \
    "player:$out/$arm/players/$pretrained" "$games"
}

# One match of the experiments: A against B, GAMES games on random 8-ply openings, seed
# SEED (default 3), two at a time, written as OUT/NAME.json (atomically) and
# OUT/NAME.pgn; the last line of its summary is printed. A match already written is
# kept.
experiment_match() { # OUT NAME A B GAMES [SEED]
  local out=$1 name=$2 seed=${6:-3} xqz=${XQZ:-target/release/xqz}
  if [ ! -f "$out/$name.json" ]; then
    rm -f "$out/$name.pgn"
    "$xqz" match --a "$3" --b "$4" --games "$5" --concurrency 2 --openings random:8 \
      --seed "$seed" --json "$out/$name.json.tmp" --pgn "$out/$name.pgn" 2>/dev/null | tail -1
    mv "$out/$name.json.tmp" "$out/$name.json"
  fi
}
