"""Harvested torch.compile kernels: capture records, config spaces, grids,
TTIR on the host, the launch recorder, and a replay under the interpreter.

The fixtures are real captures (Inductor's generated source and the launch
it made) from the H200 harvest of the zoo, ``tests/fixtures/inductor``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from learned_cost.collect.inductor.capture import (  # noqa: E402
    ArgSpec,
    Capture,
    bind_args,
    build_storages,
    capture_id,
    describe_args,
    kernel_name_of,
    main_dtype,
    source_digest,
    strip_inductor_decorator,
    structure_digest,
)
from learned_cost.collect.inductor.replay import (  # noqa: E402
    MAX_ELEMS_PER_THREAD,
    STAGES,
    WARPS,
    compare,
    config_space,
    grid_for,
    has_loop,
    replay_order,
)

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "inductor" / "captures.jsonl"


def _captures() -> list[Capture]:
    return [Capture.from_json(line) for line in FIXTURES.read_text().splitlines() if line.strip()]


def _by_kind(kind: str) -> Capture:
    return next(c for c in _captures() if c.kernel_name.startswith(f"triton_{kind}_"))


# ---------------------------------------------------------------- records
def test_capture_json_round_trip():
    for c in _captures():
        back = Capture.from_json(c.to_json())
        assert back == c
        assert isinstance(back.args[0], ArgSpec)


def test_strip_decorator_leaves_a_plain_jit_kernel():
    for c in _captures():
        text = strip_inductor_decorator(c.source)
        assert "@triton_heuristics." not in text and "set_driver_to_gpu" not in text
        assert "@triton.jit" in text
        assert kernel_name_of(c.source) == c.kernel_name == kernel_name_of(text)


def test_digests_ignore_the_kernel_name_but_not_the_code():
    c = _by_kind("poi")
    renamed = c.source.replace(c.kernel_name, "triton_poi_other_name_99")
    assert source_digest(renamed) == source_digest(c.source)
    assert source_digest(c.source.replace("XBLOCK", "XBLOCK + 0", 1)) != source_digest(c.source)
    # sizes masked: the same structure generated for another size
    resized = c.source.replace("xnumel = ", "xnumel = 1 + ")
    assert structure_digest(c.source) != structure_digest(resized)  # code changed
    bigger = c.source.replace(str(c.numels["xnumel"]), str(c.numels["xnumel"] * 2))
    assert structure_digest(bigger) == structure_digest(c.source)


def test_describe_build_bind_keeps_layout_aliasing_and_integer_contents():
    base = torch.arange(64, dtype=torch.float32)
    view = base[8:40].view(4, 8)[:, ::2]  # offset, non-contiguous
    idx = torch.tensor([3, 1, 2], dtype=torch.int64)
    specs = describe_args(["a", "b", "idx", "n", "f", "none"], [base, view, idx, 7, 0.5, None])
    assert [s.kind for s in specs] == ["tensor", "tensor", "tensor", "int", "float", "none"]
    assert specs[0].storage == specs[1].storage  # aliasing kept
    assert specs[1].offset == 8 and specs[1].stride == [8, 2]
    assert specs[2].payload  # small integer tensors keep their contents
    storages = build_storages(specs, "cpu", seed=1)
    a, b, i, n, f, none = bind_args(specs, storages)
    assert b.shape == view.shape and b.stride() == view.stride() and b.storage_offset() == 8
    assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    assert torch.equal(i, idx) and n == 7 and f == 0.5 and none is None
    assert torch.isfinite(a).all() and not torch.equal(a, base)  # floats drawn afresh
    real = build_storages(specs, "cpu", seed=1, real={0: base.view(torch.uint8).clone()})
    assert torch.equal(bind_args(specs, real)[1], view)
    assert main_dtype(specs) == "fp32"
    assert capture_id("def k(): pass\n@triton.jit\ndef kern(x):\n  pass", specs) != ""


def test_compare_reads_storages_in_their_dtype_and_checks_non_finite_values():
    specs = describe_args(["x"], [torch.zeros(4)])
    cap = _by_kind("poi")
    cap = Capture(**{**cap.__dict__, "args": specs})
    ref = {0: torch.tensor([1.0, float("nan"), float("inf"), 2.0]).view(torch.uint8)}
    same = {0: torch.tensor([1.0, float("nan"), float("inf"), 2.0 + 1e-7]).view(torch.uint8)}
    assert compare(cap, same, ref) < 1e-6
    moved_nan = {0: torch.tensor([float("nan"), 1.0, float("inf"), 2.0]).view(torch.uint8)}
    assert compare(cap, moved_nan, ref) == float("inf")
    flipped_inf = {0: torch.tensor([1.0, float("nan"), float("-inf"), 2.0]).view(torch.uint8)}
    assert compare(cap, flipped_inf, ref) == float("inf")
    off = {0: torch.tensor([1.5, float("nan"), float("inf"), 2.0]).view(torch.uint8)}
    assert 0.1 < compare(cap, off, ref) < 1


# ---------------------------------------------------------------- configs
def test_config_space_starts_with_the_captured_config_and_keeps_the_options_group():
    for c in _captures():
        cfgs = config_space(c, max_configs=32)
        orig = {**c.config, "num_warps": c.num_warps, "num_stages": c.num_stages}
        assert cfgs[0] == orig
        assert len(cfgs) == len({json.dumps(x, sort_keys=True) for x in cfgs}) <= 32
        stages = STAGES if has_loop(c.source) else (c.num_stages,)
        same_blocks = [x for x in cfgs if all(x[k] == v for k, v in c.config.items())]
        assert {(x["num_warps"], x["num_stages"]) for x in same_blocks} == {(w, s) for w in WARPS for s in stages}


def test_config_space_varies_blocks_within_limits():
    red = _by_kind("red")
    assert has_loop(red.source)
    cfgs = config_space(red, max_configs=200)
    assert {x["R0_BLOCK"] for x in cfgs} - {red.config["R0_BLOCK"]}
    for x in cfgs:
        tile = x["XBLOCK"] * x["R0_BLOCK"]
        if (x["XBLOCK"], x["R0_BLOCK"]) != (red.config["XBLOCK"], red.config["R0_BLOCK"]):
            assert 16 <= tile <= 8192
            assert tile <= MAX_ELEMS_PER_THREAD * 32 * x["num_warps"]
        assert x["R0_BLOCK"] <= 128  # r0_numel is 73: no block past its next power of two
    poi = _by_kind("poi")
    assert not has_loop(poi.source)
    assert {x["num_stages"] for x in config_space(poi, 200)} == {poi.num_stages}


def test_non_tiled_grids_vary_launch_options_only():
    c = _by_kind("poi")
    fixed = Capture(**{**c.__dict__, "grid_meta": {**c.grid_meta, "grid_type": "FixedGrid"}})
    cfgs = config_space(fixed, 200)
    assert all(x["XBLOCK"] == c.config["XBLOCK"] for x in cfgs)
    assert len(cfgs) == len(WARPS)


def test_dot_templates_skip_warps_that_spill_the_accumulator():
    from learned_cost.collect.inductor.replay import MAX_DOT_ACC_PER_THREAD, dot_tile_elems

    c = _by_kind("poi")
    body = "\n    BLOCK_M : tl.constexpr = 128\n    BLOCK_N : tl.constexpr = 128\n    acc += tl.dot(a, b)\n"
    assert dot_tile_elems(c.source) == 0
    assert dot_tile_elems(c.source + body) == 128 * 128
    for captured_w in (1, 8):
        t = Capture(**{**c.__dict__, "source": c.source + body, "num_warps": captured_w,
                       "grid_meta": {**c.grid_meta, "grid_type": "FixedGrid"}})
        warps = {x["num_warps"] for x in config_space(t, 200)}
        # 128x128 fp32 accumulators need 4 warps to stay at 128 per thread
        assert warps == {4, 8, 16} | {captured_w}
        assert 128 * 128 <= MAX_DOT_ACC_PER_THREAD * 32 * 4


def test_grid_rules_reproduce_every_captured_grid():
    """Inductor's grid rules (through this torch) give the grid each
    captured launch used, for every capture in data/inductor."""
    from learned_cost.collect.inductor.grid import launch_grid
    from learned_cost.collect.inductor.harvest import load_captures

    caps = load_captures([ROOT / "data" / "inductor"]) or _captures()
    checked = 0
    for c in caps:
        if c.grid_meta.get("grid_type") not in ("Grid1D", "Grid2D", "Grid3D", "Grid2DWithYZOverflow"):
            continue
        scope = {a.name: a.value for a in c.args if a.kind == "int"}
        assert list(launch_grid(c.grid_meta, scope, c.config)) == c.grid, c.kernel_name
        checked += 1
    assert checked >= len(_captures()) - 0
    red = _by_kind("red")
    bigger = {**red.config, "XBLOCK": red.config["XBLOCK"] * 2, "num_warps": 4, "num_stages": 1}
    assert grid_for(red, bigger)[0] == -(-red.numels["xnumel"] // bigger["XBLOCK"])


def test_replay_order_takes_one_kernel_of_each_structure_first():
    caps = _captures()
    dup = Capture(**{**caps[0].__dict__, "capture_id": "zzzz", "program": "other"})
    order = replay_order(caps + [dup])
    assert len(order) == len(caps) + 1
    assert order[-1].capture_id in ("zzzz", caps[0].capture_id)


# ---------------------------------------------------------------- TTIR on the host
def test_harvested_kernels_make_ttir_and_features_on_the_host():
    from learned_cost.collect.inductor.replay import _constexprs, _meta_args
    from learned_cost.collect.inductor.capture import load_kernel
    from learned_cost.collect.bindings import arg_bindings
    from learned_cost.collect.ttir_gen import generate_ttir
    from learned_cost.features import extract_features

    for c in _captures():
        kernel = load_kernel(c.source)
        cfg = {**c.config, "num_warps": c.num_warps, "num_stages": c.num_stages}
        t = generate_ttir(kernel, _meta_args(c), _constexprs(c, cfg), {"num_warps": c.num_warps, "num_stages": c.num_stages})
        assert "tt.func" in t.optimized
        values = [a.value if a.kind != "tensor" else torch.empty(0) for a in c.args]
        bindings = arg_bindings([a.name for a in c.args], values, t.optimized)
        fv = extract_features(t.optimized, bindings, grid=c.grid, options={"num_warps": c.num_warps})
        assert fv is not None


# ---------------------------------------------------------------- the recorder
class _FakeConfig:
    def __init__(self, kwargs, num_warps, num_stages):
        self.kwargs, self.num_warps, self.num_stages = kwargs, num_warps, num_stages


class _FakeLauncher:
    def __init__(self, cfg):
        self.config = cfg


class _FakeAutotuner:
    """What the recorder reads of Inductor's CachingAutotuner."""

    def __init__(self, cap: Capture, path: Path):
        from learned_cost.collect.inductor.capture import load_kernel

        self.fn = load_kernel(cap.source)
        self.filename = str(path)
        names = [a.name for a in cap.args] + list(cap.config)
        self.triton_meta = {"signature": {n: "x" for n in names}, "constants": {}}
        self.inductor_meta = dict(cap.grid_meta)
        self.launchers = [_FakeLauncher(_FakeConfig(dict(cap.config), cap.num_warps, cap.num_stages))]
        self.configs = []


