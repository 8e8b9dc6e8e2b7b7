"""The per-thread mesh settings: the mesh of ``set_mesh`` (concrete and abstract), the
abstract mesh of ``use_abstract_mesh``, and the meshes entered with the older
``with mesh:`` form. Each is a stack; its top is the current one."""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["state"]


class _MeshState(threading.local):
    def __init__(self):
        self.concrete: list[Any] = []  # set_mesh: Mesh objects
        self.abstract: list[Any] = []  # set_mesh / use_abstract_mesh: AbstractMesh objects
        self.entered: list[Any] = []  # `with mesh:` (deprecated form)


state = _MeshState()
