#!/usr/bin/env bash
# Stages the deployment package of the function app in dist/deploy: exactly what the Functions host
# needs and nothing else. azure.yaml runs this as the service's prepackage hook and points `dist:` at
# the folder, so `azd package` / `azd deploy` zip it as is (remoteBuild: false: no build on Azure).
#
#   dist/deploy/
#     host.json             the repository's, with the Durable storageProvider of the azd environment's
#                           DURABLE_BACKEND (deployed-host-json.mjs; default AzureStorage)
#     package.json, package-lock.json   the repository's own, unchanged
#     dist/src/**.js        the compiled app ("main" is dist/src/index.js); no source maps, no tests
#     dist/browser/**.js    the dashboard's browser modules, which the app serves (src/dashboard/browserModules.ts)
#     node_modules/         production dependencies only, from the lockfile, without source maps
#                           and type declarations (install-production.sh)
#
# The repository's node_modules holds the dev tooling too (TypeScript, vitest, eslint, the devhost
# workspace and its emulators: about 280 MB) and dist/ holds the tools and benchmarks: neither belongs
# on Azure.
#
# Usage: bash infra/scripts/stage-package.sh    (from anywhere; needs node, npm and the npm registry
#                                                or a warm npm cache; azd passes its environment's
#                                                values, DURABLE_BACKEND among them)
set -euo pipefail

# azure.yaml's `dist:` must name the same folder (test/infra/deploymentPackage.test.ts compares them).
staging_dir="dist/deploy"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
staging="$root/$staging_dir"
cd "$root"

# The same value main.parameters.json gives main.bicep's durableBackend, so the package and the
# infrastructure agree on the backend; checked before the build, which takes a while.
durable_backend="${DURABLE_BACKEND:-AzureStorage}"
case "$durable_backend" in
  AzureStorage | DurableTaskScheduler) ;;
  *)
    echo "stage-package: DURABLE_BACKEND=$durable_backend: expected AzureStorage or DurableTaskScheduler (azd env set DURABLE_BACKEND ...)" >&2
    exit 1
    ;;
esac

started=$SECONDS
echo "stage-package: building"
npm run build --silent

rm -rf "$staging"
mkdir -p "$staging"
node infra/scripts/deployed-host-json.mjs "$durable_backend" "$staging/host.json"
echo "stage-package: host.json for the $durable_backend durable backend"

main="$(node -p 'require("./package.json").main')"
case "$main" in
  dist/src/*) ;;
  *)
    echo "stage-package: package.json \"main\" is $main; only dist/src is staged" >&2
    exit 1
    ;;
esac

# The compiled app and the dashboard's browser modules. tsc never deletes outputs, so a file counts only
# while its source still exists: a renamed or deleted module's leftover .js in dist/ is not shipped. Source
# maps, declarations and tests stay home. The browser build mirrors src/ under dist/browser.
copied=0
skipped_stale=0
while IFS= read -r file; do
  rel="${file#dist/}"
  case "$rel" in
    browser/*) rel="src/${rel#browser/}" ;;
  esac
  case "$rel" in
    *.map | *.d.ts | *.test.js | *.spec.js) continue ;;
    *.js) source="${rel%.js}.ts" ;;
    *) source="$rel" ;; # JSON and other files tsc copies (resolveJsonModule)
  esac
  if [[ ! -f "$source" ]]; then
    skipped_stale=$((skipped_stale + 1))
    continue
  fi
  mkdir -p "$staging/$(dirname "$file")"
  cp "$file" "$staging/$file"
  copied=$((copied + 1))
done < <(find dist/src dist/browser -type f | sort)

if [[ ! -f "$staging/$main" ]]; then
  echo "stage-package: $main was not staged; did the build succeed?" >&2
  exit 1
fi
# The dashboard page loads its code from these (GET /api/dashboard/{module}); without them it is blank.
if [[ ! -d "$staging/dist/browser" ]]; then
  echo "stage-package: dist/browser (the dashboard's browser modules) was not staged; did the build succeed?" >&2
  exit 1
fi

echo "stage-package: installing production dependencies"
# package.json and package-lock.json are copied as they are, then `npm ci` installs the production tree.
bash infra/scripts/install-production.sh "$staging"

# A native addon is built for the machine that ran npm ci, and Flex Consumption runs Linux x64.
natives="$(find "$staging/node_modules" -name '*.node' -type f | sed "s|^$staging/||")"
if [[ -n "$natives" && "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]]; then
  printf '%s\n' "$natives" | sed 's/^/stage-package: native addon built for this machine: /' >&2
  echo "stage-package: Flex Consumption runs Linux x64: stage and deploy from Linux x64 (CI, WSL)" >&2
  exit 1
fi

packages="$(find "$staging/node_modules" -name package.json -type f |
  grep -Ec '/node_modules/(@[^/]+/)?[^/@][^/]*/package\.json$' || true)"
size_kb="$(du -sk "$staging" | cut -f1)"
echo "stage-package: $staging_dir: $copied app files ($skipped_stale stale outputs left out), $packages packages, $((size_kb / 1024)) MB ($((SECONDS - started))s)"
