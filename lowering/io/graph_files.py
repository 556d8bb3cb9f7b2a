"""Read and write graphs in the public formats: JSON `{"Nodes", "Edges"}` and the CSV pair.

Readers return a checked `KernelGraph` named after the file stem, nodes in input order;
any problem raises `GraphError` with a one-line message naming the file.
"""

from __future__ import annotations

import csv
import json
import re
from itertools import chain
from pathlib import Path
from typing import Any

from dan.dialect.model.graph import ALLOC, FREE, GraphError, KernelGraph, NodeRecord, build_graph
from dan.dialect.model.target import CONTEST, Core
from dan.lowering.io.atomic import atomic_write


def graph_name(path: str | Path) -> str:
    """Kernel name for a graph file: the stem, without `_Nodes`/`_Edges` for CSV."""
    stem = Path(path).stem
    for suffix in ("_Nodes", "_Edges"):
        if stem.endswith(suffix):
            return stem[: -len(suffix)]
    return stem


def _int(value: Any, what: str) -> int:
    if type(value) is int:
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value.strip()):
            return int(value)
        raise GraphError(f"{what}: expected an integer, got {json.dumps(value)}")
    return value


def _field(node: dict[str, Any], key: str, nid: int) -> int:
    """An integer field of a node (the message is made only when it is wrong)."""
    value = node[key]
    return value if type(value) is int else _int(value, f"node {nid} '{key}'")


_new_tuple = tuple.__new__


def _record(node: Any) -> NodeRecord | None:
    """The record of a node whose fields all have their types already (the common
    case), else None (`_checked_record` converts or rejects the others)."""
    if type(node) is dict:
        nid, op = node.get("Id"), node.get("Op")
        if type(nid) is int:
            if op == "ALLOC" or op == "FREE":
                b, size, tier = node.get("BufId"), node.get("Size"), node.get("Type")
                if type(b) is int and type(size) is int and type(tier) is str:
                    return _new_tuple(NodeRecord, (nid, op, b, size, tier, "", 0, ()))
            elif type(op) is str and op:
                pipe, cycles, bufs = node.get("Pipe"), node.get("Cycles"), node.get("Bufs")
                if type(pipe) is str and type(cycles) is int and type(bufs) is list:
                    ids = tuple(bufs)
                    for x in ids:
                        if type(x) is not int:
                            break
                    else:
                        return _new_tuple(NodeRecord, (nid, op, -1, 0, "", pipe, cycles, ids))
    return None


def _checked_record(node: Any, where: str) -> NodeRecord:
    if type(node) is not dict:
        raise GraphError(f"{where}: a node must be an object")
    if "Id" not in node or "Op" not in node:
        raise GraphError(f"{where}: a node needs 'Id' and 'Op'")
    nid = node["Id"]
    if type(nid) is not int:
        nid = _int(nid, f"{where} 'Id'")
    op = node["Op"]
    if not isinstance(op, str) or not op:
        raise GraphError(f"node {nid}: 'Op' must be a non-empty string")
    try:
        if op == "ALLOC" or op == "FREE":
            return NodeRecord(nid, op, _field(node, "BufId", nid), _field(node, "Size", nid), str(node["Type"]))
        bufs = node.get("Bufs", ())
        if type(bufs) is not list:
            raise GraphError(f"node {nid}: 'Bufs' must be a list")
        ids = tuple(bufs)
        if not all(type(b) is int for b in ids):
            ids = tuple(_int(b, f"node {nid} 'Bufs'") for b in bufs)
        return NodeRecord(nid, op, -1, 0, "", str(node["Pipe"]), _field(node, "Cycles", nid), ids)
    except KeyError as e:
        raise GraphError(f"node {nid} ({op}): missing field '{e.args[0]}'") from None


