#!/usr/bin/env bash
# Installs what the dashboard's browser tests need (tests/dashboard): Debian's chromium.
# The Python driver is the `playwright` package of the dev extra (pyproject.toml); it
# downloads no browser, the tests point it at /usr/bin/chromium. Idempotent; locked.
set -euo pipefail
exec 9>"${TMPDIR:-/tmp}/remora-dashboard-e2e.lock"
flock 9
if ! dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q "install ok installed"; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
fi
echo "dashboard e2e: installed"
