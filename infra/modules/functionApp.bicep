// The function app on the Flex Consumption plan (Linux, Node.js 22), running as the user-assigned
// identity. Its package is pulled from a blob container with that identity, and every connection
// in its app settings is identity-based: there is no key or secret in the settings, only a Key Vault
// reference, which the platform resolves with the same identity.

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

@description('App settings (name -> value). Values must be plain strings: no secrets (a secret is a Key Vault reference), identities only.')
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

@description('Always-ready instances per function group or function ({ name, instanceCount }); billed while idle.')
param alwaysReady { name: string, instanceCount: int }[] = []

@description('Client id of the Entra ID app registration operators sign in with (infra/scripts/operator-app.sh). Empty: no sign-in, and the operator routes answer 503.')
param operatorAppClientId string = ''

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
    // Key Vault references resolve with the system-assigned identity unless told otherwise; the app has none.
    keyVaultReferenceIdentity: identityId
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
        alwaysReady: alwaysReady
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

// Operators sign in with Entra ID through the platform's authentication, which then passes the
// signed-in user to the app as x-ms-client-principal (and strips that header from anything a client
// sends). Unauthenticated requests still reach the app: machine clients use function keys on their
// routes, /api/health is open, and the operator routes answer 401/403 themselves (OPERATOR_AUTH).
// No client secret: sign-in uses the ID token of the OpenID Connect implicit flow, which the app
// registration allows; bearer tokens for the app's API are validated against its two audiences.
resource auth 'Microsoft.Web/sites/config@2024-11-01' = if (!empty(operatorAppClientId)) {
  parent: site
  name: 'authsettingsV2'
  properties: {
    platform: {
      enabled: true
    }
    globalValidation: {
      requireAuthentication: false
      unauthenticatedClientAction: 'AllowAnonymous'
    }
    httpSettings: {
      requireHttps: true
      forwardProxy: {
        convention: 'NoProxy'
      }
    }
    identityProviders: {
      azureActiveDirectory: {
        enabled: true
        registration: {
          openIdIssuer: '${environment().authentication.loginEndpoint}${tenant().tenantId}/v2.0'
          clientId: operatorAppClientId
        }
        validation: {
          allowedAudiences: [
            'api://${operatorAppClientId}'
            operatorAppClientId
          ]
        }
      }
    }
    login: {
      tokenStore: {
        enabled: false
      }
    }
  }
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
@description('Where Entra ID sends operators back after sign-in; the app registration must list it.')
output authRedirectUri string = 'https://${site.properties.defaultHostName}/.auth/login/aad/callback'
