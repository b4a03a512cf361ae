// The queues an app's Service Bus functions use that the embedded emulator does not serve. The emulator serves
// only the queues its config file declares (the official emulator's Config.json format), and a trigger on any
// other queue only finds out once its receiver is refused ("MessagingEntityNotFound"), one back-off warning at a
// time. So at start-up, when the devhost started the emulator, it names each queue that a trigger or an output
// binding on the emulator's connection uses and the config does not declare, with the file that would declare it.
import path from "node:path";
import { SERVICE_BUS_CONFIG_FILE, SERVICE_BUS_CONFIG_SETTING } from "../emulatorPlan";
import type { Registration } from "../functionsCore";
import type { HostLogger } from "../logger";
import { resolveAppSettingExpressions, resolveConnectionString } from "../settings";

/** The Service Bus emulator the devhost started: its connection string, and the config file it was given. */
export interface EmbeddedServiceBus {
  connectionString: string;
  /** Absolute path; undefined when it serves no queues. */
  configFile: string | undefined;
}

/** queue name (lower case) -> how it is named and who uses it ("trigger of submitOrder"). */
type QueueUses = Map<string, { name: string; uses: string[] }>;

export async function reportUndeclaredQueues(
  registrations: readonly Registration[],
  bus: EmbeddedServiceBus,
  appRoot: string,
  logger: HostLogger,
): Promise<void> {
  const used = queuesOnConnection(registrations, bus.connectionString);
  if (used.size === 0) return;
  const declared = await declaredQueues(bus.configFile);
  for (const [key, { name, uses }] of used) {
    if (declared.has(key)) continue; // entity names are case-insensitive
    logger.warn(undeclaredQueueMessage(name, uses, bus.configFile, appRoot));
  }
}

export function undeclaredQueueMessage(
  queue: string,
  uses: readonly string[],
  configFile: string | undefined,
  appRoot: string,
): string {
  const head = `Service Bus: queue "${queue}" (${uses.join(", ")}) is not declared`;
  if (configFile) {
    return `${head} in ${configFile}, so the emulator does not serve it: add it to a namespace's Queues there.`;
  }
  return (
    `${head}: the emulator has no config. Declare it in ${path.join(appRoot, SERVICE_BUS_CONFIG_FILE)} ` +
    `(or in the file the ${SERVICE_BUS_CONFIG_SETTING} setting names).`
  );
}

async function declaredQueues(configFile: string | undefined): Promise<Set<string>> {
  if (!configFile) return new Set();
  // Loaded only here, as the emulator itself is: a devhost without the emulator never loads it.
  const { loadEmulatorConfig, queueSettingsOf } = await import("../emulators/servicebus/config.js");
  return new Set(queueSettingsOf(loadEmulatorConfig(configFile)).map((queue) => queue.name.toLowerCase()));
}

/** The queues (not topics) of the Service Bus triggers and outputs whose connection is `connectionString`. */
function queuesOnConnection(registrations: readonly Registration[], connectionString: string): QueueUses {
  const queues: QueueUses = new Map();
  const add = (name: string, use: string): void => {
    const entry = queues.get(name.toLowerCase()) ?? { name, uses: [] };
    entry.uses.push(use);
    queues.set(name.toLowerCase(), entry);
  };
  for (const registration of registrations) {
    for (const binding of Object.values(registration.metadata.bindings)) {
      const type = binding.type.toLowerCase();
      const role = type === "servicebustrigger" ? "trigger" : type === "servicebus" ? "output" : undefined;
      if (!role || typeof binding.queueName !== "string") continue;
      // A binding whose queue or connection cannot be resolved is reported where its trigger or output is set up.
      try {
        const connection = typeof binding.connection === "string" ? binding.connection : undefined;
        if (resolveConnectionString(connection, "ServiceBus", registration.name) !== connectionString)
          continue;
        add(
          resolveAppSettingExpressions(binding.queueName, registration.name),
          `${role} of ${registration.name}`,
        );
      } catch {
        continue;
      }
    }
  }
  return queues;
}
