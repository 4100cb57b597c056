"""Checks of the backward families that the collector does not make: the
RMSNorm partial dw (programs that walk several row blocks, every BLOCK_M),
softmax backward in one pass and in two column-block passes, the SwiGLU
d_up side output on ragged tiles. Run as a script under the Triton
interpreter (test_collect_backward.py does); prints one ``ok <name>`` line
per check and exits non-zero on the first failure."""

from __future__ import annotations

from learned_cost.collect.devices import Device

Device("interpreter").setup()  # before triton loads: turns the interpreter on

import torch  # noqa: E402

from side_checks_common import close as _close, launch as _launch  # noqa: E402

from learned_cost.collect.corpus import backward as bwd  # noqa: E402


def check_rmsnorm_partials() -> None:
    fam, shape = bwd.RMSNORM_BWD, {"M": 11, "N": 200}
    torch.manual_seed(1)
    t = fam.make_inputs(shape, "fp32", "cpu")
    dx_ref, dw_ref = bwd._rms_bwd_ref_all(t, shape)
    # the saved rstd is the forward's: x * rstd has unit mean square
    ms = (t["x"].double() * t["rstd"].double()[:, None]).pow(2).mean(-1)
    assert torch.allclose(ms, torch.ones_like(ms), atol=1e-4)
    for block_m in (1, 2, 4, 8):
        for programs in (2, 3, bwd.NUM_SMS):
            for k in ("out", "dw_part"):
                t[k].fill_(float("nan"))
            cfg = {"BLOCK_M": block_m, "BLOCK_N": 256, "programs": programs, "num_warps": 2, "num_stages": 1}
            ln = _launch(fam, t, shape, cfg, "fp32")
            grid = ln.grid[0]
            assert grid == min(programs, -(-shape["M"] // block_m))
            what = f"BLOCK_M={block_m} programs={programs}"
            _close(t["out"], dx_ref, 1e-5, f"dx {what}")
            _close(t["dw_part"][:grid].sum(0), dw_ref, 1e-5, f"dw {what}")
    print("ok rmsnorm_partials")


def check_softmax_one_and_two_passes() -> None:
    fam, shape = bwd.SOFTMAX_BWD, {"M": 5, "N": 300}
    torch.manual_seed(2)
    t = fam.make_inputs(shape, "fp32", "cpu")
    assert torch.allclose(t["y"].double().sum(-1), torch.ones(5, dtype=torch.float64), atol=1e-5)
    ref = fam.reference(t, shape, "fp32")
    # against autograd of softmax itself
    x = torch.log(t["y"].double()).requires_grad_(True)
    (auto,) = torch.autograd.grad(torch.softmax(x, -1), x, t["dy"].double())
    _close(ref, auto, 1e-6, "reference vs autograd")  # y sums to one in fp32 only
    for block, one_pass in ((128, False), (256, False), (512, True)):
        t["out"].fill_(float("nan"))
        ln = _launch(fam, t, shape, {"BLOCK_N": block, "num_warps": 2, "num_stages": 2 - one_pass}, "fp32")
        assert ln.constexprs["ONE_PASS"] is one_pass
        _close(t["out"], ref, 1e-5, f"softmax bwd BLOCK_N={block}")
    print("ok softmax_one_and_two_passes")


def check_swiglu_d_up() -> None:
    fam, shape = bwd.SWIGLU_BWD, {"M": 7, "N": 150}
    torch.manual_seed(3)
    t = fam.make_inputs(shape, "fp32", "cpu")
    dg_ref, du_ref = bwd._swiglu_bwd_ref_all(t, shape)
    for bm, bn in ((1, 256), (4, 64), (8, 32)):
        t["out"].fill_(float("nan"))
        t["d_up"].fill_(float("nan"))
        _launch(fam, t, shape, {"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": 1, "num_stages": 1}, "fp32")
        _close(t["out"], dg_ref, 1e-5, f"d_gate {bm}x{bn}")
        _close(t["d_up"], du_ref, 1e-5, f"d_up {bm}x{bn}")
    print("ok swiglu_d_up")


if __name__ == "__main__":
    check_rmsnorm_partials()
    check_softmax_one_and_two_passes()
    check_swiglu_d_up()
