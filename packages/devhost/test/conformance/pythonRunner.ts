/**
 * The vitest side of the Python conformance suite: finds a Python that has azure-servicebus and uamqp
 * (Debian's python3-azure and python3-uamqp install them for /usr/bin/python3, which may not be the
 * python3 first on PATH), runs a unittest script, and reads unittest's verbose report.
 */
import { probe, runCommand, type CommandResult } from "../support/command";

export interface PythonServiceBus {
  python: string;
  /** e.g. "azure-servicebus 7.8.2, uamqp 1.5.3" */
  versions: string;
}

const CANDIDATES = ["python3", "/usr/bin/python3"];
const VERSION_PROBE =
  "import azure.servicebus, uamqp; print('azure-servicebus ' + azure.servicebus.__version__ + ', uamqp ' + uamqp.__version__)";

/** The first Python that imports both modules, or undefined. */
export function findPythonServiceBus(): PythonServiceBus | undefined {
  for (const python of CANDIDATES) {
    const versions = probe(python, ["-c", VERSION_PROBE]);
    if (versions) return { python, versions };
  }
  return undefined;
}

export interface UnittestResult extends CommandResult {
  ran: number;
  /** unittest's closing verdict: "OK", "OK (skipped=1)", "FAILED (failures=1)", or "" when it never got there. */
  verdict: string;
  /** Each test that failed or raised, as unittest names it. */
  notPassed: string[];
}

export async function runUnittest(
  python: string,
  script: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<UnittestResult> {
  const result = await runCommand(python, [script], {
    env: { PYTHONDONTWRITEBYTECODE: "1", ...env },
    timeoutMs,
  });
  const ran = Number(/^Ran (\d+) tests? in /m.exec(result.output)?.[1] ?? 0);
  const verdict = /^(OK(?: \(.*\))?|FAILED \(.*\))$/m.exec(result.output)?.[1] ?? "";
  // unittest heads each failure's traceback with "FAIL: <test>" or "ERROR: <test>".
  const notPassed = [...result.output.matchAll(/^(?:FAIL|ERROR|UNEXPECTED SUCCESS): .+$/gm)].map(
    (line) => line[0],
  );
  return { ...result, ran, verdict, notPassed };
}
