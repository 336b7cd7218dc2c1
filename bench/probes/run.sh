#!/usr/bin/env bash
# Run the FP64 issue-rate probes (build them first with `make probes`, where nvcc is) and, when
# cuobjdump is on PATH, count the register-file reads of every FMA in the probes and in the shipped
# FP64 and FP32 warp-tiled configs (tools/fma_operands.py). Output is Markdown for docs/NOTES.md.
#   usage: bench/probes/run.sh
set -u
cd "$(dirname "$0")/../.."
P=build/probes/fp64_core
[ -x "$P" ] || { echo "$P is missing: run make probes first"; exit 2; }
"$P" || exit $?
command -v cuobjdump >/dev/null || { echo; echo "(cuobjdump not found: operand counts skipped)"; exit 0; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cuobjdump -sass "$P" >"$dir/fp64_core.sass"
build/engine compile configs/dgemm_simt.json configs/warptile_db.json --emit "$dir" >/dev/null || exit $?
build/engine compile configs/dgemm_simt.json --set SNAKE=0 --emit "$dir/snake0" >/dev/null || exit $?
echo
python3 tools/fma_operands.py "$dir/fp64_core.sass" "$dir"/*.cubin "$dir"/snake0/*.cubin | sed "s|$dir/||"
