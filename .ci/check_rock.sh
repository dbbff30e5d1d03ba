#!/bin/sh
# The install users make: luarocks builds the rockspec and installs it into
# a temporary tree, from a copy of the checkout (its build leaves objects
# next to the sources); then, from outside the checkout and with that
# tree's paths only, every module loads from the tree and the examples run.
#   sh .ci/check_rock.sh   (make check-rock)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
cp -R "$top/csrc" "$top/lua" "$top/rockspec" "$top/examples" "$tmp/src"
(cd "$tmp/src" && luarocks --lua-version=5.4 make --tree "$tmp/tree" \
    rockspec/corosched-scm-1.rockspec) >"$tmp/build.log" 2>&1 || {
    cat "$tmp/build.log"
    echo "check-rock: luarocks make failed" >&2
    exit 1
}
cd "$tmp"
eval "$(luarocks --lua-version=5.4 path --tree "$tmp/tree")"
lua5.4 - "$tmp/tree/" <<'LUA'
local tree = arg[1]
for _, m in ipairs { "corosched", "corosched.core", "corosched.re",
                     "corosched.ngx", "corosched.http",
                     "corosched.luasocket" } do
  local path = package.searchpath(m, package.path)
               or package.searchpath(m, package.cpath)
  assert(path and path:sub(1, #tree) == tree,
         m .. " is not taken from the tree: " .. tostring(path))
  require(m)
end
print("check-rock: every module loads from " .. tree)
LUA
lua5.4 src/examples/echo_server.lua 200 5
# (its last lines only; a pipe would hide its exit status)
lua5.4 src/examples/demo.lua >"$tmp/demo.out"
tail -n 2 "$tmp/demo.out"
