"""Jain's fairness index: the one implementation (module_utils/testbed_stats/fairness.py).

The modules import it as ``ansible.module_utils.testbed_stats.fairness``; the
``jain_index`` filter (tests/unit/test_filters_stats.py) loads the same file as
a plain module.
"""
import ast
import math
import os

import pytest
from ansible.module_utils.testbed_stats.fairness import jain
from conftest import ROOT


@pytest.mark.parametrize("values, expected", [
    ([300, 200, 100], 360000 / 420000),
    ([5, 5, 5], 1.0),
    ([1, 0, 0, 0], 0.25),
    ([7], 1.0),
    ([0.5, 1.5], 4.0 / (2 * 2.5)),
    ((3, 2, 1), 36 / 42),
])
def test_jain(values, expected):
    assert jain(values) == pytest.approx(expected)


def test_jain_bounds():
    # 1/n when one takes all, 1 when even, in between otherwise
    for n in range(1, 6):
        assert jain([10] + [0] * (n - 1)) == pytest.approx(1.0 / n)
    assert 1 / 3 < jain([300, 200, 1]) < 1


@pytest.mark.parametrize("values", [[], [0], [0, 0, 0.0]])
def test_jain_undefined_is_none(values):
    assert jain(values) is None


@pytest.mark.parametrize("values, error, message", [
    ([1, -1], ValueError, "values[1] is -1; the index is defined for non-negative shares"),
    ([1, math.nan], ValueError, "values[1] is nan, expected a finite number"),
    ([math.inf], ValueError, "values[0] is inf, expected a finite number"),
    ([1, "2"], TypeError, "values[1] is '2' (str), expected a number"),
    ([True, 1], TypeError, "values[0] is True (bool), expected a number"),
    ([None], TypeError, "values[0] is None (NoneType), expected a number"),
])
def test_jain_refuses(values, error, message):
    with pytest.raises(error) as err:
        jain(values)
    assert str(err.value) == message


def test_no_ansible_import():
    # the filter plugins load this file as a plain module: it must not import Ansible
    with open(os.path.join(ROOT, "module_utils", "testbed_stats", "fairness.py"), encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert imported == ["math"]
