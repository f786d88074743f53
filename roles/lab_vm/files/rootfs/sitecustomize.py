# Lab director VM only (roles/lab_vm). Under emulation (qemu TCG) compiling
# Python source is slow, and every Ansible task ships its module_utils as
# sources in a zip (AnsiballZ) that Python recompiles each time: about 3 s per
# task here. This keeps the code objects compiled from zip imports in a cache,
# keyed by the module's path inside the zip and the sha256 of its source, so a
# module already seen is not compiled again. Any problem: plain compile.
try:
    import hashlib
    import marshal
    import os
    import zipimport

    _CACHE = "/var/cache/testbed-pycache"
    _compile = zipimport._compile_source

    def _cached_compile(pathname, source):
        inner = pathname.split(".zip", 1)[-1].encode("utf-8", "replace")
        key = hashlib.sha256(inner + b"\0" + bytes(source)).hexdigest()
        path = os.path.join(_CACHE, key)
        try:
            with open(path, "rb") as handle:
                return marshal.load(handle)
        except Exception:
            pass
        code = _compile(pathname, source)
        try:
            os.makedirs(_CACHE, exist_ok=True)
            tmp = "%s.%d" % (path, os.getpid())
            with open(tmp, "wb") as handle:
                marshal.dump(code, handle)
            os.replace(tmp, path)
        except Exception:
            pass
        return code

    zipimport._compile_source = _cached_compile
except Exception:
    pass
