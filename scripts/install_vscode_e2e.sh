#!/usr/bin/env bash
# Installs what the VS Code end-to-end tests need (DESIGN §13; shared/reference/vscode-e2e):
# Debian's chromium (+ the build prerequisites of code-server's native modules), the
# extension's npm packages, and code-server 4.100.3 + playwright-core in clients/vscode/.e2e.
# Idempotent and quick when already installed; guarded by a lock so two runs don't install at once.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
ext="$here/clients/vscode"
e2e="$ext/.e2e"
mkdir -p "$e2e"
exec 9>"$e2e/.install.lock"
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

if [[ ! -x "$e2e/node_modules/.bin/code-server" || ! -d "$e2e/node_modules/playwright-core" ]]; then
  # @vscode/ripgrep's postinstall downloads from GitHub: pre-seed its cache with Debian's rg.
  cache="$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-1.15.11"
  mkdir -p "$cache"
  tarball="$cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
  if [[ ! -f "$tarball" ]]; then
    tmp="$(mktemp -d)"; cp "$(command -v rg)" "$tmp/rg"; tar -C "$tmp" -czf "$tarball" rg; rm -rf "$tmp"
  fi
  [[ -f "$e2e/package.json" ]] || echo '{"name":"remora-vscode-e2e","private":true}' >"$e2e/package.json"
  (cd "$e2e" && npm_config_unsafe_perm=true npm_config_yes=true \
    npm install --no-audit --no-fund --loglevel=error code-server@4.100.3 playwright-core@1.65.1)
fi
echo "vscode e2e: installed"
