#!/usr/bin/env bash
# Shrink what a device call copies: the device machine receives the working
# tree's tracked and untracked-but-not-ignored files, at most 64 MiB. The
# collector and the replay need data/h200's rows files (to skip measured
# keys) and data/inductor's captures, not reports/ or data/h200's TTIR texts.
#
#   scripts/device_copy.sh hide     # before the device calls: untrack and ignore them locally
#   scripts/device_copy.sh restore  # after: track them again (never commit while hidden)
#   scripts/device_copy.sh size     # bytes the next call would copy
set -euo pipefail
cd "$(dirname "$0")/.."
exclude=.git/info/exclude
hidden=(reports 'data/h200/ttir-*.parquet' 'data/h100/ttir-*.parquet' data/inductor)
size() { { git ls-files -z; git ls-files -z -o --exclude-standard; } | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1; }
case "${1:-}" in
  hide)
    git rm -r -q --cached "${hidden[@]}"
    printf '/%s\n' "${hidden[@]}" >> "$exclude"
    echo "hidden; the next call copies $(size) bytes (limit 67108864)" ;;
  restore)
    for p in "${hidden[@]}"; do sed -i "\\#^/${p//\*/\\*}\$#d" "$exclude"; done
    git reset -q -- "${hidden[@]}"
    echo "restored; git status: $(git status --short | wc -l) changed paths" ;;
  size) size ;;
  *) echo "usage: scripts/device_copy.sh hide|restore|size" >&2; exit 2 ;;
esac
