# swiped: the README's two commands are `make run` and `make test`. Both install the Debian
# packages they need when missing (as root; otherwise they say what to install).
SHELL        := /bin/bash
SWIFT        ?= swift
PREFIX       ?= /usr/local
DESTDIR      ?=
BINDIR       := $(DESTDIR)$(PREFIX)/bin
UNITDIR      := $(DESTDIR)$(PREFIX)/lib/systemd/system
MANDIR       := $(DESTDIR)$(PREFIX)/share/man/man1
SYSUSERSDIR  := $(DESTDIR)$(PREFIX)/lib/sysusers.d
DOCDIR       := $(DESTDIR)$(PREFIX)/share/doc/swiped
UNIT_SED     := sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@DOCDIR@|$(PREFIX)/share/doc/swiped|g'
RELEASE      := .build/release

# Debian packages: to build, to test, to benchmark.
BUILD_DEBS   := libsystemd-dev libsqlite3-dev pkg-config
TEST_DEBS    := $(BUILD_DEBS) systemd util-linux mount bsdutils socat netcat-openbsd procps passwd groff-base
BENCH_DEBS   := $(BUILD_DEBS) redis-server

.PHONY: all build release run run-built test test-unit test-integration bench soak fuzz lint install install-built \
        uninstall asan tsan clean deps-build deps-test deps-bench

all: build

# --- Debian packages -------------------------------------------------------------------------
# `apt-get update` runs at most once per invocation, and only when something is missing.
define ensure_debs
	@missing=""; for p in $(1); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "make: installing Debian packages:$$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
	  else \
	    echo "make: missing Debian packages:$$missing"; \
	    echo "      install them with: sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi
endef

deps-build: ; $(call ensure_debs,$(BUILD_DEBS))
deps-test:  ; $(call ensure_debs,$(TEST_DEBS))
deps-bench: ; $(call ensure_debs,$(BENCH_DEBS))

# --- Build -----------------------------------------------------------------------------------
build: deps-build
	$(SWIFT) build

release: deps-build
	$(SWIFT) build -c release

# Foreground daemon on an embedded default: ./swiped.sock and ./swiped-state (no root needed).
# `run-built` starts what $(RELEASE) already holds (the tests run it on their debug build).
RUN_SOCKET ?= $(CURDIR)/swiped.sock
RUN_STATE  ?= $(CURDIR)/swiped-state
run: release
	@$(MAKE) --no-print-directory run-built

run-built:
	@echo "swiped: socket $(RUN_SOCKET), state $(RUN_STATE); Ctrl-C stops it."
	@echo "        try: socat - UNIX-CONNECT:$(RUN_SOCKET)"
	exec $(RELEASE)/swiped --socket $(RUN_SOCKET) --state $(RUN_STATE)

# --- Tests -----------------------------------------------------------------------------------
# Unit tests of every library, then integration tests that start the real binaries.
test: deps-test
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --disable-swift-testing

# --- Benchmarks ------------------------------------------------------------------------------
# The load benchmarks (issue 6) need the C echo server, the machine's limit: Benchmarks/run.sh.
bench: deps-bench release .build/bench/echo
	$(RELEASE)/engine-bench
	$(RELEASE)/log-bench
	Benchmarks/run.sh

.build/bench/echo: Benchmarks/echo/echo.c
	@mkdir -p $(@D)
	gcc -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -o $@ $<

lint:
	$(SWIFT) format lint --strict --recursive --configuration .swift-format Sources Tests Benchmarks

# Binaries, units, the sysusers.d snippet (groups swiped and swiped-writers) and man pages.
# With DESTDIR empty, the groups are created right away (systemd-sysusers).
# `install` builds in release mode first; `install-built` installs what $(RELEASE) already holds
# (the tests install the debug build that way, with RELEASE=.build/debug: a release build takes
# minutes).
install: release
	$(MAKE) --no-print-directory install-built

install-built:
	install -d $(BINDIR) $(UNITDIR) $(MANDIR) $(SYSUSERSDIR) $(DOCDIR)
	install -m 0755 $(RELEASE)/swiped $(RELEASE)/swipectl $(BINDIR)/
	$(UNIT_SED) systemd/swiped.socket > $(UNITDIR)/swiped.socket
	$(UNIT_SED) systemd/swiped.service > $(UNITDIR)/swiped.service
	chmod 0644 $(UNITDIR)/swiped.socket $(UNITDIR)/swiped.service
	install -m 0644 protocol.md README.md $(DOCDIR)/
	install -m 0644 systemd/swiped.sysusers $(SYSUSERSDIR)/swiped.conf
	install -m 0644 man/swiped.1 man/swipectl.1 $(MANDIR)/
	if [ -z "$(DESTDIR)" ] && command -v systemd-sysusers >/dev/null; then systemd-sysusers $(SYSUSERSDIR)/swiped.conf; fi

uninstall:
	rm -f $(BINDIR)/swiped $(BINDIR)/swipectl $(UNITDIR)/swiped.socket $(UNITDIR)/swiped.service \
	      $(SYSUSERSDIR)/swiped.conf $(MANDIR)/swiped.1 $(MANDIR)/swipectl.1
	rm -rf $(DOCDIR)

asan: deps-test
	$(SWIFT) test --sanitize=address

tsan: deps-test
	$(SWIFT) test --sanitize=thread

clean:
	rm -rf .build
