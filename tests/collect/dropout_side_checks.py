"""Checks of the dropout families that the collector does not make: the
keep mask is the same whatever the tile a program draws it in, kept values
are exactly x times the fp32 scale, the keep share is near p, and
dropout_add_layernorm's side output h (the next residual) is right in the
one-tile and the chunked form, on ragged row blocks. Run as a script under
the Triton interpreter (test_collect_dropout.py does); prints one
``ok <name>`` line per check and exits non-zero on the first failure."""

from __future__ import annotations

from learned_cost.collect.devices import Device

Device("interpreter").setup()  # before triton loads: turns the interpreter on

import torch  # noqa: E402

from side_checks_common import close as _close, launch as _launch  # noqa: E402

from learned_cost.collect.corpus import dropout as dro  # noqa: E402


def check_mask_exact_and_independent_of_tiles() -> None:
    fam = dro.DROPOUT
    for keep_pct in (50, 90):
        shape = {"N": 5003, "keep": keep_pct}
        p = dro.keep_prob(shape)
        torch.manual_seed(keep_pct)
        for dtype in ("fp16", "fp32"):
            t = fam.make_inputs(shape, dtype, "cpu")
            u = dro.philox_uniforms(shape["N"], dro.DROPOUT_SEED, "cpu")
            assert ((u >= 0) & (u < 1)).all() and len(u.unique()) > shape["N"] * 0.99
            keep = dro.keep_mask(shape["N"], dro.DROPOUT_SEED, p, "cpu")
            # 5003 Bernoulli(p) draws: the share is within 5 standard deviations
            sd = (p * (1 - p) / shape["N"]) ** 0.5
            assert abs(keep.double().mean().item() - p) < 5 * sd, (keep_pct, keep.double().mean().item())
            scale = torch.tensor(1.0 / p, dtype=torch.float32)
            want = torch.where(keep, (t["x"].float() * scale).to(t["x"].dtype), 0.0).to(t["x"].dtype)
            for block, tiles in ((256, 1), (256, 8), (1024, 2), (4096, 1)):
                t["out"].fill_(float("nan"))
                cfg = {"BLOCK": block, "TILES": tiles, "num_warps": 4, "num_stages": 1}
                ln = _launch(fam, t, shape, cfg, dtype)
                assert ln.grid[0] == -(-shape["N"] // (block * tiles))
                assert torch.equal(t["out"], want), (keep_pct, dtype, block, tiles)
            _close(t["out"], fam.reference(t, shape, dtype), 0.0 if keep_pct == 50 else 1e-3, "reference")
    print("ok mask_exact_and_independent_of_tiles")


def check_residual_side_output() -> None:
    fam, shape = dro.DROPOUT_ADD_LAYERNORM, {"M": 7, "N": 300, "keep": 50}
    torch.manual_seed(5)
    t = fam.make_inputs(shape, "fp32", "cpu")
    h_ref, y_ref = dro._daln_ref_all(t, shape)
    keep = dro.keep_mask(7 * 300, dro.DROPOUT_SEED, 0.5, "cpu").reshape(7, 300)
    # dropped elements leave the residual as it was
    assert torch.equal(h_ref[~keep], t["res"].double()[~keep]) and 0 < keep.sum() < keep.numel()
    for rows, block_n in ((1, 512), (4, 512), (8, 512), (1, 128), (2, 256), (4, 64)):
        for k in ("h", "out"):
            t[k].fill_(float("nan"))
        cfg = {"ROWS": rows, "BLOCK_N": block_n, "num_warps": 2, "num_stages": 1}
        ln = _launch(fam, t, shape, cfg, "fp32")
        assert ln.constexprs["ONE_TILE"] is (block_n >= shape["N"])
        what = f"ROWS={rows} BLOCK_N={block_n}"
        _close(t["h"], h_ref, 1e-6, f"h {what}")
        _close(t["out"], y_ref, 1e-5, f"y {what}")
    print("ok residual_side_output")


if __name__ == "__main__":
    check_mask_exact_and_independent_of_tiles()
    check_residual_side_output()
