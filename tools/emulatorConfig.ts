/**
 * The Service Bus emulator's config, infra/servicebus-emulator.config.json (the official emulator's Config.json
 * format, which the devhost and `func start`'s emulator serve), is written from infra/servicebus-queues.json, where
 * one entry, `<service>-requests`, stands for the request queue of every service the process declares
 * (src/domain/process.ts). A service's queue thus comes and goes with its declaration, in no file of its own:
 * infra/modules/servicebus.bicep expands the same entry from infra/process.json for Azure. `npm run build` writes
 * the config (this file's entry point), and so does every test run (test/support/globalSetup.ts).
 */
import fs from "node:fs";
import path from "node:path";
import { AGENT_NAMES, agentRequestQueue } from "../src/domain";
import { repositoryRoot } from "./repository";

/** The queues, with the entry that stands for every service's request queue. */
export const QUEUES_TEMPLATE_FILE = "infra/servicebus-queues.json";
/** What the emulators serve: the template, expanded. */
export const EMULATOR_CONFIG_FILE = "infra/servicebus-emulator.config.json";
/** The template's entry for each declared service's request queue (agentRequestQueue). */
export const REQUEST_QUEUE_ENTRY = "<service>-requests";

export interface EmulatorQueue {
  Name: string;
  Properties: Record<string, unknown>;
}

export interface EmulatorConfig {
  UserConfig: { Namespaces: { Name: string; Queues: EmulatorQueue[] }[] };
}

/** The template with its `<service>-requests` entry replaced by one queue per declared service, in its place. */
export function emulatorConfigFrom(template: EmulatorConfig & { $comment?: string }): EmulatorConfig {
  const { $comment: _comment, ...config } = structuredClone(template);
  for (const namespace of config.UserConfig.Namespaces) {
    namespace.Queues = namespace.Queues.flatMap((queue) =>
      queue.Name === REQUEST_QUEUE_ENTRY
        ? AGENT_NAMES.map((service) => ({ Name: agentRequestQueue(service), Properties: queue.Properties }))
        : [queue],
    );
  }
  return config;
}

/**
 * Writes the emulator config under `root` from its template, unless it already reads so. Through a file of its
 * own and a rename: test runs that start together write it at once, and a devhost never reads half a file.
 */
export function writeEmulatorConfig(root: string = repositoryRoot()): string {
  const target = path.join(root, EMULATOR_CONFIG_FILE);
  const template = JSON.parse(
    fs.readFileSync(path.join(root, QUEUES_TEMPLATE_FILE), "utf8"),
  ) as EmulatorConfig;
  const text = `${JSON.stringify(emulatorConfigFrom(template), null, 2)}\n`;
  if (fs.existsSync(target) && fs.readFileSync(target, "utf8") === text) return target;
  const temporary = `${target}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, text);
  fs.renameSync(temporary, target);
  return target;
}

if (require.main === module) writeEmulatorConfig();
