"""Multi-process runtime (``jax.distributed``): processes that form one device set.

Process 0 runs jaxlib's coordination service; every process connects a client to it.
The CPU backend, created after ``initialize``, is then made with that client, this
process's id and the process count, and gloo TCP collectives, so that its ``devices()``
are the devices of every process and one compiled program can run across all of them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

from jaxlib import _jax

from lamina.interpreters import backend, config
from lamina.sharding.cluster_detection import detect

__all__ = ["initialize", "is_initialized", "shutdown"]

logger = logging.getLogger("lamina.distributed")


class State:
    """This process's part of the multi-process runtime."""

    process_id: int = 0
    num_processes: int = 1
    service: Any = None
    client: Any = None
    preemption_sync_manager: Any = None
    coordinator_address: str | None = None
    partition_index: int | None = None

    def initialize(
        self,
        coordinator_address: str | None = None,
        num_processes: int | None = None,
        process_id: int | None = None,
        local_device_ids: int | Sequence[int] | None = None,
        cluster_detection_method: str | None = None,
        initialization_timeout: int = 300,
        coordinator_bind_address: str | None = None,
        heartbeat_timeout_seconds: int = 100,
        shutdown_timeout_seconds: int = 300,
        partition_index: int | None = None,
    ) -> None:
        coordinator_address = coordinator_address or os.environ.get("JAX_COORDINATOR_ADDRESS")
        if isinstance(local_device_ids, int):
            local_device_ids = [local_device_ids]
        if local_device_ids is None and (ids := os.environ.get("JAX_LOCAL_DEVICE_IDS")):
            local_device_ids = [int(i) for i in ids.split(",")]
        given = (coordinator_address, num_processes, process_id, local_device_ids)
        if cluster_detection_method != "deactivate" and None in given:
            given = detect(*given, cluster_detection_method)
        coordinator_address, num_processes, process_id, local_device_ids = given
        _check_arguments(coordinator_address, num_processes, process_id)
        if local_device_ids:
            visible = ",".join(str(i) for i in local_device_ids)
            logger.info("lamina.distributed: visible devices %s", visible)
            config.update("jax_cuda_visible_devices", visible)
            config.update("jax_rocm_visible_devices", visible)

        port = coordinator_address.rsplit(":", 1)[1]
        bind_address = coordinator_bind_address or os.environ.get(
            "JAX_COORDINATOR_BIND_ADDRESS", f"[::]:{port}"
        )
        if config.read("jax_check_proxy_envs"):
            proxies = [key for key in os.environ if "_proxy" in key.lower()]
            if proxies:
                logger.warning(
                    "Proxy variables are set (%s); distributed.initialize may hang "
                    "through them: unset them if it does.",
                    " ".join(proxies),
                )
        if process_id == 0:
            if self.service is not None:
                raise RuntimeError("distributed.initialize should only be called once.")
            self.service = _jax.get_distributed_runtime_service(
                bind_address,
                num_processes,
                heartbeat_timeout=heartbeat_timeout_seconds,
                shutdown_timeout=shutdown_timeout_seconds,
                recoverable=config.jax_enable_recoverability,
            )
        if self.client is not None:
            raise RuntimeError("distributed.initialize should only be called once.")
        self.coordinator_address = coordinator_address
        self.process_id, self.num_processes = process_id, num_processes
        self.client = _jax.get_distributed_runtime_client(
            coordinator_address,
            process_id,
            init_timeout=initialization_timeout,
            use_compression=True,
            heartbeat_timeout=heartbeat_timeout_seconds,
        )
        self.client.connect()
        if config.jax_enable_preemption_service:
            self.preemption_sync_manager = _jax.create_preemption_sync_manager()
            self.preemption_sync_manager.initialize(self.client)
        if partition_index is None and (index := os.environ.get("JAX_PARTITION_INDEX")):
            partition_index = int(index)
        self.partition_index = partition_index
        backend.cpu_client_options.update(
            distributed_client=self.client,
            node_id=process_id,
            num_nodes=num_processes,
            collectives=_cpu_collectives(self.client),
        )

    def shutdown(self) -> None:
        # The preemption manager uses the client, and the client the service.
        for name in ("preemption_sync_manager", "client", "service"):
            part = getattr(self, name)
            if part is not None:
                part.shutdown()
                setattr(self, name, None)
        self.process_id, self.num_processes = 0, 1
        backend.cpu_client_options.clear()


def _check_arguments(coordinator_address, num_processes, process_id) -> None:
    if coordinator_address is None:
        raise ValueError("coordinator_address should be defined.")
    if num_processes is None:
        raise ValueError("Number of processes must be defined.")
    if process_id is None:
        raise ValueError("The process id of the current process must be defined.")
    if not isinstance(process_id, int):
        raise TypeError(
            "process_id must be a nonnegative int. "
            f"Got process_id={process_id} of type {type(process_id)}."
        )
    if not isinstance(num_processes, int):
        raise TypeError(
            "num_processes must be a positive int. "
            f"Got num_processes={num_processes} of type {type(num_processes)}."
        )
    if not 0 <= process_id < num_processes:
        raise ValueError(
            "process_id and num_processes must be nonnegative, with process_id < "
            f"num_processes. Got process_id={process_id}, num_processes={num_processes}."
        )


def _cpu_collectives(client):
    """The CPU collectives the ``jax_cpu_collectives_implementation`` option names."""
    implementation = config.jax_cpu_collectives_implementation
    if implementation == "gloo":
        return _jax.make_gloo_tcp_collectives(distributed_client=client)
    if implementation == "mpi":
        collectives = _jax.make_mpi_collectives()
        collectives.Init()
        return collectives
    return None


global_state = State()


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    local_device_ids: int | Sequence[int] | None = None,
    cluster_detection_method: str | None = None,
    initialization_timeout: int = 300,
    heartbeat_timeout_seconds: int = 100,
    shutdown_timeout_seconds: int = 300,
    coordinator_bind_address: str | None = None,
    slice_index: int | None = None,
    partition_index: int | None = None,
) -> None:
    """Join this process to a multi-process run; call it first, before any device use.

    Every process calls it with the same ``coordinator_address`` (``host:port`` where
    process 0 serves) and ``num_processes``, and its own ``process_id``. Afterwards
    ``devices()`` lists the devices of all processes, ``local_devices()`` this one's.
    """
    if backend.backends_are_initialized():
        raise RuntimeError(
            "jax.distributed.initialize() must be called before any JAX calls that might "
            "initialise the XLA backend. This includes any computation, but also calls to "
            "jax.devices, jax.device_put, and others."
        )
    if partition_index is None:
        partition_index = slice_index
    global_state.initialize(
        coordinator_address,
        num_processes,
        process_id,
        local_device_ids,
        cluster_detection_method,
        initialization_timeout,
        coordinator_bind_address,
        heartbeat_timeout_seconds=heartbeat_timeout_seconds,
        shutdown_timeout_seconds=shutdown_timeout_seconds,
        partition_index=partition_index,
    )


def is_initialized() -> bool:
    """Whether :func:`initialize` has connected this process."""
    return global_state.client is not None


def shutdown() -> None:
    """Leave the multi-process run (nothing happens if none is running)."""
    global_state.shutdown()
