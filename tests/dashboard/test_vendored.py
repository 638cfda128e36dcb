"""The dashboard's vendored graph library is exactly what its lockfile names.

``core/remora_cli/dashboard/static/vendor/`` holds browser bundles copied from
npm tarballs by ``scripts/vendor_dashboard.sh``; ``scripts/dashboard_vendor/``
holds the ``package.json``, the ``package-lock.json`` (each tarball's sha512)
and ``VENDORED`` (which file of which package). These tests fetch the locked
tarballs with npm (from its cache or the registry), check their hashes
against the lockfile themselves, and compare every vendored file byte for
byte — a hand-edited or stale copy fails.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = REPO / "scripts" / "dashboard_vendor"
VENDOR = REPO / "core" / "remora_cli" / "dashboard" / "static" / "vendor"


def vendored() -> list[tuple[str, str, str]]:
    """(package, path in its tarball, vendored name) for each vendored file."""
    rows = []
    for line in (SOURCES / "VENDORED").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            source, name = line.split()
            package, _, inside = source.partition("/")
            rows.append((package, inside, name))
    return rows


def locked() -> dict[str, dict]:
    packages = json.loads((SOURCES / "package-lock.json").read_text())["packages"]
    return {
        key.removeprefix("node_modules/"): value
        for key, value in packages.items()
        if key.startswith("node_modules/")
    }


def test_the_manifest_and_the_lockfile_agree():
    wanted = json.loads((SOURCES / "package.json").read_text())["dependencies"]
    lock = locked()
    for package, version in wanted.items():
        assert lock[package]["version"] == version, package
    assert {package for package, _, _ in vendored()} <= set(wanted)
    for _, _, name in vendored():
        assert (VENDOR / name).is_file(), name


def test_each_vendored_file_is_the_one_in_the_locked_tarball(tmp_path):
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: cannot fetch the locked tarballs")
    lock = locked()
    for package in sorted({package for package, _, _ in vendored()}):
        entry = lock[package]
        done = subprocess.run(
            ["npm", "pack", f"{package}@{entry['version']}", "--silent"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            pytest.skip(f"npm could not fetch {package}: {done.stderr[-500:]}")
        tarball = tmp_path / done.stdout.strip().splitlines()[-1]
        algorithm, _, digest = entry["integrity"].partition("-")
        actual = hashlib.new(algorithm, tarball.read_bytes()).digest()
        assert base64.b64encode(actual).decode() == digest, package
        with tarfile.open(tarball) as archive:
            for owner, inside, name in vendored():
                if owner != package:
                    continue
                member = archive.extractfile(f"package/{inside}")
                assert member is not None, inside
                assert member.read() == (VENDOR / name).read_bytes(), (
                    f"{name} is not {package}@{entry['version']}'s {inside}: "
                    "run scripts/vendor_dashboard.sh"
                )
