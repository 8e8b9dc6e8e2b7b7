"""The runtime side of effects: the tokens that order effectful programs across calls,
and ``effects_barrier``.

A compiled program with ordered effects takes one token per effect and returns the
next; the token is a ``bool[0]`` array on the device, and handing the one a call
returns to the next call makes the later call wait for the earlier one, so ordered
callbacks run in program order across calls. A program that calls back into Python
also returns a runtime token of its own, kept per device, so that ``effects_barrier``
can wait for every pending callback.
"""

from __future__ import annotations

import atexit
import threading

import numpy as np

from lamina.interpreters.runtime.transfer import copy_array, device_put

__all__ = ["RuntimeTokens", "effects_barrier", "runtime_tokens"]


class RuntimeTokens(threading.local):
    """The latest token of each ordered effect and the latest runtime token per device."""

    def __init__(self):
        self.current: dict = {}  # effect -> bool[0] array
        self.output: dict = {}  # device -> jaxlib ShardedToken

    def token_input(self, effect, sharding):
        """The token to hand a call with ``effect`` running on ``sharding``'s device."""
        tok = self.current.get(effect)
        if tok is None:
            where = sharding._device if sharding.num_devices == 1 else sharding
            tok = device_put(np.zeros(0, np.bool_), where)
        elif tok._sharding != sharding:
            tok = copy_array(tok, sharding, committed=False)
        return tok

    def set_token_result(self, effect, token) -> None:
        self.current[effect] = token

    def set_output_token(self, device, token) -> None:
        self.output[device] = token

    def block_until_ready(self) -> None:
        for tok in self.current.values():
            tok.block_until_ready()
        for tok in self.output.values():
            tok.block_until_ready()
        self.current.clear()
        self.output.clear()


runtime_tokens = RuntimeTokens()


def effects_barrier() -> None:
    """Wait until every callback of the programs dispatched so far has run."""
    runtime_tokens.block_until_ready()


atexit.register(effects_barrier)
