#!/bin/sh
# Installs what a fresh Debian 12 machine lacks to build, test and bench
# corosched, only when something is missing (apt-get, as root or via sudo).
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
[ -z "$need" ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "installing:$need"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $need >/dev/null
