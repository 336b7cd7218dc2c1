#!/usr/bin/env python3
"""The index maps of kernels_src/tc32.cu's raw-stage path (RAW_STAGES > 0) and of A from registers
(AREG), enumerated on the CPU, since no GPU is here. The functions below mirror tc32.cu's (sw,
Staging::raw_a / raw_b / b_k / b_col / b_pos, Staging::copy's chunk map, AFrag::load / split) and
wgmma's register fragment of A (PTX ISA: in warp w, register i of a thread holds row
16 w + lane / 4 + 8 (i % 2), k lane % 4 + 4 (i / 2) of the step's 64 x 8); a change to one side
must be made on the other. Checked, per tile shape and map:
  1. copy() places every element of A's and B's k-tile at one raw position (none twice);
  2. each thread's raw reads return the elements its split stores claim, and the stores cover B's
     operand stage once (BMAP 0, 1, 2; with and without AREG's k permutation);
  3. AREG: fragments from the raw stage, B stored permuted, and wgmma's semantics per k-step give
     exactly A @ B on integers;
  4. bank conflicts: under BMAP 1 and 2 without AREG, and BMAP 2 with it, a warp's transposed
     4-byte stores of B hit 32 banks (one way); AREG's 16-byte fragment reads are one way per
     quarter-warp.
Prints one line; exits 1 on the first mismatch."""
import random
import sys

BK, ROW = 32, 128


def sw(r, k):
    return r * ROW + (((k >> 2) ^ (r & 7)) << 4) + ((k & 3) << 2)


def b_pos(k, areg):
    return 8 * ((k & 7) >> 1) + (k >> 3) + 4 * (k & 1) if areg else k


def b_k(v, bmap, bn):
    return v % BK if bmap == 2 else (v % 16 + 16 * ((v // 32) % 2) if bmap else 8 * (v // (2 * bn)) + v % 8)


def b_col(v, bmap, bn):
    return 4 * (v // BK) if bmap == 2 else (4 * ((v // 16) % 2 + 2 * (v // 64)) if bmap else 4 * ((v // 8) % (bn // 4)))


def fail(msg):
    print(msg)
    sys.exit(1)


def check_shape(bm, bn):
    threads = 2 * bm

    def raw_b(k, n):
        return bm * ROW + k * bn * 4 + (((n >> 2) ^ (k & 7)) << 4) + ((n & 3) << 2)

    raw = {}
    for v in range(bm * BK // 4):  # copy(): A chunk v is row v / 8, k 4 (v % 8)
        r, k = v // 8, 4 * (v % 8)
        for i in range(4):
            raw[sw(r, k) + 4 * i] = ("A", r, k + i)
    for v in range(BK * bn // 4):  # B chunk v is k row v / (BN / 4), columns 4 (v % (BN / 4))
        k, n = v // (bn // 4), 4 * (v % (bn // 4))
        for i in range(4):
            raw[raw_b(k, n) + 4 * i] = ("B", k, n + i)
    if len(raw) != (bm + bn) * BK:
        fail(f"{bm}x{bn}: copy() places {len(raw)} of {(bm + bn) * BK} elements")
    for bmap in (0, 1, 2):
        for areg in (0, 1):
            op, worst = {}, 1
            for w in range(threads // 32):
                for it in range(BK * bn // 4 // threads):
                    for e in range(4):
                        banks = {}
                        for lane in range(32):
                            v = 32 * w + lane + it * threads
                            k, n = b_k(v, bmap, bn), b_col(v, bmap, bn)
                            if raw[raw_b(k, n) + 4 * e] != ("B", k, n + e):
                                fail(f"{bm}x{bn} BMAP {bmap}: raw read of k {k} n {n + e} is {raw[raw_b(k, n) + 4 * e]}")
                            pos = sw(n + e, b_pos(k, areg))
                            if pos in op:
                                fail(f"{bm}x{bn} BMAP {bmap} AREG {areg}: position {pos} stored twice")
                            op[pos] = (k, n + e)
                            banks.setdefault((pos // 4) % 32, set()).add(pos)
                        worst = max(worst, max(len(x) for x in banks.values()))
            if len(op) != BK * bn:
                fail(f"{bm}x{bn} BMAP {bmap} AREG {areg}: B stage covered {len(op)} of {BK * bn}")
            if (bmap == 2 or (bmap == 1 and not areg)) and worst != 1:
                fail(f"{bm}x{bn} BMAP {bmap} AREG {areg}: B stores {worst}-way bank conflicted")
    # AREG: the product of one k-tile through the fragments and the permuted B stage.
    rnd = random.Random(bm * 1000 + bn)
    a = [[rnd.randint(-9, 9) for _ in range(BK)] for _ in range(bm)]
    b = [[rnd.randint(-9, 9) for _ in range(bn)] for _ in range(BK)]
    raw_a = {sw(r, k): a[r][k] for r in range(bm) for k in range(BK)}
    bop = {sw(n, b_pos(k, 1)): b[k][n] for k in range(BK) for n in range(bn)}
    d = [[0] * bn for _ in range(bm)]
    for wg in range(bm // 64):
        for warp in range(4):
            for q in range(4):  # a quarter-warp's 16-byte fragment reads: eight distinct chunks
                for h in range(4):
                    chunks = {(sw(wg * 64 + warp * 16 + lane // 4 + 8 * (h // 2), 8 * (lane % 4) + 4 * (h % 2)) // 16) % 8
                              for lane in range(8 * q, 8 * q + 8)}
                    if len(chunks) != 8:
                        fail(f"{bm}x{bn}: AREG fragment reads {9 - len(chunks)}-way conflicted")
            for lane in range(32):
                r0, k0 = wg * 64 + warp * 16 + lane // 4, 8 * (lane % 4)
                frag = [raw_a[sw(r0 + 8 * (h // 2), k0 + 4 * (h % 2)) + 4 * c] for h in range(4) for c in range(4)]
                for s in range(BK // 8):
                    for i in range(4):
                        x = frag[8 * (i % 2) + 2 * s + i // 2]  # AFrag::split
                        m, j = r0 + 8 * (i % 2), lane % 4 + 4 * (i // 2)  # wgmma's A fragment
                        for n in range(bn):
                            d[m][n] += x * bop[sw(n, 8 * s + j)]
    for m in range(bm):
        for n in range(bn):
            if d[m][n] != sum(a[m][k] * b[k][n] for k in range(BK)):
                fail(f"{bm}x{bn}: AREG product wrong at ({m}, {n})")


for bm, bn in ((128, 128), (64, 128), (128, 64), (128, 256)):
    check_shape(bm, bn)
print("raw-stage copies, reads and split stores (BMAP 0-2), AREG fragments = A @ B, bank ways: ok")
