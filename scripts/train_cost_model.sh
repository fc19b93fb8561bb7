#!/bin/bash
# Makes the auto-scheduler's pre-trained cost model, data/cost_model/model.json, and its training
# data, data/cost_model/records/*.json: for each workload of a broad set (the test suite's CNNs
# and transformers, ../shared/models when present, and the encoders and MLP
# data/cost_model/generate_workloads.py makes), `anvil tune --search auto --cost-model none`
# measures programs for a few minutes; then `anvil train-cost-model` trains on all the records.
#
#   scripts/train_cost_model.sh [--minutes N] [--train-only]
#
# --minutes N: tuning budget per workload (default 3; about 40 minutes in all on 2 cores).
# --train-only: keep the records, train again (after a change to the features, say).
# Run it on the machine the model is for (its records are that target's), with nothing else
# running: noisy measurements teach a noisy ranking.
set -euo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.."
MINUTES=3
TRAIN_ONLY=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes) MINUTES="$2"; shift 2 ;;
    --train-only) TRAIN_ONLY=1; shift ;;
    *) echo "usage: $0 [--minutes N] [--train-only]" >&2; exit 2 ;;
  esac
done
ANVIL=build/src/driver/cli/anvil
[[ -x $ANVIL ]] || { echo "build Anvil first (README)" >&2; exit 1; }
DATA=data/cost_model
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$DATA/records"

/usr/bin/python3 "$DATA/generate_workloads.py" "$WORK/generated" > /dev/null
MODELS=()
for m in googlenet mnasnet0_5 mobilenet_v3_small regnet_x_400mf shufflenet_v2_x0_5 \
         squeezenet1_1 bert_tiny_gelu transformer_encoder_relu; do
  MODELS+=("tests/models/$m/model.onnx")
done
for m in resnet18 mobilenet_v2; do
  [[ -f ../shared/models/$m/model.onnx ]] && MODELS+=("../shared/models/$m/model.onnx")
done
generated=("$WORK"/generated/*/model.onnx)
((${#generated[@]})) || { echo "generate_workloads.py made no model" >&2; exit 1; }
MODELS+=("${generated[@]}")

RECORDS=()
for model in "${MODELS[@]}"; do
  name=$(basename "$(dirname "$model")")
  records="$DATA/records/$name.json"
  RECORDS+=("$records")
  if [[ $TRAIN_ONLY == 0 ]]; then
    rm -f "$records"
    echo "== $name: tuning ${MINUTES}m"
    "$ANVIL" tune "$model" --search auto --cost-model none --no-tuning-cache \
      --time-budget "${MINUTES}m" -o "$records" --curve "$WORK/$name.curve.csv" | tail -1
  fi
done
"$ANVIL" train-cost-model --models "${MODELS[@]}" --records "${RECORDS[@]}" -o "$DATA/model.json"
