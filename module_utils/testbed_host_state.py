# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A host's identity and tuning state, read from /etc, /sys and ethtool (tool_versions).

Pure functions: the file reads, directory listings, links and commands are passed in
(``read_file(path) -> text or None``, ``listdir(path) -> [names]``, ``readlink(path) -> target
or None``, ``run_command(args) -> (rc, out, err)``, ``find_binary(name) -> path or None``), so
the tests feed them fixtures read off real hosts.

* **Identity** - machine-id, DMI product UUID, and the MAC addresses of the NICs that sit on a
  device (virtual links - bridges, veths, tunnels - come and go with runs and are left out), each
  stored as a keyed hash, never as read (results get published).
  ``identity_difference`` says in one sentence how two identities of one inventory host differ;
  the result store refuses a point whose host is another machine than the run's stored points
  were measured on (a resume against another machine).
* **Tuning** - what changes a measurement without changing the kernel or the tools: the CPU
  frequency governor and driver, boost (turbo), SMT, transparent huge pages; per NIC the driver,
  PCI/virtio ids, speed, MTU, firmware and offloads (``ethtool -i``/``-k``; where ethtool is not
  installed, the kernel's ethtool ioctls read them: ``ethtool_ioctl``, the one function here that
  talks to the kernel); per disk the model, firmware, rotational flag and I/O scheduler. A value the host
  does not expose is ``None`` (a VM has no cpufreq, a virtio disk no model).
"""

import hashlib
import hmac
import os
import re

# The key of the identifiers' hashes (app_specific): fixed, so two runs hash one machine alike.
_APP_KEY = b"testbed-infra host identity v1"

# Block devices that are not disks (loop, RAM, compressed RAM, device-mapper, network block,
# optical): left out of the tuning record.
_NOT_DISKS = re.compile(r"^(loop|ram|zram|dm-|nbd|sr|md|fd)\d*")

# The offloads recorded per NIC (ethtool -k's top-level names); the sub-features stay in ethtool's output.
OFFLOADS = ("rx-checksumming", "tx-checksumming", "scatter-gather", "tcp-segmentation-offload",
            "generic-segmentation-offload", "generic-receive-offload", "large-receive-offload",
            "rx-gro-hw", "rx-vlan-offload", "tx-vlan-offload", "receive-hashing", "ntuple-filters")


def _strip(text):
    if text is None:
        return None
    value = text.strip()
    return value or None


def _int(text):
    value = _strip(text)
    try:
        return int(value, 0) if value is not None else None
    except ValueError:
        return None


def bracketed(text):
    """The selected value of a sysfs choice list: ``always [madvise] never`` -> ``madvise``."""
    match = re.search(r"\[([^\]]+)\]", text or "")
    return match.group(1) if match else _strip(text)


def parse_ethtool_features(text):
    """``ethtool -k`` -> {feature: {"on": bool, "fixed": bool}} for the top-level features.

    Raises ValueError when the text is not ethtool's feature list."""
    if not re.match(r"^Features for \S+:", text or ""):
        raise ValueError("not the output of ethtool -k (no 'Features for <nic>:' line)")
    features = {}
    for line in text.splitlines()[1:]:
        match = re.match(r"^([a-z0-9_-]+): (on|off)( \[fixed\]| \[requested \w+\])?\s*$", line)
        if match:
            features[match.group(1)] = {"on": match.group(2) == "on", "fixed": match.group(3) == " [fixed]"}
    return features


def parse_ethtool_info(text):
    """``ethtool -i`` -> {driver, version, firmware_version, bus_info} (empty values as None)."""
    values = {}
    for line in (text or "").splitlines():
        key, sep, value = line.partition(":")
        if sep:
            values[key.strip()] = _strip(value)
    if "driver" not in values:
        raise ValueError("not the output of ethtool -i (no 'driver:' line)")
    return {"driver": values.get("driver"), "version": values.get("version"),
            "firmware_version": values.get("firmware-version"), "bus_info": values.get("bus-info")}


# ethtool's legacy get ioctls (linux/ethtool.h): the top-level offloads without the ethtool binary
# (rx-gro-hw has none: not recorded that way).
SIOCETHTOOL = 0x8946
ETHTOOL_GDRVINFO = 0x03
ETHTOOL_GFLAGS = 0x25
LEGACY_GETS = (("rx-checksumming", 0x14), ("tx-checksumming", 0x16), ("scatter-gather", 0x18),
               ("tcp-segmentation-offload", 0x1E), ("generic-segmentation-offload", 0x23),
               ("generic-receive-offload", 0x2B))
LEGACY_FLAGS = (("tx-vlan-offload", 1 << 7), ("rx-vlan-offload", 1 << 8), ("large-receive-offload", 1 << 15),
                ("ntuple-filters", 1 << 27), ("receive-hashing", 1 << 28))
