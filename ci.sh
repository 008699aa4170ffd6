#!/usr/bin/env bash
# The checks behind .ci/run, one subcommand each, for running locally:
#   ./ci.sh test       all tests of the host workspace (the README's test command)
#   ./ci.sh nostd      build yazses-core for thumbv6m/thumbv7em with each feature; fail on alloc
#   ./ci.sh fixtures   regenerate fixtures/vad and compare with the committed files
set -euo pipefail
cd "$(dirname "$0")"

case "${1:-test}" in
test)
  cargo test --workspace --locked
  ;;
nostd)
  if grep -rn "extern crate alloc" core-nostd/src; then
    echo "yazses-core must not use alloc" >&2
    exit 1
  fi
  # `std` is a host-only feature (std::time conversions); thumb targets have no std.
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
  ;;
fixtures)
  out=$(mktemp -d)
  python3 bench/vad/speechset.py --set fixtures --out "$out" >/dev/null
  if diff -r "$out" fixtures/vad --exclude expected >/dev/null; then
    echo "fixtures/vad reproduces byte for byte"
  else
    # A different espeak-ng or sox version speaks slightly differently; the committed
    # fixtures stay the reference, so this is a warning, not a failure.
    echo "warning: bench/vad/speechset.py made different fixtures here (espeak-ng $(espeak-ng --version | head -1))"
  fi
  rm -rf "$out"
  ;;
*)
  echo "usage: ./ci.sh test|nostd|fixtures" >&2
  exit 2
  ;;
esac
