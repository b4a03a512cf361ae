// What the host does when the worker dies: an exception or rejection that no invocation caught ends the Node.js
// worker process; the host logs it, fails the invocations that were running in it, and starts a new worker, which
// loads the app again. The devhost runs the app in its own process, so it catches what would have ended the
// worker, and plays the rest: it fails the invocations in progress and loads the app's modules afresh, so that
// module state is lost as it would be. Only where it is the process's owner (the CLI): in a test runner, the
// runner's own handlers must see such errors.
import { reloadApp, type LoadedApp } from "../functionsCore";
import type { Invoker } from "../invocation";
import type { HostLogger } from "../logger";
import { runAppStartHooks } from "./appHooks";
import type { ShutdownSteps } from "./shutdown";

export interface WorkerCrashOptions {
  app: LoadedApp;
  appRoot: string;
  invoker: Invoker;
}

export function restartWorkerOnCrash(
  options: WorkerCrashOptions,
  logger: HostLogger,
  shutdown: ShutdownSteps,
): void {
  const { app, invoker } = options;
  let restarting: Promise<void> | undefined;
  const restart = async (): Promise<void> => {
    await reloadApp(app);
    await runAppStartHooks(app, options.appRoot);
    logger.info(`Worker restarted: the app registered ${app.functions.size} functions.`);
  };
  const onCrash = (thrown: unknown): void => {
    const error = thrown instanceof Error ? thrown : new Error(String(thrown));
    logger.error(
      `The worker process would have exited: an uncaught exception in the app: ${error.stack ?? error.message}`,
    );
    logger.warn("Failing the invocations in progress and restarting the worker (the app is loaded again).");
    invoker.failInFlight(error);
    restarting ??= restart()
      .catch((failure: unknown) =>
        logger.error(
          `The worker could not restart: ${failure instanceof Error ? failure.message : String(failure)}`,
        ),
      )
      .finally(() => (restarting = undefined));
  };
  process.on("uncaughtException", onCrash);
  process.on("unhandledRejection", onCrash);
  shutdown.push(() => {
    process.off("uncaughtException", onCrash);
    process.off("unhandledRejection", onCrash);
  });
}
