"""Where the shared workloads and golden plans live (../shared from the project root)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
WORKLOADS = SHARED / "workloads"
GOLDEN = SHARED / "golden"
CASES = ("Matmul_Case0", "FlashAttention_Case0", "Conv_Case0")


def workload(case: str) -> Path:
    path = WORKLOADS / f"{case}.json"
    if not path.exists():
        pytest.skip(f"{path} is not here (../shared absent)")
    return path


def golden_dir(case: str) -> Path:
    path = GOLDEN / case
    if not (path / "expected.json").exists():
        pytest.skip(f"{path} is not here (../shared absent)")
    return path


def expected(case: str) -> dict:
    return json.loads((golden_dir(case) / "expected.json").read_text())
