#!/bin/bash
# Build OpenZFS kernel modules for a Debian kernel once, as a binary .deb.
#
#   build-zfs-modules.sh BASE_ROOTFS_TAR KVER OUT_DIR [JOBS]
#
# BASE_ROOTFS_TAR  a Debian bookworm rootfs tarball (the lab's debootstrap image)
# KVER             the kernel release the modules are for (e.g. 6.1.0-56-amd64)
# OUT_DIR          receives zfs-modules-KVER_<zfs version>_amd64.deb (atomic: *.tmp + mv)
# JOBS             DKMS's parallel make jobs (0 or absent: 3 per core: on a busy machine
#                  each job gets its share of the CPU, on an idle one the others wait)
#
# The build runs in a throw-away chroot of BASE_ROOTFS_TAR (contrib added there,
# nothing is installed on this host): zfs-dkms and linux-headers-KVER from the
# distribution, `dkms build -j JOBS` and `dkms install` for KVER, then the
# built modules are packed as a modules-only .deb with dpkg-deb (bookworm's dkms
# 3.0 has no mkbmdeb any more) that installs on the target without compilers:
# zfs-modules-KVER, the version of zfs-dkms, depmod run by its postinst.
# About 7-15 min on 2 cores.
# Needs root (chroot, mounts).
set -euo pipefail
TAR=$1 KVER=$2 OUT=$3 JOBS=${4:-0}
[ "$JOBS" -gt 0 ] 2>/dev/null || JOBS=$(( $(nproc) * 3 ))
[ -f "$TAR" ] || { echo "no rootfs tarball $TAR" >&2; exit 2; }
mkdir -p "$OUT"
WORK=$(mktemp -d "$OUT/.zfs-build.XXXXXX")
cleanup() {
  for m in dev/pts dev proc sys; do umount "$WORK/root/$m" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
R=$WORK/root
mkdir -p "$R"
tar --numeric-owner -xf "$TAR" -C "$R"
# The kernel (and its headers) may come from a point release or a security
# update: the same suites as the host's kernel package lookup, with contrib.
cat > "$R/etc/apt/sources.list" <<SRC
deb http://deb.debian.org/debian bookworm main contrib
deb http://deb.debian.org/debian bookworm-updates main contrib
deb http://deb.debian.org/debian-security bookworm-security main contrib
SRC
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
mount -t proc proc "$R/proc"
mount -t sysfs sys "$R/sys"
mount --bind /dev "$R/dev"
mount --bind /dev/pts "$R/dev/pts"
run() { chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"; }
run apt-get update -q
# zfs-dkms first, with no kernel headers: its postinst builds for no kernel. Then the headers of
# KVER without dkms's header hook (bookworm's dkms builds there with -j<cores> and reads no job
# count from its configuration), and the build by hand with JOBS jobs.
run apt-get install -y -q --no-install-recommends zfs-dkms
rm -f "$R/etc/kernel/header_postinst.d/dkms"
run apt-get install -y -q --no-install-recommends "linux-headers-$KVER"
ZFULL=$(run dpkg-query -W -f='${Version}' zfs-dkms)
ZVER=${ZFULL%%-*}
# JOBS for the build's make and for configure's kernel probes (OpenZFS compiles them in parallel)
run env TEST_JOBS="$JOBS" dkms build -m zfs -v "$ZVER" -k "$KVER" -j "$JOBS"
run dkms install -m zfs -v "$ZVER" -k "$KVER"
KO=$R/lib/modules/$KVER/updates/dkms
ls "$KO"/zfs.ko* >/dev/null 2>&1 || { echo "no zfs.ko in $KO after the DKMS build" >&2; exit 1; }
PKG=$WORK/pkg
NAME=zfs-modules-${KVER}_${ZFULL}_amd64.deb
install -d "$PKG/DEBIAN" "$PKG/lib/modules/$KVER/updates/dkms"
cp -a "$KO"/. "$PKG/lib/modules/$KVER/updates/dkms/"
cat > "$PKG/DEBIAN/control" <<CTL
Package: zfs-modules-$KVER
Version: $ZFULL
Architecture: amd64
Maintainer: testbed <testbed@testbed.invalid>
Section: contrib/kernel
Priority: optional
Provides: zfs-modules
Description: OpenZFS $ZVER kernel modules for Linux $KVER
 Built with DKMS from Debian's zfs-dkms $ZFULL against linux-headers-$KVER
 by the testbed's lab_storage role (roles/lab_storage/files/build-zfs-modules.sh).
CTL
# shellcheck disable=SC2016  # $1 is the postinst's own argument, expanded when dpkg runs it
printf '#!/bin/sh\nset -e\n[ "$1" = configure ] && depmod -a %s || true\n' "$KVER" > "$PKG/DEBIAN/postinst"
chmod 0755 "$PKG/DEBIAN/postinst"
dpkg-deb --root-owner-group -Zxz --build "$PKG" "$OUT/$NAME.tmp" >/dev/null
mv "$OUT/$NAME.tmp" "$OUT/$NAME"
echo "$OUT/$NAME"
