"""A text made without the launch's specialization (the seed's
``ASTSource(..., attrs=None)``: no ``tt.divisibility``, integers equal to 1
still arguments) reads like the text the launch itself makes, which is the
form every measured row holds. The seed's form is the committed matmul
fixture; the launch's form is made here, with stock Triton on the CPU (no
device), from the same kernel of scripts/gen_fixtures.py."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

triton = pytest.importorskip("triton")
torch = pytest.importorskip("torch")

from learned_cost.collect.ttir_gen import generate_ttir  # noqa: E402
from learned_cost.features import extract_features  # noqa: E402


ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "ttir"


def _fixture_kernels():
    """scripts/gen_fixtures.py, whose ``matmul_kernel`` made the committed
    matmul fixture (printed without the launch's attributes)."""
    spec = importlib.util.spec_from_file_location("gen_fixtures", ROOT / "scripts" / "gen_fixtures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _bindings(text: str, values: dict) -> str:
    """``argN=value`` for the named integer arguments the text's entry has."""
    head = re.search(r"tt\.func public @\w+\((.*?)\) attributes", text, re.S).group(1)
    names = re.findall(r"%(\w+): ", head)
    return ",".join(f"arg{i}={values[n]}" for i, n in enumerate(names) if n in values)


def test_unit_strides_and_alignment_read_as_the_launch_specializes():
    meta = json.loads((FIXTURES / "fixtures.json").read_text())["matmul"]
    ints = {"M": 4096, "N": 4096, "K": 4096, "stride_am": 4096, "stride_ak": 1, "stride_bk": 4096, "stride_bn": 1,
            "stride_cm": 4096, "stride_cn": 1}
    tensor = torch.empty((1,), dtype=torch.float16, device="meta")
    launch = generate_ttir(_fixture_kernels().matmul_kernel, [tensor, tensor, tensor, *ints.values()],
                           meta["constexprs"], {"num_warps": 4, "num_stages": 3}).optimized
    seed = (FIXTURES / meta["files"]["opt"]).read_text()
    assert "tt.divisibility" in launch and "tt.divisibility" not in seed
    assert len(re.findall(r"%\w+: i32", seed.split("attributes")[0])) == len(ints)  # every 1 still an argument
    assert len(re.findall(r"%\w+: i32", launch.split("attributes")[0])) == len(ints) - 3  # the launch made them constants
    kw = dict(grid=meta["grid"], options={"num_warps": 4, "num_stages": 3}, cores=132)
    want = extract_features(launch, _bindings(launch, ints), **kw).values
    got = extract_features(seed, meta["arg_bindings"], **kw).values
    assert got == pytest.approx(want)
