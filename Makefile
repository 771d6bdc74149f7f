# agentbox — build, test, install. Plain make + pkg-config.
PREFIX   ?= /usr/local
DESTDIR  ?=
# bin, not sbin: a user's PATH has no sbin on Debian, and rootless users run
# `agentbox kit run` themselves
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man
DATADIR  ?= $(PREFIX)/share/agentbox
# shell completion, where bash-completion and Debian's zsh look (a package's
# zsh functions go to vendor-completions, a local install's to site-functions)
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/$(if $(filter /usr,$(PREFIX)),vendor-completions,site-functions)

VERSION  := 0.1.0
COMMIT   := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

PKGS     := libseccomp yajl libcap libmnl libnftnl yaml-0.1 nettle
# libarchive: headers only; oci/image/image.c dlopens it when a kit needs an image
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) libarchive)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS))
# The agentbox binary links the libraries statically where Debian ships an
# archive (all but libmnl and libc): ld.so then maps 2 libraries instead of 8,
# twice per run because of the sealed re-exec (bench/PROFILE.md #4).
# STATIC_DEPS=no links them all dynamically.
STATIC_DEPS ?= yes
ifeq ($(STATIC_DEPS),yes)
BIN_LIBS := -Wl,-Bstatic -lseccomp -lyajl_s -lcap -lnftnl -lyaml -lnettle -Wl,-Bdynamic -lmnl
else
BIN_LIBS := $(PKG_LIBS)
endif

CC       ?= cc
CFLAGS   ?= -O2 -g
WERROR   ?= -Werror
SANITIZE ?=
# TEST_HOOKS=yes: the test build, with the fault-injection hooks of
# lib/test_hooks.h compiled in (make check and tests/run-all.sh use it). Any
# other build, `make install`'s among them, has none.
TEST_HOOKS ?= no
SAN_FLAGS := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer,)
ALL_CFLAGS := -std=gnu11 -Wall -Wextra $(WERROR) -Wno-unused-parameter -D_GNU_SOURCE \
	-fvisibility=hidden \
	-DAGENTBOX_VERSION='"$(VERSION)"' -DAGENTBOX_COMMIT='"$(COMMIT)"' \
	$(PKG_CFLAGS) $(SAN_FLAGS) $(if $(filter yes,$(TEST_HOOKS)),-DAGENTBOX_TEST_HOOKS,) $(CFLAGS)
ALL_LDFLAGS := -Wl,-z,now -Wl,--as-needed $(SAN_FLAGS) $(LDFLAGS)

# Rooms by concern (docs/ARCHITECTURE.md). USES_F names the folders the code
# of folder F may include and call; F is compiled with the include paths of
# itself and of everything its uses use in turn, so an include that points
# anywhere else fails the build. scripts/layers.py checks the calls too.
FOLDERS  := lib \
	netfilter/wire netfilter/policy netfilter/ruleset netfilter/sentry netfilter/gateway \
	oci/config oci/image oci/kit seccomp-profiles \
	runtime/cgroups runtime/linux runtime/init runtime/state runtime/settings \
	runtime/egress runtime/floor runtime/container runtime/kit runtime/setup runtime/cli
USES_lib               :=
USES_netfilter/wire    := lib
USES_netfilter/policy  := lib
USES_netfilter/ruleset := lib netfilter/policy
USES_netfilter/sentry  := lib netfilter/wire netfilter/policy netfilter/ruleset
USES_netfilter/gateway := lib netfilter/wire netfilter/policy
USES_oci/config        := lib
USES_oci/image         := lib
USES_oci/kit           := lib netfilter/policy oci/config oci/image
USES_seccomp-profiles  := lib oci/config
USES_runtime/cgroups   := lib oci/config
USES_runtime/linux     := lib oci/config
USES_runtime/init      := lib oci/config seccomp-profiles runtime/cgroups runtime/linux
USES_runtime/state     := lib oci/config runtime/cgroups runtime/linux
USES_runtime/settings  := lib netfilter/policy
USES_runtime/egress    := lib netfilter/wire netfilter/policy netfilter/ruleset netfilter/sentry oci/config \
	seccomp-profiles runtime/cgroups runtime/linux runtime/init runtime/state runtime/settings
