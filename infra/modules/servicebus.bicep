// Service Bus namespace (Standard, local auth disabled) with the app's queues (docs/architecture.md).
//
// The queues and their properties are read from infra/servicebus-queues.json, the file the Service
// Bus emulator's config (which the devhost and `func start` serve locally) is written from, so Azure
// and the local runtime cannot drift apart. What that file chooses, and why:
//   orders            no duplicate detection: it would drop a different version of an order sent
//                     under the same MessageId without anyone noticing; the app itself takes a resend
//                     as a no-op and a conflicting version as a conflict (alert, dead letter). Lock
//                     1 min, 5 deliveries, TTL 14 days: a submission survives a long outage of the app.
//                     (Duplicate detection cannot be changed on an existing queue: see deployment.md.)
//   *-requests        duplicate detection (MessageId = instanceId:step:kind), lock 1 min (longer
//                     than AGENT_MAX_ATTEMPTS x AGENT_ATTEMPT_TIMEOUT_SECONDS plus back-off),
//                     2 deliveries, which the app is told (AGENT_REQUEST_MAX_DELIVERY_COUNT, taken
//                     from here by main.bicep) so it knows a delivery is the last; the Supervisor
//                     re-drives what runs out. TTL 1 hour: a request outliving its step deadline
//                     is useless.
//   agent-replies     no duplicate detection (a duplicate reply is ignored by the orchestration),
//                     lock 1 min, 5 deliveries, TTL 1 hour.
//   deadlines         the Supervisor's recovery queue: one notice per step that passed its deadline
//                     unanswered (MessageId deadline:instanceId:step:kind, duplicate detection: the
//                     activity that sends it may run twice). 5 deliveries, TTL 1 day, expired
//                     notices are dropped, not dead-lettered: the periodic sweep finds those records.
//   alerts            read by operators: 10 deliveries, TTL 14 days.
//   rejected-messages read by operators: each message a trigger refused for good (invalid,
//                     conflicting, answering no request), its body as received and the reason in
//                     its application properties. Duplicate detection: a redelivered refusal is set
//                     aside once. 10 deliveries, TTL 14 days.
//   status-*          per-submitter notifications, best effort: TTL 1 day, expired messages are
//                     dropped instead of dead-lettered.
// Every queue dead-letters after its last delivery; the alert rules watch the dead-letter counts.
// Status queues come from a parameter (statusQueueNames) and take the properties of the
// emulator config's status queue.

import { roleIds, principal } from 'roles.bicep'

@description('Service Bus namespace name (6-50 letters, digits and hyphens, globally unique).')
@minLength(6)
@maxLength(50)
param name string

@description('Azure region.')
param location string

@description('Tags for the resources.')
param tags object

@description('Prefix every status queue name starts with (STATUS_QUEUE_PREFIX).')
param statusQueuePrefix string

@description('Status queues to create, each starting with statusQueuePrefix.')
param statusQueueNames string[]

@description('The function app identity.')
param appPrincipal principal

@description('Queues the app receives from (Service Bus triggers); it sends to every queue.')
param receiveQueueNames string[]

@description('People or pipelines who work with these queues: they receive from every queue and send to orders and the status queues.')
param developerPrincipals principal[]

@description('Whether developerPrincipals also run the app itself against these queues, which needs the app\'s own right to send agent requests and replies.')
param developersRunApp bool = false

// The queues come from the file the local Service Bus emulator's config is written from
// (tools/emulatorConfig.ts), in the official emulator's Config.json format: declared once for local runs, tests
// and Azure. Two of its entries stand for several queues: `<service>-requests` for the request queue of each
// service of the process (infra/process.json, from src/domain/process.ts), and its one status queue for every
// status queue created here.
var templateQueues = loadJsonContent('../servicebus-queues.json').UserConfig.Namespaces[0].Queues
var requestQueueTemplate = filter(templateQueues, q => q.Name == '<service>-requests')[0]
var statusQueueTemplate = filter(templateQueues, q => startsWith(q.Name, statusQueuePrefix))[0]
var requestQueueNames = map(loadJsonContent('../process.json').services, s => s.requestQueue)
var queueDefinitions = concat(
  map(
    filter(templateQueues, q => q.Name != requestQueueTemplate.Name && !startsWith(q.Name, statusQueuePrefix)),
    q => { name: q.Name, properties: q.Properties }
  ),
  map(requestQueueNames, n => { name: n, properties: requestQueueTemplate.Properties }),
  map(statusQueueNames, n => { name: n, properties: statusQueueTemplate.Properties })
)
var queueNames = map(queueDefinitions, q => q.name)

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: name
  location: location
  tags: tags
  sku: {
    name: 'Standard'
    tier: 'Standard'
  }
  properties: {
    disableLocalAuth: true
    minimumTlsVersion: '1.2'
    publicNetworkAccess: 'Enabled'
  }
}

