#!/bin/sh
# Print "kvm" when KVM really boots a kernel here, else "tcg".
#   kvm-probe.sh VMLINUZ TIMEOUT_S
# /dev/kvm can exist and open without working (nested or paravirtual hosts):
# boot the kernel with no root and look for its banner on the serial console.
kernel=$1 timeout_s=${2:-15}
if [ ! -c /dev/kvm ] || ! [ -r /dev/kvm ] || ! [ -w /dev/kvm ]; then echo tcg; exit 0; fi
log=$(mktemp)
timeout "$timeout_s" qemu-system-x86_64 -accel kvm -cpu host -m 128 -nodefaults -display none -no-reboot \
  -serial "file:$log" -kernel "$kernel" -append "console=ttyS0 panic=-1" >/dev/null 2>&1
if grep -q "Linux version" "$log"; then echo kvm; else echo tcg; fi
rm -f "$log"
