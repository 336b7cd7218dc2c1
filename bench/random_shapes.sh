#!/usr/bin/env bash
# Random GEMM shapes for judging selection on shapes nobody tuned on.
#   bash bench/random_shapes.sh SEED N      N shapes MxNxK, one a line, the same for the same SEED
# The distribution: each side log-uniform in [1, 16384], then shaped by one of three classes drawn
# with equal chance: a multiple of 128 (rounded to the nearest, at least 128), odd (the nearest odd
# number), or within +-3 of a power of two or of a multiple of 64 (the nearest of either, chosen
# with equal chance, plus an offset uniform in -3..3, at least 1). Shapes whose M*N*K falls outside
# [2^18, 2^36] are drawn again. Python's random.Random(SEED) drives it, so a seed names a suite on
# any machine with python3.
# Rule: wisdom is tuned on the shipped suite (bench/suites/shapes.txt); figures that judge the
# selection come from seeds never used while tuning or designing it (docs/RESULTS.md says which
# seeds were used for what).
set -u
[ $# -eq 2 ] && [[ "$1" =~ ^[0-9]+$ ]] && [[ "$2" =~ ^[0-9]+$ ]] || {
  echo "usage: bench/random_shapes.sh SEED N (whole numbers)" >&2
  exit 2
}
python3 - "$1" "$2" <<'PY'
import math, random, sys
seed, n = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
LO, HI = 1, 16384

def side():
    x = math.exp(rng.uniform(math.log(LO), math.log(HI)))
    cls = rng.randrange(3)
    if cls == 0:
        v = max(128, int(round(x / 128)) * 128)
    elif cls == 1:
        v = int(round(x))
        v = v if v % 2 else v + (1 if v < HI else -1)
    else:
        if rng.randrange(2):
            base = 2 ** int(round(math.log2(x)))
        else:
            base = max(64, int(round(x / 64)) * 64)
        v = max(1, base + rng.randint(-3, 3))
    return min(max(v, LO), HI)

out = 0
while out < n:
    m, nn, k = side(), side(), side()
    if 2 ** 18 <= m * nn * k <= 2 ** 36:
        print(f"{m}x{nn}x{k}")
        out += 1
PY
