#!/usr/bin/env bash
# Writes local.settings.json from the outputs of `azd provision`, for running the app on this
# machine (func start) against the Azure resources with identity-based connections, signed in as
# yourself (az login). Run it from anywhere in the repository after `azd up` or `azd provision`:
#
#   bash infra/scripts/write-local-settings.sh [--force] [--azurite] [--output PATH] [--values-json FILE]
#
#   --force             replace an existing local.settings.json
#   --azurite           keep the host storage (and the Azure Storage task hub) local in Azurite
#   --output PATH       where to write (default: local.settings.json at the repository root)
#   --values-json FILE  read the azd outputs from FILE (the JSON of `azd env get-values --output json`)
#                       instead of calling azd
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
output="$root/local.settings.json"
values_json=""
passthrough=()

while (($# > 0)); do
  case "$1" in
    --output)
      output="${2:?--output needs a file path}"
      shift 2
      ;;
    --values-json)
      values_json="${2:?--values-json needs a file path}"
      shift 2
      ;;
    --force | --azurite)
      passthrough+=("$1")
      shift
      ;;
    *)
      echo "write-local-settings: unknown argument \"$1\"" >&2
      exit 2
      ;;
  esac
done

if [[ -n "$values_json" ]]; then
  values="$(cat "$values_json")"
else
  if ! command -v azd >/dev/null 2>&1; then
    echo "write-local-settings: azd is not installed; install it or pass --values-json FILE" >&2
    exit 1
  fi
  values="$(cd "$root" && azd env get-values --output json)"
fi

# ${a[@]+...}: an empty array under `set -u` is an error in bash 3 (macOS).
node "$root/infra/scripts/local-settings.mjs" --output "$output" ${passthrough[@]+"${passthrough[@]}"} <<<"$values"
