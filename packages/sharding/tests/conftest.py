"""The layer's tests run on 8 CPU devices (set before the backend starts)."""

from lamina.interpreters import config

config.update("jax_num_cpu_devices", 8)
