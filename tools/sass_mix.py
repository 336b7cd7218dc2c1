#!/usr/bin/env python3
"""The instruction mix of each loop of a kernel's SASS: how many instructions one trip issues, what
share of them are FMAs, and which opcodes make up the rest.

An FFMA kernel reaches the FP32 peak only when nearly every issued instruction is an FFMA (one issue
slot per warp instruction), so the other opcodes of the main loop -- shared-memory loads and
stores, address arithmetic, barriers, the loop's own compare and branch -- are what a tile's
design trades against each other. A loop is the span from a backward branch's target to the
branch; loops that contain no other loop are listed, largest FMA count first.

    usage: tools/sass_mix.py [--top N] FILE...   (cuobjdump -sass listings, or CUBINs when
                                                  cuobjdump is on PATH: engine compile CONFIG --emit DIR)
"""
import collections
import re
import sys

from sass import kernels, listing

FMA = ("FFMA", "DFMA", "HFMA2")
BRANCH = re.compile(r"^BRA(?:\.\S+)?\s+(0x[0-9a-f]+)")  # cuobjdump prints targets as addresses


def loops(insns):
    """(first index, last index) of every loop: a branch to an address before its own."""
    index = {addr: i for i, (addr, _) in enumerate(insns)}
    found = []
    for i, (addr, insn) in enumerate(insns):
        m = BRANCH.match(insn)
        if m:
            target = int(m.group(1), 16)
            if target < addr and target in index:
                found.append((index[target], i))
    return found


def innermost(spans):
    """The spans that contain no other span."""
    return [s for s in spans if not any(o != s and s[0] <= o[0] and o[1] <= s[1] for o in spans)]


def mix(insns, span):
    """Counter of opcodes (first token, with its modifiers) over insns[span]."""
    ops = collections.Counter()
    for _, insn in insns[span[0]: span[1] + 1]:
        ops[insn.split(None, 1)[0]] += 1
    return ops


def main(argv):
    top = 12
    if argv[:1] == ["--top"] and len(argv) > 1:
        top, argv = int(argv[1]), argv[2:]
    if not argv:
        sys.exit("usage: tools/sass_mix.py [--top N] FILE...  (SASS listings, or CUBINs with cuobjdump on PATH)")
    for path in argv:
        for name, insns in kernels(listing(path)):
            spans = innermost(loops(insns))
            rows = []
            for span in spans:
                ops = mix(insns, span)
                fmas = sum(n for op, n in ops.items() if op.split(".")[0] in FMA)
                rows.append((fmas, span, ops))
            rows.sort(key=lambda r: (-r[0], r[1]))
            for fmas, span, ops in rows:
                total = sum(ops.values())
                lo, hi = insns[span[0]][0], insns[span[1]][0]
                print(f"{path} {name} loop 0x{lo:04x}-0x{hi:04x}: {total} instructions, {fmas} FMAs "
                      f"({100.0 * fmas / total:.1f}%), {total - fmas} others")
                others = [(op, n) for op, n in ops.most_common() if op.split(".")[0] not in FMA]
                for op, n in others[:top]:
                    print(f"  {n:6d}  {op}")
                if len(others) > top:
                    print(f"  {sum(n for _, n in others[top:]):6d}  ({len(others) - top} other opcodes)")


if __name__ == "__main__":
    main(sys.argv[1:])
