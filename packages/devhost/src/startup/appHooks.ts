// The app-level hooks, run as the Node.js worker runs them: appStart once the entry has loaded (src/startApp.ts of
// azure-functions-nodejs-worker) and appTerminate when the host stops the worker (src/eventHandlers/
// terminateWorker.ts). Both hand their hooks the same two objects: `hookData`, which only app-level hooks share
// (the worker's appLevelOnlyHookData), and `appHookData`, which invocation hooks see too. So what an appStart hook
// keeps in `context.hookData` is there for the appTerminate hook.
import type { LoadedApp } from "../functionsCore";

export async function runAppStartHooks(app: LoadedApp, functionAppDirectory: string): Promise<void> {
  for (const hook of [...app.hooks.appStart]) {
    await hook({ hookData: app.appLevelOnlyHookData, appHookData: app.appHookData, functionAppDirectory });
  }
}

export async function runAppTerminateHooks(app: LoadedApp): Promise<void> {
  for (const hook of [...app.hooks.appTerminate]) {
    await hook({ hookData: app.appLevelOnlyHookData, appHookData: app.appHookData });
  }
}
