# cenariusd — the two entry points a newcomer needs, plus a few helpers.
#   make run    build, serve www/ with `cenariusd origin`, run the daemon against it (Ctrl-C stops)
#   make test   build and run the whole test suite
#   make demo   a non-interactive walk-through: sync, 304, resolve, publish a change, verify
#   make deb    the Debian package (.build/deb), checked by lintian; make man: the man pages alone
SHELL := /bin/bash
SWIFT ?= swift
PORT ?= 8701
DAEMON_PORT ?= 8700
DEMO ?= $(CURDIR)/.build/demo
PREFIX ?= /usr/local
BIN = $(CURDIR)/.build/debug/cenariusd

.PHONY: deps test-deps otlp-deps sql-deps deb-deps build run demo test release install man deb clean fuzz

# $(call apt-ensure,PACKAGES,WHY,REDIRECT): installs those of Debian's PACKAGES that are missing
# (sudo unless root), saying which and WHY; REDIRECT (>/dev/null) quiets apt, after any further
# apt-get options it starts with.
define apt-ensure
missing=""; \
for p in $(1); do \
  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
done; \
if [ -n "$$missing" ]; then \
  echo "installing$$missing$(2)"; \
  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing $(3); \
fi
endef

# Installs the C libraries the build links against (libcurl with OpenSSL, zlib) when missing.
deps:
	@$(call apt-ensure,libcurl4-openssl-dev zlib1g-dev libzstd-dev zstd curl,,)

# What the tests need beyond the build: a real browser for the tests of what pages use, and
# nginx with openssl for the HTTPS tests (a test CA, TLS 1.3, HTTP/2, client certificates), and
# iproute2 (`ss`: the tests watch connections close instead of sleeping past a keep-alive), and
# e2fsprogs (`mkfs.ext4`: the hard-link limit test makes a small ext4 image), and man-db (the man
# pages are rendered as lintian would), and dbus-daemon with avahi-daemon and avahi-utils (the DNS-SD
# tests run a bus and an Avahi of their own per network namespace), and gdb (a test process that
# dies of a fault leaves a core, whose faulting frames scripts/test.sh prints); with CENARIUS_DEB (the
# package test), debootstrap.
# And OpenStack Swift with memcached, the S3 store of the publish tests (scripts/object-store; the
# Debian package `swift` is OpenStack's, not the language's), without their Recommends (keystone and
# barbican clients, gnome-keyring: a hundred packages the store never uses). Never python3-swiftclient:
# its /usr/bin/swift, a python script, would shadow the toolchain on PATH; the last line fails if it does.
STORE_PACKAGES = swift swift-proxy swift-account swift-container swift-object python3-swift memcached curl
test-deps:
	@$(call apt-ensure,chromium nginx openssl iproute2 e2fsprogs dosfstools fusefat strace gdb man-db dbus-daemon avahi-daemon avahi-utils $(if $(CENARIUS_DEB),debootstrap), (for the browser and HTTPS tests),>/dev/null)
	@$(call apt-ensure,$(STORE_PACKAGES), (for the object store tests),--no-install-recommends >/dev/null)
	@! head -c2 /usr/bin/swift 2>/dev/null | grep -q '#!' || { echo "/usr/bin/swift (python3-swiftclient?) shadows the Swift toolchain: apt-get remove python3-swiftclient" >&2; exit 1; }
	@$(MAKE) --no-print-directory otlp-deps
	@$(MAKE) --no-print-directory sql-deps

# OpenTelemetry's protocol definitions from PyPI (opentelemetry-proto), in a venv of their own
# (.build/otlp-venv): TelemetryTests decode every export cenariusd sends with them (scripts/otlp-decode).
OTLP_VENV = $(CURDIR)/.build/otlp-venv
otlp-deps:
	@$(OTLP_VENV)/bin/python -c 'import opentelemetry.proto' 2>/dev/null || { \
	  echo "installing opentelemetry-proto into $(OTLP_VENV) (for the telemetry tests)"; \
	  { python3 -m venv $(OTLP_VENV) || { $(call apt-ensure,python3-venv,,>/dev/null) && python3 -m venv $(OTLP_VENV); }; } && \
	  $(OTLP_VENV)/bin/pip install -q opentelemetry-proto; }

