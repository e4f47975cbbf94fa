#!/usr/bin/env bash
# Makes sure a Chromium is installed, installing Debian's package when none is (needs root).
set -euo pipefail
for candidate in "${TETHER_CHROMIUM:-}" /usr/lib/chromium/chromium /usr/bin/chromium /usr/bin/chromium-browser /usr/bin/google-chrome; do
  if [ -n "$candidate" ] && [ -x "$candidate" ]; then
    exit 0
  fi
done
if [ "$(id -u)" -ne 0 ]; then
  echo "No Chromium found. Install one (Debian/Ubuntu: sudo apt-get install chromium) or set TETHER_CHROMIUM." >&2
  exit 1
fi
echo "Installing Chromium from the distribution's packages..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
