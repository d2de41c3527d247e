#!/usr/bin/env bash
# Installs the card-face art the recogniser's renderer uses (Debian and npm packages)
# and renders every deck design once into data/faces/ (see docs/vision.md for
# sources and licences).  Idempotent and quiet when everything is already there.
#
#   Debian: kdegames-card-data-kf5, gnome-cards-data (SVG decks), librsvg2-bin (rsvg-convert)
#   npm:    @letele/playing-cards (CC0), @younestouati/playing-cards-standard-deck, svg-cards
#
# Nothing here is committed: data/ is ignored by git.
set -euo pipefail
cd "$(dirname "$0")/.."

ART=data/art
NPM_DIR=$ART/npm
NPM_PACKAGES=(
  "@letele/playing-cards@0.1.0"
  "@younestouati/playing-cards-standard-deck@3.0.0"
  "svg-cards@4.0.2"
)
DEB_PACKAGES=(kdegames-card-data-kf5 gnome-cards-data librsvg2-bin)

missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "fetch-art: installing Debian packages: ${missing[*]}"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "fetch-art: please install the Debian packages: ${missing[*]}" >&2
    exit 1
  fi
fi

# npm packages: `npm pack` fetches the published tarball by name and version
# from the registry; unpacked under data/art/npm/<name>-<version>/package.
mkdir -p "$NPM_DIR"
for spec in "${NPM_PACKAGES[@]}"; do
  name=${spec%@*}; version=${spec##*@}
  base=$(echo "${name#@}" | tr '/' '-')-$version
  if [ ! -d "$NPM_DIR/$base/package" ]; then
    echo "fetch-art: npm pack $spec"
    (cd "$NPM_DIR" && npm pack --silent "$spec" >/dev/null)
    mkdir -p "$NPM_DIR/$base"
    tar -xzf "$NPM_DIR/$base.tgz" -C "$NPM_DIR/$base"
  fi
done

# The CC0 letele deck ships its SVGs inside React components: extract them.
if [ ! -f "$ART/letele/Sq.svg" ]; then
  node vision/synth/letele_extract.mjs \
    "$NPM_DIR/letele-playing-cards-0.1.0/package/dist/index.esm.js" "$ART/letele" >/dev/null
fi

# Render each deck design to face images once (data/faces/<deck>/).
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
"$PY" -c 'from vision.synth.decks import build_face_cache; build_face_cache(log=lambda m: print("fetch-art:", m))'
