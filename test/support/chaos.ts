/**
 * The app for the chaos soak, compiled and run the way `npm start` runs it, but from the current sources and
 * without touching dist/: the devhost CLI and the app entry the global setup transpiled (.test-build/<hash>/), in
 * a child process of its own.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { inject } from "vitest";
import { devhostCliIn } from "./globalSetup";

export interface ChaosApp {
  /** The devhost CLI script (bin/devhost.js of the transpiled package). */
  cli: string;
  /** The compiled app entry. */
  appEntry: string;
  /** A fresh data directory for the app's task hub and log, kept across its restarts. */
  dataDir: string;
  /** Removes the data directory. */
  cleanup(): void;
}

export function buildChaosApp(): ChaosApp {
  const buildDir = inject("appBuildDir");
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "chaos-"));
  return {
    cli: devhostCliIn(buildDir),
    appEntry: path.join(buildDir, "src", "index.js"),
    dataDir,
    cleanup() {
      // Kept when CHAOS_KEEP is set: <dataDir>/app.log has every line the app printed, across restarts.
      if (!process.env.CHAOS_KEEP) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
