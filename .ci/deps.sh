#!/bin/sh
# Installs what a fresh Debian 12 machine lacks to build, test and bench
# corosched, only when something is missing (apt-get, as root or via sudo).
# EXTRA_DEPS: more packages to install. EXTRA_UNPACK: packages wanted for
# their files only, without their dependencies (the OpenResty client
# libraries spec/43 runs depend on nginx-extras): downloaded and unpacked
# into / with dpkg -x, when they are not installed.
set -e
need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
for p in lua5.4 liblua5.4-dev libevent-dev libssl-dev libpcre2-dev pkg-config \
         lua-busted luarocks gcc make openssl python3; do
    have_pkg "$p" || need="$need $p"
done
[ -n "$EXTRA_DEPS" ] && for p in $EXTRA_DEPS; do
    have_pkg "$p" || need="$need $p"
done
unpack=""
[ -n "$EXTRA_UNPACK" ] && for p in $EXTRA_UNPACK; do
    have_pkg "$p" || unpack="$unpack $p"
done
[ -z "$need$unpack" ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
if [ -n "$need" ]; then
    echo "installing:$need"
    $SUDO apt-get install -y -qq --no-install-recommends $need >/dev/null
fi
if [ -n "$unpack" ]; then
    echo "unpacking (without dependencies):$unpack"
    dir=$(mktemp -d)
    chmod a+rwx "$dir" # apt-get download writes as the _apt user
    (cd "$dir" && apt-get download -qq $unpack >/dev/null)
    for deb in "$dir"/*.deb; do
        $SUDO dpkg -x "$deb" /
    done
    rm -rf "$dir"
fi
