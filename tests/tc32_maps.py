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
  5. SWAP: B's copies under its own swizzle (raw_b_xor), the fragments BFrag reads from them, wgmma
     with A's raw stage as the shared-memory operand, and the epilogue's map of D = B^T A^T back to
     C give exactly A @ B on integers; a warp's 8-byte fragment reads take two wavefronts (the
     least for 256 bytes), and split_a's elementwise pass covers A's stage once.
  6. SWAP with B stored N x K (OP_TB): B^T's rows copied like A's under raw_bt's swizzle, the
     fragments BFrag takes by ldmatrix.x4 (each matrix's eight 16-byte rows one wavefront, 32 banks),
     then as 5: exactly A @ B.
  7. SWAP with A stored K x M (OP_TA): A^T's rows copied under raw_at's swizzle, split_a_t's
     transposed stores covering A's operand stage once, each store instruction of a warp on 32
     banks and its 16-byte raw reads one wavefront a quarter-warp; then as 5 (and with B stored
     N x K too): exactly A @ B.
  8. TSPLIT 1: split_a_t's 4 x 4 blocks dealt diagonally move every element once, each
     quarter-warp's 16-byte reads and stores on 32 distinct banks.
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


def check_swap(bm, bn, tb=False, ta=False):
    """SWAP: warpgroups over N (64 columns each), wgmma's N = BM (A's rows), B from registers;
    tb: B stored N x K (its raw stage rows of K, fragments by ldmatrix)."""
    threads = 2 * bn
    name = f"SWAP{' TA' if ta else ''}{' TB' if tb else ''} {bm}x{bn}"

    def raw_at(k, m):  # Staging::raw_at
        return k * bm * 4 + (((m >> 2) ^ (k & 7)) << 4) + ((m & 3) << 2)

    def raw_bt(n, k):  # Staging::raw_bt
        return bm * ROW + n * ROW + (((k >> 2) ^ ((n >> 1) & 7)) << 4) + ((k & 3) << 2)

    def raw_b(k, n):  # Staging::raw_b with raw_b_xor under SWAP
        return bm * ROW + k * bn * 4 + (((n >> 2) ^ ((k & 7) ^ ((k & 1) << 2))) << 4) + ((n & 3) << 2)

    rnd = random.Random(bm * 7 + bn)
    a = [[rnd.randint(-9, 9) for _ in range(BK)] for _ in range(bm)]
    b = [[rnd.randint(-9, 9) for _ in range(bn)] for _ in range(BK)]
    raw = {}
    for v in range(bm * BK // 4):  # copy(): the same chunk maps as without SWAP
        if ta:  # A^T chunk v: k row v / (BM / 4), rows 4 (v % (BM / 4))
            k, m = v // (bm // 4), 4 * (v % (bm // 4))
            places = [(raw_at(k, m) + 4 * i, a[m + i][k]) for i in range(4)]
        else:
            r, k = v // 8, 4 * (v % 8)
            places = [(sw(r, k) + 4 * i, a[r][k + i]) for i in range(4)]
        for pos, val in places:
            if pos in raw:
                fail(f"{name}: raw position {pos} of A written twice")
            raw[pos] = val
    for v in range(BK * bn // 4):
        if tb:  # B^T chunk v: row n = v / 8, k 4 (v % 8), as A's
            n, k = v // 8, 4 * (v % 8)
            places = [(raw_bt(n, k) + 4 * i, b[k + i][n]) for i in range(4)]
        else:
            k, n = v // (bn // 4), 4 * (v % (bn // 4))
            places = [(raw_b(k, n) + 4 * i, b[k][n + i]) for i in range(4)]
        for pos, val in places:
            if pos in raw:
                fail(f"{name}: raw position {pos} written twice")
            raw[pos] = val
    if len(raw) != (bm + bn) * BK:
        fail(f"{name}: copy() places {len(raw)} of {(bm + bn) * BK} elements")
    # split_a: thread tid's chunks o = 16 (tid + it * THREADS) cover A's stage once; the operand
    # stage (A's rows, K-major, sw) then holds what the raw one did
    chunks = sorted(16 * (t + it * threads) for t in range(threads) for it in range(bm * ROW // 16 // threads))
    if chunks != list(range(0, bm * ROW, 16)):
        fail(f"{name}: split_a covers {len(set(chunks))} of {bm * ROW // 16} chunks")
    opst = {sw(m, k): a[m][k] for m in range(bm) for k in range(BK)} if not ta else {}
    def split_t(v):  # split_a_t's chunk v: k, first row
        return v % BK, 4 * (v // BK)

    if ta:  # split_a_t: chunk v read at raw_at(k, m), stored at sw(m + e, k)
        it_n = bm * BK // 4 // threads
        for t in range(threads):
            for it in range(it_n):
                v = t + it * threads
                k, m = split_t(v)
                for e in range(4):
                    pos = sw(m + e, k)
                    if pos in opst:
                        fail(f"{name}: split_a_t stores position {pos} twice")
                    opst[pos] = raw[raw_at(k, m) + 4 * e]
        if len(opst) != bm * BK:
            fail(f"{name}: split_a_t covers {len(opst)} of {bm * BK}")
        for w0 in range(0, threads, 32):  # each warp's instructions: stores on 32 banks, reads 4 wavefronts
            for it in range(it_n):
                maps = [split_t(t + it * threads) for t in range(w0, w0 + 32)]
                for e in range(4):
                    banks = {(sw(m + e, k) // 4) % 32 for k, m in maps}
                    if len(banks) != 32:
                        fail(f"{name}: split_a_t stores hit {len(banks)} banks, not 32")
                # 16-byte reads go by quarter-warps: each eight lanes' on distinct banks (one
                # wavefront a phase, four in all), not only the warp's 512 bytes on four words a bank
                w = 0
                for ph in range(4):
                    words = {}
                    for k, m in maps[8 * ph:8 * ph + 8]:
                        for wd in range(4):
                            x = raw_at(k, m) + 4 * wd
                            words.setdefault((x // 4) % 32, set()).add(x)
                    w += max(len(x) for x in words.values())
                if w != 4:
                    fail(f"{name}: split_a_t's raw reads take {w} wavefronts, not 4")
    c, written = [[0] * bn for _ in range(bm)], set()
    for wg in range(bn // 64):
        for warp in range(4):
            for st in range(BK // 8 if not tb else 0):
                for hk in range(2):  # one 8-byte read a thread: words per bank = wavefronts
                    words = {}
                    for lane in range(32):
                        n0, t = wg * 64 + warp * 16 + 2 * (lane // 4), lane % 4
                        base = raw_b(8 * st + t + 4 * hk, n0)
                        for wd in (base, base + 4):
                            words.setdefault((wd // 4) % 32, set()).add(wd)
                    ways = max(len(x) for x in words.values())
                    if ways != 2:
                        fail(f"{name}: fragment reads take {ways} wavefronts, not 2")
            for st in range(BK // 8 if tb else 0):  # ldmatrix.x4: matrix j's rows from lanes 8j..8j+7
                for j in range(4):
                    banks = set()
                    for i in range(8):
                        base = raw_bt(wg * 64 + warp * 16 + 2 * i + (j & 1), 8 * st + 4 * (j >> 1))
                        banks |= {((base + 4 * w) // 4) % 32 for w in range(4)}
                    if len(banks) != 32:
                        fail(f"{name}: ldmatrix matrix {j} hits {len(banks)} banks, not 32")
            d = [[0] * bm for _ in range(64)]  # this warp's 16 rows of the warpgroup's D (64 x BM)
            for lane in range(32):
                g, t = lane // 4, lane % 4
                n0 = wg * 64 + warp * 16 + 2 * g
                for st in range(BK // 8):
                    frag = [0] * 4
                    for hk in range(2 if not tb else 0):  # BFrag::load
                        base = raw_b(8 * st + t + 4 * hk, n0)
                        frag[2 * hk], frag[2 * hk + 1] = raw[base], raw[base + 4]
                    for j in range(4 if tb else 0):  # ldmatrix: word t of row g of matrix j
                        row_addr = raw_bt(wg * 64 + warp * 16 + 2 * g + (j & 1), 8 * st + 4 * (j >> 1))
                        frag[j] = raw[row_addr + 4 * t]
                    for i in range(4):  # wgmma: register i is row 16 w + g + 8 (i % 2), k t + 4 (i / 2)
                        row, k = warp * 16 + g + 8 * (i % 2), t + 4 * (i // 2)
                        for col in range(bm):  # the descriptor's K-major rows: A's operand stage
                            d[row][col] += frag[i] * opst[sw(col, 8 * st + k)]
            for lane in range(32):  # the epilogue: register 4 j + 2 h + e -> C[8 j + 2 t + e][n0 + h]
                g, t = lane // 4, lane % 4
                for j in range(bm // 8):
                    for h in range(2):
                        for e in range(2):
                            m, n = 8 * j + 2 * t + e, wg * 64 + warp * 16 + 2 * g + h
                            if (m, n) in written:
                                fail(f"{name}: C({m}, {n}) written twice")
                            written.add((m, n))
                            c[m][n] = d[warp * 16 + 8 * h + g][8 * j + 2 * t + e]
    for m in range(bm):
        for n in range(bn):
            want = sum(a[m][k] * b[k][n] for k in range(BK))
            if (m, n) not in written or c[m][n] != want:
                fail(f"{name}: product wrong at ({m}, {n}): {c[m][n]} against {want}")


def check_tsplit(bm, threads):
    """TSPLIT 1: split_a_t's 4 x 4 blocks, dealt diagonally: every element of A's k-tile moves once
    from raw_at(k, m) to sw(m, k), and each quarter-warp's 16-byte reads and stores hit distinct
    banks (one wavefront a phase)."""
    def raw_at(k, m):
        return k * bm * 4 + (((m >> 2) ^ (k & 7)) << 4) + ((m & 3) << 2)

    def block(v):
        q, l = v // 8, v % 8
        return 4 * ((l + q) % 8), 4 * (8 * (q // 8) + l)

    nb, moved = bm * BK // 16, {}
    for v in range(nb):
        k, m = block(v)
        for i in range(4):
            for e in range(4):
                if (m + e, k + i) in moved:
                    fail(f"TSPLIT {bm}: element ({m + e}, {k + i}) moved twice")
                moved[(m + e, k + i)] = (raw_at(k + i, m) + 4 * e, sw(m + e, k + i))
    if len(moved) != bm * BK or len({d for _, d in moved.values()}) != bm * BK:
        fail(f"TSPLIT {bm}: {len(moved)} of {bm * BK} elements moved")
    for v0 in range(0, nb, 8):  # one quarter-warp
        for what, addrs in [("read", [raw_at(block(v)[0] + i, block(v)[1]) for v in range(v0, v0 + 8)]) for i in range(4)] + \
                [("store", [sw(block(v)[1] + e, block(v)[0]) for v in range(v0, v0 + 8)]) for e in range(4)]:
            banks = [((a // 4) + w) % 32 for a in addrs for w in range(4)]
            if len(set(banks)) != 32:
                fail(f"TSPLIT {bm}: a quarter-warp's 16-byte {what}s hit {len(set(banks))} banks, not 32")


for bm, bn in ((128, 128), (64, 128), (128, 64), (128, 256)):
    check_shape(bm, bn)
for bm in (64, 128, 192, 256):
    check_tsplit(bm, 256)
for bm, bn in ((128, 128), (256, 128), (64, 128), (128, 64), (256, 64)):
    check_swap(bm, bn)
    check_swap(bm, bn, tb=True)
    check_swap(bm, bn, ta=True)
    check_swap(bm, bn, ta=True, tb=True)
print("TSPLIT blocks, raw-stage copies, reads and split stores (BMAP 0-2), AREG and SWAP fragments (A as M x K or K x M, B as K x N or N x K) = A @ B, bank ways: ok")
