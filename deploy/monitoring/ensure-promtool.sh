#!/usr/bin/env bash
# promtool (Debian's package `prometheus`), which the tests use to check and unit-test the alert rules of
# deploy/monitoring/; installed when missing, as deploy/local/ensure-tools.sh installs the stack's tools.
# Without recommends: promtool alone, not the exporters. Run by `make install` and `make tools`.
set -euo pipefail
command -v promtool >/dev/null 2>&1 && exit 0
echo "installing prometheus (for promtool) ..." >&2
sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
$sudo_cmd apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends prometheus >/dev/null
