"""A kernel written as a straight-line program, with edges derived the way the traced
Davinci kernels in `../shared/workloads` have them.

A generator calls `alloc` and `op` in program order; `finish` appends one FREE per
buffer (in buffer order) and builds the graph. Node ids are the call order; buffer ids
the order of the ALLOCs. The edge rule (it reproduces all edges of the three public
traces exactly):

- an operation's first `writes` buffers are its outputs, the rest its inputs;
- every buffer an operation touches gets an edge from the buffer's last writer (its
  ALLOC until some operation wrote it); a write also waits for the reads since the
  last write (never needed in the traces);
- `FREE(b)` gets an edge from `ALLOC(b)` and from each reader of `b` that is not a
  direct predecessor of a later reader of `b` (the rest are ordered through it), and
  from the last writer of `b` when nothing read `b` after it (never so in the traces).
"""

from __future__ import annotations

from dan.dialect.model.graph import KernelGraph, NodeRecord, build_graph
from dan.dialect.model.target import CONTEST, Core


class Trace:
    """Records nodes and edges of one kernel in program order."""

    def __init__(self) -> None:
        self.records: list[NodeRecord] = []
        self.edges: list[tuple[int, int]] = []
        self.buffers: list[tuple[int, str, int]] = []  # (size, tier, alloc node) per buffer
        self.last_writer: list[int] = []
        self.readers: list[list[int]] = []
        self.unread: list[bool] = []  # written since the last read
        self.recent_reads: list[list[int]] = []  # readers since the last write

    def _node(self, **fields: object) -> int:
        nid = len(self.records)
        self.records.append(NodeRecord(nid, **fields))  # type: ignore[arg-type]
        return nid

    def alloc(self, size: int, tier: str) -> int:
        """A new buffer of `size` bytes in `tier` (its ALLOC node is emitted now)."""
        buf = len(self.buffers)
        nid = self._node(op="ALLOC", buf=buf, size=size, tier=tier)
        self.buffers.append((size, tier, nid))
        self.last_writer.append(nid)
        self.readers.append([])
        self.unread.append(False)
        self.recent_reads.append([])
        return buf

    def op(self, name: str, pipe: str, cycles: int, bufs: list[int] | tuple[int, ...], writes: int = 1) -> int:
        """An operation on `bufs` (outputs first, `writes` of them); returns its node id."""
        nid = self._node(op=name, pipe=pipe, cycles=max(int(cycles), 1), bufs=tuple(bufs))
        preds = {self.last_writer[b] for b in bufs}
        preds.update(r for b in bufs[:writes] for r in self.recent_reads[b])
        self.edges.extend((p, nid) for p in sorted(preds))
        for b in bufs[writes:]:
            self.readers[b] = [r for r in self.readers[b] if r not in preds] + [nid]
            self.unread[b] = False
            self.recent_reads[b].append(nid)
        for b in bufs[:writes]:
            self.last_writer[b] = nid
            self.unread[b] = True
            self.recent_reads[b] = []
        return nid

    def finish(self, name: str, core: Core = CONTEST) -> KernelGraph:
        """FREE every buffer (in buffer order) and build the checked graph."""
        for buf, (size, tier, alloc_node) in enumerate(self.buffers):
            nid = self._node(op="FREE", buf=buf, size=size, tier=tier)
            self.edges.append((alloc_node, nid))
            self.edges.extend((r, nid) for r in self.readers[buf])
            if self.unread[buf]:
                self.edges.append((self.last_writer[buf], nid))
        return build_graph(name, self.records, self.edges, core)
