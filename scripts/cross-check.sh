#!/usr/bin/env bash
# The desktops a person's Chrome runs on, checked from Linux: every crate with clippy for
# Windows (gnu and msvc) and macOS (x86_64 and aarch64), then tether-host.exe built for
# windows-gnu and run under Wine (host/tests/under_wine.rs). Installs what it needs: the
# targets (rustup), mingw-w64 and Wine (Debian), zig as the C compiler for MSVC's and macOS'
# C code (PyPI's ziglang). README's "Platforms" says what is built and what is tested where.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(x86_64-pc-windows-gnu x86_64-pc-windows-msvc x86_64-apple-darwin aarch64-apple-darwin)
crates=(-p tether-protocol -p tether-os -p tether-mcp -p tether-host -p tether-relay)

rustup target add "${targets[@]}" >/dev/null
missing=()
command -v x86_64-w64-mingw32-gcc >/dev/null || missing+=(mingw-w64)
[ -x /usr/lib/wine/wine64 ] || command -v wine64 >/dev/null || missing+=(wine64)
if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
python3 -c 'import ziglang' 2>/dev/null || python3 -m pip install -q ziglang

# zig cc as the C compiler for the targets without a Debian cross compiler. It takes its own
# -target, so cc-rs's --target is dropped. MSVC's C (ring's, SQLite's) is compiled against
# MinGW's headers: the x64 calling convention is the same, and a check links nothing.
wrappers="$PWD/target/cross-cc"
mkdir -p "$wrappers"
wrap() { # NAME ZIG-COMMAND...
  cat >"$wrappers/$1" <<WRAPPER
#!/bin/sh
for a in "\$@"; do shift; case "\$a" in --target=*) ;; *) set -- "\$@" "\$a" ;; esac; done
exec python3 -m ziglang ${*:2} "\$@"
WRAPPER
  chmod +x "$wrappers/$1"
}
wrap cc-msvc cc -target x86_64-windows-gnu
wrap lib-msvc lib
wrap cc-macos-x86_64 cc -target x86_64-macos-none
wrap cc-macos-aarch64 cc -target aarch64-macos-none
wrap ar ar
export CC_x86_64_pc_windows_msvc="$wrappers/cc-msvc" AR_x86_64_pc_windows_msvc="$wrappers/lib-msvc"
export CC_x86_64_apple_darwin="$wrappers/cc-macos-x86_64" AR_x86_64_apple_darwin="$wrappers/ar"
export CC_aarch64_apple_darwin="$wrappers/cc-macos-aarch64" AR_aarch64_apple_darwin="$wrappers/ar"

for target in "${targets[@]}"; do
  echo "== clippy for $target" >&2
  cargo clippy --target "$target" "${crates[@]}" -- -D warnings
done

echo "== tether-host.exe under Wine" >&2
cargo build --target x86_64-pc-windows-gnu -p tether-host --bin tether-host
exe_dir="$PWD/target/x86_64-pc-windows-gnu/debug"
# Wine 8 has no bcryptprimitives.dll, which Rust's std needs: a stand-in beside the .exe.
x86_64-w64-mingw32-gcc -shared -O2 -o "$exe_dir/bcryptprimitives.dll" scripts/wine/bcryptprimitives.c -ladvapi32
# Debian's 64-bit-only Wine is /usr/lib/wine/wine64 (its `wine` wants the 32-bit half too).
TETHER_WINE="$(command -v wine64 || echo /usr/lib/wine/wine64)" TETHER_WINE_HOST="$exe_dir/tether-host.exe" \
  cargo test -p tether-host --test under_wine -- --ignored
