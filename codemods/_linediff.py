"""Line alignment in near-linear time, for splicing, mapping warning lines and printing diffs.

difflib's SequenceMatcher is quadratic on files with many identical lines (20,000 identical call
sites took minutes). Here equal lines are found in three steps, each linear or n log n:

1. the common head and tail are matched;
2. lines that occur exactly once in both files are anchors; the longest run of anchors in the same
   order (a longest increasing subsequence) splits the rest into gaps, and each anchor's match is
   extended to the equal lines around it;
3. a gap small enough (at most GAP_LIMIT line pairs) goes to difflib, which is then bounded; a larger
   gap is aligned greedily, resynchronising on the nearest equal pair within WINDOW lines, or, when
   the alignment must be exact (splicing), is given up.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections import Counter
from collections.abc import Callable, Hashable, Sequence

Opcode = tuple[str, int, int, int, int]
GAP_LIMIT = 40_000
WINDOW = 24
PAIR_LIMIT = 10_000
_TOKEN = re.compile(rb"\w+|\S")


class _GiveUp(Exception):
    pass


def opcodes(a: Sequence[Hashable], b: Sequence[Hashable], exact: bool = False) -> list[Opcode] | None:
    """Returns difflib-style opcodes turning `a` into `b`; with `exact`, None where a large gap is ambiguous."""
    ids: dict[Hashable, int] = {}
    x = [ids.setdefault(line, len(ids)) for line in a]
    y = [ids.setdefault(line, len(ids)) for line in b]
    pairs: list[tuple[int, int]] = []  # equal lines (i, j), increasing in both
    try:
        _align(x, y, 0, len(x), 0, len(y), pairs, exact)
    except _GiveUp:
        return None
    return _to_opcodes(pairs, len(x), len(y))


def _align(
    x: list[int], y: list[int], alo: int, ahi: int, blo: int, bhi: int, pairs: list[tuple[int, int]], exact: bool
) -> None:
    while alo < ahi and blo < bhi and x[alo] == y[blo]:
        pairs.append((alo, blo))
        alo, blo = alo + 1, blo + 1
    tail = []
    while alo < ahi and blo < bhi and x[ahi - 1] == y[bhi - 1]:
        ahi, bhi = ahi - 1, bhi - 1
        tail.append((ahi, bhi))
    anchors = _anchors(x, y, alo, ahi, blo, bhi)
    i, j = alo, blo
    for ai, bj in anchors:
        if ai < i or bj < j:
            continue  # already matched by extending the previous anchor
        # extend the anchor backwards over equal lines inside the gap
        si, sj = ai, bj
        while si > i and sj > j and x[si - 1] == y[sj - 1]:
            si, sj = si - 1, sj - 1
        _gap(x, y, i, si, j, sj, pairs, exact)
        while si < ahi and sj < bhi and x[si] == y[sj]:
            pairs.append((si, sj))
            si, sj = si + 1, sj + 1
        i, j = si, sj
    _gap(x, y, i, ahi, j, bhi, pairs, exact)
    pairs.extend(reversed(tail))


def _anchors(x: list[int], y: list[int], alo: int, ahi: int, blo: int, bhi: int) -> list[tuple[int, int]]:
    """Returns the longest in-order run of lines that occur once in x[alo:ahi] and once in y[blo:bhi]."""
    count_a: dict[int, int] = {}
    where_a: dict[int, int] = {}
    for i in range(alo, ahi):
        count_a[x[i]] = count_a.get(x[i], 0) + 1
        where_a[x[i]] = i
    count_b: dict[int, int] = {}
    where_b: dict[int, int] = {}
    for j in range(blo, bhi):
        count_b[y[j]] = count_b.get(y[j], 0) + 1
        where_b[y[j]] = j
    candidates = sorted((where_a[v], where_b[v]) for v, n in count_a.items() if n == 1 and count_b.get(v) == 1)
    # longest increasing subsequence of the b-indices (patience sorting)
    tops: list[int] = []
    top_index: list[int] = []
    previous: list[int] = []
    for k, (_, j) in enumerate(candidates):
        pos = bisect.bisect_left(tops, j)
        previous.append(top_index[pos - 1] if pos else -1)
        if pos == len(tops):
            tops.append(j)
            top_index.append(k)
        else:
            tops[pos] = j
            top_index[pos] = k
    out = []
    k = top_index[-1] if top_index else -1
    while k >= 0:
        out.append(candidates[k])
        k = previous[k]
    return out[::-1]


def _gap(
    x: list[int], y: list[int], alo: int, ahi: int, blo: int, bhi: int, pairs: list[tuple[int, int]], exact: bool
) -> None:
    if alo >= ahi or blo >= bhi:
        return
    if (ahi - alo) * (bhi - blo) <= GAP_LIMIT:
        matcher = difflib.SequenceMatcher(None, x[alo:ahi], y[blo:bhi], autojunk=False)
        for i, j, size in matcher.get_matching_blocks():
            pairs.extend((alo + i + k, blo + j + k) for k in range(size))
        return
    if exact:
        raise _GiveUp
    i, j = alo, blo
    while i < ahi and j < bhi:
        if x[i] == y[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
            continue
        step = _resync(x, y, i, ahi, j, bhi)
        if step is None:
            i, j = i + 1, j + 1  # one line replaced by one line
        else:
            i, j = i + step[0], j + step[1]


def _resync(x: list[int], y: list[int], i: int, ahi: int, j: int, bhi: int) -> tuple[int, int] | None:
    """Returns the nearest (p, q), p + q <= WINDOW, with x[i + p] == y[j + q], or None."""
    for distance in range(1, WINDOW + 1):
        for p in range(distance + 1):
            q = distance - p
            if i + p < ahi and j + q < bhi and x[i + p] == y[j + q]:
                return p, q
    return None


def _to_opcodes(pairs: list[tuple[int, int]], n: int, m: int) -> list[Opcode]:
    out: list[Opcode] = []
    i = j = 0
    k = 0
    while k < len(pairs):
        pi, pj = pairs[k]
        if pi > i or pj > j:
            tag = "replace" if pi > i and pj > j else "delete" if pi > i else "insert"
            out.append((tag, i, pi, j, pj))
        run = 1
        while k + run < len(pairs) and pairs[k + run] == (pi + run, pj + run):
            run += 1
        out.append(("equal", pi, pi + run, pj, pj + run))
        i, j = pi + run, pj + run
        k += run
    if i < n or j < m:
        tag = "replace" if i < n and j < m else "delete" if i < n else "insert"
        out.append((tag, i, n, j, m))
    return out


def line_mapper(old: bytes, new: bytes) -> Callable[[int], int]:
    """Returns a function mapping 1-based lines of `old` to the matching lines of `new`."""
    a, b = old.splitlines(), new.splitlines()
    codes = opcodes(a, b) or []
    starts = [i1 for _, i1, _, _, _ in codes]
    paired: dict[int, list[int]] = {}  # a replace opcode's index -> each old line's offset among its new lines

    def mapped(line: int) -> int:
        index = line - 1
        k = bisect.bisect_right(starts, index) - 1  # the opcode covering the line (after insertions at it)
        if k < 0 or not codes[k][1] <= index < codes[k][2]:
            return line
        tag, i1, i2, j1, j2 = codes[k]
        if tag == "equal":
            return j1 + (index - i1) + 1
        if tag == "replace" and k not in paired:
            paired[k] = _pair(a[i1:i2], b[j1:j2])
        offset = paired[k][index - i1] if tag == "replace" else 0
        return j1 + offset + 1

    return mapped


def _tokens(line: bytes) -> Counter[bytes]:
    return Counter(_TOKEN.findall(line))


def _pair(old: Sequence[bytes], new: Sequence[bytes]) -> list[int]:
    """For each line of `old`, its offset in `new` (replaced lines, some deleted or inserted among them).

    The lines are paired in order where their tokens are most alike (an alignment maximising the summed
    likeness); a line left unpaired (deleted) goes to the line after the previous pair's. A block larger
    than PAIR_LIMIT line pairs is paired by position.
    """
    n, m = len(old), len(new)
    if n * m > PAIR_LIMIT:
        return [min(i, m - 1) for i in range(n)]
    a, b = [_tokens(line) for line in old], [_tokens(line) for line in new]
    like = [[2 * sum((x & y).values()) / (sum(x.values()) + sum(y.values()) or 1) for y in b] for x in a]
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best[i][j] = max(best[i + 1][j], best[i][j + 1], best[i + 1][j + 1] + like[i][j])
    out: list[int] = []
    i = j = 0
    while i < n:
        if j < m and like[i][j] > 0 and best[i][j] == best[i + 1][j + 1] + like[i][j]:
            out.append(j)
            i, j = i + 1, j + 1
        elif j < m and best[i][j] == best[i][j + 1]:
            j += 1
        else:
            out.append(min(j, m - 1))
            i += 1
    return out


def unified(old: list[str], new: list[str], from_name: str, to_name: str, context: int = 3) -> list[str]:
    """Returns the lines of a unified diff from `old` to `new` (lines with their endings)."""
    codes = opcodes(old, new) or []
    if all(tag == "equal" for tag, *_ in codes):
        return []
    hunks: list[list[Opcode]] = []
    current: list[Opcode] = []
    for k, (tag, i1, i2, j1, j2) in enumerate(codes):
        if tag == "equal":
            if k == 0:  # leading context
                i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
            elif k == len(codes) - 1:
                i2, j2 = min(i2, i1 + context), min(j2, j1 + context)
            elif i2 - i1 > 2 * context:
                current.append((tag, i1, i1 + context, j1, j1 + context))
                hunks.append(current)
                current = [(tag, i2 - context, i2, j2 - context, j2)]
                continue
        current.append((tag, i1, i2, j1, j2))
    if current and not (len(current) == 1 and current[0][0] == "equal"):
        hunks.append(current)
    out = [f"--- {from_name}\n", f"+++ {to_name}\n"]
    for hunk in hunks:
        a1, a2, b1, b2 = hunk[0][1], hunk[-1][2], hunk[0][3], hunk[-1][4]
        out.append(f"@@ -{_range(a1, a2)} +{_range(b1, b2)} @@\n")
        for tag, i1, i2, j1, j2 in hunk:
            if tag == "equal":
                out += [" " + line for line in old[i1:i2]]
                continue
            out += ["-" + line for line in old[i1:i2]]
            out += ["+" + line for line in new[j1:j2]]
    return out


def _range(start: int, stop: int) -> str:
    length = stop - start
    first = start + 1 if length else start
    return f"{first}" if length == 1 else f"{first},{length}"
