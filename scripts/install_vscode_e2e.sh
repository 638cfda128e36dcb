#!/usr/bin/env bash
# Installs what the VS Code end-to-end tests need (DESIGN §13; shared/reference/vscode-e2e):
# Debian's chromium (+ the build prerequisites of code-server's native modules), the
# extension's npm packages, and code-server 4.100.3 + playwright-core.
# Idempotent and quick when already installed; guarded by locks so two runs don't install at once.
#
# code-server and playwright-core do not change with this repository: they are installed once
# per user, in the cache that holds the embedded model (REMORA_CACHE_DIR, else
# ~/.cache/remora), and clients/vscode/.e2e links to them. A fresh clone then does not build
# code-server's native modules again (~30 s of CPU, on the test suite's critical path). An
# install cut short is never used: `.complete` is written last, and a folder without it is
# installed again. (A clone whose .e2e is a folder from before keeps using it.)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
ext="$here/clients/vscode"
e2e="$ext/.e2e"
versions="code-server@4.100.3 playwright-core@1.65.1"
cache="${REMORA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/remora}/vscode-e2e"
shared="$cache/code-server-4.100.3+playwright-core-1.65.1"
mkdir -p "$cache"
exec 9>"$cache/.install.lock"
flock 9

need_apt=()
for pkg in chromium ripgrep libkrb5-dev build-essential pkg-config; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$pkg")
done
if ((${#need_apt[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if [[ ! -f "$ext/node_modules/.package-lock.json" || "$ext/package-lock.json" -nt "$ext/node_modules/.package-lock.json" ]]; then
  (cd "$ext" && npm ci --no-audit --no-fund --loglevel=error)
fi

if [[ -d "$e2e" && ! -L "$e2e" && -x "$e2e/node_modules/.bin/code-server" && -d "$e2e/node_modules/playwright-core" ]]; then
  shared="$e2e"  # installed in this clone before the shared cache
elif [[ ! -f "$shared/.complete" ]]; then
  rm -rf "$shared"
  mkdir -p "$shared"
  # @vscode/ripgrep's postinstall downloads from GitHub: pre-seed its cache with Debian's rg.
  rg_cache="$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-1.15.11"
  mkdir -p "$rg_cache"
  tarball="$rg_cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
  if [[ ! -f "$tarball" ]]; then
    tmp="$(mktemp -d)"; cp "$(command -v rg)" "$tmp/rg"; tar -C "$tmp" -czf "$tarball" rg; rm -rf "$tmp"
  fi
  echo '{"name":"remora-vscode-e2e","private":true}' >"$shared/package.json"
  # shellcheck disable=SC2086  # $versions is two words on purpose
  (cd "$shared" && npm_config_unsafe_perm=true npm_config_yes=true \
    npm install --no-audit --no-fund --loglevel=error $versions)
  touch "$shared/.complete"
fi
if [[ "$shared" != "$e2e" ]]; then
  rm -rf "$e2e"  # an empty or half-installed folder, or an old link
  ln -s "$shared" "$e2e"
fi
echo "vscode e2e: installed"
