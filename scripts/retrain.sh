#!/usr/bin/env bash
# Retrain the learned cost model for one accelerator: collect -> train -> evaluate -> install.
#
#   scripts/retrain.sh --device npu --hardware ascend_910b
#   scripts/retrain.sh --device cuda --hardware h200 --skip-collect
#
# Options:
#   --device D         collector device: cuda | npu | interpreter (default cuda)
#   --hardware H       hardware profile name (learned_cost/hardware/H.json); required
#   --data DIR         profile directory (default data/H)
#   --collect-args S   extra flags for `learned-cost collect`, one quoted string
#   --skip-collect     train on the profiles already in DIR
#   --python P         interpreter with learned_cost installed (default: .venv/bin/python, else python3)
#
# The model is trained into a staging folder and copied to models/H/ only after
# training and evaluation both succeed; the report goes to reports/H/.
set -euo pipefail

device=cuda
hardware=""
data=""
collect_args=""
skip_collect=0
py=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --device) device="$2"; shift 2 ;;
    --hardware) hardware="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    --collect-args) collect_args="$2"; shift 2 ;;
    --skip-collect) skip_collect=1; shift ;;
    --python) py="$2"; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "retrain.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done
[[ -n "$hardware" ]] || { echo "retrain.sh: --hardware is required (e.g. ascend_910b)" >&2; exit 2; }
case "$device" in cuda|npu|interpreter) ;; *) echo "retrain.sh: --device must be cuda, npu or interpreter, got $device" >&2; exit 2 ;; esac

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [[ -z "$py" ]]; then
  if [[ -x .venv/bin/python ]]; then py=.venv/bin/python; else py=python3; fi
fi
data="${data:-data/$hardware}"
cli=("$py" -c 'import sys; from learned_cost.cli import main; sys.exit(main())')
train=("$py" -m learned_cost.train)
staging="$(mktemp -d "${TMPDIR:-/tmp}/learned-cost-$hardware-XXXXXX")"
trap 'rm -rf "$staging"' EXIT

if [[ $skip_collect -eq 0 ]]; then
  echo "== collect ($device) -> $data"
  # shellcheck disable=SC2086  # collect_args is deliberately word-split
  "${cli[@]}" collect --device "$device" --hardware "$hardware" --out "$data" $collect_args
fi

echo "== train -> $staging"
"${train[@]}" train --data "$data" --hardware "$hardware" --out "$staging"

echo "== evaluate -> reports/$hardware"
"${train[@]}" evaluate --data "$data" --hardware "$hardware" --model "$staging" --out "reports/$hardware"

echo "== install -> models/$hardware"
mkdir -p "models/$hardware"
rm -f "models/$hardware/interval_model.txt"
[ -f "$staging/interval_model.txt" ] && cp "$staging/interval_model.txt" "models/$hardware/"
cp "$staging/model.txt" "$staging/metadata.json" "models/$hardware/"
echo "done: models/$hardware (see reports/$hardware/evaluation.md)"
