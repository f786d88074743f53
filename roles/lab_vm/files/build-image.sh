#!/bin/bash
# Assemble the lab director VM: kernel, small initramfs, ext4 root disk.
#
#   build-image.sh KERNEL_ROOT KVER ROOTFS_IMAGE FILES_DIR AUTHORIZED_KEY OUT_DIR SIZE_MB
#
# KERNEL_ROOT   a Debian linux-image-KVER package extracted with dpkg-deb -x
# ROOTFS_IMAGE  docker image of the guest userspace (files/rootfs/Dockerfile), exported flat
# FILES_DIR    this role's files/ (initramfs-init, inittab, testbed-rc)
# OUT_DIR      receives vmlinuz, initramfs.img, rootfs.img (written atomically: *.tmp + mv)
#
# Root disk modules: the closure of every kernel/net module (IPVS, netfilter,
# NAT, tunnels) plus the virtio NIC; the initramfs only gets virtio-pci,
# virtio-blk and ext4 with their dependencies. Needs root (file ownership in
# the image), depmod/modprobe (kmod), busybox-static, cpio, mke2fs >= 1.43 (-d).
set -euo pipefail
KROOT=$1 KVER=$2 ROOTFS_IMAGE=$3 FILES=$4 AUTHKEY=$5 OUT=$6 SIZE_MB=$7
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
CID=$(docker create "$ROOTFS_IMAGE" /bin/true)
docker export "$CID" | tar --numeric-owner -xf - -C "$ROOT"
net_modules=$(cd "$MODDIR" && find kernel/net -name '*.ko' -printf '%f\n' | sed 's/\.ko$//')
# shellcheck disable=SC2086
for rel in $(closure $net_modules virtio_net virtio_pci virtio_blk ext4 tun dummy); do
  mkdir -p "$ROOT/lib/modules/$KVER/$(dirname "$rel")"
  cp "$MODDIR/$rel" "$ROOT/lib/modules/$KVER/$rel"
done
cp "$MODDIR"/modules.order "$MODDIR"/modules.builtin* "$ROOT/lib/modules/$KVER/" 2>/dev/null || true
depmod -b "$ROOT" "$KVER"
install -m 0755 "$FILES/testbed-rc" "$ROOT/usr/local/sbin/testbed-rc"
install -m 0644 "$FILES/inittab" "$ROOT/etc/inittab"
ln -sf /bin/busybox "$ROOT/sbin/init"
rm -f "$ROOT/etc/ssh/ssh_host_"*
ssh-keygen -q -A -f "$ROOT"
install -d -m 0700 "$ROOT/root/.ssh"
install -m 0600 "$AUTHKEY" "$ROOT/root/.ssh/authorized_keys"
cat > "$ROOT/etc/ssh/sshd_config.d/testbed.conf" <<'CONF'
PermitRootLogin prohibit-password
PasswordAuthentication no
UseDNS no
MaxStartups 100:30:200
MaxSessions 100
CONF
: > "$ROOT/etc/resolv.conf"
echo "/dev/vda / ext4 rw,noatime 0 1" > "$ROOT/etc/fstab"
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
