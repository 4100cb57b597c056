"""Fuzz ``costmodel_bench`` with mutated fixture TTIR and bad item values.

Each input is one call: a single item (most), or a list of items. Items are
built from the TTIR fixtures, mutated (lines deleted, duplicated or swapped;
tokens deleted; bytes flipped; numbers made huge, zero or negative; shapes
broken; regions and types nested; the text cut short; non-strings) and given
bad bindings, grids, options, hardware, model or config values, or replaced
by non-dict values.

Prints the counts the library's contract is judged by:

* ``exceptions``: calls that raised (the contract: never);
* ``bad_results``: results that are not ``(config, float)`` (or, for a
  list, not a dict of floats);
* ``nan_or_negative``: NaN, negative or zero latencies;
* ``finite_on_invalid``: a finite latency for an input that is certainly
  invalid (no kernel, cut-off text, bad grid/options/hardware/model, ...);
* ``wrong_warnings``: an ``inf`` answer without exactly one RuntimeWarning;
* ``slow_calls``: calls on inputs under 100 KB that took over 100 ms, and
  ``slow_calls_without_gc``: those of them that are still over 100 ms once
  the garbage collections run during the call are taken out;
* ``p99_ms`` and ``max_ms``: call times; ``gc_pauses_over_100ms`` and
  ``gc_max_ms``: garbage collections of the interpreter during the run.

Usage: python scripts/fuzz_api.py --n 100000 --seed 1 [--json]
Exit status 1 when any of the first five counts is not zero.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import random
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "ttir"
SMALL_INPUT = 100_000  # characters; larger inputs are allowed to be slow
SLOW_MS = 100.0


def _fixtures() -> list[tuple[str, str, dict]]:
    spec = json.loads((FIXTURES / "fixtures.json").read_text())
    out = []
    for name, s in sorted(spec.items()):
        for form, fname in sorted(s.get("files", {}).items()):
            p = FIXTURES / fname
            if p.is_file():
                out.append((f"{name}.{form}", p.read_text(), s))
    return out


_NUMBERS = ("0", "-1", "-4096", "1048576", "2147483647", "4294967296", "99999999999999999999", "1e308", "nan")


def _mutate_text(rng: random.Random, text: str) -> tuple[str, bool]:
    """A mutated text and whether it is certainly invalid."""
    lines = text.split("\n")
    kind = rng.randrange(12)
    if kind == 0 and len(lines) > 2:  # delete lines
        for _ in range(rng.randint(1, 3)):
            if len(lines) > 1:
                del lines[rng.randrange(len(lines))]
        return "\n".join(lines), False
    if kind == 1:  # duplicate a line
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
        return "\n".join(lines), False
    if kind == 2 and len(lines) > 2:  # swap two lines
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines), False
    if kind == 3:  # delete a token
        i = rng.randrange(len(lines))
        toks = lines[i].split(" ")
        if len(toks) > 1:
            del toks[rng.randrange(len(toks))]
        lines[i] = " ".join(toks)
        return "\n".join(lines), False
    if kind == 4:  # flip bytes
        b = bytearray(text.encode())
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return b.decode("utf-8", "replace"), False
    if kind == 5:  # numbers made huge, zero or negative
        words = text.split(" ")
        idx = [k for k, w in enumerate(words) if w.rstrip(",:").lstrip("-").isdigit()]
        for k in rng.sample(idx, min(len(idx), rng.randint(1, 3))):
            words[k] = rng.choice(_NUMBERS) + ("," if words[k].endswith(",") else "")
        return " ".join(words), False
    if kind == 6:  # shapes broken
        return text.replace(rng.choice(["x", "<", ">", "tensor<"]), rng.choice(["", "xx", "<<", ">>", "x0x", "x-1x"]),
                            rng.randint(1, 3)), False
    if kind == 7:  # a type nested deeply (sometimes very deeply)
        n = rng.choice([3, 30, 40, 300, 3000]) if rng.random() < 0.97 else rng.choice([30_000, 100_000])
        return text.replace("f32>", "tensor<1x" * n + "f32" + ">" * n + ">", 1), n > 32 and "f32>" in text
    if kind == 8:  # cut short before the last closing brace
        last = text.rfind("}")
        if last > 0:
            return text[: rng.randrange(last)], True
        return text, False
    if kind == 9:  # extra region opener or closer
        i = rng.randrange(len(lines))
        lines[i] = lines[i] + rng.choice([" {", " }", "{ {", ")"])
        return "\n".join(lines), False
    if kind == 10:  # no kernel at all
        return rng.choice(["module {\n}", "// x", "foo.bar", "#loc = loc(unknown)\n", "{", "}", "%0 = arith.addi"]), True
    return text, False


def _bad_value(rng: random.Random) -> object:
    return rng.choice([None, -1, 0, 2**70, 1.5, math.nan, math.inf, "", "x", b"\xff", [], [1, 2, 3, 4], {}, {"a": object()},
                       (0,), object(), True, "arg99=-5", {"arg3": -1}, {"arg3": 10**30}, "arg3=", "=", "arg3=1,arg3=2"])


def make_input(rng: random.Random, fixtures) -> tuple[object, bool, int]:
    """(input, certainly invalid, size in characters)."""
    if rng.random() < 0.05:
        items, sizes = [], 0
        for _ in range(rng.randint(0, 6)):
            it, _, n = make_input(rng, fixtures)
            if isinstance(it, list):
                continue
            items.append(it)
            sizes += n
        return items, False, sizes
    r = rng.random()
    if r < 0.02:
        return _bad_value(rng), True, 0
    name, text, spec = rng.choice(fixtures)
    item: dict = {"config": f"c{rng.randrange(10**6)}", "ttir": text}
    if spec.get("arg_bindings"):
        item["arg_bindings"] = spec["arg_bindings"]
    if spec.get("grid"):
        item["grid"] = spec["grid"]
    invalid = False
    if rng.random() < 0.6:
        item["ttir"], invalid = _mutate_text(rng, text)
    which = rng.random()
    if which < 0.04:
        item["ttir"] = _bad_value(rng)
        invalid = True  # none of the bad values is a text holding a kernel
    elif which < 0.08:
        item["arg_bindings"] = _bad_value(rng)
    elif which < 0.12:
        item["grid"] = rng.choice([0, -3, [0], [1, 2, 3, 4], "x", 1.5, [True]])
        invalid = True
    elif which < 0.16:
        item["options"] = rng.choice([{"num_warps": 3}, {"num_warps": 0}, {"num_warps": 10**6}, {"num_stages": 10**9},
                                      {"num_warps": math.nan}, [1], "x", {1: 2}])
        invalid = True
    elif which < 0.18:
        item["options"] = rng.choice([{"num_warps": 8}, {"num_stages": 4}, {"num_warps": 2, "num_stages": 1}])
    elif which < 0.21:
        item["hardware"] = rng.choice(["nosuchgpu", "/nonexistent/p.json", "", 5, "/dev/null", ["h200"]])
        invalid = True
    elif which < 0.23:
        item["hardware"] = rng.choice(["h200", "ascend_910b", "ascend_950", "NVIDIA H200"])
    elif which < 0.25:
        item["target_arch"] = rng.choice(["Ascend910B3", "Ascend910_9362", "david", "nosuch", 7])
        invalid = item["target_arch"] in ("nosuch", 7)
    elif which < 0.27:
        item["model"] = rng.choice(["nosuch", 1, "Learned"])
        invalid = True
    elif which < 0.28:
        item["model"] = "analytic"
    elif which < 0.30:
        item["config"] = rng.choice([None, [1], {"a": 1}])
        invalid = True
    elif which < 0.31:
        del item["config"]
        invalid = True
    if isinstance(item.get("ttir"), str) and not item["ttir"].strip():
        invalid = True
    size = len(item["ttir"]) if isinstance(item.get("ttir"), (str, bytes)) else 0
    return item, invalid, size


def run_fuzz(n: int, seed: int, progress: bool = False) -> dict:
    """Run ``n`` inputs; return the counts described in the module docstring."""
    from learned_cost import costmodel_bench

    rng = random.Random(seed)
    fixtures = _fixtures()
    counts = {"inputs": n, "exceptions": 0, "bad_results": 0, "nan_or_negative": 0, "finite_on_invalid": 0,
              "wrong_warnings": 0, "slow_calls": 0, "slow_calls_without_gc": 0, "invalid_inputs": 0,
              "finite_results": 0}
    times: list[float] = []
    examples: dict[str, str] = {}
    gc_times: list[float] = []
    gc_start = [0.0]

    def on_gc(phase, info):
        if phase == "start":
            gc_start[0] = time.perf_counter()
        else:
            gc_times.append(time.perf_counter() - gc_start[0])

    def note(kind: str, what: object) -> None:
        counts[kind] += 1
        examples.setdefault(kind, repr(what)[:300])

    # warm up: imports and loading the trained model are a one-time cost of
    # the process, not of any input
    for _, text, spec in fixtures[:3]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            costmodel_bench({"config": "warm-up", "ttir": text, "arg_bindings": spec.get("arg_bindings")})
    gc.collect()
    gc.callbacks.append(on_gc)
    try:
        for k in range(n):
            inp, invalid, size = make_input(rng, fixtures)
            counts["invalid_inputs"] += invalid
            with warnings.catch_warnings(record=True) as rec:
                warnings.simplefilter("always")
                n_gc = len(gc_times)
                t0 = time.perf_counter()
                try:
                    out = costmodel_bench(inp)
                except BaseException as e:  # noqa: BLE001 - counted, the run goes on
                    dt = time.perf_counter() - t0
                    note("exceptions", f"{type(e).__name__}: {e} for {inp!r}"[:300])
                    times.append(dt)
                    continue
                dt = time.perf_counter() - t0
            times.append(dt)
            if dt * 1e3 > SLOW_MS and size < SMALL_INPUT:
                in_gc = sum(gc_times[n_gc:])
                note("slow_calls", f"{dt * 1e3:.0f} ms ({in_gc * 1e3:.0f} ms collecting garbage), {size} chars")
                if (dt - in_gc) * 1e3 > SLOW_MS:
                    note("slow_calls_without_gc", f"{(dt - in_gc) * 1e3:.0f} ms, {size} chars: {inp!r}"[:300])
            errors = [w for w in rec if w.category is RuntimeWarning]
            if isinstance(inp, (list, tuple)):  # a tuple is a list of items too
                if not isinstance(out, dict) or not all(isinstance(v, float) for v in out.values()):
                    note("bad_results", out)
                    continue
                values = list(out.values())
            else:
                if not (isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], float)):
                    note("bad_results", out)
                    continue
                values = [out[1]]
                if out[1] == math.inf and len(errors) != 1:
                    note("wrong_warnings", f"{len(errors)} warnings for {inp!r}"[:300])
                if invalid and math.isfinite(out[1]):
                    note("finite_on_invalid", inp)
            for v in values:
                if math.isnan(v) or v <= 0:
                    note("nan_or_negative", inp)
                elif math.isfinite(v):
                    counts["finite_results"] += 1
            if progress and (k + 1) % 5000 == 0:
                print(f"  {k + 1} inputs", file=sys.stderr, flush=True)
    finally:
        gc.callbacks.remove(on_gc)
    times.sort()
    counts["p99_ms"] = round(times[int(0.99 * (len(times) - 1))] * 1e3, 2) if times else 0.0
    counts["max_ms"] = round(times[-1] * 1e3, 2) if times else 0.0
    counts["gc_pauses_over_100ms"] = sum(t > 0.1 for t in gc_times)
    counts["gc_max_ms"] = round(max(gc_times, default=0.0) * 1e3, 2)
    counts["examples"] = examples
    return counts


FAILURE_COUNTS = ("exceptions", "bad_results", "nan_or_negative", "finite_on_invalid", "wrong_warnings")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="number of inputs (default 2000)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = ap.parse_args(argv)
    if args.n < 1:
        ap.error("--n must be >= 1")
    sys.path.insert(0, str(REPO))
    t0 = time.perf_counter()
    counts = run_fuzz(args.n, args.seed, progress=not args.json)
    counts["wall_s"] = round(time.perf_counter() - t0, 1)
    if args.json:
        print(json.dumps(counts, indent=2))
    else:
        for k, v in counts.items():
            if k != "examples":
                print(f"{k:<22} {v}")
        for k, v in counts["examples"].items():
            print(f"example {k}: {v}")
    return 1 if any(counts[k] for k in FAILURE_COUNTS) else 0


if __name__ == "__main__":
    raise SystemExit(main())