# struct ethtool_drvinfo: cmd, then driver, version, fw_version, bus_info (32 bytes each), ...
_DRVINFO_SIZE = 196


def decode_drvinfo(buf):
    """struct ethtool_drvinfo (ETHTOOL_GDRVINFO's answer) -> {driver, version, firmware_version, bus_info}."""
    if len(buf) < 4 + 4 * 32:
        raise ValueError("not an ethtool_drvinfo: %d bytes" % len(buf))
    fields = [buf[4 + 32 * i:4 + 32 * (i + 1)].split(b"\0", 1)[0].decode("ascii", "replace") for i in range(4)]
    return dict(zip(("driver", "version", "firmware_version", "bus_info"), (_strip(f) for f in fields)))


def legacy_offloads(values):
    """The legacy gets' answers ({feature or "flags": int, None where unsupported}) -> {feature: on}."""
    offloads = {name: bool(values[name]) for name in dict(LEGACY_GETS) if values.get(name) is not None}
    if values.get("flags") is not None:
        offloads.update({name: bool(values["flags"] & bit) for name, bit in LEGACY_FLAGS})
    return offloads


def ethtool_ioctl(nic):
    """Read nic's driver info and offloads with the kernel's ethtool ioctls (SIOCETHTOOL), as ethtool -i/-k
    would: {"drvinfo": bytes or None, "values": {feature or "flags": int or None}}."""
    import ctypes
    import fcntl
    import socket
    import struct

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        def call(cmd, size):
            buf = ctypes.create_string_buffer(struct.pack("=I", cmd) + b"\0" * (size - 4), size)
            ifreq = struct.pack("16sP16x", nic.encode()[:15], ctypes.addressof(buf))
            try:
                fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifreq)
            except OSError:
                return None
            return buf.raw

        values = {}
        for name, cmd in LEGACY_GETS + (("flags", ETHTOOL_GFLAGS),):
            raw = call(cmd, 8)
            values[name] = None if raw is None else struct.unpack("=II", raw)[1]
        return {"drvinfo": call(ETHTOOL_GDRVINFO, _DRVINFO_SIZE), "values": values}
    finally:
        sock.close()


def device_nics(listdir, readlink):
    """The names of the NICs that sit on a device (``/sys/class/net/<nic>/device`` exists), sorted."""
    return sorted(name for name in listdir("/sys/class/net")
                  if readlink(f"/sys/class/net/{name}/device") is not None)


def app_specific(value):
    """A machine's identifier as results may carry it: HMAC-SHA256 keyed with the testbed's own key,
    first 32 hex digits. machine(5) asks applications never to expose /etc/machine-id itself but a
    keyed hash of it; the same is done for the DMI UUID and the MACs. Equal in, equal out."""
    if not value:
        return None
    return hmac.new(_APP_KEY, value.strip().lower().encode(), hashlib.sha256).hexdigest()[:32]


def identity(read_file, listdir, readlink, hostname):
    """{hostname, machine_id, product_uuid, macs}: what tells one machine from another, each
    identifier as its app-specific hash (``app_specific``)."""
    macs = []
    for nic in device_nics(listdir, readlink):
        mac = _strip(read_file(f"/sys/class/net/{nic}/address"))
        if mac and mac != "00:00:00:00:00:00":
            macs.append(app_specific(mac))
    return {"hostname": hostname, "machine_id": app_specific(_strip(read_file("/etc/machine-id"))),
            "product_uuid": app_specific(_strip(read_file("/sys/class/dmi/id/product_uuid"))),
            "macs": sorted(set(macs))}


def identity_difference(host, stored, current):
    """One sentence saying how inventory host ``host`` is another machine now, or None.

    Compared in order: machine-id, DMI product UUID, device NICs' MACs (another machine when no
    MAC is shared). A field missing on either side is not compared; nothing comparable is None."""
    stored, current = stored or {}, current or {}
    for field, what in (("machine_id", "machine-id"), ("product_uuid", "DMI product UUID")):
        if stored.get(field) and current.get(field) and stored[field] != current[field]:
            return (f"host {host}'s {what} is {current[field]}, but the run's stored points were measured on "
                    f"{stored[field]} (hostname {stored.get('hostname')})")
    old, new = set(stored.get("macs") or ()), set(current.get("macs") or ())
    if old and new and not old & new:
        return (f"host {host}'s NICs share no MAC with the host the run's stored points were measured on "
                f"(hostname {stored.get('hostname')}; MAC hashes {', '.join(sorted(new))} now, "
                f"{', '.join(sorted(old))} then)")
    return None


