/**
 * The generated sections of the docs that list the process's steps and services (tools/docSections.ts), rendered
 * from the declaration in src/domain/process.ts: a fork that adds or removes a step runs `npm run docs:update`
 * instead of editing tables by hand.
 */
import {
  AGENT_NAMES,
  SERVICES,
  agentFunctionName,
  agentRequestQueue,
  orderWorkflowV1,
  serviceUrlSetting,
} from "../src/domain";
import { placeholderServiceUrl } from "./processFiles";

const code = (text: string): string => `\`${text}\``;
const table = (head: string[], rows: string[][]): string =>
  [head, head.map(() => "---"), ...rows].map((cells) => `| ${cells.join(" | ")} |`).join("\n");

/** docs/architecture.md: the steps of order v1, in order, each undone in reverse. */
export function renderProcessSteps(): string {
  return table(
    ["#", "Step", "Service", "Does", "Undone by"],
    orderWorkflowV1.steps.map((s, i) => [
      String(i + 1),
      code(s.name),
      code(s.agent),
      code(`${s.agent}/${s.doOperation}`),
      code(`${s.agent}/${s.undoOperation}`),
    ]),
  );
}

/** docs/contract.md: each service with the names the contract fixes for it. */
export function renderServiceContract(): string {
  return table(
    ["Service", "What it does", "Operations", "Agent function", "Request queue", "URL setting"],
    AGENT_NAMES.map((s) => [
      code(s),
      SERVICES[s].summary,
      SERVICES[s].operations.map(code).join(", "),
      code(agentFunctionName(s)),
      code(agentRequestQueue(s)),
      code(serviceUrlSetting(s)),
    ]),
  );
}

/** docs/configuration.md: the `<SERVICE>_URL` settings with their local defaults. */
export function renderServiceUrlSettings(defaultOf: (setting: string) => string): string {
  return table(
    ["Setting", "Default", "Meaning"],
    AGENT_NAMES.map((s) => [
      code(serviceUrlSetting(s)),
      code(defaultOf(serviceUrlSetting(s))),
      `Base URL of the ${s} service (the local simulator by default). ${SERVICES[s].summary}`,
    ]),
  );
}

/** docs/deployment.md: how azd hands each service's URL to infra/main.bicep. */
export function renderServiceUrlParameters(): string {
  return table(
    ["azd environment variable", "`serviceUrls` key", "App setting", "Until set"],
    AGENT_NAMES.map((s) => [
      code(serviceUrlSetting(s)),
      code(s),
      code(serviceUrlSetting(s)),
      code(placeholderServiceUrl(s)),
    ]),
  );
}
