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

const code = (text: string): string => `\`${text}\``;
const table = (head: string[], rows: string[][]): string =>
  [head, head.map(() => "---"), ...rows].map((cells) => `| ${cells.join(" | ")} |`).join("\n");

/** What a step without undo shows where the undo operation would be. */
export const NO_UNDO = "— (no undo)";

/** docs/architecture.md: the steps of order v1, in order, each undone in reverse unless it declares no undo. */
export function renderProcessSteps(): string {
  return table(
    ["#", "Step", "Service", "Does", "Undone by"],
    orderWorkflowV1.steps.map((s, i) => [
      String(i + 1),
      code(s.name),
      code(s.agent),
      code(`${s.agent}/${s.doOperation}`),
      s.undoOperation === undefined ? NO_UNDO : code(`${s.agent}/${s.undoOperation}`),
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

/**
 * docs/configuration.md: each service's own `<SERVICE>_URL`, and where the service is while it is unset:
 * `reachedAt(service)`, under the default REMOTE_SERVICES_URL.
 */
export function renderServiceUrlSettings(reachedAt: (service: string) => string): string {
  return table(
    ["Setting", "Where the service is while unset", "Meaning"],
    AGENT_NAMES.map((s) => [
      code(serviceUrlSetting(s)),
      code(reachedAt(s)),
      `Base URL of the ${s} service in place of \`REMOTE_SERVICES_URL\`/${s}, as a \`SERVICE_URLS\` entry gives it. ${SERVICES[s].summary}`,
    ]),
  );
}
