// Entry point of `azd up` / `azd provision`: one resource group holding the Scheduler Agent
// Supervisor app and everything it talks to. See docs/deployment.md for what each resource is
// for, the roles granted and the costs.

targetScope = 'subscription'

import { principal } from 'modules/roles.bicep'

@minLength(1)
@maxLength(64)
@description('azd environment name; names the resource group and seeds the resource token.')
param environmentName string

@minLength(1)
@description('Region for every resource. It must offer Flex Consumption (az functionapp list-flexconsumption-locations).')
@metadata({
  azd: {
    type: 'location'
  }
})
param location string

@description('Object id of the person (or pipeline) running azd, granted data access to run the app locally. Empty: none.')
param principalId string = ''

@description('Type of principalId.')
@allowed(['User', 'ServicePrincipal', 'Group'])
param principalType string = 'User'

@description('Resource group name; empty: rg-<environmentName>.')
param resourceGroupName string = ''

@description('Where the Durable Task hub lives: AzureStorage (queues and tables in the host storage account) or DurableTaskScheduler (the managed service).')
@allowed(['AzureStorage', 'DurableTaskScheduler'])
param durableBackend string = 'AzureStorage'

@description('Durable Task Scheduler SKU (with durableBackend DurableTaskScheduler).')
@allowed(['Consumption', 'Dedicated'])
param durableTaskSchedulerSku string = 'Consumption'

@description('Durable task hub name (TASK_HUB_NAME): letters and digits, starting with a letter.')
@minLength(3)
@maxLength(45)
param taskHubName string = 'sastaskhub'

@description('Cosmos DB capacity mode: Provisioned (autoscale throughput shared by the containers, billed by the hour) or Serverless (pay per request unit, for a deployment idle most of the time).')
@allowed(['Serverless', 'Provisioned'])
param cosmosCapacityMode string = 'Provisioned'

@description('Autoscale ceiling in RU/s with cosmosCapacityMode Provisioned: it bills at least a tenth of it every hour, and serves about 13 orders/s per 1,000 RU/s.')
@minValue(1000)
param cosmosAutoscaleMaxThroughput int = 1000

@description('Cosmos DB database name (COSMOS_DATABASE).')
param cosmosDatabaseName string = 'sas'

@description('Prefix of every status queue (STATUS_QUEUE_PREFIX); a submission\'s replyTo must start with it.')
param statusQueuePrefix string = 'status-'

@description('Status queues to create; each must start with statusQueuePrefix. The app may send only to these.')
param statusQueues string[] = ['status-demo']

@description('Client id of the Entra ID app registration operators sign in with; infra/scripts/operator-app.sh (an azd hook) creates it. Empty: no sign-in, and the dashboard and operator routes answer 503.')
param operatorAppClientId string = ''

@description('Whether principalId also runs the app itself against these resources (write-local-settings.sh), which grants it the app\'s right to send agent requests and replies: development environments only.')
param developerRunsApp bool = false

@description('Where the remote services live: each declared service (infra/process.json) at <this URL>/<service>, unless serviceUrlList names it (REMOTE_SERVICES_URL). Empty: a placeholder; point it at your services.')
param remoteServicesUrl string = ''

@description('The services served elsewhere, as comma-separated service=url pairs, e.g. "<service>=https://<service>.contoso.example,<other>=https://<other>.contoso.example" (SERVICE_URLS). The app refuses to start if a pair names no declared service.')
param serviceUrlList string = ''

@description('App settings that replace the tuning defaults below (name -> string value), e.g. {"MAX_IN_FLIGHT": "200"}.')
param appSettingOverrides { *: string } = {}

@description('E-mail address for alert notifications; empty: alerts show in the portal only.')
param alertEmail string = ''

@description('Failed function executions tolerated in 15 minutes before the failure alert fires.')
@minValue(0)
param functionFailureThreshold int = 0

