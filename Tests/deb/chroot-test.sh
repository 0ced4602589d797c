#!/usr/bin/env bash
# The full test of the Debian package (`make test-deb`): installed with apt-get into a clean
# Debian 12 tree that has never seen Swift, where it must run. Tests/deb/README.md says what it
# checks and why a chroot.
#
#   Tests/deb/chroot-test.sh swiped_VERSION_ARCH.deb
#
# The tree: `mmdebstrap --variant=minbase` of bookworm from deb.debian.org, plus man-db (so that
# `systemd-analyze verify` checks the units' man: links), made once and kept as a tarball in
# .build/deb-test/; each run unpacks a fresh copy. apt's downloads and lists are kept there too.
# Everything runs in a mount and PID namespace of its own (unshare): its mounts and processes
# end with it, whatever happens.
set -euo pipefail
deb=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=$root/.build/deb-test
mirror=${DEB_TEST_MIRROR:-http://deb.debian.org/debian}
base=$cache/bookworm-minbase-man-db.tar
version=$(dpkg-deb -f "$deb" Version)

mkdir -p "$cache/archives/partial" "$cache/lists/partial"
if [ ! -s "$base" ]; then
    echo "chroot-test: making the clean tree (once): mmdebstrap bookworm from $mirror"
    mmdebstrap --quiet --variant=minbase --include=man-db bookworm "$base.part" "$mirror"
    mv "$base.part" "$base"
fi

tree=$(mktemp -d "$cache/tree.XXXXXX")
trap 'rm -rf "$tree"' EXIT
tar -C "$tree" -xf "$base"
cp /etc/resolv.conf "$tree/etc/resolv.conf"
mkdir -p "$tree/srv/test"
cp "$deb" "$tree/srv/test/"
cp "$here/chroot-steps.sh" "$tree/srv/test/steps.sh"

# The previous package: this one, relabelled VERSION~prev1 (dpkg orders it before VERSION), so
# that installing this one over it runs the maintainer scripts' upgrade paths.
dpkg-deb -R "$deb" "$tree/srv/test/prev"
sed -i "s/^Version: .*/Version: ${version}~prev1/" "$tree/srv/test/prev/DEBIAN/control"
dpkg-deb --root-owner-group -b "$tree/srv/test/prev" "$tree/srv/test/swiped_${version}~prev1.deb" > /dev/null
rm -rf "$tree/srv/test/prev"

unshare --mount --pid --fork --mount-proc="$tree/proc" bash -c '
    set -e
    tree=$1 cache=$2
    mount --bind "$cache/archives" "$tree/var/cache/apt/archives"
    mount --bind "$cache/lists" "$tree/var/lib/apt/lists"
    mount -t tmpfs tmpfs "$tree/run"
    mount -t tmpfs tmpfs "$tree/tmp"
    for node in null zero random urandom; do [ -e "$tree/dev/$node" ] || { touch "$tree/dev/$node"; mount --bind "/dev/$node" "$tree/dev/$node"; }; done
    exec chroot "$tree" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
        bash /srv/test/steps.sh "$3" "$4"
' chroot-test "$tree" "$cache" "$(basename "$deb")" "$version"
