"""Checks of the attention backward families that the collector does not
make: the float64 reference against torch autograd of softmax attention,
the forward statistics make_inputs stores (lse, delta), and dK, dV and dQ
each on their own (the collector checks dK and dV together in one buffer)
for causal and full attention on a ragged length, with BLOCK_M and BLOCK_N
unequal both ways (the causal loop bounds round to the other block size).
Run as a script under the Triton interpreter (test_collect_attention_bwd.py
does); prints one ``ok <name>`` line per check and exits non-zero on the
first failure."""

from __future__ import annotations

from learned_cost.collect.devices import Device

Device("interpreter").setup()  # before triton loads: turns the interpreter on

import math  # noqa: E402

import torch  # noqa: E402

from side_checks_common import close as _close, launch as _launch  # noqa: E402

from learned_cost.collect.corpus import attention_bwd as ab  # noqa: E402

SHAPES = ({"B": 1, "H": 2, "S": 40, "D": 16, "causal": 1}, {"B": 2, "H": 1, "S": 37, "D": 32, "causal": 0})
BLOCKS = ((16, 16), (32, 16), (16, 32))


def _autograd(t, shape):
    q, k, v = (t[n].double().requires_grad_(True) for n in ("q", "k", "v"))
    att = (q @ k.transpose(-1, -2)) / math.sqrt(shape["D"])
    if shape["causal"]:
        s = shape["S"]
        att = att.masked_fill(~torch.ones(s, s, dtype=torch.bool).tril(), float("-inf"))
    o = torch.softmax(att, -1) @ v
    return o, torch.autograd.grad(o, (q, k, v), t["do"].double())


def check_reference_and_forward_stats() -> None:
    for i, shape in enumerate(SHAPES):
        torch.manual_seed(10 + i)
        t = ab.ATTENTION_BWD_DKDV.make_inputs(shape, "fp32", "cpu")
        o, (dq, dk, dv) = _autograd(t, shape)
        ref_dq, ref_dk, ref_dv = ab._reference_grads(t, shape)
        _close(ref_dq, dq, 1e-10, "reference dq vs autograd")
        _close(ref_dk, dk, 1e-10, "reference dk vs autograd")
        _close(ref_dv, dv, 1e-10, "reference dv vs autograd")
        _close(t["o"], o, 1e-5, "stored o vs the forward")
        _close(t["delta"], (o * t["do"].double()).sum(-1), 1e-5, "delta = rowsum(o * do)")
        att = (t["q"].double() @ t["k"].double().transpose(-1, -2)) / math.sqrt(shape["D"])
        if shape["causal"]:
            s = shape["S"]
            att = att.masked_fill(~torch.ones(s, s, dtype=torch.bool).tril(), float("-inf"))
        _close(t["lse"], torch.logsumexp(att, -1), 1e-6, "lse")
        # the collector's checked buffer is dk then dv
        _close(ab.ATTENTION_BWD_DKDV.reference(t, shape, "fp32"), torch.stack((dk, dv)), 1e-10, "dkdv stacking")
    print("ok reference_and_forward_stats")


def check_each_gradient_on_its_own() -> None:
    for i, shape in enumerate(SHAPES):
        torch.manual_seed(20 + i)
        t = ab.ATTENTION_BWD_DKDV.make_inputs(shape, "fp16", "cpu")
        t["out_dq"] = torch.empty_like(t["q"])
        ref_dq, ref_dk, ref_dv = ab._reference_grads(t, shape)
        for bm, bn in BLOCKS:
            cfg = {"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": 2, "num_stages": 2}
            what = f"{shape} BLOCK_M={bm} BLOCK_N={bn}"
            t["out"].fill_(float("nan"))
            ln = _launch(ab.ATTENTION_BWD_DKDV, t, shape, cfg, "fp16")
            assert ln.grid == (-(-shape["S"] // bn), shape["B"] * shape["H"], 1)
            _close(t["out"][0], ref_dk, 5e-3, f"dk {what}")
            _close(t["out"][1], ref_dv, 5e-3, f"dv {what}")
            dq_inputs = dict(t, out=t["out_dq"].fill_(float("nan")))
            ln = _launch(ab.ATTENTION_BWD_DQ, dq_inputs, shape, cfg, "fp16")
            assert ln.grid == (-(-shape["S"] // bm), shape["B"] * shape["H"], 1)
            _close(t["out_dq"], ref_dq, 5e-3, f"dq {what}")
    print("ok each_gradient_on_its_own")


if __name__ == "__main__":
    check_reference_and_forward_stats()
    check_each_gradient_on_its_own()
