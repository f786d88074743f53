"""roles/nfv_measure/library/nfv_chain_probe.py: the health hook's one call, with a fake engine client,
judged by the role's filter nfv_health as the two per-container loops were."""
import json

import nfv_chain_probe as probe_module
import nfv_measure as nfv_measure_filters

FW_MAC = "02:42:0a:e7:08:14"


def doc(name, running=True, paused=False, status="running", exit_code=0, macs=None):
    return {"Name": "/" + name, "State": {"Running": running, "Paused": paused, "Status": status, "ExitCode": exit_code},
            "NetworkSettings": {"Networks": {net: {"MacAddress": mac} for net, mac in (macs or {}).items()}}}


class FakeEngine:
    """Answers ``inspect`` with the documents of the containers it has (rc 1 when one is missing, as docker does)
    and ``exec ... sh -c`` with each container's link lines."""

    def __init__(self, documents, links, inspect=None):
        self.documents, self.links, self.inspect, self.calls = documents, links, inspect, []

    def __call__(self, argv, timeout_s):
        self.calls.append(argv)
        if argv[1] == "inspect":
            if self.inspect:
                return self.inspect
            names = argv[4:]
            found = [d for d in self.documents if d["Name"][1:] in names]
            missing = [n for n in names if n not in {d["Name"][1:] for d in found}]
            return (1 if missing else 0), json.dumps(found), "".join(f"Error: No such container: {n}\n" for n in missing)
        assert argv[1] == "exec" and argv[3:5] == ["sh", "-c"] and argv[5] == probe_module.LINKS_SCRIPT
        return self.links[argv[2]]


def test_one_inspect_for_all_and_one_exec_per_running_container():
    engine = FakeEngine([doc("fw", macs={"net1": FW_MAC}), doc("client"), doc("vnf2", paused=True),
                         doc("vnf1", running=False, status="exited", exit_code=137)],
                        {"fw": (0, f"eth0 down 0 {FW_MAC}\n", ""), "client": (1, "", "OCI runtime exec failed")})
    result = probe_module.probe(["fw", "client", "backend", "vnf1", "vnf2"], "docker", 60, run=engine)
    assert [c[1] for c in engine.calls] == ["inspect", "exec", "exec"]
    assert [i["item"] for i in result["infos"]] == ["fw", "client", "backend", "vnf1", "vnf2"]
    assert [i["exists"] for i in result["infos"]] == [True, True, False, True, True]
    assert [link["item"] for link in result["links"]] == ["fw", "client"]
    health = nfv_measure_filters.nfv_health(result["infos"], result["links"])
    assert health["links_down"] == ["fw"]
    assert [p["component"] for p in health["problems"]] == ["fw link eth0", "client", "backend", "vnf1", "vnf2"]
    assert health["problems"][1]["evidence"] == "its links could not be read: OCI runtime exec failed"
    assert health["problems"][3]["evidence"] == "the container is exited (exit code 137)"


def test_all_up_is_healthy():
    engine = FakeEngine([doc("fw", macs={"net1": FW_MAC})], {"fw": (0, f"eth0 up 1 {FW_MAC}\n", "")})
    result = probe_module.probe(["fw"], run=engine)
    assert nfv_measure_filters.nfv_health(result["infos"], result["links"]) == {"ok": True, "problems": [],
                                                                                "links_down": []}


def test_an_engine_that_cannot_be_asked_fails_every_container():
    engine = FakeEngine([], {}, inspect=(1, "", "Cannot connect to the Docker daemon at unix:///var/run/docker.sock\n"))
    result = probe_module.probe(["fw", "client"], run=engine)
    assert result["links"] == [] and all(i["failed"] for i in result["infos"])
    health = nfv_measure_filters.nfv_health(result["infos"], result["links"])
    assert health["problems"][0] == {"component": "fw", "evidence": "could not be inspected: Cannot connect to the "
                                                                    "Docker daemon at unix:///var/run/docker.sock"}
    hung = probe_module.probe(["fw"], run=FakeEngine([], {}, inspect=(124, "", "docker did not answer within 60 s")))
    assert hung["infos"][0]["msg"] == "docker did not answer within 60 s"
