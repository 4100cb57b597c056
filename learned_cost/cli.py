"""The ``learned-cost`` command line.

Subcommands defined here:

* ``predict``: TTIR files (one item each, config = file name) or JSONL files
  of items (one JSON object per line; an item may give ``ttir_file``, a path
  relative to the JSONL file, instead of ``ttir``); prints a table sorted by
  latency, or JSON with ``--json``;
* ``features``: the feature vector of one TTIR file;
* ``hardware list`` / ``hardware show NAME``;
* ``info``: version, the hardware that would be chosen and why, the model
  file and its digest, the feature schema and the cache settings.

Modules ``learned_cost.collect.cli``, ``learned_cost.train.cli`` and
``learned_cost.autotune.cli`` may add more: when importable and defining
``register(subparsers)``, that function is called; it adds subparsers whose
``func`` default takes the parsed arguments and returns the exit code.

Errors print one line, ``learned-cost: error: ...``, and exit non-zero
(2 for bad usage or input, 1 when some items could not be predicted).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PROG = "learned-cost"
PLUGIN_MODULES = (
    "learned_cost.collect.cli",
    "learned_cost.collect.inductor.cli",
    "learned_cost.train.cli",
    "learned_cost.autotune.cli",
)


class CLIError(Exception):
    """Bad input on the command line; the message is the one error line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump
        sys.stderr.write(f"{PROG}: error: {message} (see --help)\n")
        raise SystemExit(2)


# --- shared argument parsing -----------------------------------------------------


def _add_item_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bindings", "-b", default=None, help='runtime integers, e.g. "arg3=98432,pid_x=0"')
    p.add_argument("--grid", "-g", default=None, help='launch grid: "N", "X,Y" or "X,Y,Z"')
    p.add_argument("--options", "-o", default=None, help='launch options as JSON, e.g. \'{"num_warps": 8}\'')
    p.add_argument("--hardware", default=None, help="profile name, SoC name or profile JSON path")
    p.add_argument("--target-arch", default=None, help="SoC name, e.g. Ascend910B3")
    p.add_argument("--hardware-config", default=None, help="path of a hardware profile JSON")


def parse_grid_arg(text: str | None) -> list[int] | None:
    """``"128"``, ``"128,4"``, ``"[128, 4]"`` -> list of ints."""
    if text is None:
        return None
    t = text.strip().strip("[]()")
    try:
        dims = [int(x) for x in t.replace("x", ",").split(",") if x.strip()]
    except ValueError:
        raise CLIError(f"--grid must be 1-3 integers such as 128 or 128,4, got {text!r}") from None
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise CLIError(f"--grid must be 1-3 integers >= 1, got {text!r}")
    return dims


def parse_options_arg(text: str | None) -> dict | None:
    if text is None:
        return None
    try:
        v = json.loads(text)
    except json.JSONDecodeError as e:
        raise CLIError(f"--options is not JSON ({e.msg}): {text!r}") from None
    if not isinstance(v, dict):
        raise CLIError(f"--options must be a JSON object, got {text!r}")
    return v


