"""Steps shared by the side-check scripts (library_side_checks.py,
inference_side_checks.py, backward_side_checks.py), imported after each
script has turned the interpreter on: launch a family's kernel as the
collector would, and assert a relative error bound."""

from __future__ import annotations

from learned_cost.collect.collector import relative_error


def launch(fam, inputs, shape, config, dtype):
    """Run ``fam``'s kernel once on ``inputs`` with ``config``'s options;
    returns the Launch (grid, arguments)."""
    ln = fam.launch(inputs, shape, config, dtype)
    fam.kernel[ln.grid](*ln.args, **dict(ln.constexprs), num_warps=config["num_warps"],
                        num_stages=config["num_stages"])
    return ln


def close(got, want, tol, what):
    """Assert relative L2 error of ``got`` against ``want`` within ``tol``."""
    err = relative_error(got, want)
    assert err <= tol, f"{what}: relative error {err:.3g} > {tol:g}"
