-- Recorded by spec/support/record_openresty.sh: what OpenResty's cosockets returned for
-- spec/support/openresty_cases.lua (nginx 1.22.1, lua-nginx-module 10023, Debian package 1:0.10.23-1+deb12u1,
-- LuaJIT 2.1.0-beta3, lua-resty-core 0.1.25). Do not edit: record again.
return {
  ["connect refused"] = [==[
connect: nil "connection refused"
send after: nil "closed"
receive after: nil "closed"
close after: nil "closed"]==],
  ["connect with a numeric string port, then reconnect"] = [==[
connect: 1
reused: 0
send: 7
receive: "a"
reconnect: 1
send: 7
receive: "b"
close: 1]==],
  ["connect to a unix socket"] = [==[
connect: 1
send: 17
receive: "over unix"
close: 1
missing path: nil "no such file or directory"]==],
  ["ngx.socket.connect"] = [==[
connect: "table" nil
send: 8
receive: "hi"
refused: nil "connection refused"]==],
  ["connect argument errors"] = [==[
no args: error "ngx.socket connect: expecting 2, 3, or 4 arguments (including the object), but seen 1"
bad port: nil "missing the port number"
port 0: nil "connection refused"
port 65536: nil "bad port number: 65536"
table host: error "bad argument #2 to '?' (string expected, got table)"
bad opts: 1]==],
  ["a socket never connected"] = [==[
send: nil "closed"
receive: nil "closed"
receiveany: nil "closed"
close: nil "closed"
setkeepalive: nil "closed"
getreusedtimes: nil "closed"
settimeout:
settimeouts:]==],
  ["a closed socket"] = [==[
close: 1
close again: nil "closed"
send: nil "closed"
receive: nil "closed"
receiveany: nil "closed"
setkeepalive: nil "closed"
getreusedtimes: nil "closed"
receiveuntil iterator: nil "closed"]==],
  ["receive lines"] = [==[
line 1: "a"
line 2: "b"
line 3: "c"
line 4: ""
line 5: nil "closed" "d"
line 6: nil "closed"]==],
  ["receive *l with a partial line at close"] = [==[
*l: nil "closed" "abc"
again: nil "closed"
*a: nil "closed"]==],
  ["receive *a"] = [==[
*a: "hello\010world"
*a again: ""
*l after: nil "closed" ""]==],
  ["receive *a of an empty stream"] = [==[
*a: ""]==],
  ["receive sizes"] = [==[
3: "abc"
"2": "de"
0: ""
2.7: "fg"
10 at close: nil "closed" "hij"
after: nil "closed"
0 after close: nil "closed"]==],
  ["receive pattern errors"] = [==[
*x: error "bad argument #2 to '?' (bad pattern argument)"
*L: error "bad argument #2 to '?' (bad pattern argument)"
-1: error "bad argument #2 to '?' (bad pattern argument)"
table: error "bad argument #2 to '?' (bad pattern argument)"
true: error "bad argument #2 to '?' (bad pattern argument)"
abc: error "bad argument #2 to '?' (bad pattern argument: abc)"
*l then: "abc"]==],
  ["receive timeout keeps the partial data and the socket"] = [==[
10: nil "timeout" "hello"
*l: nil "timeout" ""
*l again: "world"]==],
  ["receive *l timeout with a partial line"] = [==[
*l: nil "timeout" "par"
*l again: nil "timeout" ""]==],
  ["receive *a timeout"] = [==[
*a: nil "timeout" "some"
*a again: nil "timeout" ""]==],
  ["settimeouts read timeout"] = [==[
receive: nil "timeout" ""
receive: "late"]==],
  ["peer reset mid-read"] = [==[
10: nil "connection reset by peer" "abc"
again: nil "closed"
send: nil "broken pipe"]==],
  ["peer closes before anything"] = [==[
*l: nil "closed" ""
send after: 1]==],
  ["a large receive"] = [==[
200000: 200000 "012345678901" nil nil
rest: nil "closed" 100000 "56789"]==],
  ["receiveany"] = [==[
4: "abcd"
100: "ef"
100: "gh"
at close: nil "closed" ""]==],
  ["receiveany timeout and errors"] = [==[
timeout: nil "timeout" ""
0: error "bad argument #2 to '?' (bad max argument)"
-1: error "bad argument #2 to '?' (bad max argument)"
none: error "expecting 2 arguments (including the object), but got 1"
string: nil "timeout" ""
bad string: error "bad argument #2 to '?' (bad max argument)"]==],
  ["receiveuntil"] = [==[
1: "hello"
2: "world"
3: "\010"
4 at close: nil "closed" "tail"
5: nil "closed"]==],
  ["receiveuntil with overlapping prefixes"] = [==[
1: "xa"
2: "y"
3: ""
4: "z"
5: nil "closed" ""]==],
  ["receiveuntil inclusive"] = [==[
1: "a\013\010"
2: "b\013\010"
3: nil "closed" ""]==],
  ["receiveuntil with a size"] = [==[
size 4 #1: "0123"
size 4 #2: "4567"
size 4 #3: "89ab"
size 4 #4: "c"
size 4 #5: nil nil nil
size 4 #6: "rest"
no size #1: ""
no size #2: nil "closed" "x"
no size #3: nil "closed"]==],
  ["receiveuntil with a size, inclusive"] = [==[
size 3 #1: "abc"
size 3 #2: "def"
size 3 #3: "--"
size 3 #4: nil nil nil
size 3 #5: "ghi"]==],
  ["receiveuntil timeout"] = [==[
1: nil "timeout" "abc"
2: nil "timeout" ""]==],
  ["receiveuntil: a pattern prefix at close"] = [==[
1: nil "closed" "ab"
2: nil "closed"]==],
  ["receiveuntil: a pattern prefix at timeout"] = [==[
1: nil "timeout" "ab"
2: ""
3: "cd"]==],
  ["receiveuntil: a long pattern prefix at close, with a size"] = [==[
1: "abc"
2: nil "closed" "d"
3: nil "closed"
4: nil "closed"]==],
  ["receiveuntil pattern errors"] = [==[
empty: nil "pattern is empty"
none: error "expecting 2 or 3 arguments (including the object), but got 1"
number: "function"
bad opts: error "bad argument #3 to '?' (table expected, got number)"
inclusive string: error "bad \034inclusive\034 option value type: string"
size 0: nil "timeout" "a"
size -1: nil "timeout" ""
size string: nil "timeout" ""]==],
  ["receiveuntil binary and long patterns"] = [==[
nul pattern: "a"
repeated char: "b\000c"
self-overlap: "xy--abcabcabd"
longer than the rest: nil "closed" "--tail"
after close: nil "closed"
closed socket: nil "closed"
inclusive single: "ab"
inclusive single again: nil "timeout" ""]==],
  ["send values"] = [==[
string: 2
empty: 0
integer: 2
floats: 71
nested: 4
empty table: 0
echo: "ab421.5|0.1|1e+20|0|1.2345678901234e+14|9.007199254741e+15|0.33333333333333xy7z"]==],
  ["send errors"] = [==[
nil: 3
none: error "expecting 2 arguments (including the object), but got 1"
boolean: 4
function: error "bad argument #2 to '?' (string, number, boolean, nil, or array table expected, got function)"
table with boolean: error "bad argument #2 to '?' (bad data type boolean found)"
table with table key: error "bad argument #2 to '?' (non-array table found)"
usable: 2
echo: "niltrueok"]==],
  ["send to a peer that reset"] = [==[
first send: nil "connection reset by peer"
receive: nil "closed" ""
close: nil "closed"]==],
  ["send timeout"] = [==[
send: nil "timeout"
send again: false]==],
  ["send after a read timeout and after the peer's FIN"] = [==[
receive: nil "timeout" ""
send: 14
receive: "after timeout"
receive: nil "closed" ""
send after FIN: 1
receive again: nil "closed"
setkeepalive: nil "closed"
close: 1]==],
  ["receive *a after a reset"] = [==[
*a: nil "connection reset by peer" "abc"
close: 1]==],
  ["two threads reading one socket"] = [==[
second reader: nil "socket busy reading"
first reader: true "data"]==],
  ["close from another thread while reading"] = [==[
close: nil "socket busy reading"
reader: true nil "timeout" ""]==],
  ["send while another thread reads"] = [==[
send: 5
reader: true "hello"]==],
  ["kill a thread parked in receive"] = [==[
kill: 1
receive after kill: nil "closed"]==],
  ["close from another thread while sending"] = [==[
close: nil "socket busy writing"
sender: true nil "timeout"]==],
  ["setkeepalive and reuse"] = [==[
send: 4
receive: "ping"
setkeepalive: 1
send after: nil "closed"
setkeepalive again: nil "closed"
connect: 1
reused: 1
send: 4
receive: "pong"
setkeepalive: 1
connect: 1
reused: 2]==],
  ["setkeepalive with unread data"] = [==[
setkeepalive: nil "connection in dubious state"
receive: nil "closed"]==],
  ["setkeepalive with a partly read line"] = [==[
receive: "ab"
setkeepalive: nil "unread data in buffer"]==],
  ["setkeepalive after the peer's FIN"] = [==[
setkeepalive: nil "closed"
close: 1
receive: nil "closed" ""
setkeepalive: nil "closed"
close: 1]==],
  ["setkeepalive after a read timeout"] = [==[
receive: nil "timeout" ""
setkeepalive: 1
close: nil "closed"
taken from after timeout: 1]==],
  ["setkeepalive argument errors"] = [==[
negative timeout: 1
taken from setkeepalive errors 1: 1
pool size 0: error "bad argument #3 to '?' (bad \034pool_size\034 option value: 0)"
pool size -1: error "bad argument #3 to '?' (bad \034pool_size\034 option value: -1)"
timeout string: error "bad argument #2 to '?' (number expected, got string)"
timeout numeric string: 1
taken from setkeepalive errors 5: 1
pool size string: error "bad argument #3 to '?' (number expected, got string)"]==],
  ["connect pool option"] = [==[
connect: 1
send: 2
setkeepalive: 1
other pool: 1
reused: 0
same pool: 1
reused: 1
echo: 1 "x"
bad pool: error "bad argument #4 to '?' (bad \034pool\034 option type: table)"
bad pool_size: error "bad argument #4 to '?' (bad \034pool_size\034 option value: 0)"
backlog without pool_size: 1]==],
  ["pool keys"] = [==[
park default: 1
explicit host:port pool: 1 nil 1
park default again: 1
port as a string: 1 nil 1
park host:port string: 1
default after host:port string: 1 nil 0
same host:port string: 1 nil 1
park unix: 1
unix explicit pool: 1 nil 1
unix again: 1 nil 0]==],
  ["settimeout arguments"] = [==[
string:
bad string:
negative: error "bad timeout value"
nil:
settimeouts negative: error "bad timeout value"]==],
  ["setoption"] = [==[
tcp-nodelay: true
keepalive: true
reuseaddr: true
sndbuf: true
rcvbuf: true
unknown: nil "unsupported option nope"
no value: nil "missing the \034value\034 argument"
closed: nil "closed"]==],
  ["udp echo"] = [==[
setpeername: 1
send: 1
receive: "dgram"
send table: 1
receive: "a1b"
send n:100: 1
receive 10: "0123456789"
close: 1
close again: nil "closed"]==],
  ["udp timeout, refused, unconnected"] = [==[
send before: nil "closed"
receive before: nil "closed"
setpeername: 1
send silent: 1
receive: nil "timeout"
setpeername: 1
send: 1
receive: nil "connection refused"]==],
  ["udp after close, and a datagram too big"] = [==[
setpeername: 1
send 70000: nil "message too long"
receive: nil "timeout"
close: 1
send after: nil "closed"
receive after: nil "closed"
setpeername after: 1
send: 1
receive: "again"]==],
  ["udp argument errors"] = [==[
setpeername no args: error "ngx.socket.udp setpeername: expecting 2 or 3 arguments (including the object), but seen 1"
setpeername bad port: nil "bad port number: 70000"
send boolean: 1
receive 0: ""
receive 70000: nil "timeout"
receive string: nil "timeout"]==],
  ["receiveany after a line left data buffered"] = [==[
*l: "line"
receiveany: "rest"
receiveany at close: nil "closed" ""]==],
  ["receive after a receiveuntil timeout takes its held bytes"] = [==[
until: nil "timeout" "ab"
*l: "x"
until again: nil "closed" ""]==],
  ["a receiveuntil iterator after another reader took over"] = [==[
until: nil "timeout" "ab"
*l: "x"
until again: ""
until at close: "zz"]==],
  ["a receiveuntil iterator after a timeout, then another iterator"] = [==[
until: nil "timeout" "ab"
bar: "+q"
until again: ""
bar again: "zz--x"]==],
  ["a sized receiveuntil call holding a partial match, then *l"] = [==[
until(3): "abc"
*l: "-"
until: "d"
*l: ""]==],
  ["a receiveuntil iterator holding bytes across a reconnect"] = [==[
until: nil "timeout" "ab"
connect: 1
send: 10
until: "-cd"]==],
  ["a receiveuntil iterator collected while holding bytes"] = [==[
until: nil "timeout" "ef"
receive(2): nil "timeout" "g"]==],
  ["two receiveuntil iterators on one socket"] = [==[
bar: "a"
hash: "b"
bar: "c"
hash: "d"
bar at close: nil "closed" "e"]==],
  ["receiveuntil, one-byte pattern and inclusive sizes"] = [==[
size 2 #1: "ab"
size 2 #2: "c\010"
size 2 #3: nil nil nil
size 2 #4: "de"
size 2 #5: "fg"
size 2 #6: "h\010"
no size #1: nil nil nil
no size #2: "\010"
no size #3: nil "closed" "i"]==],
  ["receive(n) after receiveuntil"] = [==[
until: "head"
4: "0123"
*a: "456789"]==],
  ["a long line"] = [==[
*l: 20000 "0123456789" nil
*l: "end"]==],
  ["setkeepalive after receive *a"] = [==[
*a: "body"
setkeepalive: nil "closed"
send: 1
close: 1]==],
  ["after a send timeout the read half goes on"] = [==[
send: nil "timeout"
send again: nil "closed"
setkeepalive: nil "closed"
receive: "late"
close: 1
close again: nil "closed"]==],
  ["two threads sending on one socket"] = [==[
second sender: nil "socket busy writing"
first sender: true nil "timeout"]==],
  ["kill a thread parked in send"] = [==[
kill: 1
send after kill: nil "closed"
receive after kill: nil "closed"
close: nil "closed"]==],
  ["connect again on a connected socket"] = [==[
receive: "first"
reconnect: 1
reused: 0
send: 12
receive: "second"
reconnect refused: nil "connection refused"
send: nil "closed"
close: nil "closed"]==],
  ["pool size and backlog"] = [==[
a connect: 1
c connect, backlog full: nil "too many waiting connect operations"
a send: 2
a setkeepalive: 1
b connect: true 1
b reused: 1
b echo: 1 "q"
b close: 1
d connect: 1
d close: 1]==],
  ["methods on a socket waiting in the backlog"] = [==[
a connect: 1
b send: nil "closed"
b receive: nil "closed"
b receiveany: nil "closed"
b setkeepalive: nil "closed"
b getreusedtimes: nil "closed"
b settimeout:
b sslhandshake: nil "closed"
a send: 2
a setkeepalive: 1
b connect: true 1
b reused: 1
b close: 1
c2 close while waiting: nil "closed"
c2 connect: true 1]==],
  ["backlog connect timeout"] = [==[
a connect: 1
b connect: nil "timeout"
b send: nil "closed"
c connect: 1]==],
  ["udp receive sizes and datagram boundaries"] = [==[
setpeername: 1
send: 1
receive default: 9000
send: 1
send: 1
receive 2: "on"
receive: "two"
send empty: 1
receive empty: ""
receive -1: nil "timeout"
receive 1.5: "a"]==],
  ["udp setpeername again and unix"] = [==[
setpeername refused: 1
setpeername: 1
send: 1
receive: "again"
setpeername missing: nil "no such file or directory"
send after: nil "transport endpoint is not connected"]==],
  ["getoption after setoption"] = [==[
set keepalive: true
get keepalive: 1
set tcp-nodelay: true
get tcp-nodelay: 1
set reuseaddr: true
get reuseaddr: 0
get unknown: nil "unsupported option nope"
get none: nil "missing the \034option\034 argument"
get closed: nil "closed"]==],
  ["tcp bind"] = [==[
bind: true
connect: 1
bind bad: nil "bad address"
bind ipv4 with port: nil "bad address"
bind number: nil "bad address"
bind none: error "expecting 2 arguments, but got 1"]==],
  ["udp settimeout and sends"] = [==[
settimeout string:
settimeout -1:
settimeout none: error "ngx.socket settimeout: expecting at least 2 arguments (including the object) but seen 1"
setpeername: 1
send nested: 1
receive: "ab1.5"
send table with boolean: error "bad argument #2 to '?' (bad data type boolean found)"
send function: error "bad argument #2 to '?' (string, number, boolean, nil, or array table expected, got function)"
send nil: 1
receive: "nil"
send none: error "expecting 2 arguments (including the object), but got 1"
setpeername after close: 1
send: 1
receive: "back"]==],
  ["spawn and wait order"] = [==[
types: "thread" "thread"
wait a: true "a" 2
wait b: true "b" 1
log: "a start,after a,b start,after b,a 1,b 1,a 2"]==],
  ["wait for the first of several"] = [==[
first: true "b"
second: true "a"
again: nil "already waited or killed"]==],
  ["threads that fail"] = [==[
a: false "boom"
b: false "table"
c: false nil]==],
  ["kill"] = [==[
kill: 1
kill again: nil "already waited or killed"
wait killed: nil "already waited or killed"
kill finished: nil "already terminated"
wait finished: nil "already waited or killed"
kill not a thread: error "bad argument #1 to '?' (lua thread expected)"
wait not a thread: error "bad argument #1 to '?' (lua thread expected)"
wait nothing: error "at least one coroutine should be specified"
kill a coroutine: nil "not user thread"
wait a coroutine: error "attempt to wait on a coroutine that is not a user thread"]==],
  ["a thread spawned by a thread"] = [==[
wait outer: true "outer"
wait inner (not ours): error "only the parent coroutine can wait on the thread"
kill inner (not ours): nil "killer not parent"]==],
  ["kill threads parked in various places"] = [==[
kill parent: 1
child of killed parent: "child ran"
kill semaphore waiter: 1
post: true
count after post: 1
kill thread in coroutine: 1
wait target: true "t"
kill reader: 1
receive after: nil nil "closed"]==],
  ["coroutines inside a light thread"] = [==[
wait: true 2 20 "end!"
resume: true 1
status: "dead"
yield in main: true]==],
  ["sleep arguments"] = [==[
sleep 0:
sleep -1: error "invalid sleep duration \034-1000\034"
sleep string:
sleep bad string: error "bad argument #1 to '?' (number expected, got string)"
sleep none: error "attempt to pass 0 arguments, but accepted 1"
sleep table: error "bad argument #1 to '?' (number expected, got table)"]==],
  ["semaphore"] = [==[
count: 0
wait 0: nil "timeout"
wait timeout: false "timeout"
post: true
waiter: true true nil
post 3: true
count: 3
wait: true
count: 2
new(2) count: 2
new -1: error "no negative number"
wait -1: error "no negative number"
wait string: error "attempt to perform arithmetic on a nil value"
post 0: error "positive number required"
post -1: error "positive number required"]==],
  ["timers"] = [==[
at: 1
at negative: 1
at no function: error "bad argument #2 to '?' (Lua function expected)"
at no delay: error "bad argument #1 to '?' (number expected, got nil)"
ran: "false x y"]==],
  ["udp two readers"] = [==[
second reader: nil "socket busy"
send: nil "socket busy"
first reader: true nil "timeout"]==],
  ["coroutine API on light threads"] = [==[
inside running: "thread"
status spawned: "running"
status ended: "zombie"
wait: true "r"
status waited: "dead"
status sleeping: "running"
resume a light thread: false "cannot resume running coroutine"
kill: 1
status killed: "dead"
main running: "thread"]==],
  ["yield and sockets inside coroutines and pcall"] = [==[
first resume: true "ping"
second resume: true "arg" false "inner"
status: "dead"
resume dead: false "cannot resume dead coroutine"
wrap 1: "x"
wrap 2: "wrapped"]==],
  ["a light thread spawned inside a coroutine"] = [==[
resume 1: true "yielded"
resume 2: true true "from thread"]==],
  ["ngx.re.match"] = [==[
plain: {0="1234",1="1",2="234"}
named: {0="hello, 1234",1="hello",2="1234","first"="hello","n"="1234"}
no match: nil
optional group: {0="ab",1="a",2=false,3="b"}
case-insensitive: {0="HELLO"}
anchored: nil
jo: {0="foo"}
utf8: {0="h\195\169",1="\195\169"}
bytes: {0="h\195",1="\195"}
ctx: {0="2"} 5
bad regex: nil "pcre_compile() failed: missing ) in \034(\034"
bad option: error "unknown flag \034Z\034 (flags \034Z\034)"
empty: {0=""}
dup names: {0="a",1="a",2=false,"x"={1="a"}}]==],
  ["ngx.re.find, gmatch"] = [==[
find: 8 11
find nth: 8 11
find none: nil
find empty: 1 0
gmatch 1: {0="a1",1="a",2="1"}
gmatch 2: {0="b22",1="b",2="22"}
gmatch 3: {0="c333",1="c",2="333"}
gmatch 4: nil
gmatch empty 1: {0=""}
gmatch empty 2: {0=""}
gmatch empty 3: {0=""}
gmatch empty 4: {0=""}
gmatch empty 5: nil]==],
  ["ngx.re.sub, gsub"] = [==[
sub: "hell0, world" 1
sub $0: "he[ll]o" 1
sub ${1}: "hlleo" 1
gsub: "hell0, w0rld" 2
gsub fn: "a<1>b<2>" 2
gsub empty: "-a-b-c-" 4
gsub none: "abc" 0
gsub $$: "a$c" 1
gsub bad template: nil nil "failed to compile the replacement template"
gsub bad template 2: nil nil "failed to compile the replacement template"
gsub utf8: "xxxxx" 5]==],
  ["ngx.re options and subjects"] = [==[
x: {0="ab12",1="12"}
s: {0="a\010b"} nil
m: {0="b"} nil
d: {0="abc"}
U: {0="h\195\169",1="\195\169"}
J: nil "pcre_compile() failed: two named subpatterns have the same name in \034(?<x>a)(?<x>b)?\034 at \034>b)?\034"
number subject: {0="34",1="4"}
nil subject: nil
table subject: {0="x"}
nil regex: error "attempt to get length of local 'regex' (a nil value)"
number regex: error "attempt to get length of local 'regex' (a number value)"
table regex: error "bad argument #1 to 'ngx_lua_ffi_compile_regex' (cannot convert 'table' to 'const unsigned char *')"
nil options: {0="b"}
ctx past end: nil 10
ctx at end: {0=""} 4
ctx 0: {0="a"} 2
ctx no pos: {0="b"} 3
find ctx: 4 4
find nth 0: 2 2
find nth unmatched: nil nil
find nth too big: nil nil "nth out of bound"]==],
  ["ngx.re substitution edge cases"] = [==[
$10: "j-j-a-k" 1
dollar at end: nil nil "failed to compile the replacement template"
dollar brace empty: nil nil "failed to compile the replacement template"
dollar big: "ac" 1
unmatched group: "[]" 1
fn returns number: "a7" 1
fn returns nil: "anil" 1
fn returns table: "atable: ADDR" 1
template table: "atable: ADDR" 1
template number: "a5" 1
fn named: "vkk=v" 1
gsub count: "bbb" 3
sub no match: "abc" 0
gsub utf8 empty: nil nil "pcre_exec() failed: -11"]==],
  ["ngx.re.split"] = [==[
plain: {1="a",2="b",3="",4="c"}
regex: {1="a",2="b",3="c"}
captures: {1="a",2="1",3="b",4="2",5="c"}
empty regex: {1="a",2="b",3="c"}
empty subject: {}
leading and trailing: {1="",2="a"}
max 2: {1="a",2="b,c,d"}
max 1: {1="a,b,c"}
max 0: {1="a",2="b",3="c"}
max -1: {1="a",2="b",3="c"}
res reuse: {1="a",2="b",4="w"}
ctx: {1="b",2="c"}
jo: {1="a",2="b",3="c"}
no match: {1="abc"}
bad regex: nil "pcre_compile() failed: missing ) in \034(\034"
nil subject: {1="nil"}]==],
  ["string helpers"] = [==[
escape_uri: "a%20b%26c%3Dd%2F%C3%A9~_-.!*'()"
escape_uri 2: "a%20b%2Fc%3Fd"
unescape_uri: "a b c%zz%4"
encode_args: "a=1" "b" "" "d=x&d=y" "e%20f=g%20h" ""
decode_args: {"a"={1="1",2="2"},"b"=true,"c"="","d"=" x y"}
decode_args max: {"a"="1","b"="2"} "truncated"
quote_sql_str: "'a\092'b\092\092c\0920d\092n\092r\092Z\092\034e'"
md5: "5d41402abc4b2a76b9719d911017c592"
sha1_bin: "qvTGHdzF6KLavt4PO0gs2a6pQ00="
md5_bin: "1B2M2Y8AsgTpgAmY7PhCfg=="
crc32_short: 907060870
crc32_long: 907060870
base64: "AAECYWI=" "YWI"
decode_base64: "abc" "ab" nil
hmac_sha1: "ECkAtyt78QMe7Ha0gEtmBSN2iWs="
http_time: "Thu, 18 Nov 2010 11:27:35 GMT"
cookie_time: "Thu, 18-Nov-10 11:27:35 GMT"
parse_http_time: 1290079655 nil
null: userdata "userdata" "userdata: NULL"
md5 number: "c20ad4d76fe97759aa27a0c99bff6710"
md5 nil: "d41d8cd98f00b204e9800998ecf8427e"
escape_uri nil: ""
encode_base64 table: "string"]==],
  ["string helper edge cases"] = [==[
escape_uri type 0: "a%20b/%3F%23&=%25\034<>@:"
escape_uri type 1: "a%20b/%3F%23&=%25\034<>@:"
escape_uri type 2: "a%20b%2F%3F%23%26%3D%25%22%3C%3E%40%3A"
escape_uri type 3: "a%20b/?%23&=%25%22<>@:"
escape_uri type 4: "a%20b/?#&=%%22<>@:"
escape_uri type 5: "a%20b/?#&=%25\034<>@:"
escape_uri type 6: "a%20b/?#&=%25\034<>@:"
escape_uri type 7: error "\034type\034 7 out of range"
escape_uri number: "1.5"
escape_uri boolean: "true"
escape_uri type 8: error "\034type\034 8 out of range"
unescape_uri edges: "%2" "%%" "%GGA" "12" "a b+c"
unescape_uri nil: ""
encode_args list: "a=1&a&a=x%20y"
encode_args empty list: ""
encode_args number key: error "attempt to use a non-string key in the \034args\034 option table"
encode_args float value: "a=1.5"
encode_args userdata value: error "attempt to use userdata as query arg value"
encode_args not a table: error "bad argument #1 to '?' (table expected, got string)"
decode_args list: {"a"={1="1",2="2",3="3"}}
decode_args odd: {"b"="","c"=true}
decode_args escapes: {"a="="b&","c"="%zz"}
decode_args max 0: {"a"="1","b"="2"}
decode_args max -1: {"a"="1","b"="2"}
decode_args number: {"12"=true}
quote_sql_str number: "'12'"
quote_sql_str nil: error "bad argument #1 to '?' (string expected, got nil)"
base64 padding: "a" "a" "a" nil "" "a"
encode_base64 nil: ""
encode_base64 number: "MTI="
decode_base64 nil: error "string argument only"
crc32 number: 2286445522
hmac numbers: "0HXKErglmgsnQ48HUxSju4ipJ7U="
http_time 0: "Thu, 01 Jan 1970 00:00:00 GMT"
cookie_time 0: "Thu, 01-Jan-70 00:00:00 GMT"
http_time -1: "Thu, 01 Jan 1970 00:00:00 GMT"
cookie_time -1: "Thu, 01-Jan-70 00:00:00 GMT"
http_time 1e10: "Sat, 20 Nov 2286 17:46:40 GMT"
cookie_time 1e10: "Sat, 20-Nov-2286 17:46:40 GMT"
http_time 1.7: "Thu, 01 Jan 1970 00:00:01 GMT"
cookie_time 1.7: "Thu, 01-Jan-70 00:00:01 GMT"
http_time -1.7: "Thu, 01 Jan 1970 00:00:00 GMT"
cookie_time -1.7: "Thu, 01-Jan-70 00:00:00 GMT"
http_time "86400": error "number argument only"
cookie_time "86400": error "number argument only"
http_time true: error "number argument only"
cookie_time true: error "number argument only"
http_time nil: error "number argument only"
cookie_time nil: error "number argument only"
parse_http_time Thursday, 18-Nov-10 11:27:35 GMT: 1290079655
parse_http_time Thu Nov 18 11:27:35 2010: 1290079655
parse_http_time Thu Nov  8 11:27:35 2010: 1289215655
parse_http_time Thu, 18 Nov 2010 11:27:35 +0100: 1290079655
parse_http_time Thu, 18 Nov 2010 11:27:35: 1290079655
parse_http_time Thu, 18 Nov 2010 11:27:35 GMTxyz: 1290079655
parse_http_time Thu, 8 Nov 2010 11:27:35 GMT: nil
parse_http_time Xyz, 18 Nov 2010 11:27:35 GMT: 1290079655
parse_http_time Thu, 18 Nox 2010 11:27:35 GMT: 1290079655
parse_http_time Thu, 18 Jux 2010 11:27:35 GMT: 1279452455
parse_http_time Thu, 29 Feb 2011 11:27:35 GMT: nil
parse_http_time Thu, 29 Feb 2012 11:27:35 GMT: 1330514855
parse_http_time Thu, 31 Apr 2010 11:27:35 GMT: nil
parse_http_time Thu, 00 Nov 2010 11:27:35 GMT: 1288524455
parse_http_time Thu, 18 Nov 2010 24:00:00 GMT: nil
parse_http_time Thu, 18 Nov 1969 11:27:35 GMT: -3760345
parse_http_time Thu,   18 Nov 2010 11:27:35 GMT: 1290079655
parse_http_time Thu, 18-Nov-69 11:27:35 GMT: 3151999655
parse_http_time Thu, 18-Nov-2010 11:27:35 GMT: nil
parse_http_time Thu, 18 Nov 2010 1:27:35 GMT: nil
parse_http_time , 18 Nov 2010 11:27:35 GMT: 1290079655
parse_http_time Thu Nov 18 11:27:35 10: nil
parse_http_time : nil
parse_http_time GMT: nil
parse_http_time nil: error "string argument only"
parse_http_time number: error "string argument only"]==],
  ["bit, table and base64url modules"] = [==[
tobit: 1 -1 -2147483648 2 2 -2 0
tohex: "ffffffff" "00FF" "ff" "678" ""
shifts: -2147483648 1 15 -16 878082066 -2147483648
logic: 240 7 6 -1 2018915346
bit string: 4
bit nil: error "bad argument #1 to '?' (number expected, got nil)"
nkeys: 0 3 1
isempty: true true false
isarray: true true true false true false
clone: 1 "b" true true
new: "table" nil
clear: nil
base64url: "__79YWI" "\255\254\253ab" "\255\254\253ab" nil "invalid input"
base64url number: nil "must provide a string"
base64url decode number: nil "must provide a string"
base64url decode nil: nil "must provide a string"
bit no args: error "bad argument #1 to '?' (number expected, got no value)"
bit table: error "bad argument #1 to '?' (number expected, got table)"]==],
  ["reuse counts over several cycles, one object"] = [==[
connect 1: 1
reused 1: 0
script: 2
echo 1: 2 "x1"
setkeepalive 1: 1
reused after 1: nil "closed"
receive after 1: nil "closed"
close after 1: nil "closed"
connect 2: 1
reused 2: 1
echo 2: 2 "x2"
setkeepalive 2: 1
reused after 2: nil "closed"
receive after 2: nil "closed"
close after 2: nil "closed"
connect 3: 1
reused 3: 2
echo 3: 2 "x3"
setkeepalive 3: 1
reused after 3: nil "closed"
receive after 3: nil "closed"
close after 3: nil "closed"
taken from cycles: 3]==],
  ["an idle pooled connection the peer closes"] = [==[
setkeepalive: 1
taken from peer closes idle: 0]==],
  ["an idle pooled connection the peer writes to"] = [==[
setkeepalive: 1
connect: 1
reused: 0
receive: nil "timeout" ""]==],
  ["the pool's idle timeout"] = [==[
setkeepalive: 1
taken from idle timeout: 0
setkeepalive 0: 1
taken from idle timeout 2: 1]==],
  ["a full pool closes its oldest idle connection"] = [==[
receive: "a" "b"
setkeepalive a: 1
setkeepalive b: 1
connect: 1
reused: 1
which: 1 "?"
taken from full: 0]==],
  ["send nested tables"] = [==[
nested: 6
empty: 0 0
echo: "abc12d"
hole: error "bad argument #2 to '?' (bad data type nil found)"
hash part: error "bad argument #2 to '?' (non-array table found)"
bad element: error "bad argument #2 to '?' (bad data type function found)"
boolean element: error "bad argument #2 to '?' (bad data type boolean found)"
after: 1 "z"]==],
  ["receive *l and carriage returns"] = [==[
line 1: "a"
line 2: "bc"
line 3: ""
line 4: "d"
at close: nil "closed" "e"]==],
  ["receive sizes across chunks and at close"] = [==[
3: "abc"
0: ""
2: "de"
5 at close: nil "closed" "fg"
after: nil "closed"
close: 1]==],
  ["receiveuntil with a size across chunks"] = [==[
read 1: "a"
read 2: "b"
read 3: ""
read 4: nil nil nil
read 5: "c"
read 6: "d"
timeout: ""]==],
  ["settimeouts and nil"] = [==[
nils:
read: nil "timeout" ""
negative: error "bad timeout value"
too few: error "ngx.socket settimeout: expecting 4 arguments (including the object) but seen 3"
too many: error "ngx.socket settimeout: expecting 4 arguments (including the object) but seen 5"
settimeout none: error "ngx.socket settimeout: expecting 2 arguments (including the object) but seen 1"
settimeout two: error "ngx.socket settimeout: expecting 2 arguments (including the object) but seen 3"
settimeout nil:
after: "late"]==],
  ["methods on a pooled object"] = [==[
setkeepalive: 1
send: nil "closed"
receive: nil "closed"
receiveany: nil "closed"
setkeepalive again: nil "closed"
settimeout:
setoption: nil "closed"
close: nil "closed"
taken from pooled object: 1]==],
  ["argument counts of the tcp methods"] = [==[
receive 2: error "expecting 1 or 2 arguments (including the object), but got 3"
receive self only: "abcdef"
receiveany none: error "expecting 2 arguments (including the object), but got 1"
receiveany 2: error "expecting 2 arguments (including the object), but got 3"
receiveany 0: error "bad argument #2 to '?' (bad max argument)"
receiveany string: nil "timeout" ""
receiveany bad: error "bad argument #2 to '?' (bad max argument)"
getreusedtimes 1: error "expecting 1 argument (including the object), but got 2"
setoption 3: true
setkeepalive 3: error "expecting 1 to 3 arguments (including the object), but got 4"
close 1: error "expecting 1 argument (including the object) but seen 2"
close again: 1]==],
  ["argument counts of the udp methods"] = [==[
setpeername: 1
send none: error "expecting 2 arguments (including the object), but got 1"
send 2: error "expecting 2 arguments (including the object), but got 3"
send table: 1
receive 2: error "expecting 1 or 2 arguments (including the object), but got 3"
receive string: "ab"
receive: nil "timeout"
close 1: error "expecting 1 argument (including the object) but seen 2"
close: 1]==],
  ["light thread argument errors"] = [==[
spawn none: error "bad argument #1 to '?' (Lua function expected)"
spawn string: error "bad argument #1 to '?' (Lua function expected)"
wait number: error "bad argument #1 to '?' (lua thread expected)"
kill none: error "bad argument #1 to '?' (lua thread expected)"
kill string: error "bad argument #1 to '?' (lua thread expected)"
kill ended: nil "already terminated"
wait it: nil "already waited or killed"
wait again: nil "already waited or killed"
sleep string:
sleep bad string: error "bad argument #1 to '?' (number expected, got string)"]==],
  ["receiveuntil iterator and option arguments"] = [==[
iterator 2 args: error "expecting 0 or 1 arguments, but seen 2"
iterator nil: error "bad argument #1 to '?' (number expected, got nil)"
iterator bad string: error "bad argument #1 to '?' (number expected, got string)"
iterator float: "a"
iterator string size: "b"
iterator rest: ""
iterator 0: "cd"
iterator negative: "ef"
inclusive string: error "bad \034inclusive\034 option value type: string"
inclusive nil: "gh"
options not a table: error "bad argument #3 to '?' (table expected, got string)"
pattern number: "function"]==],
  ["setkeepalive argument types"] = [==[
string timeout: 1
taken from ka types: 1
string size: 1
taken from ka types 2: 1
zero size: error "bad argument #3 to '?' (bad \034pool_size\034 option value: 0)"
negative size: error "bad argument #3 to '?' (bad \034pool_size\034 option value: -1)"
table: error "bad argument #2 to '?' (number expected, got table)"]==],
  ["semaphore and timer argument errors"] = [==[
post string: true
count: 2
wait none: error "attempt to perform arithmetic on a nil value"
wait 0: true
new string: 3
new float: 2
at string delay: 1
at bad delay: error "bad argument #1 to '?' (number expected, got string)"
at no callback: error "expecting at least 2 arguments but got 1"
at string callback: error "bad argument #2 to '?' (Lua function expected)"
every zero: error "delay cannot be zero"
every no callback: error "expecting at least 2 arguments but got 1"]==],
  ["wait on threads and non-threads"] = [==[
wait mixed: error "bad argument #2 to '?' (lua thread expected)"
wait it: true "x"
wait plain coroutine: error "attempt to wait on a coroutine that is not a user thread"
kill plain coroutine: nil "not user thread"]==],
  ["setoption values"] = [==[
keepalive false: true
get keepalive: 0
keepalive 2: true
get keepalive: 1
keepalive string: error "bad argument #3 to 'ngx_http_lua_ffi_socket_tcp_setoption' (cannot convert 'string' to 'int')"
nodelay nil: nil "missing the \034value\034 argument"
nodelay 0: true
get nodelay: 0
sndbuf string: error "bad argument #3 to 'ngx_http_lua_ffi_socket_tcp_setoption' (cannot convert 'string' to 'int')"
sndbuf bad: error "bad argument #3 to 'ngx_http_lua_ffi_socket_tcp_setoption' (cannot convert 'string' to 'int')"
sndbuf table: error "bad argument #3 to 'ngx_http_lua_ffi_socket_tcp_setoption' (cannot convert 'table' to 'int')"
rcvbuf float: true
name number: nil "unsupported option 1"
get name number: nil "unsupported option 1"
getoption 2: 1]==],
  ["getreusedtimes and close around connect failures"] = [==[
reused never connected: nil "closed"
connect refused: nil "connection refused"
reused after refused: nil "closed"
close after refused: nil "closed"
connect: 1
reused: 0
refused again: nil "connection refused"
receive after: nil "closed"
close: nil "closed"]==],
  ["udp ports"] = [==[
port string: 1
echo: 1 "s"
port float: 1
echo: 1 "f"
port 0: 1
port -1: nil "bad port number: -1"
port x: error "bad argument #3 to '?' (number expected, got string)"
no port: 1]==],
  ["timer counts"] = [==[
pending before: 0
at: 1
at 2: 1
pending after: 2 0
in at: false "arg" 1
pending at the end: 0]==],
  ["sleep and yield ordering between threads"] = [==[
order: "a1 b1 main b2 a2 a3 after a b3 after b"]==],
  ["connect option types"] = [==[
pool number: 1 nil
pool_size float: 1 nil
pool_size string: 1 nil
pool_size negative: error "bad argument #3 to 'connect' (bad \034pool_size\034 option value: -1)"
backlog negative: error "bad argument #3 to 'connect' (bad \034backlog\034 option value: -1)"
backlog string: 1 nil
unknown key: 1 nil
empty: 1 nil]==],
  ["setkeepalive and close while another thread reads"] = [==[
setkeepalive: nil "socket busy reading"
reader: true "late"
close: 1]==],
  ["send numbers outside tables"] = [==[
send 1: 3 nil
send 2: 1 nil
send 3: 5 nil
send 4: 3 nil
send 5: 4 nil
send 6: 4 nil
send 7: 18 nil
send 8: 3 nil
send 9: 5 nil
send 10: 3 nil
send 11: 2 nil
send 12: 5 nil
send 13: 5 nil
send 14: 15 nil
echo: "1.5|0|1e+20|inf|-inf|-nan|9.007199254741e+15|0.1|1e-05|100|-7|1e+15|1e+16|3.1415926535898|"]==],
  ["receive sizes as strings and floats"] = [==[
"5": "01234"
2.9: "56"
"2.9": "78"
" 3": "901"
"3 ": "234"
"0x4": "5678"
"1e1": "9012345678"
0.5: ""
"0": ""
-0.5: ""
"-1": error "bad argument #2 to '?' (bad pattern argument)"
"": error "bad argument #2 to '?' (bad pattern argument: )"
"*": error "bad argument #2 to '?' (bad pattern argument: *)"
"*l ": error "bad argument #2 to '?' (bad pattern argument: *l )"
"**a": error "bad argument #2 to '?' (bad pattern argument: **a)"
after: "901"
"*a ": error "bad argument #2 to '?' (bad pattern argument: *a )"
"*l\0": error "bad argument #2 to '?' (bad pattern argument: *l)"
"2\0": error "bad argument #2 to '?' (bad pattern argument: 2)"
"*5": error "bad argument #2 to '?' (bad pattern argument)"
"L": error "bad argument #2 to '?' (bad pattern argument: L)"
"l": error "bad argument #2 to '?' (bad pattern argument: l)"
"a": error "bad argument #2 to '?' (bad pattern argument: a)"]==],
  ["receiveany sizes as strings and floats"] = [==[
2.7: "01"
"3.5": "234"
0.5: error "bad argument #2 to '?' (bad max argument)"
1.0: "5"
-0.5: error "bad argument #2 to '?' (bad max argument)"
nil: error "bad argument #2 to '?' (bad max argument)"
true: error "bad argument #2 to '?' (bad max argument)"
table: error "bad argument #2 to '?' (bad max argument)"
" 4": "6789"
1e10: "012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"]==],
  ["constructors with arguments"] = [==[
tcp 1: error "expecting zero arguments, but got 1"
tcp nil: error "expecting zero arguments, but got 1"
udp 1: error "expecting zero arguments, but got 1"
stream: "function"
connect none: error "ngx.socket connect: expecting 2, 3, or 4 arguments (including the object), but seen 1"
connect host only: nil "missing the port number"
connect refused: nil "connection refused"
connect unix missing: nil "no such file or directory"]==],
  ["thread arguments and results with holes"] = [==[
wait: true 4 1 nil 3 nil
wait nils: true nil nil 5 nil
wait none: true
wait parked: true "late" nil
wait again: nil "already waited or killed"
kill finished: nil "already waited or killed"]==],
  ["udp send values"] = [==[
integer: 1
echo: "42"
float: 1
echo: "1.5"
table: 1
echo: "a1b2.5"
nil: 1
echo: "nil"
table of bool: error "bad argument #2 to '?' (bad data type boolean found)"
none: error "expecting 2 arguments (including the object), but got 1"
empty: 1
after empty: ""
-0.0: 1
echo: "0"
table -0.0: 1
echo: "0|2147483648|-2147483649"]==],
  ["connect to address forms"] = [==[
[::1] refused: nil "connection refused"
::1 refused: nil "failed to parse host name \034::1\034: invalid port"
[127.0.0.1]: nil "failed to parse host name \034[127.0.0.1]\034: invalid IPv6 address"
empty host: nil "failed to parse host name \034\034: no host"
unix: empty path: nil "failed to parse host name \034unix:\034: no path in the unix domain socket"
unix: long path: nil "failed to parse host name \034unix:/dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd\034: too long path in the unix domain socket"
unix: a file: nil "connection refused"
unix: a directory: nil "connection refused"
unix: refused: nil "no such file or directory"
port float: nil "connection refused"
port string float: nil "connection refused"
port negative: nil "bad port number: -1"
port string spaces: nil "connection refused"
host with the port: 1
host with port 0: nil "failed to parse host name \034127.0.0.1:0\034: invalid port"
host with a bad port: nil "failed to parse host name \034127.0.0.1:x\034: invalid port"
host with a big port: nil "failed to parse host name \034127.0.0.1:65536\034: invalid port"
host with a slash: nil "failed to parse host name \034127.0.0.1/x\034: invalid host"
host with a question mark: nil "failed to parse host name \034127.0.0.1?x\034: invalid host"
[::1 unclosed: nil "failed to parse host name \034[::1\034: invalid host"
[::1]x: nil "failed to parse host name \034[::1]x\034: invalid host"
[::1]:port: nil "connection refused"
[::1]:bad: nil "failed to parse host name \034[::1]:x\034: invalid port"
[]: nil "failed to parse host name \034[]\034: no host"
UNIX:: 1
:port alone: nil "failed to parse host name \034:80\034: no host"]==],
  ["udp setpeername address forms"] = [==[
[::1]: 1 nil
[::1] send: 1
[::1] receive: nil "connection refused"
::1: nil "failed to parse host name \034::1\034: invalid port"
empty host: nil "failed to parse host name \034\034: no host"
unix: empty path: nil "failed to parse host name \034unix:\034: no path in the unix domain socket"
unix: long path: nil "failed to parse host name \034unix:/dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd\034: too long path in the unix domain socket"
unix: a directory: nil "connection refused"
port 0: 1 nil
port 0 send: 1
port 0 receive: nil "connection refused"
port 65536: nil "bad port number: 65536"
port string: 1 nil
port string send: 1
port string receive: "x"
host with the port: 1 nil
host with the port send: 1
host with the port receive: "x"
host with a bad port: nil "failed to parse host name \034127.0.0.1:x\034: invalid port"
host with a slash: nil "failed to parse host name \034127.0.0.1/x\034: invalid host"
[::1 unclosed: nil "failed to parse host name \034[::1\034: invalid host"
[]: nil "failed to parse host name \034[]\034: no host"
UNIX:: nil "no such file or directory"]==],
  ["timeout magnitudes"] = [==[
tcp settimeout 2^31-1:
tcp settimeouts 2^31-1:
udp settimeout 2^31-1:
tcp settimeout 2^31: error "bad timeout value"
tcp settimeouts 2^31: error "bad timeout value"
udp settimeout 2^31:
tcp settimeout 2^32: error "bad timeout value"
tcp settimeouts 2^32: error "bad timeout value"
udp settimeout 2^32:
tcp settimeout 1e20: error "bad timeout value"
tcp settimeouts 1e20: error "bad timeout value"
udp settimeout 1e20:
tcp settimeout inf: error "bad timeout value"
tcp settimeouts inf: error "bad timeout value"
udp settimeout inf:
tcp settimeout -inf: error "bad timeout value"
tcp settimeouts -inf: error "bad timeout value"
udp settimeout -inf:
tcp settimeout nan: error "bad timeout value"
tcp settimeouts nan: error "bad timeout value"
udp settimeout nan:
tcp settimeout 0.5:
tcp settimeouts 0.5:
udp settimeout 0.5:
tcp settimeout -0.5:
tcp settimeouts -0.5:
udp settimeout -0.5:
tcp settimeout 1.9:
tcp settimeouts 1.9:
udp settimeout 1.9:
tcp settimeout "0x10":
tcp settimeouts "0x10":
udp settimeout "0x10":
tcp settimeout " 5 ":
tcp settimeouts " 5 ":
udp settimeout " 5 ":
tcp settimeout true:
tcp settimeouts true:
udp settimeout true:]==],
  ["huge receive counts"] = [==[
2^40: nil "timeout" "abc"
1e15: nil "timeout" ""
"1e15": nil "timeout" ""
receiveany 2^40: "jkl"
iterator 2^40: nil "closed" ""
after: nil "closed"]==],
  ["tls handshake, echo and close"] = [==[
connect: 1
handshake: true
send script: 2
send: 5
receive: "hello"
handshake again: true
send after: 2
receive after: "x"
close: 1
handshake closed: nil "closed"]==],
  ["tls verification"] = [==[
self-signed, verify: nil "18: self-signed certificate"
self-signed, no verify: true
self-signed, verify nil: true
wrong name, verify: nil "certificate host mismatch"
wrong name, no verify: true
no name, verify: true
ip name, verify: nil "certificate host mismatch"
upper-case name, verify: true
trailing dot, verify: nil "certificate host mismatch"
right name, verify: true]==],
  ["tls handshake errors"] = [==[
never connected: error "socket is never created nor connected"
plain peer that waits: nil "timeout"
send after: nil "closed"
plain peer that closed: nil "handshake failed"
plain peer that answers: nil "handshake failed"
receive after: nil "closed"]==],
  ["tls handshake arguments"] = [==[
session string: cdata
session true: cdata
name table: error "cannot convert 'table' to 'const unsigned char *'"
name number: error "cannot convert 'number' to 'const unsigned char *'"
verify string: true
six args: error "ngx.socket sslhandshake: expecting 1 ~ 5 arguments (including the object), but seen 7"
session returned: "cdata"]==],
  ["tls reads and timeouts"] = [==[
line: "abc"
timeout: nil "timeout" "d"
line after: "ef"
*a: "end"
after close_notify: nil "closed" ""
send: 1
close: 1
receiveany end: "closed" 20000 true]==],
  ["tls connections in the pool"] = [==[
echo: 2 "a"
setkeepalive: 1
connect: 1
reused: 1
handshake: true
echo: 2 "b"
setkeepalive: 1
taken from tls pool: 2]==],
}
