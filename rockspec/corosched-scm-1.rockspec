rockspec_format = "3.0"
package = "corosched"
version = "scm-1"
source = {
   url = "git+file:///dev/null",
}
description = {
   summary = "OpenResty's light threads and cosockets for stock Lua 5.4",
   detailed = [[
corosched runs synchronous-looking Lua code on an event loop (libevent):
light threads with ngx.thread semantics, sleep, timers, semaphores and
queues, and non-blocking TCP/UDP cosockets with OpenResty's API, usable
from any depth of coroutines.
]],
   license = "MIT",
   labels = { "coroutine", "async", "network", "openresty", "libevent" },
}
dependencies = {
   "lua >= 5.4, < 5.5",
}
external_dependencies = {
   LIBEVENT = {
      header = "event2/event.h",
      library = "event_core",
   },
   PCRE2 = {
      header = "pcre2.h",
      library = "pcre2-8",
   },
   OPENSSL = {
      header = "openssl/ssl.h",
      library = "ssl",
   },
}
build = {
   type = "builtin",
   modules = {
      ["corosched.core"] = {
         sources = {
            "csrc/corosched.c", "csrc/cs_sched.c", "csrc/cs_thread.c",
            "csrc/cs_coroutine.c", "csrc/cs_timer.c", "csrc/cs_sync.c",
            "csrc/cs_map.c",
            "csrc/cs_buffer.c", "csrc/cs_net.c", "csrc/cs_socket.c",
            "csrc/cs_tcp.c", "csrc/cs_tls.c", "csrc/cs_crypto.c",
            "csrc/cs_cdata.c",
            "csrc/cs_udp.c",
         },
         defines = { "_GNU_SOURCE" },
         libraries = { "event_core", "event_extra", "ssl", "crypto" },
         incdirs = { "csrc", "$(LIBEVENT_INCDIR)", "$(OPENSSL_INCDIR)" },
         libdirs = { "$(LIBEVENT_LIBDIR)", "$(OPENSSL_LIBDIR)" },
      },
      ["corosched.re"] = {
         sources = { "csrc/cs_re.c" },
         libraries = { "pcre2-8" },
         incdirs = { "csrc", "$(PCRE2_INCDIR)" },
         libdirs = { "$(PCRE2_LIBDIR)" },
      },
      ["corosched"] = "lua/corosched/init.lua",
      ["corosched.ngx"] = "lua/corosched/ngx.lua",
      ["corosched.http"] = "lua/corosched/http.lua",
      ["corosched.luasocket"] = "lua/corosched/luasocket.lua",
   },
}
test = {
   type = "busted",
}
