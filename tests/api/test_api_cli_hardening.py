"""Command line and installation behaviour of issue 14: one error line and a
non-zero exit for bad input, a missing optional dependency named with its
extra, ``learned-cost info``, models shipped inside the package."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from learned_cost import cli

from .conftest import FIXTURES

REPO = Path(__file__).resolve().parents[2]


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("learned-cost: error: "), err
    return lines[0]


def test_features_on_an_empty_file_fails(tmp_path, capsys):
    p = tmp_path / "empty.ttir"
    p.write_text("")
    code, _, err = run(capsys, "features", str(p))
    assert code != 0 and "empty" in _one_error_line(err)


def test_features_on_a_text_without_kernel_fails(tmp_path, capsys):
    p = tmp_path / "c.ttir"
    p.write_text("// only a comment\n")
    code, _, err = run(capsys, "features", str(p))
    assert code != 0 and "no kernel" in _one_error_line(err)


def test_binary_file_is_named_as_such(tmp_path, capsys):
    p = tmp_path / "b.ttir"
    p.write_bytes(bytes(range(256)) * 4)
    for cmd in ("predict", "features"):
        code, _, err = run(capsys, cmd, str(p))
        line = _one_error_line(err)
        assert code != 0 and ("binary" in line or "not UTF-8" in line), line
        assert "codec" not in line


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_device_file_is_refused_not_read(capsys):
    code, _, err = run(capsys, "features", "/dev/zero")
    assert code != 0 and "regular file" in _one_error_line(err)


@pytest.mark.parametrize("workers", ["0", "-2", "x"])
def test_bad_worker_count_fails(capsys, workers):
    code, _, err = run(capsys, "predict", str(FIXTURES / "add.opt.ttir"), "--workers", workers)
    assert code != 0 and "--workers" in _one_error_line(err)


def test_feedback_show_of_unknown_hardware_fails(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    code, _, err = run(capsys, "feedback", "show", "--hardware", "nosuchgpu")
    assert code != 0 and "nosuchgpu" in _one_error_line(err)
    code, out, _ = run(capsys, "feedback", "show", "--hardware", "h200")
    assert code == 0 and "no rows" in out


def test_info_reports_hardware_model_schema_and_caches(capsys, monkeypatch):
    monkeypatch.delenv("LEARNED_COST_HARDWARE", raising=False)
    monkeypatch.delenv("LEARNED_COST_MODEL_DIR", raising=False)
    code, out, _ = run(capsys, "info", "--json")
    assert code == 0
    d = json.loads(out)
    meta = json.loads((REPO / "models" / "h200" / "metadata.json").read_text())
    assert d["hardware"]["name"] == "h200" and "default" in d["hardware"]["why"]
    assert d["model"]["used"] == "learned" and d["model"]["recorded_sha256"] == meta["model_sha256"]
    assert d["features"]["count"] > 0 and d["cache"]["budget_bytes"] == 256 * 2**20
    monkeypatch.setenv("LEARNED_COST_HARDWARE", "ascend_910b")
    code, out, _ = run(capsys, "info")
    assert code == 0 and "ascend_910b" in out and "LEARNED_COST_HARDWARE" in out and "analytic" in out


def _without(module: str, code: str) -> subprocess.CompletedProcess:
    src = f"import sys; sys.modules[{module!r}] = None\n{code}"
    return subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def test_autotune_without_triton_names_the_extra():
    r = _without("triton", "from learned_cost.autotune import autotune")
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError:") and "learned-cost[triton]" in last, r.stderr[-500:]


def test_collect_without_torch_names_the_extra(tmp_path):
    r = _without("torch", f"from learned_cost.cli import main; sys.exit(main(['collect', '--list', '--out', {str(tmp_path)!r}]))")
    assert r.returncode != 0
    line = _one_error_line(r.stderr)
    assert "torch" in line and "learned-cost[collect]" in line


def test_saved_model_files_are_world_readable(tmp_path):
    lgb = pytest.importorskip("lightgbm")
    import numpy as np

    from learned_cost.models import learned

    x = np.random.default_rng(0).random((40, len(learned.input_names())))
    booster = lgb.train({"objective": "regression", "min_data_in_leaf": 1, "num_leaves": 4, "verbose": -1},
                        lgb.Dataset(x, x[:, 0]), num_boost_round=2)
    m = learned.LearnedModel.from_booster(booster, {"variant": "log_latency", "model_inputs": learned.input_names(),
                                                    "hardware": "h200", "hyperparameters": {}})
    d = m.save(tmp_path / "h200")
    for name in ("model.txt", "metadata.json"):
        assert stat.S_IMODE(os.stat(d / name).st_mode) == 0o644


def test_package_carries_the_shipped_models():
    """learned_cost/_models (the package's own model folder, what a wheel
    installs) holds the same files as the repository's models/."""
    pkg = REPO / "learned_cost" / "_models" / "h200"
    for name in ("model.txt", "metadata.json"):
        assert (pkg / name).read_bytes() == (REPO / "models" / "h200" / name).read_bytes()
    text = (REPO / "pyproject.toml").read_text()
    assert '"_models/*/model.txt"' in text and '"_models/*/metadata.json"' in text
