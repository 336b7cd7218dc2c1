#!/usr/bin/env python3
"""The rows of a GPU check script's bench runs as one table: every DIR/b-RUN.jsonl (engine bench
--format jsonl), a line per row: run, config, dtype, op, shape, ms, TFLOP/s, % of cuBLAS, the error in
units of the class's bound where given, status. bench/tc32ws_gpu.sh and bench/hws_gpu.sh print it last.

  python3 bench/rows_table.py DIR
"""
import glob
import json
import os
import sys

if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
    sys.exit("usage: rows_table.py DIR (a directory of b-RUN.jsonl files)")
print(f"{'run':<22} {'config':<12} {'dt':<4} {'op':<3} {'shape':<18} {'ms':>8} {'TFLOP/s':>8} {'%cuBLAS':>8} {'err/u':>8} {'status':<8}")
for f in sorted(glob.glob(os.path.join(sys.argv[1], "b-*.jsonl"))):
    run = os.path.basename(f)[2:-6]
    for line in open(f):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if "config" not in r:
            continue
        shape = f"{r.get('M')}x{r.get('N')}x{r.get('K')}"
        print(f"{run[:22]:<22} {str(r.get('config'))[:12]:<12} {str(r.get('dtype'))[:4]:<4} {str(r.get('op', 'NN')):<3} {shape:<18} "
              f"{r.get('ms') or 0:>8.3f} {r.get('tflops') or 0:>8.1f} {r.get('pct_cublas') or 0:>8.1f} {r.get('err_max_u') or 0:>8.1f} "
              f"{str(r.get('status')):<8}")
