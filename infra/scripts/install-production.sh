#!/usr/bin/env bash
# Installs the app's production dependencies into a folder, from the repository's own package.json and
# package-lock.json, copied there as they are: no hand-made manifest. The lockfile lists the devhost workspace
# (packages/devhost) and its dependencies, but the folder holds no workspace, and with --workspaces=false and
# --omit=dev npm installs exactly the root's production dependencies. stage-package.sh stages the deployment
# package with it; test/infra/deploymentPackage.test.ts installs into a scratch folder with it to check what
# it installs.
#
# Usage: bash infra/scripts/install-production.sh <folder>   (needs npm and the npm registry or a warm cache)
set -euo pipefail

target="${1:?usage: install-production.sh <folder>}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "$target"
cp "$root/package.json" "$root/package-lock.json" "$target/"

# --ignore-scripts: no dependency runs code at install time on the way to Azure. --no-bin-links: the host runs
# no command-line tools, and azd would zip each .bin symlink as a copy of its target.
(cd "$target" && npm ci --omit=dev --workspaces=false --ignore-scripts --no-bin-links --no-audit --no-fund --loglevel=error)

# Source maps and type declarations are for debuggers and compilers, never loaded at run time, and are more than
# half of the production dependencies' size (the Azure SDKs ship both for every build).
find "$target/node_modules" -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -delete
