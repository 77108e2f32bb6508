#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian bookworm machine (run as root, or with sudo available).
# Installs only what is missing, from Debian's archive and the npm registry; nothing else is reached.
#
#   scripts/setup.sh            everything the build and the tests need
#   scripts/setup.sh --python   also the Python stack for the model zoo and training (torch, onnx, xgboost)
#   scripts/setup.sh --browser  also Chromium for the browser tests and measurements
set -euo pipefail
cd "$(dirname "$0")/.."

want_python=0
want_browser=0
for arg in "$@"; do
  case "$arg" in
    --python) want_python=1 ;;
    --browser) want_browser=1 ;;
    --all) want_python=1; want_browser=1 ;;
    *) echo "setup.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# Build and test toolchain. python3-onnx carries onnx.proto, which the build compiles with protoc; esbuild
# minifies the site's JS and CSS (web/build.mjs).
packages=(cmake make g++ clang libclang-rt-14-dev emscripten esbuild
          libprotobuf-dev protobuf-compiler nlohmann-json3-dev catch2 libeigen3-dev
          python3-onnx python3-numpy dpkg-dev ca-certificates xz-utils)
if [ "$want_python" = 1 ]; then
  packages+=(python3-torch python3-torchvision python3-xgboost python3-pandas python3-scipy)
fi
if [ "$want_browser" = 1 ]; then
  packages+=(chromium)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# protobuf's source for the WebAssembly build of libprotobuf-lite: Debian's own tarball, checked by sha256.
PROTOBUF_TARBALL=protobuf_3.21.12.orig.tar.gz
PROTOBUF_SHA256=930c2c3b5ecc6c9c12615cf5ad93f1cd6e12d0aba862b572e076259970ac3a53
cache="${PERFCARD_CACHE:-$HOME/.cache/perfcard}"
mkdir -p "$cache"
have_ok() { [ -f "$cache/$PROTOBUF_TARBALL" ] && echo "$PROTOBUF_SHA256  $cache/$PROTOBUF_TARBALL" | sha256sum -c --status; }
if ! have_ok; then
  echo "setup: fetching protobuf source from Debian's source archive"
  # deb822 with the same Signed-By as Debian's own entry: apt refuses two different keys for one source.
  list=/etc/apt/sources.list.d/perfcard-protobuf-src.sources
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    | $SUDO tee "$list" >/dev/null
  cleanup() { $SUDO rm -f "$list"; }
  trap cleanup EXIT
  $SUDO apt-get update -qq
  tmp=$(mktemp -d)
  chmod 777 "$tmp"  # apt's unprivileged _apt user writes the download there
  (cd "$tmp" && apt-get source --download-only protobuf >/dev/null)
  cp "$tmp/$PROTOBUF_TARBALL" "$cache/$PROTOBUF_TARBALL"
  rm -rf "$tmp"
  cleanup; trap - EXIT
  $SUDO apt-get update -qq
  if ! have_ok; then
    echo "setup: $PROTOBUF_TARBALL does not match sha256 $PROTOBUF_SHA256; refusing to build with it" >&2
    rm -f "$cache/$PROTOBUF_TARBALL"
    exit 1
  fi
fi
echo "setup: ok (protobuf source at $cache/$PROTOBUF_TARBALL)"
