"""A one-cut lower bound on the reloads of a full tiled-matmul grid, for every plan with a
layout (docs/MODEL.md, "Layout and spills", "Traffic"); it sits beside the space-time
bound of `dan.dialect.model.bounds.traffic`, and each report takes the larger.

Structure. The reuse grid of `bounds.traffic` (points, their `a` and `b` sources, groups,
rows, columns and slices), and it must be *full*: `m` rows, `n` columns and `K` slices
with `m n K` points, `m n` groups, `m K` `a` sources and `n K` `b` sources. Then
`p -> (row, column, slice)` is a bijection onto the box, every `a` source is one
(row, slice) pair and every `b` source one (slice, column) pair. (A tiled matmul: source
`A[i][k]` feeds the points `(i, *, k)`, `B[k][j]` the points `(*, j, k)`.)

Claim. With `H`, `Q`, `w`, `w_acc` as in `bounds.traffic` and `z` the spills of groups,
every plan spills sources or carriers at least `r(z) = K * min phi(d) - 2 - H` times, the
minimum over `d` in a window `[f, f + Q + z]`, for any `0 <= f < m n`, where `phi(d)` is
the least number of *partial* lines (rows or columns met but not filled) of a set of `d`
cells of the `m x n` grid.
Proof. Number the points in schedule order and take the point `p` right after the one
that completes the `f`-th cell (`p = 0` for `f = 0`): exactly `f` cells have all their
points before `p`. A cell with points on both sides of `p` (or at `p`) has its group
live at `p`: resident, at most `Q` such, or spilled out, at most `z`. For slice `k` let
`S_k` be the cells whose slice-`k` point lies before `p`: the `f` complete cells and
some of those at most `Q + z`, so `|S_k|` is in the window. A row `i` (column `j`)
partial in `S_k` means `A[i][k]` (`B[k][j]`) has a use before `p` and one after it (or
at it: only `p`'s own two sources), so at least `sum_k phi(|S_k|) - 2` sources have a
gap with `p` inside it. At `p` at most `H` of those gaps are kept (`bounds.traffic`),
and every gap not kept needs a spill of its own. Traffic, spill count and spill-in
cycles are then the least over `z` of `w_acc z + w r(z)` (and alike).
`phi(d)`, `0 < d < m n` (0 at the ends), is the least of the cases of a set `S`: no
full line (its rows times its columns hold it: `r + s` with `r s >= d`); a full row but
no full column (every column is met and partial: `n`, one more when `n` does not divide
`d`); the transpose (`m`, one more when `m` does not divide `d`); a full row and a full
column (every line is met; the `m n - d` cells left lie in the non-full rows and
columns: `r + s` with `r s >= m n - d`). On Matmul_Case0 (8 x 8 x 8, `H` 34, `Q` 2),
`phi(d)` is 9 for `d` from 17 to 23 (8 at multiples of 8), so `f = 17` gives
8 * 9 - 2 - 34 = 36 reloads.
Limits. Counting cells does not get much further: with several cuts, each window between
two cuts adds the lines it meets that were met before, less `H`, and an order by 4 x 4
blocks of C tiles keeps that under `H` in most windows (a dynamic program over the cell
counts gives at most 28 on Matmul_Case0); the gaps that no holding of `H` sources keeps,
counted on the best orders found, are 82 to 90. Cuts chosen for one order do see them
all: on an order with 82 (by bands of 4 columns of C tiles), cuts after about every 8
C tiles (points 63, 127, 192, 296, 351 and 415) count the gaps crossing each that
start after the cut before it, 82 in all beyond `H` per cut, the exact count (an
interval packing, whose linear dual is such a choice of points). Cuts fixed in advance
do not: with a cut after every 8 C tiles and whole cells, an order by 4 x 4 blocks of C
tiles (each in two halves of 2 x 4) keeps the count at 36, the one cut's figure. What
is missing is the least over all orders of a count whose cuts follow the order, a
search over chains of cell sets that nothing here bounds from below. Measured there
(49 reloads are half the plan's 97): counted exactly (at candidate points fixed in
advance, each gap once at the first chosen point it crosses, beyond `H + 2` per chosen
point; the best choice is an interval packing), an order by bands of 4 columns of C
tiles, two at a time, proves 44 reloads with a candidate every 64 points, 52 every 32
and 96 every 16, and a local search over such orders of C tiles finds none below 44, 52
and 72: candidates every 8 C tiles cannot reach 49, finer ones leave the least over
orders open. Two cuts placed per order (the second where the lines met since the first
and still partial are most) count 16 lines per slice on that order, 8 * 16 - 2 * 36 =
56 reloads (57 on its points), and a local search finds no order lower, also with
cells held open across others: enough if it held for every order. For orders of whole
cells of an `n x n` grid (`n >= 3`) the two cuts count at least `2 n` lines on every
order tried (all orders of 3 x 3, searches up to 8 x 8), and the first cut where the
last row is first met (before the last column, say) proves it unless exactly one column
is still unmet there: all `n` rows are partial, at most one met column is complete, and
the `u >= 2` unmet columns give a block of cells all later, whose first completed line
leaves `u + 1` lines met since the cut and partial. What is missing is the case of one
unmet column and the lift to orders whose slices see the cells in different orders (up
to `Q + z` cells open at a cut) with the two points common to all slices: one line per
slice less gives 48. Segments of
`R` loads each (Hong and Kung) give nothing: with whole cells a segment covers at most
`(H + 2 + R)^2 / 32` points, at most 111 loads in all for any `R`, fewer than the 128
first loads. Where another bound is larger (`--like Matmul_Case1`: the disjoint windows
of `bounds.traffic_windows`), it is the one reported.
"""

from __future__ import annotations

import numpy as np


def least_lines(d: int, m: int, n: int) -> int:
    """`phi(d)`: the fewest partial lines of `d` cells of an `m x n` grid (module docstring)."""
    if d <= 0 or d >= m * n:
        return 0

    def cover(cells: int) -> int:  # fewest r + s with r s >= cells
        return min(r + -(-cells // r) for r in range(1, m + 1) if -(-cells // r) <= n)

    best = cover(d)
    if d >= n:
        best = min(best, n + (1 if d % n else 0))
    if d >= m:
        best = min(best, m + (1 if d % m else 0))
    if d >= m + n - 1:
        best = min(best, cover(m * n - d))
    return best


def cut_reloads(shape: tuple[int, int, int], hold: int) -> list[int]:
    """`r` of the module docstring for an `m x n x K` grid and `H = hold`, indexed by
    `Q + z` from 0 to `m n` (nonincreasing; 0 at `m n`)."""
    m, n, k = shape
    cells = m * n
    window = np.array([least_lines(d, m, n) for d in range(cells + 1)], dtype=np.int64)
    out: list[int] = []
    for width in range(cells + 1):  # window[f] = min phi over [f, f + width]
        if width:
            window[:cells] = np.minimum(window[:cells], window[1:])
        out.append(max(0, int(k * window[:cells].max()) - 2 - hold))
        if not out[-1]:  # nonincreasing: 0 from here on
            return out + [0] * (cells - width)
    return out
