#!/bin/bash
# Assemble a lab VM: kernel, small initramfs, ext4 root disk.
#
#   build-image.sh KERNEL_ROOT KVER ROOTFS FILES_DIR AUTHORIZED_KEY OUT_DIR SIZE_MB [FREE_MB [MODULES]]
#
# KERNEL_ROOT   a Debian linux-image-KVER package extracted with dpkg-deb -x
# ROOTFS        either a docker image of the guest userspace (files/rootfs/Dockerfile,
#               busybox-static inside), exported flat; or the absolute path of a rootfs
#               tarball (e.g. the guest_rootfs role's), unpacked as it is: then busybox
#               (this host's busybox-static) goes to /usr/local/lib/testbed with its applet
#               links in /usr/local/lib/testbed/bin, the rootfs's own /sbin/init is left
#               alone (the guest boots with init=/usr/local/lib/testbed/bin/init) and
#               sitecustomize.py is appended to the rootfs's /etc/python3.*/sitecustomize.py
# FILES_DIR    this role's files/ (initramfs-init, inittab, testbed-rc, rootfs/sitecustomize.py)
# OUT_DIR      receives vmlinuz, initramfs.img, rootfs.img (written atomically: *.tmp + mv)
# SIZE_MB      size of the sparse disk; it grows to the unpacked tree + 10 % + 128 MiB
#              of file system overhead + FREE_MB (default 0) when that is larger
# MODULES      more kernel modules for the root disk, space-separated (e.g. "rbd xfs"),
#              each with its dependencies; modules the rootfs brings itself (e.g. a
#              prebuilt OpenZFS package in /lib/modules/KVER/updates) are kept and indexed
#
# Root disk modules: the closure of every kernel/net module (IPVS, netfilter,
# NAT, tunnels) plus the virtio NIC; the initramfs only gets virtio-pci,
# virtio-blk and ext4 with their dependencies. Needs root (file ownership in
# the image), depmod/modprobe (kmod), busybox-static, cpio, mke2fs >= 1.43 (-d).
set -euo pipefail
KROOT=$1 KVER=$2 ROOTFS=$3 FILES=$4 AUTHKEY=$5 OUT=$6 SIZE_MB=$7 FREE_MB=${8:-0} EXTRA_MODULES=${9:-}
TARBALL=""
case "$ROOTFS" in /*) [ -f "$ROOTFS" ] || { echo "no rootfs tarball $ROOTFS" >&2; exit 2; }; TARBALL=$ROOTFS ;; esac
BUSYBOX=$(command -v busybox) || { echo "busybox (busybox-static) is required" >&2; exit 2; }
ldd "$BUSYBOX" >/dev/null 2>&1 && { echo "$BUSYBOX is dynamically linked: install busybox-static" >&2; exit 2; }
MODDIR=$KROOT/lib/modules/$KVER
[ -f "$KROOT/boot/vmlinuz-$KVER" ] || { echo "no kernel $KROOT/boot/vmlinuz-$KVER" >&2; exit 2; }
[ -f "$MODDIR/modules.dep" ] || depmod -b "$KROOT" "$KVER"

WORK=$(mktemp -d "$OUT/.build.XXXXXX")
CID=""
cleanup() { rm -rf "$WORK"; [ -z "$CID" ] || docker rm -f "$CID" >/dev/null; }
trap cleanup EXIT

closure() {  # module names -> unique relative .ko paths, dependencies first
  for m in "$@"; do
    modprobe -d "$KROOT" -S "$KVER" --show-depends "$m" 2>/dev/null | awk '$1 == "insmod" {print $2}'
  done | awk '!seen[$0]++' | sed "s|^$MODDIR/||"
}

# --- root disk ------------------------------------------------------------------
ROOT=$WORK/rootfs
mkdir -p "$ROOT"
if [ -n "$TARBALL" ]; then
  tar --numeric-owner -xf "$TARBALL" -C "$ROOT"
  for d in bin sbin lib etc root usr usr/local; do
    case "$(readlink "$ROOT/$d" || true)" in
      /*) echo "$TARBALL: /$d is an absolute symlink; this script writes below it" >&2; exit 2 ;;
    esac
  done
else
  CID=$(docker create "$ROOTFS" /bin/true)
  docker export "$CID" | tar --numeric-owner -xf - -C "$ROOT"
fi
# docker export adds /.dockerenv: a VM booted from it would say it is a Docker container
# (systemd-detect-virt and tool_versions read it).
rm -f "$ROOT/.dockerenv"
# Files written below are replaced, never written through: a symlink in the
# rootfs (absolute, e.g. /etc/resolv.conf -> /run/...) must not reach the host.
put() { rm -f "$ROOT/$1"; cat > "$ROOT/$1"; chmod 0644 "$ROOT/$1"; }
net_modules=$(cd "$MODDIR" && find kernel/net -name '*.ko' -printf '%f\n' | sed 's/\.ko$//')
# shellcheck disable=SC2086
for rel in $(closure $net_modules virtio_net virtio_pci virtio_blk ext4 tun dummy $EXTRA_MODULES); do
  mkdir -p "$ROOT/lib/modules/$KVER/$(dirname "$rel")"
  cp "$MODDIR/$rel" "$ROOT/lib/modules/$KVER/$rel"
done
cp "$MODDIR"/modules.order "$MODDIR"/modules.builtin* "$ROOT/lib/modules/$KVER/" 2>/dev/null || true
depmod -b "$ROOT" "$KVER"
install -d -m 0755 "$ROOT/usr/local/sbin"
install -m 0755 "$FILES/testbed-rc" "$ROOT/usr/local/sbin/testbed-rc"
if [ -n "$TARBALL" ]; then
  TB=/usr/local/lib/testbed
  install -d -m 0755 "$ROOT$TB/bin"
  install -m 0755 "$BUSYBOX" "$ROOT$TB/busybox"
  for applet in $("$BUSYBOX" --list); do ln -sf ../busybox "$ROOT$TB/bin/$applet"; done
  sed "s|/bin/busybox|$TB/busybox|g" "$FILES/inittab" | put etc/inittab
  for dir in "$ROOT"/etc/python3.*; do
    [ -d "$dir" ] || continue
    { [ -L "$dir/sitecustomize.py" ] || cat "$dir/sitecustomize.py" 2>/dev/null || true
      echo; cat "$FILES/rootfs/sitecustomize.py"; } > "$WORK/sitecustomize.py"
    put "${dir#"$ROOT"/}/sitecustomize.py" < "$WORK/sitecustomize.py"
  done
else
  install -m 0644 "$FILES/inittab" "$ROOT/etc/inittab"
  ln -sf /bin/busybox "$ROOT/sbin/init"
fi
rm -f "$ROOT/etc/ssh/ssh_host_"*
ssh-keygen -q -A -f "$ROOT"
install -d -m 0700 "$ROOT/root/.ssh"
rm -f "$ROOT/root/.ssh/authorized_keys"
install -m 0600 "$AUTHKEY" "$ROOT/root/.ssh/authorized_keys"
install -d -m 0755 "$ROOT/etc/ssh/sshd_config.d"
put etc/ssh/sshd_config.d/testbed.conf <<'CONF'
PermitRootLogin prohibit-password
PasswordAuthentication no
UseDNS no
MaxStartups 100:30:200
MaxSessions 100
CONF
put etc/resolv.conf < /dev/null
echo "/dev/vda / ext4 rw,noatime 0 1" | put etc/fstab
need_mb=$(( $(du -sm "$ROOT" | cut -f1) * 110 / 100 + 128 + FREE_MB ))
[ "$need_mb" -le "$SIZE_MB" ] || SIZE_MB=$need_mb
truncate -s "${SIZE_MB}M" "$WORK/rootfs.img"
mke2fs -q -t ext4 -L testbed-root -E root_owner=0:0 -d "$ROOT" "$WORK/rootfs.img"

# --- initramfs ----------------------------------------------------------------------
INITRD=$WORK/initramfs
mkdir -p "$INITRD/bin" "$INITRD/lib/modules"
cp "$BUSYBOX" "$INITRD/bin/busybox"
install -m 0755 "$FILES/initramfs-init" "$INITRD/init"
: > "$INITRD/modules.load"
for rel in $(closure virtio_pci virtio_blk ext4); do
  cp "$MODDIR/$rel" "$INITRD/lib/modules/$(basename "$rel")"
  basename "$rel" >> "$INITRD/modules.load"
done
(cd "$INITRD" && find . | cpio -o -H newc --quiet | gzip -1) > "$WORK/initramfs.img"

cp "$KROOT/boot/vmlinuz-$KVER" "$WORK/vmlinuz"
for f in vmlinuz initramfs.img rootfs.img; do mv -f "$WORK/$f" "$OUT/$f"; done
du -h --apparent-size "$OUT/initramfs.img" "$OUT/rootfs.img" | sed 's/^/built: /'
