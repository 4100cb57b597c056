"""The train / evaluate / retrain commands: argument checks and dry run."""

from __future__ import annotations

from learned_cost.train.cli import main


def _fixture_store(path):
    """The profile store of test_train_features_table.make_fixture_store
    (loaded by path: tests are not a package) written at ``path``."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "train_ft_fixtures", Path(__file__).with_name("test_train_features_table.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.make_fixture_store(path)
    return path


def test_train_rejects_missing_data(tmp_path, capsys):
    rc = main(["train", "--data", str(tmp_path / "nope"), "--hardware", "h200", "--out", str(tmp_path / "m")])
    assert rc == 2
    err = capsys.readouterr().err
    assert "nope" in err and len(err.strip().splitlines()) == 1


def test_train_rejects_empty_dir_and_unknown_hardware(tmp_path, capsys):
    rc = main(["train", "--data", str(tmp_path), "--hardware", "h200", "--out", str(tmp_path / "m")])
    assert rc == 2 and "rows-*.parquet" in capsys.readouterr().err
    (tmp_path / "rows-x.parquet").write_bytes(b"")
    rc = main(["evaluate", "--data", str(tmp_path), "--hardware", "no_such_chip", "--out", str(tmp_path / "r")])
    assert rc == 2 and "no_such_chip" in capsys.readouterr().err


def test_retrain_dry_run_lists_the_steps(capsys):
    rc = main(["retrain", "--device", "npu", "--hardware", "ascend_910b", "--dry-run"])
    assert rc == 0
    out = capsys.readouterr().out
    steps = [line.split(":")[0] for line in out.splitlines() if line.startswith("[retrain]")]
    assert steps == ["[retrain] collect", "[retrain] train", "[retrain] evaluate", "[retrain] install"]
    assert "--device npu" in out and "models/ascend_910b" in out


def test_train_and_evaluate_end_to_end(tmp_path, monkeypatch, capsys):
    data = _fixture_store(tmp_path / "data")
    monkeypatch.setenv("LEARNED_COST_CACHE", str(tmp_path / "cache"))
    fit = ["--rounds", "5", "--threads", "1", "--jobs", "1", "--quiet"]
    rc = main(["train", "--data", str(data), "--hardware", "h200", "--out", str(tmp_path / "m"), *fit])
    assert rc == 0, capsys.readouterr().err
    assert (tmp_path / "m" / "model.txt").is_file() and (tmp_path / "m" / "metadata.json").is_file()
    rc = main(["evaluate", "--data", str(data), "--hardware", "h200", "--model", str(tmp_path / "m"),
               "--out", str(tmp_path / "r"), "--schemes", "lofo", *fit])
    assert rc == 0, capsys.readouterr().err
    text = (tmp_path / "r" / "evaluation.md").read_text()
    assert "Leave-one-family-out" in text and "Shipped model" in text
    assert "trained on exactly the rows evaluated here: yes" in text
    assert list((tmp_path / "cache" / "features").glob("*.parquet"))
    # the command line at the report's top names the opt-in choices, so it reproduces the run
    rc = main(["evaluate", "--data", str(data), "--hardware", "h200", "--out", str(tmp_path / "r2"),
               "--schemes", "lofo", "--variants", "all", *fit])
    assert rc == 0, capsys.readouterr().err
    text = (tmp_path / "r2" / "evaluation.md").read_text()
    assert "--schemes lofo --variants all" in text and "`log_latency`" in text
    # a plain regression (no ranked start) on request, named at the report's top
    rc = main(["evaluate", "--data", str(data), "--hardware", "h200", "--out", str(tmp_path / "r4"),
               "--schemes", "lofo", "--rank-init", "0", *fit])
    assert rc == 0, capsys.readouterr().err
    text = (tmp_path / "r4" / "evaluation.md").read_text()
    assert "--rank-init 0" in text and "LambdaRank model scaled by" not in text
    assert "LambdaRank model scaled by" in (tmp_path / "r" / "evaluation.md").read_text()
    for bad, word in ((["--variants", "nope"], "--variants"), (["--schemes", "lofo,bogus"], "--schemes"),
                      (["--rank-init", "1.5"], "--rank-init")):
        rc = main(["evaluate", "--data", str(data), "--hardware", "h200", "--out", str(tmp_path / "r3"), *bad])
        err = capsys.readouterr().err
        assert rc == 2 and word in err and len(err.strip().splitlines()) == 1


def test_train_includes_autotune_feedback_and_extra_data(tmp_path, monkeypatch, capsys):
    """--feedback adds the autotuner's store (here: the feedback rows of the
    committed H200 autotune benchmark, real timings whose ``correct`` is
    null) and --extra-data another profile directory."""
    import json
    import shutil
    from pathlib import Path

    data = _fixture_store(tmp_path / "data")
    bench_fb = Path(__file__).resolve().parents[2] / "reports" / "autotune" / "h200_learned" / "feedback" / "h200"
    cache = tmp_path / "xdg"
    shutil.copytree(bench_fb, cache / "learned_cost" / "feedback" / "h200")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setenv("LEARNED_COST_CACHE", str(tmp_path / "cache"))
    fit = ["--rounds", "5", "--threads", "1", "--jobs", "1", "--quiet", "--variant", "log_latency"]

    rc = main(["train", "--data", str(data), "--hardware", "h200", "--out", str(tmp_path / "m"), "--feedback", *fit])
    assert rc == 0, capsys.readouterr().err
    assert "including the autotuner's feedback rows" in capsys.readouterr().out
    meta = json.loads((tmp_path / "m" / "metadata.json").read_text())
    fams = meta["training_data"]["families"]
    assert {"add", "matmul"} <= set(fams) and any(f.startswith("bench_autotune.") for f in fams)
    assert meta["training_data"]["rows"] > 6

    rc = main(["train", "--data", str(data), "--hardware", "h200", "--out", str(tmp_path / "m2"),
               "--extra-data", str(cache / "learned_cost" / "feedback" / "h200"), *fit])
    assert rc == 0, capsys.readouterr().err
    meta2 = json.loads((tmp_path / "m2" / "metadata.json").read_text())
    assert meta2["training_data"]["digest"] == meta["training_data"]["digest"]

    rc = main(["train", "--data", str(data), "--hardware", "h200", "--out", str(tmp_path / "m3"),
               "--extra-data", str(tmp_path / "missing"), *fit])
    err = capsys.readouterr().err
    assert rc == 2 and "--extra-data" in err and len(err.strip().splitlines()) == 1
