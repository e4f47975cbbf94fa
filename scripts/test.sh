#!/usr/bin/env bash
# Runs the whole test suite: unit tests, and end-to-end tests in a real headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-system.sh
# The MCP tests' client is the official MCP SDK, from npm (tests/mcp-client, its lock file).
if [ ! -d tests/mcp-client/node_modules/@modelcontextprotocol/sdk ]; then
  npm ci --prefix tests/mcp-client --no-audit --no-fund
fi
cargo test --workspace "$@"
