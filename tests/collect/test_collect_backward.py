"""The backward families (learned_cost/collect/corpus/backward.py): measured
and checked by the collector under the interpreter, side outputs right,
TTIR made on the host for every measured shape's first and last config,
features extracted from it, plans of sensible size whose tiles stay within
the registers of one thread."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from learned_cost.dataset import ProfileStore

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

bwd = pytest.importorskip("learned_cost.collect.corpus.backward")
NAMES = [f.name for f in bwd.FAMILIES]


def _python(args, timeout=240):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("TRITON_INTERPRET", None)
    p = subprocess.run([sys.executable, *args], check=False, env=env, capture_output=True, text=True,
                       timeout=timeout, cwd=ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout + p.stderr


def test_collector_measures_and_checks_every_backward_family(tmp_path):
    out = tmp_path / "store"
    log = _python(["-m", "learned_cost.collect", "--device", "interpreter", "--tiny", "--dtypes", "fp16,fp32",
                   "--no-progress", "--jobs", "1", "--max-configs", "3", "--out", str(out),
                   "--families", ",".join(NAMES)])
    rows = ProfileStore(out).load_rows()
    # bf16 does not compute right in the interpreter: fp16 and fp32 only
    want = {f"{f.name}/{'-'.join(f'{k}{v}' for k, v in f.tiny.items())}/{d}"
            for f in bwd.FAMILIES for d in f.dtypes if d in ("fp16", "fp32")}
    assert set(rows["group"]) == want, log
    bad = rows[rows["status"] != "ok"]
    assert bad.empty, bad[["group", "config", "status", "error"]].to_string()
    assert rows["correct"].all() and (rows["latency_us"] > 0).all()
    assert (rows.groupby("group").size() == 3).all()
    assert (rows["ttir_digest"] != "").all()


def test_side_outputs_and_both_softmax_passes():
    log = _python([str(HERE / "backward_side_checks.py")])
    for name in ("rmsnorm_partials", "softmax_one_and_two_passes", "swiglu_d_up"):
        assert f"ok {name}" in log, log


def _ttir_and_features(fam, shape, dtype, cfg):
    from learned_cost.collect.bindings import arg_bindings
    from learned_cost.collect.collector import _param_names, launch_options
    from learned_cost.collect.ttir_gen import generate_ttir
    from learned_cost.features import extract_features

    launch = fam.launch(fam.make_inputs(shape, dtype, "meta"), shape, cfg, dtype)
    texts = generate_ttir(fam.kernel, launch.args, launch.constexprs, launch_options(cfg))
    bindings = arg_bindings(_param_names(fam.kernel), launch.args, texts.optimized)
    feats = {
        stage: extract_features(text, bindings=bindings, grid=launch.grid, options=launch_options(cfg), cores=132)
        for stage, text in (("raw", texts.raw), ("optimized", texts.optimized))
    }
    return texts, launch, feats


@pytest.mark.parametrize("fam", bwd.FAMILIES, ids=NAMES)
def test_stock_triton_makes_ttir_and_features_for_real_shapes(fam):
    dtype = fam.dtypes[0]
    for shape in (fam.shapes[0], fam.shapes[-1]):
        cfgs = fam.group_configs(shape, dtype)
        for cfg in (cfgs[0], cfgs[-1]):
            texts, launch, feats = _ttir_and_features(fam, shape, dtype, cfg)
            assert "tt.func public" in texts.optimized and fam.kernel.__name__ in texts.optimized
            grid = launch.grid
            for stage, fv in feats.items():
                v = fv.values
                assert all(math.isfinite(x) for x in v.values()), (stage, fam.name)
                assert v["programs"] == grid[0] * grid[1] * grid[2]
                assert v["total_load_bytes"] > 0 and v["total_store_bytes"] > 0
                assert v["total_dot_flops"] == 0
            if fam.name == "rmsnorm_bwd":
                # the grid is the program count, not the row count
                assert grid[0] == min(cfg["programs"], -(-shape["M"] // cfg["BLOCK_M"]))


# fp32 tiles alive at once in each kernel (fits_registers' count)
LIVE_TILES = {"rmsnorm_bwd": 4, "softmax_bwd": 3, "swiglu_bwd": 5}


def _tile_elements(fam_name, cfg):
    if fam_name == "softmax_bwd":
        return cfg["BLOCK_N"]
    return cfg["BLOCK_M"] * cfg["BLOCK_N"]


@pytest.mark.parametrize("fam", bwd.FAMILIES, ids=NAMES)
def test_every_group_has_a_real_choice_of_launch_options(fam):
    loops = fam.name != "swiglu_bwd"
    for dtype in fam.dtypes:
        for shape in fam.shapes:
            cfgs = fam.group_configs(shape, dtype)
            assert 8 <= len(cfgs) <= fam.max_configs, (fam.name, shape, dtype, len(cfgs))
            assert len({tuple(sorted(c.items())) for c in cfgs}) == len(cfgs)
            assert {c["num_warps"] for c in cfgs} <= {1, 2, 4, 8, 16} and len({c["num_warps"] for c in cfgs}) > 1
            assert {c["num_stages"] for c in cfgs} <= ({1, 2, 3} if loops else {1})
            for c in cfgs:
                per_thread = _tile_elements(fam.name, c) / (32 * c["num_warps"])
                assert 1 <= per_thread <= bwd.MAX_PER_THREAD, (fam.name, shape, c)
                assert bwd.fits_registers(per_thread, LIVE_TILES[fam.name], c["num_warps"]), (fam.name, shape, c)
            if fam.name == "rmsnorm_bwd":
                assert all(c["BLOCK_N"] >= shape["N"] for c in cfgs)  # whole rows
            if fam.name == "softmax_bwd" and shape["N"] > 2048:
                # long rows: both the two-pass loop and, where a row fits, the one-pass tile
                assert any(c["BLOCK_N"] < shape["N"] for c in cfgs)


def test_plan_sizes(tmp_path):
    log = _python(["-m", "learned_cost.collect", "--out", str(tmp_path / "x"), "--list", "--families",
                   ",".join(NAMES)], timeout=120)
    for name in NAMES:
        line = next(ln for ln in log.splitlines() if ln.split() and ln.split()[0] == name)
        groups = int(line.split("groups=")[1].split()[0])
        configs = int(line.split("configs=")[1].split()[0])
        assert 20 <= groups <= 40 and 800 <= configs <= 1500, line
