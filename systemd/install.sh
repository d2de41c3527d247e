#!/usr/bin/env bash
# Install Cardtable as a systemd service on Raspberry Pi OS (Bookworm or Trixie).
#
#   sudo systemd/install.sh              install or upgrade, enable and (re)start the service
#   sudo systemd/install.sh --no-start   install and enable, but do not start now
#   systemd/install.sh --dry-run         print what would run, change nothing (no root needed)
#
# What it does (see docs/hardware.md):
#   1. apt: python3-picamera2 (--no-install-recommends), python3-lgpio, python3-venv
#   2. a system user "cardtable" in the video and gpio groups, home /var/lib/cardtable
#   3. the source in /opt/cardtable/src and a venv in /opt/cardtable/venv made with
#      --system-site-packages (so apt's picamera2/libcamera/lgpio are visible); on Bookworm
#      pip is held to numpy 1.24.2 by constraints/pi-bookworm.txt (the numpy trap)
#   4. /etc/cardtable/config.toml from systemd/config.example.toml (kept if it exists)
#   5. /etc/systemd/system/cardtable.service, enabled at boot
#
# Environment: CARDTABLE_OS_RELEASE (default /etc/os-release) and CARDTABLE_PYTHON_BITS (default:
# what python3 is built for, 32 or 64) let the tests pretend.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
prefix=/opt/cardtable
venv=$prefix/venv
src=$prefix/src
etc=/etc/cardtable
state=/var/lib/cardtable
user=cardtable
unit=/etc/systemd/system/cardtable.service
os_release=${CARDTABLE_OS_RELEASE:-/etc/os-release}

dry_run=0
start=1
for arg in "$@"; do
    case "$arg" in
        --dry-run) dry_run=1 ;;
        --no-start) start=0 ;;
        -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown option $arg (try --help)" >&2; exit 2 ;;
    esac
done

say() { printf '==> %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }
# run a command that changes the system (printed instead under --dry-run)
run() {
    if [ "$dry_run" -eq 1 ]; then
        printf '+'; printf ' %q' "$@"; printf '\n'
    else
        "$@"
    fi
}

# -- which Raspberry Pi OS / Debian release ----------------------------------------------------
[ -r "$os_release" ] || die "cannot read $os_release: is this Raspberry Pi OS?"
codename=$(sed -n 's/^VERSION_CODENAME=//p' "$os_release" | tr -d "\"'" | head -n 1)
constraints=
case "$codename" in
    bookworm)
        constraints=$repo/constraints/pi-bookworm.txt
        [ -f "$constraints" ] || die "missing $constraints"
        say "Bookworm: numpy held at the apt version (constraints/pi-bookworm.txt)" ;;
    trixie|forky|sid)
        say "$codename: numpy 2 from the OS, no pin needed" ;;
    "")
        die "no VERSION_CODENAME in $os_release: cannot tell Bookworm from Trixie" ;;
    *)
        die "$codename is not supported: Cardtable needs Raspberry Pi OS Bookworm (12) or Trixie (13)" ;;
esac

if [ "$dry_run" -eq 0 ] && [ "$(id -u)" -ne 0 ]; then
    die "run me as root: sudo $0 $*"
fi
if [ "$dry_run" -eq 0 ] && ! grep -qs "Raspberry Pi" /proc/device-tree/model; then
    say "warning: this does not look like a Raspberry Pi; the LEDs will be simulated (mock pins)"
fi

# -- 1. system packages ----------------------------------------------------------------------------
say "installing system packages"
run apt-get update
run env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    python3-picamera2 python3-lgpio python3-venv python3-pip

# -- 2. the service user ---------------------------------------------------------------------------
for group in video gpio; do
    if ! getent group "$group" >/dev/null; then
        say "warning: no $group group here (Raspberry Pi OS has one); creating it"
        run groupadd --system "$group"
    fi
done
if id "$user" >/dev/null 2>&1; then
    say "user $user exists"