def test_launch_recorder_captures_once_and_never_disturbs_the_launch(tmp_path):
    from learned_cost.collect.inductor.harvest import LaunchRecorder, consolidate, load_captures

    cap = _by_kind("red")
    src = tmp_path / "kernel.py"
    src.write_text(cap.source)
    tuner = _FakeAutotuner(cap, src)
    rec = LaunchRecorder("toy", tmp_path / "toy")
    (tmp_path / "toy").mkdir()
    calls = []

    def original(autotuner, *args, stream, **kwargs):
        calls.append(len(args))
        return "launched"

    args = bind_args(cap.args, build_storages(cap.args, "cpu", 0))
    assert rec.on_run(original, tuner, tuple(args), 0, {}) == "launched"
    assert rec.on_run(original, tuner, tuple(args), 0, {}) == "launched"  # seen: not captured again
    assert rec.on_run(original, tuner, tuple(args), 0, {"benchmark_run": True}) == "launched"
    assert rec.on_run(original, tuner, tuple(args[:1]), 0, {}) == "launched"  # bad arity: logged, still launched
    assert len(calls) == 4 and rec.captured == 1 and rec.skipped_benchmark == 1 and len(rec.errors) == 1
    got = [Capture.from_json(x) for x in (tmp_path / "toy" / "captures.jsonl").read_text().splitlines()]
    assert len(got) == 1
    g = got[0]
    assert (g.config, g.grid, g.num_warps, g.kernel_name) == (cap.config, cap.grid, cap.num_warps, cap.kernel_name)
    assert (tmp_path / "toy" / "tensors" / f"{g.capture_id}.pt").exists()
    assert consolidate(tmp_path, tmp_path / "captures-x.parquet") == [tmp_path / "captures-x.parquet"]
    assert [c.capture_id for c in load_captures([tmp_path / "captures-x.parquet"])] == [g.capture_id]
    # a second capture of another kernel, and parts too small for two: one part each
    other = Capture.from_json(g.to_json().replace(g.capture_id, "f" * len(g.capture_id)))
    with open(tmp_path / "toy" / "captures.jsonl", "a") as f:
        f.write(other.to_json() + "\n")
    parts = consolidate(tmp_path, tmp_path / "split" / "captures-y.parquet", part_bytes=len(g.to_json()) + 1)
    assert [p.name for p in parts] == ["captures-y-p0.parquet", "captures-y-p1.parquet"]
    ids = sorted(c.capture_id for c in load_captures([tmp_path / "split"]))
    assert ids == sorted([g.capture_id, other.capture_id])


