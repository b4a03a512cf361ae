/**
 * The package azd deploys: the folder stage-package.sh stages as the service's prepackage hook, shipped with its
 * node_modules (no remote build), whose production install (install-production.sh) holds the app's production
 * dependencies and nothing else. No Bicep needed; the install needs npm and the registry or a warm npm cache.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson, readText, ROOT } from "../support/infra";

interface PackageJson {
  main?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}
interface LockEntry {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const pkg = readJson<PackageJson>("package.json");
// azure.yaml is matched line by line: no YAML parser is needed for a file this small and this fixed.
const azureYaml = readText("azure.yaml");
const stagingDir = /^staging_dir="([^"]+)"$/m.exec(readText("infra/scripts/stage-package.sh"))?.[1];

describe("the package azd deploys", () => {
  it("is the folder stage-package.sh stages: azure.yaml's dist", () => {
    expect(stagingDir).toBeDefined();
    expect(/^ {4}dist: *(\S+) *$/m.exec(azureYaml)?.[1]).toBe(stagingDir);
  });

  it("is staged by stage-package.sh, the service's prepackage hook", () => {
    expect(azureYaml).toMatch(
      /^ {6}prepackage:\n(?: {8}.*\n)*? {8}run: *bash infra\/scripts\/stage-package\.sh *$/m,
    );
  });

  it("carries its node_modules: remoteBuild false, and .funcignore does not exclude them", () => {
    expect(azureYaml).toMatch(/^ {4}remoteBuild: *false *$/m);
    // azd reads .funcignore from the project root and refuses remoteBuild: false if it excludes node_modules.
    const funcignore = readText(".funcignore").split("\n");
    expect(funcignore.filter((line) => /^(\*\*\/|\/)?node_modules\/?$/.test(line.trim()))).toEqual([]);
  });

  it("is staged in a folder git ignores", () => {
    const firstSegment = stagingDir?.split("/")[0];
    const gitignore = readText(".gitignore")
      .split("\n")
      .map((line) => line.trim());
    expect(gitignore.some((line) => line === `${firstSegment}/` || line === `/${firstSegment}/`)).toBe(true);
  });

  it("starts from package.json's main in dist/src, the only compiled folder staged", () => {
    expect(pkg.main).toMatch(/^dist\/src\//);
  });
});

/**
 * The lockfile locations production needs, from the root's dependencies, following each package's dependencies
 * the way Node looks them up: in the package's own node_modules, then in each enclosing one up to the root.
 * `required` leaves out optional dependencies, which npm may skip on this platform.
 */
function productionClosure(packages: Record<string, LockEntry>): { all: Set<string>; required: Set<string> } {
  const all = new Set<string>();
  const required = new Set<string>();
  const resolve = (from: string, name: string): string | undefined => {
    for (let dir = from; ;) {
      const location = `${dir ? `${dir}/` : ""}node_modules/${name}`;
      if (location in packages) return location;
      if (!dir) return undefined;
      const cut = dir.lastIndexOf("/node_modules/");
      dir = cut < 0 ? "" : dir.slice(0, cut);
    }
  };
  const visit = (location: string, optional: boolean): void => {
    const wasSeen = all.has(location);
    const wasRequired = required.has(location);
    all.add(location);
    if (!optional) required.add(location);
    // Walked again only when it has just become required: its dependencies become required with it.
    if (wasSeen && (optional || wasRequired)) return;
    const entry = packages[location]!;
    const optionalPeers = entry.peerDependenciesMeta ?? {};
    const deps: [string, boolean][] = [
      ...Object.keys(entry.dependencies ?? {}).map((name): [string, boolean] => [name, optional]),
      ...Object.keys(entry.optionalDependencies ?? {}).map((name): [string, boolean] => [name, true]),
      ...Object.keys(entry.peerDependencies ?? {})
        .filter((name) => !optionalPeers[name]?.optional)
        .map((name): [string, boolean] => [name, optional]),
    ];
    for (const [name, isOptional] of deps) {
      const found = resolve(location, name);
      if (found) visit(found, isOptional);
    }
  };
  for (const name of Object.keys(packages[""]?.dependencies ?? {})) {
    const found = resolve("", name);
    if (found) visit(found, false);
  }
  return { all, required };
}

/** Every installed package folder, named as the lockfile names its location (node_modules/a/node_modules/@s/b). */
function installedPackages(nodeModules: string, prefix = "node_modules"): Set<string> {
  const found = new Set<string>();
  if (!fs.existsSync(nodeModules)) return found;
  for (const entry of fs.readdirSync(nodeModules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const names = entry.name.startsWith("@")
      ? fs.readdirSync(path.join(nodeModules, entry.name)).map((n) => `${entry.name}/${n}`)
      : [entry.name];
    for (const name of names) {
      found.add(`${prefix}/${name}`);
      for (const nested of installedPackages(
        path.join(nodeModules, name, "node_modules"),
        `${prefix}/${name}/node_modules`,
      ))
        found.add(nested);
    }
  }
  return found;
}

/** npm ci of the production dependencies takes tens of seconds on two cores with a warm cache. */
const INSTALL_TIMEOUT_MS = 300_000;

describe("the package's production install (install-production.sh)", () => {
  let dir: string;
  let installed: Set<string>;
  const needed = productionClosure(
    readJson<{ packages: Record<string, LockEntry> }>("package-lock.json").packages,
  );

  beforeAll(async () => {
    dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), "production-install-"));
    const install = spawnSync("bash", [path.join(ROOT, "infra/scripts/install-production.sh"), dir], {
      encoding: "utf8",
      timeout: INSTALL_TIMEOUT_MS,
    });
    if (install.status !== 0) throw new Error(`the production install failed: ${install.stderr.trim()}`);
    installed = installedPackages(path.join(dir, "node_modules"));
  }, INSTALL_TIMEOUT_MS + 10_000);
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("comes from a package.json where no package is both a dependency and a devDependency", () => {
    const both = Object.keys(pkg.dependencies ?? {}).filter((name) => name in (pkg.devDependencies ?? {}));
    expect(both).toEqual([]);
  });

  it("holds every package production needs", () => {
    expect(installed.size).toBeGreaterThan(0);
    expect([...needed.required].filter((location) => !installed.has(location))).toEqual([]);
  });

  it("holds nothing production does not need", () => {
    expect([...installed].filter((location) => !needed.all.has(location))).toEqual([]);
  });

  it("holds no development tool and not the devhost's emulator", () => {
    // Named for a clearer failure than a list of locations; some (@types/node) are also dependencies of
    // production packages, and stay.
    const devOnly = [
      ...Object.keys(pkg.devDependencies ?? {}),
      "vitest",
      "typescript",
      "eslint",
      "@vercel/cosmosdb-server",
    ].filter((name) => !needed.all.has(`node_modules/${name}`));
    expect(devOnly.filter((name) => installed.has(`node_modules/${name}`))).toEqual([]);
  });
});
