#!/usr/bin/env bash
# Builds tether-host and installs it as the native-messaging host of the Tether extension for
# Chrome, Chromium, Edge and Brave, with its config. Safe to run again.
#   scripts/install.sh --relay ws://127.0.0.1:17800 --client-id ID --token-file FILE [--browser chrome] [...]
# Any flag of `tether-host install` may be given; the extension id defaults to the one fixed by
# extension/manifest.json.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p tether-host
mkdir -p "${TETHER_BIN_DIR:-$HOME/.local/bin}"
bin="${TETHER_BIN_DIR:-$HOME/.local/bin}/tether-host"
install -m 0755 target/release/tether-host "$bin"
args=("$@")
if [[ " ${args[*]} " != *" --extension-id "* ]]; then
  args+=(--extension-id eccdmegnppddiconemhgfcncpfpmdggp)
fi
"$bin" install "${args[@]}"
echo "Installed $bin. Now load $(pwd)/extension in chrome://extensions (Developer mode, Load unpacked)."
