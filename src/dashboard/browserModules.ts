/**
 * The dashboard's browser code as the page loads it: the ES modules that `npm run build` compiles from
 * src/dashboard/browser (with the domain modules they import, src/dashboard/browser/tsconfig.json) into
 * dist/browser, beside the app's dist/src. GET /api/dashboard/{module} serves them by file name from one folder, as
 * the modules import each other ("./dom.js", "./timingBudget.js").
 *
 * They are read once, on first use, into a map by file name: a request only ever names a key of that map, so
 * nothing it sends reaches the file system, and only what the browser build emitted can be served.
 */
import fs from "node:fs";
import path from "node:path";

/** The modules the page loads with its <script type="module"> elements; these import the others. */
export const DASHBOARD_ENTRY_MODULES = ["main.js", "tuning.js"] as const;

/**
 * The browser build beside the compiled app: dist/browser for dist/src (the devhost, Azure), and browser/ of a
 * test build for its src/ (test/support/globalSetup.ts emits both).
 */
export const BROWSER_BUILD_DIR = path.resolve(__dirname, "..", "..", "browser");

function jsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return jsFiles(full);
    return entry.isFile() && entry.name.endsWith(".js") ? [full] : [];
  });
}

/** Every module of a browser build, by file name; throws when the build is missing or two files share a name. */
export function readBrowserModules(dir: string = BROWSER_BUILD_DIR): ReadonlyMap<string, string> {
  if (!fs.existsSync(dir)) {
    throw new Error(`the dashboard's browser modules are not built: no ${dir} (npm run build makes it)`);
  }
  const modules = new Map<string, string>();
  for (const file of jsFiles(dir)) {
    const name = path.basename(file);
    if (modules.has(name))
      throw new Error(`${dir}: two browser modules are named ${name}; the page loads one`);
    modules.set(name, fs.readFileSync(file, "utf8"));
  }
  for (const entry of DASHBOARD_ENTRY_MODULES) {
    if (!modules.has(entry)) throw new Error(`${dir}: no ${entry}, which the dashboard page loads`);
  }
  return modules;
}

let loaded: ReadonlyMap<string, string> | undefined;

/** The modules of this app's browser build, read on first use. */
export function browserModules(): ReadonlyMap<string, string> {
  loaded ??= readBrowserModules();
  return loaded;
}
