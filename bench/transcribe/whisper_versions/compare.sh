#!/usr/bin/env bash
# whisper.cpp 1.8.3 (what the registry's whisper-rs-sys 0.15.0 bundles) against 1.8.5 (what
# yazses builds through whisper-sys/, and what pywhispercpp 1.5.1 ships): the same C program
# linked against 1.8.3 built here (static, Release, OpenMP, GGML_NATIVE), against the
# libraries of yazses' own release build, and against pywhispercpp's wheel libraries.
# Needs a release build of yazses, a venv with pywhispercpp, and whisper-rs-sys 0.15.0's
# sources in cargo's registry (fetch them once: `cargo new /tmp/w && cd /tmp/w &&
# cargo add whisper-rs-sys@=0.15.0 && cargo fetch`).
# Usage: bash bench/transcribe/whisper_versions/compare.sh MODEL.bin AUDIO.wav VENV [ROUNDS]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
model="$1" audio="$2" venv="$3" rounds="${4:-2}"
work="${TMPDIR:-/tmp}/yazses-whisper-versions"
mkdir -p "$work"

src183=$(ls -d ~/.cargo/registry/src/*/whisper-rs-sys-0.15.0/whisper.cpp 2>/dev/null | head -1)
[ -n "$src183" ] || { echo "whisper-rs-sys 0.15.0 is not in cargo's registry; see the header" >&2; exit 1; }
if [ ! -f "$work/build183/src/libwhisper.a" ]; then
  cmake -S "$src183" -B "$work/build183" -DBUILD_SHARED_LIBS=OFF -DWHISPER_BUILD_EXAMPLES=OFF \
    -DWHISPER_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release -DGGML_METAL=OFF >/dev/null
  cmake --build "$work/build183" -j"$(nproc)" --target whisper >/dev/null
fi
# yazses' release build: the whisper-sys output whose tree is 1.8.5.
ours=""
for out in "$root"/target/release/build/whisper-rs-sys-*/out; do
  grep -qs 'project("whisper.cpp" VERSION 1.8.5)' "$out/whisper.cpp/CMakeLists.txt" && ours=$out
done
[ -n "$ours" ] || { echo "no 1.8.5 release build: cargo build --release -p yazses" >&2; exit 1; }
src185="$ours/whisper.cpp"
static() { echo "$1/libwhisper.a $2/libggml.a $2/libggml-cpu.a $2/libggml-base.a -lstdc++ -lgomp -lm -lpthread"; }
b="$work/build183"
# shellcheck disable=SC2046
gcc -O2 -Wno-deprecated-declarations -I"$src183/include" -I"$src183/ggml/include" "$here/encode.c" \
  -o "$work/encode-1.8.3" $(static "$b/src" "$b/ggml/src")
# shellcheck disable=SC2046
gcc -O2 -Wno-deprecated-declarations -I"$src185/include" -I"$src185/ggml/include" "$here/encode.c" \
  -o "$work/encode-yazses" $(static "$ours/lib" "$ours/lib")
site=$(ls -d "$venv"/lib/python3*/site-packages | head -1)
gcc -O2 -Wno-deprecated-declarations -I"$src185/include" -I"$src185/ggml/include" "$here/encode.c" \
  -o "$work/encode-wheel" -L"$site" -l:libwhisper.so.1 -Wl,-rpath,"$site"
for _ in $(seq "$rounds"); do
  for v in 1.8.3 yazses wheel; do
    printf '%-6s ' "$v"
    "$work/encode-$v" "$model" "$audio" 3 2>&1 | grep -E "encode time|decode time|total time" \
      | sed 's/whisper_print_timings: *//' | tr -s ' ' | tr '\n' ' '
    echo
  done
done
