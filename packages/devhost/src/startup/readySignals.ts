// The two lines `func start` prints once the host is up, which tools that run it in a child process wait for
// before they send anything. "Worker process started and initialized." is logged when the language worker has
// answered its init (azure-functions-host, RpcFunctionInvocationDispatcher.cs: "Do not change this log message. Vs
// Code relies on this to figure out when to attach debugger"); "Host lock lease acquired by instance ID '...'." when
// the host holds the primary-host lock, a blob lease in the AzureWebJobsStorage account (PrimaryHostCoordinator.cs).
// Core Tools shows these two even when it hides the host's other lines (azure-functions-core-tools,
// ColoredConsoleLogger.cs, allowedLogsPrefixes). Microsoft's Node.js end-to-end harness
// (azure-functions-nodejs-e2e-tests, src/global.test.ts) waits for the lock line before its first test. The
// devhost's own "Host started:" line comes after them.
import { createHash } from "node:crypto";
import os from "node:os";

export const WORKER_READY_MESSAGE = "Worker process started and initialized.";

/**
 * The lock line, only for an app whose settings name a storage account: without AzureWebJobsStorage the host
 * takes no lease and prints none. The devhost is the one instance, so it is the primary one as soon as it runs.
 */
export function hostLockMessage(env: NodeJS.ProcessEnv, hostName = os.hostname()): string | undefined {
  if (!env.AzureWebJobsStorage?.trim()) return undefined;
  return `Host lock lease acquired by instance ID '${localInstanceId(hostName)}'.`;
}

/**
 * The instance id in the shape `func start` shows it (32 upper-case hex digits, zero-padded:
 * '0000000000000000000000008A10FEBD'), stable for one machine as the host's is.
 */
export function localInstanceId(hostName: string): string {
  const hash = createHash("sha256").update(hostName).digest("hex").slice(0, 8);
  return hash.toUpperCase().padStart(32, "0");
}
