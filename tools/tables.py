"""Tables as text: numbers with thousands separators, ratios, Markdown and CSV."""

from __future__ import annotations

import csv
import io


def fmt(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.3f}"


def ratio_text(value: int, base: int) -> str:
    return f"{value / base:.3f}" if base else ("1.000" if value == 0 else "inf")


def markdown(title: str, head: list[str], rows: list[list[str]]) -> str:
    lines = [f"### {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def csv_text(head: list[str], rows: list[list[str]]) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(head)
    w.writerows(rows)
    return out.getvalue()
