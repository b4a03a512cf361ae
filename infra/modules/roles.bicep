// Built-in role definition ids used by this deployment, in one place so every module grants the
// same role by the same name. The ids are fixed by Azure and identical in every tenant.

@export()
@description('Azure RBAC built-in roles (control-plane role assignments).')
var roleIds = {
  storageBlobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  storageQueueDataContributor: '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
  storageTableDataContributor: '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
  serviceBusDataSender: '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39'
  serviceBusDataReceiver: '4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0'
  monitoringMetricsPublisher: '3913510d-42f4-4e42-8a64-420c390055eb'
  durableTaskDataContributor: '0ad04412-c4d5-4796-b79c-f76d14c8d402'
  keyVaultSecretsUser: '4633458b-17de-408a-b874-0445c86b69e6'
  keyVaultSecretsOfficer: 'b86a8fe4-44ce-4948-aee5-eccb2c155cd7'
}

@export()
@description('Cosmos DB for NoSQL data-plane built-in role (a sqlRoleDefinition of the account, not an Azure RBAC role).')
var cosmosDataContributorRoleId = '00000000-0000-0000-0000-000000000002'

@export()
@description('Who a role assignment is for: the principal id and its type.')
type principal = {
  @description('Object id of the principal.')
  id: string

  @description('User for a person signed in with az login / azd auth login, ServicePrincipal for a managed identity or a pipeline.')
  type: 'User' | 'ServicePrincipal' | 'Group'
}