resource queues 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = [
  for q in queueDefinitions: {
    parent: namespace
    name: q.name
    properties: {
      lockDuration: q.properties.LockDuration
      maxDeliveryCount: q.properties.MaxDeliveryCount
      requiresDuplicateDetection: q.properties.RequiresDuplicateDetection
      duplicateDetectionHistoryTimeWindow: q.properties.DuplicateDetectionHistoryTimeWindow
      deadLetteringOnMessageExpiration: q.properties.DeadLetteringOnMessageExpiration
      defaultMessageTimeToLive: q.properties.DefaultMessageTimeToLive
      requiresSession: q.properties.RequiresSession
      forwardTo: empty(q.properties.ForwardTo) ? null : q.properties.ForwardTo
      forwardDeadLetteredMessagesTo: empty(q.properties.ForwardDeadLetteredMessagesTo)
        ? null
        : q.properties.ForwardDeadLetteredMessagesTo
      maxSizeInMegabytes: 1024
      enablePartitioning: false
      enableBatchedOperations: true
    }
  }
]

// Data Sender on each queue, one assignment per queue: the app sends to all of them (agent
// requests and replies, alerts, status notifications, and orders from the HTTP front door).
resource appSenderAssignments 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for (q, i) in queueDefinitions: {
    name: guid(queues[i].id, appPrincipal.id, roleIds.serviceBusDataSender)
    scope: queues[i]
    properties: {
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.serviceBusDataSender)
      principalId: appPrincipal.id
      principalType: appPrincipal.type
    }
  }
]

resource receiveQueues 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' existing = [
  for q in receiveQueueNames: {
    parent: namespace
    name: q
  }
]

// Data Receiver only on the queues with a trigger. Receiver (not Owner) is enough to receive,
// complete and dead-letter; without the Manage right the scale controller estimates queue length
// from the oldest message instead of reading the exact count, which is fine for this workload.
resource appReceiverAssignments 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for (q, i) in receiveQueueNames: {
    name: guid(receiveQueues[i].id, appPrincipal.id, roleIds.serviceBusDataReceiver)
    scope: receiveQueues[i]
    properties: {
      roleDefinitionId: subscriptionResourceId(
        'Microsoft.Authorization/roleDefinitions',
        roleIds.serviceBusDataReceiver
      )
      principalId: appPrincipal.id
      principalType: appPrincipal.type
    }
    dependsOn: [queues]
  }
]

// The trust boundary of the agent replies: a reply with every field right is accepted, so only the
// app may send to agent-replies (and to the agent request queues, which call the remote services).
// Developers read every queue (alerts, dead letters, status) and may submit orders, but send
// nowhere else, unless they run the app itself against these resources (developersRunApp), which
// makes them part of that boundary for this environment: development environments only.
var developerSendQueues = concat(['orders'], statusQueueNames)
var developerReceiveGrants = map(developerPrincipals, p => { principal: p, roleId: roleIds.serviceBusDataReceiver })

resource developerReceiverAssignments 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for grant in developerReceiveGrants: {
    name: guid(namespace.id, grant.principal.id, grant.roleId)
    scope: namespace
    properties: {
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', grant.roleId)
      principalId: grant.principal.id
      principalType: grant.principal.type
    }
  }
]

resource developerQueueSenderAssignments 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for grant in flatten(map(developersRunApp ? [] : developerPrincipals, p => map(developerSendQueues, q => { principal: p, queue: q }))): {
    name: guid(namespace.id, grant.queue, grant.principal.id, roleIds.serviceBusDataSender)
    scope: queues[indexOf(queueNames, grant.queue)]
    properties: {
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.serviceBusDataSender)
      principalId: grant.principal.id
      principalType: grant.principal.type
    }
  }
]

resource developerAppSenderAssignments 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for p in (developersRunApp ? developerPrincipals : []): {
    name: guid(namespace.id, p.id, roleIds.serviceBusDataSender)
    scope: namespace
    properties: {
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.serviceBusDataSender)
      principalId: p.id
      principalType: p.type
    }
  }
]

output name string = namespace.name
output id string = namespace.id
@description('Host name of the namespace, the value of ServiceBusConnection__fullyQualifiedNamespace.')
output fullyQualifiedNamespace string = split(split(namespace.properties.serviceBusEndpoint, '//')[1], ':')[0]
output queueNames string[] = queueNames
@description('MaxDeliveryCount of the agent request queues (the app must know it: AGENT_REQUEST_MAX_DELIVERY_COUNT).')
output agentRequestMaxDeliveryCount int = requestQueueTemplate.Properties.MaxDeliveryCount
