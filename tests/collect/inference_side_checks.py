"""Checks of the inference families that the collector does not make: side
outputs (split-KV decode's partial log-sum-exp, the int8 quantizer's
scales, the router's expert ids, exactly, the KV-cache append's V cache),
the split partials combined into full attention, empty splits, padding
tokens that write nothing, every BLOCK_N / BLOCK_M x BLOCK_G / BLOCK_T /
BLOCK_T x BLOCK_H on a tiny shape, and top-k without renormalization. Run as a script under the
Triton interpreter (test_collect_inference.py does); prints one
``ok <name>`` line per check and exits non-zero on the first failure."""

from __future__ import annotations

from learned_cost.collect.devices import Device

Device("interpreter").setup()  # before triton loads: turns the interpreter on

import math  # noqa: E402

import torch  # noqa: E402

from side_checks_common import close as _close, launch as _launch  # noqa: E402

from learned_cost.collect.corpus import inference as inf  # noqa: E402


def _full_attention(t, s):
    """Decode attention over each whole sequence, float64 (B, H, D)."""
    b, h, hkv, dim = s["B"], s["H"], s["HKV"], s["D"]
    k = t["k"].double().permute(0, 2, 1, 3)
    v = t["v"].double().permute(0, 2, 1, 3)
    q = t["q"].double().reshape(b, hkv, h // hkv, dim)
    att = (q @ k.transpose(-1, -2)) / math.sqrt(dim)
    pos = torch.arange(k.shape[2])
    att = att.masked_fill(pos[None, None, None, :] >= t["lens"].long()[:, None, None, None], float("-inf"))
    return (torch.softmax(att, -1) @ v).reshape(b, h, dim)


def check_splitkv_partials_and_combine() -> None:
    fam, shape = inf.SPLITKV_DECODE, {"B": 3, "H": 4, "HKV": 2, "D": 16, "S": 70, "SPLITS": 3}
    torch.manual_seed(1)
    t = fam.make_inputs(shape, "fp16", "cpu")
    out_ref, lse_ref = inf._splitkv_ref_all(t, shape)
    full = _full_attention(t, shape)
    for block_n in (16, 32, 64):
        t["out"].fill_(float("nan"))
        t["lse"].fill_(float("nan"))
        _launch(fam, t, shape, {"BLOCK_N": block_n, "num_warps": 1, "num_stages": 2}, "fp16")
        _close(t["out"], out_ref, 5e-3, f"partial outputs BLOCK_N={block_n}")
        _close(t["lse"], lse_ref, 1e-4, f"partial lse BLOCK_N={block_n}")
        # the usual combine step: weights exp(lse_i - lse) over the splits
        w = torch.softmax(t["lse"].double(), -1)
        _close((w[..., None] * t["out"].double()).sum(2), full, 5e-3, f"combined BLOCK_N={block_n}")
    print("ok splitkv_partials_and_combine")


def check_splitkv_empty_splits() -> None:
    # sequences shorter than SPLITS leave splits empty: zeros and -inf
    fam, shape = inf.SPLITKV_DECODE, {"B": 2, "H": 2, "HKV": 1, "D": 16, "S": 40, "SPLITS": 4}
    torch.manual_seed(2)
    t = fam.make_inputs(shape, "fp16", "cpu")
    t["lens"] = torch.tensor([2, 37], dtype=torch.int32)
    out_ref, lse_ref = inf._splitkv_ref_all(t, shape)
    t["out"].fill_(float("nan"))
    t["lse"].fill_(float("nan"))
    _launch(fam, t, shape, {"BLOCK_N": 16, "num_warps": 2, "num_stages": 1}, "fp16")
    assert torch.isneginf(t["lse"][0, :, 2:]).all() and (t["out"][0, :, 2:] == 0).all(), t["lse"]
    _close(t["out"], out_ref, 5e-3, "partial outputs with empty splits")
    fin = torch.isfinite(lse_ref)
    assert torch.equal(torch.isfinite(t["lse"]), fin)
    _close(t["lse"][fin], lse_ref[fin], 1e-4, "partial lse with empty splits")
    _close((torch.softmax(t["lse"].double(), -1)[..., None] * t["out"].double()).sum(2), _full_attention(t, shape),
           5e-3, "combined with empty splits")
    print("ok splitkv_empty_splits")


def check_quant_scales_and_every_tile() -> None:
    fam, shape = inf.GROUP_QUANT_INT8, {"M": 5, "N": 384, "G": 64}
    for dtype in ("fp16", "fp32"):
        torch.manual_seed(3)
        t = fam.make_inputs(shape, dtype, "cpu")
        t["x"][1, 64:128] = 0  # an all-zero group: scale from the epsilon, zeros out
        q_ref, s_ref = inf._quant_ref_all(t, shape)
        for bm in (1, 2, 4, 8):
            for bg in (1, 2, 4, 8):
                # -128 never comes out of the kernel: unwritten values show
                t["out"].fill_(-128)
                t["scale"].fill_(float("nan"))
                _launch(fam, t, shape, {"BLOCK_M": bm, "BLOCK_G": bg, "num_warps": 1, "num_stages": 1}, dtype)
                assert torch.equal(t["out"].long(), q_ref.long()), (dtype, bm, bg)
                assert torch.equal(t["scale"], s_ref), (dtype, bm, bg)
        assert (t["out"][1, 64:128] == 0).all() and t["out"].abs().max() == 127
        # dequantized values within half a step of the input
        deq = t["out"].double().reshape(5, 6, 64) * t["scale"].double()[..., None]
        err = (deq.reshape(5, 384) - t["x"].double()).abs()
        assert (err <= t["scale"].double().repeat_interleave(64, 1) * 0.5001 + 1e-5).all()
    print("ok quant_scales_and_every_tile")


def check_gating_ids_exact() -> None:
    fam = inf.TOPK_GATING
    for shape in ({"T": 37, "E": 12, "TOPK": 2, "renorm": 1}, {"T": 21, "E": 60, "TOPK": 6, "renorm": 0},
                  {"T": 9, "E": 8, "TOPK": 1, "renorm": 1}):
        for dtype in ("fp16", "fp32"):
            torch.manual_seed(4)
            t = fam.make_inputs(shape, dtype, "cpu")
            w_ref, id_ref = inf._gating_ref_all(t, shape)
            for bt in (1, 4, 16, 64):
                t["out"].fill_(float("nan"))
                t["ids"].fill_(-1)
                _launch(fam, t, shape, {"BLOCK_T": bt, "num_warps": 2, "num_stages": 1}, dtype)
                assert torch.equal(t["ids"].long(), id_ref), (shape, dtype, bt)
                _close(t["out"], w_ref, 1e-5, f"weights {shape} {dtype} BLOCK_T={bt}")
            if shape["renorm"]:
                assert torch.allclose(t["out"].double().sum(-1), torch.ones(shape["T"], dtype=torch.float64))
    print("ok gating_ids_exact")


def check_kv_append_both_caches_and_padding() -> None:
    fam, shape = inf.KV_CACHE_APPEND, {"T": 30, "HKV": 3, "D": 16, "PAGE": 8, "CACHE": 100}
    torch.manual_seed(5)
    t = fam.make_inputs(shape, "fp16", "cpu")
    k_ref, v_ref = inf._kv_append_ref(t, shape, "k"), inf._kv_append_ref(t, shape, "v")
    pad = t["slots"] < 0
    assert pad.sum() == 2 and not t["k"].is_contiguous()  # views into a fused QKV output
    for bt in (1, 2, 8, 32):
        for bh in (1, 2, 4):
            t["out"].zero_()
            t["v_cache"].zero_()
            _launch(fam, t, shape, {"BLOCK_T": bt, "BLOCK_H": bh, "num_warps": 1, "num_stages": 1}, "fp16")
            assert torch.equal(t["out"].double(), k_ref), (bt, bh)
            assert torch.equal(t["v_cache"].double(), v_ref), (bt, bh)
    # exactly the mapped slots were written: (T - padding) rows per kv head
    written = (t["out"] != 0).any(-1).sum()
    assert written == (shape["T"] - int(pad.sum())) * shape["HKV"], written
    print("ok kv_append_both_caches_and_padding")


if __name__ == "__main__":
    check_splitkv_partials_and_combine()
    check_splitkv_empty_splits()
    check_quant_scales_and_every_tile()
    check_gating_ids_exact()
    check_kv_append_both_caches_and_padding()
