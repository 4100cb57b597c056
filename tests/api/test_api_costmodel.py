"""costmodel_bench: the public contract (forms, bad input, bindings, hardware, threads)."""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from learned_cost import costmodel_bench
from learned_cost.api import EstimateWarning, Prediction, predict_item, predict_items

from .conftest import fixture_item, fixture_spec, fixture_text


def _runtime_warnings(rec):
    return [w for w in rec if issubclass(w.category, RuntimeWarning)]


def _quiet(item_or_items, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return costmodel_bench(item_or_items, **kw)


# --- forms -------------------------------------------------------------------


def test_tuple_for_one_item_dict_for_a_list():
    item = fixture_item("add")
    config, lat = costmodel_bench(item)
    assert config == "add" and math.isfinite(lat) and lat > 0
    out = costmodel_bench([item, fixture_item("matmul")])
    assert isinstance(out, dict) and set(out) == {"add", "matmul"}
    assert out["add"] == lat
    assert costmodel_bench((item,)) == {"add": lat}
    assert costmodel_bench([]) == {}


def test_seed_style_item_without_grid():
    # the upstream example passes only config, ttir and arg_bindings
    item = {"config": "block1024", "ttir": fixture_text("add", "raw"), "arg_bindings": "arg3=98432,pid_x=0"}
    config, lat = _quiet(item)
    assert config == "block1024" and math.isfinite(lat) and lat > 0


def test_config_can_be_any_hashable():
    for cfg in (("BLOCK", 1024), 7, frozenset({1})):
        config, lat = costmodel_bench(fixture_item("add", config=cfg))
        assert config == cfg and math.isfinite(lat)


def test_every_fixture_predicts_finite_in_every_form():
    import json

    from .conftest import FIXTURES

    specs = json.loads((FIXTURES / "fixtures.json").read_text())
    for name, spec in specs.items():
        for form in spec["files"]:
            for hw in ("h200", "ascend_910b"):
                p = predict_item(fixture_item(name, form, hardware=hw))
                assert p.ok, (name, form, p.error)
                assert math.isfinite(p.latency_us) and p.latency_us > 0


def test_locations_do_not_change_the_prediction():
    a = costmodel_bench(fixture_item("matmul", "opt"))[1]
    b = costmodel_bench(fixture_item("matmul", "opt_debug"))[1]
    assert a == b


# --- bad input: (None, inf) and (config, inf) with exactly one RuntimeWarning --------------


@pytest.mark.parametrize("item", [None, 42, "ttir", {"ttir": "module {}"},
                                  {"config": None, "ttir": "module {}"}, {"config": ["unhashable"], "ttir": "x"}])
def test_no_usable_config_gives_none_inf(item):
    with pytest.warns(RuntimeWarning) as rec:
        assert costmodel_bench(item) == (None, math.inf)
    assert len(_runtime_warnings(rec)) == 1


def test_a_list_of_junk_gives_an_empty_dict_and_one_warning_each():
    with pytest.warns(RuntimeWarning) as rec:
        assert costmodel_bench(["config", None, {"ttir": "x"}]) == {}
    assert len(_runtime_warnings(rec)) == 3


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"ttir": None}, "no 'ttir'"),
        ({"ttir": ""}, "empty"),
        ({"ttir": 123}, "ttir must be"),
        ({"ttir": "this is not TTIR at all {{{"}, "ttir"),
        ({"arg_bindings": "arg3=abc"}, "arg3"),
        ({"arg_bindings": "bogus_key=1"}, "bogus_key"),
        ({"arg_bindings": "arg3"}, "arg3"),
        ({"arg_bindings": 3.5}, "arg_bindings"),
        ({"hardware": "tpu_v5"}, "tpu_v5"),
        ({"hardware": None, "target_arch": "Ascend310P3"}, "Ascend310P3"),
        ({"hardware": None, "hardware_config": "/no/such/profile.json"}, "profile.json"),
        ({"grid": 0}, "grid"),
        ({"grid": [1, 2, 3, 4]}, "grid"),
        ({"grid": "97"}, "grid"),
        ({"grid": [97.5]}, "grid"),
        ({"options": "num_warps=4"}, "options"),
        ({"options": {"num_warps": [4]}}, "num_warps"),
        ({"model": "magic"}, "magic"),
    ],
)
def test_bad_item_gives_config_inf_and_one_warning(change, needle):
    item = {**fixture_item("add"), **change}
    item = {k: v for k, v in item.items() if v is not None or k == "ttir"}
    if change.get("ttir", 0) is None:
        item.pop("ttir")
    with pytest.warns(RuntimeWarning) as rec:
        config, lat = costmodel_bench(item)
    assert (config, lat) == ("add", math.inf)
    ws = _runtime_warnings(rec)
    assert len(ws) == 1, [str(w.message) for w in ws]
    assert needle in str(ws[0].message)
    assert not issubclass(ws[0].category, EstimateWarning)


