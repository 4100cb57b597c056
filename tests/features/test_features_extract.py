"""extract_features: raw = optimized, dead code, grid sources, estimates, errors."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from learned_cost.features import (
    FEATURE_SCHEMA_VERSION,
    BindingError,
    FeatureError,
    FeatureVector,
    extract_features,
    feature_names,
)
from learned_cost.features.evaluate import UNRESOLVED_LOOP_TRIPS
from learned_cost.features.extract import OPEN_AXIS_WAVES
from learned_cost.ttir import TTIRParseError, parse_ttir

# Features that raw front-end TTIR and optimized TTIR must agree on: all
# memory, matrix and vector work, loops and tiles. Left out: ``calls`` (the
# optimizer inlines helper functions such as tl.zeros / tl.cdiv) and
# ``peak_live_bytes`` (it depends on op order, which the optimizer changes)
# and ``regs_per_thread``, which is derived from it.
RAW_OPT_EXEMPT = {"calls", "peak_live_bytes", "regs_per_thread"}

ALL_FIXTURES = (
    "add", "matmul", "softmax", "layernorm", "row_sum", "col_sum", "cumsum", "call", "while",
    "atomic_add", "embedding", "persistent", "add2d", "if", "misc", "blockptr",
)

# Block pointers: the CUDA ttir stage rewrites tt.make_tensor_ptr / tt.advance
# into explicit address arithmetic and masks, which adds vector work and
# removes block_ptr_ops. Memory traffic, matrix work, loops and the grid must
# still agree.
BLOCK_PTR_COMPARED = (
    "programs", "grid_x", "grid_y", "grid_z", "load_ops", "store_ops", "load_bytes", "store_bytes",
    "load_elems", "store_elems", "load_active_fraction", "store_active_fraction", "load_elem_bytes",
    "store_elem_bytes", "dot_ops", "dot_flops", "loops", "loop_trip_total", "unresolved_loops",
    "total_load_bytes", "total_store_bytes", "max_tensor_elems",
)


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_raw_and_optimized_ttir_give_the_same_features(ttir_text, fixture_spec, name):
    spec = fixture_spec[name]
    bindings = spec["arg_bindings"]
    for grid in (spec["grid"], None):  # given, and inferred from masks
        raw = extract_features(ttir_text(name, "raw"), bindings, grid=grid)
        opt = extract_features(ttir_text(name, "opt"), bindings, grid=grid)
        keys = BLOCK_PTR_COMPARED if name == "blockptr" else feature_names()
        for key in keys:
            if key in RAW_OPT_EXEMPT:
                continue
            assert raw[key] == pytest.approx(opt[key], rel=1e-9, abs=1e-9), (key, grid)
        assert raw.grid == opt.grid and raw.grid_source == opt.grid_source


def test_block_pointer_boundary_check_is_a_mask(ttir_text, fixture_spec):
    # M=4096 rows in blocks of 64: grid 64 inferred from the boundary check;
    # N=1024 columns in blocks of 64: 16 loads of 64x64 fp16 per program
    f = extract_features(ttir_text("blockptr", "raw"), fixture_spec["blockptr"]["arg_bindings"])
    assert f.grid == (64, 1, 1) and f.grid_source == "inferred"
    assert f["block_ptr_ops"] == 17 and f["masked_load_ops"] == 16
    assert f["load_bytes"] == 16 * 64 * 64 * 2 and f["store_bytes"] == 64 * 64 * 4


@pytest.mark.parametrize("name", ("add", "matmul", "softmax"))
@pytest.mark.parametrize("variant", ("raw_plain", "opt_debug", "ascend", "ascend_opt"))
def test_printing_and_target_variants_give_the_same_features(ttir_text, fixture_spec, name, variant):
    # generic %argN vs source names, loc() annotations, triton-ascend output
    spec = fixture_spec[name]
    if variant not in spec["files"]:
        pytest.skip(f"no {variant} fixture for {name}")
    got = extract_features(ttir_text(name, variant), spec["arg_bindings"], grid=spec["grid"])
    want = extract_features(ttir_text(name, "opt"), spec["arg_bindings"], grid=spec["grid"])
    for key in feature_names():
        if key not in RAW_OPT_EXEMPT:
            assert got[key] == pytest.approx(want[key], rel=1e-9, abs=1e-9), key


def test_feature_vector_contract(ttir_text):
    f = extract_features(ttir_text("add"), "arg3=98432")
    assert isinstance(f, FeatureVector)
    assert FEATURE_SCHEMA_VERSION == 4
    assert list(f.to_dict()) == feature_names()
    arr = f.to_array()
    assert arr.shape == (len(feature_names()),) and all(math.isfinite(x) for x in arr)
    # a parsed module is accepted as well as text
    g = extract_features(parse_ttir(ttir_text("add")), {"arg3": 98432})
    assert g.to_dict() == f.to_dict()


_DEAD = """
    %dead_0 = math.exp %x_4 : tensor<1024xf32>
    %dead_1 = arith.mulf %dead_0, %y_6 : tensor<1024xf32>
    %dead_2 = tt.load %x_3, %mask_2 : tensor<1024x!tt.ptr<f32>>
    %dead_3 = scf.for %i = %c0 to %n_elements step %c1 iter_args(%acc = %dead_1) -> (tensor<1024xf32>)  : i32 {
      %e = math.exp %acc : tensor<1024xf32>
      scf.yield %e : tensor<1024xf32>
    }
