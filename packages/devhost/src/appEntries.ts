// The files an app entry names. package.json "main" (or --app) may be a glob, as the func templates write it
// (`dist/src/functions/*.js`): the Node.js worker loads every file that matches, in order, and fails the app when
// none does, with a message that says whether a pattern or a plain file was missing. The devhost does the same.
import fs from "node:fs";
import path from "node:path";
import { convertPathToPattern, globSync, isDynamicPattern } from "tinyglobby";

export class AppEntryError extends Error {
  override name = "AppEntryError";
}

/**
 * The glob of an absolute entry: the folders before the first segment with a wildcard taken literally (an app
 * folder may well contain "(" or "["), the rest as the pattern it is. Undefined when no segment has a wildcard.
 */
function entryPattern(absolute: string): string | undefined {
  const segments = absolute.split(path.sep);
  const first = segments.findIndex((segment, i) => i > 0 && isDynamicPattern(segment));
  if (first === -1) return undefined;
  const literal = convertPathToPattern(segments.slice(0, first).join(path.sep) || path.sep);
  return `${literal.replace(/\/$/, "")}/${segments.slice(first).join("/")}`;
}

/** The absolute paths of the files `entry` (a path or a pattern) names, sorted as the worker finds them. */
export function expandAppEntry(entry: string): string[] {
  const absolute = path.resolve(entry);
  const pattern = entryPattern(absolute);
  if (pattern === undefined) {
    if (!fs.existsSync(absolute)) {
      throw new AppEntryError(
        `Unable to load the app entry "${entry}": file does not exist (did you build the app?)`,
      );
    }
    return [absolute];
  }
  const files = globSync(pattern, { absolute: true, onlyFiles: true })
    .map((file) => path.resolve(file))
    .sort();
  if (files.length === 0) {
    throw new AppEntryError(
      `Unable to load the app entry "${entry}": found zero files matching the supplied pattern (did you build the app?)`,
    );
  }
  return files;
}
