"""Score the rank/scale blend (order from lambdarank, µs values from
log_ratio, per group) from a saved ``predictions.parquet`` of
``learned-cost evaluate`` (columns lofo_log_ratio, lofo_lambdarank), next to
the two it is made of. Used to score the blend on an evaluation written
before the blend existed.

Usage: PYTHONPATH=$PWD python scripts/blend_from_predictions.py reports/h200/predictions.parquet
"""

from __future__ import annotations

import sys

import pandas as pd

from learned_cost.train.evaluate import blend_scores
from learned_cost.train.metrics import evaluate_scores


def main(path: str) -> None:
    p = pd.read_parquet(path)
    base = p[["group", "latency_us"]]
    cols = {"log_ratio": p["lofo_log_ratio"], "lambdarank": p["lofo_lambdarank"],
            "blend": blend_scores(p["group"].to_numpy(), p["lofo_log_ratio"].to_numpy(),
                                  p["lofo_lambdarank"].to_numpy())}
    recs = {}
    for name, col in cols.items():
        s, _ = evaluate_scores(base.assign(score=pd.Series(col).to_numpy()), "score",
                               predicts_us=name != "lambdarank")
        recs[name] = s.as_dict()
    keep = ["regret1_geomean", "regret1_p95", "regret1_max", "regret25_geomean", "hit25", "tau_mean", "mape_pct"]
    print(pd.DataFrame.from_dict(recs, orient="index")[keep].to_string(float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main(sys.argv[1])
