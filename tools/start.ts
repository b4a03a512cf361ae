/**
 * `npm start`: this app on the devhost, with the remote services simulator when the settings point at it. The
 * devhost itself starts the Service Bus and Cosmos DB emulators the settings point at; the simulator is this
 * app's own stand-in for its remote services, so this launcher starts it (on 127.0.0.1:7081, when a setting is a
 * URL there and nothing listens yet), then runs the devhost command line with the same options, and stops the
 * simulator after the devhost on Ctrl-C. `--no-emulators` starts neither.
 */
import path from "node:path";
import {
  findAppRoot,
  findLocalSettingsFile,
  parseCliArgs,
  readLocalSettings,
  resolveAppEntry,
  runCli,
} from "devhost";
import { startSimulator, type Simulator } from "./simulator";
import { planSimulator } from "./simulator/settings";

/**
 * The settings the devhost will run the app with (the settings file's values under the environment's), or
 * undefined when it will start no emulator or cannot start at all: it says why itself.
 */
function settingsToRunWith(argv: string[]): NodeJS.ProcessEnv | undefined {
  try {
    const cli = parseCliArgs(argv);
    if (cli.help || !cli.emulators) return undefined;
    const appEntry = resolveAppEntry(process.cwd(), cli.app);
    const file = cli.settings ? path.resolve(cli.settings) : findLocalSettingsFile(findAppRoot(appEntry));
    return { ...(file ? readLocalSettings(file).values : {}), ...process.env };
  } catch {
    return undefined;
  }
}

async function main(argv: string[]): Promise<void> {
  const settings = settingsToRunWith(argv);
  const plan = settings ? await planSimulator(settings) : { start: false as const };
  if (plan.note) process.stdout.write(`${plan.note}\n`);
  let simulator: Simulator | undefined;
  if (plan.start) simulator = await startSimulator({ port: plan.port });
  const stopSimulator = async (): Promise<void> => {
    await simulator?.stop();
  };
  const host = await runCli(argv, { onShutdown: stopSimulator });
  if (!host) await stopSimulator();
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`npm start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
