// Cosmos DB for NoSQL: the orders, the state store and the Supervisor's leases (docs/architecture.md).
// Local (key) auth is disabled; access is granted with data-plane role assignments only.

import { cosmosDataContributorRoleId, principal } from 'roles.bicep'

@description('Cosmos DB account name (3-44 lower-case letters, digits and hyphens, globally unique).')
@minLength(3)
@maxLength(44)
param accountName string

@description('Azure region (serverless accounts are single-region).')
param location string

@description('Tags for the resources.')
param tags object

@description('Database name (COSMOS_DATABASE).')
param databaseName string

@description('Serverless bills per request unit consumed; Provisioned reserves autoscale throughput shared by the containers.')
@allowed(['Serverless', 'Provisioned'])
param capacityMode string

@description('Autoscale ceiling in RU/s for the shared database throughput (Provisioned only; bills at least 10% of it).')
@minValue(1000)
param autoscaleMaxThroughput int

@description('Principals that read and write the app data (the app identity, and the developer for local runs).')
param dataPrincipals principal[]

var isServerless = capacityMode == 'Serverless'

resource account 'Microsoft.DocumentDB/databaseAccounts@2025-04-15' = {
  name: accountName
  location: location
  tags: tags
  kind: 'GlobalDocumentDB'
  properties: {
    databaseAccountOfferType: 'Standard'
    locations: [
      {
        locationName: location
        failoverPriority: 0
        isZoneRedundant: false
      }
    ]
    // Session consistency: every writer reads its own writes, and the _etag of what it read,
    // which is what the state store's conditional replaces (If-Match on _etag) need.
    consistencyPolicy: {
      defaultConsistencyLevel: 'Session'
    }
    capabilities: isServerless ? [{ name: 'EnableServerless' }] : []
    // Provisioned throughput may then spend what a partition left unused in the last five minutes, up to
    // 3,000 RU/s, before it answers 429: a short burst of orders above the autoscale maximum may be served
    // rather than throttled, at no charge (not guaranteed: Azure may spend it on maintenance). Serverless has
    // no such thing.
    enableBurstCapacity: !isServerless
    disableLocalAuth: true
    disableKeyBasedMetadataWriteAccess: true
    minimalTlsVersion: 'Tls12'
    publicNetworkAccess: 'Enabled'
  }
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2025-04-15' = {
  parent: account
  name: databaseName
  properties: {
    resource: {
      id: databaseName
    }
    options: isServerless ? {} : { autoscaleSettings: { maxThroughput: autoscaleMaxThroughput } }
  }
}

// The containers, their partition keys and indexing policies come from the file the local Cosmos DB emulator
// creates them from (DEVHOST_COSMOS_CONFIG in local.settings.sample.json), so that local runs, tests and Azure
// have the same indexes, declared once. Each entry is a container resource body: { id, partitionKey,
// indexingPolicy[, defaultTtl] }. Every container is partitioned on /orderId; orders and leases index everything
// but _etag, rejected (the whole bodies of set-aside messages, expiring with their copies) only the part; the state
// container's composite indexes serve the ORDER BY of each query the app runs on it. Cosmos DB uses a
// composite index for `WHERE a = ... ORDER BY b` only when the ORDER BY names `a` first, so each query
// sorts by the processState it filters on, then by its own field (src/store/stateStore.ts,
// STATE_QUERIES; a unit test checks every sorted query against these indexes):
//   starter     WHERE processState IN ('Pending','CompensationPending') AND lockedBy = null
//               AND retryAt <= @now ORDER BY processState, createdAt         (processState, createdAt)
//   supervisor  WHERE processState IN ('Processing','Compensating') AND completeBy < @now
//               AND completeBy >= @windowStart ORDER BY processState, completeBy   (processState, completeBy)
//   operator    [WHERE processState = @s] AND (updatedAt, id) < @position
//               ORDER BY [processState,] updatedAt DESC, id DESC   ([processState,] updatedAt DESC, id DESC)
//   bulk        the operator listing within one state, with lastError.code = @code and an updatedAt range
//               on top: the same ORDER BY and index (a range on updatedAt, the index's own second path,
//               needs no other), and its COUNT has no ORDER BY
// and its steps[] and history[] are never filtered on and are rewritten on every transition: keeping them out of
// the index cuts the RU charge of each write. The file's database id is this app's default database name
// (cosmosDatabaseName in main.bicep); the containers are created in whichever database this module is given.
var containers = loadJsonContent('../cosmos-emulator.config.json').databases[0].containers

resource sqlContainers 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2025-04-15' = [
  for c in containers: {
    parent: database
    name: c.id
    properties: {
      resource: c
    }
  }
]

// The SDK reads the account's metadata (regions, endpoints) at "/" before touching any database,
// and a role assigned at the database scope does not reach "/". This custom role grants only that
// read at the account scope; data access itself is granted at the database scope below.
resource metadataReader 'Microsoft.DocumentDB/databaseAccounts/sqlRoleDefinitions@2025-04-15' = {
  parent: account
  name: guid(account.id, 'account-metadata-reader')
  properties: {
    roleName: 'Account metadata reader (${account.name})'
    type: 'CustomRole'
    assignableScopes: [account.id]
    permissions: [
      {
        dataActions: ['Microsoft.DocumentDB/databaseAccounts/readMetadata']
      }
    ]
  }
}

resource metadataAssignments 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2025-04-15' = [
  for p in dataPrincipals: {
    parent: account
    name: guid(account.id, p.id, metadataReader.id)
    properties: {
      roleDefinitionId: metadataReader.id
      principalId: p.id
      scope: account.id
    }
  }
]

// Built-in Data Contributor on this database only: item reads, queries and writes in its three
// containers. It cannot create or delete databases or containers (control plane, done here).
resource dataAssignments 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2025-04-15' = [
  for p in dataPrincipals: {
    parent: account
    name: guid(account.id, p.id, database.id, cosmosDataContributorRoleId)
    properties: {
      roleDefinitionId: '${account.id}/sqlRoleDefinitions/${cosmosDataContributorRoleId}'
      principalId: p.id
      scope: '${account.id}/dbs/${database.name}'
    }
  }
]

output accountName string = account.name
output accountId string = account.id
output endpoint string = account.properties.documentEndpoint
output databaseName string = database.name
output containerNames string[] = [for (c, i) in containers: sqlContainers[i].name]
