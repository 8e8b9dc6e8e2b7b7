"""Loops that run until every element has converged, each element stopping on its own
(what a vmapped ``while_loop`` does): the series and continued fractions use them."""

from lamina import lax
from lamina import numpy as jnp

__all__ = ["elementwise_while"]


def elementwise_while(cond, body, init):
    """Iterates ``body`` on the tuple of arrays ``init`` while ``cond`` (an elementwise
    boolean) holds somewhere; an element stops changing once its ``cond`` is false."""

    def step(state):
        go = cond(state)
        new = body(state)
        return tuple(
            lax.select(
                jnp.broadcast_to(go, s.shape), jnp.broadcast_to(n, s.shape).astype(s.dtype), s
            )
            for n, s in zip(new, state, strict=True)
        )

    return lax.while_loop(lambda state: jnp.any(cond(state)), step, tuple(init))
