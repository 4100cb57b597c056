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
    # the fold count asked for is named in the command at the report's top
    rc = main(["evaluate", "--data", str(data), "--hardware", "h200", "--out", str(tmp_path / "r5"),
               "--schemes", "lofo", "--family-folds", "0", *fit])
    assert rc == 0, capsys.readouterr().err
    assert "--family-folds 0" in (tmp_path / "r5" / "evaluation.md").read_text()
    for bad, word in ((["--variants", "nope"], "--variants"), (["--schemes", "lofo,bogus"], "--schemes"),
                      (["--rank-init", "1.5"], "--rank-init"), (["--family-folds", "1"], "--family-folds")):
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


def test_train_on_rows_of_another_card(tmp_path, monkeypatch, capsys):
    """--extra-data DIR:HW trains on rows measured on another card too: they
    are featurized with that card's profile (its analytic estimate differs),
    their groups are kept apart, and the metadata counts rows per card."""
    import json
    import shutil

    import pandas as pd

    from learned_cost.train.build import load_training_features, split_data_spec

    data = _fixture_store(tmp_path / "data")
    (tmp_path / "h100").mkdir()
    for f in data.iterdir():  # the same measurements, stored as an H100's
        if f.name.startswith("rows-"):
            rows = pd.read_parquet(f)
            rows.assign(hardware="h100", key="h100-" + rows["key"]).to_parquet(tmp_path / "h100" / f.name)
        elif f.is_file():
            shutil.copy(f, tmp_path / "h100" / f.name)
    monkeypatch.setenv("LEARNED_COST_CACHE", str(tmp_path / "cache"))

    assert split_data_spec("data/h100:h100", "h200") == ("data/h100", "h100")
    assert split_data_spec("data/h100", "h200") == ("data/h100", "h200")
    assert split_data_spec("C:/x", "h200") == ("C:/x", "h200")
    ft = load_training_features(str(data), "h200", [(str(tmp_path / "h100"), "h100")], progress=False, jobs=1)
    t = ft.table
    assert sorted(t["hardware"].value_counts().to_dict().items()) == [("h100", 6), ("h200", 6)]
    assert set(t.loc[t["hardware"] == "h100", "group"]) == {"h100:add/g", "h100:matmul/g"}
    a = t.set_index("key")["analytic_us"]
    assert not (a.loc["h100-matmul0"] == a.loc["matmul0"])  # the H100's own ceilings

    fit = ["--rounds", "5", "--threads", "1", "--jobs", "1", "--quiet", "--variant", "log_ratio"]
    rc = main(["train", "--data", str(data), "--hardware", "h200", "--out", str(tmp_path / "m"),
               "--extra-data", f"{tmp_path / 'h100'}:h100", *fit])
    assert rc == 0, capsys.readouterr().err
    meta = json.loads((tmp_path / "m" / "metadata.json").read_text())
    assert meta["training_data"]["rows"] == 12
    assert meta["training_data"]["rows_by_hardware"] == {"h100": 6, "h200": 6}

    # evaluate takes the same rows on its training sides: the report says so and
    # recognises the model as trained on exactly these rows
    rc = main(["evaluate", "--data", str(data), "--hardware", "h200", "--model", str(tmp_path / "m"),
               "--extra-data", f"{tmp_path / 'h100'}:h100", "--out", str(tmp_path / "r"), "--schemes", "lofo",
               *fit[:-2]])
    assert rc == 0, capsys.readouterr().err
    text = (tmp_path / "r" / "evaluation.md").read_text()
    assert "6 rows of h100 (--extra-data" in text and f"--extra-data {tmp_path / 'h100'}:h100" in text
    assert "trained on exactly the rows evaluated here: yes" in text
    assert "6 measured rows" in text

    rc = main(["train", "--data", str(data), "--hardware", "h200", "--out", str(tmp_path / "m2"),
               "--extra-data", f"{tmp_path / 'h100'}:no_such_chip", *fit])
    err = capsys.readouterr().err
    assert rc == 2 and "no_such_chip" in err and len(err.strip().splitlines()) == 1


def test_extra_rows_train_every_fold_they_fit_and_are_never_scored():
    """A held-out family is held out on every card; project -> harvested
    trains on no harvested rows of another card."""
    import numpy as np
    import pandas as pd

    from learned_cost.train.evaluate import family_folds, source_folds, with_extra_training_rows

    table = pd.DataFrame({"family": ["a", "a", "b", "llama-x"], "group": ["a/1", "a/1", "b/1", "inductor/l/1"]})
    extra = pd.DataFrame({"family": ["a", "b", "c", "gpt-y"], "group": ["h100:a/1", "h100:b/1", "h100:c/1",
                                                                        "h100:inductor/g/1"]})
    full, folds = with_extra_training_rows(table, extra, family_folds(table))
    assert len(full) == 8
    by_name = {name: (set(tr), set(te)) for name, tr, te in folds}
    assert by_name["a"] == ({2, 3, 5, 6, 7}, {0, 1})
    assert by_name["b"] == ({0, 1, 3, 4, 6, 7}, {2})
    full, folds = with_extra_training_rows(table, extra, source_folds(table))
    to_harvested = {name: tr for name, tr, _ in folds}["collector -> inductor"]
    assert set(to_harvested) == {0, 1, 2, 4, 5, 6}
    assert with_extra_training_rows(table, None, folds)[0] is table
    assert all(te.max() < len(table) for _, _, te in folds) and np.all(full.index == np.arange(8))


def test_other_card_rows_with_assumed_loop_trips_are_left_out(monkeypatch):
    """An other card's row whose loop trips rest on the loaded-integer
    assumption does not train (its byte counts may be far from its work);
    the reason is kept with the dropped keys."""
    import pandas as pd

    from learned_cost.train import build
    from learned_cost.train.features_table import FeaturesTable

    t = pd.DataFrame({"key": ["a", "b", "c"], "group": ["g/1", "g/1", "g/2"], "family": ["g", "g", "g"],
                      "unresolved_loops": [0.0, 1.0, 0.0]})
    monkeypatch.setattr(build, "load_features", lambda d, hw, **kw: (FeaturesTable(t.copy(), {"z": "no TTIR"}), None))
    ft = build.load_other_hardware([("data/h100", "h100")], "h200")
    assert ft.table["key"].tolist() == ["a", "c"]
    assert ft.table["group"].tolist() == ["h100:g/1", "h100:g/2"]
    assert ft.dropped == {"b": build.ASSUMED_TRIPS_REASON, "z": "no TTIR"}
