/**
 * The app for the chaos soak, compiled and run the way `npm start` runs it, but from the current sources and
 * without touching dist/: the devhost CLI transpiled into a temp directory (buildCliCopy), loading the app entry
 * the global setup transpiled (.test-build/<hash>/src/index.js), in a child process of its own.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildCliCopy } from "./devhost";
import { appBuildDir } from "./globalSetup";

export interface ChaosApp {
  /** The devhost CLI script (dist/devhost/main.js of the copy). */
  cli: string;
  /** The compiled app entry. */
  appEntry: string;
  /** A fresh data directory for the app's task hub and log, kept across its restarts. */
  dataDir: string;
  /** Removes the CLI copy and the data directory. */
  cleanup(): void;
}

export function buildChaosApp(): ChaosApp {
  const copy = buildCliCopy();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "chaos-"));
  return {
    cli: path.join(copy.dir, "dist", "devhost", "main.js"),
    appEntry: path.join(appBuildDir(), "src", "index.js"),
    dataDir,
    cleanup() {
      fs.rmSync(copy.dir, { recursive: true, force: true });
      // Kept when CHAOS_KEEP is set: <dataDir>/app.log has every line the app printed, across restarts.
      if (!process.env.CHAOS_KEEP) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
