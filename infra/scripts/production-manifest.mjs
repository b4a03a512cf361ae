// The package.json and package-lock.json of the deployment package: the repository's, minus
// everything only development needs (devDependencies, the dev-only entries of the lockfile, scripts
// and bin, which point at files that are not shipped).
//
// Why not copy the lockfile as is: `npm ci` checks the whole tree against the lockfile even with
// --omit=dev, so a problem in the dev tree (a dev tool's optional package missing from the lockfile,
// as happens when a registry does not serve it) would block the production install for nothing.
//
// Usage: node infra/scripts/production-manifest.mjs <from dir> <to dir>

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Fields of package.json that mean something to the Functions host or to `npm ci`.
const keptPackageFields = [
  "name",
  "version",
  "description",
  "license",
  "private",
  "type",
  "main",
  "engines",
  "dependencies",
  "optionalDependencies",
  "peerDependencies",
  "peerDependenciesMeta",
  "overrides",
];

/**
 * @param {Record<string, unknown>} pkg package.json
 * @param {{ lockfileVersion: number, packages: Record<string, Record<string, unknown>> }} lock package-lock.json
 */
export function productionManifest(pkg, lock) {
  if (!lock.packages || lock.lockfileVersion < 2) {
    throw new Error(
      `package-lock.json has lockfileVersion ${lock.lockfileVersion}; expected 2 or 3 (npm 7 or later)`,
    );
  }
  const productionPkg = Object.fromEntries(
    keptPackageFields.filter((field) => field in pkg).map((field) => [field, pkg[field]]),
  );
  const packages = {};
  for (const [location, entry] of Object.entries(lock.packages)) {
    if (location === "") {
      const { devDependencies: _dev, bin: _bin, ...root } = entry;
      packages[location] = root;
    } else if (entry.dev !== true) {
      // "devOptional" entries stay: an optional dependency of a production package needs them.
      packages[location] = entry;
    }
  }
  // lockfileVersion 2 repeats the tree in the npm 6 format; npm 7+ reads "packages" only.
  const { dependencies: _legacy, ...rest } = lock;
  return { pkg: productionPkg, lock: { ...rest, packages } };
}

function main([from, to]) {
  if (!from || !to) {
    console.error("usage: node infra/scripts/production-manifest.mjs <from dir> <to dir>");
    process.exit(2);
  }
  const read = (name) => JSON.parse(fs.readFileSync(path.join(from, name), "utf8"));
  const { pkg, lock } = productionManifest(read("package.json"), read("package-lock.json"));
  fs.writeFileSync(path.join(to, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  fs.writeFileSync(path.join(to, "package-lock.json"), `${JSON.stringify(lock, null, 2)}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2));
}
