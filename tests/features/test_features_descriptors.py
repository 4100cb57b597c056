"""Tensor descriptors (``tl.make_tensor_descriptor``, TMA on Hopper): a
descriptor load reads its whole tile, a descriptor store writes the value
it is given (printed last, after the offsets), both counted per program."""

from __future__ import annotations

import pytest

from learned_cost.features import extract_features


@pytest.mark.parametrize("variant", ("raw", "opt"))
def test_descriptor_tiles_are_read_and_written_whole(ttir_text, fixture_spec, variant):
    spec = fixture_spec["descriptor"]
    bm, bn = spec["constexprs"]["BM"], spec["constexprs"]["BN"]
    tile_bytes = bm * bn * 2  # fp16
    f = extract_features(ttir_text("descriptor", variant), spec["arg_bindings"], grid=tuple(spec["grid"]))
    assert f["load_ops"] == 1 and f["store_ops"] == 1
    assert f["load_bytes"] == tile_bytes
    # the stored value is the tile, not the i32 offset printed first
    assert f["store_bytes"] == tile_bytes and f["store_elems"] == bm * bn
    assert f["block_ptr_ops"] == 2
    # building the descriptors is known, not an unknown op
    assert f["unknown_ops"] == 0
    m, n = 4096, 1024
    assert f["programs"] == (m // bm) * (n // bn)
    assert f["total_load_bytes"] == f["total_store_bytes"] == m * n * 2
