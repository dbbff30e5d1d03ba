# corosched developer Makefile (the rockspec does release builds).
#   make            build build/corosched/core.so
#   make test       set up (make deps), build, run every spec
#   make demo       set up, build, run examples/demo.lua
#   make check-asan / check-valgrind / lint / bench   see README
LUA_VERSION ?= 5.4
LUA         ?= lua$(LUA_VERSION)
LUA_INC     ?= $(shell pkg-config --cflags lua$(LUA_VERSION) 2>/dev/null)
# the interpreter the specs start their child processes with
CS_LUA      ?= $(LUA)
export CS_LUA
EVENT_LIBS  ?= $(shell pkg-config --libs libevent_core libevent_extra 2>/dev/null \
                 || echo -levent_core -levent_extra)
SSL_LIBS    ?= $(shell pkg-config --libs openssl 2>/dev/null || echo -lssl -lcrypto)
BUILD       ?= build

CSTD    = -std=c99 -D_GNU_SOURCE
CWARNS  = -Wall -Wextra -Wshadow -Wundef -Wwrite-strings -Wpointer-arith \
          -Wcast-align -Wformat=2 -Wvla -Wstrict-prototypes \
          -Wmissing-prototypes -Wmissing-declarations \
          -Wdeclaration-after-statement
WERROR ?= -Werror
OPT    ?= -O2 -g
DEFS   ?=
CFLAGS += $(CSTD) $(OPT) $(CWARNS) $(WERROR) $(DEFS) -fPIC \
          -fvisibility=hidden $(LUA_INC) -Icsrc
LDFLAGS_SO = -shared $(EXTRA_LDFLAGS)

SRCS = csrc/corosched.c csrc/cs_sched.c csrc/cs_thread.c \
       csrc/cs_coroutine.c csrc/cs_timer.c csrc/cs_sync.c \
       csrc/cs_map.c csrc/cs_buffer.c csrc/cs_net.c csrc/cs_socket.c \
       csrc/cs_tcp.c csrc/cs_tls.c csrc/cs_crypto.c csrc/cs_cdata.c \
       $(wildcard csrc/cs_udp.c)
