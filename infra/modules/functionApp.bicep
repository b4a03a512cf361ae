// The function app on the Flex Consumption plan (Linux, Node.js 22), running as the user-assigned
// identity. Its package is pulled from a blob container with that identity, and every connection
// in its app settings is identity-based: there is no key or secret in the settings.

@description('Function app name (globally unique host name).')
param name string

@description('Flex Consumption plan name.')
param planName string

@description('Azure region (must offer Flex Consumption).')
param location string

@description('Tags for the resources.')
param tags object

@description('azd service name this app deploys (azure.yaml services key).')
param serviceName string

@description('Resource id of the user-assigned identity the app runs as.')
param identityId string

@description('URL of the blob container Flex Consumption deploys the package from.')
param deploymentContainerUrl string

@description('App settings (name -> value). Values must be plain strings: no secrets, identities only.')
param appSettings { *: string }

@description('Node.js major version of the Flex Consumption runtime.')
param nodeVersion string = '22'

@description('Upper bound on instances the app scales out to.')
@minValue(1)
@maxValue(1000)
param maximumInstanceCount int

@description('Memory per instance in MB (512, 2048 or 4096).')
@allowed([512, 2048, 4096])
param instanceMemoryMB int

resource plan 'Microsoft.Web/serverfarms@2024-11-01' = {
  name: planName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: {
    name: 'FC1'
    tier: 'FlexConsumption'
  }
  properties: {
    reserved: true
  }
}

resource site 'Microsoft.Web/sites@2024-11-01' = {
  name: name
  location: location
  tags: union(tags, { 'azd-service-name': serviceName })
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    siteConfig: {
      minTlsVersion: '1.2'
    }
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: deploymentContainerUrl
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityId
          }
        }
      }
      scaleAndConcurrency: {
        maximumInstanceCount: maximumInstanceCount
        instanceMemoryMB: instanceMemoryMB
      }
      runtime: {
        name: 'node'
        version: nodeVersion
      }
    }
  }
}

resource settings 'Microsoft.Web/sites/config@2024-11-01' = {
  parent: site
  name: 'appsettings'
  properties: appSettings
}

// azd deploys with an Entra ID token; publishing user names and passwords are never needed.
resource ftpCredentials 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-11-01' = {
  parent: site
  name: 'ftp'
  properties: {
    allow: false
  }
}

resource scmCredentials 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-11-01' = {
  parent: site
  name: 'scm'
  properties: {
    allow: false
  }
}

output id string = site.id
output name string = site.name
output uri string = 'https://${site.properties.defaultHostName}'
