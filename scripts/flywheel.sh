#!/usr/bin/env bash
# One turn of the data flywheel, end to end on a CPU:
#   evaluate the agent -> rejection-sample its weakest categories -> incremental SFT (new + rehearsed data)
#   -> a short agent-RL run -> evaluate again.
#
# Run (from the repository root, after an agent RL run has written out/agent_best_256.pth):
#   bash scripts/flywheel.sh                    # START=agent_best, outputs named flywheel*
#   START=agent_best TAG=fw2 RL_STEPS=200 bash scripts/flywheel.sh
#   START=runC TAG=fw10 WEAKEST=2 SELF_REHEARSAL=1 SEEDS="42 7" bash scripts/flywheel.sh
set -euo pipefail
cd "$(dirname "$0")/.."

START=${START:-agent_best}        # the checkpoint to improve (a name in out/)
TAG=${TAG:-flywheel}              # prefix of everything this turn writes
WEAKEST=${WEAKEST:-3}             # categories to rejection-sample, the weakest first
K=${K:-8}                         # trajectories sampled per prompt
SELF_REHEARSAL=${SELF_REHEARSAL:-0}  # 1: also keep one own correct trajectory per prompt of the other categories
MIX_RATIO=${MIX_RATIO:-0.5}       # share of rehearsed original SFT conversations
SFT_EPOCHS=${SFT_EPOCHS:-2}
SFT_LR=${SFT_LR:-2e-4}
RL_STEPS=${RL_STEPS:-100}
RL_WEIGHTS=${RL_WEIGHTS:-}        # --category_weights of the RL stage, e.g. parallel=3,chained=3 (empty: all alike)
SEED=${SEED:-42}                  # the RL stage's seed, and the consolidation's when SEEDS is not given
SEEDS=${SEEDS:-$SEED}             # e.g. "42 7": one consolidation per seed, then their average
CASES=dataset/eval_toolcall.jsonl

echo "== 1. evaluate $START"
python scripts/eval_toolcall.py --weight "$START" --cases "$CASES" --out "out/${TAG}_start_eval.json"

# one rejection-sampling + SFT pass per seed; with two or more seeds, their SFT weights are averaged
n_seeds=$(echo $SEEDS | wc -w)
sft_runs=()
for seed in $SEEDS; do
    name=$TAG
    [ "$n_seeds" -gt 1 ] && name="${TAG}_s${seed}"

    echo "== 2. rejection-sample the $WEAKEST weakest categories ($K per prompt, seed $seed)"
    python scripts/rejection_sample.py --weight "$START" --profile "out/${TAG}_start_eval.json" \
        --weakest "$WEAKEST" --k "$K" --seed "$seed" --out "dataset/${name}_rs.jsonl"
    if [ "$SELF_REHEARSAL" = 1 ]; then
        echo "== 2b. self-rehearsal: one correct trajectory per prompt of the other categories"
        python scripts/rejection_sample.py --weight "$START" --profile "out/${TAG}_start_eval.json" \
            --weakest "$WEAKEST" --rest 1 --k 4 --max_per_prompt 1 --seed "$seed" \
            --out "dataset/${name}_self.jsonl"
        cat "dataset/${name}_self.jsonl" >> "dataset/${name}_rs.jsonl"
    fi

    echo "== 3. incremental SFT from $START on the accepted trajectories, rehearsing the original data"
    python trainer/train_full_sft.py --from_weight "$START" --data_path "dataset/${name}_rs.jsonl" \
        --mix_path dataset/sft_agent.jsonl --mix_ratio "$MIX_RATIO" --epochs "$SFT_EPOCHS" \
        --learning_rate "$SFT_LR" --warmup_steps 10 --eval_interval 50 --save_best 0 \
        --save_weight "${name}_sft" --seed "$seed"
    sft_runs+=("${name}_sft")
done
if [ "$n_seeds" -gt 1 ]; then
    echo "== 3b. average the $n_seeds consolidated checkpoints"
    python scripts/average_weights.py --weights "${sft_runs[@]}" --out "${TAG}_sft"
fi

echo "== 4. agent RL from the consolidated checkpoint ($RL_STEPS steps)"
python trainer/train_agent.py --from_weight "${TAG}_sft" --save_weight "$TAG" --max_steps "$RL_STEPS" \
    --eval_interval 50 --seed "$SEED" --category_weights "$RL_WEIGHTS"

echo "== 5. evaluate the final weights of the RL run (its best evaluation was picked on this same set)"
python scripts/eval_toolcall.py --weight "$TAG" --cases "$CASES" --out "out/${TAG}_eval.json"
