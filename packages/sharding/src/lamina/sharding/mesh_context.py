"""Setting the mesh a program runs under: ``set_mesh`` (a setter that is also a
context manager), ``use_abstract_mesh``, and the getters ``get_mesh``,
``get_abstract_mesh`` and ``current_mesh`` (which also sees the older ``with mesh:``
form)."""

from __future__ import annotations

from lamina.interpreters import eval_trace, find_current_trace
from lamina.sharding.mesh import EMPTY_ABSTRACT_MESH, EMPTY_MESH, AbstractMesh, Mesh
from lamina.sharding.mesh_state import abstract_mesh, concrete_mesh, entered_meshes, unset

__all__ = ["current_mesh", "get_abstract_mesh", "get_mesh", "set_mesh", "use_abstract_mesh"]


def _outside_tracing() -> bool:
    return find_current_trace() is eval_trace


class set_mesh:
    """Make ``mesh`` the mesh of this thread: ``set_mesh(mesh)`` sets it until changed,
    ``with set_mesh(mesh):`` for the block only. Only outside ``jit``."""

    __slots__ = ("prev_abstract_mesh", "prev_mesh")

    def __init__(self, mesh: Mesh | None):
        if mesh is not None and not isinstance(mesh, Mesh):
            raise ValueError(f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}")
        if not _outside_tracing():
            raise ValueError("`set_mesh` can only be used outside of `jax.jit`.")
        if mesh is not None and mesh.manual_axes:
            raise ValueError(
                f"mesh {mesh} contains manual axes which is not allowed when using "
                "`jax.set_mesh`. Please use `jax.shard_map` to enter into `Manual` mode "
                "instead."
            )
        self.prev_abstract_mesh = abstract_mesh.swap_local(
            EMPTY_ABSTRACT_MESH if mesh is None else mesh.abstract_mesh
        )
        self.prev_mesh = concrete_mesh.swap_local(EMPTY_MESH if mesh is None else mesh)

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        abstract_mesh.set_local(self.prev_abstract_mesh)
        concrete_mesh.set_local(self.prev_mesh)


class use_abstract_mesh:
    """Within the block, ``mesh`` (an ``AbstractMesh``) is this thread's abstract mesh."""

    __slots__ = ("mesh", "prev")

    def __init__(self, mesh: AbstractMesh):
        if not isinstance(mesh, AbstractMesh):
            raise ValueError(
                f"Expected mesh of type `jax.sharding.AbstractMesh`. Got type: {type(mesh)}"
            )
        self.mesh = mesh

    def __enter__(self) -> None:
        self.prev = abstract_mesh.swap_local(self.mesh)
        prev = self.prev
        known = prev is not unset and prev is not None
        if known and not prev.empty and not self.mesh.empty and prev.size != self.mesh.size:
            abstract_mesh.set_local(prev)
            raise ValueError(
                "use_abstract_mesh cannot change the size of the mesh. Got new mesh: "
                f"{self.mesh} with size={self.mesh.size} and prev mesh: {prev} with "
                f"size={prev.size}"
            )

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        abstract_mesh.set_local(self.prev)


def get_abstract_mesh() -> AbstractMesh:
    """The abstract mesh in force (an empty one when none is set)."""
    mesh = abstract_mesh.value
    return EMPTY_ABSTRACT_MESH if mesh is None else mesh


def get_mesh() -> Mesh:
    """The mesh of ``set_mesh`` (an empty one when none is set); only outside ``jit``."""
    if not _outside_tracing():
        raise ValueError(
            "`get_mesh` can only be used outside of `jax.jit`. Maybe you want "
            "`jax.sharding.get_abstract_mesh()`?"
        )
    mesh = concrete_mesh.value
    return EMPTY_MESH if mesh is None else mesh


def current_mesh() -> Mesh:
    """The mesh a bare ``PartitionSpec`` refers to: the one of ``set_mesh``, else the
    innermost ``with mesh:``, else an empty mesh."""
    mesh = concrete_mesh.value
    if mesh is not None and not mesh.empty:
        return mesh
    entered = entered_meshes.value
    return entered[-1] if entered else EMPTY_MESH
