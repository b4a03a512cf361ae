// Log Analytics + workspace-based Application Insights. Local (instrumentation-key) authentication
// is disabled, so telemetry is accepted only from the app's managed identity, which gets
// Monitoring Metrics Publisher on the component.

import { roleIds, principal } from 'roles.bicep'

@description('Name of the Log Analytics workspace.')
param logAnalyticsName string

@description('Name of the Application Insights component.')
param applicationInsightsName string

@description('Azure region.')
param location string

@description('Tags for the resources.')
param tags object

@description('Days of log retention (30 is included in the ingestion price).')
@minValue(30)
@maxValue(730)
param retentionInDays int = 30

@description('Principals allowed to publish telemetry with Entra ID authentication.')
param publishers principal[]

resource workspace 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: logAnalyticsName
  location: location
  tags: tags
  properties: {
    sku: {
      name: 'PerGB2018'
    }
    retentionInDays: retentionInDays
    features: {
      enableLogAccessUsingOnlyResourcePermissions: true
    }
  }
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: applicationInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: workspace.id
    IngestionMode: 'LogAnalytics'
    DisableLocalAuth: true
  }
}

resource publisherAssignments 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for p in publishers: {
    name: guid(appInsights.id, p.id, roleIds.monitoringMetricsPublisher)
    scope: appInsights
    properties: {
      roleDefinitionId: subscriptionResourceId(
        'Microsoft.Authorization/roleDefinitions',
        roleIds.monitoringMetricsPublisher
      )
      principalId: p.id
      principalType: p.type
    }
  }
]

output workspaceId string = workspace.id
output applicationInsightsId string = appInsights.id
output applicationInsightsName string = appInsights.name
@description('Not a secret: with local auth disabled the instrumentation key alone cannot ingest anything.')
output applicationInsightsConnectionString string = appInsights.properties.ConnectionString
