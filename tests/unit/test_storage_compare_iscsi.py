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


def _configfs_mkdir(module, monkeypatch):
    """configfs makes a portal group's attrib, lun and np directories when the group is made (the kernel
    does it); a plain directory stands in."""
    real_mkdir = os.mkdir

    def mkdir(path, *a):
        real_mkdir(path, *a)
        if str(path).endswith("tpgt_1"):
            for sub in ("attrib", "lun", "np"):
                real_mkdir(os.path.join(path, sub))
    monkeypatch.setattr(module.os, "mkdir", mkdir)


def test_module_creates_records_refuses_foreign_and_removes_only_its_own(tmp_path, monkeypatch, capsys):
    import storage_iscsi_target as module
    cfg = tmp_path / "cfg"
    (cfg / "target" / "core").mkdir(parents=True)
    (cfg / "target" / "iscsi").mkdir(parents=True)
    sysmod = tmp_path / "sys-module"
    for name in lio.MODULES:
        (sysmod / name).mkdir(parents=True)
    monkeypatch.setattr(module, "_configfs_mounted", lambda root: True)
    base = {"iqn": IQN, "device": "/dev/zvol/testbed/vol", "address": "10.233.0.1",
            "record_dir": str(tmp_path / "rec"), "configfs": str(cfg), "sys_module": str(sysmod)}
    _configfs_mkdir(module, monkeypatch)
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


def _state(modules=(), mounted=False, fabric=False, targets=(), hbas=()):
    return {"modules": sorted(modules), "configfs_mounted": mounted, "fabric": fabric,
            "targets": list(targets), "hbas": list(hbas)}


def test_host_state_reads_modules_mount_fabric_targets_and_backstores():
    tree = {"/cfg/target/iscsi": ["discovery_auth", IQN], "/cfg/target/core": ["alua", "fileio_1"]}
    state = lio.host_state(["target_core_mod", "ext4", "iscsi_target_mod"], True, tree.get, "/cfg")
    assert state == _state(["iscsi_target_mod", "target_core_mod"], True, True, [IQN], ["fileio_1"])
    assert lio.host_state([], False, {}.get, "/cfg") == _state()


def test_restore_undoes_only_what_the_run_added():
    # nothing before: the fabric directory, the three modules (users first) and the mount go
    steps, notes, done = lio.restore_steps(_state(), _state(lio.MODULES, True, True), "/cfg")
    assert steps == [("rmdir", "/cfg/target/iscsi"), ("rmmod", "iscsi_target_mod"), ("rmmod", "target_core_iblock"),
                     ("rmmod", "target_core_mod"), ("umount", "/cfg")]
    assert notes == [] and done
    # a host that had LIO's core loaded and configfs mounted keeps both
    before = _state(["target_core_mod"], True, False)
    steps, notes, done = lio.restore_steps(before, _state(lio.MODULES, True, True), "/cfg")
    assert steps == [("rmdir", "/cfg/target/iscsi"), ("rmmod", "iscsi_target_mod"), ("rmmod", "target_core_iblock")]
    assert notes == ["loaded before the run, left loaded: target_core_mod"] and done
    # configfs mounted by the run while a module from before still uses it: the mount stays, said
    steps, notes, done = lio.restore_steps(_state(["target_core_mod"]), _state(lio.MODULES, True, True), "/cfg")
    assert ("umount", "/cfg") not in steps and "configfs stays mounted" in notes[1]
    # all of it there before: nothing to do, said
    steps, notes, done = lio.restore_steps(_state(lio.MODULES, True, True), _state(lio.MODULES, True, True))
    assert steps == [] and done and notes == ["loaded before the run, left loaded: " + ", ".join(lio.MODULES)]


