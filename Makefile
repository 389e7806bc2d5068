# Makefile: builds egg, its unit tests and fuzz targets; runs the test suite.
#   make                       build build/egg
#   make test                  run the whole suite (no GPU, no network needed)
#   make SANITIZE=address,undefined test
#   make install PREFIX=/usr/local
#   make fuzz                  libFuzzer targets (needs clang)

VERSION := 0.1.0
PREFIX ?= /usr/local
CC ?= cc
PKGS := libcurl jansson sqlite3 libcrypto

ifneq ($(SANITIZE),)
BUILD ?= build-san
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT := -O1
else
BUILD ?= build
SANFLAGS :=
OPT := -O2
endif

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wformat=2 -Wno-format-nonliteral -Wpointer-arith -Wvla -Wundef
CFLAGS ?= $(OPT) -g
ALL_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(CFLAGS) $(WARN) $(SANFLAGS) -DEGG_VERSION='"$(VERSION)"' \
	$(shell pkg-config --cflags $(PKGS)) -MMD -MP
LIBS := $(shell pkg-config --libs $(PKGS)) -lpthread -lm
LDFLAGS += $(SANFLAGS)

LIB_SRC := $(filter-out src/cli/main.c,$(wildcard src/*/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(BUILD)/src/cli/main.o
UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_OBJ := $(UNIT_SRC:%.c=$(BUILD)/%.o)
FUZZ_SRC := $(filter-out tests/fuzz/driver.c,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SMOKE := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/%-smoke)

.PHONY: all test unit-test install clean fuzz setup demo
.SECONDARY:
all: $(BUILD)/egg $(BUILD)/egg-unit $(FUZZ_SMOKE)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "CC $<"
	@$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/libegg.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/egg: $(MAIN_OBJ) $(BUILD)/libegg.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/egg-unit: $(UNIT_OBJ) $(BUILD)/libegg.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# Fuzz targets built with a plain driver, for smoke runs inside `make test`.
$(BUILD)/%-smoke: $(BUILD)/tests/fuzz/%.o $(BUILD)/tests/fuzz/driver.o $(BUILD)/libegg.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# Real coverage-guided fuzzing: make fuzz && build-fuzz/fuzz_reply corpus/
fuzz:
	@for f in $(FUZZ_SRC); do \
		n=$$(basename $$f .c); mkdir -p build-fuzz; \
		clang -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -DEGG_VERSION='"$(VERSION)"' \
			$$(pkg-config --cflags $(PKGS)) -o build-fuzz/$$n $$f $(LIB_SRC) $(LIBS) || exit 1; \
	done

test: all
	EGG_BUILD=$(BUILD) bash tests/run.sh

# The main job end to end, offline: a scripted model, the CPU (scripts/demo.sh).
demo: all
	EGG_BIN=$(CURDIR)/$(BUILD)/egg bash scripts/demo.sh $(or $(OUT),egg-demo)

# The worker's package and its subpackages (protocol, program, device): every
# folder under worker/ that holds an __init__.py.
WORKER_PKGS := $(patsubst worker/%/__init__.py,%,$(wildcard worker/egg_worker/__init__.py worker/egg_worker/*/__init__.py))

install: $(BUILD)/egg
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/egg/worker
	install -m 0755 $(BUILD)/egg $(DESTDIR)$(PREFIX)/bin/egg
	install -m 0644 worker/*.py $(DESTDIR)$(PREFIX)/share/egg/worker/
	install -d $(DESTDIR)$(PREFIX)/share/egg/scripts
	install -m 0755 scripts/spool-render.py $(DESTDIR)$(PREFIX)/share/egg/scripts/
	for d in $(WORKER_PKGS); do \
		install -d $(DESTDIR)$(PREFIX)/share/egg/worker/$$d && \
		install -m 0644 worker/$$d/*.py $(DESTDIR)$(PREFIX)/share/egg/worker/$$d/ || exit 1; \
	done

setup:
	bash scripts/setup.sh

clean:
	rm -rf build build-san build-fuzz

-include $(LIB_OBJ:.o=.d) $(MAIN_OBJ:.o=.d) $(UNIT_OBJ:.o=.d)
