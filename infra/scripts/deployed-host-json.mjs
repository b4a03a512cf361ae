// Writes the host.json that is deployed for a durable backend: the repository's host.json, with the
// Durable extension's storageProvider set for that backend. The backend is chosen in host.json on disk,
// never by an AzureFunctionsJobHost__ app setting, because the platform's scale controller reads the
// durable trigger's configuration from the deployed host.json only: an override in the app settings
// would leave the durable function group scaled by the wrong backend's metrics (docs/deployment.md,
// "Durable backend").
//
//   AzureStorage          the repository's storageProvider (the task hub in the host storage account,
//                         with its queue polling interval), unchanged
//   DurableTaskScheduler  { type: azureManaged, connectionStringName: DURABLE_TASK_SCHEDULER_CONNECTION_STRING }
//                         (the app setting main.bicep writes); the Azure Storage options do not apply
//
// Usage: node infra/scripts/deployed-host-json.mjs <AzureStorage|DurableTaskScheduler> <out file>
//        (stage-package.sh passes the azd environment's DURABLE_BACKEND)

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const SCHEDULER_CONNECTION_SETTING = "DURABLE_TASK_SCHEDULER_CONNECTION_STRING";
export const BACKENDS = ["AzureStorage", "DurableTaskScheduler"];

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The deployed host.json for `backend`, as an object. */
export function deployedHostJson(
  backend,
  hostJson = JSON.parse(fs.readFileSync(path.join(root, "host.json"), "utf8")),
) {
  if (!BACKENDS.includes(backend)) {
    throw new Error(
      `durable backend "${backend}": expected one of ${BACKENDS.join(", ")} (azd env set DURABLE_BACKEND ...)`,
    );
  }
  const deployed = JSON.parse(JSON.stringify(hostJson));
  const durableTask = deployed.extensions?.durableTask;
  if (!durableTask) throw new Error("host.json has no extensions.durableTask section");
  if (backend === "DurableTaskScheduler") {
    durableTask.storageProvider = {
      type: "azureManaged",
      connectionStringName: SCHEDULER_CONNECTION_SETTING,
    };
  }
  return deployed;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [backend, out] = process.argv.slice(2);
  if (!backend || !out) {
    console.error(
      "usage: node infra/scripts/deployed-host-json.mjs <AzureStorage|DurableTaskScheduler> <out file>",
    );
    process.exit(2);
  }
  try {
    fs.writeFileSync(out, `${JSON.stringify(deployedHostJson(backend), null, 2)}\n`);
  } catch (err) {
    console.error(`deployed-host-json: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
