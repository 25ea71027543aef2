# SPDX-License-Identifier: MIT
# The two commands to remember: `make run` and `make check`.
PREFIX ?= /usr/local
LISTEN ?= 127.0.0.1:7300
DATA_DIR ?= ./tenure-data
CTEST_ARGS ?=

.PHONY: all deps build release run check check-dev check-asan check-fuzz lint tsan \
        bench soak fuzz install clean incident deb compare demo-shards

all: build

deps:
	@scripts/deps.sh

build: deps
	@cmake --preset dev >/dev/null
	@cmake --build --preset dev -j2

release: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j2

# Builds and starts tenured on its embedded store in the foreground.
run: release
	@mkdir -p $(DATA_DIR)
	build/release/bin/tenured --listen $(LISTEN) --data-dir $(DATA_DIR)

# check-includes.py: no include/call cycle between files or modules of
# src/, no folder reaching one above it (the layering table is at its
# top), and no import cycle between Python modules.
# check-plants.sh: every negative control in tests/plants/ still applies.
# check-unit-tests.sh: every cmocka program can run one case alone.
# check-length.sh: no file of src/ over 500 lines, no other C or Python
# file over 600 (scripts/length-allow.txt: the files still being split).
# check-go.sh: gofmt and go vet of go/ (Debian's Go, offline).
# The OpenAPI description is validated by @redocly/cli, pinned in
# tools/openapi-lint and installed there by scripts/npm-tools.sh (npm ci).
# check-exports.sh builds the dev preset's libraries, then compares their
# exports with include/tenure/ (also the ctest lint/exports).
lint:
	@scripts/check-banned.sh
	@/usr/bin/python3 scripts/check-includes.py
	@scripts/check-plants.sh
	@scripts/check-unit-tests.sh
	@scripts/check-length.sh
	@scripts/check-format.sh
	@scripts/check-python.sh
	@scripts/check-go.sh
	@/usr/bin/python3 scripts/check-doc-links.py

	@scripts/check-exports.sh
	@scripts/npm-tools.sh lint-openapi

# The ASan+UBSan build runs the tests of our C code, labelled "asan" (its
# test preset's filter); the dev build every other test, and of ours the
# units, the contract and the few scripts that check something only
# without the sanitizers: an integration script of the C paths runs once,
# under the sanitizers (label "asan-only"; the rule is in
# tests/integration/CMakeLists.txt).  `ctest --preset dev` runs them all.
# The fuzz stage fuzzes every target.  docs/internals/TESTS.md, "make
# check", says what runs where and how long each stage takes.
check-dev: build
	@scripts/with-pg.sh ctest --preset dev -LE '^asan-only$$' $(CTEST_ARGS)

check-asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j2
	@scripts/with-pg.sh ctest --preset asan $(CTEST_ARGS)

check-fuzz: deps
	@scripts/fuzz.sh short

# Everything CI runs: lint, the dev build's tests, the sanitizer build's,
# and a short fuzzing run of every target.
check: deps lint check-dev check-asan check-fuzz
	@echo "make check: all passed"

tsan: deps
	@cmake --preset tsan >/dev/null
	@cmake --build --preset tsan -j2
	@scripts/with-pg.sh ctest --preset tsan -L tsan $(CTEST_ARGS)

bench: deps
	@scripts/deps.sh --bench
	@bench/run.sh

soak: build
	@scripts/soak.sh
	@scripts/chaos.sh --minutes $${SOAK_MINUTES:-30}
	@bench/retire.sh names
	@bench/retire.sh restart

fuzz: deps
	@scripts/fuzz.sh long

# The incident replay; its timelines (tenure-check --html) stay in
# build/incident/ and their paths are printed at the end.
incident: build
	@TN_BIN=$(CURDIR)/build/dev/bin TN_SRC=$(CURDIR) \
	    TN_INCIDENT_HTML_DIR=$(CURDIR)/build/incident \
	    tests/integration/t401-fence-incident-replay.sh

# The fair-share demo (examples/shards, docs/SESSIONS.md): 3 workers share
# 1,000 shards through sessions and write through the fence into SQLite;
# one is frozen past its TTL and resumed, one joins late.  Prints the
# balance after each change and the stale writes admitted (must be 0) and
# refused.  TN_DEMO_FENCE=off shows what the fence is for.
demo-shards: build
	@/usr/bin/python3 examples/shards/demo.py --tenured build/dev/bin/tenured

# The incident replayed against Redis, Redlock, etcd, ZooKeeper, PostgreSQL
# advisory locks and tenure (docs/COMPARE.md): writes compare/report.md and
# compare/report.svg; COMPARE_TRIALS=N trials per lock (200).
compare: release
	@bench/deps.sh
	@TN_BIN=$(CURDIR)/build/release/bin compare/run.sh

install: release
	@cmake --preset release -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build --preset release -j2
	@cmake --install build/release

# Debian packages in build/deb/ (docs in README.md, "Install").
deb: deps
	@scripts/deb.sh

clean:
	rm -rf build
