"""Finding a multi-process run's parameters in a job scheduler's environment.

Open MPI (``mpirun``) and Slurm (``srun``) tell each process the size of the job, its
rank, its rank on its node and where the job started; ``distributed.initialize`` takes
from them what it was not given. The coordinator's port is derived from the job id
(``JAX_COORDINATOR_PORT`` overrides it), so that every process picks the same one.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping, Sequence

__all__ = ["OpenMpi", "Slurm", "detect"]

logger = logging.getLogger("lamina.distributed")

# Ports are chosen among the top 4096 of the ephemeral range.
_PORTS = 2**12


def _port_for(job: int) -> str:
    return str(job % _PORTS + 65536 - _PORTS)


class OpenMpi:
    name = "ompi"
    count, rank, local_rank = (
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_LOCAL_RANK",
    )
    _URI = "OMPI_MCA_orte_hnp_uri"

    @classmethod
    def present(cls, env: Mapping[str, str]) -> bool:
        return cls._URI in env

    @classmethod
    def coordinator_address(cls, env: Mapping[str, str], port: str | None) -> str:
        # The launcher's URI: "<job id>.<n>;tcp://<ip>[,<ip>...]:<port>", or tcp6://[<ip>,...]
        uri = env[cls._URI]
        if not port:
            port = _port_for(int(uri.split(".", 1)[0]) // 2**12)  # job ids step by 2**12
        found = re.search(r"tcp://(.+?)[,:]|tcp6://\[(.+?)[,\]]", uri)
        if found is None:
            raise RuntimeError("Could not parse coordinator IP address from Open MPI environment.")
        return f"{found.group(1) or found.group(2)}:{port}"


class Slurm:
    name = "slurm"
    count, rank, local_rank = "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID"
    _JOB, _NODES = "SLURM_JOB_ID", "SLURM_STEP_NODELIST"

    @classmethod
    def present(cls, env: Mapping[str, str]) -> bool:
        return all(k in env for k in (cls._JOB, cls._NODES, cls.count, cls.rank, cls.local_rank))

    @classmethod
    def coordinator_address(cls, env: Mapping[str, str], port: str | None) -> str:
        port = port or _port_for(int(env[cls._JOB]))
        # The first node of a list such as "node001,host2" or "node[001-015,020],host2".
        first = re.match(r"([^,\[]*)(?:\[([^,\-\]]*))?", env[cls._NODES])
        return f"{first.group(1)}{first.group(2) or ''}:{port}"


CLUSTERS = (OpenMpi, Slurm)
# Environments JAX detects that need more than environment variables (mpi4py, the
# cloud TPU metadata servers, the Kubernetes API); not detected here.
_UNSUPPORTED = ("mpi4py", "tpu", "gcetpu", "gketpu", "k8s")


def detect(
    coordinator_address: str | None,
    num_processes: int | None,
    process_id: int | None,
    local_device_ids: Sequence[int] | None,
    method: str | None,
    env: Mapping[str, str] = os.environ,
) -> tuple:
    """Fill in the parameters left ``None`` from the environment of ``method`` (by
    default the first scheduler whose environment is present)."""
    if method is not None:
        cluster = next((c for c in CLUSTERS if c.name == method), None)
        if cluster is None:
            reason = "is not supported here" if method in _UNSUPPORTED else "is not supported"
            logger.error(
                "Automatic Distributed initialization can not proceed: %s %s.", method, reason
            )
        elif not cluster.present(env):
            logger.error(
                "Automatic Distributed initialization can not proceed: %s is supported but "
                "not functional in this environment.",
                method,
            )
            cluster = None
    else:
        cluster = next((c for c in CLUSTERS if c.present(env)), None)
    if cluster is None:
        return coordinator_address, num_processes, process_id, local_device_ids
    if coordinator_address is None:
        coordinator_address = cluster.coordinator_address(env, env.get("JAX_COORDINATOR_PORT"))
    if num_processes is None:
        num_processes = int(env[cluster.count])
    if process_id is None:
        process_id = int(env[cluster.rank])
    if local_device_ids is None:
        local_device_ids = [int(env[cluster.local_rank])]
    return coordinator_address, num_processes, process_id, local_device_ids