@description('Upper bound on function app instances.')
@minValue(1)
@maxValue(1000)
param maximumInstanceCount int = 40

@description('Always-ready instances of each function group on the step\'s clock (the durable group, each service\'s agent and agentReplies): warm instances keep a step\'s hops inside its deadline. 0: none, every group scales from zero (cheaper when idle; see docs/deployment.md, "Always-ready instances").')
@minValue(0)
@maxValue(10)
param alwaysReadyInstances int = 1

@description('The environment the Functions host and the app run as (AZURE_FUNCTIONS_ENVIRONMENT). Production, the platform\'s own default, refuses chaos; a staging environment says Staging.')
@allowed(['Production', 'Staging'])
param functionsEnvironment string = 'Production'

@description('Chaos in staging (CHAOS_ENABLED): latency and faults injected into the agents\' remote calls at the rates below. Off by default; the app refuses it unless functionsEnvironment is Staging (docs/chaos.md, "Chaos in staging").')
param chaosEnabled bool = false

@description('The agents chaos hits (CHAOS_SERVICES): * or a comma-separated list of the services in infra/process.json.')
param chaosServices string = '*'

@description('Share of attempts delayed by chaosLatencySeconds before the call (CHAOS_LATENCY_RATE), from 0 to 1; a string, as Bicep has no decimals.')
param chaosLatencyRate string = '0'

@description('How long a delayed attempt waits before calling (CHAOS_LATENCY_SECONDS).')
param chaosLatencySeconds string = '10'

@description('Share of attempts failed before the call, as a refused connection (CHAOS_FAULT_RATE), from 0 to 1.')
param chaosFaultRate string = '0'

@secure()
@description('The key continuation tokens are signed with (PAGING_TOKEN_KEY), kept in Key Vault. azd passes the one in the vault back (main.parameters.json), so that it outlives re-deployments; empty, or shorter than the app accepts (azd\'s first value, before the vault exists), it is lengthened with pagingTokenKeySeed.')
param pagingTokenKey string = ''

@secure()
@description('Random characters a new paging key is made of. Leave it unset: its default is new on every deployment.')
param pagingTokenKeySeed string = '${newGuid()}${newGuid()}'

@description('The version of the paging key secret that signed tokens before the last rotation (PAGING_TOKEN_PREVIOUS_KEY), still read until this is emptied (docs/operations.md, "Rotating the paging key"). Empty: none.')
param pagingTokenPreviousKeyVersion string = ''

@description('Memory per function app instance in MB.')
@allowed([512, 2048, 4096])
param instanceMemoryMB int = 2048

var resourceToken = toLower(uniqueString(subscription().id, environmentName, location))
var tags = { 'azd-env-name': environmentName }
var useScheduler = durableBackend == 'DurableTaskScheduler'
var functionAppName = 'func-${resourceToken}'
var developers principal[] = empty(principalId) ? [] : [{ id: principalId, type: principalType }]

// The shortest paging key the app accepts: MIN_PAGING_KEY_LENGTH in src/config.ts (test/infra/keyVault.test.ts
// holds them equal). While there is no vault to read the key from, azd makes up a shorter one.
var minPagingKeyLength = 32
var pagingKey = length(pagingTokenKey) >= minPagingKeyLength ? pagingTokenKey : '${pagingTokenKey}${pagingTokenKeySeed}'

// The settings Azure ships (docs/configuration.md), written from the settings table of src/config.ts by
// `npm run docs:update`: a setting added there comes here with no edit of this file. Strings, because app
// settings are strings; the app validates them at start-up. Override any of them with appSettingOverrides
// instead of editing either file; a value that differs from the local default (STEP_TIMEOUT_SECONDS, from the
// latency budget of a step's hops in Azure: docs/deployment.md) says why in the table.
var tuningDefaults = loadJsonContent('app-settings.json').shipped

