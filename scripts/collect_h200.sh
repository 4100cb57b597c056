#!/usr/bin/env bash
# Collect H200 profiles on the device machine (run from the repository root).
# Usage: scripts/collect_h200.sh TAG DEADLINE_S [extra collector args...]
#   TAG: name part of the consolidated files written to $OUT (rows-h200-TAG.parquet,
#        ttir-h200-TAG.parquet); DEADLINE_S: the collector stops cleanly after this.
# Keys already in data/<hw>/ are skipped (hw: the card that runs, see
# scripts/device_hw.sh), so successive calls continue the dataset.
set -uo pipefail
tag=$1; deadline=$2; shift 2
out=${OUT:-/tmp/out}
mkdir -p "$out"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$out/nvidia-smi.txt"
# The files and the rows' hardware name follow the card that ran (a lease
# may bring an H100 instead of an H200): rows-<hw>-TAG.parquet, data/<hw>.
hw=$(scripts/device_hw.sh)
echo "[collect_h200] card profile: $hw"
python3 -m learned_cost.collect --device cuda --out /tmp/store --skip-from "data/$hw" --hardware "$hw" \
  --export-dir "$out" --export-tag "$hw-$tag" --deadline "$deadline" --run-timeout 60 "$@" 2>&1 | tee "$out/collect-$tag.log"
