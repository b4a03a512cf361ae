/**
 * What the Azure deployment gives the app, read from the files that ship it, so tests of "the shipped Azure
 * settings" use them rather than a copy: main.bicep's tuning defaults and host.json's queue polling interval.
 */
import { readFileSync } from "node:fs";

/** The tuning defaults main.bicep gives the app in Azure (its tuningDefaults variable). */
export function azureTuningDefaults(): Record<string, string> {
  const bicep = readFileSync("infra/main.bicep", "utf8");
  const block = /var tuningDefaults = \{([\s\S]*?)\n\}/.exec(bicep)?.[1];
  if (!block) throw new Error("infra/main.bicep has no `var tuningDefaults = { ... }` block");
  return Object.fromEntries([...block.matchAll(/^\s*([A-Z_]+): '([^']*)'/gm)].map((m) => [m[1]!, m[2]!]));
}

/** host.json's durableTask.storageProvider.maxQueuePollingInterval, in seconds (the extension's default: 30). */
export function queuePollingSeconds(): number {
  const host = JSON.parse(readFileSync("host.json", "utf8")) as {
    extensions: { durableTask: { storageProvider?: { maxQueuePollingInterval?: string } } };
  };
  const span = host.extensions.durableTask.storageProvider?.maxQueuePollingInterval ?? "00:00:30";
  const [h, m, s] = span.split(":").map(Number);
  return h! * 3600 + m! * 60 + s!;
}
