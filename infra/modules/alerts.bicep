// Alert rules: the three conditions an operator must hear about without watching a dashboard.
// Metric alerts (not log queries): evaluated every minute, billed per monitored time series, and
// they resolve by themselves when the condition clears.

@description('Prefix for the rule names.')
param namePrefix string

@description('Tags for the resources.')
param tags object

@description('Resource id of the Service Bus namespace.')
param serviceBusNamespaceId string

@description('Name of the queue operators read alerts from.')
param alertsQueueName string

@description('Resource id of the Application Insights component the function app reports to.')
param applicationInsightsId string

@description('E-mail address notified when a rule fires; empty: the rules fire in the portal only.')
param notificationEmail string

@description('Failed function executions tolerated in 15 minutes before the failure alert fires.')
@minValue(0)
param functionFailureThreshold int

resource actionGroup 'Microsoft.Insights/actionGroups@2023-01-01' = if (!empty(notificationEmail)) {
  name: '${namePrefix}-operators'
  location: 'global'
  tags: tags
  properties: {
    groupShortName: 'sas-ops'
    enabled: true
    emailReceivers: [
      {
        name: 'operators'
        emailAddress: notificationEmail
        useCommonAlertSchema: true
      }
    ]
  }
}

var actions = empty(notificationEmail) ? [] : [{ actionGroupId: actionGroup.id }]

// DeadletteredMessages is the current dead-letter count of each queue (EntityName '*' splits the
// rule per queue, including status queues added later): the rule fires while any dead-letter
// queue is not empty and resolves once an operator has drained it.
resource deadLetterAlert 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: '${namePrefix}-dead-lettered-messages'
  location: 'global'
  tags: tags
  properties: {
    description: 'A Service Bus queue has dead-lettered messages: poison messages, conflicting submissions or expired requests waiting for an operator.'
    severity: 2
    enabled: true
    scopes: [serviceBusNamespaceId]
    evaluationFrequency: 'PT1M'
    windowSize: 'PT5M'
    autoMitigate: true
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'DeadLetteredMessages'
          metricNamespace: 'Microsoft.ServiceBus/namespaces'
          metricName: 'DeadletteredMessages'
          dimensions: [
            {
              name: 'EntityName'
              operator: 'Include'
              values: ['*']
            }
          ]
          operator: 'GreaterThan'
          threshold: 0
          timeAggregation: 'Maximum'
        }
      ]
    }
    actions: actions
  }
}

// Messages in the alerts queue are orders in Error or CompensationFailed (or conflicts): each one
// needs a person.
resource alertsQueueAlert 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: '${namePrefix}-operator-alerts-waiting'
  location: 'global'
  tags: tags
  properties: {
    description: 'Operator alerts are waiting in the ${alertsQueueName} queue (orders in Error or CompensationFailed).'
    severity: 1
    enabled: true
    scopes: [serviceBusNamespaceId]
    evaluationFrequency: 'PT1M'
    windowSize: 'PT5M'
    autoMitigate: true
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'AlertsWaiting'
          metricNamespace: 'Microsoft.ServiceBus/namespaces'
          metricName: 'ActiveMessages'
          dimensions: [
            {
              name: 'EntityName'
              operator: 'Include'
              values: [alertsQueueName]
            }
          ]
          operator: 'GreaterThan'
          threshold: 0
          timeAggregation: 'Maximum'
        }
      ]
    }
    actions: actions
  }
}

// Every function execution is an Application Insights request; a failed one is an unhandled
// error in a trigger, an activity or the orchestration.
resource functionFailureAlert 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: '${namePrefix}-function-failures'
  location: 'global'
  tags: tags
  properties: {
    description: 'Function executions failed (unhandled errors in triggers, activities or orchestrations).'
    severity: 2
    enabled: true
    scopes: [applicationInsightsId]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    autoMitigate: true
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'FailedExecutions'
          metricNamespace: 'microsoft.insights/components'
          metricName: 'requests/failed'
          operator: 'GreaterThan'
          threshold: functionFailureThreshold
          timeAggregation: 'Count'
        }
      ]
    }
    actions: actions
  }
}

output ruleNames string[] = [deadLetterAlert.name, alertsQueueAlert.name, functionFailureAlert.name]
