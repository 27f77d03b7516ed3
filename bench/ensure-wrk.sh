#!/usr/bin/env bash
# wrk, the benchmarks' load generator (Debian's package), installed when missing; as deploy/local/ensure-tools.sh.
set -euo pipefail
command -v wrk >/dev/null 2>&1 && exit 0
echo "installing wrk ..." >&2
sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
$sudo_cmd apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq wrk >/dev/null
