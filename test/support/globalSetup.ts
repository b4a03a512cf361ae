/**
 * Once per test run: transpiles src/ so that end-to-end tests can load the app the way the Functions host does
 * (compiled CommonJS, required by path), the dashboard's browser code as `npm run build` emits it (ES modules in
 * browser/, beside src/, where the dashboard serves them from), and the devhost package (its src/ and bin/, laid
 * out as installed) so that tests can run the app on the devhost in child processes, without touching dist/. Type errors are the job
 * of `npm run typecheck`; this only strips types, which takes about a second.
 *
 * The output goes to .test-build/<hash of the sources>: test runs started at the same time (or while sources are
 * edited) each get a complete build of their own sources, and none deletes another's.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import type { TestProject } from "vitest/node";
import { writeEmulatorConfig } from "../../tools/emulatorConfig";

declare module "vitest" {
  export interface ProvidedContext {
    /** Where this run's transpiled app and devhost live (see e2e.ts APP_ENTRY and DEVHOST_CLI). */
    appBuildDir: string;
  }
}

const REPO = path.resolve(__dirname, "..", "..");
const BUILDS = path.join(REPO, ".test-build");
const DEVHOST = path.join(REPO, "packages", "devhost");
/** The dashboard's browser project (ES modules for the page), as `npm run build` builds it. */
const BROWSER_PROJECT = path.join("src", "dashboard", "browser", "tsconfig.json");

function walk(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      return entry.isDirectory() ? walk(full) : [full];
    })
    .sort();
}

/** What a build holds: each source file and its place in the build. */
function sources(): Map<string, string> {
  // The browser build's inputs are among src/'s files, and its tsconfig.json is hashed with them.
  const places = new Map<string, string>();
  const js = (file: string): string => file.replace(/\.ts$/, ".js");
  for (const file of walk(path.join(REPO, "src")).filter((f) => f.endsWith(".ts")))
    places.set(file, js(path.relative(REPO, file)));
  places.set(path.join(REPO, BROWSER_PROJECT), BROWSER_PROJECT);
  const devhostSources = path.join(DEVHOST, "src");
  for (const file of walk(devhostSources).filter((f) => f.endsWith(".ts")))
    places.set(file, js(path.join("devhost", "dist", path.relative(devhostSources, file))));
  places.set(path.join(DEVHOST, "bin", "devhost.js"), path.join("devhost", "bin", "devhost.js"));
  return places;
}

/** A TypeScript file as Node loads it (CommonJS), its types stripped. */
export function transpile(file: string): string {
  return ts.transpileModule(fs.readFileSync(file, "utf8"), {
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
    },
    fileName: file,
  }).outputText;
}

/**
 * Emits the browser project of the repository at `root` into `outDir`, as `npm run build` does into dist/browser.
 * The browser project lists its few files itself, the domain modules the page imports among them: it decides, not
 * a copy of its list here. Types are not checked: that is `npm run typecheck`'s job.
 */
export function emitBrowserModules(root: string, outDir: string): void {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    path.join(root, BROWSER_PROJECT),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  );
  if (!parsed) throw new Error(`cannot read ${BROWSER_PROJECT}`);
  const options = { ...parsed.options, outDir, incremental: false, noEmit: false, declaration: false };
  delete options.tsBuildInfoFile;
  const emitted = ts.createProgram(parsed.fileNames, options).emit();
  if (emitted.emitSkipped) throw new Error(`${BROWSER_PROJECT}: nothing emitted`);
}

/** The devhost CLI of a build: bin/devhost.js of the transpiled package. */
export function devhostCliIn(buildDir: string): string {
  return path.join(buildDir, "devhost", "bin", "devhost.js");
}

/** Directory holding the transpiled app and devhost for the current sources. */
export function appBuildDir(): string {
  const hash = createHash("sha1");
  for (const file of sources().keys()) hash.update(path.relative(REPO, file)).update(fs.readFileSync(file));
  return path.join(BUILDS, hash.digest("hex").slice(0, 12));
}

export default function setup(project: TestProject): void {
  // The queues the emulators serve, from their template and the process declaration, as `npm run build` writes them.
  writeEmulatorConfig(REPO);
  const target = appBuildDir();
  // Test files read the directory from here rather than hashing the sources again: sources edited during a run
  // would otherwise name a build that does not exist.
  project.provide("appBuildDir", target);
  if (fs.existsSync(target)) return;
  const staging = `${target}.${process.pid}.tmp`;
  for (const [file, place] of sources()) {
    const out = path.join(staging, place);
    fs.mkdirSync(path.dirname(out), { recursive: true });
    if (!file.endsWith(".ts")) {
      fs.copyFileSync(file, out);
      continue;
    }
    fs.writeFileSync(out, transpile(file));
  }
  emitBrowserModules(REPO, path.join(staging, "browser"));
  try {
    fs.renameSync(staging, target);
  } catch {
    // Another run built the same sources first: its build is identical.
    fs.rmSync(staging, { recursive: true, force: true });
  }
  // Builds of older sources, left by earlier runs, are removed after a day.
  for (const entry of fs.readdirSync(BUILDS)) {
    const full = path.join(BUILDS, entry);
    if (full !== target && Date.now() - fs.statSync(full).mtimeMs > 86_400_000)
      fs.rmSync(full, { recursive: true, force: true });
  }
}
