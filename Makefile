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
# Shell completion for swipectl, where each shell looks: zsh's directory for packages is
# vendor-completions under /usr (Debian), site-functions elsewhere.
BASHCOMPDIR  := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR   := $(DESTDIR)$(PREFIX)/share/zsh/$(if $(filter /usr,$(PREFIX)),vendor-completions,site-functions)
FISHCOMPDIR  := $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
# The guides (docs/*.md) and the images they show, installed beside README.md and protocol.md.
GUIDES       := $(sort $(wildcard docs/*.md docs/*.png))
UNIT_SED     := sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@DOCDIR@|$(PREFIX)/share/doc/swiped|g' \
                    -e 's|@WEBDIR@|$(PREFIX)/share/swiped/web|g'
RELEASE      := .build/release
# Every release build links the Swift standard library and Foundation statically and carries no
# RUNPATH: the binaries need only Debian's libraries, wherever they are installed (issue 35);
# -z now resolves their few dynamic symbols at start (Debian's hardening, lintian's bindnow).
# One set of flags for all of them, so that `make deb`, `alloc-guard` and `make run` share one
# build (a different flag rebuilds every module).
RELEASE_FLAGS := -c release --static-swift-stdlib --disable-local-rpath -Xlinker -z -Xlinker now

# Debian packages: to build, to test, to benchmark.
BUILD_DEBS   := libsystemd-dev libsqlite3-dev pkg-config
TEST_DEBS    := $(BUILD_DEBS) systemd util-linux mount bsdutils socat netcat-openbsd procps passwd groff-base e2fsprogs tmux
BENCH_DEBS   := $(BUILD_DEBS) redis-server
# The PostgreSQL store (issue 17): libpq to build; a server for its tests, which run a cluster of
# their own (Tests/TestSupport/PostgresCluster.swift).
BUILD_DEBS   += libpq-dev
TEST_DEBS    += libpq-dev postgresql
BENCH_DEBS   += libpq-dev postgresql
# The web listener (issue 43): libcrypto (libssl-dev) for the handshake's SHA-1 and base64 and
# the export's SHA-256 (WebSocket frames are the daemon's own since issue 44).
BUILD_DEBS   += libssl-dev
TEST_DEBS    += libssl-dev
BENCH_DEBS   += libssl-dev websocketd
# strace: DaemonLimitsTests runs the daemon under it to fail sends with EAGAIN on purpose, which
# makes a race between a full socket and a peer that catches up certain.
TEST_DEBS    += strace
# prometheus: promtool checks a scrape, and a Prometheus server of the test's own scrapes on
# loopback (issue 31; Tests/metrics/prometheus.py), with a port and a data directory of its own:
# on a machine that systemd runs, the package's own prometheus.service (port 9090) is not used.
TEST_DEBS    += prometheus

.PHONY: all build release run run-built test test-unit test-integration test-metrics alloc-guard bench soak faults fuzz lint size-lint install \
        install-built uninstall asan tsan clean deps-build deps-test deps-bench

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
	$(SWIFT) build $(RELEASE_FLAGS)

# Foreground daemon on an embedded default: ./swiped.sock and ./swiped-state (no root needed).
# `run-built` starts what $(RELEASE) already holds (the tests run it on their debug build).
# ARGS: more of the daemon's flags, e.g. `make run ARGS='--metrics 127.0.0.1:9464'`.
RUN_SOCKET ?= $(CURDIR)/swiped.sock
RUN_STATE  ?= $(CURDIR)/swiped-state
ARGS       ?=
run: release-bins
	@$(MAKE) --no-print-directory run-built

run-built:
	@echo "swiped: socket $(RUN_SOCKET), state $(RUN_STATE); Ctrl-C stops it."
	@echo "        try: socat - UNIX-CONNECT:$(RUN_SOCKET)"
	exec $(RELEASE)/swiped --socket $(RUN_SOCKET) --state $(RUN_STATE) $(ARGS)

# --- Tests -----------------------------------------------------------------------------------
# Unit tests of every library, then integration tests that start the real binaries, then the
# allocation guard, then the web front end in headless Chromium (test-web). On the way, the fault
# checker's own tests, and that every relative link of README.md, protocol.md, BENCHMARKS.md and
# docs/*.md resolves (Tests/docs/test_links.py).
test: deps-test
	@$(MAKE) --no-print-directory size-lint
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --disable-swift-testing
	$(PYTHON) -m unittest Tests/faults/test_check.py
	$(PYTHON) -m unittest Tests/docs/test_links.py
	@$(MAKE) --no-print-directory alloc-guard
	@$(MAKE) --no-print-directory test-metrics
	@$(MAKE) --no-print-directory test-deb-quick
	@$(MAKE) --no-print-directory test-web

# Prometheus (issue 31): promtool and a real Prometheus server on the golden exposition
# (Tests/metrics/sample.prom, the encoder's output that MetricsTests checks), then on the daemon's
# own metrics listener (the debug build's swiped --metrics, or $SWIPED_BUILD_DIR's): promtool
# checks a scrape, Prometheus scrapes it and counts its clients (Tests/metrics/prometheus.py).
test-metrics:
	$(PYTHON) -m unittest -v Tests/metrics/test_prometheus.py

# The drag path must not allocate (issue 11): 10,000 drags after warm-up make no call to malloc
# and its family, counted by an interposer linked into the guard (Tests/Support/alloc-guard);
# --self-test shows that the guard fails a drag path made to allocate. It measures a release
# build, as deployed: a debug build allocates 8 to 9 times per drag in code the optimiser
# specialises away (generic iterators, boxes). Building just this product in release takes
# about 30 s on top of the debug build. `make asan` and `make tsan` do not run it: their
# runtimes own malloc (the interposer compiles to nothing under them).
# (.build/release, not $(RELEASE): the tests set that to the debug build.)
alloc-guard:
	$(SWIFT) build $(RELEASE_FLAGS) --product alloc-guard
	.build/release/alloc-guard
	.build/release/alloc-guard --self-test

# --- Benchmarks ------------------------------------------------------------------------------
# The load benchmarks (issue 6) need the C echo server, the machine's limit: Benchmarks/run.sh.
bench: deps-bench release .build/bench/echo .build/bench/wsload
	$(RELEASE)/engine-bench
	$(RELEASE)/log-bench
	Benchmarks/run.sh
	SWIPED_BUILD_DIR=$(RELEASE) Benchmarks/web-bench.py
	Benchmarks/journal.sh $(RELEASE)
	Benchmarks/postgres.sh
	Benchmarks/websockets.sh
	Benchmarks/data-moves.sh $(RELEASE)
	Benchmarks/reorder.sh $(RELEASE)
	$(RELEASE)/tui-bench --bin $(RELEASE)

.build/bench/echo: Benchmarks/echo/echo.c
	@mkdir -p $(@D)
	gcc -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -o $@ $<

.build/bench/wsload: Benchmarks/wsload/wsload.c
	@mkdir -p $(@D)
	gcc -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -o $@ $<

# swift-format's rules, then the size lint (issue 30): no file under Sources/ over 600 lines, no
# function over 100 without a `// Long:` reason above it (Tests/Support/size-lint.py says how).
lint: size-lint
	$(SWIFT) format lint --strict --recursive --configuration .swift-format Sources Tests Benchmarks Fuzz Package.swift

size-lint:
	$(PYTHON) Tests/Support/size-lint.py --self-test
	$(PYTHON) Tests/Support/size-lint.py --list

# Binaries, units, the sysusers.d snippet (groups swiped and swiped-writers) and man pages; README,
# protocol.md and the guides in $(DOCDIR) (the guides and the web page's screenshots in its docs/,
# so that README's links to docs/ hold there too; .md files stay uncompressed in the package).
# With DESTDIR empty, the groups are created right away (systemd-sysusers).
# `install` builds in release mode first; `install-built` installs what $(RELEASE) already holds
# (the tests install the debug build that way, with RELEASE=.build/debug: a release build takes
# minutes).
install: release-bins
	$(MAKE) --no-print-directory install-built

install-built:
	install -d $(BINDIR) $(UNITDIR) $(MANDIR) $(SYSUSERSDIR) $(DOCDIR) $(DOCDIR)/docs
	install -m 0755 $(RELEASE)/swiped $(RELEASE)/swipectl $(BINDIR)/
	$(UNIT_SED) systemd/swiped.socket > $(UNITDIR)/swiped.socket
	$(UNIT_SED) systemd/swiped.service > $(UNITDIR)/swiped.service
	$(UNIT_SED) systemd/swiped-metrics.socket > $(UNITDIR)/swiped-metrics.socket
	chmod 0644 $(UNITDIR)/swiped.socket $(UNITDIR)/swiped.service $(UNITDIR)/swiped-metrics.socket
	install -m 0644 protocol.md README.md $(DOCDIR)/
	install -m 0644 $(GUIDES) $(DOCDIR)/docs/
	install -m 0644 systemd/swiped.sysusers $(SYSUSERSDIR)/swiped.conf
	install -m 0644 man/swiped.1 man/swipectl.1 $(MANDIR)/
	install -d $(BASHCOMPDIR) $(ZSHCOMPDIR) $(FISHCOMPDIR)
	install -m 0644 contrib/completion/swipectl.bash $(BASHCOMPDIR)/swipectl
	install -m 0644 contrib/completion/_swipectl $(ZSHCOMPDIR)/_swipectl
	install -m 0644 contrib/completion/swipectl.fish $(FISHCOMPDIR)/swipectl.fish
	if [ -z "$(DESTDIR)" ] && command -v systemd-sysusers >/dev/null; then systemd-sysusers $(SYSUSERSDIR)/swiped.conf; fi
	@$(MAKE) --no-print-directory install-web

uninstall:
	rm -f $(BINDIR)/swiped $(BINDIR)/swipectl $(UNITDIR)/swiped.socket $(UNITDIR)/swiped.service \
	      $(UNITDIR)/swiped-metrics.socket \
	      $(SYSUSERSDIR)/swiped.conf $(MANDIR)/swiped.1 $(MANDIR)/swipectl.1 \
	      $(BASHCOMPDIR)/swipectl $(ZSHCOMPDIR)/_swipectl $(FISHCOMPDIR)/swipectl.fish
	rm -rf $(DOCDIR)
	rm -rf $(WEBDIR) $(UNITDIR)/swiped-web.socket

# Reliability tests, long variant: 100 SIGKILL cycles, a larger malformed-input corpus, longer
# abuse runs (Tests/IntegrationTests/Reliability*Tests.swift).
# Then the PostgreSQL tests, long variant: 100 daemon SIGKILL cycles, 5 database restarts.
soak: deps-test
	$(SWIFT) build --build-tests
	SWIPED_SOAK=1 $(SWIFT) test --skip-build --filter Reliability
	SWIPED_SOAK=1 $(SWIFT) test --skip-build --filter Postgres
	Tests/faults/faults.sh $$($(SWIFT) build --show-bin-path) --short

# The fault harness (issue 34; root): a PostgreSQL 15 primary and its synchronous standby and
# three daemons, each in a network namespace of its own; a workload while links are cut, flap
# and slow down, the primary is killed and the standby promoted, daemons are killed; then
# Tests/faults/check.py over the recorded history (kept in .build/faults). docs/postgres.md,
# "Faults, checked". FAULTS_BUDGET: seconds for the whole run; FAULTS_BIN: the directory of the
# swiped to run (default: the debug build, built first). `make soak` runs the short one.
FAULTS_BUDGET ?= 1800
FAULTS_BIN    ?=
faults: deps-test
	$(if $(FAULTS_BIN),,$(SWIFT) build --product swiped)
	Tests/faults/faults.sh $(if $(FAULTS_BIN),$(FAULTS_BIN),$$($(SWIFT) build --show-bin-path)) --budget $(FAULTS_BUDGET)

# libFuzzer, for a bounded time each: the JSON codec and framer (Fuzz/JSONCodecFuzz), then request
# framing, decoding and reply encoding (Fuzz/RequestFuzz), then the HTTP request heads of the
# metrics and web listeners and the page's file names (Fuzz/HTTPFuzz; -max_len past the 8 KiB
# head limit), then the web listener's WebSocket frames both ways (Fuzz/FrameFuzz: FrameLink
# both ways). Crashes are written to .build/fuzz/crash-*, .build/fuzz/http-crash-*,
# .build/fuzz/frame-crash-* (and Fuzz/run.sh's own directory); turn each into a test in
# Tests/JSONCodecTests, Tests/WireTests, Tests/HTTPScrapeTests or Tests/WebSocketTests.
FUZZ_TIME ?= 60
fuzz:
	Fuzz/run.sh $(FUZZ_TIME)
	Fuzz/RequestFuzz/build.sh
	mkdir -p .build/fuzz/corpus
	.build/fuzz/request-fuzz -max_total_time=$(FUZZ_TIME) -max_len=4096 -timeout=10 \
	    -artifact_prefix=.build/fuzz/ .build/fuzz/corpus Fuzz/RequestFuzz/seeds
	Fuzz/HTTPFuzz/build.sh
	mkdir -p .build/fuzz/http-corpus
	.build/fuzz/http-fuzz -max_total_time=$(FUZZ_TIME) -max_len=10000 -timeout=10 \
	    -artifact_prefix=.build/fuzz/http-crash- .build/fuzz/http-corpus Fuzz/HTTPFuzz/seeds
	Fuzz/FrameFuzz/build.sh
	mkdir -p .build/fuzz/frame-corpus
	.build/fuzz/frame-fuzz -max_total_time=$(FUZZ_TIME) -max_len=4096 -timeout=10 \
	    -artifact_prefix=.build/fuzz/frame-crash- .build/fuzz/frame-corpus Fuzz/FrameFuzz/seeds

# Sanitizer builds get their own build directories, so that they do not throw the debug build
# away (and back). The integration tests then run the sanitized swiped.
# LeakSanitizer is off for the test runner only: swift-corelibs-xctest and swift-foundation
# leak their own objects at exit (test cases, teardown blocks, String(contentsOfFile:)).
# The daemons the reliability tests start turn it back on (ASAN_OPTIONS=detect_leaks=1), so a
# leak in swiped fails the tests that expect it to exit 0.
asan: deps-test
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --skip-build --sanitize=address --scratch-path .build-asan

tsan: deps-test
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	TSAN_OPTIONS=halt_on_error=1 $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan

clean:
	rm -rf .build .build-asan .build-tsan

# --- Web front end (issues 16 and 43) ---------------------------------------------------------
# `make web` is `make run` with the daemon's web listener on: swiped itself serves web/ and its
# WebSocket (GET /ws) on 127.0.0.1:$(WEB_PORT), every browser tab one client of its own (no
# bridge, no process per tab). `make run` leaves the listener off (no TCP port unless asked):
# run one or the other, they share the socket and the state. `web-built` starts what $(RELEASE)
# holds (the web tests check its command line against their own, Tests/web/harness.py).
# `make test-web` runs the page in headless Chromium (Tests/web, Python's unittest with Debian's
# python3-selenium and chromedriver; nginx for the page behind a proxy) against the debug build.
# Its accessibility check (issue 29) runs axe-core from PyPI's axe-selenium-python, pinned, which
# the tests install on first use into a virtual environment of their own, .build/web-venv
# (python3-venv; Debian's Python refuses system-wide pip installs): the one download.
# `make screenshots` regenerates docs/*.png; `make bench` runs Benchmarks/web-bench.py.
WEB_TEST_DEBS := chromium chromium-driver python3-selenium python3-venv nginx openssl
TEST_DEBS     += $(WEB_TEST_DEBS)
BENCH_DEBS    += $(WEB_TEST_DEBS)
WEB_PORT      ?= 8080
# On a person's own machine, on loopback only: anonymous pages may write, as before people had
# roles (the installed units keep the default, --web-anonymous reader).
WEB_ARGS       = --web 127.0.0.1:$(WEB_PORT) --web-root web --web-anonymous writer
WEBDIR        := $(DESTDIR)$(PREFIX)/share/swiped/web
PYTHON        := /usr/bin/python3

.PHONY: web web-built test-web screenshots install-web deps-web-test

deps-web-test: ; $(call ensure_debs,$(WEB_TEST_DEBS))

web: release-bins
	@$(MAKE) --no-print-directory web-built

web-built:
	@echo "swiped: open http://127.0.0.1:$(WEB_PORT)/ (socket $(RUN_SOCKET), state $(RUN_STATE)); Ctrl-C stops it."
	@echo "swiped: anonymous pages may change the list here (--web-anonymous writer, loopback only); the installed service lets them read."
	exec $(RELEASE)/swiped --socket $(RUN_SOCKET) --state $(RUN_STATE) $(WEB_ARGS) $(ARGS)

test-web: deps-web-test
	$(SWIFT) build --product swiped
	$(SWIFT) build --product swipectl
	SWIPED_BUILD_DIR=$$($(SWIFT) build --show-bin-path) $(PYTHON) -m unittest -v Tests/web/test_web.py Tests/web/test_gestures.py Tests/web/test_reorder.py Tests/web/test_nginx.py

screenshots: deps-web-test
	$(SWIFT) build --product swiped
	SWIPED_BUILD_DIR=$$($(SWIFT) build --show-bin-path) $(PYTHON) Tests/web/screenshots.py docs

# The page, and swiped-web.socket, which passes swiped.service its web socket (named "web"):
# swiped.service runs with --web-root @WEBDIR@, this directory.
install-web:
	install -d $(WEBDIR) $(UNITDIR)
	install -m 0644 web/index.html web/style.css web/app.js web/connection.js web/rows.js web/model.js $(WEBDIR)/
	$(UNIT_SED) systemd/swiped-web.socket > $(UNITDIR)/swiped-web.socket
	chmod 0644 $(UNITDIR)/swiped-web.socket

# --- Debian package (issue 35) ---------------------------------------------------------------
# `make deb` builds ./swiped_VERSION_ARCH.deb with dpkg-buildpackage and debhelper (debian/;
# debian/README.source says why), from the release build (RELEASE_FLAGS: the Swift runtime and
# Foundation linked in). The version is swipedVersion in Sources/Wire/Version.swift; debian/changelog
# must say the same, or `make deb` stops. dpkg-buildpackage writes the .deb, .buildinfo and .changes
# to .build/deb/ (dpkg-genchanges wants them in one place); the .deb is linked into the top.
# `make test-deb-quick` (part of `make test`) checks the package: lintian, its file list, its
# libraries, shell completion. `make test-deb` installs it in a clean Debian 12 tree without Swift
# (a chroot made by mmdebstrap from Debian's archive, cached in .build/deb-test/) and runs it there:
# Tests/deb/README.md. CI runs `make test` (.ci/run); run `make test-deb` before a release.
DEB_DEBS      := $(BUILD_DEBS) dpkg-dev debhelper lintian
DEB_TEST_DEBS := $(DEB_DEBS) mmdebstrap man-db
TEST_DEBS     += $(DEB_DEBS) man-db
VERSION       := $(shell sed -n 's/^public let swipedVersion = "\(.*\)"$$/\1/p' Sources/Wire/Version.swift)
DEB_ARCH      := $(shell dpkg --print-architecture 2>/dev/null)
DEB           := swiped_$(VERSION)_$(DEB_ARCH).deb
DEB_OUT       := .build/deb

.PHONY: deb release-bins test-deb test-deb-quick deps-deb deps-deb-test

deps-deb:      ; $(call ensure_debs,$(DEB_DEBS))
deps-deb-test: ; $(call ensure_debs,$(DEB_TEST_DEBS))

# What the package ships, without the benchmarks that `make release` also builds: `make run`,
# `make install` and `make deb` need only these two, and each statically linked executable
# costs a link of about 75 MB.
release-bins: deps-build
	$(SWIFT) build $(RELEASE_FLAGS) --product swiped
	$(SWIFT) build $(RELEASE_FLAGS) --product swipectl

deb: deps-deb
	@changelog=$$(dpkg-parsechangelog -S Version); if [ "$$changelog" != "$(VERSION)" ]; then \
	  echo "make deb: debian/changelog says $$changelog, Sources/Wire/Version.swift $(VERSION):"; \
	  echo "          add a changelog entry (dch -v $(VERSION)) or fix the version"; exit 1; fi
	@mkdir -p $(DEB_OUT)
	SWIPED_DEB_DIR=$(CURDIR)/$(DEB_OUT) dpkg-buildpackage -b --no-sign --post-clean \
	    --buildinfo-option=-u$(DEB_OUT) --changes-option=-u$(DEB_OUT) \
	    --buildinfo-file=$(DEB_OUT)/swiped_$(VERSION)_$(DEB_ARCH).buildinfo \
	    --changes-file=$(DEB_OUT)/swiped_$(VERSION)_$(DEB_ARCH).changes
	ln -f $(DEB_OUT)/$(DEB) $(DEB)
	@echo "make deb: built ./$(DEB); install it with: apt install ./$(DEB)"

test-deb-quick: deb
	Tests/deb/check-package.sh $(DEB)

test-deb: deps-deb-test deb
	Tests/deb/chroot-test.sh $(DEB)
