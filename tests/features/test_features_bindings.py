"""Bindings: key forms, aliases, value checks, canonical text."""

from __future__ import annotations

import numpy as np
import pytest

from learned_cost.features import (
    BindingError,
    Bindings,
    canonical_bindings,
    parse_bindings,
)


def test_text_form_with_args_and_program_ids():
    b = parse_bindings("arg3=98432,pid_x=0")
    assert b.args == {3: 98432}
    assert b.pid == (0, None, None)
    assert b.num_programs == (None, None, None)


def test_bare_index_and_whitespace_and_int_like_strings():
    b = parse_bindings(" 3 = 10 , arg0=-4 ;5=+7")
    assert b.args == {3: 10, 0: -4, 5: 7}


@pytest.mark.parametrize(
    "key, axis",
    [
        ("pid_x", 0), ("pidx", 0), ("program_id_x", 0), ("program_idx", 0),
        ("pid_y", 1), ("pidy", 1), ("program_id_y", 1),
        ("pid_z", 2), ("pidz", 2), ("program_idz", 2),
    ],
)
def test_program_id_aliases(key, axis):
    b = parse_bindings({key: 3})
    assert b.pid[axis] == 3
    assert sum(v is not None for v in b.pid) == 1


@pytest.mark.parametrize(
    "key, axis",
    [("num_programs_x", 0), ("num_programsx", 0), ("num_programs_y", 1), ("num_programsy", 1),
     ("num_programs_z", 2), ("num_programsz", 2)],
)
def test_num_programs_aliases(key, axis):
    b = parse_bindings(f"{key}=132")
    assert b.num_programs[axis] == 132


def test_mapping_with_int_keys_and_numpy_values():
    b = parse_bindings({3: np.int64(98432), "arg1": "7", "PID_Y": 2})
    assert b.args == {3: 98432, 1: 7}
    assert b.pid == (None, 2, None)


def test_none_and_empty_and_passthrough():
    assert parse_bindings(None) == Bindings()
    assert parse_bindings("") == Bindings()
    b = parse_bindings("arg1=2")
    assert parse_bindings(b) is b


@pytest.mark.parametrize(
    "value, needle",
    [
        ("arg3", "arg3"),  # no '='
        ("arg3=abc", "abc"),
        ("arg3=1.5", "1.5"),
        ("foo=1", "foo"),
        ("pid_w=1", "pid_w"),
        ({"arg3": True}, "True"),
        ({"arg3": 2.0}, "2.0"),
        ({"arg3": None}, "None"),
        ({True: 1}, "True"),
        ("pid_x=-1", "pid_x"),
        ("num_programs_x=0", "num_programs_x"),
        ("arg1=2,arg1=3", "arg1"),
        ("pid_x=5,num_programs_x=4", "pid_x=5"),
        (42, "int"),
    ],
)
def test_errors_name_the_bad_key_or_value(value, needle):
    with pytest.raises(BindingError) as e:
        parse_bindings(value)
    assert needle in str(e.value)
    assert isinstance(e.value, ValueError)


def test_same_value_twice_is_accepted():
    assert parse_bindings("arg1=2,1=2").args == {1: 2}


def test_canonical_text_is_sorted_and_stable():
    a = canonical_bindings("pid_x=0,arg10=1,arg3=98432,num_programsy=4,arg2=5")
    b = canonical_bindings({"num_programs_y": 4, 2: 5, "program_idx": 0, "arg3": "98432", "10": 1})
    assert a == b == "arg2=5,arg3=98432,arg10=1,pid_x=0,num_programs_y=4"
    assert canonical_bindings(None) == ""


def test_bindings_are_hashable_by_content():
    assert hash(parse_bindings("arg1=2,arg3=4")) == hash(parse_bindings("3=4,1=2"))
