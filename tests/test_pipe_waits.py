"""What the busiest pipe waits for (`dan.dialect.model.pipe_waits`): idle cycles before its
first node, after its last, and each gap named by the node it waited for, through an
address reuse where the layout made it wait."""

from __future__ import annotations

import pytest

from dan.dialect.model.graph import Plan
from dan.dialect.model.pipe_waits import pipe_waits
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST
from dan.tools.dan_replay import waits_lines
from tests.test_bounds import kernel

MTE2, VECTOR = CONTEST.pipes.index("MTE2"), CONTEST.pipes.index("VECTOR")


def two_tiles():
    # a and b each fill UB: b's ALLOC waits for a's FREE (address reuse at offset 0).
    # Nodes: ALLOC a 0, ALLOC b 1, COPY_IN a 2, V a 3, COPY_IN b 4, V b 5, FREE a 6, FREE b 7.
    g = kernel([("COPY_IN", "MTE2", 5, ("a",)), ("V", "VECTOR", 5, ("a",)),
                ("COPY_IN", "MTE2", 5, ("b",)), ("V", "VECTOR", 7, ("b",))],
               [(0, 1), (2, 3)], {"a": (1024, "UB"), "b": (1024, "UB")})
    plan = Plan([0, 2, 3, 6, 1, 4, 5, 7], offsets=[0, 0])
    return g, plan, replay(g, plan, CONTEST, edges=True)


def test_gaps_are_named_by_what_they_wait_for() -> None:
    g, plan, m = two_tiles()
    assert m.valid and m.makespan == 22  # COPY_IN a 0-5, V a 5-10, COPY_IN b 10-15, V b 15-22
    mte2 = pipe_waits(g, plan, CONTEST, m, MTE2)
    assert (mte2.before, mte2.after) == (0, 7)
    assert mte2.causes == (("VECTOR V (address reuse after FREE)", 5),)
    vector = pipe_waits(g, plan, CONTEST, m, VECTOR)
    assert (vector.before, vector.after, vector.causes) == (5, 0, (("MTE2 COPY_IN", 5),))
    assert vector.total == m.makespan - 12 and mte2.total == m.makespan - 10


def test_other_offsets_leave_no_reuse_wait() -> None:
    g, plan, _ = two_tiles()
    g.buf_size[0] = g.buf_size[1] = 512  # both fit side by side: b needs no FREE of a
    plan = Plan(plan.order, offsets=[0, 512])
    m = replay(g, plan, CONTEST, edges=True)
    assert m.valid and pipe_waits(g, plan, CONTEST, m, MTE2).causes == ()


def test_report_line_and_its_preconditions() -> None:
    g, plan, m = two_tiles()
    line = waits_lines(pipe_waits(g, plan, CONTEST, m, MTE2), shown=0)[0]
    assert line == "  idle causes:   MTE2 0 before its first node, 7 after its last; between nodes waiting on 1 more causes 5"
    with pytest.raises(ValueError):
        pipe_waits(g, plan, CONTEST, replay(g, plan, CONTEST), MTE2)  # no edges
    idle = pipe_waits(g, plan, CONTEST, m, CONTEST.pipes.index("CUBE"))
    assert (idle.before, idle.after, idle.causes) == (m.makespan, 0, ())
