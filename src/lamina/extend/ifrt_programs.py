"""`lamina.extend.ifrt_programs`: jaxlib's IFRT program builders."""

from jaxlib import _jax

ifrt_programs = _jax.ifrt_programs

__all__ = ["ifrt_programs"]