USES_runtime/floor     := lib oci/config runtime/settings runtime/egress
USES_runtime/container := lib netfilter/policy netfilter/ruleset oci/config seccomp-profiles runtime/cgroups \
	runtime/linux runtime/init runtime/state runtime/settings runtime/egress runtime/floor
USES_runtime/kit       := lib netfilter/policy netfilter/ruleset oci/config oci/kit runtime/cgroups runtime/linux \
	runtime/init runtime/state runtime/container
USES_runtime/setup     := lib
USES_runtime/cli       := lib netfilter/policy netfilter/sentry oci/config oci/kit seccomp-profiles \
	runtime/cgroups runtime/linux runtime/state runtime/settings runtime/egress runtime/container \
	runtime/kit runtime/setup
# a folder's include path: itself and, recursively, what it uses
uses_all = $(sort $(1) $(foreach u,$(USES_$(1)),$(call uses_all,$(u))))
$(foreach f,$(FOLDERS),$(eval INC_$(f) := $(foreach u,$(call uses_all,$(f)),-I$(u))))
# the code folders linked into agentbox (the gateway is its own executable);
# tests and fuzz targets see them all
CODE_FOLDERS := $(filter-out netfilter/gateway,$(FOLDERS))
INC_ALL  := $(foreach f,$(CODE_FOLDERS),-I$(f))
HDRS     := $(foreach d,$(FOLDERS),$(wildcard $(d)/*.h))

SRCS     := $(foreach d,$(CODE_FOLDERS),$(wildcard $(d)/*.c))
OBJS     := $(SRCS:.c=.o)
LIB_OBJS := $(filter-out runtime/cli/main.o,$(OBJS))
PROFILES := $(wildcard seccomp-profiles/*.json)

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:.c=)

.PHONY: all clean check demo unit integration install man helper fuzz bench
all: agentbox agentbox-gateway tests/helper/abtest tests/helper/prober tests/helper/netprobe

# The credential gateway (netfilter/gateway/, built with its folder's include
# paths: lib, netfilter/wire and netfilter/policy): its own executable, exec'd only
# for boxes with header credentials, so the runtime itself never maps OpenSSL
# or nghttp2. Linked statically where Debian ships archives: a gateway per
# box shares nothing and maps only the pages it uses.
GW_SRCS  := $(wildcard netfilter/gateway/*.c)
GW_OBJS  := $(GW_SRCS:.c=.o)
GW_DEPS  := lib/error.o lib/log.o lib/util.o netfilter/policy/credential.o netfilter/policy/policy.o
GW_PKGS  := openssl libnghttp2
ifeq ($(STATIC_DEPS),yes)
GW_LIBS  := -Wl,-Bstatic -lssl -lcrypto -lnghttp2 -lhttp_parser -Wl,-Bdynamic
else
GW_LIBS  := $(shell pkg-config --libs $(GW_PKGS)) -lhttp_parser
endif
$(GW_OBJS): $(wildcard netfilter/gateway/*.h) netfilter/wire/gateway_proto.h netfilter/policy/credential.h
# -no-pie: the static libraries' relocated data would be private dirty
# pages in every gateway (~370 KiB); at fixed addresses they stay clean and shared.
# (Linked dynamically, STATIC_DEPS=no, the libraries are PIC and shared anyway.)
agentbox-gateway: $(GW_OBJS) $(GW_DEPS)
	$(CC) -o $@ $(GW_OBJS) $(GW_DEPS) $(ALL_LDFLAGS) $(if $(SAN_FLAGS)$(filter-out yes,$(STATIC_DEPS)),,-no-pie) $(GW_LIBS)

agentbox: $(OBJS)
	$(CC) -o $@ $(OBJS) $(ALL_LDFLAGS) $(BIN_LIBS)

# the folder of a source picks its include paths
layer_inc = $(INC_$(patsubst %/,%,$(dir $(1))))
%.o: %.c $(HDRS)
	$(CC) $(call layer_inc,$<) $(ALL_CFLAGS) -c -o $@ $<

# profiles are embedded with .incbin; rebuild when they change
seccomp-profiles/profiles_embed.o: $(PROFILES)

# The static multi-call helper that goes into every test rootfs.
tests/helper/abtest: tests/helper/abtest.c
	$(CC) -std=gnu11 -O2 -Wall -Wextra $(WERROR) -static -o $@ $<

tests/helper/prober: tests/helper/prober.c
	$(CC) -std=gnu11 -O2 -Wall -Wextra $(WERROR) -static -o $@ $<

tests/helper/netprobe: tests/helper/netprobe.c
	$(CC) -std=gnu11 -O2 -Wall -Wextra $(WERROR) -static -o $@ $<

tests/netfilter/egress-driver: tests/netfilter/egress-driver.c $(LIB_OBJS)
	$(CC) $(INC_ALL) $(ALL_CFLAGS) -o $@ $< $(LIB_OBJS) $(ALL_LDFLAGS) $(PKG_LIBS)

tests/netfilter/gateway-driver: tests/netfilter/gateway-driver.c $(LIB_OBJS) agentbox-gateway
	$(CC) $(INC_ALL) $(ALL_CFLAGS) -o $@ $< $(LIB_OBJS) $(ALL_LDFLAGS) $(PKG_LIBS)

tests/unit/test_%: tests/unit/test_%.c tests/unit/tap.h $(LIB_OBJS)
	$(CC) $(INC_ALL) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(LIB_OBJS) $(ALL_LDFLAGS) $(PKG_LIBS) $(UNIT_EXTRA_LIBS)

# the replay of the fuzz targets runs the gateway's HTTP/1.1 code and its
# response scan too (tests/fuzz/gateway_sources.h)
GW_FUZZ_SRCS := $(addprefix netfilter/gateway/,h1.c h1_resp.c guard.c scan.c ctl.c buf.c)
UNIT_EXTRA_LIBS = $(if $(filter tests/unit/test_fuzz_regressions,$@),-lhttp_parser)
tests/unit/test_fuzz_regressions: $(GW_FUZZ_SRCS) $(wildcard netfilter/gateway/*.h)
# the gateway's response scan, with the buffers and locked memory it uses
tests/unit/test_gateway_scan: netfilter/gateway/scan.c netfilter/gateway/ctl.c netfilter/gateway/buf.c \
	$(wildcard netfilter/gateway/*.h)

unit: $(UNIT_BINS) tests/helper/prober
	@set -e; for t in $(UNIT_BINS); do echo "# $$t"; ./$$t; done

integration: all
	bats tests/integration

# The README's test command: installs what the tests need, builds, runs everything.
check:
	scripts/install-deps.sh engines
	$(MAKE) all TEST_HOOKS=yes
	TEST_HOOKS=yes tests/run-all.sh

# The README's main job: build, then a sandboxed command from an example kit with
# its egress policy shown working.
demo:
	scripts/install-deps.sh test
	$(MAKE) all
	scripts/demo.sh

install: agentbox agentbox-gateway
	install -D -m 0755 agentbox $(DESTDIR)$(BINDIR)/agentbox
	install -D -m 0755 agentbox-gateway $(DESTDIR)$(BINDIR)/agentbox-gateway
	install -d $(DESTDIR)$(DATADIR)/seccomp $(DESTDIR)$(DATADIR)/kits
	for p in $(PROFILES); do install -m 0644 $$p $(DESTDIR)$(DATADIR)/seccomp/; done
	# the installed kits take no workspace of their own: the clone's is kits/..,
	# which here would be $(DATADIR) (give one with --workspace DIR)
	for k in kits/*.yaml; do sed 's|^workspace: \.\.$$|# workspace: none here; give one with kit run --workspace DIR|' $$k \
		>$(DESTDIR)$(DATADIR)/kits/$${k##*/} && chmod 0644 $(DESTDIR)$(DATADIR)/kits/$${k##*/}; done
	install -m 0644 kits/kit.schema.json $(DESTDIR)$(DATADIR)/kits/
	for m in man/*.[0-9]; do sec=$${m##*.}; install -D -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$sec/$$(basename $$m); done
	install -D -m 0644 completions/agentbox.bash $(DESTDIR)$(BASHCOMPDIR)/agentbox
	install -D -m 0644 completions/_agentbox $(DESTDIR)$(ZSHCOMPDIR)/_agentbox

# ---- the Debian package (debian/; README "Install") ----------------------------
# dpkg-buildpackage runs `make clean` in the tree it builds and writes its
# results beside it, so it builds a copy of the clone's files (tracked and
# new, not ignored) in DEB_BUILD (build/deb): nothing is written outside the
# clone, and the working tree's own build is left alone. The .deb goes to
# DEB_OUT (here) and is checked with lintian when that is installed
# (LINTIAN=no skips it). The outer make's variables and the test build's
# (TEST_HOOKS, SANITIZE) do not reach the package's build.
DEB_ARCH  := $(shell dpkg --print-architecture 2>/dev/null)
DEB       := agentbox_$(VERSION)_$(DEB_ARCH).deb
DEB_BUILD ?= build/deb
DEB_OUT   ?= .
LINTIAN   ?= yes
.PHONY: deb
deb:
	@test "$$(dpkg-parsechangelog -l debian/changelog -SVersion)" = "$(VERSION)" || \
		{ echo "make deb: debian/changelog's version is not $(VERSION) (the Makefile's VERSION)" >&2; exit 1; }
	scripts/install-deps.sh deb
	rm -rf $(DEB_BUILD) && mkdir -p $(DEB_BUILD)/agentbox-$(VERSION)
	git ls-files -z --cached --others --exclude-standard | \
		tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C $(DEB_BUILD)/agentbox-$(VERSION)
	cd $(DEB_BUILD)/agentbox-$(VERSION) && \
		env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u TEST_HOOKS -u SANITIZE AGENTBOX_COMMIT=$(COMMIT) \
		DEB_BUILD_OPTIONS="$${DEB_BUILD_OPTIONS:-parallel=$$(nproc)}" \
		dpkg-buildpackage -b -us -uc --no-sign >../build.log 2>&1 || \
		{ tail -n 30 ../build.log >&2; echo "make deb: dpkg-buildpackage failed ($(DEB_BUILD)/build.log)" >&2; exit 1; }
	cp $(DEB_BUILD)/$(DEB) $(DEB_OUT)/$(DEB)
	if [ "$(LINTIAN)" = yes ] && command -v lintian >/dev/null; then \
		lintian --fail-on error,warning $(DEB_OUT)/$(DEB); fi
	@echo "make deb: $(DEB_OUT)/$(DEB)"

clean:
	rm -f agentbox agentbox-gateway $(OBJS) $(GW_OBJS) $(UNIT_BINS) tests/helper/abtest tests/helper/prober tests/helper/netprobe

# ---- build flags --------------------------------------------------------------
# Objects remember what they were built with: `make SANITIZE=address,undefined`
# after a plain build (or the other way round) rebuilds them all.
FLAGS_ID := $(CC) | $(SANITIZE) | $(CFLAGS) | $(LDFLAGS) | $(WERROR) | $(STATIC_DEPS) | $(TEST_HOOKS)
FLAGS_STAMP := build/flags
# (make deb builds elsewhere: this tree's stamps stay as its last build left them)
ifneq ($(MAKECMDGOALS),deb)
$(shell mkdir -p build; echo "$(FLAGS_ID)" | cmp -s - $(FLAGS_STAMP) || echo "$(FLAGS_ID)" > $(FLAGS_STAMP))
endif
$(OBJS) $(GW_OBJS) agentbox agentbox-gateway $(UNIT_BINS) tests/netfilter/egress-driver tests/netfilter/gateway-driver: $(FLAGS_STAMP)
# `agentbox --version` names the commit it was built from: main.o follows HEAD.
COMMIT_STAMP := build/commit
ifneq ($(MAKECMDGOALS),deb)
$(shell echo "$(COMMIT)" | cmp -s - $(COMMIT_STAMP) || echo "$(COMMIT)" > $(COMMIT_STAMP))
endif
runtime/cli/main.o: $(COMMIT_STAMP)

# Under sanitizers every run of the runtime also checks for leaks, and an
# undefined-behaviour report stops it (tests see the failure).
# (gcc's -Wformat-truncation sees null format strings in the sanitizers' extra
# paths: a false alarm there, so not an error)
ifneq ($(SANITIZE),)
export ASAN_OPTIONS ?= detect_leaks=1:abort_on_error=0:exitcode=23:print_summary=1
export UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1
ALL_CFLAGS += -Wno-error=format-truncation
endif

# ---- fuzzing (tests/fuzz/, tests/README.md "Fuzzing") ---------------------------
# The project's objects rebuilt with clang, libFuzzer and ASan/UBSan under
# build/fuzz/ (the normal build is untouched); one binary per tests/fuzz/fuzz_*.c.
FUZZ_CC      ?= clang
FUZZ_DIR     := build/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=gnu11 -g -O1 -Wall -Wextra $(WERROR) -Wno-unused-parameter -D_GNU_SOURCE \
	-DAGENTBOX_VERSION='"$(VERSION)"' -DAGENTBOX_COMMIT='"$(COMMIT)"' $(PKG_CFLAGS) $(FUZZ_SAN)
FUZZ_OBJS    := $(patsubst %.c,$(FUZZ_DIR)/%.o,$(filter-out runtime/cli/main.c,$(SRCS)))
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 7
FUZZ_SMOKE_JOBS ?= 2
FUZZ_SMOKE_SEED ?= 1

.PHONY: fuzz-build fuzz-smoke fuzz-replay
.SECONDARY: $(FUZZ_OBJS)
$(FUZZ_DIR)/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(call layer_inc,$<) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_DIR)/seccomp-profiles/profiles_embed.o: $(PROFILES)

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_OBJS)
	$(FUZZ_CC) $(INC_ALL) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) $(PKG_LIBS) \
		$(if $(filter $(FUZZ_DIR)/fuzz_gateway_h1 $(FUZZ_DIR)/fuzz_gateway_resp,$@),-lhttp_parser)
$(FUZZ_DIR)/fuzz_gateway_h1 $(FUZZ_DIR)/fuzz_gateway_resp $(FUZZ_DIR)/fuzz_gateway_scan: $(GW_FUZZ_SRCS) \
	$(wildcard netfilter/gateway/*.h) $(wildcard tests/fuzz/gateway_*.h)

fuzz-build: $(FUZZ_BINS)

# Each target for FUZZ_SECONDS; a crash is copied to tests/fuzz/regressions/TARGET/.
fuzz: fuzz-build
	tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# CI: every target for a few seconds, two at a time (about a minute), from a
# fixed seed so that a run can be repeated; `make fuzz` explores from new ones.
fuzz-smoke: fuzz-build
	FUZZ_SEED=$(FUZZ_SMOKE_SEED) FUZZ_JOBS=$(FUZZ_SMOKE_JOBS) tests/fuzz/run.sh $(FUZZ_SMOKE_SECONDS) $(FUZZ_TARGETS)

# The regression inputs and seed corpus through a plain (non-libFuzzer) build;
# also part of `make unit` as tests/unit/test_fuzz_regressions.
tests/unit/test_fuzz_regressions: $(wildcard tests/fuzz/*.c tests/fuzz/*.h)
fuzz-replay: tests/unit/test_fuzz_regressions
	./tests/unit/test_fuzz_regressions
