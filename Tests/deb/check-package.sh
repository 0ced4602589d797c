#!/usr/bin/env bash
# The quick check of the Debian package (`make test-deb-quick`, part of `make test`): what can be
# checked without installing it. Tests/deb/README.md lists what each step catches.
#
#   Tests/deb/check-package.sh swiped_VERSION_ARCH.deb
set -euo pipefail
export LC_ALL=C
deb=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passes=0 failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; passes=$((passes + 1)); }

# 1. One version: the code's, the changelog's, the package's and the binaries' own.
code=$(sed -n 's/^public let swipedVersion = "\(.*\)"$/\1/p' "$root/Sources/Wire/Version.swift")
changelog=$(cd "$root" && dpkg-parsechangelog -S Version)
package=$(dpkg-deb -f "$deb" Version)
dpkg-deb -x "$deb" "$work/tree"
binary=$("$work/tree/usr/bin/swiped" --version)
if [ -n "$code" ] && [ "$code" = "$changelog" ] && [ "$code" = "$package" ] && [ "$binary" = "swiped $code" ]; then
    pass "version $code everywhere"
else
    fail "versions disagree: Version.swift '$code', debian/changelog '$changelog', package '$package', swiped --version '$binary'"
fi
[ "$(basename "$deb")" = "swiped_${code}_$(dpkg --print-architecture).deb" ] || fail "named $(basename "$deb")"
grep -q "^    apt install ./swiped_${code}_" "$root/docs/running.md" || fail "docs/running.md's install section does not show swiped_${code}_…"

# 2. lintian, Debian 12's: no error, no warning, and no informational tag left that debian/
#    does not override with a reason.
if lintian --fail-on error,warning,info --display-info --no-tag-display-limit "$deb" > "$work/lintian" 2>&1; then
    pass "lintian"
else
    fail "lintian:"; cat "$work/lintian"
fi

# 3. The file list: modes and paths, every file root's (sizes and dates move).
dpkg-deb --contents "$deb" | awk '{
    path = $6; sub(/^\./, "", path)
    print $1, path ($7 == "->" ? " -> " $8 : "") ($2 == "root/root" ? "" : " owned by " $2) }' |
    sort -k2 > "$work/contents"
if diff -u "$here/contents.txt" "$work/contents" > "$work/contents.diff"; then
    pass "contents as Tests/deb/contents.txt"
else
    fail "contents differ from Tests/deb/contents.txt (- expected, + built):"; cat "$work/contents.diff"
fi

# 4. Libraries: Debian's only, found by dpkg-shlibdeps, no path into the Swift toolchain.
for binary in swiped swipectl; do
    file=$work/tree/usr/bin/$binary
    if readelf -d "$file" | grep -Eq 'RPATH|RUNPATH'; then fail "$binary has an RPATH/RUNPATH: $(readelf -d "$file" | grep -E 'RPATH|RUNPATH')"; fi
    libraries=$(ldd "$file")
    if grep -Eq 'not found|/opt/swift|libswift|libFoundation|libdispatch|libBlocksRuntime' <<< "$libraries"; then
        fail "$binary needs a library outside Debian:"; echo "$libraries"
    else
        pass "$binary: $(readelf -d "$file" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
    fi
done
depends=$(dpkg-deb -f "$deb" Depends)
# libssl3 (libcrypto: the handshake's SHA-1 and base64, the export's SHA-256) since the daemon
# serves the web page itself (issue 43); WebSocket frames are its own since issue 44 (no wslay).
for library in libc6 libsystemd0 libsqlite3-0 libpq5 libssl3; do
    grep -q "$library" <<< "$depends" || fail "Depends lacks $library: $depends"
done
grep -q 'swift' <<< "$depends" && fail "Depends names a Swift package: $depends"
grep -q 'wslay' <<< "$depends" && fail "Depends names wslay, which the daemon no longer links: $depends"
pass "Depends: $depends"

# 5. Shell completion, with the packaged swipectl and swiped.
if "$here/completion.sh" "$work/tree/usr/bin" "$work/tree/usr/share/bash-completion/completions/swipectl"; then
    pass "bash completion"
else
    fail "bash completion"
fi

# zsh's and fish's: their syntax, where those shells are installed (they are not test packages).
completions=$work/tree/usr/share
if command -v zsh > /dev/null; then
    zsh -n "$completions/zsh/vendor-completions/_swipectl" && pass "zsh completion parses" || fail "zsh completion"
fi
if command -v fish > /dev/null; then
    fish --no-execute "$completions/fish/vendor_completions.d/swipectl.fish" && pass "fish completion parses" || fail "fish completion"
fi

echo "deb: $passes passed, $failures failed"
[ "$failures" = 0 ]
