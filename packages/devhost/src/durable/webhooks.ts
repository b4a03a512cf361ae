// Where the durable HTTP API lives and the URLs the Durable extension hands out for it. The extension serves
// one API twice: at /runtime/webhooks/durabletask/ on the app's port (the public webhooks that management URLs,
// such as statusQueryGetUri, point at), where the host requires the extension's system key, and at its local RPC
// endpoint, /durabletask/ on a loopback port of its own (the `rpcBaseUrl` that durable-functions' DurableClient
// calls, which passes no key). The webhook URLs it hands out carry the key as `code=`, after taskHub and
// connection, as the extension appends the query of the webhook URL the host gives it.

export const RPC_PATH = "/durabletask/";
export const WEBHOOK_PATH = "/runtime/webhooks/durabletask/";
/** Path prefixes to mount the durable HTTP API at. */
export const DURABLE_HTTP_PATHS: readonly string[] = [RPC_PATH, WEBHOOK_PATH];

/** The id placeholder of the binding's management URLs, which the client replaces with an instance id. */
const INSTANCE_PLACEHOLDER = "INSTANCEID";
/** The connection name the extension's Azure Storage provider reports by default. */
const DEFAULT_CONNECTION = "Storage";

export interface HubAddress {
  /** http://host:port the caller reached the host at. */
  origin: string;
  taskHubName: string;
  /** The system key the webhooks require; none: URLs without `code=` (an engine without a host in front). */
  systemKey?: string;
  /** http://host:port of the local RPC endpoint; default `origin`. */
  rpcOrigin?: string;
}

export interface ManagementUrls {
  id: string;
  statusQueryGetUri: string;
  sendEventPostUri: string;
  terminatePostUri: string;
  rewindPostUri: string;
  purgeHistoryDeleteUri: string;
  restartPostUri: string;
  suspendPostUri: string;
  resumePostUri: string;
}

const webhookBase = (origin: string): string =>
  `${origin.replace(/\/+$/, "")}${WEBHOOK_PATH.replace(/\/$/, "")}`;

/** The management URLs of one instance, as HttpApiHandler builds them (taskHub and connection in every query). */
export function managementUrls(hub: HubAddress, instanceId: string): ManagementUrls {
  return buildManagementUrls(hub, encodeURIComponent(instanceId), instanceId);
}

/** `code=<key>`, or "" without a key: the query every webhook URL ends with. */
function keyQuery(hub: HubAddress): string {
  return hub.systemKey === undefined ? "" : `code=${encodeURIComponent(hub.systemKey)}`;
}

function buildManagementUrls(hub: HubAddress, idInPath: string, id: string): ManagementUrls {
  const instance = `${webhookBase(hub.origin)}/instances/${idInPath}`;
  const key = keyQuery(hub);
  const query = `taskHub=${encodeURIComponent(hub.taskHubName)}&connection=${DEFAULT_CONNECTION}${key ? `&${key}` : ""}`;
  return {
    id,
    statusQueryGetUri: `${instance}?${query}`,
    sendEventPostUri: `${instance}/raiseEvent/{eventName}?${query}`,
    terminatePostUri: `${instance}/terminate?reason={text}&${query}`,
    rewindPostUri: `${instance}/rewind?reason={text}&${query}`,
    purgeHistoryDeleteUri: `${instance}?${query}`,
    restartPostUri: `${instance}/restart?${query}`,
    suspendPostUri: `${instance}/suspend?reason={text}&${query}`,
    resumePostUri: `${instance}/resume?reason={text}&${query}`,
  };
}

/**
 * The body of the extension's check-status response (the 202 of a start or restart): the management URLs
 * without rewindPostUri, which the extension leaves out of it.
 */
export function checkStatusBody(urls: ManagementUrls): Omit<ManagementUrls, "rewindPostUri"> {
  const { rewindPostUri: _rewind, ...rest } = urls;
  return rest;
}

/** The durableClient input binding's value, shaped as the extension serializes it for out-of-process workers. */
export function clientBindingData(hub: HubAddress): Record<string, unknown> {
  const base = webhookBase(hub.origin);
  const orchestrators = `${base}/orchestrators/{functionName}[/{instanceId}]`;
  // The extension appends the webhook URL's query (the system key) after "?" and "&", and hands it on as the
  // query every webhook call needs.
  const key = keyQuery(hub);
  return {
    taskHubName: hub.taskHubName,
    creationUrls: {
      createNewInstancePostUri: `${orchestrators}?${key}`,
      createAndWaitOnNewInstancePostUri: `${orchestrators}?timeout={timeoutInSeconds}&pollingInterval={intervalInSeconds}&${key}`,
    },
    managementUrls: buildManagementUrls(hub, INSTANCE_PLACEHOLDER, INSTANCE_PLACEHOLDER),
    baseUrl: base,
    requiredQueryStringParameters: key,
    rpcBaseUrl: `${(hub.rpcOrigin ?? hub.origin).replace(/\/+$/, "")}${RPC_PATH}`,
  };
}
