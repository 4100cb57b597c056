"""Structural check of a LightGBM text model before LightGBM reads it.

LightGBM parses its trees in native code and, for some malformed texts (a
truncated tree, a flipped byte inside an array), ends the whole process
(``[LightGBM] [Fatal] Model format error`` followed by an abort) instead of
raising. A library must not take its host down, so
``learned_cost.models.learned.LearnedModel.load`` passes every model text
through :func:`check_model_text` first; a text that fails raises
:class:`ModelFileError` (a ``ValueError``) naming the first problem, and the
caller falls back to the analytic model.

The check accepts exactly the layout LightGBM 4 writes for a numeric
(non-categorical, non-linear) tree model and nothing looser:

* a header of ``key=value`` lines (known keys only) with consistent counts:
  ``feature_names`` and ``feature_infos`` hold ``max_feature_idx + 1``
  entries, ``tree_sizes`` one byte count per tree;
* the trees, each exactly ``tree_sizes[i]`` bytes starting ``Tree=i``
  (LightGBM seeks by those sizes), with every array of the length
  ``num_leaves`` implies, numbers that parse, split features inside the
  feature range, decision types LightGBM defines, and child indices that
  form one tree (every node and leaf reached exactly once, so prediction
  cannot loop or index out of bounds);
* the ``end of trees`` marker, then the feature importances, the
  ``parameters:`` ... ``end of parameters`` block and the
  ``pandas_categorical`` line, each line in its own fixed form.

Cost: one pass over the text with a few regular-expression matches per
line; about 0.1 s for the shipped 2.9 MB model.
"""

from __future__ import annotations

import json
import re

MAX_MODEL_BYTES = 512 * 1024 * 1024
"""Largest model text accepted (bytes); the shipped model is about 3 MB."""

MAX_TREES = 1_000_000
MAX_LEAVES = 1 << 17
MAX_FEATURES = 1_000_000

_INT = r"-?\d{1,10}"
_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,3})?|[-+]?inf|nan"
_INT_RE = re.compile(_INT)
_NUM_RE = re.compile(_NUM)
# whole space-separated arrays in one match (one regex call per line, not per value)
_INTS_RE = re.compile(rf"(?:{_INT})(?: (?:{_INT}))*")
_NUMS_RE = re.compile(rf"(?:{_NUM})(?: (?:{_NUM}))*")
_NAME_RE = re.compile(r"[!-~]+")  # printable ASCII, no space
_INFO_RE = re.compile(rf"none|\[(?:{_NUM}):(?:{_NUM})\]|{_INT}(?::{_INT})*")
_OBJECTIVES = frozenset({
    "regression", "regression_l1", "huber", "fair", "poisson", "quantile", "mape", "gamma", "tweedie",
    "binary", "multiclass", "multiclassova", "cross_entropy", "cross_entropy_lambda", "lambdarank",
    "rank_xendcg", "custom",
})
_OBJECTIVE_ARG_RE = re.compile(rf"[a-z_]+(?::(?:{_NUM}))?")
_HEADER_REQUIRED = ("version", "num_class", "num_tree_per_iteration", "label_index", "max_feature_idx",
                    "objective", "feature_names", "feature_infos", "tree_sizes")
_HEADER_OPTIONAL = ("monotone_constraints", "average_output")
_TREE_SPLIT_ARRAYS = (("split_feature", "int"), ("split_gain", "num"), ("threshold", "num"),
                      ("decision_type", "int"), ("left_child", "int"), ("right_child", "int"),
                      ("internal_value", "num"), ("internal_weight", "num"), ("internal_count", "int"))
_TREE_LEAF_ARRAYS = (("leaf_value", "num"), ("leaf_weight", "num"), ("leaf_count", "int"))
_TREE_KEYS = ("num_leaves", "num_cat") + tuple(k for k, _ in _TREE_SPLIT_ARRAYS + _TREE_LEAF_ARRAYS) + (
    "is_linear", "shrinkage")
# decision_type bits: 1 categorical (refused: num_cat must be 0), 2 default
# left, 4/8 missing type (0 none, 1 zero, 2 NaN; 3 undefined).
_DECISION_TYPES = frozenset({0, 2, 4, 6, 8, 10})
_IMPORTANCE_RE = re.compile(r"[!-~]+=\d{1,12}")
_PARAM_RE = re.compile(r"\[[a-z0-9_]+: [ -\\^-~]*\]")  # printable, no ']' inside


class ModelFileError(ValueError):
    """A model text LightGBM must not be given; the message names the problem."""


