#!/usr/bin/env bash
# npm run infra:check — compiles and lints every Bicep file with a pinned Bicep CLI and fails on
# any error, and on any warning that is not suppressed in the code with a justification:
#
#   #disable-next-line <rule> // why this is right here
#
# then checks the infra scripts with bash and shellcheck. What the template must say (settings, role
# assignments, queues, sign-in, chaos; evaluated with `bicep snapshot`) is tested by test/infra in
# `npm test`, with the CLI this script restores: `npx vitest run test/infra` runs those tests alone.
#
# The Bicep CLI comes from NuGet (package Azure.Bicep.CommandLine.<rid>), restored with the .NET
# SDK into a cache directory on first use; later runs reuse it. Works from a clean clone, as root,
# without a terminal.
#
# Environment:
#   BICEP_CACHE_DIR  where the CLI is kept (default: ${XDG_CACHE_HOME:-~/.cache}/bicep)
#   BICEP_BIN        use this bicep executable instead (must be version $bicep_version)
set -euo pipefail

bicep_version="0.49.2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache_dir="${BICEP_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/bicep}"

# Whole seconds from bash's SECONDS: portable (macOS date has no %N), and precise enough here.
elapsed() { echo "$((SECONDS - $1))"; }

runtime_id() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=osx ;;
    *) echo "infra:check: no Bicep CLI package for $(uname -s)" >&2 && exit 1 ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "infra:check: no Bicep CLI package for $(uname -m)" >&2 && exit 1 ;;
  esac
  echo "$os-$arch"
}

rid="$(runtime_id)"
package="Azure.Bicep.CommandLine.$rid"
packages_dir="$cache_dir/packages"
bicep="${BICEP_BIN:-$packages_dir/$(echo "$package" | tr '[:upper:]' '[:lower:]')/$bicep_version/tools/bicep}"

install_bicep() {
  if ! command -v dotnet >/dev/null 2>&1; then
    echo "infra:check: the .NET SDK (dotnet) is needed to restore $package from NuGet" >&2
    exit 1
  fi
  mkdir -p "$cache_dir"
  # One restore at a time: parallel runs (CI and a developer, two terminals) wait for the first.
  exec 9>"$cache_dir/.install.lock"
  if command -v flock >/dev/null 2>&1; then flock 9; fi
  if [[ ! -x "$bicep" ]]; then
    local started project
    started=$SECONDS
    project="$(mktemp -d "$cache_dir/restore.XXXXXX")"
    # A throwaway project whose only job is to download the package: PackageDownload fetches it
    # without adding it to a build, for any target framework the SDK knows.
    cat >"$project/restore.csproj" <<EOF
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>netstandard2.0</TargetFramework>
  </PropertyGroup>
  <ItemGroup>
    <PackageDownload Include="$package" Version="[$bicep_version]" />
  </ItemGroup>
</Project>
EOF
    echo "infra:check: restoring $package $bicep_version from NuGet into $packages_dir"
    if ! DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1 \
      dotnet restore "$project/restore.csproj" --packages "$packages_dir" --verbosity quiet </dev/null; then
      rm -rf "$project"
      echo "infra:check: could not restore $package $bicep_version from NuGet" >&2
      exit 1
    fi
    rm -rf "$project"
    chmod +x "$bicep"
    echo "infra:check: Bicep CLI installed in $(elapsed "$started")s"
  fi
  exec 9>&-
}

bicep_works() { "$bicep" --version 2>/dev/null | grep -q "version $bicep_version "; }
if [[ -z "${BICEP_BIN:-}" ]]; then
  install_bicep
  # A cache left broken (an interrupted restore, a wrong file) is replaced once.
  if ! bicep_works; then
    echo "infra:check: the cached Bicep CLI does not run; restoring it again"
    rm -rf "$(dirname "$(dirname "$bicep")")"
    install_bicep
  fi
fi
if ! bicep_works; then
  echo "infra:check: $bicep is not Bicep CLI $bicep_version ($("$bicep" --version))" >&2
  exit 1
fi

