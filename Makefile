# agentbox — build, test, install. Plain make + pkg-config.
PREFIX   ?= /usr/local
DESTDIR  ?=
SBINDIR  ?= $(PREFIX)/sbin
MANDIR   ?= $(PREFIX)/share/man
DATADIR  ?= $(PREFIX)/share/agentbox

VERSION  := 0.1.0
COMMIT   := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

PKGS     := libseccomp yajl libcap libmnl libnftnl yaml-0.1
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   := $(shell pkg-config --libs $(PKGS))

CC       ?= cc
CFLAGS   ?= -O2 -g
WERROR   ?= -Werror
SANITIZE ?=
SAN_FLAGS := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer,)
ALL_CFLAGS := -std=gnu11 -Wall -Wextra $(WERROR) -Wno-unused-parameter -D_GNU_SOURCE \
	-fvisibility=hidden -Iruntime -Ioci -Iseccomp-profiles -Inetfilter \
	-DAGENTBOX_VERSION='"$(VERSION)"' -DAGENTBOX_COMMIT='"$(COMMIT)"' \
	$(PKG_CFLAGS) $(SAN_FLAGS) $(CFLAGS)
ALL_LDFLAGS := -Wl,-z,now -Wl,--as-needed $(SAN_FLAGS) $(LDFLAGS)

SRCS     := $(wildcard runtime/*.c oci/*.c seccomp-profiles/*.c netfilter/*.c)
OBJS     := $(SRCS:.c=.o)
LIB_OBJS := $(filter-out runtime/main.o,$(OBJS))
PROFILES := $(wildcard seccomp-profiles/*.json)

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:.c=)

.PHONY: all clean check demo unit integration install man helper fuzz bench
all: agentbox tests/helper/abtest tests/helper/prober

agentbox: $(OBJS)
	$(CC) -o $@ $(OBJS) $(ALL_LDFLAGS) $(PKG_LIBS)

%.o: %.c $(wildcard runtime/*.h oci/*.h seccomp-profiles/*.h netfilter/*.h)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# profiles are embedded with .incbin; rebuild when they change
seccomp-profiles/profiles_embed.o: $(PROFILES)

# The static multi-call helper that goes into every test rootfs.
tests/helper/abtest: tests/helper/abtest.c
	$(CC) -std=gnu11 -O2 -Wall -Wextra $(WERROR) -static -o $@ $<

tests/helper/prober: tests/helper/prober.c
	$(CC) -std=gnu11 -O2 -Wall -Wextra $(WERROR) -static -o $@ $<

tests/netfilter/egress-driver: tests/netfilter/egress-driver.c $(LIB_OBJS)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB_OBJS) $(ALL_LDFLAGS) $(PKG_LIBS)

tests/unit/test_%: tests/unit/test_%.c tests/unit/tap.h $(LIB_OBJS)
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(LIB_OBJS) $(ALL_LDFLAGS) $(PKG_LIBS)

unit: $(UNIT_BINS) tests/helper/prober
	@set -e; for t in $(UNIT_BINS); do echo "# $$t"; ./$$t; done

integration: all
	bats tests/integration

# The README's test command: installs what the tests need, builds, runs everything.
check:
	scripts/install-deps.sh engines
	$(MAKE) all
	tests/run-all.sh

# The README's main job: build, then a sandboxed command from an example kit with
# its egress policy shown working.
demo:
	scripts/install-deps.sh test
	$(MAKE) all
	scripts/demo.sh

install: agentbox
	install -D -m 0755 agentbox $(DESTDIR)$(SBINDIR)/agentbox
	install -d $(DESTDIR)$(DATADIR)/seccomp
	for p in $(PROFILES); do install -m 0644 $$p $(DESTDIR)$(DATADIR)/seccomp/; done
	for m in man/*.[0-9]; do sec=$${m##*.}; install -D -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$sec/$$(basename $$m); done

clean:
	rm -f agentbox $(OBJS) $(UNIT_BINS) tests/helper/abtest tests/helper/prober