def check_model_text(text: str, n_inputs: int | None = None) -> None:
    """Raise ``ModelFileError`` unless ``text`` is a well-formed LightGBM
    numeric tree model (see the module docstring). ``n_inputs``, when given,
    must equal the model's feature count."""
    if not isinstance(text, str):
        raise ModelFileError(f"model text must be str, got {type(text).__name__}")
    if len(text) > MAX_MODEL_BYTES:
        raise ModelFileError(f"model text has {len(text)} characters, more than {MAX_MODEL_BYTES}")
    if not text.isascii():
        raise ModelFileError("model text holds non-ASCII characters")
    bad = re.search(r"[\x00-\x09\x0b-\x1f\x7f]", text)
    if bad is not None:
        raise ModelFileError(f"model text holds control character {bad.group()!r} at offset {bad.start()}")
    header_end = text.find("\n\n")
    if not text.startswith("tree\n") or header_end < 0:
        raise ModelFileError("model text does not start with a LightGBM 'tree' header")
    header = _header(text[5:header_end])
    n_features = header["max_feature_idx"] + 1
    if n_inputs is not None and n_features != n_inputs:
        raise ModelFileError(f"model has {n_features} features, expected {n_inputs}")
    # LightGBM starts the trees right after the blank line(s) ending the header.
    pos = header_end + 1
    while text.startswith("\n", pos):
        pos += 1
    sizes = header["tree_sizes"]
    for i, size in enumerate(sizes):
        block = text[pos:pos + size]
        if len(block) != size:
            raise ModelFileError(f"tree {i} is cut short: {len(block)} of {size} bytes present (truncated file?)")
        _tree(block, i, n_features)
        pos += size
    _tail(text[pos:], len(sizes))


def _header(text: str) -> dict:
    out: dict = {}
    for line in text.split("\n"):
        if line == "average_output":
            out[line] = True
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ModelFileError(f"header line {line[:40]!r} is not key=value")
        if key not in _HEADER_REQUIRED and key not in _HEADER_OPTIONAL:
            raise ModelFileError(f"unknown header key {key[:40]!r}")
        if key in out:
            raise ModelFileError(f"header key {key!r} appears twice")
        out[key] = value
    missing = [k for k in _HEADER_REQUIRED if k not in out]
    if missing:
        raise ModelFileError(f"header lacks {missing}")
    if out["version"] not in ("v2", "v3", "v4"):
        raise ModelFileError(f"unknown model version {out['version'][:20]!r}")
    for key, lo, hi in (("num_class", 1, 10_000), ("num_tree_per_iteration", 1, 10_000),
                        ("label_index", 0, MAX_FEATURES), ("max_feature_idx", 0, MAX_FEATURES - 1)):
        out[key] = _bounded_int(out[key], lo, hi, f"header {key}")
    words = out["objective"].split(" ")
    if words[0] not in _OBJECTIVES or not all(_OBJECTIVE_ARG_RE.fullmatch(w) for w in words[1:]):
        raise ModelFileError(f"unknown objective {out['objective'][:60]!r}")
    n = out["max_feature_idx"] + 1
    names = out["feature_names"].split(" ")
    if len(names) != n or not all(_NAME_RE.fullmatch(x) for x in names):
        raise ModelFileError(f"feature_names must be {n} names separated by single spaces")
    infos = out["feature_infos"].split(" ")
    if len(infos) != n or not all(_INFO_RE.fullmatch(x) for x in infos):
        raise ModelFileError(f"feature_infos must be {n} entries such as [0:1] or none")
    if "monotone_constraints" in out:
        mc = out["monotone_constraints"].split(" ")
        if len(mc) != n or not all(x in ("-1", "0", "1") for x in mc):
            raise ModelFileError(f"monotone_constraints must be {n} values of -1, 0 or 1")
    sizes = out["tree_sizes"].split(" ") if out["tree_sizes"] else []
    if not 1 <= len(sizes) <= MAX_TREES:
        raise ModelFileError(f"tree_sizes lists {len(sizes)} trees")
    out["tree_sizes"] = [_bounded_int(s, 1, MAX_MODEL_BYTES, "tree size") for s in sizes]
    if len(sizes) % out["num_tree_per_iteration"]:
        raise ModelFileError(
            f"{len(sizes)} trees is not a multiple of num_tree_per_iteration {out['num_tree_per_iteration']}")
    return out


def _bounded_int(s: str, lo: int, hi: int, what: str) -> int:
    if not _INT_RE.fullmatch(s):
        raise ModelFileError(f"{what} {s[:30]!r} is not an integer")
    v = int(s)
    if not lo <= v <= hi:
        raise ModelFileError(f"{what} {v} is outside {lo}..{hi}")
    return v


