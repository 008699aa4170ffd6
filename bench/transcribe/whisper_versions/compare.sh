#!/usr/bin/env bash
# whisper.cpp 1.8.3 (what whisper-rs-sys 0.15 builds for yazses) against 1.8.5 (what
# pywhispercpp 1.5.1 ships), the same C program linked against each, built the same way
# (static, Release, OpenMP, GGML_NATIVE), then against pywhispercpp's own wheel libraries.
# Needs a release build of yazses (for the 1.8.3 libraries) and a venv with pywhispercpp.
# Usage: bash bench/transcribe/whisper_versions/compare.sh MODEL.bin AUDIO.wav VENV [ROUNDS]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
model="$1" audio="$2" venv="$3" rounds="${4:-2}"
work="${TMPDIR:-/tmp}/yazses-whisper-versions"
mkdir -p "$work"

lib183=$(dirname "$(ls "$root"/target/release/build/whisper-rs-sys-*/out/lib/libwhisper.a | head -1)")
src183=$(ls -d ~/.cargo/registry/src/*/whisper-rs-sys-0.15.0/whisper.cpp | head -1)
if [ ! -d "$work/pywhispercpp-1.5.1" ]; then
  "$venv/bin/python" - "$work" <<'PY'
import sys, tarfile, urllib.request
url = "https://files.pythonhosted.org/packages/9f/35/610787a277e177e6b7983277a35a2969c0876b46c0d889bc6a0c4b4ac4a7/pywhispercpp-1.5.1.tar.gz"
path = sys.argv[1] + "/pywhispercpp-1.5.1.tar.gz"
urllib.request.urlretrieve(url, path)
tarfile.open(path).extractall(sys.argv[1])
PY
fi
src185="$work/pywhispercpp-1.5.1/whisper.cpp"
if [ ! -f "$work/build185/src/libwhisper.a" ]; then
  cmake -S "$src185" -B "$work/build185" -DBUILD_SHARED_LIBS=OFF -DWHISPER_BUILD_EXAMPLES=OFF \
    -DWHISPER_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release -DGGML_METAL=OFF >/dev/null
  cmake --build "$work/build185" -j"$(nproc)" --target whisper >/dev/null
fi
b="$work/build185"
static() { echo "$1/libwhisper.a $2/libggml.a $2/libggml-cpu.a $2/libggml-base.a -lstdc++ -lgomp -lm -lpthread"; }
# shellcheck disable=SC2046
gcc -O2 -Wno-deprecated-declarations -I"$src183/include" -I"$src183/ggml/include" "$here/encode.c" \
  -o "$work/encode-1.8.3" $(static "$lib183" "$lib183")
# shellcheck disable=SC2046
gcc -O2 -Wno-deprecated-declarations -I"$src185/include" -I"$src185/ggml/include" "$here/encode.c" \
  -o "$work/encode-1.8.5" $(static "$b/src" "$b/ggml/src")
site=$(ls -d "$venv"/lib/python3*/site-packages | head -1)
gcc -O2 -Wno-deprecated-declarations -I"$src185/include" -I"$src185/ggml/include" "$here/encode.c" \
  -o "$work/encode-wheel" -L"$site" -l:libwhisper.so.1 -Wl,-rpath,"$site"
for _ in $(seq "$rounds"); do
  for v in 1.8.3 1.8.5 wheel; do
    printf '%-6s ' "$v"
    "$work/encode-$v" "$model" "$audio" 3 2>&1 | grep -E "encode time|decode time|total time" \
      | sed 's/whisper_print_timings: *//' | tr -s ' ' | tr '\n' ' '
    echo
  done
done
