# A throw-away minimal Debian 12 root to run commands in through chroot, for
# scripts/fresh-machine-check and scripts/gpu-check-rehearsal. Source it, then:
#   debian_root_make REPO    extract the cached mmdebstrap root (made once), mount /proc, /dev, /sys
#                            and REPO read-only at /mnt/src; sets $root and removes it all on exit
#   in_root COMMAND          run a bash command in it with a clean environment, as root
# Environment: EMBER_FRESH_CACHE (default /var/cache/ember-fresh) holds the tarball;
# EMBER_NEW_ROOT=1 remakes it.

debian_root_make() {
  local repo=$1 cache=${EMBER_FRESH_CACHE:-/var/cache/ember-fresh}
  local tarball=$cache/debian12-minbase.tar
  [ "$(id -u)" -eq 0 ] || { echo "needs root (mmdebstrap, chroot, mount)" >&2; exit 1; }
  bash "$repo/scripts/install-deps" fresh
  # This machine's own apt sources and settings, so the root reaches the same mirror.
  local sources=/etc/apt/sources.list.d/debian.sources
  [ -f "$sources" ] || sources=/etc/apt/sources.list
  if [ "${EMBER_NEW_ROOT:-0}" = 1 ] || [ ! -f "$tarball" ]; then
    mkdir -p "$cache"
    echo "making a minimal Debian 12 root ($tarball)"
    local start=$(date +%s)
    mmdebstrap --quiet --variant=minbase --format=tar bookworm "$tarball.part" "$sources"
    mv "$tarball.part" "$tarball"
    echo "root made in $(($(date +%s) - start)) s"
  fi
  root=$(mktemp -d /var/tmp/ember-root.XXXXXX)
  mounted=()
  trap debian_root_cleanup EXIT INT TERM
  tar -xf "$tarball" -C "$root"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  # mmdebstrap's minbase writes no /etc/hosts; every installed Debian machine has one naming
  # localhost (the DDP tutorials' MASTER_ADDR), so the root gets what a fresh install has.
  [ -s "$root/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' > "$root/etc/hosts"
  cp -r /etc/apt/apt.conf.d/. "$root/etc/apt/apt.conf.d/"
  mount -t proc proc "$root/proc" && mounted+=("$root/proc")
  mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev" && mounted+=("$root/dev")
  mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys" && mounted+=("$root/sys")
  mkdir -p "$root/mnt/src"
  mount --bind -o ro "$repo" "$root/mnt/src" && mounted+=("$root/mnt/src")
}

# Mounts a host folder at the same path in the root (read-only unless a third argument says rw).
debian_root_bind() {
  mkdir -p "$root$1"
  mount --bind "$1" "$root$1" && mounted+=("$root$1")
  [ "${2:-ro}" = rw ] || mount -o remount,bind,ro "$root$1"
}

debian_root_cleanup() {
  local status=$?
  # Unmount in reverse order; never delete the root while anything is still mounted in it.
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -R "${mounted[$i]}" 2>/dev/null || umount -lR "${mounted[$i]}" 2>/dev/null || true
  done
  # What ran inside may have mounted too: `ip netns add` binds /run/netns and one file per
  # namespace. Deepest first.
  # (No mounts left is no error: the callers' pipefail and errexit hold in this trap too, and an
  # empty grep used to end it with status 1 after a passing check.)
  { findmnt -rn -o TARGET | grep "^$root/" || true; } | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done
  if findmnt -rn -o TARGET | grep -q "^$root"; then
    echo "$root still has mounts; not deleting it" >&2
  else
    rm -rf --one-file-system "$root"
  fi
  exit "$status"
}

in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 ${EMBER_ROOT_ENV:-} \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/cuda/bin bash -c "$1"
}
