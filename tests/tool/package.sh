#!/usr/bin/env bash
# cmake --install and building against what it installs: the files are
# there, the prefix works wherever it is moved, pkg-config builds a program
# with libdmlc.so and one with libdmlc.a, and examples/aot builds with
# find_package(dmlc) and dmlc_add_library() (which runs dmlc compile) and
# with its pkg-config Makefile. Every program is run and its output checked.
set -euo pipefail
# shellcheck source=common.bash
source "$(dirname "$0")/common.bash" package "$@"

# The build tree is the one the dmlc binary was built in (BUILD/bin/dmlc).
BUILD=$(dirname "$(dirname "$DMLC")")
if [ ! -f "$BUILD/CMakeCache.txt" ] || [ ! -f "$BUILD/cmake_install.cmake" ]; then
  echo "tool.package: FAIL: $DMLC is not in a CMake build tree (no $BUILD/CMakeCache.txt)"
  exit 1
fi
# The install dirs as configured (GNUInstallDirs: empty means the default).
cache_var() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
LIBDIR=$(cache_var CMAKE_INSTALL_LIBDIR)
INCLUDEDIR=$(cache_var CMAKE_INSTALL_INCLUDEDIR)
BINDIR=$(cache_var CMAKE_INSTALL_BINDIR)
DATAROOTDIR=$(cache_var CMAKE_INSTALL_DATAROOTDIR)
MANDIR=$(cache_var CMAKE_INSTALL_MANDIR)
MANDIR=${MANDIR:-${DATAROOTDIR:-share}/man}
CC=${CC:-cc}
# uses_installed_libdmlc PROGRAM: the dynamic loader finds libdmlc.so for
# PROGRAM in the installed prefix, not in the build tree.
uses_installed_libdmlc() {
  local lib
  lib=$(ldd "$1" | sed -n 's/^[[:space:]]*libdmlc\.so[^ ]* => \([^ ]*\) .*/\1/p')
  [ -n "$lib" ] && [[ "$(realpath "$lib")" == "$(realpath "$P")"/* ]]
}
# Consumers are built warning-free. (A sanitized libdmlc needs its runtime
# in them: the .pc files and the CMake targets add it.)
WFLAGS="-std=c11 -Wall -Wextra -Werror"

# Installed into one place and moved to another: nothing may depend on
# the prefix given at install time.
if ! cmake --install "$BUILD" --prefix "$TMP/staged" >"$TMP/install.log" 2>&1; then
  fail "cmake --install $BUILD: $(tail -5 "$TMP/install.log")"
  finish
fi
mv "$TMP/staged" "$TMP/prefix"
P=$TMP/prefix
pass

for f in "$LIBDIR/libdmlc.so" "$LIBDIR/libdmlc.a" "$INCLUDEDIR/dmlc/dmlc.h" \
  "$INCLUDEDIR/dmlc/directml.h" "$BINDIR/dmlc" "$MANDIR/man1/dmlc.1" \
  "$LIBDIR/pkgconfig/dmlc.pc" "$LIBDIR/pkgconfig/dmlc-static.pc" \
  "$LIBDIR/cmake/dmlc/dmlcConfig.cmake" "$LIBDIR/cmake/dmlc/dmlcConfigVersion.cmake" \
  "$LIBDIR/cmake/dmlc/dmlcTargets.cmake" "$LIBDIR/cmake/dmlc/dmlcAddLibrary.cmake"; do
  check "installed: $f" [ -f "$P/$f" ]
done
check "installed: $LIBDIR/libdmlc.so.0 (the soname)" [ -L "$P/$LIBDIR/libdmlc.so.0" ]

# The installed dmlc runs from the moved prefix (it finds libdmlc.so there
# through $ORIGIN, not in the build tree) and compiles.
expect_run "installed dmlc --version" 0 --out '^dmlc [0-9]+\.[0-9]+\.[0-9]+$' -- "$P/$BINDIR/dmlc" --version
check "installed dmlc loads the installed libdmlc.so" uses_installed_libdmlc "$P/$BINDIR/dmlc"
if command -v groff >/dev/null; then
  expect_run "man page renders without warnings" 0 --out 'dmlc compile' -- \
    groff -man -Tascii -ww "$P/$MANDIR/man1/dmlc.1"
  check "man page: groff printed no warnings" [ ! -s "$TMP/err" ]
fi

# libdmlc.a defines the public API and nothing else: its internal symbols
# are local, as libdmlc.so's are hidden.
nm -g --defined-only "$P/$LIBDIR/libdmlc.a" | awk 'NF == 3 { print $3 }' | sort >"$TMP/a.syms"
nm -D --defined-only "$P/$LIBDIR/libdmlc.so" | awk '{ sub(/@.*/, "", $3); print $3 }' | sort >"$TMP/so.syms"
if [ -s "$TMP/a.syms" ] && diff -q "$TMP/a.syms" "$TMP/so.syms" >/dev/null; then
  pass
else
  fail "libdmlc.a's global symbols differ from libdmlc.so's exports:" \
    "$(diff "$TMP/a.syms" "$TMP/so.syms" | head -10)"
fi

# ---- pkg-config ----
export PKG_CONFIG_PATH=$P/$LIBDIR/pkgconfig
expect_run "pkg-config --modversion dmlc" 0 --out '^[0-9]+\.[0-9]+\.[0-9]+$' -- pkg-config --modversion dmlc
expect_run "pkg-config: the include dir is the installed one" 0 --out "^-I$P/" -- \
  pkg-config --cflags-only-I dmlc
expect_run "pkg-config --static dmlc: what libdmlc.a needs" 0 --out '-ldmlc' --out '-lm' \
  --out '-lpthread' -- pkg-config --static --libs dmlc
check "pkg-config: dmlc.pc and dmlc-static.pc list the same dependencies" \
  [ "$(sed -n 's/^Libs.private: //p' "$PKG_CONFIG_PATH/dmlc.pc")" = \
  "$(sed -n 's/^Libs.private: //p' "$PKG_CONFIG_PATH/dmlc-static.pc")" ]
expect_run "pkg-config --variable=dmlc: the installed dmlc" 0 --out "^$P/.*dmlc$" -- \
  pkg-config --variable=dmlc dmlc
check "pkg-config's dmlc runs" [ -x "$(cat "$TMP/out")" ]

read -ra cflags <<<"$(pkg-config --cflags dmlc)"
read -ra libs <<<"$(pkg-config --libs dmlc)"
read -ra static_libs <<<"$(pkg-config --static --libs dmlc-static)"
libdir=$(pkg-config --variable=libdir dmlc)
# shellcheck disable=SC2086  # WFLAGS is a list of flags
if $CC $WFLAGS "${cflags[@]}" "$SRC/examples/embed.c" "${libs[@]}" -Wl,-rpath,"$libdir" \
  -o "$TMP/embed_shared" 2>"$TMP/err"; then
  pass
  expect_run "pkg-config dmlc: the program runs" 0 --out '^1 2 1$' -- "$TMP/embed_shared"
  check "pkg-config dmlc: linked with the installed libdmlc.so" \
    uses_installed_libdmlc "$TMP/embed_shared"
else
  fail "pkg-config dmlc: cc: $(head -20 "$TMP/err")"
fi
# libdmlc.a with only pkg-config's list of what it needs (Libs.private):
# the link proves the list complete.
# shellcheck disable=SC2086
if $CC $WFLAGS "${cflags[@]}" "$SRC/examples/embed.c" "${static_libs[@]}" \
  -o "$TMP/embed_static" 2>"$TMP/err"; then
  pass
  expect_run "pkg-config --static dmlc-static: the program runs" 0 --out '^1 2 1$' -- \
    "$TMP/embed_static"
  check "pkg-config --static dmlc-static: no libdmlc.so needed" \
    bash -c "! readelf -d '$TMP/embed_static' | grep -q 'NEEDED.*libdmlc'"
else
  fail "pkg-config --static dmlc-static: cc: $(head -20 "$TMP/err")"
fi
# The header compiles as C++ too.
if command -v c++ >/dev/null; then
  check "dmlc.h compiles as C++" c++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only \
    "${cflags[@]}" -x c++ - <<<'#include <dmlc/dmlc.h>'
fi

# examples/aot/Makefile: dmlc compile through pkg-config's dmlc, and the
# two links above.
mkdir -p "$TMP/make"
if make -C "$TMP/make" -f "$SRC/examples/aot/Makefile" CC="$CC" CFLAGS="-O2 $WFLAGS" \
  >"$TMP/make.log" 2>&1; then
  pass
  expect_run "Makefile: aot_hardmax" 0 --out '^0 0 0 1 0 1 0 0$' -- "$TMP/make/aot_hardmax"
  expect_run "Makefile: embed" 0 --out '^1 2 1$' -- "$TMP/make/embed"
  expect_run "Makefile: embed_static" 0 --out '^1 2 1$' -- "$TMP/make/embed_static"
else
  fail "examples/aot/Makefile: $(tail -20 "$TMP/make.log")"
fi

# ---- CMake: find_package(dmlc), dmlc_add_library ----
# cmake_build DIR SOURCE-DIR: configure and build; the log in DIR.log, and
# on standard error when either fails.
cmake_build() {
  if cmake -S "$2" -B "$1" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$WFLAGS" >"$1.log" 2>&1 &&
    cmake --build "$1" -j2 >>"$1.log" 2>&1; then
    return 0
  fi
  cat "$1.log" >&2
  return 1
}
if cmake_build "$TMP/cmake" "$SRC/examples/aot" 2>/dev/null; then
  pass
  expect_run "CMake: aot_hardmax (dmlc_add_library)" 0 --out '^0 0 0 1 0 1 0 0$' -- \
    "$TMP/cmake/aot_hardmax"
  check "CMake: aot_hardmax needs no libdmlc" \
    bash -c "! readelf -d '$TMP/cmake/aot_hardmax' | grep -q 'NEEDED.*libdmlc'"
  check "CMake: dmlc_add_library wrote hardmax.h" [ -f "$TMP/cmake/hardmax.h" ]
  expect_run "CMake: embed (dmlc::dmlc)" 0 --out '^1 2 1$' -- "$TMP/cmake/embed"
  expect_run "CMake: embed_static (dmlc::dmlc_static)" 0 --out '^1 2 1$' -- \
    "$TMP/cmake/embed_static"
  check "CMake: embed_static needs no libdmlc.so" \
    bash -c "! readelf -d '$TMP/cmake/embed_static' | grep -q 'NEEDED.*libdmlc'"
else
  fail "examples/aot with CMake: $(tail -30 "$TMP/cmake.log")"
fi

# dmlc_add_library on bad input: a message, at configure or build time.
mkdir -p "$TMP/bad"
cat >"$TMP/bad/broken.dmlir" <<'GRAPH'
graph @broken(%x: f32[4]) -> (u32[1]) {
  %0 = argmx %x {axes = [0]} : u32[1]
  return %0
}
GRAPH
bad_project() { # BODY: a project whose CMakeLists.txt ends with BODY
  printf 'cmake_minimum_required(VERSION 3.20)\nproject(bad C)\nfind_package(dmlc REQUIRED)\n%s\n' \
    "$1" >"$TMP/bad/CMakeLists.txt"
  rm -rf "$TMP/bad-build"
}
bad_project 'dmlc_add_library(m SOURCE broken.dmlir NAME 9lives)'
expect_run "dmlc_add_library: NAME not a C identifier" 1 --err "NAME '9lives' is not a C identifier" -- \
  cmake_build "$TMP/bad-build" "$TMP/bad"
bad_project 'dmlc_add_library(m-1 SOURCE broken.dmlir)'
expect_run "dmlc_add_library: a target name that is no C identifier needs NAME" 1 \
  --err "the target name 'm-1' is not a C identifier" -- cmake_build "$TMP/bad-build" "$TMP/bad"
bad_project 'dmlc_add_library(m NAME m)'
expect_run "dmlc_add_library: no SOURCE" 1 --err "SOURCE FILE is required" -- \
  cmake_build "$TMP/bad-build" "$TMP/bad"
bad_project 'dmlc_add_library(m SOURCE broken.dmlir BOGUS 1)'
expect_run "dmlc_add_library: unknown argument" 1 --err "unexpected arguments 'BOGUS;1'" -- \
  cmake_build "$TMP/bad-build" "$TMP/bad"
bad_project 'dmlc_add_library(m SOURCE broken.dmlir)'
expect_run "dmlc_add_library: a broken graph fails the build with dmlc's message" 1 \
  --err "broken.dmlir:2:8: error: unknown op 'argmx'" -- cmake_build "$TMP/bad-build" "$TMP/bad"

finish
