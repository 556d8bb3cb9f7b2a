"""Graph frontends: the public JSON and the CSV pair, and one error per bad-input class."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dan.dialect.model.graph import ALLOC, FREE, OP, GraphError
from dan.lowering.io.graph_files import graph_to_json, parse_graph_json, read_graph
from tests.shared_data import CASES, workload

TINY = {
    "Nodes": [
        {"Id": 0, "Op": "ALLOC", "BufId": 7, "Size": 64, "Type": "UB"},
        {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [7]},
        {"Id": 2, "Op": "EXP", "Pipe": "VECTOR", "Cycles": 5, "Bufs": [7]},
        {"Id": 3, "Op": "FREE", "BufId": 7, "Size": 64, "Type": "UB"},
    ],
    "Edges": [[0, 1], [1, 2], [2, 3]],
}


def tiny(**changes: object) -> dict:
    data = json.loads(json.dumps(TINY))
    data.update(changes)
    return data


def test_tiny_graph_arrays() -> None:
    g = parse_graph_json(json.dumps(TINY), "tiny")
    assert g.name == "tiny" and g.n == 4
    assert g.kinds == [ALLOC, OP, OP, FREE]
    assert g.buf_ids == [7] and g.buf_size == [64] and g.buf_clean == [True]
    assert g.preds == [[], [0], [1], [2]]
    assert g.buf_uses == [[1, 2]]


def test_json_round_trip_keeps_nodes_and_edges() -> None:
    g = parse_graph_json(json.dumps(TINY), "tiny")
    assert graph_to_json(g) == TINY


@pytest.mark.parametrize("case", CASES)
def test_workload_round_trip(case: str) -> None:
    path = workload(case)
    data = json.loads(path.read_text())
    g = read_graph(path)
    back = graph_to_json(g)
    assert back["Nodes"] == data["Nodes"]
    assert sorted(map(tuple, back["Edges"])) == sorted(map(tuple, data["Edges"]))


def test_csv_pair(tmp_path: Path) -> None:
    (tmp_path / "k_Nodes.csv").write_text(
        "Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs\n"
        "0,ALLOC,7,64,UB,,,\n1,COPY_IN,,,,MTE2,10,7\n2,EXP,,,,VECTOR,5,\"[7]\"\n3,FREE,7,64,UB,,,\n"
    )
    (tmp_path / "k_Edges.csv").write_text("0,1\n1,2\n2,3\n")
    g = read_graph(tmp_path / "k_Nodes.csv")
    assert g.name == "k"
    assert graph_to_json(g) == TINY


BAD = [
    (tiny(Edges=[[0, 1], [1, 2], [2, 3], [2, 9]]), "edge 2 -> 9 names unknown node 9"),
    (tiny(Nodes=TINY["Nodes"] + [{"Id": 1, "Op": "EXP", "Pipe": "VECTOR", "Cycles": 1, "Bufs": []}]), "duplicate node id 1"),
    (tiny(Edges=[[0, 1], [1, 2], [2, 3], [2, 1]]), "the edges form a cycle through node 1"),
    (tiny(Nodes=TINY["Nodes"][1:3] + TINY["Nodes"][3:], Edges=[[1, 2], [2, 3]]), "buffer 7 is used but never allocated"),
    (tiny(Nodes=TINY["Nodes"][:3], Edges=[[0, 1], [1, 2]]), "buffer 7 is allocated but never freed"),
    (tiny(Edges=[[1, 2], [2, 3]]), "node 1 uses buffer 7 but the edges do not order it after ALLOC node 0"),
    (tiny(Edges=[[0, 1], [1, 2], [1, 3]]), "node 2 uses buffer 7 but the edges do not order it before FREE node 3"),
    (tiny(Nodes=[dict(TINY["Nodes"][0], Type="L2")] + TINY["Nodes"][1:]), "node 0: unknown tier 'L2' (tiers: L1, UB, L0A, L0B, L0C)"),
    (tiny(Nodes=TINY["Nodes"][:1] + [dict(TINY["Nodes"][1], Pipe="DMA")] + TINY["Nodes"][2:]), "node 1: unknown pipe 'DMA' (pipes: MTE1, MTE2, MTE3, FIXP, CUBE, VECTOR)"),
    (tiny(Nodes=[dict(TINY["Nodes"][0], Size=-4)] + TINY["Nodes"][1:]), "node 0: negative size -4"),
    (tiny(Nodes=TINY["Nodes"][:2] + [dict(TINY["Nodes"][2], Cycles=-1)] + TINY["Nodes"][3:]), "node 2: negative cycles -1"),
    (tiny(Nodes=[], Edges=[]), "empty graph: no nodes"),
    (tiny(Nodes=TINY["Nodes"][:1] + [{"Id": 1, "Op": "COPY_IN", "Cycles": 10, "Bufs": [7]}] + TINY["Nodes"][2:]), "node 1 (COPY_IN): missing field 'Pipe'"),
    (tiny(Nodes=[dict(TINY["Nodes"][0], Size="big")] + TINY["Nodes"][1:]), 'node 0 \'Size\': expected an integer, got "big"'),
    ({"nodes": []}, "expected an object with a 'Nodes' list and an 'Edges' list"),
]


@pytest.mark.parametrize(("data", "message"), BAD)
def test_bad_graph_message(data: dict, message: str) -> None:
    with pytest.raises(GraphError) as e:
        parse_graph_json(json.dumps(data), "bad")
    assert str(e.value) == message


def test_malformed_json_message() -> None:
    with pytest.raises(GraphError, match=r"^malformed JSON at line 1 column 2: "):
        parse_graph_json("{oops", "bad")


def test_missing_file_message(tmp_path: Path) -> None:
    with pytest.raises(GraphError, match="cannot read .*nope.json.*: No such file or directory"):
        read_graph(tmp_path / "nope.json")


def test_op_names_must_be_plain_ascii() -> None:
    bad = tiny(Nodes=TINY["Nodes"][:2] + [dict(TINY["Nodes"][2], Op="é")] + TINY["Nodes"][3:])
    with pytest.raises(GraphError) as e:
        parse_graph_json(json.dumps(bad), "bad")
    assert str(e.value) == "node 2: op name 'é' must be ASCII letters, digits, '_', '.' or '-'"


def test_fields_written_as_numeric_strings_read_as_integers() -> None:
    """Nodes whose integers are written as strings, or an op listing a buffer before its
    ALLOC, read into the same arrays as the plain form."""
    nodes = [dict(node) for node in TINY["Nodes"]]
    nodes[0].update(Id="0", BufId="7", Size="64")
    nodes[1].update(Cycles="10", Bufs=["7"])
    nodes[2], nodes[0] = nodes[0], nodes[2]  # EXP (a use of buffer 7) is listed first
    plain = parse_graph_json(json.dumps(TINY), "tiny")
    mixed = parse_graph_json(json.dumps(tiny(Nodes=nodes)), "tiny")
    assert mixed.buf_ids == plain.buf_ids and mixed.buf_size == plain.buf_size
    assert sorted(zip(mixed.node_ids, mixed.cycles, mixed.node_bufs)) == sorted(zip(plain.node_ids, plain.cycles, plain.node_bufs))
