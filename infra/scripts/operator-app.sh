#!/usr/bin/env bash
# The Entra ID app registration operators sign in with (the dashboard and the operator API), kept by
# the azd hooks of azure.yaml. Needs the Azure CLI (az), signed in to the tenant of the deployment.
#
#   bash infra/scripts/operator-app.sh ensure     (preprovision)
#   bash infra/scripts/operator-app.sh redirect   (postprovision)
#
# ensure: creates, or brings up to date, the registration "Scheduler Agent Supervisor operators
#   (<environment>)": single tenant, the app roles of infra/entra/operator-app-roles.json, sign-in by
#   ID token (so no client secret exists anywhere), the application ID URI api://<client id> for
#   bearer tokens, and a service principal that requires an app role assignment, so that only people
#   given a role can sign in at all. It gives the person running azd the Orders.Operator role, and
#   stores the client id as OPERATOR_APP_CLIENT_ID in the azd environment, from where
#   main.parameters.json passes it to main.bicep (which turns on the platform's sign-in with it).
# redirect: adds the provisioned app's https://<host>/.auth/login/aad/callback to the registration.
#
# OPERATOR_SIGN_IN=off in the azd environment skips both: the app is deployed without sign-in, and
# its dashboard and operator routes answer 503 until OPERATOR_APP_CLIENT_ID is set.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
roles_file="$root/infra/entra/operator-app-roles.json"
graph="https://graph.microsoft.com/v1.0"

say() { echo "operator-app: $*"; }
fail() {
  echo "operator-app: $*" >&2
  exit 1
}

# azd runs hooks with the environment's values as variables; outside a hook, ask azd.
env_value() {
  local name="$1"
  if [[ -n "${!name:-}" ]]; then
    printf '%s' "${!name}"
  elif command -v azd >/dev/null 2>&1; then
    azd env get-value "$name" 2>/dev/null || true
  fi
}

ensure() {
  local env_name display app_id sp_id user_id role_id assigned
  env_name="$(env_value AZURE_ENV_NAME)"
  [[ -n "$env_name" ]] || fail "AZURE_ENV_NAME is not set: run this from azd (azd up / azd provision)"
  display="Scheduler Agent Supervisor operators ($env_name)"

  app_id="$(env_value OPERATOR_APP_CLIENT_ID)"
  if [[ -z "$app_id" ]]; then
    app_id="$(az ad app list --display-name "$display" --query "[0].appId" -o tsv)"
  fi
  if [[ -z "$app_id" ]]; then
    say "creating the app registration \"$display\""
    app_id="$(az ad app create --display-name "$display" --sign-in-audience AzureADMyOrg \
      --enable-id-token-issuance true --app-roles "@$roles_file" --query appId -o tsv)"
  else
    say "updating the app registration $app_id"
    az ad app update --id "$app_id" --enable-id-token-issuance true --app-roles "@$roles_file"
  fi
  az ad app update --id "$app_id" --identifier-uris "api://$app_id"

  sp_id="$(az ad sp list --filter "appId eq '$app_id'" --query "[0].id" -o tsv)"
  if [[ -z "$sp_id" ]]; then sp_id="$(az ad sp create --id "$app_id" --query id -o tsv)"; fi
  az ad sp update --id "$sp_id" --set appRoleAssignmentRequired=true

  user_id="$(env_value AZURE_PRINCIPAL_ID)"
  if [[ -z "$user_id" ]]; then user_id="$(az ad signed-in-user show --query id -o tsv 2>/dev/null || true)"; fi
  role_id="$(node -e 'const roles = require(process.argv[1]);
    process.stdout.write(roles.find((r) => r.value === "Orders.Operator").id)' "$roles_file")"
  if [[ -n "$user_id" ]]; then
    assigned="$(az rest --method GET --uri "$graph/servicePrincipals/$sp_id/appRoleAssignedTo" \
      --query "length(value[?principalId=='$user_id' && appRoleId=='$role_id'])" -o tsv)"
    if [[ "$assigned" == "0" ]]; then
      say "giving $user_id the Orders.Operator role"
      az rest --method POST --uri "$graph/servicePrincipals/$sp_id/appRoleAssignedTo" \
        --headers "Content-Type=application/json" \
        --body "{\"principalId\":\"$user_id\",\"resourceId\":\"$sp_id\",\"appRoleId\":\"$role_id\"}" >/dev/null
    fi
  else
    say "no signed-in user found: give operators the Orders.Operator role in Entra ID (Enterprise applications)"
  fi
  azd env set OPERATOR_APP_CLIENT_ID "$app_id"
  say "operators sign in with app registration $app_id"
}

redirect() {
  local app_id uri line
  local -a current
  app_id="$(env_value OPERATOR_APP_CLIENT_ID)"
  uri="$(env_value OPERATOR_APP_REDIRECT_URI)"
  if [[ -z "$app_id" || -z "$uri" ]]; then
    say "no app registration or redirect URI in the azd environment; nothing to do"
    return
  fi
  current=() # bash 3 (macOS) has no mapfile
  while IFS= read -r line; do [[ -n "$line" ]] && current+=("$line"); done < <(
    az ad app show --id "$app_id" --query "web.redirectUris[]" -o tsv
  )
  for line in ${current[@]+"${current[@]}"}; do [[ "$line" == "$uri" ]] && return; done
  say "adding the redirect URI $uri"
  az ad app update --id "$app_id" --web-redirect-uris ${current[@]+"${current[@]}"} "$uri"
}

if [[ "$(env_value OPERATOR_SIGN_IN)" == "off" ]]; then
  say "OPERATOR_SIGN_IN=off: no sign-in for operators; the dashboard and operator routes answer 503"
  exit 0
fi
command -v az >/dev/null 2>&1 ||
  fail "the Azure CLI (az) is needed to create the operators' app registration; install it, or set OPERATOR_SIGN_IN=off (azd env set OPERATOR_SIGN_IN off)"

case "${1:-}" in
  ensure) ensure ;;
  redirect) redirect ;;
  *) fail "usage: operator-app.sh ensure|redirect" ;;
esac
