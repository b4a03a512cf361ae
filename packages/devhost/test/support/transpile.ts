// Child-process tests need JavaScript: the TypeScript sources a child runs are transpiled file by file with the
// TypeScript compiler API (types stripped, no type check: `npm run typecheck` does that) into a directory of the
// test's own, never the package's dist/, which a build may be rewriting at the same time.
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";

/** The package's root folder (packages/devhost). */
export const PACKAGE_ROOT = path.resolve(__dirname, "..", "..");

/** Every file under `dir`, sorted. */
export function walk(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      return entry.isDirectory() ? walk(full) : [full];
    })
    .sort();
}

/**
 * Writes each `.ts` file as CommonJS `.js` at `outDir/<its path relative to base>` (or where `target` maps it)
 * and copies JSON files as they are.
 */
export function transpileFiles(
  files: readonly string[],
  base: string,
  outDir: string,
  target: (relative: string) => string = (relative) => relative,
): void {
  for (const file of files) {
    const out = path.join(outDir, target(path.relative(base, file)));
    fs.mkdirSync(path.dirname(out), { recursive: true });
    if (file.endsWith(".json")) {
      fs.copyFileSync(file, out);
      continue;
    }
    if (!file.endsWith(".ts") || file.endsWith(".d.ts")) continue;
    const { outputText } = ts.transpileModule(fs.readFileSync(file, "utf8"), {
      fileName: file,
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
        resolveJsonModule: true,
      },
    });
    fs.writeFileSync(out.replace(/\.ts$/, ".js"), outputText);
  }
}

/** The node_modules folder the package's dependencies are installed in (the workspace root's, when hoisted). */
export function nodeModulesDir(): string {
  for (let dir = PACKAGE_ROOT; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules");
    if (fs.existsSync(path.join(candidate, "rhea"))) return candidate;
    if (path.dirname(dir) === dir)
      throw new Error(`no node_modules with the dependencies above ${PACKAGE_ROOT}`);
  }
}
