#!/bin/sh
# Runs PocketBase and hds on SQLite side by side (see README.md). PocketBase
# needs Go 1.27: this module, and only it, builds with that toolchain.
set -e
cd "$(dirname "$0")"
export GOTOOLCHAIN=go1.27.3
exec go run . "$@"
