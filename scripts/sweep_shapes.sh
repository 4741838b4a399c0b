#!/usr/bin/env bash
# The cold start's shape sweep at equal CPU time (docs/cold_start.md): four shapes, each given the pretraining
# and SFT steps that 8 + 12 minutes buy it on 2 cores, by step times measured side by side. Two arms run at a
# time on one thread each (the step counts, not the clock, fix each arm's budget), then each is scored on the
# held-out set. Logs: out/sweep_<arm>.log; reports: out/sweep_<arm>_eval.json.
#   bash scripts/sweep_shapes.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# arm: hidden layers pretrain_steps sft_steps (seconds per step at 2 threads: pretrain 16x512, SFT 16x336)
ARMS=(
  "256x4 256 4 188 570"   # 2.55 s, 1.26 s
  "512x4 512 4 124 281"   # 3.87 s, 2.56 s
  "256x6 256 6 155 374"   # 3.11 s, 1.92 s
  "256x8 256 8 135 299"   # 3.54 s, 2.41 s
)
run_arm() {
  read -r name hidden layers pre sft <<< "$1"
  OMP_NUM_THREADS=1 python scripts/cold_start.py --prefix "sweep_${name}_" --hidden_size "$hidden" \
    --num_hidden_layers "$layers" --pretrain_steps "$pre" --sft_steps "$sft" --pretrain_warmup 20 \
    --sft_warmup 30 --from_resume 1 > "out/sweep_${name}.log" 2>&1
  OMP_NUM_THREADS=1 python scripts/eval_toolcall.py --weight "sweep_${name}_full_sft" --hidden_size "$hidden" \
    --num_hidden_layers "$layers" --out "out/sweep_${name}_eval.json" > "out/sweep_${name}_eval.log" 2>&1
}
mkdir -p out
for i in 0 2; do
  run_arm "${ARMS[$i]}" & run_arm "${ARMS[$((i + 1))]}" & wait
done
for a in "${ARMS[@]}"; do
  name=${a%% *}
  python - "$name" <<'PY'
import json, sys
name = sys.argv[1]
r = json.load(open(f"out/sweep_{name}_eval.json"))
s = r["summary"]
print(name, f"completion {s['task_completion']:.3f}", "ci", [round(x, 3) for x in s["task_completion_ci95"]],
      {k: round(v["task_completion"], 2) for k, v in r["by_skill"].items()})
PY
done