else
    say "creating the system user $user"
    run useradd --system --user-group --home-dir "$state" --no-create-home \
        --shell /usr/sbin/nologin --comment "Cardtable service" "$user"
fi
run usermod --append --groups video,gpio "$user"
run install -d -o "$user" -g "$user" -m 0750 "$state"

# -- 3. source and virtual environment -------------------------------------------------------------
if [ "$repo" = "$src" ]; then
    say "running from $src itself: nothing to copy"
else
    say "copying the source to $src"
    run rm -rf "$src"
    run install -d -m 0755 "$prefix" "$src"
    if [ "$dry_run" -eq 1 ]; then
        printf '+ tar -C %q -cf - . | tar -C %q -xf -\n' "$repo" "$src"
    else
        tar -C "$repo" --exclude=./.git --exclude=./.venv --exclude=./data --exclude=./var \
            --exclude='*.sqlite*' --exclude=__pycache__ --exclude='*.egg-info' -cf - . | tar -C "$src" -xf -
    fi
fi
if [ ! -x "$venv/bin/python" ] || [ "$dry_run" -eq 1 ]; then
    say "creating the venv $venv (--system-site-packages: apt's picamera2, libcamera, lgpio)"
    run python3 -m venv --system-site-packages "$venv"
fi
# onnxruntime (the `fast` extra) runs the card recogniser in about half the time, but has
# wheels for 64-bit Python only: 32-bit Raspberry Pi OS (whose kernel may still say aarch64)
# runs the same networks on OpenCV instead.
package="$src"
bits=${CARDTABLE_PYTHON_BITS:-$(python3 -c 'import struct; print(struct.calcsize("P") * 8)')}
if [ "$bits" = 64 ]; then
    package="$src[fast]"
else
    say "32-bit Python: no onnxruntime here; the card recogniser runs on OpenCV (slower)"
fi
say "installing Cardtable into the venv"
if [ -n "$constraints" ]; then
    run "$venv/bin/pip" install --upgrade -c "$constraints" "$package"
else
    run "$venv/bin/pip" install --upgrade "$package"
fi
if [ "$dry_run" -eq 0 ]; then
    "$venv/bin/python" - <<'PY' || die "the venv cannot import what the service needs (see above)"
import numpy, cv2, gpiozero
print(f"numpy {numpy.__version__}, OpenCV {cv2.__version__}, gpiozero {gpiozero.__version__}")
from vision.inference import onnxruntime_available
print("the card recogniser runs on " + ("onnxruntime" if onnxruntime_available() else
      "OpenCV's dnn (no onnxruntime wheel for this system, e.g. 32-bit Raspberry Pi OS: slower)"))
try:
    import picamera2  # noqa: F401  (from apt, via --system-site-packages)
    print("picamera2 importable")
except Exception as exc:  # a USB webcam still works; say so instead of failing
    print(f"warning: picamera2 not importable ({exc}); use [camera] source = \"usb:0\"")
PY
fi

# -- 4. configuration ------------------------------------------------------------------------------
run install -d -m 0755 "$etc"
if [ -e "$etc/config.toml" ]; then
    say "keeping $etc/config.toml"
else
    say "writing $etc/config.toml from systemd/config.example.toml (edit the [gpio] pins!)"
    run install -m 0640 -o root -g "$user" "$repo/systemd/config.example.toml" "$etc/config.toml"
fi

# -- 5. the unit -----------------------------------------------------------------------------------
say "installing $unit"
run install -m 0644 "$repo/systemd/cardtable.service" "$unit"
run systemctl daemon-reload
run systemctl enable cardtable.service
if [ "$start" -eq 1 ]; then
    run systemctl restart cardtable.service
    say "started: systemctl status cardtable; journalctl -u cardtable -f"
else
    say "enabled; start it with: sudo systemctl start cardtable"
fi
say "dashboard: http://$(hostname).local/ (or http://$(hostname -I 2>/dev/null | cut -d' ' -f1)/)"
