"""The editors' import map (.config/import-map, scripts/import-map.py) is current and its check can fail."""
import importlib.util
import os
import shutil

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location("import_map", os.path.join(ROOT, "scripts", "import-map.py"))
import_map = importlib.util.module_from_spec(spec)
spec.loader.exec_module(import_map)


def test_the_shipped_map_has_one_link_per_shared_library():
    assert import_map.problems() == []
    stubs = os.path.join(ROOT, ".config", "import-map", "ansible-stubs", "module_utils")
    entries = import_map._entries(stubs)
    assert "testbed_results/store.pyi" in entries and "testbed_parse.pyi" in entries
    for entry in entries:
        target = os.path.realpath(os.path.join(stubs, entry))
        assert os.path.isfile(target) and target.startswith(ROOT + os.sep), entry


@pytest.fixture
def tree(tmp_path):
    for rel in ("module_utils/testbed_a.py", "roles/r1/module_utils/r1_b.py"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("X = 1\n")
    return tmp_path


def test_write_then_check_is_clean_and_links_are_relative(tree):
    assert import_map.write(str(tree)) == 2
    assert import_map.problems(str(tree)) == []
    link = tree / ".config/import-map/ansible-stubs/module_utils/r1_b.pyi"
    assert os.readlink(link) == "../../../../roles/r1/module_utils/r1_b.py"
    moved = tree.parent / (tree.name + "-moved")
    shutil.copytree(tree, moved, symlinks=True)
    assert import_map.problems(str(moved)) == []


def test_check_names_a_missing_a_stale_and_a_foreign_entry(tree):
    import_map.write(str(tree))
    stubs = tree / ".config/import-map/ansible-stubs/module_utils"
    (tree / "module_utils/testbed_new.py").write_text("Y = 2\n")
    (tree / "roles/r1/module_utils/r1_b.py").unlink()
    (stubs / "testbed_a.pyi").unlink()
    (stubs / "testbed_a.pyi").write_text("copied = True\n")
    found = "\n".join(import_map.problems(str(tree)))
    assert "testbed_new.pyi is missing" in found
    assert "r1_b.pyi is in the map but no module_utils/r1_b.py exists" in found
    assert "testbed_a.pyi must be a symlink to ../../../../module_utils/testbed_a.py" in found
    (stubs.parent / "py.typed").write_text("")
    assert "must exist and say 'partial'" in "\n".join(import_map.problems(str(tree)))
    import_map.write(str(tree))
    assert import_map.problems(str(tree)) == []


def test_two_libraries_of_one_name_are_refused(tree):
    (tree / "roles/r2/module_utils").mkdir(parents=True)
    (tree / "roles/r2/module_utils/testbed_a.py").write_text("Z = 3\n")
    with pytest.raises(SystemExit, match="testbed_a.py is in both"):
        import_map.sources(str(tree))


def test_a_group_folder_is_mapped_file_by_file(tree):
    (tree / "module_utils/testbed_g").mkdir()
    (tree / "module_utils/testbed_g/__init__.py").write_text("")
    (tree / "module_utils/testbed_g/part.py").write_text("P = 1\n")
    assert import_map.sources(str(tree))["testbed_g.part"] == "module_utils/testbed_g/part.py"
    assert import_map.write(str(tree)) == 4
    link = tree / ".config/import-map/ansible-stubs/module_utils/testbed_g/part.pyi"
    assert os.readlink(link) == "../../../../../module_utils/testbed_g/part.py"
    assert import_map.problems(str(tree)) == []
    (tree / "module_utils/testbed_g/part.py").unlink()
    assert "testbed_g/part.pyi is in the map" in "\n".join(import_map.problems(str(tree)))
    import_map.write(str(tree))
    assert import_map.problems(str(tree)) == []


def test_a_group_folder_without_its_init_is_refused(tree):
    (tree / "module_utils/testbed_g").mkdir()
    (tree / "module_utils/testbed_g/part.py").write_text("P = 1\n")
    with pytest.raises(SystemExit, match="testbed_g/ has no __init__.py"):
        import_map.sources(str(tree))
