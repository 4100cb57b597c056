"""The train / evaluate / retrain commands: argument checks and dry run."""

from __future__ import annotations

from learned_cost.train.cli import main


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