def _tree(block: str, index: int, n_features: int) -> None:
    where = f"tree {index}"
    head = f"Tree={index}\n"
    if not block.startswith(head) or not block.endswith("\n\n\n"):
        raise ModelFileError(f"{where} does not start with {head.strip()!r} and end with blank lines")
    fields: dict[str, str] = {}
    for line in block[len(head):-3].split("\n"):
        key, sep, value = line.partition("=")
        if not sep or key not in _TREE_KEYS:
            raise ModelFileError(f"{where}: unexpected line {line[:40]!r}")
        if key in fields:
            raise ModelFileError(f"{where}: {key} appears twice")
        fields[key] = value
    missing = [k for k in _TREE_KEYS if k not in fields]
    if missing:
        raise ModelFileError(f"{where} lacks {missing}")
    leaves = _bounded_int(fields["num_leaves"], 1, MAX_LEAVES, f"{where} num_leaves")
    if fields["num_cat"] != "0":
        raise ModelFileError(f"{where}: categorical splits (num_cat={fields['num_cat'][:10]}) are not supported")
    if fields["is_linear"] != "0":
        raise ModelFileError(f"{where}: linear trees are not supported")
    if not _NUM_RE.fullmatch(fields["shrinkage"]):
        raise ModelFileError(f"{where}: shrinkage {fields['shrinkage'][:30]!r} is not a number")
    arrays: dict[str, list[str]] = {}
    for key, kind in _TREE_SPLIT_ARRAYS + _TREE_LEAF_ARRAYS:
        value = fields[key]
        items = value.split(" ") if value else []
        want = leaves - 1 if (key, kind) in _TREE_SPLIT_ARRAYS else leaves
        # a one-leaf tree prints leaf_weight (and may print leaf_count) empty
        ok_len = len(items) == want or (leaves == 1 and key in ("leaf_weight", "leaf_count") and not items)
        if not ok_len:
            raise ModelFileError(f"{where}: {key} has {len(items)} values, num_leaves={leaves} needs {want}")
        if items and not (_INTS_RE if kind == "int" else _NUMS_RE).fullmatch(value):
            what = "integers" if kind == "int" else "numbers"
            raise ModelFileError(f"{where}: {key} is not a list of {what} separated by single spaces")
        arrays[key] = items
    if leaves == 1:
        return
    for x in arrays["split_feature"]:
        if not 0 <= int(x) < n_features:
            raise ModelFileError(f"{where}: split feature {x} outside 0..{n_features - 1}")
    for x in arrays["decision_type"]:
        if int(x) not in _DECISION_TYPES:
            raise ModelFileError(f"{where}: decision type {x} is not one LightGBM defines for numeric splits")
    # Children: >= 0 an internal node, < 0 leaf ~child. One tree = every
    # internal node but the root and every leaf referenced exactly once.
    seen_nodes = [False] * (leaves - 1)
    seen_leaves = [False] * leaves
    for x in arrays["left_child"] + arrays["right_child"]:
        c = int(x)
        if c >= 0:
            if c == 0 or c >= leaves - 1 or seen_nodes[c]:
                raise ModelFileError(f"{where}: child index {c} is out of range or used twice")
            seen_nodes[c] = True
        else:
            leaf = ~c
            if leaf >= leaves or seen_leaves[leaf]:
                raise ModelFileError(f"{where}: leaf index {leaf} is out of range or used twice")
            seen_leaves[leaf] = True
    # n-1 nodes have 2(n-1) child slots, filled by n-2 nodes and n leaves
    # exactly once each: the links form one tree (acyclic, all reachable)
    # only if, following them from the root, every node is visited.
    left = [int(x) for x in arrays["left_child"]]
    right = [int(x) for x in arrays["right_child"]]
    stack, visited = [0], 0
    while stack:
        node = stack.pop()
        visited += 1
        if visited > leaves - 1:
            raise ModelFileError(f"{where}: child links form a cycle")
        for c in (left[node], right[node]):
            if c >= 0:
                stack.append(c)
    if visited != leaves - 1:
        raise ModelFileError(f"{where}: {leaves - 1 - visited} internal nodes are unreachable from the root")


def _tail(text: str, n_trees: int) -> None:
    if not text.startswith("end of trees\n"):
        raise ModelFileError(f"no 'end of trees' marker after the {n_trees} trees (truncated or resized tree?)")
    lines = text[len("end of trees\n"):].split("\n")
    i = 0

    def skip_blank() -> None:
        nonlocal i
        while i < len(lines) and lines[i] == "":
            i += 1

    skip_blank()
    if i < len(lines) and lines[i] == "feature_importances:":
        i += 1
        while i < len(lines) and lines[i] != "":
            if not _IMPORTANCE_RE.fullmatch(lines[i]):
                raise ModelFileError(f"feature importance line {lines[i][:40]!r} is not name=count")
            i += 1
        skip_blank()
    if i >= len(lines) or lines[i] != "parameters:":
        raise ModelFileError("no 'parameters:' block after the trees (truncated file?)")
    i += 1
    while i < len(lines) and lines[i] != "end of parameters":
        if lines[i] and not _PARAM_RE.fullmatch(lines[i]):  # LightGBM ends the block with a blank line
            raise ModelFileError(f"parameter line {lines[i][:40]!r} is not [name: value]")
        i += 1
    if i >= len(lines):
        raise ModelFileError("no 'end of parameters' marker (truncated file?)")
    i += 1
    skip_blank()
    if i >= len(lines) or not lines[i].startswith("pandas_categorical:"):
        raise ModelFileError("no 'pandas_categorical:' line at the end (truncated file?)")
    value = lines[i][len("pandas_categorical:"):]
    if value != "null":
        try:
            ok = isinstance(json.loads(value), list)
        except ValueError:
            ok = False
        if not ok:
            raise ModelFileError(f"pandas_categorical {value[:40]!r} is neither null nor a JSON list")
    i += 1
    skip_blank()
    if i != len(lines):
        raise ModelFileError(f"unexpected text after the pandas_categorical line: {lines[i][:40]!r}")
