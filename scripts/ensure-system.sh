#!/usr/bin/env bash
# Makes sure what the tests and the demo run beside Tether is installed: a Chromium, and
# nats-server (for a deployment of several relays); installs Debian's packages of what is
# missing (needs root).
set -euo pipefail
missing=()
chromium=""
for candidate in "${TETHER_CHROMIUM:-}" /usr/lib/chromium/chromium /usr/bin/chromium /usr/bin/chromium-browser /usr/bin/google-chrome; do
  if [ -n "$candidate" ] && [ -x "$candidate" ]; then
    chromium="$candidate"
    break
  fi
done
[ -n "$chromium" ] || missing+=(chromium)
if ! command -v nats-server >/dev/null && [ ! -x /usr/sbin/nats-server ]; then
  missing+=(nats-server)
fi
[ "${#missing[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "Missing: ${missing[*]}. Install them (Debian/Ubuntu: sudo apt-get install ${missing[*]}); a Chromium may also be named by TETHER_CHROMIUM." >&2
  exit 1
fi
echo "Installing ${missing[*]} from the distribution's packages..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
