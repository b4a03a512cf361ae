// Durable Task Scheduler: the managed alternative to keeping the task hub in Azure Storage.
// Deployed only when main.bicep's durableBackend is 'DurableTaskScheduler'.

import { roleIds, principal } from 'roles.bicep'

@description('Scheduler name.')
@minLength(3)
@maxLength(64)
param name string

@description('Azure region.')
param location string

@description('Tags for the resources.')
param tags object

@description('Task hub name (TASK_HUB_NAME).')
param taskHubName string

@description('Consumption bills per orchestration action; Dedicated reserves capacity units.')
@allowed(['Consumption', 'Dedicated'])
param skuName string

@description('Capacity units (Dedicated only).')
@minValue(1)
param dedicatedCapacity int = 1

@description('Principals that run orchestrations in the hub (the app identity, and the developer for local runs and the dashboard).')
param workers principal[]

resource scheduler 'Microsoft.DurableTask/schedulers@2025-11-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    sku: skuName == 'Dedicated' ? { name: skuName, capacity: dedicatedCapacity } : { name: skuName }
    // An empty allow-list denies every caller; access is controlled by Entra ID and the role below.
    ipAllowlist: ['0.0.0.0/0']
  }
}

resource taskHub 'Microsoft.DurableTask/schedulers/taskHubs@2025-11-01' = {
  parent: scheduler
  name: taskHubName
}

// Scoped to the task hub, not the scheduler: the identity can work only in its own hub.
resource workerAssignments 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for p in workers: {
    name: guid(taskHub.id, p.id, roleIds.durableTaskDataContributor)
    scope: taskHub
    properties: {
      roleDefinitionId: subscriptionResourceId(
        'Microsoft.Authorization/roleDefinitions',
        roleIds.durableTaskDataContributor
      )
      principalId: p.id
      principalType: p.type
    }
  }
]

output name string = scheduler.name
output endpoint string = scheduler.properties.endpoint
output taskHubName string = taskHub.name
