"""Fixed costs of pruned tuning: TTIR once per distinct meta-parameter set,
built in threads, timed apart from prediction; the adaptive defaults."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

from learned_cost.autotune.kernel_ir import LaunchDescriber  # noqa: E402


@triton.jit
def _k(x_ptr, n, BLOCK: tl.constexpr, SCALE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * SCALE, mask=offs < n)


def _configs():
    return [triton.Config({"BLOCK": b, "SCALE": s}, num_warps=w, num_stages=st)
            for b in (128, 256) for s in (2, 3) for w in (2, 4, 8) for st in (1, 3)]


def test_ttir_does_not_depend_on_launch_options_and_is_built_once_per_meta_set(monkeypatch):
    x = torch.empty(4096, device="meta")
    d = LaunchDescriber(_k, ("cuda", 90, 32))
    calls = []
    real = d._make_ttir
    monkeypatch.setattr(d, "_make_ttir", lambda launch, kw: calls.append(dict(kw)) or real(launch, kw))
    launches = [d.describe([x, 4096], {}, c.all_kwargs(), (16,)) for c in _configs()]
    assert len(calls) == 4  # 2 BLOCK x 2 SCALE; num_warps / num_stages share
    by_meta: dict = {}
    for c, la in zip(_configs(), launches):
        by_meta.setdefault((c.kwargs["BLOCK"], c.kwargs["SCALE"]), set()).add(la.ttir)
    # Triton 3.6's TTIR carries no num-warps attribute (it appears in TTGIR):
    # the shared text is exact, not an approximation
    assert all(len(v) == 1 for v in by_meta.values()) and "num-warps" not in launches[0].ttir
    assert {la.options["num_warps"] for la in launches} == {2, 4, 8}


def test_tuner_builds_distinct_sets_in_threads_with_the_serial_result(monkeypatch):
    from learned_cost.autotune import tuner as tuner_mod

    x = torch.empty(4096, device="meta")
    got = {}
    for threads in (1, 4):
        monkeypatch.setattr(tuner_mod, "TTIR_THREADS", threads)
        t = tuner_mod.autotune(configs=_configs(), key=["n"], predictor=lambda items: {i["config"]: 1.0 for i in items},
                               feedback=False, target=("cuda", 90, 32))(_k)
        launches, preds = t.predict({"x_ptr": x, "n": 4096}, {"grid": (16,)}, _configs())
        assert all(la is not None for la in launches) and preds == [1.0] * len(launches)
        assert t.ttir_s > 0 and t.model_s >= 0
        got[threads] = [la.equivalence_key() for la in launches]
    assert got[1] == got[4]


def test_adaptive_is_the_default_with_a_floor_and_a_cap():
    from learned_cost.autotune import tuner as tuner_mod

    t = tuner_mod.autotune(configs=_configs(), key=["n"], feedback=False)(_k)
    assert t.prune == "adaptive"
    assert tuner_mod.resolve_min_configs(None, 40) == 6  # ceil(0.15 * 40)
    assert tuner_mod.resolve_min_configs(None, 8) == 2   # never below 2
    assert tuner_mod.DEFAULT_ADAPTIVE_CAP == 0.25
