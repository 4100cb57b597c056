"""The learned-cost command line."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

from learned_cost import cli

from .conftest import FIXTURES, fixture_spec


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_hardware_list_and_show(capsys):
    code, out, _ = run(capsys, "hardware", "list")
    assert code == 0 and all(n in out for n in ("ascend_910b", "ascend_950", "h200"))
    code, out, _ = run(capsys, "hardware", "show", "Ascend910B3")
    d = json.loads(out)
    assert code == 0 and d["name"] == "ascend_910b" and d["sources"] and d["cores"] == 40


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["hardware", "show", "tpu_v5"], "tpu_v5"),
        (["hardware"], "list, show or measured"),
        (["predict"], "inputs"),
        (["predict", "/no/such.ttir"], "/no/such.ttir"),
        (["predict", str(FIXTURES / "add.opt.ttir"), "--grid", "x"], "--grid"),
        (["predict", str(FIXTURES / "add.opt.ttir"), "--options", "{bad"], "--options"),
        (["features", "/no/such.ttir"], "/no/such.ttir"),
        (["frobnicate"], "frobnicate"),
    ],
)
def test_bad_input_is_one_error_line(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    lines = [l for l in err.splitlines() if l.strip()]
    assert code != 0
    assert len(lines) == 1 and lines[0].startswith("learned-cost: error: ") and needle in lines[0]
    assert "Traceback" not in err


def test_help_everywhere(capsys):
    for argv in (["--help"], ["predict", "--help"], ["features", "--help"], ["hardware", "--help"],
                 ["hardware", "show", "--help"]):
        code, out, _ = run(capsys, *argv)
        assert code == 0 and "usage:" in out


def test_predict_table_and_json(capsys):
    add = str(FIXTURES / "add.opt.ttir")
    code, out, _ = run(capsys, "predict", add, "--bindings", "arg3=98432", "--grid", "97",
                       "--hardware", "h200", "--model", "analytic")
    assert code == 0 and "add.opt.ttir" in out and "analytic" in out
    code, out, _ = run(capsys, "predict", add, "--bindings", "arg3=98432", "--grid", "97", "--json",
                       "--hardware", "h200", "--model", "analytic")
    rows = json.loads(out)
    assert code == 0 and rows[0]["config"] == "add.opt.ttir" and rows[0]["latency_us"] > 0


def test_predict_jsonl_with_a_failing_item(capsys, tmp_path):
    spec = fixture_spec("matmul")
    lines = [
        {"config": "mm", "ttir_file": str(FIXTURES / "matmul.opt.ttir"), "arg_bindings": spec["arg_bindings"],
         "grid": spec["grid"], "model": "analytic"},
        {"config": "bad", "ttir": "garbage {{", "model": "analytic"},
    ]
    path = tmp_path / "items.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    code, out, err = run(capsys, "predict", str(path), "--json", "--hardware", "h200")
    rows = {r["config"]: r for r in json.loads(out)}
    assert rows["mm"]["latency_us"] > 0 and rows["bad"]["latency_us"] is None and rows["bad"]["error"]
    assert code == 1 and err.startswith("learned-cost: error: 1 of 2 items")


def test_features_command(capsys):
    spec = fixture_spec("add")
    code, out, _ = run(capsys, "features", str(FIXTURES / "add.opt.ttir"), "--bindings", spec["arg_bindings"],
                       "--grid", "97", "--json")
    d = json.loads(out)
    assert code == 0 and d["features"]["programs"] == 97 and d["features"]["load_ops"] == 2


def test_plugins_are_registered(capsys, monkeypatch):
    mod = types.ModuleType("fake_plugin_cli")

    def register(sub):
        p = sub.add_parser("hello", help="say hello")
        p.set_defaults(func=lambda args: print("hello") or 0)

    mod.register = register
    monkeypatch.setitem(sys.modules, "fake_plugin_cli", mod)
    monkeypatch.setattr(cli, "PLUGIN_MODULES", ("fake_plugin_cli", "no_such_module_xyz.cli"))
    code, out, err = run(capsys, "hello")
    assert code == 0 and out.strip() == "hello" and err == ""


def test_console_script_help_is_fast_and_triton_free():
    code = ("import sys; from learned_cost.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('triton', 'torch') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip().endswith("[]"), r.stdout + r.stderr


CEILINGS = {"device": "NVIDIA H200", "copy_bandwidth_GBps": 4300.5, "matmul_fp16_TFLOPs": 760.0,
            "matmul_bf16_TFLOPs": 770.0, "matmul_fp32_TFLOPs": 50.0, "matmul_tf32_TFLOPs": 400.0,
            "empty_kernel_launch_us": {"median": 3.9, "p20": 3.8, "p80": 4.1}, "date": "2026-12-02T18:00:00+00:00"}


def test_hardware_measured_fills_the_block(capsys, tmp_path):
    import shutil

    from learned_cost.hardware import load_profile

    path = tmp_path / "h200.json"
    shutil.copy(load_profile("h200").path, path)
    # start from the datasheet alone: the shipped profile already has a measured block
    raw = json.loads(path.read_text())
    raw["measured"] = {}
    path.write_text(json.dumps(raw))
    ceil = tmp_path / "ceilings.json"
    ceil.write_text(json.dumps(CEILINGS))
    code, out, _ = run(capsys, "hardware", "measured", str(path), str(ceil))
    assert code == 0 and json.loads(out)["measured"]["copy_bandwidth_gbs"] == 4300.5
    assert json.loads(path.read_text())["measured"] == {}  # printed only
    code, out, _ = run(capsys, "hardware", "measured", str(path), str(ceil), "--write")
    p = load_profile(path)
    assert code == 0 and p.effective_bandwidth_gbs == 4300.5
    assert p.effective_matrix_tflops("fp16") == 770.0 and p.effective_matrix_tflops("fp32") == 400.0
    assert p.effective_launch_overhead_us == 3.9 and p.measured["device_name"] == "NVIDIA H200"
    import jsonschema

    from learned_cost.hardware import SCHEMA_PATH

    jsonschema.validate(json.loads(path.read_text()), json.loads(SCHEMA_PATH.read_text()))
    ceil.write_text(json.dumps({"unrelated": 1}))
    code, _, err = run(capsys, "hardware", "measured", str(path), str(ceil))
    assert code == 2 and "no known ceiling" in err
