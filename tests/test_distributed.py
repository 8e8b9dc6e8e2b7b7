"""lamina.distributed: two processes with 4 CPU devices each form one 8-device run over
loopback. Values and messages recorded from JAX 0.10.2 running the same steps."""

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import lamina
from lamina.experimental import mesh_utils, multihost_utils

# The same functions as lamina.distributed, which the subprocesses import by that name.
from lamina.sharding import distributed

WORKER = Path(__file__).with_name("distributed_worker.py")
TIMEOUT = 180  # seconds: a hung collective must fail the test, not stall the suite


def clean_env(**extra: str) -> dict:
    """This environment without a scheduler's or JAX's run variables, which
    ``initialize`` would read, plus ``extra``."""
    prefixes = ("SLURM_", "OMPI_", "JAX_COORDINATOR", "JAX_LOCAL_DEVICE_IDS")
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    return {**env, **extra}


def free_address() -> str:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return f"localhost:{s.getsockname()[1]}"


def result_of(output: str) -> dict:
    lines = [line for line in output.splitlines() if line.startswith("RESULT ")]
    assert lines, output[-3000:]
    return json.loads(lines[-1][len("RESULT ") :])


@pytest.fixture(scope="module")
def results():
    address = free_address()
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(pid), address],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=clean_env(),
        )
        for pid in (0, 1)
    ]
    deadline = time.monotonic() + TIMEOUT
    try:
        outputs = [p.communicate(timeout=max(1, deadline - time.monotonic()))[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    for p, out in zip(procs, outputs, strict=True):
        assert p.returncode == 0, out[-3000:]
    return [result_of(out) for out in outputs]


# recorded from JAX 0.10.2: process 1's CPU devices are numbered from 2048.
GLOBAL_IDS = [0, 1, 2, 3, 2048, 2049, 2050, 2051]


def test_processes_form_one_global_device_set(results):
    for pid, r in enumerate(results):
        assert r["initialized"] is True and r["after_shutdown"] is False
        assert r["devices"] == [[i, 0 if i < 4 else 1] for i in GLOBAL_IDS]
        assert r["local"] == GLOBAL_IDS[4 * pid : 4 * pid + 4]
        assert r["other"] == GLOBAL_IDS[4 * (1 - pid) : 4 * (1 - pid) + 4]
        assert r["counts"] == [pid, 2, [0, 1], 8, 4]
        assert r["mesh"] == [GLOBAL_IDS[:4], GLOBAL_IDS[4:]]
        assert r["hybrid"] == [[0, 1], [2, 3], [2048, 2049], [2050, 2051]]
        assert r["jit"] == 2 * pid + 1


def test_host_values_move_between_processes(results):
    for pid, r in enumerate(results):
        assert r["allgather"] == [[[0, 1, 2], [1, 2, 3]], "int32"]
        assert r["allgather_tiled"] == [0.0, 1.0]
        assert r["broadcast"] == [[0.0, 1.0, 2.0], "float32"]
        assert r["broadcast_from_1"] == [6, "ndarray", "int32"]
        got = "[0 1]" if pid == 0 else "[1 2]"
        assert r["assert_equal"] == f"bad. Expected: [0 1 1 2]; got: {got}."
        assert r["preemption"] is False


def test_global_arrays_across_processes(results):
    for pid, r in enumerate(results):
        assert r["global"] == [[8], False]
        first = 4 * pid
        assert r["shards"] == [
            [GLOBAL_IDS[first + i], first + i, float(10 * pid + i)] for i in range(4)
        ]
        assert r["back"] == [[4], [10.0 * pid + i for i in range(4)]]
        assert r["whole"] == [0.0, 1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0]
        assert r["untiled"] == (
            "Gathering global non-fully-addressable arrays only supports tiled=True"
        )


def test_pmap_spans_every_process(results):
    # recorded from JAX 0.10.2: process 0 passes [0, 1, 2, 3], process 1 [10, 11, 12, 13];
    # the mapped axis is 8 long and each process gets back its own 4 slices.
    everything = [0.0, 1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0]
    for pid, r in enumerate(results):
        assert r["pmap_psum"] == [[4], "float32", [52.0] * 4]
        assert r["pmap_shards"] == [[GLOBAL_IDS[4 * pid + i], i] for i in range(4)]
        assert r["pmap_addressable"] is True
        assert r["pmap_all_gather"] == [[4, 8], [everything] * 4]
        assert r["pmap_axis_index"] == [4 * pid + i for i in range(4)]
        assert r["pmap_local_devices"] == [[6.0] * 4, [46.0] * 4][pid]
        assert r["pmap_too_many"] == "ValueError"
    assert results[0]["pmap_ppermute"] == [13.0, 0.0, 1.0, 2.0]
    assert results[1]["pmap_ppermute"] == [3.0, 10.0, 11.0, 12.0]
    assert results[0]["pmap_pmean"] == [6.5, 8.5, 10.5, 12.5]
    assert results[1]["pmap_pmean"] == [26.5, 28.5, 30.5, 32.5]


ARGUMENT_ERRORS = """
import socket
import lamina.distributed as dist

def message(*args, **kwargs):
    try:
        dist.initialize(*args, **kwargs)
    except Exception as e:
        return f"{type(e).__name__}: {e}"

for args in [(), ("localhost:1234",), ("localhost:1234", 2), ("localhost:1234", 2, 1.0),
             ("localhost:1234", 2.0, 1), ("localhost:1234", 2, 2), ("localhost:1234", 2, -1)]:
    print(message(*args))
print(dist.is_initialized())
with socket.socket() as s:
    s.bind(("localhost", 0))
    address = f"localhost:{s.getsockname()[1]}"
dist.initialize(address, 1, 0, local_device_ids=0)
print(dist.is_initialized())
from lamina.interpreters import config
print(config.read("jax_cuda_visible_devices"), config.read("jax_rocm_visible_devices"))
print(message(address, 1, 0))
import lamina
print(lamina.devices(), lamina.process_count())
print(message(address, 1, 0))
dist.shutdown()
print(dist.is_initialized())
dist.shutdown()
"""


def test_initialize_errors():
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(ARGUMENT_ERRORS)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=clean_env(),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    # recorded from JAX 0.10.2
    assert run.stdout.splitlines() == [
        "ValueError: coordinator_address should be defined.",
        "ValueError: Number of processes must be defined.",
        "ValueError: The process id of the current process must be defined.",
        "TypeError: process_id must be a nonnegative int. Got process_id=1.0 of type "
        "<class 'float'>.",
        "TypeError: num_processes must be a positive int. Got num_processes=2.0 of type "
        "<class 'float'>.",
        "ValueError: process_id and num_processes must be nonnegative, with process_id < "
        "num_processes. Got process_id=2, num_processes=2.",
        "ValueError: process_id and num_processes must be nonnegative, with process_id < "
        "num_processes. Got process_id=-1, num_processes=2.",
        "False",
        "True",
        "0 0",
        "RuntimeError: distributed.initialize should only be called once.",
        "[CpuDevice(id=0)] 1",
        "RuntimeError: " + BACKEND_STARTED,
        "False",
    ]


BACKEND_STARTED = (
    "jax.distributed.initialize() must be called before any JAX calls that might initialise "
    "the XLA backend. This includes any computation, but also calls to jax.devices, "
    "jax.device_put, and others."
)


FROM_SLURM = """
import lamina, lamina.distributed
from lamina.interpreters import config
lamina.distributed.initialize()
state = lamina.sharding.distributed.global_state
print(lamina.distributed.is_initialized(), state.coordinator_address.split(":")[0],
      lamina.process_count(), config.read("jax_cuda_visible_devices"))
lamina.distributed.shutdown()
"""


def test_initialize_from_a_slurm_environment():
    port = free_address().rsplit(":", 1)[1]
    slurm = {
        "SLURM_JOB_ID": "7",
        "SLURM_STEP_NODELIST": "localhost",
        "SLURM_NTASKS": "1",
        "SLURM_PROCID": "0",
        "SLURM_LOCALID": "0",
        "JAX_COORDINATOR_PORT": port,
    }
    run = subprocess.run(
        [sys.executable, "-c", FROM_SLURM],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=clean_env(**slurm),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == ["True localhost 1 0"]  # recorded from JAX 0.10.2


def test_initialize_after_the_backend_started():
    lamina.devices()
    with pytest.raises(RuntimeError) as info:
        distributed.initialize("localhost:1234", 2, 0)
    assert str(info.value) == BACKEND_STARTED
    assert not distributed.is_initialized()


def test_public_modules():

    # recorded from JAX 0.10.2 (the public functions of each module)
    assert {"initialize", "is_initialized", "shutdown"} <= set(dir(distributed))
    assert {"create_device_mesh", "create_hybrid_device_mesh", "device_kind_handler_dict"} <= set(
        dir(mesh_utils)
    )
    assert {
        "ProcessFailureError",
        "assert_equal",
        "broadcast_one_to_all",
        "global_array_to_host_local_array",
        "host_local_array_to_global_array",
        "live_devices",
        "process_allgather",
        "reached_preemption_sync_point",
        "sync_global_devices",
    } <= set(dir(multihost_utils))


def test_sharded_jit_spans_every_process(results):
    # recorded from JAX 0.10.2: the global array [0, 1, 2, 3, 10, 11, 12, 13], one element
    # per device of a mesh over all 8; process p gave [10p, ..., 10p + 3].
    everything = [0.0, 1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0]
    cumsum = [0.0, 1.0, 3.0, 6.0, 16.0, 27.0, 39.0, 52.0]
    for pid, r in enumerate(results):
        ids = GLOBAL_IDS[4 * pid : 4 * pid + 4]
        assert r["spmd_global"] == [[8], False, True]
        assert r["spmd_input_shards"] == [
            [ids[i], 4 * pid + i, [everything[4 * pid + i]]] for i in range(4)
        ]
        assert r["spmd_singles"] == [[16], [[10.0 * pid + i, -i] for i in range(4)]]
        assert r["spmd_sum"] == [[], "float32", True, 52.0]
        assert r["spmd_sum16"] == 576.0
        doubled = [[ids[i], 4 * pid + i, [2 * everything[4 * pid + i]]] for i in range(4)]
        assert r["spmd_double"] == [[8], False, doubled]
        assert r["spmd_cumsum"] == [[8], True, [[i, cumsum] for i in ids]]
        assert r["spmd_2d"] == [
            [4, 6],
            [[i, 3 * pid] for i in range(4)],
            [18.0, 22.0, 26.0, 418.0, 422.0, 426.0],
        ]


def test_shard_map_collectives_span_every_process(results):
    # recorded from JAX 0.10.2, on the global array of the test above
    everything = [0.0, 1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0]
    pairs = [[v, -float(i % 4)] for i, v in enumerate(everything)]
    for pid, r in enumerate(results):
        assert r["spmd_psum"] == [[1], True, [[52.0]] * 4]
        assert r["spmd_all_gather"] == [[64], [[32 * pid + 8 * i, everything] for i in range(4)]]
        assert r["spmd_all_gather_untiled"] == [[64, 2], [[32 * pid, pairs], [32 * pid + 8, pairs]]]
