"""Convolutions over NHWC activations (learned_cost/collect/corpus/conv.py):
measured and checked by the collector under the interpreter; the float64
references agree with independent formulations (an explicit im2col matmul,
a sum of shifted slices of the padded input); stock Triton's TTIR of the
real shapes shows an implicit GEMM whose one loop walks taps x channel
chunks, and a dot-free depthwise kernel with two nested tap loops."""

from __future__ import annotations

import math

import pytest

conv = pytest.importorskip("learned_cost.collect.corpus.conv")
NAMES = [f.name for f in conv.FAMILIES]
ELEM_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}


def test_collector_measures_and_checks_every_conv_family(tmp_path, corpus_checks):
    corpus_checks.measure_tiny(conv.FAMILIES, tmp_path / "store", max_configs=2)


def _padded_nchw(x, shape):
    import torch

    p = shape["pad"]
    return torch.nn.functional.pad(x.double().permute(0, 3, 1, 2), (p, p, p, p))


def _shifted(xp, shape, kh, kw):
    """The input pixels tap (kh, kw) reads for every output pixel: (N, C, H_out, W_out)."""
    ho, wo = conv._out_hw(shape)
    s = shape["stride"]
    return xp[:, :, kh:kh + s * (ho - 1) + 1:s, kw:kw + s * (wo - 1) + 1:s]


def test_conv_reference_is_the_im2col_matmul():
    import torch

    fam = conv.CONV2D_NHWC
    shape = fam.tiny
    t = fam.make_inputs(shape, "fp32", "cpu")
    xp = _padded_nchw(t["x"], shape)
    # im2col rows in (kh, kw, c_in) order, the weight's (KH, KW, C_in) order
    cols = [_shifted(xp, shape, kh, kw).permute(0, 2, 3, 1) for kh in range(shape["KH"]) for kw in range(shape["KW"])]
    m, n, k = conv._gemm_dims(shape)
    im2col = torch.cat(cols, dim=-1).reshape(m, k)
    want = im2col @ t["w"].double().reshape(k, n)
    got = fam.reference(t, shape, "fp32")
    assert tuple(got.shape) == tuple(t["out"].shape) == (shape["N"], 4, 3, shape["C_out"])
    assert float((got.reshape(m, n) - want).abs().max()) < 1e-12


def test_depthwise_reference_is_the_sum_of_shifted_taps():
    fam = conv.DEPTHWISE_CONV2D
    shape = fam.tiny
    t = fam.make_inputs(shape, "fp32", "cpu")
    xp = _padded_nchw(t["x"], shape)
    w = t["w"].double()
    want = sum(_shifted(xp, shape, kh, kw) * w[kh, kw][None, :, None, None]
               for kh in range(shape["KH"]) for kw in range(shape["KW"])).permute(0, 2, 3, 1)
    got = fam.reference(t, shape, "fp32")
    assert tuple(got.shape) == tuple(t["out"].shape) == (shape["N"], 5, 3, shape["C"])
    assert float((got - want).abs().max()) < 1e-12


def test_tiny_shapes_pad_every_border():
    # the last output row and column of the tiny shapes read past the
    # image's far border, the first ones before its near border
    for fam in conv.FAMILIES:
        s = fam.tiny
        ho, wo = conv._out_hw(s)
        assert s["pad"] > 0
        assert (ho - 1) * s["stride"] - s["pad"] + s["KH"] > s["H"], fam.name
        assert (wo - 1) * s["stride"] - s["pad"] + s["KW"] > s["W"], fam.name


