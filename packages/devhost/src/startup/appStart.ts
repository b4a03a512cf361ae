// Start-up phase 7: the app runs. appStart hooks first (before any trigger fires, as in the worker), then the
// durable engine, then the warmup function (a new instance runs it before it gets traffic), then the timers and
// receivers. Stopping reverses it: triggers and the server take nothing new
// and running invocations get the grace period, then the engine stops and the appTerminate hooks run.
import { VirtualClock } from "../durable";
import type { LoadedApp } from "../functionsCore";
import { runAppStartHooks, runAppTerminateHooks } from "./appHooks";
import type { RunningHttpServer } from "../triggers/http";
import type { HostRuntime } from "./runtime";
import type { ShutdownSteps } from "./shutdown";
import type { Triggers } from "./triggers";

export interface AppStartOptions {
  app: LoadedApp;
  appRoot: string;
  runtime: HostRuntime;
  triggers: Triggers;
  server: RunningHttpServer;
  /** How long stopping lets running invocations finish. */
  graceMs: number;
}

export async function startApp(options: AppStartOptions, shutdown: ShutdownSteps): Promise<void> {
  const { app, runtime, triggers, server, graceMs } = options;
  await runAppStartHooks(app, options.appRoot);
  shutdown.push(() => runAppTerminateHooks(app));

  await runtime.engine.start();
  shutdown.push(() => runtime.engine.stop());
  // Triggers stop first (pushed last, so they run first), so nothing new starts while the rest winds down.
  shutdown.push(async () => {
    await Promise.all([triggers.stop(graceMs), server.stop(graceMs)]);
    await runtime.invoker.drain(graceMs);
  });
  if (runtime.clock instanceof VirtualClock) {
    // Advancing a virtual clock waits for the timer invocations it caused, so that one advance() plays a chain
    // of occurrences in order, as the engine's durable timers do.
    shutdown.push(
      runtime.clock.attach(async () => {
        for (const timer of triggers.timers) await timer.idle();
      }),
    );
  }
  // A failed warmup is logged by the invoker and stops nothing: in Azure the instance serves anyway.
  await triggers.warmup?.run();
  triggers.start();
}
