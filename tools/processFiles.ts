/**
 * infra/process.json, the one file outside src/ that lists the process's services, as the declaration
 * (src/domain/process.ts) says it should read, and the words that name what a file lacks or has left over.
 * test/unit/process.test.ts compares the file with it; `npm run docs:update` writes it. Pure: reading and writing
 * the file is the caller's job.
 */
import { AGENT_NAMES, SERVICES, agentFunctionName, agentRequestQueue } from "../src/domain";

/** A service's own URL setting: the service name upper-cased, then `_URL` (serviceUrlSetting). */
export const SERVICE_URL_SETTING = /^[A-Z]+_URL$/;
/** An agent request queue: the service name, then `-requests` (agentRequestQueue). */
export const REQUEST_QUEUE = /^[a-z]+-requests$/;

/** infra/process.json: what infra/main.bicep and the tests of test/infra know of the process. */
export function processJson() {
  return {
    $comment:
      "Generated from src/domain/process.ts by `npm run docs:update`: edit the declaration, never this file. Read by infra/main.bicep, infra/modules/servicebus.bicep, infra/scripts/check-service-urls.sh and the tests of test/infra.",
    services: AGENT_NAMES.map((name) => ({
      name,
      summary: SERVICES[name].summary,
      operations: SERVICES[name].operations,
      requestQueue: agentRequestQueue(name),
      agentFunction: agentFunctionName(name),
    })),
  };
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
