"""dan-gen's guards: the node count of every family computed from its shape before
building (and the limit on it), --count refused when every kernel would be the same,
Ctrl-C answered at once."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dan.lowering.gen.flash_attention import FlashShape
from dan.lowering.gen.presets import FAMILIES, PRESETS, like, make_shape
from tests.test_cli import ROOT, assert_one_line_error, cli


def test_node_counts_are_those_of_the_built_kernels() -> None:
    for name, (family, shape, _) in PRESETS.items():
        assert FAMILIES[family].nodes(shape) == like(name).n, name
    for family, fam in FAMILIES.items():
        for seed in range(40):
            shape = make_shape(family, {}, seed)
            counted, built = fam.nodes(shape), fam.build(shape, "k").n
            if fam.nodes_are == "exactly":
                assert counted == built, shape
            elif fam.nodes_are == "at most":
                assert built <= counted, shape
            else:
                assert counted <= built, shape


def test_causal_pairs_are_counted_without_listing_them() -> None:
    for q in range(1, 30):
        for kv in range(1, 30):
            shape = FlashShape(q, kv, causal=True)
            assert shape.pair_count() == len(shape.pairs()), shape
    assert FlashShape(1 << 20, 1 << 20, causal=True).pair_count() == (1 << 20) * ((1 << 20) + 1) // 2


@pytest.mark.parametrize("args, message", [
    (("matmul", "--m", "100000", "--n", "100000", "--k", "100000"),
     "matmul_100000x100000x100000 would have 7,000,090,000,000,000 nodes, over the limit of 1,000,000 "
     "(raise it with --max-nodes N)"),
    (("matmul", "--shapes", "2x2x2,100000x100000x100000", "--count", "1"), "matmul_100000x100000x100000 would have"),
    (("matmul", "--m", "2", "--n", "2", "--k", "2", "--max-nodes", "91"),
     "matmul_2x2x2 would have 92 nodes, over the limit of 91"),
    (("flash-attention", "--q-blocks", "1000", "--kv-blocks", "1000", "--causal"), "flash_attention_1000x1000 would have 55,044,000 nodes"),
    (("conv", "--layers", "100000", "--blocks", "4"), "conv_100000x4x4 would have 36,800,064 nodes"),
    (("random", "--layers", "100000", "--width", "1000"), "would have at most 300,001,000 nodes"),
    (("packing", "--buffers", "1000000"), "packing_1000000 would have at least 4,000,000 nodes"),
    (("matmul", "--m", "9" * 30), "would have more than 10^"),
    (("flash-attention", "--kv-blocks", "9" * 400, "--causal"), "would have more than 10^"),
    (("matmul", "--max-nodes", "0"), "--max-nodes must be at least 1"),
    (("conv", "--layers", "1000000000000", "--upsample", "1"), "grow blocks past L1"),
])
def test_a_kernel_over_the_node_limit_is_refused_before_it_is_built(args: tuple[str, ...], message: str,
                                                                     tmp_path: Path) -> None:
    out = tmp_path / "out"
    sweep = ("-o", str(out)) if "--shapes" in args else ()
    assert_one_line_error(cli("dan-gen", *args, *sweep), "dan-gen", message)
    assert not out.exists()  # nothing half-written, not even the directory


def test_max_nodes_raises_the_limit(tmp_path: Path) -> None:
    p = cli("dan-gen", "matmul", "--m", "2", "--n", "2", "--k", "2", "--max-nodes", "92", "-o", str(tmp_path / "k.json"))
    assert p.returncode == 0 and p.stderr == ""


@pytest.mark.parametrize("args, label", [
    (("matmul", "--shapes", "4x4x4", "--tile", "128", "--count", "3"), "3 identical matmul_4x4x4 kernels"),
    (("matmul", "--m", "1", "--n", "1", "--k", "2", "--tile", "64", "--count", "2"), "2 identical matmul_1x1x2"),
    (("flash-attention", "--shapes", "2x2", "--d-chunks", "1", "--v-chunks", "1", "--block", "64", "--no-causal",
      "--count", "2"), "2 identical flash_attention_2x2 kernels"),
    (("conv", "--shapes", "2x2x2", "--halo", "1", "--fmap", "0", "--residual", "--upsample", "0", "--count", "2"),
     "2 identical conv_2x2x2 kernels"),
])
def test_count_of_a_shape_that_fixes_the_kernel_is_refused(args: tuple[str, ...], label: str, tmp_path: Path) -> None:
    p = cli("dan-gen", *args, "-o", str(tmp_path / "out"))
    assert_one_line_error(p, "dan-gen", f"--count {args[-1]} would write {label}")
    assert "leave a field unset for the seeds to draw, or drop --count" in p.stderr
    assert not (tmp_path / "out").exists()


def test_count_varies_what_the_seeds_draw_and_notes_repeats(tmp_path: Path) -> None:
    for kind, shape in (("random", "3x3"), ("packing", "30")):  # the seeds draw the kernel's own seed
        every = {"random": ("--reach", "1", "--accumulate", "0.5"), "packing": ("--capacity", "4096", "--granule", "16",
                                                                             "--drop", "0")}[kind]
        p = cli("dan-gen", kind, "--shapes", shape, *every, "--count", "3", "-o", str(tmp_path / kind))
        assert p.returncode == 0 and p.stderr == "", p.stderr
        assert len({f.read_text() for f in (tmp_path / kind).iterdir()}) == 3
    p = cli("dan-gen", "matmul", "--shapes", "4x4x4", "--count", "3", "-o", str(tmp_path / "mm"))
    assert p.returncode == 0 and len(list((tmp_path / "mm").iterdir())) == 3
    assert p.stderr == ("dan-gen: note: 2 of the 3 matmul_4x4x4 kernels repeat an earlier one "
                        "(matmul_4x4x4_s1 = matmul_4x4x4_s0): the seeds draw only tile\n")
    assert cli("dan-gen", "matmul", "--m", "1", "--n", "1", "--k", "1", "--tile", "64", "--count", "1",
               "-o", str(tmp_path / "one")).returncode == 0


def test_ctrl_c_stops_at_once_with_one_line(tmp_path: Path) -> None:
    out = tmp_path / "big.json"
    code = "import sys; from dan.tools.dan_gen import main; sys.argv[0] = 'dan-gen'; main()"
    p = subprocess.Popen([sys.executable, "-c", code, "matmul", "--m", "64", "--n", "64", "--k", "32", "-o", str(out)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(4)  # well into building its 950k nodes
    p.send_signal(signal.SIGINT)
    started = time.monotonic()
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130 and err == "dan-gen: interrupted: nothing written\n"
    assert time.monotonic() - started < 5
    assert list(tmp_path.iterdir()) == []
