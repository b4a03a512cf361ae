/**
 * The files outside src/ that list the process's services, as the declaration (src/domain/process.ts) says they
 * should read. test/unit/process.test.ts compares each file with these and names what is missing or left over;
 * `npm run docs:update` writes them. Pure: reading and writing the files is the caller's job.
 */
import {
  AGENT_NAMES,
  SERVICES,
  agentFunctionName,
  agentRequestQueue,
  serviceUrlSetting,
} from "../src/domain";

/** A setting that holds a service's base URL: the service name upper-cased, then `_URL` (serviceUrlSetting). */
export const SERVICE_URL_SETTING = /^[A-Z]+_URL$/;
/** An agent request queue: the service name, then `-requests` (agentRequestQueue). */
export const REQUEST_QUEUE = /^[a-z]+-requests$/;

/** Where an Azure deployment points a service until its URL is set: a reserved domain that never resolves. */
export const placeholderServiceUrl = (service: string): string => `https://${service}.example.invalid`;

/** infra/process.json: what infra/main.bicep and the tests of test/infra know of the process. */
export function processJson() {
  return {
    $comment:
      "Generated from src/domain/process.ts by `npm run docs:update`: edit the declaration, never this file. Read by infra/main.bicep and the tests of test/infra.",
    services: AGENT_NAMES.map((name) => ({
      name,
      summary: SERVICES[name].summary,
      operations: SERVICES[name].operations,
      requestQueue: agentRequestQueue(name),
      agentFunction: agentFunctionName(name),
      urlSetting: serviceUrlSetting(name),
      placeholderUrl: placeholderServiceUrl(name),
    })),
  };
}

/** The serviceUrls parameter of infra/main.parameters.json: each service's URL from its azd environment variable. */
export function serviceUrlsParameter(): { value: Record<string, string> } {
  return { value: Object.fromEntries(AGENT_NAMES.map((s) => [s, `\${${serviceUrlSetting(s)}}`])) };
}

/** Names in `actual` that the declaration wants and lacks, and those it has that no declared service explains. */
export function compareNames(expected: readonly string[], actual: readonly string[]) {
  return {
    missing: expected.filter((n) => !actual.includes(n)),
    extra: actual.filter((n) => !expected.includes(n)),
  };
}

/** `a, b`, or "none". */
const list = (names: readonly string[]): string => (names.length > 0 ? names.join(", ") : "none");

/** One sentence on a file that disagrees with the declaration; "" when it agrees. */
export function disagreement(
  file: string,
  what: string,
  { missing, extra }: { missing: string[]; extra: string[] },
): string {
  if (missing.length === 0 && extra.length === 0) return "";
  return (
    `${file} disagrees with src/domain/process.ts: ` +
    [
      missing.length > 0 ? `it lacks the ${what} ${list(missing)} (add it there)` : "",
      extra.length > 0
        ? `it has the ${what} ${list(extra)}, for no declared service (remove it there, or declare the service)`
        : "",
    ]
      .filter(Boolean)
      .join("; ") +
    "; `npm run docs:update` rewrites it"
  );
}

interface EmulatorQueue {
  Name: string;
  Properties: Record<string, unknown>;
}

/**
 * The Service Bus emulator config with one request queue per declared service: missing ones added beside the
 * others with the first request queue's properties, undeclared ones removed, every other queue left as it is.
 */
export function withDeclaredRequestQueues<
  T extends { UserConfig: { Namespaces: { Queues: EmulatorQueue[] }[] } },
>(config: T): T {
  const copy = structuredClone(config);
  const namespace = copy.UserConfig.Namespaces[0]!;
  const queues = namespace.Queues;
  const requests = queues.filter((q) => REQUEST_QUEUE.test(q.Name));
  const template = requests[0]?.Properties;
  if (!template) throw new Error("the Service Bus emulator config has no *-requests queue to copy");
  const at = queues.indexOf(requests[0]!);
  const declared = AGENT_NAMES.map(
    (s) =>
      requests.find((q) => q.Name === agentRequestQueue(s)) ?? {
        Name: agentRequestQueue(s),
        Properties: template,
      },
  );
  const others = queues.filter((q) => !REQUEST_QUEUE.test(q.Name));
  namespace.Queues = [...others.slice(0, at), ...declared, ...others.slice(at)];
  return copy;
}

/** local.settings.sample.json's Values with one `<SERVICE>_URL` per declared service, where the first one was. */
export function withDeclaredUrlSettings(values: Record<string, string>, url: (service: string) => string) {
  const entries = Object.entries(values);
  const first = entries.findIndex(([name]) => SERVICE_URL_SETTING.test(name));
  const declared = AGENT_NAMES.map((s) => [serviceUrlSetting(s), values[serviceUrlSetting(s)] ?? url(s)]) as [
    string,
    string,
  ][];
  const others = entries.filter(([name]) => !SERVICE_URL_SETTING.test(name));
  const at = first < 0 ? others.length : first;
  return Object.fromEntries([...others.slice(0, at), ...declared, ...others.slice(at)]);
}

/** The lines of .github/workflows/azure-dev.yml that hand each `<SERVICE>_URL` repository variable to azd. */
const WORKFLOW_URL_LINE = /^( +)([A-Z]+_URL): \$\{\{ vars\.\2 \}\}\n/gm;

/** The `<SERVICE>_URL` variables the deploy workflow passes on. */
export const workflowUrlSettings = (text: string): string[] =>
  [...text.matchAll(WORKFLOW_URL_LINE)].map((m) => m[2]!);

/** The deploy workflow with one `<SERVICE>_URL` line per declared service, in place of the ones it had. */
export function withDeclaredWorkflowUrls(text: string): string {
  const lines = [...text.matchAll(WORKFLOW_URL_LINE)];
  if (lines.length === 0) throw new Error("azure-dev.yml passes no <SERVICE>_URL variable to replace");
  const indent = lines[0]![1]!;
  const block = AGENT_NAMES.map(
    (s) => `${indent}${serviceUrlSetting(s)}: \${{ vars.${serviceUrlSetting(s)} }}\n`,
  );
  let first = true;
  return text.replace(WORKFLOW_URL_LINE, () => {
    if (!first) return "";
    first = false;
    return block.join("");
  });
}