def cpu_tuning(read_file):
    """Governor, frequency driver, boost (turbo), SMT and transparent huge pages."""
    boost = _int(read_file("/sys/devices/system/cpu/cpufreq/boost"))
    no_turbo = _int(read_file("/sys/devices/system/cpu/intel_pstate/no_turbo"))
    if boost is None and no_turbo is not None:
        boost = 0 if no_turbo else 1
    smt_active = _int(read_file("/sys/devices/system/cpu/smt/active"))
    return {
        "governor": _strip(read_file("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")),
        "frequency_driver": _strip(read_file("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver")),
        "boost": None if boost is None else bool(boost),
        "smt_control": _strip(read_file("/sys/devices/system/cpu/smt/control")),
        "smt_active": None if smt_active is None else bool(smt_active),
        "thp_enabled": bracketed(read_file("/sys/kernel/mm/transparent_hugepage/enabled")),
        "thp_defrag": bracketed(read_file("/sys/kernel/mm/transparent_hugepage/defrag")),
    }


def nic_tuning(nic, read_file, readlink, run_command, find_binary, read_ethtool=None):
    """One device NIC: driver, ids, speed, MTU, and its firmware and offloads: ethtool's when it is
    installed, else the kernel's ethtool ioctls' (read_ethtool(nic), ``ethtool_ioctl``'s answer)."""
    base = f"/sys/class/net/{nic}"
    driver = readlink(f"{base}/device/driver")
    speed = _int(read_file(f"{base}/speed"))
    record = {
        "driver": os.path.basename(driver) if driver else None,
        "vendor_id": _strip(read_file(f"{base}/device/vendor")),
        "device_id": _strip(read_file(f"{base}/device/device")),
        "speed_mbps": speed if speed is not None and speed > 0 else None,
        "duplex": _strip(read_file(f"{base}/duplex")),
        "mtu": _int(read_file(f"{base}/mtu")),
        "firmware": None,
        "offloads": None,
    }
    ethtool = find_binary("ethtool")
    if not ethtool and read_ethtool:
        answer = read_ethtool(nic) or {}
        info = decode_drvinfo(answer["drvinfo"]) if answer.get("drvinfo") else None
        offloads = legacy_offloads(answer.get("values") or {})
        record["source"] = "ethtool ioctls (ethtool is not installed)"
        if info:
            record["firmware"] = info["firmware_version"]
            record["driver_version"] = info["version"]
        if offloads:
            record["offloads"] = offloads
        else:
            record["problem"] = f"the ethtool ioctls gave no offloads for {nic} (ethtool is not installed)"
        return record
    if not ethtool:
        record["problem"] = "ethtool is not installed: no firmware version or offloads"
        return record
    rc, out, err = run_command([ethtool, "-i", nic])
    try:
        info = parse_ethtool_info(out) if rc == 0 else None
    except ValueError:
        info = None
    if info:
        record["firmware"] = info["firmware_version"]
        record["driver_version"] = info["version"]
    rc, out, err = run_command([ethtool, "-k", nic])
    try:
        features = parse_ethtool_features(out) if rc == 0 else {}
    except ValueError:
        features = {}
    if features:
        record["offloads"] = {name: features[name]["on"] for name in OFFLOADS if name in features}
    else:
        record["problem"] = f"ethtool -k {nic} exited {rc}: {_strip(err) or _strip(out) or '(no output)'}"
    return record


def disk_tuning(disk, read_file):
    """One disk: model, vendor, firmware, rotational, scheduler, size."""
    base = f"/sys/block/{disk}"
    sectors = _int(read_file(f"{base}/size"))
    rotational = _int(read_file(f"{base}/queue/rotational"))
    return {
        "model": _strip(read_file(f"{base}/device/model")),
        "vendor": _strip(read_file(f"{base}/device/vendor")),
        "firmware": _strip(read_file(f"{base}/device/firmware_rev")) or _strip(read_file(f"{base}/device/rev")),
        "rotational": None if rotational is None else bool(rotational),
        "scheduler": bracketed(read_file(f"{base}/queue/scheduler")),
        "size_bytes": None if sectors is None else sectors * 512,
    }


def tuning(read_file, listdir, readlink, run_command, find_binary, read_ethtool=None):
    """{cpu: {...}, nics: {nic: {...}}, disks: {disk: {...}}} for the host."""
    disks = sorted(name for name in listdir("/sys/block") if not _NOT_DISKS.match(name))
    return {
        "cpu": cpu_tuning(read_file),
        "nics": {nic: nic_tuning(nic, read_file, readlink, run_command, find_binary, read_ethtool)
                 for nic in device_nics(listdir, readlink)},
        "disks": {disk: disk_tuning(disk, read_file) for disk in disks},
    }
