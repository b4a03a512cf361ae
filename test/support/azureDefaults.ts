/**
 * What the Azure deployment gives the app, read from the files that ship it, so tests of "the shipped Azure
 * settings" use them rather than a copy: the app settings main.bicep ships (infra/app-settings.json) and host.json's queue polling interval.
 */
import { readFileSync } from "node:fs";

/** The settings main.bicep gives the app in Azure before any override: infra/app-settings.json, which it reads. */
export function azureTuningDefaults(): Record<string, string> {
  return (JSON.parse(readFileSync("infra/app-settings.json", "utf8")) as { shipped: Record<string, string> })
    .shipped;
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
