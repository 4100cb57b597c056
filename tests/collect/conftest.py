"""Shared steps of the corpus-module tests (test_collect_library.py,
test_collect_inference.py, test_collect_backward.py, ...): a Python
subprocess in the repository, the collector over a module's families under
the interpreter with its row checks, TTIR + features of one config, and the
checks every group's configs owe."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_python(args, timeout=240) -> str:
    """``python args...`` from the repository root with this checkout first
    on the path and the interpreter switch off; its output (asserts exit 0)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("TRITON_INTERPRET", None)
    p = subprocess.run([sys.executable, *args], check=False, env=env, capture_output=True, text=True,
                       timeout=timeout, cwd=ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout + p.stderr


def measure_tiny(families, out: Path, max_configs: int):
    """Collect every family's --tiny shapes (fp16 and fp32: bf16 does not
    compute right in the interpreter), ``max_configs`` configs per group,
    and check that every expected group is there, every row ok, correct,
    timed and with TTIR. Returns the rows."""
    from learned_cost.dataset import ProfileStore

    log = run_python(["-m", "learned_cost.collect", "--device", "interpreter", "--tiny", "--dtypes", "fp16,fp32",
                      "--no-progress", "--jobs", "1", "--max-configs", str(max_configs), "--out", str(out),
                      "--families", ",".join(f.name for f in families)])
    rows = ProfileStore(out).load_rows()
    want = {f"{f.name}/{'-'.join(f'{k}{v}' for k, v in f.tiny.items())}/{d}"
            for f in families for d in f.dtypes if d in ("fp16", "fp32")}
    assert set(rows["group"]) == want, log
    bad = rows[rows["status"] != "ok"]
    assert bad.empty, bad[["group", "config", "status", "error"]].to_string()
    assert rows["correct"].all() and (rows["latency_us"] > 0).all()
    assert (rows.groupby("group").size() == max_configs).all()
    assert (rows["ttir_digest"] != "").all()
    return rows


def ttir_and_features(fam, shape, dtype, cfg=None):
    """Stock Triton's TTIR (raw and optimized) of one launch of ``fam`` at
    ``shape`` (``cfg``: default the group's first config) and the features of
    each stage: (texts, launch, {stage: FeatureVector})."""
    from learned_cost.collect.bindings import arg_bindings
    from learned_cost.collect.collector import _param_names, launch_options
    from learned_cost.collect.ttir_gen import generate_ttir
    from learned_cost.features import extract_features

    if cfg is None:
        cfg = fam.group_configs(shape, dtype)[0]
    launch = fam.launch(fam.make_inputs(shape, dtype, "meta"), shape, cfg, dtype)
    texts = generate_ttir(fam.kernel, launch.args, launch.constexprs, launch_options(cfg))
    bindings = arg_bindings(_param_names(fam.kernel), launch.args, texts.optimized)
    feats = {
        stage: extract_features(text, bindings=bindings, grid=launch.grid, options=launch_options(cfg), cores=132)
        for stage, text in (("raw", texts.raw), ("optimized", texts.optimized))
    }
    return texts, launch, feats


def sound_features(fam, shape, dtype, cfg):
    """``ttir_and_features`` after the checks every corpus family's real
    shapes owe, in both TTIR stages: finite features, every op costed, every
    loop's trips resolved and one program per grid point."""
    texts, launch, feats = ttir_and_features(fam, shape, dtype, cfg)
    grid = launch.grid
    for stage in ("raw", "optimized"):
        v = feats[stage].values
        assert all(math.isfinite(x) for x in v.values()), (fam.name, stage)
        assert v["unknown_ops"] == 0 and v["unresolved_loops"] == 0, (fam.name, stage)
        assert v["programs"] == grid[0] * grid[1] * grid[2], (fam.name, stage)
    return texts, launch, feats


def option_groups(fam):
    """Each group ``fam`` measures (skipped ones left out) as (shape, dtype,
    configs), after the checks every corpus family owes: 8 to
    ``fam.max_configs`` distinct configs, more than one num_warps and only
    powers of two up to 16 among them. The caller checks the rest."""
    for dtype in fam.dtypes:
        for shape in fam.shapes:
            if fam.skip(shape, dtype):
                continue
            cfgs = fam.group_configs(shape, dtype)
            assert 8 <= len(cfgs) <= fam.max_configs, (fam.name, shape, dtype, len(cfgs))
            assert len({tuple(sorted(c.items())) for c in cfgs}) == len(cfgs), (fam.name, shape, dtype)
            warps = {c["num_warps"] for c in cfgs}
            assert warps <= {1, 2, 4, 8, 16} and len(warps) > 1, (fam.name, shape, dtype, warps)
            yield shape, dtype, cfgs


@pytest.fixture
def corpus_checks():
    """The helpers above (a fixture: the tests import with importlib mode,
    so a sibling module is not importable by name)."""
    return SimpleNamespace(python=run_python, measure_tiny=measure_tiny, ttir_and_features=ttir_and_features,
                           sound_features=sound_features, option_groups=option_groups)
