#!/usr/bin/env bash
# Runs the whole test suite: unit tests, and end-to-end tests in a real headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-chromium.sh
cargo test --workspace "$@"
