"""Pass options: each pass embeds its core's options, every option is reachable from
`-p`, one validation with one error type and one wording; the named-pipeline table."""

from __future__ import annotations

import dataclasses

import pytest
from xdsl.passes import PassPipeline
from xdsl.utils.arg_spec import parse_pipeline

from dan.passes.baselines.hmcos.order import HmcosOptions
from dan.passes.pipeline.module_passes import HmcosPass
from dan.passes.pipeline.module_passes import CpePass
from dan.passes.dan.cpe.options import CpeOptions
from dan.passes.pipeline.module_passes import DlrPass
from dan.passes.dan.dlr.options import SPEC, DlrOptions
from dan.passes.pipeline.module_passes import MpasPass
from dan.passes.dan.mpas.options import MpasOptions
from dan.passes.pipeline.named import PIPELINES, pipeline
from dan.passes.pipeline.options import OptionError, check_options
from dan.passes.pipeline.pass_options import option_help, spell_pass
from dan.passes.pipeline.registry import DAN_PASSES
from dan.passes.pipeline.module_passes import PrefetchPass
from dan.passes.search.prefetch.options import PrefetchOptions
from dan.passes.pipeline.module_passes import TunePass
from dan.passes.search.tune.options import WIDE_CPE, TuneOptions

EMBEDDED = [(MpasPass, MpasOptions), (DlrPass, DlrOptions), (CpePass, CpeOptions),
            (PrefetchPass, PrefetchOptions), (TunePass, TuneOptions), (HmcosPass, HmcosOptions)]


def parsed(spec: str) -> object:
    """The one pass `spec` names, built as dan-opt builds it (type check first)."""
    check_options(DAN_PASSES, spec)
    (p,) = PassPipeline.parse_spec(DAN_PASSES, spec).passes
    return p


@pytest.mark.parametrize("pass_type, options_type", EMBEDDED)
def test_every_option_is_a_pass_field_with_its_default(pass_type: type, options_type: type) -> None:
    fields = [f.name for f in dataclasses.fields(pass_type)]
    options = [f.name for f in dataclasses.fields(options_type)]
    assert fields[: len(options)] == options
    assert pass_type().options() == options_type()  # type: ignore[attr-defined]
    docs = {name: doc for name, _, doc in option_help(pass_type)}
    assert all(docs[name.replace("_", "-")] for name in fields), docs


@pytest.mark.parametrize("spec, field, value", [
    ("mpas{policy=memory-first}", "policy", "memory-first"),
    ("mpas{l0-rule=false}", "l0_rule", False),
    ("dlr{early-window=4}", "early_window", 4),
    ("dlr{tie_break=lru policy=belady}", "tie_break", "lru"),
    ("dlr{stall=0.5}", "stall", 0.5),
    ("cpe{move-events=true}", "move_events", True),
    ("prefetch{pipes=MTE2,MTE1}", "pipes", ("MTE2", "MTE1")),
    ("prefetch{tiers=L1}", "tiers", ("L1",)),
    ("prefetch{keep-pipe-order=false}", "keep_pipe_order", False),
    ("tune{objective=peak,makespan}", "objective", ("peak", "makespan")),
    ("tune{policies=balanced}", "policies", ("balanced",)),
    ("hmcos{rounds=0}", "rounds", 0),
])
def test_every_kind_of_option_is_reachable_from_the_pipeline(spec: str, field: str, value: object) -> None:
    assert getattr(parsed(spec).options(), field) == value  # type: ignore[attr-defined]


def test_dlr_spec_keeps_the_policy_and_weights_only() -> None:
    assert parsed("dlr{spec=true policy=lru alignment=4 placement=oldest}").options() == dataclasses.replace(  # type: ignore[attr-defined]
        SPEC, policy="lru", alignment=4
    )


