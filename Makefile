# cenariusd — the two entry points a newcomer needs, plus a few helpers.
#   make run    build, start the built-in origin on www/ and sync + resolve against it
#   make test   build and run the whole test suite
SHELL := /bin/bash
SWIFT ?= swift
PORT ?= 8701
DEMO ?= $(CURDIR)/.build/demo
BIN = $(CURDIR)/.build/debug/cenariusd

.PHONY: deps build run test release clean

# Installs the C libraries the build links against (libcurl with OpenSSL, zlib) when missing.
deps:
	@missing=""; \
	for p in libcurl4-openssl-dev zlib1g-dev; do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build --product cenariusd

release: deps
	$(SWIFT) build -c release --product cenariusd

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

run: build
	@bash scripts/demo.sh "$(BIN)" "$(CURDIR)/www" "$(DEMO)" "$(PORT)"

clean:
	rm -rf .build
