// `npx devhost`: run a compiled Functions app on this machine without the func CLI.
//   devhost [--app <entry.js>] [--settings <file>] [--data-dir <dir>] [--no-emulators] [--port <n>]
//           [--signed-in-as <name[:role,role]>] [--latency-profile <name>] [--latency-seed <n>]
//           [--time-skipping] [--verbose]
// Ctrl-C (SIGINT) or SIGTERM stops it cleanly: triggers first (running invocations may finish), then the
// durable engine and the emulators it started.
import path from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_PORT, startDevHost, type DevHost } from "./host";
import { parseSignedInAs, type ClientPrincipal } from "./auth";
import {
  LATENCY_PROFILE_SETTING,
  LATENCY_SEED_SETTING,
  parseLatencyProfileName,
  parseLatencySeed,
} from "./latency/options";
import type { LatencyProfileName } from "./latency/profiles";
import { consoleLogSink } from "./logger";
import { findAppRoot, resolveAppEntry } from "./settings";

const USAGE = `Usage: devhost [options]

Runs a compiled Azure Functions app (Node.js v4 programming model) locally: HTTP, timer and Service Bus
triggers, Durable Functions, and the embedded emulators its settings point at.

Options:
  --app <entry.js>    app entry (default: "main" of package.json in the current directory)
  --settings <file>   settings file (default: local.settings.json next to host.json, else local.settings.sample.json)
  --data-dir <dir>    durable task hub and timer status (default: <app root>/.devhost)
  --port <n>          HTTP port (default: Host.LocalHttpPort of the settings file, else ${DEFAULT_PORT}; 0 = any free port)
  --no-emulators      do not start any embedded emulator
  --signed-in-as <name[:role,role]>
                      HTTP requests without x-ms-client-principal act as this signed-in user, as behind the
                      platform's authentication (default: the DEVHOST_SIGNED_IN_AS setting, else nobody)
  --latency-profile <none|azure-storage|durable-task-scheduler>
                      delay each hop as Azure would (docs/latency.md; default: the ${LATENCY_PROFILE_SETTING}
                      setting, else none)
  --latency-seed <n>  seed of the profile's delays, to replay a run (default: the ${LATENCY_SEED_SETTING}
                      setting, else random; the start-up line shows it)
  --time-skipping     skip time whenever the host is idle: durable timers, timer triggers and Service Bus
                      schedules come due at once (docs/time-skipping.md; for tests, default real time)
  --verbose           also print debug and trace lines
  --help              this text`;

export interface CliOptions {
  app?: string;
  settings?: string;
  dataDir?: string;
  port?: number;
  signedInAs?: ClientPrincipal;
  latencyProfile?: LatencyProfileName;
  latencySeed?: number;
  timeSkipping?: boolean;
  emulators: boolean;
  verbose: boolean;
  help: boolean;
}

export function parseCliArgs(argv: string[]): CliOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      app: { type: "string" },
      settings: { type: "string" },
      "data-dir": { type: "string" },
      port: { type: "string" },
      "no-emulators": { type: "boolean", default: false },
      "signed-in-as": { type: "string" },
      "latency-profile": { type: "string" },
      "latency-seed": { type: "string" },
      "time-skipping": { type: "boolean", default: false },
      verbose: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  let port: number | undefined;
  if (values.port !== undefined) {
    if (!/^\d+$/.test(values.port) || Number(values.port) > 65535) {
      throw new Error(`--port: "${values.port}" is not a port number (0-65535).`);
    }
    port = Number(values.port);
  }
  return {
    ...(values.app ? { app: values.app } : {}),
    ...(values.settings ? { settings: values.settings } : {}),
    ...(values["data-dir"] ? { dataDir: values["data-dir"] } : {}),
    ...(port !== undefined ? { port } : {}),
    ...(values["signed-in-as"] ? { signedInAs: parseSignedInAs(values["signed-in-as"]) } : {}),
    ...(values["latency-profile"] !== undefined
      ? { latencyProfile: parseLatencyProfileName(values["latency-profile"], "--latency-profile") }
      : {}),
    ...(values["latency-seed"] !== undefined
      ? { latencySeed: parseLatencySeed(values["latency-seed"], "--latency-seed") }
      : {}),
    ...(values["time-skipping"] ? { timeSkipping: true } : {}),
    emulators: !values["no-emulators"],
    verbose: values.verbose,
    help: values.help,
  };
}

export interface RunCliOptions {
  /**
   * Runs after the host has stopped on SIGINT/SIGTERM, or after a refused start, before the process exits (a
   * wrapper's own services).
   */
  onShutdown?: () => Promise<void>;
}

/**
 * The devhost command line: parses `argv`, starts the host, and stops it cleanly on SIGINT or SIGTERM.
 * Resolves with the running host, or undefined for --help. Bad options and a refused start end the process
 * (codes 2 and 1).
 */
export async function runCli(
  argv: string[] = process.argv.slice(2),
  options: RunCliOptions = {},
): Promise<DevHost | undefined> {
  let cli: CliOptions;
  try {
    cli = parseCliArgs(argv);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return exitRefused(2, options);
  }
  if (cli.help) {
    process.stdout.write(`${USAGE}\n`);
    return undefined;
  }

  let host: DevHost;
  try {
    const appEntry = resolveAppEntry(process.cwd(), cli.app);
    const appRoot = findAppRoot(appEntry);
    const settingsFile = cli.settings ? path.resolve(cli.settings) : undefined;
    const dataDir = path.resolve(cli.dataDir ?? path.join(appRoot, ".devhost"));
    // The worker runs with the app root as its working directory: an app reading a file beside it by a
    // relative path finds it wherever the devhost was started from.
    process.chdir(appRoot);
    host = await startDevHost({
      appEntry,
      ...(settingsFile ? { settingsFile } : {}),
      dataDir,
      ...(cli.port !== undefined ? { port: cli.port } : {}),
      ...(cli.signedInAs ? { signedInAs: cli.signedInAs } : {}),
      ...(cli.latencyProfile ? { latencyProfile: cli.latencyProfile } : {}),
      ...(cli.latencySeed !== undefined ? { latencySeed: cli.latencySeed } : {}),
      ...(cli.timeSkipping ? { timeSkipping: true } : {}),
      emulators: cli.emulators,
      restartWorkerOnCrash: true,
      log: consoleLogSink(cli.verbose ? "trace" : "information"),
    });
  } catch (error) {
    process.stderr.write(`devhost could not start: ${(error as Error).message}\n`);
    return exitRefused(1, options);
  }

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) {
      process.stderr.write(`${signal} again: exiting without waiting.\n`);
      process.exit(1);
    }
    stopping = true;
    process.stdout.write(`${signal} received, stopping (press Ctrl-C again to exit at once)...\n`);
    host
      .stop()
      .then(() => options.onShutdown?.())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          process.stderr.write(`devhost stopped with an error: ${(error as Error).message}\n`);
          process.exit(1);
        },
      );
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  return host;
}

/**
 * Ends the process after a refused start, at once. Whatever the start left behind must not keep it alive: the
 * phases undo themselves, but not everything can be undone (with HTTP streaming on, @azure/functions starts an HTTP
 * server of its own as the app loads, and offers no way to close it).
 */
async function exitRefused(code: number, options: RunCliOptions): Promise<never> {
  try {
    await options.onShutdown?.();
  } catch (error) {
    process.stderr.write(`devhost stopped with an error: ${(error as Error).message}\n`);
  }
  process.exit(code);
}

if (require.main === module) void runCli();
