"""roles/storage_compare: the LIO iSCSI export of the zvol as configfs steps, and the module running them."""
import json
import os

import pytest
from ansible.module_utils import storage_compare_iscsi as lio

IQN = "iqn.2026-11.org.testbed:storage-compare"


def test_create_steps_make_a_block_backstore_lun0_portal_and_enable_last():
    steps = lio.create_steps(IQN, "testbed", "/dev/zvol/testbed/vol", "10.233.0.1", 3260, root="/cfg")
    assert steps[0] == ("mkdir", "/cfg/target/core/iblock_0")
    assert ("write", "/cfg/target/core/iblock_0/testbed/control", "udev_path=/dev/zvol/testbed/vol") in steps
    assert ("symlink", "/cfg/target/core/iblock_0/testbed", "/cfg/target/iscsi/%s/tpgt_1/lun/lun_0/testbed" % IQN) in steps
    assert ("mkdir", "/cfg/target/iscsi/%s/tpgt_1/np/10.233.0.1:3260" % IQN) in steps
    assert ("write", "/cfg/target/iscsi/%s/tpgt_1/attrib/generate_node_acls" % IQN, "1") in steps
    assert steps[-1] == ("write", "/cfg/target/iscsi/%s/tpgt_1/enable" % IQN, "1")
    # the backstore is enabled before it is linked into a LUN
    ops = [s[:2] for s in steps]
    assert ops.index(("write", "/cfg/target/core/iblock_0/testbed/enable")) < [s[0] for s in steps].index("symlink")


def test_remove_steps_reverse_and_only_what_exists():
    steps = lio.remove_steps(IQN, "testbed", "10.233.0.1", 3260, root="/cfg")
    assert steps[0] == ("write", "/cfg/target/iscsi/%s/tpgt_1/enable" % IQN, "0")
    assert [s[0] for s in steps] == ["write", "rmdir", "unlink", "rmdir", "rmdir", "rmdir", "rmdir", "rmdir_empty"]
    only = lio.remove_steps(IQN, "testbed", "10.233.0.1", 3260, root="/cfg",
                            existing={"/cfg/target/core/iblock_0/testbed"})
    assert only == [("rmdir", "/cfg/target/core/iblock_0/testbed"), ("rmdir_empty", "/cfg/target/core/iblock_0")]


@pytest.mark.parametrize("args, message", [
    (("storage", "testbed", "/dev/x", "10.0.0.1", 3260), "is not an iqn"),
    ((IQN, "a/b", "/dev/x", "10.0.0.1", 3260), "backstore name"),
    ((IQN, "testbed", "vol", "10.0.0.1", 3260), "is not a /dev path"),
    ((IQN, "testbed", "/dev/x", "10.0.0.300", 3260), "not an IPv4 address"),
    ((IQN, "testbed", "/dev/x", "", 3260), "not an IPv4 address"),
    ((IQN, "testbed", "/dev/x", "10.0.0.1", 0), "not a TCP port"),
])
def test_bad_settings_are_named(args, message):
    with pytest.raises(ValueError, match=message):
        lio.create_steps(*args)


def _run_module(module, monkeypatch, capsys, args):
    from ansible.module_utils import basic
    from ansible.module_utils.common.text.converters import to_bytes
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", to_bytes(json.dumps({"ANSIBLE_MODULE_ARGS": args})))
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy", raising=False)
    with pytest.raises(SystemExit):
        module.main()
    return json.loads(capsys.readouterr().out)


def test_module_creates_records_refuses_foreign_and_removes_only_its_own(tmp_path, monkeypatch, capsys):
    import storage_iscsi_target as module
    cfg = tmp_path / "cfg"
    (cfg / "target" / "core").mkdir(parents=True)
    (cfg / "target" / "iscsi").mkdir(parents=True)
    base = {"iqn": IQN, "device": "/dev/zvol/testbed/vol", "address": "10.233.0.1",
            "record_dir": str(tmp_path / "rec"), "configfs": str(cfg)}
    # configfs files appear when the directory is made (the kernel does it); a plain directory stands in
    real_mkdir = os.mkdir

    def mkdir(path, *a):
        real_mkdir(path, *a)
        if str(path).endswith("tpgt_1"):
            for sub in ("attrib", "lun", "np"):
                real_mkdir(os.path.join(path, sub))
    monkeypatch.setattr(module.os, "mkdir", mkdir)
    # and rmdir takes its attribute files with it (configfs); the module never removes a directory with subdirectories
    real_rmdir = os.rmdir

    def rmdir(path):
        for sub in ("attrib", "lun", "np"):
            if os.path.isdir(os.path.join(path, sub)):
                for name in os.listdir(os.path.join(path, sub)):
                    os.unlink(os.path.join(path, sub, name))
                real_rmdir(os.path.join(path, sub))
        for name in os.listdir(path):
            if os.path.isfile(os.path.join(path, name)):
                os.unlink(os.path.join(path, name))
        real_rmdir(path)
    monkeypatch.setattr(module.os, "rmdir", rmdir)
    out = _run_module(module, monkeypatch, capsys, base)
    assert out["changed"] and (cfg / "target" / "iscsi" / IQN / "tpgt_1" / "np" / "10.233.0.1:3260").is_dir()
    assert _run_module(module, monkeypatch, capsys, base)["changed"] is False
    out = _run_module(module, monkeypatch, capsys, dict(base, state="absent"))
    assert out["changed"] and not (cfg / "target" / "iscsi" / IQN).exists()
    assert not (cfg / "target" / "core" / "iblock_0").exists()
    # a target of the name the testbed did not record is left alone
    (cfg / "target" / "iscsi" / IQN).mkdir()
    out = _run_module(module, monkeypatch, capsys, base)
    assert out["failed"] and "the testbed did not create it" in out["msg"]
    assert _run_module(module, monkeypatch, capsys, dict(base, state="absent"))["changed"] is False
    assert (cfg / "target" / "iscsi" / IQN).is_dir()
