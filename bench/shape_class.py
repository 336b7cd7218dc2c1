#!/usr/bin/env python3
"""Issue 42's classes of GEMM shapes, in one place for bench/classes.sh (a seed's rows by class) and
bench/narrow_f64.sh (shapes of one class drawn from random seeds).

Each shape falls in the first class that takes it (M x N x K; lda, ldb, ldc as given, else packed
for the op: A stored K x M at op T., B stored N x K at op .T):
  narrow 1-4      min(M, N) <= 4          a matrix times a few vectors (gemv)
  narrow 5-16     min(M, N) <= 16
  K < 64          K < 64                  (M and N both > 16)
  narrow 17-128   min(M, N) <= 128
  odd ld >= 2048  an odd lda, ldb or ldc and max(M, N, K) >= 2048   (rows unaligned, large)
  the rest        everything else

  python3 bench/shape_class.py CLASS [COUNT] < SHAPES   the first COUNT shapes (MxNxK lines) of CLASS
                                                        (packed, op NN), one a line
"""
import sys

CLASSES = ("narrow 1-4", "narrow 5-16", "K < 64", "narrow 17-128", "odd ld >= 2048", "the rest")


def packed_lds(m, n, k, op="NN"):
    """(lda, ldb, ldc) of packed storage for op."""
    return (m if op[0] == "T" else k, k if op[1] == "T" else n, n)


def klass(m, n, k, op="NN", lds=(None, None, None)):
    """The class of an M x N x K product (lds: the leading dimensions where known, None: packed)."""
    narrow = min(m, n)
    if narrow <= 4:
        return "narrow 1-4"
    if narrow <= 16:
        return "narrow 5-16"
    if k < 64:
        return "K < 64"
    if narrow <= 128:
        return "narrow 17-128"
    lds = tuple(ld or p for ld, p in zip(lds, packed_lds(m, n, k, op)))
    if any(ld % 2 for ld in lds) and max(m, n, k) >= 2048:
        return "odd ld >= 2048"
    return "the rest"


def main(argv):
    if len(argv) not in (2, 3) or argv[1] not in CLASSES or (len(argv) == 3 and not argv[2].isdigit()):
        print(f"usage: bench/shape_class.py CLASS [COUNT] < SHAPES (CLASS one of: {', '.join(CLASSES)})", file=sys.stderr)
        return 2
    want, count = argv[1], int(argv[2]) if len(argv) == 3 else None
    out = 0
    for i, line in enumerate(sys.stdin, 1):
        line = line.strip()
        if not line:
            continue
        try:
            m, n, k = (int(x) for x in line.split("x"))
        except ValueError:
            print(f"shape_class: line {i}: {line!r} is not MxNxK", file=sys.stderr)
            return 2
        # Read to the end even past COUNT: the writer (random_shapes.sh) would die of a broken pipe.
        if klass(m, n, k) == want and (count is None or out < count):
            print(line)
            out += 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
