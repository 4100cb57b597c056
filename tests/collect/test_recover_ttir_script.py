"""scripts/recover_ttir.py: a row is kept only when the TTIR rebuilt on the
CPU has the digest the device recorded."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("triton")
pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "recover_ttir.py"
ROWS = ROOT / "data" / "h100" / "rows-h100-c32.parquet"
TTIR = ROOT / "data" / "h100" / "ttir-h100-c32.parquet"
CAPS = ROOT / "data" / "inductor" / "captures-h100-c32.parquet"
# a pointwise kernel: its TTIR depends on Triton alone, not on Inductor's helpers
GROUP = ("inductor/granite-B4-S320-fp32/triton_poi_fused_add_bmm_cat_clone_cos_mul_neg_sin_slice_slice_"
         "backward_squeeze_sum_transpose_unsqueeze_view_8/716d09b6")


@pytest.fixture(scope="module")
def recover():
    spec = importlib.util.spec_from_file_location("recover_ttir", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_rebuilt_ttir_equals_the_device_text_and_a_wrong_digest_drops_its_row(recover, tmp_path):
    rows = pd.read_parquet(ROWS)
    rows = rows[(rows["group"] == GROUP) & (rows["status"] == "ok")].head(3).reset_index(drop=True)
    assert len(rows) == 3
    rows.loc[2, "ttir_digest"] = "0" * 32  # as if the device had compiled another text
    src = tmp_path / "rows.parquet"
    rows.to_parquet(src, index=False)
    out_rows, out_ttir = tmp_path / "kept.parquet", tmp_path / "ttir.parquet"
    assert recover.main(["--rows", str(src), "--captures", str(CAPS), "--out-rows", str(out_rows),
                         "--out-ttir", str(out_ttir), "--workers", "1"]) == 0
    kept, ttir = pd.read_parquet(out_rows), pd.read_parquet(out_ttir)
    assert list(kept["key"]) == list(rows["key"][:2])
    device = pd.read_parquet(TTIR)
    device_text = dict(zip(device["ttir_digest"], device["ttir"]))
    opt = ttir[ttir["stage"] == "optimized"]
    assert set(opt["ttir_digest"]) == set(kept["ttir_digest"])
    for d, text in zip(opt["ttir_digest"], opt["ttir"]):
        assert text == device_text[d]
    # every raw digest a kept row names is in the file
    raw = set(ttir.loc[ttir["stage"] == "raw", "ttir_digest"])
    assert all(d == "" or d in raw for d in kept["ttir_raw_digest"])
