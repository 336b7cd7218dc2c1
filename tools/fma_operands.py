#!/usr/bin/env python3
"""Count, per kernel, the FMAs (FFMA, DFMA) that read all three source operands from the register
file rather than the operand reuse cache.

On the H100 each such DFMA costs one more issue cycle than the two the FP64 pipe needs
(bench/probes/fp64_core.cu and docs/NOTES.md), so their share is the core's lost rate. An operand
comes from the reuse cache when the FMA before it set .reuse on the same slot for the same
register; ptxas drops .reuse at its yield hints, which is where most three-read FMAs come from.

    usage: tools/fma_operands.py FILE...    (cuobjdump -sass listings, or CUBINs when cuobjdump
                                              is on PATH: engine compile CONFIG --emit DIR)
"""
import collections
import re
import sys

from sass import kernels, listing

FMA = ("FFMA", "DFMA")
REG = re.compile(r"^-?\|?R(\d+)")


def register_reads(insns):
    """Counter: number of register-file source reads -> number of FMAs."""
    hist = collections.Counter()
    cached = {}  # operand slot -> register kept by the previous FMA's .reuse
    for insn in insns:
        parts = insn.split(None, 1)
        if len(parts) < 2 or parts[0].split(".")[0] not in FMA:
            continue
        srcs = [s.strip() for s in parts[1].split(",")][1:4]
        reads, keep = 0, {}
        for slot, src in enumerate(srcs):
            m = REG.match(src)
            if not m:  # RZ, an immediate, a constant bank or a uniform register
                continue
            reg = int(m.group(1))
            if cached.get(slot) != reg:
                reads += 1
            if ".reuse" in src:
                keep[slot] = reg
        hist[reads] += 1
        cached = keep
    return hist


def main(paths):
    if not paths:
        sys.exit("usage: tools/fma_operands.py FILE...  (SASS listings, or CUBINs with cuobjdump on PATH)")
    print("| file | kernel | FMAs | by register-file reads (0/1/2/3) | three-read share |")
    print("|---|---|---:|---|---:|")
    for path in paths:
        for name, insns in kernels(listing(path)):
            hist = register_reads([insn for _, insn in insns])
            total = sum(hist.values())
            if total == 0:
                continue
            split = "/".join(str(hist.get(k, 0)) for k in range(4))
            print(f"| {path} | {name} | {total} | {split} | {100.0 * hist.get(3, 0) / total:.1f}% |")


if __name__ == "__main__":
    main(sys.argv[1:])