// The process's remote services, each with its request queue and agent function: written from
// the declaration in src/domain/process.ts by `npm run docs:update` (a unit test fails while it is stale).
var processServices = loadJsonContent('process.json').services

// Where the services are. A placeholder on a reserved domain (.invalid never resolves) until it is set: the app
// starts, and calls to the remote services fail as transient errors until the real URLs are set.
var remoteServices = {
  REMOTE_SERVICES_URL: empty(remoteServicesUrl) ? 'https://remote-services.example.invalid' : remoteServicesUrl
  SERVICE_URLS: serviceUrlList
}

resource rg 'Microsoft.Resources/resourceGroups@2024-03-01' = {
  name: empty(resourceGroupName) ? 'rg-${environmentName}' : resourceGroupName
  location: location
  tags: tags
}

module identity 'modules/identity.bicep' = {
  name: 'identity'
  scope: rg
  params: {
    name: 'id-${resourceToken}'
    location: location
    tags: tags
  }
}

var app principal = { id: identity.outputs.principalId, type: 'ServicePrincipal' }

module keyVault 'modules/keyVault.bicep' = {
  name: 'key-vault'
  scope: rg
  params: {
    name: 'kv-${resourceToken}'
    location: location
    tags: tags
    pagingTokenKey: pagingKey
    appPrincipal: app
    operators: developers
  }
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'monitoring'
  scope: rg
  params: {
    logAnalyticsName: 'log-${resourceToken}'
    applicationInsightsName: 'appi-${resourceToken}'
    location: location
    tags: tags
    publishers: [app]
  }
}

module storage 'modules/storage.bicep' = {
  name: 'storage'
  scope: rg
  params: {
    name: 'st${resourceToken}'
    location: location
    tags: tags
    deploymentContainerName: 'app-package-${take(functionAppName, 32)}'
    hostPrincipals: concat([app], developers)
  }
}

module cosmos 'modules/cosmos.bicep' = {
  name: 'cosmos'
  scope: rg
  params: {
    accountName: 'cosmos-${resourceToken}'
    location: location
    tags: tags
    databaseName: cosmosDatabaseName
    capacityMode: cosmosCapacityMode
    autoscaleMaxThroughput: cosmosAutoscaleMaxThroughput
    dataPrincipals: concat([app], developers)
  }
}

module serviceBus 'modules/servicebus.bicep' = {
  name: 'servicebus'
  scope: rg
  params: {
    name: 'sb-${resourceToken}'
    location: location
    tags: tags
    statusQueuePrefix: statusQueuePrefix
    statusQueueNames: statusQueues
    appPrincipal: app
    // The queues with a Service Bus trigger (docs/contract.md, Functions).
    receiveQueueNames: concat(['orders'], map(processServices, s => s.requestQueue), ['agent-replies', 'deadlines'])
    developerPrincipals: developers
    developersRunApp: developerRunsApp
  }
}

module scheduler 'modules/durableTaskScheduler.bicep' = if (useScheduler) {
  name: 'durable-task-scheduler'
  scope: rg
  params: {
    name: 'dts-${resourceToken}'
    location: location
    tags: tags
    taskHubName: taskHubName
    skuName: durableTaskSchedulerSku
    workers: concat([app], developers)
  }
}

// With the scheduler backend, the Durable extension connects to it through this setting, which the
// deployed host.json names (durableTask.storageProvider.connectionStringName). The backend itself is
// chosen in that host.json, which stage-package.sh writes from the same DURABLE_BACKEND, and never by
// an AzureFunctionsJobHost__ setting: the scale controller reads the durable trigger's configuration
// from the host.json on disk, and would not see an override (docs/deployment.md, "Durable backend").
var schedulerSettings = useScheduler
  ? {
      DURABLE_TASK_SCHEDULER_CONNECTION_STRING: 'Endpoint=${scheduler!.outputs.endpoint};Authentication=ManagedIdentity;ClientID=${identity.outputs.clientId}'
    }
  : {}

