"""`lamina.extend.xla`: custom XLA passes over HLO modules (`jax.extend.xla`).

``register_hlo_module_transformation(callback, name=...)`` has XLA call
``callback(serialized HloModuleProto) -> bytes | None`` at a stage of every later
compilation (``None``: the module is unchanged). On CPU the pass is registered with
XLA itself; for plugin platforms (CUDA) on the clients already started.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence

from jaxlib import _xla

from lamina.interpreters import backends

__all__ = ["PipelineStage", "clear_hlo_module_transformation", "register_hlo_module_transformation"]


class PipelineStage(enum.Enum):
    """Where in XLA's pipeline a pass runs."""

    PRE_SCHEDULER = 0
    POST_SCHEDULER = 1


def _stage(stage) -> int:
    if not isinstance(stage, PipelineStage):
        raise TypeError(f"stage must be a PipelineStage enum, got {type(stage)}")
    return stage.value


def _platforms(platforms) -> list[str]:
    if platforms is None:
        return list(dict.fromkeys(["cpu", *backends()]))
    if isinstance(platforms, str):
        return [platforms]
    return list(dict.fromkeys(platforms))


def register_hlo_module_transformation(
    callback: Callable[[bytes], bytes | None],
    *,
    name: str,
    stage: PipelineStage = PipelineStage.PRE_SCHEDULER,
    platforms: Sequence[str] | str | None = None,
) -> None:
    """Run ``callback`` as the XLA pass ``name`` at ``stage`` on ``platforms`` (all by
    default); passes of one stage run in the order they were registered."""
    stage_value = _stage(stage)
    for platform in _platforms(platforms):
        if platform == "cpu":
            _xla.register_xla_transform(name, stage_value, callback)
        elif platform in backends():
            _xla.register_xla_transform_c_api(backends()[platform], name, stage_value, callback)


def clear_hlo_module_transformation(
    name: str,
    stage: PipelineStage = PipelineStage.PRE_SCHEDULER,
    platforms: Sequence[str] | str | None = None,
) -> bool:
    """Remove the pass ``name``; whether one was found."""
    stage_value = _stage(stage)
    cleared = False
    for platform in _platforms(platforms):
        if platform == "cpu":
            cleared |= bool(_xla.clear_xla_transform(name, stage_value))
        elif platform in backends():
            client = backends()[platform]
            cleared |= bool(_xla.clear_xla_transform_c_api(client, name, stage_value))
    return cleared