def _read_text(path: str) -> str:
    """A regular file's UTF-8 text (FIFOs, devices and files over
    ``safe_io.MAX_TTIR_FILE_BYTES`` are refused, never read)."""
    from .safe_io import MAX_TTIR_FILE_BYTES, FileReadError, read_regular_file

    if not os.path.exists(path):
        raise CLIError(f"no such file: {path}")
    try:
        data = read_regular_file(path, MAX_TTIR_FILE_BYTES, "input file")
    except FileReadError as e:
        raise CLIError(str(e)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CLIError(f"{path} is not UTF-8 text (binary file? undecodable byte at offset {e.start})") from None
    if "\x00" in text:
        raise CLIError(f"{path} holds NUL bytes: a binary file, not text")
    return text


def _positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return v


def _item_from_args(args: argparse.Namespace, ttir: str, config: str) -> dict:
    item: dict[str, Any] = {"config": config, "ttir": ttir}
    if args.bindings is not None:
        item["arg_bindings"] = args.bindings
    grid = parse_grid_arg(args.grid)
    if grid is not None:
        item["grid"] = grid
    options = parse_options_arg(args.options)
    if options is not None:
        item["options"] = options
    for key in ("hardware", "target_arch", "hardware_config"):
        if getattr(args, key) is not None:
            item[key] = getattr(args, key)
    return item


def read_items_jsonl(path: str) -> list[dict]:
    """Items of a JSONL file; ``ttir_file`` is read relative to the file."""
    base = Path(path).parent
    items = []
    for n, line in enumerate(_read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as e:
            raise CLIError(f"{path}:{n}: not JSON ({e.msg})") from None
        if isinstance(item, dict) and "ttir" not in item and "ttir_file" in item:
            item = dict(item)
            item["ttir"] = _read_text(str(base / item.pop("ttir_file")))
        items.append(item)
    return items


def _fmt_latency(v: float) -> str:
    return "inf" if not math.isfinite(v) else f"{v:.3f}"


# --- predict ------------------------------------------------------------------------


def cmd_predict(args: argparse.Namespace) -> int:
    from .api import predict_items

    items: list[Any] = []
    for path in args.inputs:
        if path.endswith(".jsonl"):
            for it in read_items_jsonl(path):
                if isinstance(it, dict):
                    it = {**{k: v for k, v in _item_from_args(args, "", "").items() if k not in ("config", "ttir")}, **it}
                    if args.model and "model" not in it:
                        it["model"] = args.model
                items.append(it)
        else:
            it = _item_from_args(args, _read_text(path), Path(path).name)
            if args.model:
                it["model"] = args.model
            items.append(it)
    if not items:
        raise CLIError("no items to predict")
    preds = predict_items(items, workers=args.workers)
    failed = [p for p in preds if not p.ok]
    if args.json:
        out = []
        for p in preds:
            d = p.to_dict(with_features=args.with_features)
            d["latency_us"] = d["latency_us"] if math.isfinite(d["latency_us"]) else None
            out.append(d)
        json.dump(out, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        rows = sorted(preds, key=lambda p: (not p.ok, p.latency_us))
        width = max([len(str(p.config)) for p in rows] + [6])
        print(f"{'config':<{width}}  {'latency_us':>12}  {'model':<9} {'hardware':<12} notes")
        for p in rows:
            note = p.error or "; ".join(p.warnings)
            print(f"{p.config!s:<{width}}  {_fmt_latency(p.latency_us):>12}  {p.model:<9} {p.hardware:<12} {note}")
    if failed:
        sys.stderr.write(f"{PROG}: error: {len(failed)} of {len(preds)} items could not be predicted: {failed[0].error}\n")
        return 1
    return 0


# --- features ------------------------------------------------------------------------


def cmd_features(args: argparse.Namespace) -> int:
    from .api import describe_error
    from .features import BindingError, extract_features, parse_bindings
    from .item import ItemError, normalize_grid, normalize_options
    from .hardware import resolve_hardware

    ttir = _read_text(args.ttir)
    if not ttir.strip():
        raise CLIError(f"{args.ttir} is empty: no TTIR to evaluate")
    profile = resolve_hardware(args.hardware, args.target_arch, args.hardware_config)
    try:
        bindings = parse_bindings(args.bindings)
        grid = normalize_grid(parse_grid_arg(args.grid))
        options = normalize_options(parse_options_arg(args.options))
    except (BindingError, ItemError) as e:
        raise CLIError(str(e)) from None
    try:
        from .ttir.parser import parse_ttir

        module = parse_ttir(ttir)
        if not module.functions:
            raise CLIError(f"{args.ttir} holds no kernel (no tt.func)")
        fv = extract_features(module, bindings=bindings, grid=grid, options=options or None, cores=profile.cores)
    except ValueError as e:
        raise CLIError(f"{args.ttir}: {describe_error(e)}") from None
    if not all(math.isfinite(v) for v in fv.to_dict().values()):
        raise CLIError(f"{args.ttir}: features are not finite (loop bounds or sizes too large)")
    if args.json:
        json.dump({"features": fv.to_dict(), "warnings": fv.warnings, "grid": list(fv.grid),
                   "grid_source": fv.grid_source, "hardware": profile.name}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        from .features.schema import feature_names

        width = max(len(n) for n in feature_names())
        for name, value in fv.to_dict().items():
            print(f"{name:<{width}}  {value:g}")
        for w in fv.warnings:
            print(f"warning: {w}")
    return 0


# --- hardware ------------------------------------------------------------------------


def cmd_hardware_list(args: argparse.Namespace) -> int:
    from .hardware import default_hardware_name, list_profiles, load_profile

    default = default_hardware_name()
    for name in list_profiles():
        p = load_profile(name)
        mark = "*" if name == default else " "
        print(f"{mark} {name:<12} {p.vendor:<7} {p.cores:>4} {p.core_kind:<16} {p.clock_mhz:>6g} MHz  {p.description}")
    print("(* = default when an item names no hardware)")
    return 0


def cmd_hardware_show(args: argparse.Namespace) -> int:
    from .hardware import resolve_hardware

    p = resolve_hardware(hardware=args.name)
    json.dump(p.summary(), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def cmd_hardware_measured(args: argparse.Namespace) -> int:
    from .hardware import load_profile, measured_from_ceilings, profile_from_dict

    profile = load_profile(args.name)
    try:
        ceilings = json.loads(_read_text(args.ceilings))
    except json.JSONDecodeError as e:
        raise CLIError(f"{args.ceilings} is not JSON ({e.msg})") from None
    if not isinstance(ceilings, dict):
        raise CLIError(f"{args.ceilings} must hold a JSON object")
    raw = json.loads(_read_text(profile.path))
    raw["measured"] = measured_from_ceilings(ceilings, source=args.ceilings)
    profile_from_dict(raw, path=profile.path)  # validate before writing anything
    text = json.dumps(raw, indent=2, ensure_ascii=False) + "\n"
    if args.write:
        from .safe_io import atomic_write

        atomic_write(profile.path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        print(f"wrote the measured block of {profile.name} to {profile.path}")
    else:
        sys.stdout.write(text)
    return 0


# --- info ------------------------------------------------------------------------------


def info_dict(args: argparse.Namespace | None = None) -> dict[str, Any]:
    """What ``learned-cost info`` reports, as a JSON-ready dict."""
    import warnings

    from . import __version__
    from .api import cache_settings
    from .features.schema import FEATURE_SCHEMA_VERSION, feature_names
    from .hardware import ascend_installed, resolve_hardware
    from .models.learned import METADATA_FILE, MODEL_FILE
    from .models.select import find_model_folder, model_search_dirs, select_model

    given = {k: getattr(args, k, None) for k in ("hardware_config", "hardware", "target_arch")}
    chosen = next(((k, v) for k, v in given.items() if v is not None), None)
    if chosen is not None:
        why = f"--{chosen[0].replace('_', '-')} {chosen[1]}"
    elif os.environ.get("LEARNED_COST_HARDWARE", "").strip():
        why = f"LEARNED_COST_HARDWARE={os.environ['LEARNED_COST_HARDWARE'].strip()}"
    elif ascend_installed():
        why = "triton-ascend is installed"
    else:
        why = "the default: no LEARNED_COST_HARDWARE, triton-ascend not installed"
    profile = resolve_hardware(given["hardware"], given["target_arch"], given["hardware_config"])
    folder = find_model_folder(profile)
    model: dict[str, Any] = {"search": [str(d) for d in model_search_dirs()], "folder": str(folder) if folder else None}
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        m = select_model(profile)
    model["used"] = m.name
    model["digest"] = getattr(m, "digest", None)
    if folder is not None:
        model["file"] = str(folder / MODEL_FILE)
        model["refused"] = "; ".join(str(w.message) for w in rec) or None
        try:
            meta = json.loads((folder / METADATA_FILE).read_text(encoding="utf-8"))
            model["recorded_sha256"] = meta.get("model_sha256")
            model["created"] = meta.get("created")
            model["training_rows"] = (meta.get("training_data") or {}).get("rows")
        except (OSError, ValueError):
            model["recorded_sha256"] = None
    from .models.learned import INPUTS_VERSION

    return {
        "version": __version__,
        "python": sys.version.split()[0],
        "hardware": {"name": profile.name, "why": why, "profile": profile.path, "digest": profile.digest},
        "model": model,
        "features": {"schema_version": FEATURE_SCHEMA_VERSION, "count": len(feature_names()),
                     "model_inputs_version": INPUTS_VERSION},
        "cache": cache_settings(),
    }


def cmd_info(args: argparse.Namespace) -> int:
    d = info_dict(args)
    if args.json:
        json.dump(d, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return 0
    hw, m, f, c = d["hardware"], d["model"], d["features"], d["cache"]
    print(f"learned-cost {d['version']} (Python {d['python']})")
    print(f"hardware:  {hw['name']} ({hw['why']}); profile {hw['profile']}")
    if m["folder"] is None:
        print(f"model:     analytic (no {hw['name']}/model.txt in {', '.join(m['search'])})")
    else:
        state = m["used"] if not m.get("refused") else f"analytic, trained model refused: {m['refused']}"
        print(f"model:     {state}; file {m['file']}")
        print(f"           sha256 {m.get('recorded_sha256')}; created {m.get('created')}; "
              f"{m.get('training_rows')} training rows")
    print(f"features:  schema {f['schema_version']}, {f['count']} features, model inputs version "
          f"{f['model_inputs_version']}")
    mb = c["budget_bytes"] / 2**20
    print(f"caches:    memory bound {mb:g} MB (LEARNED_COST_CACHE_MB); disk: {c['disk'] or 'off (LEARNED_COST_DISK_CACHE)'}")
    for k in ("modules", "raw", "digests", "predictions"):
        e = c[k]
        print(f"           {k:<12} {e['entries']:>6} / {e['max_entries']} entries, "
              f"{e['bytes'] / 2**20:.1f} / {(e['max_bytes'] or 0) / 2**20:.0f} MB")
    return 0


# --- wiring ----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Predict Triton kernel launch latency from TTIR.")
    from . import __version__

    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("predict", help="predict the latency of TTIR files or JSONL items",
                       description="Predict whole-launch latency (µs) of TTIR files or of JSONL items.")
    p.add_argument("inputs", nargs="+", help="TTIR files, or .jsonl files of items")
    _add_item_args(p)
    p.add_argument("--model", choices=("auto", "analytic", "learned"), default=None, help="force a model")
    p.add_argument("--workers", type=_positive_int, default=None,
                   help="threads, >= 1 (default: LEARNED_COST_WORKERS, else 1 with the GIL)")
    p.add_argument("--json", action="store_true", help="JSON list in input order instead of a table")
    p.add_argument("--with-features", action="store_true", help="with --json: include the feature vectors")
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser("features", help="print the feature vector of a TTIR file",
                       description="Evaluate the features of one TTIR file with its bindings.")
    p.add_argument("ttir", help="TTIR file")
    _add_item_args(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_features)

    p = sub.add_parser("hardware", help="list or show hardware profiles",
                       description="Hardware profiles shipped with learned_cost.")
    hsub = p.add_subparsers(dest="hardware_command", metavar="ACTION")
    hl = hsub.add_parser("list", help="list the profiles", description="List the shipped profiles.")
    hl.set_defaults(func=cmd_hardware_list)
    hs = hsub.add_parser("show", help="show one profile as JSON", description="Show a profile's figures and sources.")
    hs.add_argument("name", help="profile name, SoC name or profile JSON path")
    hs.set_defaults(func=cmd_hardware_show)
    hm = hsub.add_parser("measured", help="fill a profile's measured block from a ceilings JSON",
                         description="Print (or --write) the profile with its 'measured' block taken from a "
                                     "ceilings file such as data/h200/ceilings.json.")
    hm.add_argument("name", help="shipped profile name or profile JSON path")
    hm.add_argument("ceilings", help="ceilings JSON (scripts/measure_ceilings.py output)")
    hm.add_argument("--write", action="store_true", help="rewrite the profile file in place")
    hm.set_defaults(func=cmd_hardware_measured)
    p.set_defaults(func=lambda a: _missing(p, "hardware needs an action: list, show or measured"))

    p = sub.add_parser("info", help="version, hardware, model file, feature schema, cache settings",
                       description="What this installation would use: the hardware profile chosen (and why), the "
                                   "model file and its digest, the feature schema and the cache settings.")
    _add_item_args(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_info)

    for mod_name in PLUGIN_MODULES:
        _register_plugin(mod_name, sub)
    return parser


# optional dependency -> the extra that installs it
_EXTRAS = {"torch": "collect", "tqdm": "collect", "triton": "triton", "matplotlib": "plot"}


def _missing_extra(e: ModuleNotFoundError) -> str:
    top = (e.name or "").split(".")[0]
    extra = _EXTRAS.get(top)
    if extra is None:
        return f"missing module {e.name!r}: {e}"
    hint = f"pip install 'learned-cost[{extra}]'"
    if top == "torch":
        hint += " (pin torch==2.13.0, or the build for your device)"
    return f"this command needs {top}, which is not installed: {hint}"


def _missing(parser: argparse.ArgumentParser, message: str) -> int:
    raise CLIError(message)


def _register_plugin(mod_name: str, sub: Any) -> None:
    try:
        mod = importlib.import_module(mod_name)
    except ModuleNotFoundError as e:
        if e.name and (mod_name == e.name or mod_name.startswith(e.name + ".")):
            return  # not part of this installation
        sys.stderr.write(f"{PROG}: warning: {mod_name} unavailable ({e})\n")
        return
    except Exception as e:
        sys.stderr.write(f"{PROG}: warning: {mod_name} unavailable ({type(e).__name__}: {e})\n")
        return
    register = getattr(mod, "register", None)
    if callable(register):
        try:
            register(sub)
        except Exception as e:
            sys.stderr.write(f"{PROG}: warning: {mod_name}.register failed ({type(e).__name__}: {e})\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0) if not isinstance(e.code, str) else 2
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        return int(func(args) or 0)
    except CLIError as e:
        sys.stderr.write(f"{PROG}: error: {e}\n")
        return 2
    except BrokenPipeError:  # output piped into e.g. head: not an error
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except ModuleNotFoundError as e:  # an optional dependency of this subcommand
        sys.stderr.write(f"{PROG}: error: {_missing_extra(e)}\n")
        return 2
    except (ValueError, OSError) as e:  # bad input reported by the library
        sys.stderr.write(f"{PROG}: error: {e}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: error: interrupted\n")
        return 130
    except Exception as e:
        sys.stderr.write(f"{PROG}: error: {type(e).__name__}: {e}\n")
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
