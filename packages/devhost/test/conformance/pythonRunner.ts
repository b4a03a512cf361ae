/**
 * The vitest side of the Python conformance suite: finds the Python Service Bus clients to run it with,
 * runs a unittest script, and reads unittest's verbose report. Two clients, whose AMQP stacks differ:
 * - bookworm's: Debian 12's python3-azure and python3-uamqp (azure-servicebus 7.8.2 on uamqp, a C
 *   stack), installed for /usr/bin/python3, which may not be the python3 first on PATH;
 * - trixie's: Debian 13's python3-azure (azure-servicebus 7.14 on its own pure-Python stack, _pyamqp),
 *   which fetch-python-clients.sh unpacks into a directory put on PYTHONPATH.
 */
import path from "node:path";
import { probe, runCommand, type CommandResult } from "../support/command";

export interface PythonServiceBus {
  /** "bookworm" or "trixie": the Debian release the client comes from. */
  name: string;
  python: string;
  /** e.g. "azure-servicebus 7.8.2, uamqp 1.5.3" */
  versions: string;
  /** What the client needs in the environment (PYTHONPATH for trixie's). */
  env: Record<string, string>;
  /** Connects over TLS (7.8 knows nothing else); 7.14 takes UseDevelopmentEmulator and plain AMQP. */
  tls: boolean;
}

/** A client that was looked for, and either found or missing for the reason given. */
export type PythonClientLookup = { name: string; release: string } & (
  { client: PythonServiceBus; missing?: undefined } | { client?: undefined; missing: string }
);

const REPO = path.resolve(import.meta.dirname, "..", "..", "..", "..");
const FETCH_SCRIPT = "packages/devhost/test/conformance/fetch-python-clients.sh";

const CANDIDATES = ["python3", "/usr/bin/python3"];
const BOOKWORM_PROBE =
  "import azure.servicebus, uamqp; print('azure-servicebus ' + azure.servicebus.__version__ + ', uamqp ' + uamqp.__version__)";
// _pyamqp in the import makes sure the PYTHONPATH copy is the one imported, not the system's 7.8.2.
const TRIXIE_PROBE =
  "import azure.servicebus, azure.servicebus._pyamqp, azure.core; print('azure-servicebus ' + azure.servicebus.__version__ + ', pure-Python AMQP, azure-core ' + azure.core.__version__)";

/** Where fetch-python-clients.sh puts trixie's client (the same default as the script's). */
export function trixieSitePackages(): string {
  const root = process.env.PYTHON_CLIENTS_DIR || path.join(REPO, ".python-clients");
  return path.join(root, "trixie", "usr", "lib", "python3", "dist-packages");
}

/** Each Python Service Bus client the suite knows, found or with what is missing. */
export function findPythonServiceBusClients(): PythonClientLookup[] {
  return [findBookworm(), findTrixie()];
}

function findBookworm(): PythonClientLookup {
  const name = "bookworm";
  const release = "Debian 12 (bookworm)";
  for (const python of CANDIDATES) {
    const versions = probe(python, ["-c", BOOKWORM_PROBE]);
    if (versions) return { name, release, client: { name, python, versions, env: {}, tls: true } };
  }
  return {
    name,
    release,
    missing:
      "azure-servicebus and uamqp are not importable (Debian 12: apt-get install python3-azure python3-uamqp)",
  };
}

function findTrixie(): PythonClientLookup {
  const name = "trixie";
  const release = "Debian 13 (trixie)";
  const env = { PYTHONPATH: trixieSitePackages() };
  // trixie's python3-azure is built for Debian's python3; its modules are pure Python and import on
  // bookworm's 3.11 as well.
  for (const python of ["/usr/bin/python3", ...CANDIDATES]) {
    const versions = probe(python, ["-c", TRIXIE_PROBE], env);
    if (versions) return { name, release, client: { name, python, versions, env, tls: false } };
  }
  return {
    name,
    release,
    missing: `Debian 13's azure-servicebus is not in ${env.PYTHONPATH} (run ${FETCH_SCRIPT})`,
  };
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