def test_bad_items_in_a_list_do_not_spoil_the_others():
    good = fixture_item("add")
    bad = fixture_item("matmul", hardware="nope")
    with pytest.warns(RuntimeWarning) as rec:
        out = costmodel_bench([good, 17, bad])
    assert out["add"] > 0 and math.isfinite(out["add"]) and out["matmul"] == math.inf
    assert None not in out
    assert len(_runtime_warnings(rec)) == 2


def test_predict_item_never_warns_and_reports():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = predict_item(fixture_item("add", hardware="nope"))
        q = predict_item(fixture_item("add"))
    assert isinstance(p, Prediction) and not p.ok and "nope" in p.error and p.latency_us == math.inf
    assert q.ok and q.model == "analytic" and q.hardware == "h200" and q.features is not None
    assert q.features["programs"] == 97


# --- bindings ------------------------------------------------------------------------


def test_binding_forms_and_aliases_agree():
    base = fixture_item("add", ttir=fixture_text("add", "raw"), grid=None)
    forms = [
        "arg3=98432,pid_x=0",
        "3=98432,pidx=0",
        "arg3=98432, program_id_x=0",
        {"arg3": 98432, "pid_x": 0},
        {3: 98432, "pid_x": "0"},
        {"arg3": "98432"},
    ]
    values = {_quiet({**base, "arg_bindings": f})[1] for f in forms}
    assert len(values) == 1 and math.isfinite(values.pop())


def test_num_programs_binding_sets_the_grid():
    base = fixture_item("add", grid=None)
    a = predict_item({**base, "arg_bindings": "arg3=98432,num_programs_x=97"})
    b = predict_item({**base, "arg_bindings": "arg3=98432,num_programsx=97"})
    c = predict_item({**base, "arg_bindings": "arg3=98432", "grid": 97})
    assert a.latency_us == b.latency_us == c.latency_us
    assert a.features["programs"] == 97


def test_bindings_change_the_prediction():
    small = costmodel_bench(fixture_item("matmul", arg_bindings=fixture_spec("matmul")["arg_bindings"].replace("arg5=4096", "arg5=256")))[1]
    big = costmodel_bench(fixture_item("matmul"))[1]
    assert small < big


def test_grid_forms():
    base = fixture_item("matmul")
    values = {costmodel_bench({**base, "grid": g})[1] for g in ([32, 32], (32, 32), [32, 32, 1])}
    assert len(values) == 1
    assert costmodel_bench({**base, "grid": 32 * 32})[1] > 0


# --- hardware and models ------------------------------------------------------------------


def test_hardware_changes_the_prediction_and_arch_aliases_work():
    item = fixture_item("add", hardware=None)
    h = costmodel_bench({**item, "target_arch": "NVIDIA H200"})[1]
    b = costmodel_bench({**item, "target_arch": "Ascend910B3"})[1]
    b2 = costmodel_bench({**item, "hardware": "ascend_910b"})[1]
    d = costmodel_bench({**item, "target_arch": "Ascend950PR"})[1]
    assert b == b2 and len({h, b, d}) == 3


def test_default_hardware_is_used_when_none_given(monkeypatch):
    item = fixture_item("add", hardware=None)
    monkeypatch.setenv("LEARNED_COST_HARDWARE", "ascend_950")
    assert predict_item(item).hardware == "ascend_950"


def test_model_key_forces_analytic():
    p = predict_item(fixture_item("add", model="analytic"))
    assert p.model == "analytic"


