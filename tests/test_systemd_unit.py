"""The systemd unit, its strict check, the Pi install script and the example configuration."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UNIT = ROOT / "systemd" / "cardtable.service"
CHECK = ROOT / "scripts" / "check-units.sh"
INSTALL = ROOT / "systemd" / "install.sh"


def check(*units: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(CHECK), *map(str, units)], capture_output=True, text=True, timeout=120)


def unit_settings(text: str) -> dict[tuple[str, str], str]:
    """(section, key) -> value for a unit file without repeated keys."""
    out, section = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        assert (section, key) not in out, f"{key} repeated in [{section}]"
        out[(section, key)] = value
    return out


def broken_copy(tmp_path: Path, old: str, new: str) -> Path:
    text = UNIT.read_text()
    assert old in text
    path = tmp_path / "cardtable.service"
    path.write_text(text.replace(old, new, 1))
    return path


# -- the unit passes the strict check, and the check really catches mistakes ------------------------

def test_the_unit_passes_verify_and_security():
    result = check()                      # no arguments: every systemd/*.service
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{UNIT}: ok (exposure" in result.stdout
    assert "verify:" not in result.stdout


@pytest.mark.parametrize("old, new, expected", [
    ("SupplementaryGroups=", "SupplementaryGroup=", "Unknown key 'SupplementaryGroup'"),
    ("Type=notify", "Type=notfy", "Failed to parse service type, ignoring: notfy"),
    ("Restart=on-failure", "Restart=on-failure  # restart on crashes", "restart specifier"),
    ("[Service]\n", "[Service]\nWantedBy=multi-user.target\n", "Unknown key 'WantedBy' in section [Service]"),
])
def test_a_bad_key_or_value_fails_the_check(tmp_path, old, new, expected):
    bad = broken_copy(tmp_path, old, new)
    # a bad key only warns: systemd-analyze itself exits 0, the script must not
    result = check(bad)
    assert result.returncode == 1, result.stdout
    assert expected in result.stdout
    assert f"{bad}: FAILED" in result.stdout
    assert str(bad) in result.stdout.split("verify:")[1]   # the finding names the file, not the temp copy


def test_weak_hardening_fails_the_security_check(tmp_path):
    text = UNIT.read_text()
    for key in ("NoNewPrivileges", "ProtectSystem", "ProtectHome", "RestrictAddressFamilies",
                "CapabilityBoundingSet", "ProtectKernelTunables", "ProtectKernelModules",
                "RestrictNamespaces", "PrivateTmp"):
        text = "\n".join(line for line in text.splitlines() if not line.startswith(key + "="))
    loose = tmp_path / "loose.service"
    loose.write_text(text + "\n")
    result = check(loose)
    assert result.returncode == 1
    assert "systemd-analyze security: exposure above 5.0" in result.stdout


def test_good_and_bad_units_together_fail(tmp_path):
    bad = broken_copy(tmp_path, "WatchdogSec=30", "WatchdogSecs=30")
    result = check(UNIT, bad)
    assert result.returncode == 1
    assert f"{UNIT}: ok" in result.stdout and f"{bad}: FAILED" in result.stdout


def test_a_missing_unit_file_fails(tmp_path):
    result = check(tmp_path / "nope.service")
    assert result.returncode == 1 and "no such file" in result.stdout


# -- what the unit promises ---------------------------------------------------------------------------

def test_the_unit_settings():
    s = unit_settings(UNIT.read_text())
    assert s[("Service", "Type")] == "notify"
    assert s[("Service", "NotifyAccess")] == "main"
    assert int(s[("Service", "WatchdogSec")]) > 0
    assert s[("Service", "Restart")] == "on-failure"
    assert s[("Service", "ExecStart")] == \
        "/opt/cardtable/venv/bin/cardtable run --config /etc/cardtable/config.toml"
    assert s[("Service", "User")] == "cardtable"
    assert set(s[("Service", "SupplementaryGroups")].split()) == {"video", "gpio"}
    # lgpio needs a writable working directory: the state directory systemd creates for the user
    assert s[("Service", "WorkingDirectory")] == "/var/lib/" + s[("Service", "StateDirectory")]
    assert "LG_WD=/run/" + s[("Service", "RuntimeDirectory")] in s[("Service", "Environment")]
    for absent in ("PrivateDevices", "ProcSubset", "DynamicUser"):   # would hide the camera/GPIO
        assert ("Service", absent) not in s
    assert s[("Install", "WantedBy")] == "multi-user.target"


# -- the install script (dry run) ----------------------------------------------------------------------

def dry_run(tmp_path: Path, codename: str | None, python_bits: int = 64) -> subprocess.CompletedProcess:
    os_release = tmp_path / "os-release"
    lines = ['PRETTY_NAME="Debian GNU/Linux"', "ID=debian"]
    if codename:
        lines.append(f"VERSION_CODENAME={codename}")
    os_release.write_text("\n".join(lines) + "\n")
    env = {**os.environ, "CARDTABLE_OS_RELEASE": str(os_release), "CARDTABLE_PYTHON_BITS": str(python_bits)}
    return subprocess.run(["bash", str(INSTALL), "--dry-run"], capture_output=True, text=True, env=env,
                          timeout=60)


def test_install_on_bookworm_pins_numpy(tmp_path):
    result = dry_run(tmp_path, "bookworm")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "apt-get install -y --no-install-recommends python3-picamera2 python3-lgpio" in out
    assert "python3 -m venv --system-site-packages /opt/cardtable/venv" in out
    # with onnxruntime (the fast extra: 64-bit Python), numpy held to apt's
    assert f"pip install --upgrade -c {ROOT}/constraints/pi-bookworm.txt /opt/cardtable/src\\[fast\\]" in out
    assert "useradd --system --user-group --home-dir /var/lib/cardtable" in out or "user cardtable exists" in out
    assert "usermod --append --groups video\\,gpio cardtable" in out
    assert f"install -m 0644 {UNIT} /etc/systemd/system/cardtable.service" in out
    assert "systemctl enable cardtable.service" in out
    # apt first, then the venv, then pip, then the unit
    order = [out.index(s) for s in ("apt-get install", "python3 -m venv", "pip install", "systemctl enable")]
    assert order == sorted(order)


def test_install_on_trixie_does_not_pin_numpy(tmp_path):
    result = dry_run(tmp_path, "trixie")
    assert result.returncode == 0, result.stderr
    assert "pip install --upgrade /opt/cardtable/src\\[fast\\]" in result.stdout
    assert "pi-bookworm" not in result.stdout


def test_install_on_32_bit_python_leaves_out_onnxruntime(tmp_path):
    """No onnxruntime wheel for 32-bit Raspberry Pi OS: plain install, the recogniser runs on OpenCV."""
    result = dry_run(tmp_path, "bookworm", python_bits=32)
    assert result.returncode == 0, result.stderr
    assert f"pip install --upgrade -c {ROOT}/constraints/pi-bookworm.txt /opt/cardtable/src\n" in result.stdout
    assert "[fast]" not in result.stdout and "runs on OpenCV" in result.stdout


@pytest.mark.parametrize("codename, message", [
    ("bullseye", "bullseye is not supported"),
    (None, "cannot tell Bookworm from Trixie"),
])
def test_install_refuses_what_it_cannot_handle(tmp_path, codename, message):
    result = dry_run(tmp_path, codename)
    assert result.returncode == 1
    assert message in result.stderr
    assert "apt-get" not in result.stdout


def test_bookworm_constraints_hold_numpy_1():
    lines = [line for line in (ROOT / "constraints" / "pi-bookworm.txt").read_text().splitlines()
             if line and not line.startswith("#")]
    assert lines == ["numpy==1.24.2", "opencv-python-headless==4.11.0.86"]


# -- the example configuration -------------------------------------------------------------------------

def test_the_example_config_loads_and_its_pin_map_is_valid():
    from cardtable.config import load_config
    from hardware import PinMap, Signals

    config = load_config(str(ROOT / "systemd" / "config.example.toml"))
    assert config.port == 80 and config.db.startswith("/var/lib/cardtable/")
    pin_map = PinMap.from_config(config.gpio)
    assert pin_map.seats == 4 and pin_map.dealer_leds and pin_map.buzzer and set(pin_map.buttons) == {
        "pass", "undo", "confirm"}
    with Signals.from_config(config.gpio, mock=True) as signals:
        assert signals.simulated
