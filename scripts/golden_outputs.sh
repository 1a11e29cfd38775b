#!/usr/bin/env bash
# Golden outputs for refactors that must not change behaviour: capture, then compare.
#
#   scripts/golden_outputs.sh capture DIR            # write every output to DIR
#   scripts/golden_outputs.sh compare DIR            # capture to a temp dir and diff against DIR
#
# Environment: APX (default .venv/bin/apxtui), APXINF (a real ApxInf checkout; its cases are
# skipped when unset or missing), APXTUI_CACHE_DIR (the caller's cache).  Outputs that carry
# timings (`index`) are filtered of their seconds, git revisions are replaced by REV and a
# cache-rebuild notice (the parser's code changed) is dropped.  Exit 1 when any output differs.
set -u
mode=${1:?capture|compare}
dir=${2:?output directory}
APX=${APX:-.venv/bin/apxtui}
CKPT=apxtui/demo/checkpoint

run() {  # run NAME ARGS...: stdout+stderr and the exit code into NAME
  local name=$1; shift
  "$APX" "$@" >"$out/$name" 2>&1
  echo "exit $?" >>"$out/$name"
}

capture() {
  out=$1
  mkdir -p "$out"
  for fmt in text md json; do
    run "trace-infer.$fmt" trace --demo --from Pi05Policy.infer --format "$fmt"
    run "trace-infer-full.$fmt" trace --demo --from Pi05Policy.infer --format "$fmt" --detail full
    run "trace-forward-ckpt.$fmt" trace --demo --from Pi05Model::forward --format "$fmt" --checkpoint "$CKPT" --sol h100 --batch 1 --seq 16
    run "trace-capture.$fmt" trace --demo --from apxinf_cuda::graph::begin_capture --format "$fmt" --detail full
  done
  run trace-infer-tree.text trace --demo --from Pi05Policy.infer --view tree
  run trace-infer-bf16.json trace --demo --from Pi05Policy.infer --format json --select BF16
  run trace-infer-sm90.md trace --demo --from Pi05Policy.infer --format md --arch sm_90 --detail full
  run trace-block.md trace --demo --from Block::forward --select CudaBackend --format md --detail full
  run trace-attn.json trace --demo --from CudaBackend::attention --format json
  run trace-rms.md trace --demo --from kernels::norm::rms_norm --format md --detail full
  run graph.json graph --demo --format json
  run graph.dot graph --demo --format dot
  run kernels.text kernels --demo
  run kernels.json kernels --demo --json
  run capture.text capture --demo
  run capture.json capture --demo --json
  run symbols.json symbols --demo --json
  run config.json config --demo --json
  run config.text config --demo
  run checkpoint.text checkpoint "$CKPT"
  run checkpoint.json checkpoint "$CKPT" --json
  run join.text checkpoint "$CKPT" --code apxtui/demo/checkout
  run join.json checkpoint "$CKPT" --code apxtui/demo/checkout --json
  run index.text index --demo
  sed -i -E 's/[0-9]+\.[0-9]+/N/g' "$out/index.text"  # timings
  run error-nosym.text trace --demo --from no_such_symbol_here
  if [ -n "${APXINF:-}" ] && [ -d "${APXINF}" ]; then
    run real-infer.md trace "$APXINF" --from Pi05Policy.infer --arch sm_90 --select Bf16 --select BF16 --format md
    run real-infer.json trace "$APXINF" --from Pi05Policy.infer --arch sm_90 --format json
    run real-layer.md trace "$APXINF" --from crates/apxinf-model/src/pi05/bf16_executor.rs::language_layer_bf16 \
      --select BF16 --arch sm_90 --format md --detail full
  fi
  # the demo checkout lives in this repository: its revision is the commit under test
  sed -i -E 's/\b[0-9a-f]{40}\b/REV/g; /^apxtui: cache .* rebuilding$/d' "$out"/*
}

case $mode in
  capture) capture "$dir"; ls "$dir" | wc -l ;;
  compare)
    tmp=$(mktemp -d)
    capture "$tmp"
    if diff -r "$dir" "$tmp" >"$tmp.diff"; then echo "golden: $(ls "$dir" | wc -l) outputs identical"; rm -rf "$tmp" "$tmp.diff"
    else echo "golden: DIFFERENT (diff in $tmp.diff)"; diff -rq "$dir" "$tmp"; exit 1; fi ;;
  *) echo "usage: $0 capture|compare DIR" >&2; exit 2 ;;
esac
