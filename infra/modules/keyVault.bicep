// The Key Vault holding the app's one secret: the key continuation tokens are signed with
// (PAGING_TOKEN_KEY, src/api/continuation.ts). Azure RBAC only, no access policies; every grant is on
// that one secret. The app reads it through a Key Vault reference in its settings, resolved by the
// platform with the app's identity; whoever runs azd may read it (azd passes it back to the next
// deployment, main.parameters.json) and write a new version (a rotation, docs/operations.md).

import { roleIds, principal } from 'roles.bicep'

@description('Key Vault name (3-24 letters, digits and hyphens, globally unique).')
@minLength(3)
@maxLength(24)
param name string

@description('Azure region.')
param location string

@description('Tags for the resources.')
param tags object

@secure()
@description('The key continuation tokens are signed with.')
param pagingTokenKey string

@description('Principal id of the app\'s identity: reads the key.')
param appPrincipal principal

@description('Principals that run azd: read the key back for the next deployment, and rotate it.')
param operators principal[]

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    tenantId: tenant().tenantId
    sku: {
      family: 'A'
      name: 'standard'
    }
    enableRbacAuthorization: true
    // Soft delete cannot be turned off; a short retention lets `azd down --purge` and a new deployment of
    // the same environment name follow each other. No purge protection, or `--purge` could not.
    softDeleteRetentionInDays: 7
    publicNetworkAccess: 'Enabled'
  }
}

// Written on every deployment with the value it is given, a new version each time: azd gives the current
// one back (secretOrRandomPassword), so the value stays what it was unless azd could not read it.
resource pagingKey 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = {
  parent: vault
  name: 'paging-token-key'
  properties: {
    value: pagingTokenKey
    contentType: 'HMAC-SHA256 key of the continuation tokens'
  }
}

var grants = concat(
  [{ principal: appPrincipal, roleId: roleIds.keyVaultSecretsUser }],
  map(operators, p => { principal: p, roleId: roleIds.keyVaultSecretsOfficer })
)

resource secretRoleAssignments 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for grant in grants: {
    name: guid(pagingKey.id, grant.principal.id, grant.roleId)
    scope: pagingKey
    properties: {
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', grant.roleId)
      principalId: grant.principal.id
      principalType: grant.principal.type
    }
  }
]

output name string = vault.name
@description('The secret\'s URI without a version: a Key Vault reference to it follows the latest version.')
output pagingTokenKeyUri string = pagingKey.properties.secretUri
