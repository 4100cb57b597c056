#!/usr/bin/env bash
# Prints the profile name of the GPU this machine has: h200, h100, or the
# lower-cased name with dashes. Run by the device scripts so that rows
# measured on another card than planned are named (and skipped) as that card.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
case "$gpu" in
  *H200*) echo h200 ;;
  *H100*) echo h100 ;;
  "") echo unknown-gpu ;;
  *) echo "$gpu" | tr 'A-Z' 'a-z' | sed 's/^nvidia //; s/[^a-z0-9]\+/-/g; s/-$//' ;;
esac
