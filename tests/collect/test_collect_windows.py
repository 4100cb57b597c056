"""Pooling, causal convolution and argmax families
(learned_cost/collect/corpus/windows.py): measured and checked by the
collector under the interpreter; the float64 references agree with
independent formulations (explicit window loops, shifted sums); the argmax
inputs have one maximum per row in every dtype; stock Triton's TTIR of the
real shapes shows the tap loops, the once-per-position divisor, the SiLU
only where asked, one reduction per column tile and the exact output bytes;
every group has a real choice of launch options."""

from __future__ import annotations

import math

import pytest

win = pytest.importorskip("learned_cost.collect.corpus.windows")
NAMES = [f.name for f in win.FAMILIES]
ELEM_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}


def _sid(s):
    return "-".join(f"{k}{v}" for k, v in s.items())


def test_collector_measures_and_checks_every_windows_family(tmp_path, corpus_checks):
    corpus_checks.measure_tiny(win.FAMILIES, tmp_path / "store", max_configs=2)


# ---------------------------------------------------------------- references


def _valid(o, size, s):
    """Input indices of output index ``o``'s window that lie in the image."""
    start = o * s["stride"] - s["pad"]
    return [i for i in range(start, start + s["K"]) if 0 <= i < size]


def test_maxpool_reference_is_the_max_over_each_clipped_window():
    fam = win.MAXPOOL2D_NHWC
    s = fam.tiny
    t = fam.make_inputs(s, "fp32", "cpu")
    x = t["x"].double()
    got = fam.reference(t, s, "fp32")
    ho, wo = win._out_hw(s)
    assert tuple(got.shape) == tuple(t["out"].shape) == (s["N"], ho, wo, s["C"])
    for oh in range(ho):
        for ow in range(wo):
            rows, cols = _valid(oh, s["H"], s), _valid(ow, s["W"], s)
            want = x[:, rows][:, :, cols].amax(dim=(1, 2))
            assert float((got[:, oh, ow] - want).abs().max()) == 0.0, (oh, ow)


def test_avgpool_reference_divides_by_the_window_inside_the_image():
    fam = win.AVGPOOL2D_NCHW
    s = fam.tiny
    t = fam.make_inputs(s, "fp32", "cpu")
    x = t["x"].double()
    got = fam.reference(t, s, "fp32")
    ho, wo = win._out_hw(s)
    assert tuple(got.shape) == tuple(t["out"].shape) == (s["N"], s["C"], ho, wo)
    divisors = set()
    for oh in range(ho):
        for ow in range(wo):
            rows, cols = _valid(oh, s["H"], s), _valid(ow, s["W"], s)
            divisors.add(len(rows) * len(cols))
            want = x[:, :, rows][:, :, :, cols].sum(dim=(2, 3)) / (len(rows) * len(cols))
            assert float((got[:, :, oh, ow] - want).abs().max()) < 1e-12, (oh, ow)
    # the tiny shape clips windows at the borders, so the count matters
    assert divisors == {4, 6, 9}


def test_causal_conv1d_reference_is_the_sum_of_past_taps():
    import torch

    fam = win.CAUSAL_CONV1D
    s = fam.tiny
    t = fam.make_inputs(s, "fp32", "cpu")
    x, w, b = t["x"].double(), t["w"].double(), t["bias"].double()
    k = s["K"]
    y = b[None, :, None].expand_as(x).clone()
    for j in range(k):
        shift = k - 1 - j
        # tap j reads x[t - shift]; steps before the start contribute nothing
        y[:, :, shift:] += w[None, :, j, None] * x[:, :, :s["T"] - shift]
    want = y * torch.sigmoid(y)
    got = fam.reference(t, s, "fp32")
    assert s["silu"] == 1 and tuple(got.shape) == tuple(t["out"].shape)
    assert float((got - want).abs().max()) < 1e-12
    assert float((fam.reference(t, {**s, "silu": 0}, "fp32") - y).abs().max()) < 1e-12


@pytest.mark.parametrize("dtype", win.ARGMAX_ROWS.dtypes)
def test_argmax_inputs_have_one_maximum_per_row(dtype):
    import torch

    fam = win.ARGMAX_ROWS
    s = {"M": 64, "N": 3000, "idx": 32}
    t = fam.make_inputs(s, dtype, "cpu")
    x = t["x"].double()
    top = x.max(dim=1, keepdim=True).values
    assert bool(((x == top).sum(dim=1) == 1).all())
    idx = fam.reference(t, s, dtype)
    assert bool((x[torch.arange(s["M"]), idx] == top[:, 0]).all())
    # the maximum sits anywhere in the row, not only in the first tile
    assert int(idx.max()) > 1024
    assert t["out"].dtype == torch.int32
    assert fam.make_inputs({**s, "idx": 64}, dtype, "meta")["out"].dtype == torch.int64


