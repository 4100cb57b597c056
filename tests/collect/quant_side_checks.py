"""Checks of the quantized-matmul families that two configs of the tiny
shape do not reach: every relation of the w4a16 K tile to the quantization
group (inside one group, exactly one, spanning several with the last tile
past K) with and without zero points, a one-row decode launch, and the int8
kernel's ragged K tail. Run as a script under the Triton interpreter
(test_collect_quant.py does); prints one ``ok <name>`` line per check and
exits non-zero on the first failure."""

from __future__ import annotations

from learned_cost.collect.devices import Device

Device("interpreter").setup()  # before triton loads: turns the interpreter on

import torch  # noqa: E402

from side_checks_common import close as _close, launch as _launch  # noqa: E402

from learned_cost.collect.corpus import quant  # noqa: E402


def _run(fam, shape, cfg, seed):
    torch.manual_seed(seed)
    t = fam.make_inputs(shape, "fp16", "cpu")
    ref = fam.reference(t, shape, "fp16")
    t["out"].fill_(float("nan"))
    _launch(fam, t, shape, cfg | {"GROUP_M": 8, "num_warps": 4, "num_stages": 2}, "fp16")
    _close(t["out"], ref, fam.tolerance["fp16"], f"{fam.name} {shape} {cfg}")


def check_w4_tile_against_group() -> None:
    fam = quant.W4A16_MATMUL
    # K = 3 groups of 64: 32- and 64-row tiles lie inside a group, a
    # 128-row tile takes two groups and its second one lies past K
    for zero in (0, 1):
        shape = {"M": 20, "N": 48, "K": 192, "G": 64, "zero": zero}
        for bk in (32, 64, 128):
            _run(fam, shape, {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": bk}, seed=10 + bk + zero)
    print("ok w4_tile_against_group")


def check_w4_decode_row() -> None:
    # one activation row in a 16-row tile, groups of 128, a 256-row K tile
    shape = {"M": 1, "N": 40, "K": 512, "G": 128, "zero": 1}
    _run(quant.W4A16_MATMUL, shape, {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 256}, seed=3)
    print("ok w4_decode_row")


def check_int8_ragged_k() -> None:
    # K = 96: the second 64-wide K tile is half past K
    shape = {"M": 20, "N": 48, "K": 96}
    _run(quant.INT8_MATMUL, shape, {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 64}, seed=4)
    print("ok int8_ragged_k")


if __name__ == "__main__":
    check_w4_tile_against_group()
    check_w4_decode_row()
    check_int8_ragged_k()