@pytest.mark.parametrize("shape", conv.CONV2D_NHWC.shapes, ids=lambda s: f"{s['KH']}x{s['KW']}-s{s['stride']}-c{s['C_in']}")
def test_stock_triton_ttir_of_the_implicit_gemm(shape, corpus_checks):
    fam = conv.CONV2D_NHWC
    cfg = fam.group_configs(shape, "fp16")[-1]
    _, launch, feats = corpus_checks.ttir_and_features(fam, shape, "fp16", cfg)
    m, n, k = conv._gemm_dims(shape)
    assert launch.grid[0] * cfg["BLOCK_M"] >= m and launch.grid[1] * cfg["BLOCK_N"] >= n
    steps = shape["KH"] * shape["KW"] * math.ceil(shape["C_in"] / cfg["BLOCK_K"])
    for stage, fv in feats.items():
        v = fv.values
        assert all(math.isfinite(x) for x in v.values()), stage
        # one flat loop over taps x channel chunks, its bound from C_in
        assert v["loops"] == 1 and v["unresolved_loops"] == 0 and v["loop_trip_total"] == steps, stage
        assert v["dot_ops"] == steps and (v["dot_m"], v["dot_n"], v["dot_k"]) == (
            cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"])
        # padded tiles compute at least the convolution's FLOPs
        assert v["total_dot_flops"] >= 2 * m * n * k, stage
        # the output pixel index is unflattened into (image, row, column)
        assert v["int_divrem_elems"] >= 3 * cfg["BLOCK_M"], stage
        # gathered rows, yet each is a run of contiguous channels (C_in and
        # C_out multiples of 16): 16-byte vectors
        assert v["load_vec_bytes"] == v["store_vec_bytes"] == 16, stage


@pytest.mark.parametrize("shape", conv.DEPTHWISE_CONV2D.shapes, ids=lambda s: f"{s['KH']}x{s['KW']}-s{s['stride']}-c{s['C']}")
def test_stock_triton_ttir_of_the_depthwise_taps(shape, corpus_checks):
    fam = conv.DEPTHWISE_CONV2D
    dtype = "fp32"
    _, _, feats = corpus_checks.ttir_and_features(fam, shape, dtype)
    ho, wo = conv._out_hw(shape)
    taps = shape["KH"] * shape["KW"]
    for stage, fv in feats.items():
        v = fv.values
        assert all(math.isfinite(x) for x in v.values()), stage
        assert v["dot_ops"] == 0 and v["reduce_ops"] == 0, stage
        # the kw loop inside the kh loop, both bounds constexpr
        assert v["loop_depth_max"] == 2 and v["unresolved_loops"] == 0, stage
        assert v["loop_trip_total"] == shape["KH"] + taps, stage
        # one input tile and one weight vector per tap, all masked
        assert v["load_ops"] == v["masked_load_ops"] == 2 * taps, stage
        assert v["total_store_bytes"] >= shape["N"] * ho * wo * shape["C"] * ELEM_BYTES[dtype], stage
        # channels last and C a multiple of 16: each pixel's channels load
        # and store as 16-byte vectors
        assert v["load_vec_bytes"] == v["store_vec_bytes"] == 16, stage


@pytest.mark.parametrize("fam", conv.FAMILIES, ids=NAMES)
def test_every_group_has_a_real_choice_of_launch_options(fam, corpus_checks):
    from learned_cost.collect.corpus.matmul import dot_tile_fits

    total = 0
    for shape, dtype, cfgs in corpus_checks.option_groups(fam):
        total += len(cfgs)
        if fam is conv.CONV2D_NHWC:
            m, n, _ = conv._gemm_dims(shape)
            assert all(dot_tile_fits(c, {"M": m, "N": n}, dtype) and conv.conv_tile_fits(c, shape, dtype) for c in cfgs)
            # none of the tiles ptxas spilled: 256 accumulator values per
            # thread, or 128 with fewer than 4 warps
            assert all(c["BLOCK_M"] * c["BLOCK_N"] <= (128 if c["num_warps"] >= 4 else 64) * 32 * c["num_warps"]
                       for c in cfgs)
            assert all(c["BLOCK_K"] <= max(32, shape["C_in"]) for c in cfgs)
            assert len({c["num_stages"] for c in cfgs}) > 1 and len({c["BLOCK_K"] for c in cfgs}) > 1
        else:
            assert {c["num_stages"] for c in cfgs} == {1}
            assert all(conv.dw_tile_fits(c) for c in cfgs)
            # ptxas spilled 64 accumulator values per thread at 16 warps
            assert all(c["BLOCK_HW"] * c["BLOCK_C"] <= 32 * 32 * 16 for c in cfgs if c["num_warps"] == 16)
            assert len({c["BLOCK_C"] for c in cfgs}) > 1 and len({c["BLOCK_HW"] for c in cfgs}) > 1
    groups = len(fam.dtypes) * len(fam.shapes)
    assert 12 <= groups <= 24 and total <= 1000, (fam.name, groups, total)
