#!/usr/bin/env bash
# Installs the card-face art the recogniser's renderer uses (Debian and npm packages).
# Filled in by the card-recognition work; see docs/vision.md for sources and licences.
set -euo pipefail