# ---------------------------------------------------------------- stock Triton TTIR


def _check_common(fv, launch, stage):
    v = fv.values
    assert all(math.isfinite(x) for x in v.values()), stage
    assert v["unknown_ops"] == 0, stage
    assert v["programs"] == launch.grid[0] * launch.grid[1] * launch.grid[2], stage
    # no dot anywhere in this module
    assert v["dot_ops"] == 0, stage
    return v


def _window_reads(s, planes):
    """Input elements the windows of every output position read inside the
    image (padding excluded), over ``planes`` (image, channel) planes."""
    ho, wo = win._out_hw(s)
    rows = sum(len(_valid(o, s["H"], s)) for o in range(ho))
    cols = sum(len(_valid(o, s["W"], s)) for o in range(wo))
    return rows * cols * planes


@pytest.mark.parametrize("shape", win.MAXPOOL2D_NHWC.shapes, ids=_sid)
def test_stock_triton_ttir_of_maxpool(shape, corpus_checks):
    fam, dtype = win.MAXPOOL2D_NHWC, "fp16"
    cfg = fam.group_configs(shape, dtype)[-1]
    _, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype, cfg)
    ho, wo = win._out_hw(shape)
    k = shape["K"]
    out_bytes = shape["N"] * ho * wo * shape["C"] * ELEM_BYTES[dtype]
    for stage, fv in feats.items():
        v = _check_common(fv, launch, stage)
        # the kw loop inside the kh loop, both constexpr: one masked tile
        # load per tap and no reduction (the max is elementwise)
        assert v["loop_depth_max"] == 2 and v["unresolved_loops"] == 0, stage
        assert v["loop_trip_total"] == k + k * k, stage
        assert v["load_ops"] == v["masked_load_ops"] == k * k and v["reduce_ops"] == 0, stage
        # every output written once; every in-image window pixel read
        assert v["total_store_bytes"] == out_bytes, stage
        reads = _window_reads(shape, shape["N"] * shape["C"]) * ELEM_BYTES[dtype]
        assert reads <= v["total_load_bytes"] <= k * k * out_bytes, stage


@pytest.mark.parametrize("shape", win.AVGPOOL2D_NCHW.shapes, ids=_sid)
def test_stock_triton_ttir_of_avgpool(shape, corpus_checks):
    fam, dtype = win.AVGPOOL2D_NCHW, "fp32"
    cfg = fam.group_configs(shape, dtype)[-1]
    _, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype, cfg)
    ho, wo = win._out_hw(shape)
    k = shape["K"]
    planes = shape["N"] * shape["C"]
    for stage, fv in feats.items():
        v = _check_common(fv, launch, stage)
        assert v["loop_depth_max"] == 2 and v["loop_trip_total"] == k + k * k, stage
        assert v["load_ops"] == v["masked_load_ops"] == k * k, stage
        # one float division per output position (the clipped window's
        # reciprocal, shared by the program's planes), not one per element
        assert v["ew_div_elems"] - v["int_divrem_elems"] == cfg["BLOCK_HW"], stage
        assert v["total_store_bytes"] == planes * ho * wo * ELEM_BYTES[dtype], stage
        assert v["total_load_bytes"] >= _window_reads(shape, planes) * ELEM_BYTES[dtype], stage


@pytest.mark.parametrize("shape", win.CAUSAL_CONV1D.shapes, ids=_sid)
def test_stock_triton_ttir_of_causal_conv1d(shape, corpus_checks):
    fam, dtype = win.CAUSAL_CONV1D, "bf16"
    cfg = fam.group_configs(shape, dtype)[-1]
    _, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype, cfg)
    k = shape["K"]
    elems = shape["B"] * shape["D"] * shape["T"]
    tile = cfg["BLOCK_D"] * cfg["BLOCK_T"]
    assert launch.grid[2] == shape["B"]
    for stage, fv in feats.items():
        v = _check_common(fv, launch, stage)
        # the tap loop: a shifted x tile and a weight column per tap, the
        # bias once
        assert v["loops"] == 1 and v["loop_trip_total"] == k and v["unresolved_loops"] == 0, stage
        assert v["load_ops"] == 2 * k + 1, stage
        # SiLU (one exp per element) only where the shape asks for it
        assert v["ew_transcendental_elems"] == (tile if shape["silu"] else 0), stage
        assert v["total_store_bytes"] == elems * ELEM_BYTES[dtype], stage
        # x read K times, less the steps before the start
        assert v["total_load_bytes"] >= k * elems * ELEM_BYTES[dtype] * (1 - k / shape["T"]), stage


