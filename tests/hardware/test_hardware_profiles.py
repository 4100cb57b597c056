"""Hardware profiles: schema, loading, aliases, precedence, defaults."""

from __future__ import annotations

import json

import jsonschema
import pytest

from learned_cost.hardware import (
    SCHEMA_PATH,
    ProfileError,
    UnknownHardwareError,
    default_hardware_name,
    list_profiles,
    load_profile,
    match_arch,
    profile_from_dict,
    resolve_hardware,
)
from learned_cost.hardware import resolve as resolve_mod


def test_shipped_profiles_validate_against_schema():
    schema = json.loads(SCHEMA_PATH.read_text())
    names = list_profiles()
    assert {"ascend_910b", "ascend_950", "h200"} <= set(names)
    for name in names:
        p = load_profile(name)
        jsonschema.validate(json.loads(open(p.path).read()), schema)
        assert p.name == name and p.sources and all(s.title and s.covers for s in p.sources)


def test_published_figures_carried():
    b = load_profile("ascend_910b")
    assert (b.clock_mhz, b.cores, b.matrix_cores) == (1850, 40, 20)
    assert b.memory_bandwidth_gbs == 1600 and b.loads_stores_share_pipe
    assert b.effective_matrix_tflops("fp16") == 320 and b.effective_matrix_tflops("fp32") == 160
    d = load_profile("ascend_950")
    assert (d.clock_mhz, d.cores, d.matrix_cores, d.local_kb) == (1650, 56, 28, 512)
    h = load_profile("h200")
    assert (h.cores, h.memory_bandwidth_gbs) == (132, 4800)


@pytest.mark.parametrize(
    "arch, name",
    [
        ("Ascend910B1", "ascend_910b"),
        ("Ascend910B4", "ascend_910b"),
        ("ascend910b3", "ascend_910b"),
        ("Ascend910_9362", "ascend_910b"),
        ("Ascend910_9391", "ascend_910b"),
        ("Ascend910_9579", "ascend_950"),
        ("Ascend950PR", "ascend_950"),
        ("Ascend950DT_9591", "ascend_950"),
        ("david", "ascend_950"),
        ("NVIDIA H200", "h200"),
        ("H200", "h200"),
        ("  nvidia   h200  ", "h200"),
        ("h200", "h200"),
        ("NVIDIA H100 80GB HBM3", "h100"),
        ("H100", "h100"),
    ],
)
def test_target_arch_aliases(arch, name):
    assert match_arch(arch) == name
    assert resolve_hardware(target_arch=arch).name == name
    assert resolve_hardware(hardware=arch).name == name


@pytest.mark.parametrize("arch", ["Ascend910", "Ascend310P3", "NVIDIA A100", "", "h2000", "h1000"])
def test_unknown_arch_is_an_error_not_another_profile(arch):
    with pytest.raises(UnknownHardwareError) as e:
        resolve_hardware(target_arch=arch)
    assert repr(arch) in str(e.value)
    assert isinstance(e.value, ValueError)


def test_unknown_hardware_name_and_bad_types():
    with pytest.raises(UnknownHardwareError, match="'tpu_v5'"):
        resolve_hardware(hardware="tpu_v5")
    with pytest.raises(UnknownHardwareError):
        resolve_hardware(hardware=42)
    with pytest.raises(UnknownHardwareError):
        resolve_hardware(target_arch=910)
    with pytest.raises(UnknownHardwareError, match="cannot be read"):
        resolve_hardware(hardware_config="/nonexistent/profile.json")


def test_precedence_config_then_hardware_then_arch(tmp_path):
    raw = json.loads(open(load_profile("h200").path).read())
    raw["name"] = "my_gpu"
    path = tmp_path / "my_gpu.json"
    path.write_text(json.dumps(raw))
    assert resolve_hardware("ascend_910b", "Ascend950", str(path)).name == "my_gpu"
    assert resolve_hardware("ascend_910b", "Ascend950").name == "ascend_910b"
    assert resolve_hardware(None, "Ascend950").name == "ascend_950"
    assert resolve_hardware(hardware=str(path)).name == "my_gpu"


def test_default_from_env_and_detection(monkeypatch):
    monkeypatch.setenv("LEARNED_COST_HARDWARE", "ascend_950")
    assert resolve_hardware().name == "ascend_950"
    monkeypatch.setenv("LEARNED_COST_HARDWARE", "nonsense")
    with pytest.raises(UnknownHardwareError, match="nonsense"):
        resolve_hardware()
    monkeypatch.delenv("LEARNED_COST_HARDWARE")
    monkeypatch.setattr(resolve_mod, "_DEFAULT", [])
    monkeypatch.setattr(resolve_mod, "ascend_installed", lambda: True)
    assert default_hardware_name() == "ascend_910b"
    monkeypatch.setattr(resolve_mod, "_DEFAULT", [])
    monkeypatch.setattr(resolve_mod, "ascend_installed", lambda: False)
    assert default_hardware_name() == "h200"


def test_detection_and_api_import_neither_triton_nor_torch():
    import subprocess
    import sys

    code = (
        "import sys, learned_cost\n"
        "from learned_cost import costmodel_bench\n"
        "from learned_cost.hardware import resolve_hardware, ascend_installed\n"
        "ascend_installed(); resolve_hardware()\n"
        "costmodel_bench({'config': 'c', 'ttir': 'x', 'hardware': 'nope'})\n"
        "bad = [m for m in ('triton', 'torch') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    r = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def _h200_raw():
    return json.loads(open(load_profile("h200").path).read())


def test_measured_block_overrides_datasheet():
    raw = _h200_raw()
    raw["measured"] = {}
    base = profile_from_dict(raw)
    assert base.effective_bandwidth_gbs == 4800
    raw["measured"] = {"copy_bandwidth_gbs": 4300.0, "matmul_tflops_bf16": 790.0, "launch_latency_us": 4.0,
                       "device_name": "NVIDIA H200"}
    m = profile_from_dict(raw)
    assert m.effective_bandwidth_gbs == 4300
    assert m.effective_matrix_tflops("fp16") == 790
    assert m.effective_launch_overhead_us == 4.0
    assert m.digest != base.digest and m != base
    raw.pop("measured")
    assert profile_from_dict(raw).effective_bandwidth_gbs == 4800


@pytest.mark.parametrize(
    "mutate, needle",
    [
        (lambda r: r.pop("clock_mhz"), "clock_mhz"),
        (lambda r: r.__setitem__("clock_mhz", 0), "clock_mhz"),
        (lambda r: r.__setitem__("cores", 0), "cores"),
        (lambda r: r["memory"].__setitem__("bandwidth_gbs", "fast"), "bandwidth_gbs"),
        (lambda r: r["vector"]["op_cycles"].pop("div"), "div"),
        (lambda r: r.__setitem__("sources", []), "sources"),
        (lambda r: r.__setitem__("measured", {"copy_bandwidth_gbs": -1}), "copy_bandwidth_gbs"),
    ],
)
def test_bad_profile_names_the_field(mutate, needle):
    raw = _h200_raw()
    mutate(raw)
    with pytest.raises(ProfileError, match=needle):
        profile_from_dict(raw)


def test_bad_json_file(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("{not json")
    with pytest.raises(ProfileError, match="not valid JSON"):
        resolve_hardware(hardware_config=str(p))
