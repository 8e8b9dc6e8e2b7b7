"""Run parameters read from Open MPI's and Slurm's environment variables; addresses
recorded from JAX 0.10.2's cluster classes given the same variables."""

import logging

import pytest

from lamina.sharding.cluster_detection import OpenMpi, Slurm, detect

SLURM = {
    "SLURM_JOB_ID": "123456",
    "SLURM_NTASKS": "4",
    "SLURM_PROCID": "2",
    "SLURM_LOCALID": "1",
}


@pytest.mark.parametrize(
    "nodes", ["node001", "node001,host2", "node[001-0015],host2", "node[001,007-015],host2"]
)
def test_slurm_coordinator_is_the_first_node(nodes):
    env = {**SLURM, "SLURM_STEP_NODELIST": nodes}
    assert Slurm.coordinator_address(env, None) == "node001:62016"
    assert Slurm.coordinator_address(env, "999") == "node001:999"


@pytest.mark.parametrize(
    ("uri", "address"),
    [
        ("1531576320.0;tcp://10.96.0.1,10.148.0.1,10.108.0.1:34911", "10.96.0.1:62624"),
        (
            "1314521088.0;tcp6://[fe80::b9b:ac5d:9cf0:b858,2620:10d:c083:150e::3000:2]:43370",
            "fe80::b9b:ac5d:9cf0:b858:62880",
        ),
    ],
)
def test_open_mpi_coordinator_is_the_launcher(uri, address):
    env = {"OMPI_MCA_orte_hnp_uri": uri}
    assert OpenMpi.coordinator_address(env, None) == address
    assert OpenMpi.coordinator_address(env, "77") == address.rsplit(":", 1)[0] + ":77"


def test_open_mpi_uri_that_does_not_parse():
    with pytest.raises(RuntimeError) as info:
        OpenMpi.coordinator_address({"OMPI_MCA_orte_hnp_uri": "1.0;udp://x"}, None)
    assert str(info.value) == "Could not parse coordinator IP address from Open MPI environment."


def test_detect_fills_only_what_is_missing():
    env = {**SLURM, "SLURM_STEP_NODELIST": "localhost", "JAX_COORDINATOR_PORT": "5555"}
    assert detect(None, None, None, None, None, env) == ("localhost:5555", 4, 2, [1])
    assert detect("h:1", 8, 0, [3], None, env) == ("h:1", 8, 0, [3])
    ompi = {
        "OMPI_MCA_orte_hnp_uri": "4096.0;tcp://10.0.0.7:1",
        "OMPI_COMM_WORLD_SIZE": "3",
        "OMPI_COMM_WORLD_RANK": "0",
        "OMPI_COMM_WORLD_LOCAL_RANK": "0",
    }
    assert detect(None, None, None, None, None, ompi) == ("10.0.0.7:61441", 3, 0, [0])
    # Open MPI comes first when both are present, unless a method is named.
    both = {**SLURM, "SLURM_STEP_NODELIST": "localhost", **ompi}
    assert detect(None, None, None, None, None, both)[0] == "10.0.0.7:61441"
    assert detect(None, None, None, None, "slurm", both)[0] == "localhost:62016"


def test_detect_without_a_cluster(caplog):
    assert detect(None, 2, None, None, None, {}) == (None, 2, None, None)
    with caplog.at_level(logging.ERROR, logger="lamina.distributed"):
        assert detect(None, None, None, None, "nope", SLURM) == (None, None, None, None)
        assert detect(None, None, None, None, "slurm", {}) == (None, None, None, None)
    assert [r.getMessage() for r in caplog.records] == [
        "Automatic Distributed initialization can not proceed: nope is not supported.",
        "Automatic Distributed initialization can not proceed: slurm is supported but not "
        "functional in this environment.",
    ]