def test_restore_leaves_lio_loaded_while_someone_elses_target_or_backstore_remains():
    steps, notes, done = lio.restore_steps(_state(), _state(lio.MODULES, True, True, targets=["iqn.2020-01.org.other:t"]))
    assert steps == [] and not done and "iqn.2020-01.org.other:t" in notes[0]
    steps, notes, done = lio.restore_steps(_state(), _state(lio.MODULES, True, True, hbas=["fileio_0"]))
    assert steps == [] and not done and "fileio_0" in notes[0]
    with pytest.raises(ValueError, match="not a record of storage_iscsi_target"):
        lio.restore_steps({"modules": []}, _state())


def test_module_records_the_host_first_loads_lio_then_puts_it_back(tmp_path, monkeypatch, capsys):
    """A host without LIO: present loads the modules and mounts configfs (recorded first); absent with
    restore_host takes the export down, then unloads and unmounts what the run added, in order."""
    import storage_iscsi_target as module
    from ansible.module_utils import basic
    cfg, sysmod = tmp_path / "cfg", tmp_path / "sys-module"
    cfg.mkdir()
    sysmod.mkdir()
    mounted, calls = [False], []

    def run_command(self, argv, check_rc=False, **kwargs):
        # the kernel's side: modprobe loads (and pulls target_core_mod in), configfs shows LIO's tree when
        # mounted with target_core_mod loaded; rmmod and umount undo that
        calls.append(list(argv))
        op, arg = argv[0], argv[-1]
        if op == "modprobe":
            for name in (arg, "target_core_mod"):
                (sysmod / name).mkdir(exist_ok=True)
        elif op == "rmmod":
            (sysmod / arg).rmdir()
        elif op == "mount":
            mounted[0] = True
        elif op == "umount":
            mounted[0] = False
        if mounted[0] and (sysmod / "target_core_mod").is_dir():
            (cfg / "target" / "core").mkdir(parents=True, exist_ok=True)
        elif (cfg / "target").exists():
            tree_rm(str(cfg / "target"))
        return 0, "", ""
    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(module, "_configfs_mounted", lambda root: mounted[0])
    real_rmdir = os.rmdir

    def tree_rm(path):  # configfs: a directory goes with its default groups and attribute files
        for name in os.listdir(path):
            sub = os.path.join(path, name)
            tree_rm(sub) if os.path.isdir(sub) and not os.path.islink(sub) else os.unlink(sub)
        real_rmdir(path)
    monkeypatch.setattr(module.os, "rmdir", tree_rm)
    _configfs_mkdir(module, monkeypatch)
    base = {"iqn": IQN, "device": "/dev/zvol/testbed/vol", "address": "10.233.0.1",
            "record_dir": str(tmp_path / "rec"), "configfs": str(cfg), "sys_module": str(sysmod)}

    out = _run_module(module, monkeypatch, capsys, base)
    assert out["changed"]
    assert calls[:3] == [["modprobe", "target_core_iblock"], ["modprobe", "iscsi_target_mod"],
                         ["mount", "-t", "configfs", "configfs", str(cfg)]]
    record = json.loads((tmp_path / "rec" / "host-before.json").read_text())
    assert record == _state()
    # a second export keeps the first record (the state before the testbed)
    assert _run_module(module, monkeypatch, capsys, base)["changed"] is False
    assert json.loads((tmp_path / "rec" / "host-before.json").read_text()) == record

    # the segment's unexport leaves LIO loaded; the removal's puts the host back
    out = _run_module(module, monkeypatch, capsys, dict(base, state="absent"))
    assert out["changed"] and sorted(p.name for p in sysmod.iterdir()) == sorted(lio.MODULES)
    calls.clear()
    out = _run_module(module, monkeypatch, capsys, dict(base, state="absent", restore_host=True))
    assert calls == [["rmmod", "iscsi_target_mod"], ["rmmod", "target_core_iblock"], ["rmmod", "target_core_mod"],
                     ["umount", str(cfg)]]
    assert list(sysmod.iterdir()) == [] and not mounted[0] and not (tmp_path / "rec" / "host-before.json").exists()