// Every connection is identity-based: an endpoint or account name, the credential kind and the
// client id of the user-assigned identity. Nothing here is a key or a secret.
var connectionSettings = {
  AzureWebJobsStorage__accountName: storage.outputs.name
  AzureWebJobsStorage__blobServiceUri: storage.outputs.blobEndpoint
  AzureWebJobsStorage__queueServiceUri: storage.outputs.queueEndpoint
  AzureWebJobsStorage__tableServiceUri: storage.outputs.tableEndpoint
  AzureWebJobsStorage__credential: 'managedidentity'
  AzureWebJobsStorage__clientId: identity.outputs.clientId
  ServiceBusConnection__fullyQualifiedNamespace: serviceBus.outputs.fullyQualifiedNamespace
  ServiceBusConnection__credential: 'managedidentity'
  ServiceBusConnection__clientId: identity.outputs.clientId
  CosmosConnection__accountEndpoint: cosmos.outputs.endpoint
  CosmosConnection__credential: 'managedidentity'
  CosmosConnection__clientId: identity.outputs.clientId
  APPLICATIONINSIGHTS_CONNECTION_STRING: monitoring.outputs.applicationInsightsConnectionString
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'ClientId=${identity.outputs.clientId};Authorization=AAD'
}

// Settings whose value is fixed by the infrastructure itself; they win over overrides so they
// cannot disagree with it (AGENT_REQUEST_MAX_DELIVERY_COUNT must equal the request queues'
// MaxDeliveryCount, for instance).
var derivedSettings = {
  COSMOS_DATABASE: cosmos.outputs.databaseName
  TASK_HUB_NAME: taskHubName
  STATUS_QUEUE_PREFIX: statusQueuePrefix
  STATUS_QUEUES: join(statusQueues, ',')
  // Operators are principals of the platform's Entra ID sign-in, never a header a client writes.
  OPERATOR_AUTH: 'platform'
  AGENT_REQUEST_MAX_DELIVERY_COUNT: string(serviceBus.outputs.agentRequestMaxDeliveryCount)
  // The host's own body limit, twice the front door's (hostRequestBodyLimit in src/config.ts): the host refuses a
  // body declared larger before reading it; the app refuses, naming its limit, one between the two.
  FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: string(2 * int(union(tuningDefaults, appSettingOverrides).MAX_REQUEST_BYTES))
}

// Chaos in staging (docs/chaos.md, "Chaos in staging"): off unless chaosEnabled, and the app refuses to start
// with it on when AZURE_FUNCTIONS_ENVIRONMENT is Production. Applied after appSettingOverrides, so that only
// these parameters can turn it on, and always written, so that every deployment says whether it is on.
var chaosSettings = {
  AZURE_FUNCTIONS_ENVIRONMENT: functionsEnvironment
  CHAOS_ENABLED: chaosEnabled ? 'true' : 'false'
  CHAOS_SERVICES: chaosServices
  CHAOS_LATENCY_RATE: chaosLatencyRate
  CHAOS_LATENCY_SECONDS: chaosLatencySeconds
  CHAOS_FAULT_RATE: chaosFaultRate
}

// The secret, as Key Vault references that the platform resolves with the app's identity
// (keyVaultReferenceIdentity): the settings, and the FUNCTION_APP_SETTINGS output, hold where the key is,
// never the key. The current key follows the secret's latest version; the previous one is a fixed version.
// After the overrides, which cannot replace them.
var secretSettings = union(
  { PAGING_TOKEN_KEY: '@Microsoft.KeyVault(SecretUri=${keyVault.outputs.pagingTokenKeyUri})' },
  empty(pagingTokenPreviousKeyVersion)
    ? {}
    : {
        PAGING_TOKEN_PREVIOUS_KEY: '@Microsoft.KeyVault(SecretUri=${keyVault.outputs.pagingTokenKeyUri}/${pagingTokenPreviousKeyVersion})'
      }
)