def test_hardware_config_path(tmp_path):
    import json

    from learned_cost.hardware import load_profile

    raw = json.loads(open(load_profile("h200").path).read())
    raw["name"] = "slow_gpu"
    raw["measured"] = {}  # the measured copy bandwidth would override the datasheet figure
    raw["memory"]["bandwidth_gbs"] = 48.0
    path = tmp_path / "slow.json"
    path.write_text(json.dumps(raw))
    fast = costmodel_bench(fixture_item("add"))[1]
    slow_item = fixture_item("add", hardware=None, hardware_config=str(path))
    p = predict_item(slow_item)
    assert p.hardware == "slow_gpu" and p.latency_us > fast
    # editing the file is seen by the next call (the cache key covers the content)
    raw["memory"]["bandwidth_gbs"] = 4.8
    import os
    import time

    path.write_text(json.dumps(raw))
    os.utime(path, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    assert predict_item(slow_item).latency_us > p.latency_us


# --- caching --------------------------------------------------------------------------------


def test_second_call_is_cached_and_identical():
    item = fixture_item("matmul")
    a = predict_item(item)
    b = predict_item(item)
    assert not a.cached and b.cached and a.latency_us == b.latency_us


def test_inf_is_never_cached():
    item = fixture_item("add", hardware="nope")
    assert not predict_item(item).cached
    assert not predict_item(item).cached


def test_disk_cache_is_used_across_processes(tmp_path, monkeypatch):
    from learned_cost.api import clear_caches

    monkeypatch.setenv("LEARNED_COST_DISK_CACHE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    clear_caches()
    a = predict_item(fixture_item("add"))
    files = list((tmp_path / "learned_cost").rglob("*.json"))
    assert len(files) == 1
    clear_caches()  # a fresh process: empty memory
    b = predict_item(fixture_item("add"))
    assert b.cached and b.latency_us == a.latency_us


# --- threads -----------------------------------------------------------------------------


def test_thread_pool_equals_serial():
    names = ["add", "matmul", "softmax", "layernorm", "row_sum", "cumsum", "add2d", "embedding"]
    items = []
    for i in range(1000):
        name = names[i % len(names)]
        spec = fixture_spec(name)
        first, _, rest = spec["arg_bindings"].partition(",")
        key, _, value = first.partition("=")
        b = f"{key}={int(value) + (i // len(names)) * 64}" + ("," + rest if rest else "")
        items.append(fixture_item(name, config=(name, i), arg_bindings=b))
    serial = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for it in items:
            c, v = costmodel_bench(it)
            serial[c] = v
    from learned_cost.api import clear_caches

    clear_caches()
    parallel = _quiet(items, workers=8)
    assert parallel == serial
    assert all(math.isfinite(v) for v in parallel.values())
    # and with the work cached, from 8 threads at once
    again = predict_items(items, workers=8)
    assert [p.latency_us for p in again] == [serial[it["config"]] for it in items]


def test_workers_from_env_and_bad_values(monkeypatch):
    items = [fixture_item("add", config=i, arg_bindings=f"arg3={1000 + i}") for i in range(20)]
    monkeypatch.setenv("LEARNED_COST_WORKERS", "3")
    a = costmodel_bench(items)
    monkeypatch.setenv("LEARNED_COST_WORKERS", "many")
    with pytest.warns(RuntimeWarning, match="LEARNED_COST_WORKERS"):
        b = costmodel_bench(items)
    with pytest.warns(RuntimeWarning, match="workers"):
        c = costmodel_bench(items, workers=0)
    assert a == b == c


def test_estimates_are_flagged_with_one_estimate_warning():
    # no grid and no num_programs: the launch size is a guess
    item = fixture_item("matmul", grid=None, arg_bindings=None)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        config, lat = costmodel_bench(item)
    assert config == "matmul" and math.isfinite(lat) and lat > 0
    est = [w for w in rec if issubclass(w.category, EstimateWarning)]
    assert len(est) == 1 and len(_runtime_warnings(rec)) == 1
    assert "assumed" in str(est[0].message)
    # a fully specified item is not flagged
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        costmodel_bench(fixture_item("matmul"))


def test_seed_flow_on_triton_ascend_ttir():
    # TTIR printed by triton-ascend's front end, as the upstream example makes it
    item = {"config": "block1024", "ttir": fixture_text("add", "ascend"), "arg_bindings": "arg3=98432,pid_x=0",
            "target_arch": "Ascend910B3"}
    p = predict_item(item)
    assert p.ok and p.hardware == "ascend_910b" and p.features["programs"] == 97
    assert costmodel_bench(item) == ("block1024", p.latency_us)
    # the optimized form of the same launch is costed too, and close to the raw one
    q = predict_item({**item, "ttir": fixture_text("add", "ascend_opt")})
    assert q.ok and 0.5 < q.latency_us / p.latency_us < 2.0


_junk = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=True), st.text(max_size=12)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(
    st.fixed_dictionaries(
        {"config": st.one_of(st.just("c"), _junk)},
        optional={
            "ttir": st.one_of(st.sampled_from(["add", "matmul", "softmax"]).map(fixture_text), _junk),
            "arg_bindings": st.one_of(st.just("arg3=98432"), _junk),
            "grid": _junk,
            "options": _junk,
            "hardware": st.one_of(st.sampled_from(["h200", "ascend_910b", "H200"]), _junk),
            "target_arch": _junk,
            "model": st.one_of(st.just("analytic"), _junk),
        },
    )
)
def test_never_raises_on_arbitrary_items(item):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config, lat = costmodel_bench(item)
    assert lat == math.inf or (math.isfinite(lat) and lat > 0)
    if lat != math.inf:
        assert config is item["config"]


def test_default_workers_follow_the_gil(monkeypatch):
    import sys

    from learned_cost.api import default_workers, resolve_workers

    monkeypatch.setattr(sys, "_is_gil_enabled", lambda: True, raising=False)
    assert default_workers() == 1 and resolve_workers() == (1, None)
    monkeypatch.setattr(sys, "_is_gil_enabled", lambda: False, raising=False)
    assert 1 <= default_workers() <= 4
    assert resolve_workers(6) == (6, None)
