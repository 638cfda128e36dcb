#!/usr/bin/env bash
# Vendors the dashboard's graph library (sigma + graphology, their browser bundles) from npm:
# installs exactly scripts/dashboard_vendor/package-lock.json (npm checks each tarball's
# integrity) and copies the files of VENDORED into core/remora_cli/dashboard/static/vendor/.
# To move to new versions: edit package.json, `npm install --package-lock-only` there, rerun
# this, commit. tests/dashboard/test_vendored.py checks the copies match the locked tarballs.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
src="$here/scripts/dashboard_vendor"
out="$here/core/remora_cli/dashboard/static/vendor"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
cp "$src/package.json" "$src/package-lock.json" "$tmp/"
(cd "$tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
mkdir -p "$out"
while read -r from to; do
  [[ -z "$from" || "$from" == \#* ]] && continue
  cp "$tmp/node_modules/$from" "$out/$to"
done <"$src/VENDORED"
for pkg in sigma graphology; do cp "$tmp/node_modules/$pkg/LICENSE.txt" "$out/$pkg.LICENSE.txt" 2>/dev/null \
  || cp "$tmp/node_modules/$pkg/LICENSE" "$out/$pkg.LICENSE.txt"; done
echo "vendored into $out"