"""


def _add_with_dead_code(text: str) -> str:
    # insert unused work right before the store of the optimized add kernel
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "tt.store" in line)
    consts = "    %c0 = arith.constant 0 : i32\n    %c1 = arith.constant 1 : i32"
    return "\n".join(lines[:at] + [consts, _DEAD.rstrip("\n")] + lines[at:])


def test_dead_code_counts_for_nothing(ttir_text):
    text = ttir_text("add", "opt")
    dirty = _add_with_dead_code(text)
    # the optimized fixture uses numeric names; rename the dead code's inputs
    clean = extract_features(text, "arg3=98432")
    names = {"%x_4": "%9", "%y_6": "%12", "%x_3": "%8", "%mask_2": "%6", "%n_elements": "%arg3"}
    for a, b in names.items():
        dirty = dirty.replace(a, b)
    assert "math.exp" in dirty and dirty.count("tt.load") == 3
    got = extract_features(dirty, "arg3=98432")
    assert got.to_dict() == clean.to_dict()


def test_dead_code_fixture_names_exist(ttir_text):
    # guard for the test above: the names it borrows are the add fixture's
    text = ttir_text("add", "opt")
    for name in ("%9 = tt.load", "%12 = tt.load", "%8 = tt.addptr", "%6 = arith.cmpi"):
        assert name in text


def test_unresolved_loop_is_flagged_not_raised(ttir_text):
    # matmul without K bound: the K loop trip count is unknown
    f = extract_features(ttir_text("matmul"), "arg3=4096,arg4=4096")
    assert f["unresolved_loops"] == 1
    assert f["loop_trip_total"] == UNRESOLVED_LOOP_TRIPS
    assert f["dot_ops"] == UNRESOLVED_LOOP_TRIPS
    assert any("scf.for" in w for w in f.warnings)


@pytest.mark.parametrize("variant", ("raw", "opt"))
def test_while_loop_is_bounded_and_flagged(ttir_text, variant):
    # while (max|x| > 1) & (i < max_iter): i += 1 -> at most max_iter = 8
    # trips; the data-dependent half keeps it flagged
    f = extract_features(ttir_text("while", variant), "arg2=98432,arg3=8")
    assert f["unresolved_loops"] == 1 and f["loops"] == 1
    assert any("scf.while" in w and "at most 8" in w for w in f.warnings)
    assert f["loop_trip_total"] == 8
    assert f["reduce_ops"] == 8 + 1  # the condition region runs once more
    assert f["ew_mul_elems"] == 8 * 1024 + 1  # x * 0.5 per trip; pid * BLOCK
    # without max_iter nothing bounds it: the documented estimate
    g = extract_features(ttir_text("while", variant), "arg2=98432")
    assert g["unresolved_loops"] == 1 and g["loop_trip_total"] == UNRESOLVED_LOOP_TRIPS
    assert g["reduce_ops"] == UNRESOLVED_LOOP_TRIPS + 1


def test_grid_sources(ttir_text):
    text = ttir_text("add")
    item = extract_features(text, "arg3=98432,num_programs_x=5", grid=[7])
    assert item.grid == (7, 1, 1) and item.grid_source == "item" and item["grid_source"] == 0
    assert extract_features(text, "arg3=98432", grid=7).grid == (7, 1, 1)
    bound = extract_features(text, "arg3=98432,num_programs_x=5")
    assert bound.grid == (5, 1, 1) and bound.grid_source == "bindings" and bound["grid_source"] == 1
    inferred = extract_features(text, "arg3=98432,pid_x=0")
    assert inferred.grid == (97, 1, 1) and inferred["grid_source"] == 2
    # n_elements unknown: nothing bounds the program ids, a few full waves are assumed
    default = extract_features(text, None, cores=10)
    assert default.grid == (OPEN_AXIS_WAVES * 10, 1, 1) and default.grid_source == "default"
    assert default["grid_source"] == 3 and default["programs"] == OPEN_AXIS_WAVES * 10
    assert any("not inferable" in w and "assumed" in w for w in default.warnings)
    row = extract_features(ttir_text("row_sum"), "arg2=1000,arg3=1000")  # one row per program: no mask on pid
    assert row.grid_source == "default" and row.grid == (OPEN_AXIS_WAVES, 1, 1)


def test_pid_binding_does_not_narrow_the_mask_average(ttir_text):
    a = extract_features(ttir_text("add"), "arg3=98432,pid_x=0")
    b = extract_features(ttir_text("add"), "arg3=98432,pid_x=96")
    assert a.to_dict() == b.to_dict()


def test_options_and_waves(ttir_text):
    f = extract_features(ttir_text("add"), "arg3=98432", options={"num_warps": 8, "num_stages": 2, "multibuffer": True}, cores=40)
    assert (f["num_warps"], f["num_stages"], f["multibuffer"]) == (8, 2, 1)
    assert f["cores"] == 40 and f["waves"] == math.ceil(97 / 40)
    d = extract_features(ttir_text("add"), "arg3=98432")
    assert (d["num_warps"], d["num_stages"], d["multibuffer"], d["waves"]) == (4, 3, 0, 97)


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"grid": -1}, "grid[0]"),
        ({"grid": [4, 0]}, "grid[1]"),
        ({"grid": [1, 2, 3, 4]}, "dimensions"),
        ({"grid": "97"}, "grid"),
        ({"grid": [True]}, "grid[0]"),
        ({"cores": 0}, "cores"),
        ({"options": {"num_warps": -2}}, "num_warps"),
        ({"options": {"num_stages": "many"}}, "num_stages"),
        ({"options": ["num_warps"]}, "options"),
    ],
)
def test_bad_arguments_raise_feature_error(ttir_text, kwargs, needle):
    with pytest.raises(FeatureError) as e:
        extract_features(ttir_text("add"), "arg3=98432", **kwargs)
    assert needle in str(e.value)


def test_bad_inputs_raise_only_the_documented_errors(ttir_text):
    with pytest.raises(FeatureError):
        extract_features(12345)
    with pytest.raises(TTIRParseError):
        extract_features("module { tt.func @f( {")
    with pytest.raises(BindingError):
        extract_features(ttir_text("add"), "arg3=lots")


def test_binding_beyond_the_arguments_warns(ttir_text):
    f = extract_features(ttir_text("add"), "arg3=98432,arg9=1")
    assert any("arg9" in w for w in f.warnings)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_fixtures_never_raise_anything_else(ttir_text, data):
    name = data.draw(st.sampled_from(ALL_FIXTURES))
    lines = ttir_text(name, data.draw(st.sampled_from(("raw", "opt")))).splitlines()
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(lines) - 1))
        action = data.draw(st.sampled_from(("drop", "dup", "swap", "cut")))
        if action == "drop":
            del lines[i]
        elif action == "dup":
            lines.insert(i, lines[i])
        elif action == "swap" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif action == "cut":
            lines[i] = lines[i][: data.draw(st.integers(0, len(lines[i])))]
        if not lines:
            break
    try:
        f = extract_features("\n".join(lines), "arg2=1000,arg3=98432,arg4=1000")
    except (TTIRParseError, BindingError, FeatureError):
        return
    assert all(math.isfinite(x) for x in f.to_array())
