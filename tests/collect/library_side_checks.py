"""Checks of the library families that the collector does not make: side
outputs (cross-entropy loss, layernorm partial dw/db), the gradient written
into the logits buffer itself, a persistent matmul whose programs take
several tiles, every MoE BLOCK_M. Run as a script under the Triton
interpreter (test_collect_library.py does); prints one ``ok <name>`` line
per check and exits non-zero on the first failure."""

from __future__ import annotations

from learned_cost.collect.devices import Device

Device("interpreter").setup()  # before triton loads: turns the interpreter on

import torch  # noqa: E402

from side_checks_common import close as _close, launch as _launch  # noqa: E402

from learned_cost.collect.corpus import library as lib  # noqa: E402


def check_cross_entropy_in_place() -> None:
    fam, shape = lib.CROSS_ENTROPY_GRAD, {"M": 9, "V": 1000}
    torch.manual_seed(1)
    t = fam.make_inputs(shape, "fp32", "cpu")
    loss_ref, grad_ref = lib._ce_grad_ref_all(t, shape)
    # the gradient goes into the logits buffer itself
    t["out"] = t["x"]
    t["loss"].fill_(float("nan"))
    _launch(fam, t, shape, {"BLOCK_V": 256, "num_warps": 2, "num_stages": 1}, "fp32")
    _close(t["loss"], loss_ref, 1e-5, "loss")
    _close(t["x"], grad_ref, 1e-5, "gradient in place")
    ignored = t["target"] == lib.IGNORE_INDEX
    assert ignored.sum() == 2 and (t["loss"][ignored] == 0).all() and (t["x"][ignored] == 0).all()
    print("ok cross_entropy_in_place")


def check_layernorm_partials() -> None:
    fam, shape = lib.LAYERNORM_BWD, {"M": 10, "N": 200}
    torch.manual_seed(2)
    t = fam.make_inputs(shape, "fp32", "cpu")
    dx_ref, dw_ref, db_ref = lib._ln_bwd_ref_all(t, shape)
    for rows in (1, 4, 16):
        for k in ("out", "dw_part", "db_part"):
            t[k].fill_(float("nan"))
        _launch(fam, t, shape, {"ROWS": rows, "BLOCK_N": 256, "num_warps": 2, "num_stages": 1}, "fp32")
        programs = -(-shape["M"] // rows)
        _close(t["out"], dx_ref, 1e-5, f"dx ROWS={rows}")
        _close(t["dw_part"][:programs].sum(0), dw_ref, 1e-5, f"dw ROWS={rows}")
        _close(t["db_part"][:programs].sum(0), db_ref, 1e-5, f"db ROWS={rows}")
    print("ok layernorm_partials")


def check_persistent_several_tiles() -> None:
    fam, shape = lib.PERSISTENT_MATMUL, {"M": 72, "N": 80, "K": 48}
    torch.manual_seed(3)
    t = fam.make_inputs(shape, "fp16", "cpu")
    ref = fam.reference(t, shape, "fp16")
    # 3 x 3 tiles of 32 on 2 programs: each program walks several tiles
    cfg = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2, "programs": 2, "num_warps": 1, "num_stages": 2}
    assert fam.launch(t, shape, cfg, "fp16").grid == (2, 1, 1)
    t["out"].fill_(float("nan"))
    _launch(fam, t, shape, cfg, "fp16")
    _close(t["out"], ref, 5e-3, "persistent matmul")
    print("ok persistent_several_tiles")


def check_moe_every_block_m() -> None:
    fam, shape = lib.MOE_GEMM, {"T": 20, "E": 4, "TOPK": 2, "N": 48, "K": 40}
    torch.manual_seed(4)
    t = fam.make_inputs(shape, "fp16", "cpu")
    ref = fam.reference(t, shape, "fp16")
    for bm in lib.MOE_BLOCKS_M:
        t["out"].fill_(float("nan"))
        _launch(fam, t, shape, {"BLOCK_M": bm, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 2,
                                "num_stages": 1}, "fp16")
        _close(t["out"], ref, 5e-3, f"moe BLOCK_M={bm}")
    print("ok moe_every_block_m")


if __name__ == "__main__":
    check_cross_entropy_in_place()
    check_layernorm_partials()
    check_persistent_several_tiles()
    check_moe_every_block_m()
