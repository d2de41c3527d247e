#!/usr/bin/env bash
# Check systemd units the strict way:
#   * `systemd-analyze verify` in a throwaway root, failing on ANY output: a bad key
#     or value only prints "Unknown key ..., ignoring" and exits 0, so the exit
#     status alone proves nothing;
#   * `systemd-analyze security --offline`: the exposure score must stay <= 5.0.
#
# usage: scripts/check-units.sh [UNIT...]     (default: systemd/*.service)
# Exit status 0 when every unit is clean, 1 otherwise (the findings on stdout).
# Works without systemd as PID 1 (CI containers); needs systemd-analyze (apt: systemd).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
threshold=${CARDTABLE_SECURITY_THRESHOLD:-50}   # systemd's 0..100 scale: 50 = exposure 5.0

if ! command -v systemd-analyze >/dev/null 2>&1; then
    echo "check-units: systemd-analyze not found (apt-get install systemd)" >&2
    exit 2
fi

if [ "$#" -eq 0 ]; then
    set -- "$here"/systemd/*.service
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/lib/systemd" "$root/etc/systemd/system"
# the stock units (multi-user.target, network-online.target, ...) the unit refers to
cp -a /usr/lib/systemd/system "$root/usr/lib/systemd/"

rc=0
for unit in "$@"; do
    if [ ! -f "$unit" ]; then
        echo "$unit: no such file"
        rc=1
        continue
    fi
    name=$(basename "$unit")
    dest="$root/etc/systemd/system/$name"
    cp "$unit" "$dest"
    # every Exec*= binary must exist and be executable inside the root: stub it
    sed -n 's/^Exec[A-Za-z]*=[-@:+!]*\([^ ]*\).*/\1/p' "$unit" | while read -r exe; do
        case "$exe" in
            /*) [ -e "$root$exe" ] || install -D -m 0755 /dev/null "$root$exe" ;;
        esac
    done
    bad=0
    if ! out=$(systemd-analyze verify --man=no --root="$root" "$dest" 2>&1); then
        bad=1
        [ -n "$out" ] || out="systemd-analyze verify failed without a message"
    fi
    if [ -n "$out" ]; then
        bad=1
        echo "$unit: systemd-analyze verify:"
        # report the unit's own path, not the throwaway copy's
        printf '%s\n' "$out" | sed "s|$dest|$unit|g; s/^/    /"
    fi
    if ! sec=$(systemd-analyze security --offline=yes --root="$root" --threshold="$threshold" "$dest" 2>&1); then
        bad=1
        echo "$unit: systemd-analyze security: exposure above $((threshold / 10)).$((threshold % 10)):"
        printf '%s\n' "$sec" | tail -n 3 | sed 's/^/    /'
    fi
    score=$(printf '%s\n' "$sec" | sed -n 's/.*Overall exposure level for [^:]*: *//p' | tail -n 1)
    if [ "$bad" -eq 0 ]; then
        echo "$unit: ok (exposure ${score:-?})"
    else
        echo "$unit: FAILED"
        rc=1
    fi
done
exit $rc