started=$SECONDS
cd "$root"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Every Bicep file of the repository (bash 3 compatible: no mapfile).
find_sources() {
  find . \( -name node_modules -o -name .git -o -name dist -o -name coverage \) -prune -o -name "$1" -print |
    sed 's|^\./||' | sort
}
bicep_files=()
while IFS= read -r file; do bicep_files+=("$file"); done < <(find_sources '*.bicep')
param_files=()
while IFS= read -r file; do param_files+=("$file"); done < <(find_sources '*.bicepparam')
if ((${#bicep_files[@]} == 0)); then
  echo "infra:check: no .bicep files found" >&2
  exit 1
fi

# One CLI process per command and top-level directory (--pattern), not per file, since the CLI takes
# seconds to start; build and lint run side by side.
top_dirs=()
while IFS= read -r dir; do top_dirs+=("$dir"); done < <(printf '%s\n' "${bicep_files[@]}" | cut -d/ -f1 | sort -u)
status=0
pids=()
job=0
for dir in "${top_dirs[@]}"; do
  if [[ "$dir" == *.bicep ]]; then pattern="$dir"; else pattern="$dir/**/*.bicep"; fi
  # The counter is bumped outside the redirection: there it would change in the background job only.
  "$bicep" build --pattern "$pattern" --outdir "$work/build/$dir" 2>"$work/diagnostics.$job" &
  pids+=($!)
  job=$((job + 1))
  "$bicep" lint --pattern "$pattern" 2>"$work/diagnostics.$job" &
  pids+=($!)
  job=$((job + 1))
done
for file in ${param_files[@]+"${param_files[@]}"}; do
  "$bicep" build-params "$file" --outfile "$work/params/${file%.bicepparam}.parameters.json" 2>"$work/diagnostics.$job" &
  pids+=($!)
  job=$((job + 1))
done
for pid in "${pids[@]}"; do
  wait "$pid" || status=1
done
cat "$work"/diagnostics.* >"$work/diagnostics.txt"

# build and lint report the same linter findings: count each once.
grep -E '\) : (Error|Warning|Info) ' "$work/diagnostics.txt" | sort -u >"$work/findings.txt" || true
errors=$(grep -c ') : Error ' "$work/findings.txt" || true)
warnings=$(grep -c ') : Warning ' "$work/findings.txt" || true)
infos=$(grep -c ') : Info ' "$work/findings.txt" || true)
cat "$work/findings.txt"
# Anything else the CLI printed on stderr (crashes, restore failures) is shown as is.
grep -vE '\) : (Error|Warning|Info) ' "$work/diagnostics.txt" || true

# A suppression counts only with its reason on the same line.
suppressions=$(cat "${bicep_files[@]}" | grep -cE '#disable-(next-line|diagnostics)' || true)
unjustified=$(grep -nE '#disable-(next-line|diagnostics)' "${bicep_files[@]}" |
  grep -vE '#disable-(next-line|diagnostics)( +[A-Za-z0-9-]+)+ +// *[^ ]' || true)
unjustified_count=0
if [[ -n "$unjustified" ]]; then
  unjustified_count=$(printf '%s\n' "$unjustified" | wc -l)
  printf '%s\n' "$unjustified" | sed 's/^/unjustified suppression (add "\/\/ why" after the rule names): /'
fi

# Turning a rule off for every file would hide warnings without a reason in the code.
rules_off=""
while IFS= read -r config; do
  rules_off+="$(grep -nE '"level" *: *"(off|none)"' "$config" | sed "s|^|$config:|" || true)"
done < <(find_sources bicepconfig.json)
if [[ -n "$rules_off" ]]; then
  printf '%s\n' "$rules_off" | sed 's/^/rule switched off in bicepconfig.json (suppress it in the code with a reason instead): /'
  status=1
fi

echo "infra:check: ${#bicep_files[@]} Bicep files, ${#param_files[@]} .bicepparam files: $errors errors, $warnings warnings, $infos infos; $((suppressions - unjustified_count)) justified suppressions, $unjustified_count unjustified ($(elapsed "$started")s)"
if ((status != 0 || errors > 0 || warnings > 0 || unjustified_count > 0)); then
  echo "infra:check: FAILED" >&2
  exit 1
fi

# The azd hooks and helper scripts run on people's machines: bash must parse them, and shellcheck (when
# installed; .ci/run installs it) must find nothing at warning level.
for script in infra/scripts/*.sh; do bash -n "$script"; done
if command -v shellcheck >/dev/null 2>&1; then
  shellcheck --severity=warning infra/scripts/*.sh
  echo "infra:check: shellcheck: infra/scripts/*.sh clean"
else
  echo "infra:check: shellcheck skipped: not installed (apt-get install shellcheck)"
fi
echo "infra:check: OK ($(elapsed "$started")s); the template's contracts are tested by \`npx vitest run test/infra\`"
