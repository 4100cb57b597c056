"""The inference families (learned_cost/collect/corpus/inference.py):
measured and checked by the collector under the interpreter, side outputs
right, TTIR made on the host for every measured shape's first config,
features extracted from it, plans of sensible size."""

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

inf = pytest.importorskip("learned_cost.collect.corpus.inference")
NAMES = [f.name for f in inf.FAMILIES]


def _python(args, timeout=240):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("TRITON_INTERPRET", None)
    p = subprocess.run([sys.executable, *args], check=False, env=env, capture_output=True, text=True,
                       timeout=timeout, cwd=ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout + p.stderr


def test_collector_measures_and_checks_every_inference_family(tmp_path):
    out = tmp_path / "store"
    log = _python(["-m", "learned_cost.collect", "--device", "interpreter", "--tiny", "--dtypes", "fp16,fp32",
                   "--no-progress", "--jobs", "1", "--max-configs", "2", "--out", str(out),
                   "--families", ",".join(NAMES)])
    rows = ProfileStore(out).load_rows()
    # bf16 does not compute right in the interpreter: fp16 and fp32 only
    want = {f"{f.name}/{'-'.join(f'{k}{v}' for k, v in f.tiny.items())}/{d}"
            for f in inf.FAMILIES for d in f.dtypes if d in ("fp16", "fp32")}
    assert set(rows["group"]) == want, log
    bad = rows[rows["status"] != "ok"]
    assert bad.empty, bad[["group", "config", "status", "error"]].to_string()
    assert rows["correct"].all() and (rows["latency_us"] > 0).all()
    assert (rows.groupby("group").size() == 2).all()
    assert (rows["ttir_digest"] != "").all()


def test_side_outputs_empty_splits_and_exact_integers():
    log = _python([str(HERE / "inference_side_checks.py")])
    for name in ("splitkv_partials_and_combine", "splitkv_empty_splits", "quant_scales_and_every_tile",
                 "gating_ids_exact", "kv_append_both_caches_and_padding"):
        assert f"ok {name}" in log, log


def test_integer_outputs_and_copies_are_checked_exactly():
    for fam in (inf.GROUP_QUANT_INT8, inf.KV_CACHE_APPEND):
        assert all(v == 0.0 for v in fam.tolerance.values()), fam.name
    for fam in inf.FAMILIES:
        assert set(fam.tolerance) >= set(fam.dtypes), fam.name


def _ttir_and_features(fam, shape, dtype):
    from learned_cost.collect.bindings import arg_bindings
    from learned_cost.collect.collector import _param_names, launch_options
    from learned_cost.collect.ttir_gen import generate_ttir
    from learned_cost.features import extract_features

    cfg = fam.group_configs(shape, dtype)[0]
    launch = fam.launch(fam.make_inputs(shape, dtype, "meta"), shape, cfg, dtype)
    texts = generate_ttir(fam.kernel, launch.args, launch.constexprs, launch_options(cfg))
    bindings = arg_bindings(_param_names(fam.kernel), launch.args, texts.optimized)
    feats = {
        stage: extract_features(text, bindings=bindings, grid=launch.grid, options=launch_options(cfg), cores=132)
        for stage, text in (("raw", texts.raw), ("optimized", texts.optimized))
    }
    return texts, launch, feats


@pytest.mark.parametrize("fam", inf.FAMILIES, ids=NAMES)
def test_stock_triton_makes_ttir_and_features_for_real_shapes(fam):
    dtype = fam.dtypes[0]
    for shape in (fam.shapes[0], fam.shapes[-1]):
        texts, launch, feats = _ttir_and_features(fam, shape, dtype)
        assert "tt.func public" in texts.optimized and fam.kernel.__name__ in texts.optimized
        grid = launch.grid
        for stage, fv in feats.items():
            v = fv.values
            assert all(math.isfinite(x) for x in v.values()), (stage, fam.name)
            assert v["programs"] == grid[0] * grid[1] * grid[2]
            assert v["total_load_bytes"] > 0 and v["total_store_bytes"] > 0
            if fam.name == "splitkv_decode":
                # two dots per KV block on (heads padded to 16) x BLOCK_N x D
                assert v["total_dot_flops"] > 0, stage
            else:
                assert v["total_dot_flops"] == 0
            if fam.name == "kv_cache_append":
                assert v["indirect_store_ops"] > 0, stage
        if fam.name == "splitkv_decode":
            assert grid[2] == shape["SPLITS"]


@pytest.mark.parametrize("fam", inf.FAMILIES, ids=NAMES)
def test_every_group_has_a_real_choice_of_launch_options(fam):
    for dtype in fam.dtypes:
        for shape in fam.shapes:
            if fam.skip(shape, dtype):
                continue
            cfgs = fam.group_configs(shape, dtype)
            assert 8 <= len(cfgs) <= fam.max_configs, (fam.name, shape, dtype, len(cfgs))
            assert len({tuple(sorted(c.items())) for c in cfgs}) == len(cfgs)
            assert {c["num_warps"] for c in cfgs} <= {1, 2, 4, 8, 16} and len({c["num_warps"] for c in cfgs}) > 1
            assert {c["num_stages"] for c in cfgs} <= {1, 2, 3}
            if fam.name == "splitkv_decode":
                assert len({c["num_stages"] for c in cfgs}) == 3  # the KV loop is pipelined
            else:
                assert {c["num_stages"] for c in cfgs} == {1}  # no loop


def test_plans_are_of_sensible_size():
    for fam in inf.FAMILIES:
        groups = [(s, d) for s in fam.shapes for d in fam.dtypes if not fam.skip(s, d)]
        configs = sum(len(fam.group_configs(s, d)) for s, d in groups)
        assert 20 <= len(groups) <= 40 and 800 <= configs <= 1500, (fam.name, len(groups), configs)


def test_list_names_the_inference_families(tmp_path):
    log = _python(["-m", "learned_cost.collect", "--out", str(tmp_path / "x"), "--list"], timeout=120)
    for name in NAMES:
        assert any(line.split()[0] == name and "groups=" in line for line in log.splitlines()), name