# ---------------------------------------------------------------- replay, end to end
_REPLAY = r"""
import sys
from pathlib import Path
from learned_cost.collect.inductor.capture import Capture
from learned_cost.collect.inductor.replay import ReplayOptions, replay

def main():
    caps = [Capture.from_json(l) for l in Path(sys.argv[1]).read_text().splitlines() if l.strip()]
    caps = [c for c in caps if c.kernel_name.startswith(("triton_red_", "triton_poi_fused__to_copy"))]
    keys = sys.argv[3].split(",") if len(sys.argv) > 3 else None
    opts = ReplayOptions(device="interpreter", out=Path(sys.argv[2]), max_configs=4, progress=False, jobs=1,
                         keys=keys, retry_statuses=("ok",) if keys else ())
    s = replay(opts, caps)
    print("SUMMARY", s.measured, s.skipped, dict(s.by_status))

if __name__ == "__main__":
    main()
"""


@pytest.mark.slow
def test_replay_under_the_interpreter_measures_checks_and_resumes(tmp_path):
    from learned_cost.dataset import ProfileStore

    script = tmp_path / "replay_run.py"
    script.write_text(_REPLAY)
    store = tmp_path / "store"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TRITON_INTERPRET", None)
    run = [sys.executable, str(script), str(FIXTURES), str(store)]
    out = subprocess.run(run, capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "SUMMARY 8 0 {'ok': 8}" in out.stdout, out.stdout + out.stderr[-3000:]
    rows = ProfileStore(store).load_rows()
    assert len(rows) == 8 and set(rows["source"]) == {"inductor"}
    assert rows["ttir_digest"].str.len().gt(0).all() and rows["arg_bindings"].str.contains("arg").all()
    assert rows.groupby("group").size().tolist() == [4, 4]
    assert all(json.loads(v)["reference"] == "captured-config" for v in rows["versions"])
    again = subprocess.run(run, capture_output=True, text=True, env=env, timeout=600)
    assert "SUMMARY 0 8 {}" in again.stdout, again.stdout + again.stderr[-2000:]
    # chosen keys timed again (the store keeps both measurements); the rest untouched
    chosen = sorted(rows["key"])[:2]
    retimed = subprocess.run(run + [",".join(chosen)], capture_output=True, text=True, env=env, timeout=600)
    assert "SUMMARY 2 0 {'ok': 2}" in retimed.stdout, retimed.stdout + retimed.stderr[-2000:]
    after = ProfileStore(store).load_rows().set_index("key")
    assert sorted(after.index) == sorted(rows["key"])
    before = rows.set_index("key")["timestamp"]
    assert all(after.loc[k, "timestamp"] >= before[k] for k in chosen)


def test_one_kernel_at_several_sizes_shares_compiles_and_stays_together():
    from learned_cost.collect.inductor.replay import compile_key

    red = _by_kind("red")
    cfg = {**red.config, "num_warps": 4, "num_stages": 1}

    def resized(cap, xnumel, cid):
        args = [ArgSpec(**{**a.__dict__, "value": xnumel}) if a.name == "xnumel" else a for a in cap.args]
        return Capture(**{**cap.__dict__, "args": args, "capture_id": cid})

    a, b, odd = resized(red, 512, "a"), resized(red, 1024, "b"), resized(red, 1000, "c")
    assert compile_key(a, cfg) == compile_key(b, cfg)  # both divisible by 16: one binary
    assert compile_key(a, cfg) != compile_key(odd, cfg)  # specialized differently
    assert compile_key(a, cfg) != compile_key(a, {**cfg, "num_warps": 8})
    order = replay_order(_captures() + [a, b])
    ids = [c.capture_id for c in order]
    pos = sorted(ids.index(x) for x in (red.capture_id, "a", "b"))
    assert pos == list(range(pos[0], pos[0] + 3))  # the same code's captures are adjacent


def test_zoo_entries_are_named_uniquely_and_list_their_sizes():
    from learned_cost.collect.inductor.zoo import ZOO

    names = [e.name for e in ZOO]
    assert len(names) == len(set(names)) >= 40
    dyn = [e for e in ZOO if e.sizes]
    assert dyn and all(len(e.shapes) == len(e.sizes) + 1 and e.name.endswith(f"-dyn{len(e.sizes)}") for e in dyn)
    assert {e.dtype for e in ZOO} == {"fp16", "bf16", "fp32"}


# ---------------------------------------------------------------- kernels that compile for minutes
def test_groups_that_timed_out_compiling_go_last_in_their_order():
    from learned_cost.collect.inductor.replay import defer_slow, slow_compile_error

    assert slow_compile_error("compile exceeded 45 s") and not slow_compile_error("relative L2 error 1 > 0")
    items = ["a1", "s1", "b1", "s2", "c1"]
    assert defer_slow(items, {"s"}, lambda x: x[0]) == ["a1", "b1", "c1", "s1", "s2"]
    assert defer_slow(items, set(), lambda x: x[0]) == items


def test_a_cancelled_compile_returns_at_once(tmp_path):
    from learned_cost.collect.inductor.replay import compile_task

    flag = tmp_path / "cancelled"
    flag.touch()
    # the capture text is not even parsed: the worker is freed at once
    assert compile_task("not a capture", {}, str(flag)) == {"ok": False, "status": "cancelled", "error": ""}
    bad = compile_task("not a capture", {}, str(tmp_path / "absent"))
    assert bad["ok"] is False and bad["status"] != "cancelled"


_ABANDON = r"""
import sys, tempfile, time
from pathlib import Path
from learned_cost.collect.collector import _progress
from learned_cost.collect.inductor.capture import Capture
from learned_cost.collect.inductor.replay import ReplayOptions, Replayer, _Pending, config_space


class Never:  # a compile that does not finish
    def ready(self): return False
    def wait(self, t): time.sleep(t)
    def get(self): raise AssertionError("never finished")


class Cancelled:
    def ready(self): return True
    def wait(self, t): pass
    def get(self): return {"ok": False, "status": "cancelled", "error": ""}


caps = [Capture.from_json(l) for l in Path(sys.argv[1]).read_text().splitlines() if l.strip()]
red = next(c for c in caps if c.kernel_name.startswith("triton_red_"))
opts = ReplayOptions(device="interpreter", out=Path(sys.argv[2]), progress=False, jobs=1, compile_timeout_s=0.3)
r = Replayer(opts, [red])
r.device.setup()
import torch
r.hardware, r.device_name, r.cancel_dir = "interp", "cpu", Path(tempfile.mkdtemp())
cfgs = config_space(red, 4)
keys = [r._key(red, c) for c in cfgs]
bar = _progress(8, False)
stop = r._run_capture(_Pending(red, cfgs, keys, [Never() for _ in cfgs]), torch, bar, {})
print("TIMEOUT", stop, r.abandoned, r._cancel_flag(red).exists(), dict(r.summary.by_status))
stop = r._run_capture(_Pending(red, cfgs, keys, [Cancelled() for _ in cfgs]), torch, bar, {})
print("CANCELLED", stop, r.abandoned, dict(r.summary.by_status))
r.flush(force=True)
"""


@pytest.mark.slow
def test_a_capture_whose_compile_times_out_is_abandoned_not_waited_on(tmp_path):
    from learned_cost.dataset import ProfileStore

    script = tmp_path / "abandon.py"
    script.write_text(_ABANDON)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TRITON_INTERPRET", None)
    out = subprocess.run([sys.executable, str(script), str(FIXTURES), str(tmp_path / "store")],
                         capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    # one timeout row; the other three configs stay unmeasured and the
    # capture's queued compiles are cancelled
    assert "TIMEOUT False 3 True {'timeout': 1}" in out.stdout, out.stdout + out.stderr[-2000:]
    # compiles cancelled because the same code timed out: nothing recorded
    assert "CANCELLED False 7 {'timeout': 1}" in out.stdout, out.stdout + out.stderr[-2000:]
    rows = ProfileStore(tmp_path / "store").load_rows()
    assert rows["status"].tolist() == ["timeout"] and rows["error"].str.startswith("compile exceeded").all()
    assert "left for a later run" in out.stderr
