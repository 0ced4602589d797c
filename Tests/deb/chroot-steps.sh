#!/bin/bash
# Runs inside the clean Debian 12 tree (Tests/deb/chroot-test.sh copies it to /srv/test), as root,
# with no systemd running: /run is an empty tmpfs, as in a container or an image being built.
#
#   bash /srv/test/steps.sh swiped_VERSION_ARCH.deb VERSION
set -uo pipefail
deb=/srv/test/$1
version=$2
prev=/srv/test/swiped_${version}~prev1.deb
export DEBIAN_FRONTEND=noninteractive
passes=0 failures=0
ok() { echo "ok: $*"; passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect() {  # description command...: the command succeeds
    local description=$1; shift
    local output
    if output=$("$@" 2>&1); then ok "$description"; else fail "$description: $* said:"; echo "$output"; fi
}
daemon=
start_daemon() {  # by hand, as root, on the service's state directory
    mkdir -p /run/swiped-test
    swiped --socket /run/swiped-test/s.sock --state /var/lib/swiped 2>> /srv/test/swiped.log &
    daemon=$!
    for _ in $(seq 100); do [ -S /run/swiped-test/s.sock ] && return; sleep 0.1; done
    fail "swiped did not start:"; cat /srv/test/swiped.log
}
stop_daemon() {
    kill -TERM "$daemon"
    wait "$daemon"
    local status=$?
    [ "$status" = 0 ] && ok "swiped stopped with SIGTERM, status 0" || fail "swiped exited with $status on SIGTERM"
    daemon=
}
ctl() { swipectl --socket /run/swiped-test/s.sock "$@"; }
# What a purge may leave (Debian policy): the daemon's data, the groups (in /etc/group,
# /etc/gshadow and their backups), the logs of apt and dpkg, and man-db's cache of formatted
# pages (systemd-analyze verify ran `man swiped`; man-db's daily job expires it).
leftovers() {
    find / -xdev \( -path /proc -o -path /srv/test -o -path /var/lib/swiped -o -path /var/log -o -path /var/cache/man \) -prune \
        -o \( -name '*swiped*' -print \)
    grep -rls swiped /etc | grep -vxE '/etc/(group|gshadow)-?'
}

[ -d /run/systemd/system ] && fail "systemd runs here: this test needs a tree without it"
if command -v swift > /dev/null || [ -e /opt/swift ] || ls /usr/lib/swift* > /dev/null 2>&1; then
    fail "the tree has Swift"
else
    ok "the tree has no Swift"
fi
expect "apt-get update" apt-get update -qq

echo "== A clean Debian 12 tree: apt-get install ./$(basename "$deb")"
cd /srv/test
expect "apt-get install ./$(basename "$deb") (postinst without a running systemd)" \
    apt-get install -y -qq "./$(basename "$deb")"
[ "$(dpkg-query -W -f='${Status} ${Version}' swiped)" = "install ok installed $version" ] &&
    ok "swiped $version configured" || fail "dpkg says: $(dpkg-query -W -f='${Status} ${Version}' swiped)"
for package in socat bash-completion; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'ok installed' &&
        ok "$package installed (Recommends)" || fail "$package not installed (Recommends)"
done
expect "groups swiped and swiped-writers (sysusers.d)" getent group swiped swiped-writers
[ -L /etc/systemd/system/sockets.target.wants/swiped.socket ] && ok "swiped.socket enabled" ||
    fail "swiped.socket not enabled"
if find /etc/systemd/system -name 'swiped.service' -o -name 'swiped-web.socket' -o -name 'swiped-metrics.socket' | grep -q .; then
    fail "enabled, and should not be: $(find /etc/systemd/system -name 'swiped.service' -o -name 'swiped-*.socket')"
else
    ok "swiped.service, swiped-web.socket and swiped-metrics.socket not enabled"
fi
[ "$(swiped --version)" = "swiped $version" ] && ok "swiped --version" ||
    fail "swiped --version: $(swiped --version 2>&1)"
swipectl --help | grep -q '^Usage: swipectl' && ok "swipectl --help" || fail "swipectl --help: $(swipectl --help 2>&1 | head -3)"

# The installed units, as systemd would load them (man: links checked with man-db, the
# binaries they run present).
verify=$(SYSTEMD_LOG_COLOR=0 systemd-analyze verify /lib/systemd/system/swiped.socket \
    /lib/systemd/system/swiped.service /lib/systemd/system/swiped-web.socket 2>&1)
[ $? = 0 ] && [ -z "$verify" ] && ok "systemd-analyze verify of the installed units: clean" ||
    fail "systemd-analyze verify: $verify"
# What docs/running.md says to run on a server without man-db: all but the man: links.
verify=$(SYSTEMD_LOG_COLOR=0 systemd-analyze verify --man=no /lib/systemd/system/swiped.socket \
    /lib/systemd/system/swiped.service /lib/systemd/system/swiped-web.socket 2>&1)
[ $? = 0 ] && [ -z "$verify" ] && ok "systemd-analyze verify --man=no of the installed units: clean" ||
    fail "systemd-analyze verify --man=no: $verify"
for unit in swiped.service; do
    score=$(SYSTEMD_COLORS=0 systemd-analyze security --offline=true --no-pager "/lib/systemd/system/$unit" 2>&1 |
        sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
    [ -n "$score" ] && ok "systemd-analyze security $unit: $score" || fail "no security score for $unit"
done

echo "== A daemon started by hand"
start_daemon
ctl list | grep -q '^matrix  *The Matrix' && ok "swipectl list" || fail "swipectl list: $(ctl list 2>&1)"
expect "swipectl toggle-watched matrix" ctl toggle-watched matrix
ctl --json list | grep -q '"id":"matrix","title":"The Matrix","image":"matrix","watched":true' &&
    ok "matrix is watched" || fail "matrix is not watched: $(ctl --json list)"
ids=$(bash -c 'source /usr/share/bash-completion/completions/swipectl
    COMP_WORDS=(swipectl --socket /run/swiped-test/s.sock remove mat) COMP_CWORD=4
    _swipectl; echo "${COMPREPLY[*]}"')
[ "$ids" = matrix ] && ok "bash completion of a movie id" || fail "bash completion gave [$ids]"
stop_daemon

echo "== apt-get purge"
expect "apt-get purge swiped" apt-get purge -y -qq swiped
left=$(leftovers)
[ -z "$left" ] && ok "purge left only the data and the groups" || fail "purge left: $left"
[ -e /var/lib/swiped/events.sqlite3 ] && ok "purge kept the movie list" || fail "purge removed the data"
rm -rf /var/lib/swiped

echo "== An upgrade from $version~prev1 keeps the data"
expect "apt-get install ./$(basename "$prev")" apt-get install -y -qq "./$(basename "$prev")"
start_daemon
expect "toggle-friends seven" ctl toggle-friends seven
expect "add Upgrade Test" ctl add "Upgrade Test"
stop_daemon
# As if the previous package had been one with swiped-web.service (websocketd) and the operator
# had enabled it: the upgrade removes its enablement and enables swiped-web.socket in its place.
mkdir -p /etc/systemd/system/multi-user.target.wants
ln -s /lib/systemd/system/swiped-web.service /etc/systemd/system/multi-user.target.wants/swiped-web.service
expect "apt-get install ./$(basename "$deb") over it" apt-get install -y -qq "./$(basename "$deb")"
[ ! -e /etc/systemd/system/multi-user.target.wants/swiped-web.service ] &&
    [ ! -L /etc/systemd/system/multi-user.target.wants/swiped-web.service ] &&
    ok "the old swiped-web.service is no longer enabled" || fail "swiped-web.service is still enabled"
[ -L /etc/systemd/system/sockets.target.wants/swiped-web.socket ] &&
    ok "swiped-web.socket enabled in its place" || fail "swiped-web.socket not enabled after the upgrade"
[ "$(dpkg-query -W -f='${Status} ${Version}' swiped)" = "install ok installed $version" ] &&
    ok "upgraded to $version" || fail "dpkg says: $(dpkg-query -W -f='${Status} ${Version}' swiped)"
[ -L /etc/systemd/system/sockets.target.wants/swiped.socket ] && ok "swiped.socket still enabled" ||
    fail "swiped.socket no longer enabled"
start_daemon
ctl --json list | grep -q '"id":"seven","title":"Se7en","image":"seven","watched":false,"watchedWithFriends":true' &&
    ok "seven still watched with friends" || fail "seven lost its flag: $(ctl --json list)"
ctl list | grep -q '^upgrade_test  *Upgrade Test' && ok "the added movie is still there" ||
    fail "the added movie is gone: $(ctl list)"
stop_daemon
expect "apt-get purge swiped, again" apt-get purge -y -qq swiped
left=$(leftovers)
[ -z "$left" ] && ok "purge left only the data and the groups" || fail "purge left: $left"

echo "deb chroot: $passes passed, $failures failed"
[ "$failures" = 0 ]