var appSettings = union(
  tuningDefaults,
  remoteServices,
  appSettingOverrides,
  connectionSettings,
  derivedSettings,
  chaosSettings,
  schedulerSettings,
  secretSettings
)

// The function groups a step waits on: orchestrator and activities (Flex Consumption scales them together
// as "durable"), and each Service Bus-triggered function on the step's path, which Flex scales on its own
// ("function:<name>", the names registered in src/functions).
var alwaysReadyGroups = concat(
  ['durable'],
  map(processServices, s => 'function:${s.agentFunction}'),
  ['function:agentReplies']
)

module functionApp 'modules/functionApp.bicep' = {
  name: 'function-app'
  scope: rg
  params: {
    name: functionAppName
    planName: 'plan-${resourceToken}'
    location: location
    tags: tags
    serviceName: 'api'
    identityId: identity.outputs.id
    deploymentContainerUrl: storage.outputs.deploymentContainerUrl
    appSettings: appSettings
    maximumInstanceCount: maximumInstanceCount
    instanceMemoryMB: instanceMemoryMB
    alwaysReady: alwaysReadyInstances == 0
      ? []
      : map(alwaysReadyGroups, g => { name: g, instanceCount: alwaysReadyInstances })
    operatorAppClientId: operatorAppClientId
  }
}

module alerts 'modules/alerts.bicep' = {
  name: 'alerts'
  scope: rg
  params: {
    namePrefix: 'sas-${resourceToken}'
    tags: tags
    serviceBusNamespaceId: serviceBus.outputs.id
    alertsQueueName: 'alerts'
    applicationInsightsId: monitoring.outputs.applicationInsightsId
    notificationEmail: alertEmail
    functionFailureThreshold: functionFailureThreshold
  }
}

// Outputs: azd writes each one into .azure/<env>/.env; infra/scripts/write-local-settings.sh turns
// them into local.settings.json.
output AZURE_LOCATION string = location
output AZURE_TENANT_ID string = tenant().tenantId
output AZURE_RESOURCE_GROUP string = rg.name
output AZURE_FUNCTION_APP_NAME string = functionApp.outputs.name
output SERVICE_API_NAME string = functionApp.outputs.name
output SERVICE_API_URI string = functionApp.outputs.uri
output DASHBOARD_URL string = '${functionApp.outputs.uri}/api/dashboard'
@description('The redirect URI infra/scripts/operator-app.sh adds to the operators\' app registration after provisioning.')
output OPERATOR_APP_REDIRECT_URI string = functionApp.outputs.authRedirectUri
output AZURE_MANAGED_IDENTITY_CLIENT_ID string = identity.outputs.clientId
output AZURE_STORAGE_ACCOUNT_NAME string = storage.outputs.name
output SERVICEBUS_FULLY_QUALIFIED_NAMESPACE string = serviceBus.outputs.fullyQualifiedNamespace
output SERVICEBUS_QUEUES string[] = serviceBus.outputs.queueNames
output COSMOS_ENDPOINT string = cosmos.outputs.endpoint
output COSMOS_DATABASE string = cosmos.outputs.databaseName
output DURABLE_BACKEND string = durableBackend
output TASK_HUB_NAME string = taskHubName
output DURABLE_TASK_SCHEDULER_ENDPOINT string = useScheduler ? scheduler!.outputs.endpoint : ''
output APPLICATIONINSIGHTS_CONNECTION_STRING string = monitoring.outputs.applicationInsightsConnectionString
output ALERT_RULES string[] = alerts.outputs.ruleNames
output AZURE_KEY_VAULT_NAME string = keyVault.outputs.name
@description('Every app setting of the function app (none is a secret: the paging key is a Key Vault reference), for local.settings.json.')
output FUNCTION_APP_SETTINGS object = appSettings
