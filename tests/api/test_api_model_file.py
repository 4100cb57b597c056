"""A damaged model.txt (digest recomputed, so only its structure can tell)
must give one warning and the analytic model, never end the process:
LightGBM aborts on many such texts, so they are checked before it sees them."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from learned_cost.models.model_file import ModelFileError, check_model_text

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "models" / "h200"


def _shipped_text() -> str:
    return (SHIPPED / "model.txt").read_text()


def test_shipped_model_passes_the_check():
    check_model_text(_shipped_text(), n_inputs=len(json.loads((SHIPPED / "metadata.json").read_text())["model_inputs"]))


@pytest.mark.parametrize("cut", ["truncated_in_tree", "no_end_marker", "tree_array_short", "child_cycle",
                                 "feature_out_of_range", "tree_size_off", "binary"])
def test_damaged_texts_are_refused(cut):
    t = _shipped_text()
    if cut == "truncated_in_tree":
        bad = t[: t.index("Tree=7") + 300]
    elif cut == "no_end_marker":
        bad = t.replace("end of trees", "end of tree", 1)
    elif cut == "tree_array_short":
        i = t.index("leaf_value=", t.index("Tree=3"))
        j = t.index(" ", i)
        bad = t[:i] + "leaf_value=" + t[j + 1:]
    elif cut == "child_cycle":
        i = t.index("left_child=", t.index("Tree=2")) + len("left_child=")
        j = t.index(" ", i)
        bad = t[:i] + "0" + t[j:]  # the root as its own child
    elif cut == "feature_out_of_range":
        i = t.index("split_feature=", t.index("Tree=4")) + len("split_feature=")
        j = t.index(" ", i)
        bad = t[:i] + "4000" + t[j:]
    elif cut == "tree_size_off":
        bad = t.replace("tree_sizes=", "tree_sizes=1", 1)
    else:
        bad = t[:5000] + "\x00\x01" + t[5002:]
    with pytest.raises(ModelFileError):
        check_model_text(bad, n_inputs=99)


def test_wrong_input_count_is_refused():
    with pytest.raises(ModelFileError, match="features"):
        check_model_text(_shipped_text(), n_inputs=98)


_CHILD = textwrap.dedent(
    """
    import hashlib, json, math, random, shutil, sys, tempfile, warnings
    from pathlib import Path
    from learned_cost.api import clear_caches, predict_item
    from learned_cost.hardware import load_profile
    from learned_cost.models import select_model

    src = Path(sys.argv[1])
    text = (src / "model.txt").read_bytes()
    meta = json.loads((src / "metadata.json").read_text())
    rng = random.Random(int(sys.argv[2]))
    n = int(sys.argv[3])
    item = json.loads(sys.argv[4])
    counts = {"learned": 0, "analytic": 0, "warnings": 0, "bad": 0}
    root = Path(tempfile.mkdtemp())
    for k in range(n):
        b = bytearray(text)
        kind = k % 3
        if kind == 0:      # truncated anywhere
            b = b[: rng.randrange(len(b))]
        elif kind == 1:    # bytes flipped to characters a model text is made of
            for _ in range(rng.randint(1, 3)):
                b[rng.randrange(len(b))] = rng.choice(b"0123456789 .-e\\nx=")
        else:              # one line deleted
            lines = bytes(b).split(b"\\n")
            del lines[rng.randrange(len(lines))]
            b = bytearray(b"\\n".join(lines))
        d = root / str(k) / "h200"
        d.mkdir(parents=True)
        (d / "model.txt").write_bytes(bytes(b))
        m = dict(meta, model_sha256=hashlib.sha256(bytes(b)).hexdigest())
        (d / "metadata.json").write_text(json.dumps(m))
        clear_caches()
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            model = select_model(load_profile("h200"), model_dir=root / str(k))
            p = predict_item(dict(item, config=k), model_dir=root / str(k))
        counts[model.name] += 1
        counts["warnings"] += len(rec)
        if model.name == "analytic" and len(rec) != 1:
            counts["bad"] += 1
        if not (p.ok and math.isfinite(p.latency_us) and p.latency_us > 0):
            counts["bad"] += 1
    shutil.rmtree(root)
    print(json.dumps(counts))
    """
)


def test_mutated_models_never_end_the_process():
    """Without the check, about three in four of these mutations abort the
    interpreter inside LightGBM; with it, every one is either refused with one
    warning (analytic model) or loads and predicts a finite latency."""
    from .conftest import fixture_item

    item = fixture_item("add", model=None)
    n = 24
    r = subprocess.run([sys.executable, "-c", _CHILD, str(SHIPPED), "20260514", str(n), json.dumps(item)],
                       capture_output=True, text=True, timeout=300, cwd=REPO,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, f"child ended with {r.returncode}: {r.stderr[-2000:]}"
    counts = json.loads(r.stdout.strip().splitlines()[-1])
    assert counts["bad"] == 0, counts
    assert counts["learned"] + counts["analytic"] == n
    assert counts["analytic"] >= n // 2, counts  # most mutations are damage the check must see


def test_truncated_model_in_process_gives_one_warning(tmp_path):
    from learned_cost.api import clear_caches, predict_item
    from learned_cost.models.learned import sha256_bytes

    from .conftest import fixture_item

    d = tmp_path / "h200"
    d.mkdir()
    raw = (SHIPPED / "model.txt").read_bytes()
    cut = raw[: len(raw) // 2]
    (d / "model.txt").write_bytes(cut)
    meta = json.loads((SHIPPED / "metadata.json").read_text())
    meta["model_sha256"] = sha256_bytes(cut)
    (d / "metadata.json").write_text(json.dumps(meta))
    clear_caches()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        p = predict_item(fixture_item("add", model=None), model_dir=tmp_path)
        p2 = predict_item(fixture_item("add", model=None, config="again"), model_dir=tmp_path)
    assert p.ok and p.model == "analytic" and math.isfinite(p.latency_us)
    assert p2.model == "analytic"
    msgs = [str(w.message) for w in rec]
    assert len(msgs) == 1 and "cut short" in msgs[0], msgs
