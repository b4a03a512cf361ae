import { DefaultAzureCredential, ManagedIdentityCredential, type TokenCredential } from "@azure/identity";

export function credentialFor(clientId: string | undefined): TokenCredential {
  // A user-assigned identity is named by its client id; without one, DefaultAzureCredential also covers a
  // developer's `az login` when running locally against Azure resources.
  return clientId ? new ManagedIdentityCredential({ clientId }) : new DefaultAzureCredential();
}
