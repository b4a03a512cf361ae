// The storage account behind AzureWebJobsStorage: host leases and timer-trigger state (blobs), the
// Flex Consumption deployment package (a blob container), the host's own queues and tables
// (diagnostic events, which it writes with either durable backend), and, with the AzureStorage
// durable backend, the task hub's control/work-item queues and history/instance tables.
// Shared key access is disabled: only Entra ID tokens are accepted.

import { roleIds, principal } from 'roles.bicep'

@description('Storage account name (3-24 lower-case letters and digits, globally unique).')
@minLength(3)
@maxLength(24)
param name string

@description('Azure region.')
param location string

@description('Tags for the resources.')
param tags object

@description('Blob container that Flex Consumption deploys the app package from.')
param deploymentContainerName string

@description('Principals that run the Functions host (the app identity, and the developer for local runs).')
param hostPrincipals principal[]

resource storage 'Microsoft.Storage/storageAccounts@2025-01-01' = {
  name: name
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: {
    name: 'Standard_LRS'
  }
  properties: {
    accessTier: 'Hot'
    allowSharedKeyAccess: false
    defaultToOAuthAuthentication: true
    allowBlobPublicAccess: false
    allowCrossTenantReplication: false
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      defaultAction: 'Allow'
      bypass: 'AzureServices'
    }
  }
}

resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2025-01-01' = {
  parent: storage
  name: 'default'
}

resource deploymentContainer 'Microsoft.Storage/storageAccounts/blobServices/containers@2025-01-01' = {
  parent: blobService
  name: deploymentContainerName
  properties: {
    publicAccess: 'None'
  }
}

// Blob Data Owner (not Contributor) because the Functions host manages blob leases and containers
// for AzureWebJobsStorage. Queue and Table Data Contributor with either durable backend: the task hub
// needs them with AzureStorage, and the host itself writes diagnostic events to tables and is given
// the queue and table endpoints with the Durable Task Scheduler too (as the official sample grants).
var hostRoles = [
  roleIds.storageBlobDataOwner
  roleIds.storageQueueDataContributor
  roleIds.storageTableDataContributor
]

var hostRoleGrants = flatten(map(hostPrincipals, p => map(hostRoles, r => { principal: p, roleId: r })))

resource hostRoleAssignments 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for grant in hostRoleGrants: {
    name: guid(storage.id, grant.principal.id, grant.roleId)
    scope: storage
    properties: {
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', grant.roleId)
      principalId: grant.principal.id
      principalType: grant.principal.type
    }
  }
]

output name string = storage.name
output blobEndpoint string = storage.properties.primaryEndpoints.blob
output queueEndpoint string = storage.properties.primaryEndpoints.queue
output tableEndpoint string = storage.properties.primaryEndpoints.table
output deploymentContainerUrl string = '${storage.properties.primaryEndpoints.blob}${deploymentContainer.name}'
