"""``strip_locations`` on text without locations must equal the per-line
reading it uses for text with them (digests are dataset keys)."""

from __future__ import annotations

from learned_cost.ttir.normalize import _strip_loc_calls, strip_locations, ttir_digest


def _per_line(text: str) -> str:
    out = []
    for line in text.splitlines():
        if line.lstrip().startswith("#loc"):
            continue
        out.append(_strip_loc_calls(line).rstrip())
    return "\n".join(x for x in out if x.strip()) + "\n"


def test_fast_path_equals_per_line_reading(fixture_dir):
    plain = 0
    for path in sorted(fixture_dir.glob("*.ttir")):
        text = path.read_text()
        for t in (text, text.replace("\n", "  \n\n\t\n"), text.replace("\n", "\r\n")):
            assert strip_locations(t) == _per_line(t), path.name
        plain += "loc" not in text
    assert plain >= 10  # the location-free fast path is exercised


def test_digest_ignores_trailing_space_and_blank_lines():
    a = "module {\n  tt.func @k() {\n    tt.return\n  }\n}\n"
    b = "module {   \n\n  tt.func @k() {\n    tt.return\t\n  }\n}"
    assert ttir_digest(a) == ttir_digest(b)
    assert ttir_digest(a) != ttir_digest(a.replace("@k", "@j"))
