"""Run an Ansible module's main() in-process and capture its JSON result."""
import json

import pytest
from ansible.module_utils import basic
from ansible.module_utils.common.text.converters import to_bytes


class ModuleExit(Exception):
    def __init__(self, result):
        super().__init__(result)
        self.result = result


def run_module(module, args):
    """Call ``module.main()`` with ``args``; return (failed, result dict)."""
    basic._ANSIBLE_ARGS = to_bytes(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    basic._ANSIBLE_PROFILE = "legacy"

    def _exit(self, **kwargs):
        kwargs.setdefault("failed", False)
        raise ModuleExit(kwargs)

    def _fail(self, msg, **kwargs):
        kwargs["failed"] = True
        kwargs["msg"] = msg
        raise ModuleExit(kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(basic.AnsibleModule, "exit_json", _exit)
        mp.setattr(basic.AnsibleModule, "fail_json", _fail)
        try:
            module.main()
        except ModuleExit as exc:
            return exc.result["failed"], exc.result
    raise AssertionError("module returned without exit_json/fail_json")