def parse_graph_json(text: str, name: str, core: Core = CONTEST) -> KernelGraph:
    """A graph for `core` from the text of a JSON graph file."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise GraphError(f"malformed JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise GraphError("malformed JSON: nested too deeply") from None
    if not isinstance(data, dict) or not isinstance(data.get("Nodes"), list) or not isinstance(data.get("Edges", []), list):
        raise GraphError("expected an object with a 'Nodes' list and an 'Edges' list")
    if "Edges" not in data:
        raise GraphError("no 'Edges' list (a graph without edges has \"Edges\": [])")
    records = [_record(node) or _checked_record(node, f"node #{i}") for i, node in enumerate(data["Nodes"])]
    edges = data["Edges"]
    if not _plain_edges(edges):
        edges = _checked_edges(edges)
    return build_graph(name, records, edges, core)


def _plain_edges(edges: list[Any]) -> bool:
    """True when every edge is a list of two ints (then it is used as it is)."""
    return (
        set(map(type, edges)) <= {list}
        and set(map(len, edges)) <= {2}
        and set(map(type, chain.from_iterable(edges))) <= {int}
    )


def _checked_edges(raw: list[Any]) -> list[tuple[int, int]]:
    """The (src, dst) id pairs of `raw`; GraphError names the first malformed edge."""
    edges = []
    for e in raw:
        if type(e) is not list or len(e) != 2:
            raise GraphError(f"edge {json.dumps(e)}: expected [src, dst]")
        s, d = e
        if type(s) is not int or type(d) is not int:
            s, d = _int(s, "edge source"), _int(d, "edge target")
        edges.append((s, d))
    return edges


def _read_csv(path: Path) -> list[dict[str, str]]:
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        raise GraphError(f"cannot read '{path.name}': {e.strerror}") from None
    except (csv.Error, UnicodeDecodeError) as e:
        raise GraphError(f"'{path.name}': malformed CSV: {e}") from None


def read_graph_csv(path: str | Path, core: Core = CONTEST) -> KernelGraph:
    """A graph from `NAME_Nodes.csv` and `NAME_Edges.csv` (either may be named).

    Nodes: `Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs` with `Bufs` as ids separated by
    spaces, semicolons or commas (optionally bracketed). Edges: two columns, src and dst.
    """
    path = Path(path)
    name = graph_name(path)
    nodes_path = path.with_name(f"{name}_Nodes.csv")
    edges_path = path.with_name(f"{name}_Edges.csv")
    records = []
    for i, row in enumerate(_read_csv(nodes_path)):
        if None in row or "Id" not in row or "Op" not in row:
            raise GraphError(f"'{nodes_path.name}' row {i + 2}: expected columns Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs")
        node: dict[str, Any] = {k: v for k, v in row.items() if v not in ("", None)}
        if "Bufs" in node:
            raw = node["Bufs"].strip("[]\"' ").replace(";", " ").replace(",", " ")
            node["Bufs"] = raw.split()
        records.append(_record(node) or _checked_record(node, f"'{nodes_path.name}' row {i + 2}"))
    edges = []
    try:
        with edges_path.open(newline="") as f:
            rows = [row for row in csv.reader(f) if any(cell.strip() for cell in row)]
    except OSError as e:
        raise GraphError(f"cannot read '{edges_path.name}': {e.strerror}") from None
    except (csv.Error, UnicodeDecodeError) as e:
        raise GraphError(f"'{edges_path.name}': malformed CSV: {e}") from None
    for i, row in enumerate(rows):
        if len(row) < 2:
            raise GraphError(f"'{edges_path.name}' row {i + 1}: expected src,dst")
        if i == 0 and not re.fullmatch(r"-?[0-9]+", row[0].strip()):
            continue  # header
        edges.append((_int(row[0].strip(), f"'{edges_path.name}' row {i + 1}"), _int(row[1].strip(), f"'{edges_path.name}' row {i + 1}")))
    return build_graph(name, records, edges, core)


def read_graph(path: str | Path, core: Core = CONTEST) -> KernelGraph:
    """A graph for `core` from a `.json` file or a `.csv` pair; errors name the file."""
    path = Path(path)
    if path.suffix == ".csv":
        return read_graph_csv(path, core)
    return read_graph_json(path, core)


def read_graph_json(path: str | Path, core: Core = CONTEST) -> KernelGraph:
    """A graph for `core` from a graph JSON file, whatever its name; errors name the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise GraphError(f"cannot read '{path}': {e.strerror}") from None
    except UnicodeDecodeError:
        raise GraphError(f"'{path}': not UTF-8 text") from None
    try:
        return parse_graph_json(text, graph_name(path), core)
    except GraphError as e:
        raise GraphError(f"'{path.name}': {e}") from None


def graph_to_json(graph: KernelGraph, core: Core = CONTEST) -> dict[str, Any]:
    """The public JSON form of a graph built for `core` (original nodes and edges only)."""
    nodes: list[dict[str, Any]] = []
    for v in range(graph.n):
        nid = graph.node_ids[v]
        if graph.kinds[v] in (ALLOC, FREE):
            b = graph.node_bufs[v][0]
            nodes.append({"Id": nid, "Op": graph.ops[v], "BufId": graph.buf_ids[b],
                          "Size": graph.buf_size[b], "Type": core.tiers[graph.buf_tier[b]]})
        else:
            nodes.append({"Id": nid, "Op": graph.ops[v], "Pipe": core.pipes[graph.pipes[v]],
                          "Cycles": graph.cycles[v], "Bufs": [graph.buf_ids[b] for b in graph.node_bufs[v]]})
    edges = [[graph.node_ids[u], graph.node_ids[v]] for u, v in sorted(graph.edges())]
    return {"Nodes": nodes, "Edges": edges}


def graph_json_text(graph: KernelGraph, core: Core = CONTEST) -> str:
    """The text of a graph JSON file (one line per field, newline-terminated)."""
    return json.dumps(graph_to_json(graph, core), indent=1) + "\n"


def write_graph_json(graph: KernelGraph, path: str | Path, core: Core = CONTEST) -> None:
    atomic_write(Path(path), graph_json_text(graph, core))
