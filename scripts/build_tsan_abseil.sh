#!/usr/bin/env bash
# Builds Debian's own Abseil (the installed libabsl-dev version, with Debian's patches, so the ABI
# and sonames match) under ThreadSanitizer into DIR (default build-tsan/abseil/lib). Why:
# absl::Mutex, which our code and Debian's gRPC synchronise with, lives in the uninstrumented
# libabsl_synchronization.so; TSan cannot see its happens-before edges and reports thousands of
# false races (13,533 in one run of the TSan tests). With these libraries first on
# LD_LIBRARY_PATH (scripts/test.sh --sanitize=thread does it), Debian's gRPC and our code both
# synchronise through an instrumented absl::Mutex. Idempotent: returns at once when DIR is
# complete. Needs the Debian mirror (apt-get source through a temporary deb-src entry), clang-14
# and about 3 minutes on 2 cores.
#
#   scripts/build_tsan_abseil.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(realpath -m "${1:-build-tsan/abseil/lib}")"
version="$(dpkg-query -W -f='${Version}' libabsl-dev)"
if [[ -f "$out/.version" && "$(cat "$out/.version")" == "$version" ]]; then
  echo "build_tsan_abseil: $out has abseil $version"
  exit 0
fi
work="$(mktemp -d /tmp/ibgr-abseil.XXXXXX)"
list=/etc/apt/sources.list.d/ibgr-abseil-src.sources
SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
cleanup() { $SUDO rm -f "$list"; rm -rf "$work"; }
trap cleanup EXIT
$SUDO tee "$list" >/dev/null <<SOURCES
Types: deb-src
URIs: ${IBGR_DEBIAN_MIRROR:-http://deb.debian.org/debian}
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
# Only this list, and without List-Cleanup: apt would otherwise delete every other source's index.
$SUDO apt-get update -qq -o Dir::Etc::sourcelist="$list" -o Dir::Etc::sourceparts=/dev/null \
  -o APT::Get::List-Cleanup=0
(cd "$work" && apt-get source --download-only -qq "abseil=$version" >/dev/null 2>&1)
tar -xzf "$work"/abseil_*.orig.tar.gz -C "$work"
src="$(find "$work" -maxdepth 1 -type d -name 'abseil-*' | head -1)"
tar -xJf "$work"/abseil_*.debian.tar.xz -C "$src"
while read -r p; do
  [[ -z "$p" || "$p" == \#* ]] && continue
  patch -d "$src" -p1 -s <"$src/debian/patches/$p"
done <"$src/debian/patches/series"
CC=clang-14 CXX=clang++-14 cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=OFF \
  "-DCMAKE_CXX_FLAGS=-fsanitize=thread -O1 -g1" "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread" >/dev/null
ninja -C "$work/build" -j "${IBGR_JOBS:-$(nproc)}" >/dev/null
rm -rf "$out" && mkdir -p "$out"
find "$work/build" -name 'libabsl_*.so.*' -exec cp -P {} "$out/" \;
echo "$version" >"$out/.version"
echo "build_tsan_abseil: abseil $version with -fsanitize=thread in $out ($(ls "$out" | grep -c '\.so\.[0-9]*$') libraries)"
