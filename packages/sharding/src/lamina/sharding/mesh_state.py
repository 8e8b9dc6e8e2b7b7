"""The per-thread mesh settings, held as jaxlib configuration values so that they are
part of ``trace_context()`` and of jaxlib's jit cache key (a function traced under one
mesh is traced again under another):

* ``abstract_mesh``: the ``AbstractMesh`` of ``set_mesh`` / ``use_abstract_mesh``;
* ``concrete_mesh``: the ``Mesh`` of ``set_mesh``;
* ``entered_meshes``: the meshes entered with the older ``with mesh:`` form, innermost
  last.

Each holds ``None`` (or ``()``) when unset.
"""

from __future__ import annotations

from jaxlib import _jax

__all__ = ["abstract_mesh", "concrete_mesh", "entered_meshes", "unset"]

unset = _jax.config.unset

abstract_mesh = _jax.config.Config(
    "lamina_abstract_mesh", None, include_in_jit_key=True, include_in_trace_context=True
)
concrete_mesh = _jax.config.Config(
    "lamina_concrete_mesh", None, include_in_jit_key=True, include_in_trace_context=True
)
entered_meshes = _jax.config.Config(
    "lamina_entered_meshes", (), include_in_jit_key=True, include_in_trace_context=True
)
