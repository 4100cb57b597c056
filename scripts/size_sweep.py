"""Predicted latency of the fixture vector add and matmul over 1e3..1e12
elements (four sizes per decade), learned and analytic, and the largest
drop between neighbouring sizes: how the shipped model scales with problem
size inside and beyond its training data.

Usage: PYTHONPATH=$PWD LEARNED_COST_MODEL_DIR=models python scripts/size_sweep.py
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np

from learned_cost.api import predict_item

FIX = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "ttir"


def _item(name, n, model):
    if name == "add":
        b, grid = f"arg3={n}", -(-n // 1024)
    else:
        s = max(16, int(round(math.sqrt(n))))
        b = f"arg3={s},arg4={s},arg5={s},arg6={s},arg7=1,arg8={s},arg9=1,arg10={s},arg11=1"
        grid = (-(-s // 128), -(-s // 128), 1)
    return {"config": n, "ttir": (FIX / f"{name}.opt.ttir").read_text(), "arg_bindings": b, "grid": grid,
            "hardware": "h200", "model": model, "options": {"num_warps": 4, "num_stages": 3}}


def main() -> None:
    warnings.simplefilter("ignore")
    sizes = [int(round(10 ** e)) for e in np.arange(3.0, 12.01, 0.25)]
    for name in ("add", "matmul"):
        print(f"{name}: elements, learned µs [80 % interval], analytic µs")
        lat = []
        for n in sizes:
            p = predict_item(_item(name, n, "learned"))
            a = predict_item(_item(name, n, "analytic"))
            lat.append(p.latency_us)
            print(f"  {n:.3g}  {p.latency_us:.4g} [{p.latency_low_us:.4g}, {p.latency_high_us:.4g}]  {a.latency_us:.4g}")
        drops = [(b / a - 1.0, sizes[i + 1]) for i, (a, b) in enumerate(zip(lat, lat[1:]))]
        worst, at = min(drops)
        print(f"  largest drop between neighbouring sizes: {100 * worst:.1f} % (at {at:.3g} elements); "
              f"decreasing steps: {sum(d < 0 for d, _ in drops)} of {len(drops)}")


if __name__ == "__main__":
    main()
