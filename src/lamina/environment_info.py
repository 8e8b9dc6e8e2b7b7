"""``print_environment_info``: the versions and devices to put in a bug report."""

import importlib.metadata
import platform
import sys
import textwrap

import numpy as np

import lamina
from lamina import version
from lamina.interpreters import default_backend, device_count, local_devices, process_count

__all__ = ["print_environment_info"]


def print_environment_info(return_string: bool = False) -> str | None:
    """Print (or, with ``return_string=True``, return) the versions of lamina, the JAX
    API it implements, jaxlib, NumPy and Python, the devices and the platform."""
    devices = local_devices()
    info = textwrap.dedent(
        f"""\
        jax:    {version.__version__} (lamina {lamina.__version__})
        jaxlib: {importlib.metadata.version("jaxlib")}
        numpy:  {np.__version__}
        python: {sys.version.replace(chr(10), " ")}
        device info: {default_backend()}-{device_count()}, {len(devices)} local devices"
        process_count: {process_count()}
        platform: {platform.uname()}
        """
    )
    if return_string:
        return info
    print(info)
    return None