def test_tune_portfolio_is_spelled_as_the_passes_that_take_it() -> None:
    assert TunePass().prefetches == ("none", "prefetch", "prefetch{capacity-bound=false}")
    assert TunePass().cpe == "cpe{window=32 passes=4}" == spell_pass(CpePass, WIDE_CPE)
    p = parsed('tune{prefetches="none","prefetch{lookahead=8}" dlrs="dlr","dlr{policy=lru}" cpe=none}')
    assert p.options() == TuneOptions(  # type: ignore[attr-defined]
        prefetches=(None, PrefetchOptions(lookahead=8)), dlrs=(DlrOptions(), DlrOptions(policy="lru")), cpe=None
    )
    for text, problem in [
        ('tune{dlrs="cpe"}', "option 'dlrs' of pass 'tune': expects 'dlr' or 'dlr{...}', got 'cpe'"),
        ('tune{cpe="cpe{window=0}"}', "option 'cpe' of pass 'tune': in 'cpe{window=0}': option 'window' of pass 'cpe': must be >= 1, got 0"),
        ('tune{prefetches="prefetch{depth=2}"}', "pass 'prefetch' has no option 'depth'"),
        ("tune{dlrs=none}", "expects 'dlr' or 'dlr{...}', got 'none'"),
    ]:
        with pytest.raises(OptionError, match=problem.replace("{", "\\{").replace("}", "\\}")):
            parsed(text)


@pytest.mark.parametrize("build, message", [
    (lambda: CpePass(window=0), "option 'window' of pass 'cpe': must be >= 1, got 0"),
    (lambda: CpeOptions(passes=-1), "option 'passes' of pass 'cpe': must be >= 0, got -1"),
    (lambda: DlrOptions(policy="fifo"), "option 'policy' of pass 'dlr': unknown value 'fifo' (valid: cost, lru, belady, belady-cost, planned)"),
    (lambda: DlrOptions(stall=float("nan")), "option 'stall' of pass 'dlr': must be >= 0, got nan"),
    (lambda: DlrPass(early_window=-1), "option 'early-window' of pass 'dlr': must be >= 0, got -1"),
    (lambda: MpasOptions(policy="fast"), "option 'policy' of pass 'mpas': unknown value 'fast' (valid: balanced, "),
    (lambda: PrefetchPass(cover=-1.0), "option 'cover' of pass 'prefetch': must be >= 0, got -1.0"),
    (lambda: TuneOptions(objective=("energy",)), "option 'objective' of pass 'tune': unknown value 'energy' (valid: peak, "),
    (lambda: TuneOptions(policies=()), "option 'policies' of pass 'tune': needs at least one value"),
    (lambda: HmcosPass(beam=0), "option 'beam' of pass 'hmcos': must be >= 1, got 0"),
])
def test_one_error_type_and_one_wording(build: object, message: str) -> None:
    with pytest.raises(OptionError) as e:
        build()  # type: ignore[operator]
    assert str(e.value).startswith(message)


@pytest.mark.parametrize("spec, message", [
    ("mpas{window=3}", "pass 'mpas' has no option 'window' (valid: policy, l0-rule)"),
    ("mpas{l0_rule=maybe}", "option 'l0-rule' of pass 'mpas': expects a bool, got 'maybe'"),
    ("cpe{window=2.5}", "option 'window' of pass 'cpe': expects an int, got '2.5'"),
    ("dlr{stall=1}", "option 'stall' of pass 'dlr': expects a float: write 1.0"),
    ("prefetch{pipes=1,2}", "option 'pipes' of pass 'prefetch': expects a list of strings, got '1,2'"),
])
def test_pipeline_values_are_type_checked_with_the_pass_and_option_named(spec: str, message: str) -> None:
    with pytest.raises(OptionError) as e:
        check_options(DAN_PASSES, spec)
    assert str(e.value) == message


def test_named_pipelines_parse_and_name_their_passes() -> None:
    assert list(PIPELINES) == ["original", "hmcos", "cosma", "magis", "eda", "dan", "dan-tune", "dan-best-peak", "dan-best-traffic", "dan-best-makespan"]
    assert pipeline("dan") == "mpas,dlr,cpe" and pipeline("original") == "original,dlr{policy=lru}"
    for spec in PIPELINES.values():
        check_options(DAN_PASSES, spec)
        assert [p.name for p in PassPipeline.parse_spec(DAN_PASSES, spec).passes] == [a.name for a in parse_pipeline(spec)]
    with pytest.raises(ValueError, match="unknown pipeline 'fast' \\(valid: original, hmcos, "):
        pipeline("fast")


@pytest.mark.parametrize("spec", ["dlr{spec=true policy=lru}", "dlr", "cpe{window=16}", "reuse-order{paired=true}"])
def test_a_pass_prints_as_the_text_that_parses_back_to_it(spec: str) -> None:
    # dlr's option `spec` hides xDSL's method of that name; printing must not call it
    p = parsed(spec)
    assert str(p) == str(p.pipeline_pass_spec())  # type: ignore[attr-defined]
    assert parsed(str(p)) == p