# The SQL engines FleetSQLTests run `fleet --sql`'s query in, from PyPI, in-process: DuckDB and
# ClickHouse's chdb, and sqlglot, which parses the Athena dialect; in a venv of their own
# (.build/sql-venv) that scripts/fleet-sql's callers use.
SQL_VENV = $(CURDIR)/.build/sql-venv
sql-deps:
	@$(SQL_VENV)/bin/python -c 'import duckdb, chdb, sqlglot' 2>/dev/null || { \
	  echo "installing duckdb, chdb and sqlglot into $(SQL_VENV) (for the fleet --sql tests)"; \
	  { python3 -m venv $(SQL_VENV) || { $(call apt-ensure,python3-venv,,>/dev/null) && python3 -m venv $(SQL_VENV); }; } && \
	  $(SQL_VENV)/bin/pip install -q duckdb chdb sqlglot; }

build: deps
	$(SWIFT) build --product cenariusd

# The build users install and the bench measures: static Swift runtime, stripped (Package.swift),
# C code (BoringSSL above all) and all Swift code, the dependencies' too, built for size and linked
# with LLVM's whole-program optimisation: F's 25 MB bar (21.96 MB; 25.39 MB without LTO, where every
# type of every linked module and the code its conformances name stay; docs/decisions.md).
RELEASE_FLAGS = -c release --static-swift-stdlib -Xcc -Os -Xswiftc -Osize --experimental-lto-mode=full
release: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product cenariusd

install: release
	install -D -m 755 .build/release/cenariusd $(DESTDIR)$(PREFIX)/bin/cenariusd
	@echo "installed $(DESTDIR)$(PREFIX)/bin/cenariusd ($$(du -h .build/release/cenariusd | cut -f1))"

# The man pages (.build/man): cenariusd-manual (Sources/ManualPages) over the command tree the binary
# itself parses with (--experimental-dump-help), dated by the last commit so that a rebuild writes
# the same bytes. From the debug build; `make deb` makes them from the release build it packages.
ifndef SOURCE_DATE_EPOCH
SOURCE_DATE_EPOCH := $(shell git log -1 --format=%ct 2>/dev/null || date +%s)
endif
MAN_FLAGS =
MAN_DIR = $(CURDIR)/.build/man
man: deps
	$(SWIFT) build $(MAN_FLAGS) --product cenariusd
	$(SWIFT) build $(MAN_FLAGS) --product cenariusd-manual
	@bin=$$($(SWIFT) build $(MAN_FLAGS) --show-bin-path); rm -rf "$(MAN_DIR)"; \
	  "$$bin/cenariusd" --experimental-dump-help | "$$bin/cenariusd-manual" --output "$(MAN_DIR)" \
	    --version "$$("$$bin/cenariusd" --version)" --date "$$(date -u -d @$(SOURCE_DATE_EPOCH) +%F)"

# What building, checking and testing the package needs: dpkg-dev (dpkg-shlibdeps), binutils
# (readelf, strings), lintian, debootstrap (DebianPackageTests), man-db and groff (man pages).
deb-deps:
	@$(call apt-ensure,dpkg-dev binutils lintian debootstrap man-db groff-base, (for the Debian package),>/dev/null)

# The Debian package, .build/deb/cenariusd_<version>_<arch>.deb (scripts/deb.sh: no network), then
# lintian, failing on any error or warning (the overrides and their reasons:
# dist/debian/lintian-overrides). Install it: sudo apt install ./.build/deb/cenariusd_*.deb
deb: MAN_FLAGS = $(RELEASE_FLAGS)
deb: deb-deps release man
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) bash scripts/deb.sh .build/release/cenariusd "$(MAN_DIR)" .build/deb
	lintian --fail-on error,warning .build/deb/cenariusd_*.deb

test: deps test-deps
	$(SWIFT) build --build-tests
	@# The fuzz targets' corpora (Fuzz/targets) replayed through their property checks (no
	@# fuzzer needed); a target fails on an unreadable or empty corpus.
	@bin=$$($(SWIFT) build --show-bin-path); grep -v '^#' Fuzz/targets | while read -r t c; do \
	  [ -n "$$t" ] || continue; "$$bin/$$t" "Fuzz/corpus/$$c" || exit 1; done
	@# The log in .build/test.log; a failure ends with the failed, the unfinished and a crash's frames.
	SWIFT=$(SWIFT) bash scripts/test.sh

# Every fuzz target for FUZZ_SECONDS each (default 60; CI runs 15), failing on a crash.
FUZZ_SECONDS ?= 60
fuzz: deps
	Fuzz/run $(FUZZ_SECONDS)

run: build
	@bash scripts/run.sh "$(BIN)" "$(CURDIR)/www" "$(DEMO)" "$(PORT)" "$(DAEMON_PORT)"

demo: build
	@bash scripts/demo.sh "$(BIN)" "$(CURDIR)/www" "$(DEMO)" "$(PORT)"

# The package test's Debian root too; never across a mount a killed run may have left in it.
clean:
	rm -rf .build
	rm -rf --one-file-system .build-debootstrap
