#!/usr/bin/env bash
# Regenerates bench/gen/vocab.txt.gz from English text in installed Debian packages (see
# make_vocab.py). The result is checked in; run this only to change the vocabulary.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec /usr/bin/python3 bench/gen/make_vocab.py bench/gen/vocab.txt.gz
