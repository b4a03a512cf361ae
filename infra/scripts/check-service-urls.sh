#!/usr/bin/env bash
# Before provisioning (azure.yaml's preprovision hook): where the remote services are reaches main.bicep as
# two azd variables, REMOTE_SERVICES_URL and SERVICE_URLS (service=url pairs). Earlier builds read one
# variable per service instead (INVENTORY_URL, ...), which main.parameters.json no longer passes: an
# environment that still sets one would be deployed with the placeholder in its place, and every call to
# that service would fail. This stops the provisioning first, and says what to set.
#
#   bash infra/scripts/check-service-urls.sh
#
# azd runs hooks with the environment's values as variables. Exit 1 names each such variable.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# <SERVICE>_URL of each service infra/process.json lists (the declaration's), as "NAME=service", when set.
# shellcheck disable=SC2016 # JavaScript in single quotes: its ${...} and backticks are its own, not the shell's.
left="$(node -e '
  const { services } = require(process.argv[1]);
  for (const { name } of services) {
    const setting = `${name.toUpperCase()}_URL`;
    if (process.env[setting]) console.log(`${setting}=${name}`);
  }
' "$root/infra/process.json")"

[[ -z "$left" ]] && exit 0
{
  echo "check-service-urls: this azd environment sets a service's own URL variable, which deployments no longer read:"
  while IFS='=' read -r setting service; do
    echo "  ${setting}: put it in SERVICE_URLS as ${service}=${!setting}, then clear it (azd env set ${setting} '')"
  done <<<"$left"
  echo "  e.g. azd env set SERVICE_URLS '<service>=<url>,<service>=<url>' (docs/deployment.md, Parameters)."
} >&2
exit 1