@pytest.mark.parametrize("shape", win.ARGMAX_ROWS.shapes, ids=_sid)
def test_stock_triton_ttir_of_argmax(shape, corpus_checks):
    fam, dtype = win.ARGMAX_ROWS, "fp16"
    cfgs = fam.group_configs(shape, dtype)
    # a config with several column tiles per row
    cfg = max(cfgs, key=lambda c: math.ceil(shape["N"] / c["BLOCK_N"]))
    tiles = math.ceil(shape["N"] / cfg["BLOCK_N"])
    assert tiles > 1
    _, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype, cfg)
    for stage, fv in feats.items():
        v = _check_common(fv, launch, stage)
        # the column-tile loop, its bound from N, one (max, index)
        # reduction per tile
        assert v["loops"] == 1 and v["unresolved_loops"] == 0 and v["loop_trip_total"] == tiles, stage
        assert v["reduce_ops"] == tiles and v["reduce_axis_len"] == cfg["BLOCK_N"], stage
        # the matrix read once (ragged tail excluded), one index per row
        assert v["total_load_bytes"] == shape["M"] * shape["N"] * ELEM_BYTES[dtype], stage
        assert v["total_store_bytes"] == shape["M"] * shape["idx"] // 8, stage


@pytest.mark.parametrize("dtype", win.FLOAT_DTYPES)
@pytest.mark.parametrize("fam", win.FAMILIES, ids=NAMES)
def test_every_dtype_compiles_to_ttir(fam, dtype, corpus_checks):
    # bf16 is not run under the interpreter, so its typing (Triton widens
    # some bf16 ops to fp32) is only checked here
    assert dtype in fam.dtypes
    shape = fam.shapes[0]
    cfgs = fam.group_configs(shape, dtype)
    for cfg in (cfgs[0], cfgs[-1]):
        texts, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype, cfg)
        assert "tt.store" in texts.optimized
        _check_common(feats["optimized"], launch, dtype)


# ---------------------------------------------------------------- launch options


_TILES = {
    "maxpool2d_nhwc": ("BLOCK_P", "BLOCK_C"),
    "avgpool2d_nchw": ("BLOCK_PL", "BLOCK_HW"),
    "causal_conv1d": ("BLOCK_D", "BLOCK_T"),
    "argmax_rows": ("BLOCK_M", "BLOCK_N"),
}


@pytest.mark.parametrize("fam", win.FAMILIES, ids=NAMES)
def test_every_group_has_a_real_choice_of_launch_options(fam, corpus_checks):
    a, b = _TILES[fam.name]
    groups = list(corpus_checks.option_groups(fam))
    assert len(groups) == len(fam.dtypes) * len(fam.shapes)
    for shape, dtype, cfgs in groups:
        # no dot in any loop: Triton does not pipeline them
        assert {c["num_stages"] for c in cfgs} == {1}
        # tiles vary along both axes (a single row leaves one row block)
        assert len({c[b] for c in cfgs}) > 1, (shape, dtype)
        assert len({c[a] for c in cfgs}) > (0 if shape.get("M") == 1 else 1), (shape, dtype)
        for c in cfgs:
            per_thread = c[a] * c[b] / (32 * c["num_warps"])
            # at most 32 values per thread, 16 at 16 warps (128 registers)
            assert per_thread <= (16 if c["num_warps"] == 16 else 32), (shape, c)
            assert per_thread >= (1 if fam is win.ARGMAX_ROWS else 2), (shape, c)
    groups_n = len(groups)
    assert 12 <= groups_n <= 24 and sum(len(c) for _, _, c in groups) <= 1000, (fam.name, groups_n)
    assert len(fam.shapes) >= 5 and fam.tiny is not None


@pytest.mark.parametrize("fam", win.FAMILIES, ids=NAMES)
def test_every_launch_grid_fits_cuda_limits(fam):
    # a grid axis past CUDA's limit fails at launch ("invalid argument"):
    # avgpool's planes axis reaches 65,536 for N32-C2048 at one plane a program
    for shape in fam.shapes:
        for dtype in fam.dtypes:
            t = fam.make_inputs(shape, dtype, "meta")
            for c in fam.group_configs(shape, dtype):
                grid = fam.launch(t, shape, c, dtype).grid
                assert grid[1] <= win.MAX_GRID_YZ and grid[2] <= win.MAX_GRID_YZ, (shape, dtype, c, grid)
    assert any(s["N"] * s["C"] > win.MAX_GRID_YZ for s in win.AVGPOOL2D_NCHW.shapes)