HDRS = $(wildcard csrc/*.h)
OBJS = $(SRCS:csrc/%.c=$(BUILD)/%.o)
MOD  = $(BUILD)/corosched/core.so

# corosched.re (ngx.re on PCRE2): built when pkg-config finds libpcre2-8
HAVE_PCRE2  ?= $(shell pkg-config --exists libpcre2-8 2>/dev/null && echo 1)
PCRE2_CFLAGS = $(shell pkg-config --cflags libpcre2-8 2>/dev/null)
PCRE2_LIBS   = $(shell pkg-config --libs libpcre2-8 2>/dev/null)
RE_SRCS = $(if $(HAVE_PCRE2),csrc/cs_re.c)
RE_MOD  = $(if $(HAVE_PCRE2),$(BUILD)/corosched/re.so)

BUSTED_ARGS ?=
BUSTED = $(LUA) /usr/bin/busted --ignore-lua --cpath='$(BUILD)/?.so' \
         --lpath='lua/?.lua;lua/?/init.lua' $(BUSTED_ARGS)

all: $(MOD) $(RE_MOD)

$(BUILD)/%.o: csrc/%.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(MOD): $(OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SO) -o $@ $(OBJS) $(EVENT_LIBS) $(SSL_LIBS)

$(BUILD)/cs_re.o: CFLAGS += $(PCRE2_CFLAGS)

$(BUILD)/corosched/re.so: $(BUILD)/cs_re.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SO) -o $@ $< $(PCRE2_LIBS)

# what a fresh Debian 12 machine lacks, installed only when missing
deps:
	@sh .ci/deps.sh

# prints the environment that loads corosched from this checkout:
#   eval "$(make -s env)"
env:
	@echo "export LUA_PATH='$(CURDIR)/lua/?.lua;$(CURDIR)/lua/?/init.lua;;'"
	@echo "export LUA_CPATH='$(CURDIR)/$(BUILD)/?.so;;'"

test: deps
	$(MAKE) all
	$(BUSTED)

demo: deps
	$(MAKE) all
	LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='$(BUILD)/?.so;;' \
	    $(LUA) examples/demo.lua

# ASan+UBSan in its own build dir. The interpreter is not instrumented, so
# preload the runtimes; -z nodelete keeps symbols after Lua dlclose()s us.
# A testing build (-DCS_TESTING): with no CS_* variable set it behaves as
# a normal one, and the fault and allocation-failure specs run too.
ASAN_FLAGS = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
             -fno-sanitize-recover=all
ASAN_RT = $(shell $(CC) -print-file-name=libasan.so) \
          $(shell $(CC) -print-file-name=libubsan.so)
check-asan: deps
	$(MAKE) BUILD=build-asan OPT="$(ASAN_FLAGS)" DEFS=-DCS_TESTING \
	    EXTRA_LDFLAGS="-fsanitize=address,undefined -Wl,-z,nodelete" all
	LD_PRELOAD="$(ASAN_RT)" \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/.ci/lsan.supp:print_suppressions=0 \
	    $(MAKE) --no-print-directory BUILD=build-asan run-busted

check-valgrind: deps
	$(MAKE) all
	valgrind -q --error-exitcode=1 --leak-check=full \
	    --errors-for-leak-kinds=definite --keep-debuginfo=yes \
	    --suppressions=.ci/valgrind.supp $(BUSTED)

# luarocks make of the rockspec into a temporary tree, then the modules
# and examples from that tree (.ci/check_rock.sh)
check-rock:
	sh .ci/check_rock.sh

run-busted:
	$(BUSTED)

# busted once per spec file of EACH_SPECS (files or directories), summed
run-busted-each:
	@sh .ci/busted_each.sh "$(BUSTED)" $(EACH_SPECS)

# the socket specs again in a testing build whose recv/send move one byte
# at most and say EAGAIN every other call (OpenResty's mockeagain)
SOCKET_SPECS = $(wildcard spec/1*_spec.lua spec/2*_spec.lua spec/3*_spec.lua \
                          spec/4*_spec.lua spec/5*_spec.lua spec/6*_spec.lua \
                          spec/71*_spec.lua spec/73*_spec.lua \
                          spec/regress/tcp_*_spec.lua \
                          spec/regress/cosocket_*_spec.lua)
check-shortio: deps
	$(MAKE) BUILD=build-testing DEFS=-DCS_TESTING all
	CS_SHORT_IO=1 $(MAKE) --no-print-directory BUILD=build-testing \
	    BUSTED_ARGS="$(SOCKET_SPECS)" run-busted

# variableScope: we declare at the top of blocks (nginx/Lua style, enforced
# by -Wdeclaration-after-statement); constParameter: lua_State * parameters
# of Lua API callbacks cannot be const.
cppcheck:
	cppcheck -q --std=c99 --library=lua --library=posix \
	    --enable=warning,style,performance,portability \
	    --suppress=variableScope --suppress=constParameter -U__clang_analyzer__ \
	    --inline-suppr --error-exitcode=1 -Icsrc $(SRCS) $(RE_SRCS)

format:
	clang-format -i csrc/*.c csrc/*.h

lint: cppcheck
	@! grep -nP '.{81,}|\t' csrc/*.c csrc/*.h \
	    || (echo "tabs or lines over 80 columns" >&2; exit 1)
	@lua5.4 .ci/lua_globals.lua lua/corosched/*.lua

# (the 10,000-thread stress spec is left out: under this collector it only
# measures the collector)
GCSTRESS_SPECS = $(filter-out spec/06-stress_spec.lua,$(wildcard spec/*_spec.lua)) spec/regress
# the whole suite with the collector running flat out and a GC step after
# every resume (testing build); its sockets take the path of systems
# without epoll (a libevent event each), which no other gate runs. A
# process per spec file: such a collector's cost grows with the live heap
check-gcstress: deps
	$(MAKE) BUILD=build-testing DEFS=-DCS_TESTING all
	CS_GC_STRESS=1 CS_NO_EPOLL=1 CS_STRESS_SCALE=0.01 \
	    $(MAKE) --no-print-directory \
	    BUILD=build-testing EACH_SPECS="$(GCSTRESS_SPECS)" run-busted-each

# clang-tidy with a chosen check set, zero findings. unix.Malloc is off: it
# cannot follow nodes unlinked from intrusive lists before they are freed
# (false positives); ASan and valgrind check that at run time.
TIDY_CHECKS = -*,clang-analyzer-*,-clang-analyzer-unix.Malloc,bugprone-*,-bugprone-easily-swappable-parameters,-bugprone-reserved-identifier,-bugprone-narrowing-conversions,-bugprone-implicit-widening-of-multiplication-result,cert-err34-c,misc-redundant-expression
tidy:
	clang-tidy -quiet --warnings-as-errors='*' --checks='$(TIDY_CHECKS)' \
	    $(SRCS) $(RE_SRCS) -- $(CSTD) $(DEFS) $(LUA_INC) $(PCRE2_CFLAGS) -Icsrc

# what real OpenResty (nginx + lua-nginx-module) returns for the cosocket
# cases of spec/support/openresty_cases.lua, into the file spec/59 compares
# with; installs nginx-light and libnginx-mod-http-lua when missing
record-openresty:
	INSTALL=1 sh spec/support/record_openresty.sh

# the same for the random cases of spec/support/cosocket_random_cases.lua
# (spec/71)
record-cosocket-random:
	INSTALL=1 sh spec/support/record_cosocket_random.sh

# the same for the random light-thread programs of
# spec/support/thread_random_cases.lua (spec/72)
record-thread-random:
	INSTALL=1 sh spec/support/record_thread_random.sh

# the same for the random UDP cosocket cases of
# spec/support/udp_random_cases.lua (spec/73)
record-udp-random:
	INSTALL=1 sh spec/support/record_udp_random.sh

# soak: a corosched echo server and client churning 9,000 connections for
# SOAK_TIME s, 1,000,000 spawn/kill/wait cycles, random timers; fails when
# RSS, fds or cs.stats() trend upward. Results and plot in $(BUILD)/soak.
SOAK_TIME ?= 600
soak: deps
	$(MAKE) all
	SOAK_TIME=$(SOAK_TIME) BUILD=$(BUILD) bash soak/run.sh

# allocation failures: every N of fuzz/alloc_fail.lua, both modes, then
# the same under valgrind
alloc-fail: deps
	$(MAKE) all
	BUILD=$(BUILD) bash fuzz/alloc_fail.sh

# line coverage of csrc/ (gcov): the suite in a testing build, then the
# socket specs again in the short-I/O mode and without the epoll set;
# per file, the executable lines and those never run; build-cov/*.gcov
# has each line with its count ("#####": never run)
coverage: deps
	rm -rf build-cov
	$(MAKE) BUILD=build-cov OPT="-O0 -g --coverage" DEFS=-DCS_TESTING \
	    EXTRA_LDFLAGS=--coverage all
	-$(MAKE) --no-print-directory BUILD=build-cov run-busted
	-CS_SHORT_IO=1 $(MAKE) --no-print-directory BUILD=build-cov \
	    BUSTED_ARGS="$(SOCKET_SPECS)" run-busted
	-CS_NO_EPOLL=1 $(MAKE) --no-print-directory BUILD=build-cov \
	    BUSTED_ARGS="$(SOCKET_SPECS)" run-busted
	@for f in $(SRCS) $(RE_SRCS); do \
	    gcov -t -o build-cov $$f 2>/dev/null \
	        > build-cov/$$(basename $$f).gcov; \
	    printf '%-20s %6s lines, %4s never run\n' $$(basename $$f) \
	        $$(grep -cE '^ +[0-9#]+\*?:' build-cov/$$(basename $$f).gcov) \
	        $$(grep -c '#####:' build-cov/$$(basename $$f).gcov); \
	done

# C unit tests of the Lua-free layers (buffer/patterns, net), ASan+UBSan
CTEST_FLAGS = $(CSTD) -O1 -g $(CWARNS) $(WERROR) -Icsrc \
              -fsanitize=address,undefined -fno-sanitize-recover=all
check-c:
	@mkdir -p $(BUILD)
	$(CC) $(CTEST_FLAGS) -o $(BUILD)/test_buffer fuzz/test_buffer.c \
	    csrc/cs_buffer.c
	$(CC) $(CTEST_FLAGS) -DCS_TESTING -o $(BUILD)/test_net \
	    fuzz/test_net.c csrc/cs_net.c
	@for t in test_buffer test_net; do \
	    $(BUILD)/$$t > $(BUILD)/$$t.log 2>&1; rc=$$?; \
	    grep FAIL $(BUILD)/$$t.log; tail -n 1 $(BUILD)/$$t.log; \
	    [ $$rc -eq 0 ] || exit 1; \
	done

# libFuzzer targets, FUZZ_TIME seconds each; new inputs go to build/corpus-*
# (the seed corpora in fuzz/corpus/ stay as they are). For hours:
#   make fuzz FUZZ_TIME=14400
FUZZ_TIME ?= 30
FUZZ_CC   ?= clang
FUZZ_FLAGS = -std=c99 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
             -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
             -Icsrc
FUZZ_TARGETS = buffer:cs_buffer addr:cs_net
fuzz:
	@EXTRA_DEPS="clang libclang-rt-14-dev" sh .ci/deps.sh
	@mkdir -p $(BUILD)
	@set -e; for t in $(FUZZ_TARGETS); do \
	    name=$${t%%:*}; src=$${t##*:}; \
	    echo "== fuzz_$$name ($(FUZZ_TIME) s)"; \
	    $(FUZZ_CC) $(FUZZ_FLAGS) -o $(BUILD)/fuzz_$$name \
	        fuzz/fuzz_$$name.c csrc/$$src.c; \
	    mkdir -p $(BUILD)/corpus-$$name; \
	    if ! $(BUILD)/fuzz_$$name -max_total_time=$(FUZZ_TIME) \
	        -print_final_stats=1 -artifact_prefix=$(BUILD)/ \
	        $(BUILD)/corpus-$$name fuzz/corpus/$$name \
	        > $(BUILD)/fuzz_$$name.log 2>&1; then \
	        tail -n 40 $(BUILD)/fuzz_$$name.log; exit 1; fi; \
	    grep -E "number_of_executed_units" $(BUILD)/fuzz_$$name.log; \
	done

# side by side with stock Lua, cqueues, luv and C; medians, ratios:
# bench/RESULTS.md (threads) and bench/ECHO_RESULTS.md (sockets)
bench: deps
	$(MAKE) all
	bash bench/run.sh
	bash bench/echo.sh

clean:
	rm -rf build build-asan build-testing build-cov

.PHONY: all deps env test demo check-asan check-valgrind run-busted \
        run-busted-each check-shortio check-c check-rock fuzz \
        check-gcstress tidy \
        soak alloc-fail coverage record-openresty record-cosocket-random \
        record-thread-random record-udp-random \
        cppcheck format lint bench clean
