#!/usr/bin/env python3
"""The copies of kernels_src/tile_pipeline.cuh's ODD_ROWS path (dmma's ODD_LD), enumerated on the
CPU, since no GPU is here. rchunk_copies mirrors async_rchunk_odd (with async_rchunk<2, 1, TW, 1>
where the row is not 16-byte aligned), kchunk_copies async_kchunk_odd (with async_kchunk<2, 1, 1>),
odd_row odd_row<L, ROWS>; a change to one side must be made on the other. A copy is
(dst, src, cp_size, src_size) in elements of 8 bytes; src None is the matrix base with size 0.
Checked, for f64 matrices of R rows of NC elements at ld (odd and even; the base 16-byte aligned or
not, as a batch's odd stride leaves it), every tile along the row and every k-row, FC true only
where NC is a multiple of TW:
  1. every copy reads only inside the allocation, (R - 1) * ld + NC elements from the base: all
     cp_size bytes at its source, whatever src_size (compute-sanitizer's memcheck counts a 16-byte
     cp.async's read as 16 bytes at its source also where src_size is 8: bench/layouts.sh's first
     run failed there at 127x129x131, ld + 1);
  2. a 16-byte copy's source is 16-byte aligned, and src_size is 0 or cp_size (no partial copy);
  3. the stage gets each element of the tile's row once: the matrix's where it lies before NC (or
     kend), zero past it.
  4. odd_row deals a tile's rows as a permutation, and each warp's rows share a parity where it claims to.
--old mirrors the code before the fix (one 16-byte copy with src_size 8 at a row's end) and must
fail check 1 (check 2 is waived for it): the test can fail. Prints one line; exits 1 on the first mismatch."""
import sys


def rchunk_copies(base, ld, nc, gk, c0, j, tw, fc, kend, old=False):
    """async_rchunk_odd: chunk j of row gk in a tile TW wide from column c0; dst is the tile column."""
    row = base + gk * ld + c0
    if gk < kend and row % 2 == 0:  # aligned16: 2 elements of 8 bytes
        c = c0 + 2 * j
        if fc or c + 2 <= nc:
            return [(2 * j, row + 2 * j, 2, 2)]
        if old:
            n = min(max(nc - c, 0), 2)
            return [(2 * j, row + 2 * j if n > 0 else row, 2, n)]
        return [(2 * j, row + 2 * j if c < nc else None, 1, 1 if c < nc else 0), (2 * j + 1, None, 1, 0)]
    # async_rchunk<2, 1, TW, 1, FC>(dst, P, NC, ld, gk, c0 + j, kend): groups g at j + g * TW / 2
    ok = gk < kend
    p = base + (gk if ok else 0) * ld + c0 + j
    out = []
    for g in range(2):
        col = c0 + j + g * (tw // 2)
        inn = ok and (fc or col < nc)
        out.append((j + g * (tw // 2), p + g * (tw // 2) if inn else None, 1, 1 if inn else 0))
    return out


def kchunk_copies(base, ld, r, gr, gk, kend, fr=False):
    """async_kchunk_odd: the 2 elements gk, gk + 1 of row gr (clamped to R - 1); dst is the k offset."""
    row = min(gr, r - 1) if not fr else gr
    p = base + row * ld + gk
    if p % 2 == 0 and gk + 2 <= kend:
        return [(0, p, 2, 2)]
    return [(e, p + e if gk + e < kend else None, 1, 1 if gk + e < kend else 0) for e in range(2)]


def odd_row(v, l, rows):
    r = 32 // l
    q = v // l
    if 32 % l != 0 or rows % (2 * r) != 0:
        return q
    qi = q % (2 * r)
    return q - qi + (qi % r) * 2 + qi // r


def fail(msg):
    print(msg)
    sys.exit(1)


def check_copies(copies, base, alloc, what, old=False):
    for dst, src, cp, sz in copies:
        if sz not in (0, cp) and not old:  # --old breaks this rule by design: let check 1 judge it
            fail(f"{what}: copy to {dst} of {cp * 8} bytes with source size {sz * 8}")
        if src is None:
            continue
        if cp == 2 and src % 2:
            fail(f"{what}: 16-byte copy from element {src - base} not 16-byte aligned")
        if src < base or src + cp > base + alloc:
            fail(f"{what}: copy reads elements {src - base}..{src - base + cp - 1}, allocation {alloc}")


def stage(copies, base, value):
    got = {}
    for dst, src, cp, sz in copies:
        for e in range(cp):
            if dst + e in got:
                fail(f"element {dst + e} of the stage written twice")
            got[dst + e] = value(src + e - base) if src is not None and e < sz else 0
    return got


def main(old):
    tw, checked = 64, 0
    for base in (0, 1):  # the product's first element at an aligned or odd address
        for nc in (1, 2, 5, 63, 64, 65, 67, 127, 128, 129, 131):
            for ld in sorted({nc, nc + 1, nc + 2, nc + 3}):
                rows, kend = 5, 5
                alloc = (rows - 1) * ld + nc
                val = lambda i: 1000 + i  # element i of the allocation
                for c0 in range(0, nc, tw):
                    fc = nc % tw == 0
                    for gk in range(rows + 1):  # one k-row past kend: zero-filled
                        kend_ = kend if gk < rows else rows
                        copies = [cp for j in range(tw // 2)
                                  for cp in rchunk_copies(base, ld, nc, gk, c0, j, tw, fc, kend_, old)]
                        what = f"rchunk base {base} NC {nc} ld {ld} c0 {c0} row {gk}"
                        check_copies(copies, base, alloc, what, old)
                        got = stage(copies, base, val)
                        for t in range(tw):
                            col = c0 + t
                            want = val(gk * ld + col) if gk < kend_ and col < nc else 0
                            if got.get(t) != want:
                                fail(f"{what}: stage column {t} holds {got.get(t)}, expected {want}")
                        checked += 1
                # Along K: rows of NC (as K) elements, chunks at every even gk, rows past R clamped.
                for gr in range(rows + 2):
                    for gk in range(0, nc + 1, 2):
                        copies = kchunk_copies(base, ld, rows, gr, gk, nc)
                        what = f"kchunk base {base} K {nc} ld {ld} row {gr} k {gk}"
                        check_copies(copies, base, alloc, what)
                        got = stage(copies, base, val)
                        for e in range(2):
                            want = val(min(gr, rows - 1) * ld + gk + e) if gk + e < nc else 0
                            if got.get(e) != want:
                                fail(f"{what}: element {e} holds {got.get(e)}, expected {want}")
                        checked += 1
    for l, rows in ((8, 64), (8, 128), (4, 64), (16, 64), (8, 48), (32, 64)):
        got = [odd_row(v, l, rows) for v in range(l * rows)]
        if sorted(set(got)) != list(range(rows)) or any(got.count(x) != l for x in range(rows)):
            fail(f"odd_row<{l}, {rows}> does not deal each row to {l} chunks")
        if 32 % l == 0 and rows % (2 * (32 // l)) == 0:
            for w in range(l * rows // 32):
                if len({got[v] % 2 for v in range(32 * w, 32 * w + 32)}) != 1:
                    fail(f"odd_row<{l}, {rows}>: warp {w}'s rows differ in parity")
    print(f"ODD_ROWS copies: {checked} rows and chunks in bounds, aligned, each element once; odd_row deals by parity")


if __name__ == "__main__":
    main("--old" in sys.argv[1:])
