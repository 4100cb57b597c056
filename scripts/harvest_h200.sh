#!/usr/bin/env bash
# Harvest torch.compile kernels of the zoo and replay them over their
# tunables on the device machine (run from the repository root).
# Usage: scripts/harvest_h200.sh TAG HARVEST_S REPLAY_S [harvest args...]
#   TAG: name part of the files written to $OUT; HARVEST_S: seconds for the
#   harvest (entries still running then are stopped); REPLAY_S: seconds for
#   the replay of every capture (the new ones and those in data/inductor),
#   checked against Inductor's own launches where this run kept the tensors.
#   CAPTURES (environment, default data/inductor): the earlier captures to
#   replay too; CAPTURES=none replays only this call's.
# Rows whose keys are in data/<hw> are skipped (hw: scripts/device_hw.sh), so calls continue the dataset.
set -uo pipefail
tag=$1; harvest_s=$2; replay_s=$3; shift 3
out=${OUT:-/tmp/out}
work=/tmp/lc
mkdir -p "$out" "$work"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export TORCHINDUCTOR_CACHE_DIR=$work/inductor-cache TRITON_CACHE_DIR=$work/triton-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$out/nvidia-smi-$tag.txt"
hw=$(scripts/device_hw.sh)  # the card that runs names the files and the rows
echo "[harvest_h200] card profile: $hw"
caps="$out/captures-$hw-$tag.parquet"
if [ "$harvest_s" -gt 0 ]; then
  python3 -m learned_cost.collect.inductor harvest --out "$work/harvest" --workers 8 --compile-threads 2 \
    --deadline "$harvest_s" --entry-timeout 200 --consolidate "$caps" "$@" 2>&1 | tee "$out/harvest-$tag.log"
  python3 - "$work/harvest" "$out/harvest-summary-$tag.json" <<'PY'
import json, sys
from pathlib import Path
root, dest = Path(sys.argv[1]), Path(sys.argv[2])
summary = {}
for d in sorted(p for p in root.iterdir() if p.is_dir()):
    done = json.loads((d / "done.json").read_text()) if (d / "done.json").exists() else {"status": "unfinished"}
    log = d / "harvest.log"
    done["log_tail"] = log.read_text(errors="replace")[-3000:] if log.exists() else ""
    summary[d.name] = done
dest.write_text(json.dumps(summary, indent=1))
PY
fi
inputs=()
for f in "$out"/captures-"$hw"-"$tag".parquet "$out"/captures-"$hw"-"$tag"-p*.parquet; do
  [ -f "$f" ] && inputs+=("$f")  # one file, or numbered parts when large
done
captures=${CAPTURES:-data/inductor}
[ "$captures" != none ] && [ -e "$captures" ] && inputs+=("$captures")
if [ "$replay_s" -gt 0 ] && [ ${#inputs[@]} -gt 0 ]; then
  python3 -m learned_cost.collect.inductor replay "${inputs[@]}" --tensors "$work/harvest" --out "$work/store" \
    --skip-from "data/$hw" --hardware "$hw" --export-dir "$out" --export-tag "$hw-$tag" --deadline "$replay_s" --run-timeout 60 2>&1 | tee "$out/replay-$tag.log"
fi
# A call brings back at most 8 files: pack the logs into one archive so the
# captures (one or more parts), rows and TTIR files always fit beside it.
logs=()
for f in nvidia-smi-"$tag".txt harvest-"$tag".log harvest-summary-"$tag".json replay-"$tag".log; do
  [ -f "$out/$f" ] && logs+=("$f")
done
if [ ${#logs[@]} -gt 0 ] && tar czf "$out/logs-$hw-$tag.tgz" -C "$out" "${logs[@]}"; then
  (cd "$out" && rm -f "${logs[@]}")
fi
