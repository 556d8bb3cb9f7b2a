"""The `xdsl.universe` plugin: stock `xdsl-opt` sees the dan dialect and passes."""

from xdsl.universe import Universe

from dan.lowering.linalg.registry import LINALG_PASSES
from dan.lowering.sync.registry import SYNC_PASSES, dan_sync_dialect
from dan.passes.pipeline.registry import DAN_PASSES


def _dan():  # noqa: ANN202
    from dan.dialect.ir.dialect import Dan

    return Dan


DAN_UNIVERSE = Universe(all_dialects={"dan": _dan, "dan_sync": dan_sync_dialect}, all_passes={**DAN_PASSES, **SYNC_PASSES, **LINALG_PASSES})
