#!/usr/bin/env python3
"""The copies of kernels_src/tile_pipeline.cuh's async_rows (ROWCOPY: a k-tile's chunks along stored
rows dealt by rows), enumerated on the CPU, since no GPU is here. rows_fit and copies mirror
rows_fit<BIT, VEC, TW, ROWS, NT> and async_rows<VEC, TW, ROWS, NT, FC>; a change to one side must be
made on the other. Checked, for every tile (VEC, TW, ROWS, NT) in a grid of the sizes templates use
where rows_fit holds, and for a tile at the matrix's end (NC, kend cutting it) as well as whole:
  1. every element of the tile is written once (each chunk's VEC elements by one copy);
  2. a copy reads inside the matrix (row < kend, its chunk wholly before NC) or is a zero fill;
  3. the lanes of a warp that copy in one row at copy j cover one contiguous piece of it (L
     consecutive lanes a row: at L 8 and 16-byte chunks, whole 128-byte lines).
--old mirrors a wrong dealing (lanes per row from the chunks per thread of the whole tile, not of a
row) and must fail: the test can fail. Prints one line; exits 1 on the first mismatch."""
import sys


def rows_fit(vec, tw, rows, nt):
    ch = tw // vec
    return (rows * ch) % nt == 0 and rows * ch >= nt and ch % (rows * ch // nt) == 0


def copies(vec, tw, rows, nt, ltid, c0, nc, k0, kend, old=False):
    """async_rows for thread ltid: (kr, col, in) of each copy; col is the tile column of the chunk."""
    ch = tw // vec
    iters = rows * ch // nt
    lanes = ch // iters if not old else max(1, nt // rows // 2)
    kr, c = ltid // lanes, (ltid % lanes) * vec
    ok = k0 + kr < kend
    out = []
    for j in range(iters):
        col = c + j * lanes * vec
        out.append((kr, col, ok and c0 + col < nc))
    return out


def check(vec, tw, rows, nt, elem, old):
    for (c0, nc, kend) in ((0, tw, rows), (0, tw - vec, rows - 1), (tw, tw + vec, 1)):
        seen = {}
        warp_rows = {}
        for t in range(nt):
            for j, (kr, col, inside) in enumerate(copies(vec, tw, rows, nt, t, c0, nc, 0, kend, old)):
                if not (0 <= kr < rows and 0 <= col <= tw - vec):
                    return f"VEC {vec} TW {tw} ROWS {rows} NT {nt}: thread {t} copy {j} lands at ({kr}, {col}), outside the tile"
                for e in range(vec):
                    seen[(kr, col + e)] = seen.get((kr, col + e), 0) + 1
                if inside and not (kr < kend and c0 + col + vec <= nc):
                    return f"VEC {vec} TW {tw} ROWS {rows} NT {nt}: thread {t} copy {j} reads past the matrix"
                warp_rows.setdefault((t // 32, j, kr), []).append(col)
        missing = [(r, c) for r in range(rows) for c in range(tw) if seen.get((r, c), 0) != 1]
        if missing:
            return f"VEC {vec} TW {tw} ROWS {rows} NT {nt}: {len(missing)} tile elements written not exactly once, first {missing[0]}"
        for (w, j, kr), cols in warp_rows.items():
            lo, hi = min(cols) * elem, (max(cols) + vec) * elem
            span = hi - lo
            if span != len(cols) * vec * elem:
                return f"VEC {vec} TW {tw} ROWS {rows} NT {nt}: warp {w} copy {j} row {kr} is not contiguous"
    return None


def main():
    old = "--old" in sys.argv[1:]
    n = 0
    for elem in (4, 8):
        for vec in (1, 2, 4):
            if vec * elem > 16:
                continue
            for tw in (8, 16, 32, 48, 64, 96, 128, 192, 256):
                for rows in (4, 8, 16, 32, 64):
                    for nt in (32, 64, 128, 256, 512):
                        if tw % vec or not rows_fit(vec, tw, rows, nt):
                            continue
                        err = check(vec, tw, rows, nt, elem, old)
                        if err:
                            print(err)
                            return 1
                        n += 1
    print(f"{n} tiles: every element once, reads inside the matrix, a warp's rows contiguous")
    return 0


sys.exit(main())
