#!/usr/bin/env bash
# The Keras JSON importer's fuzzer: scripts/fuzz.sh keras-json [SECONDS].
# Kept for existing habits; scripts/fuzz.sh builds and runs every target.
exec "$(dirname "${BASH_SOURCE[0]}")/fuzz.sh" keras-json "${1:-600}"
