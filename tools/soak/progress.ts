/**
 * The demo's live progress bar: one line, redrawn in place on a terminal, showing the orders per state as
 * coloured segments. Where stdout is not a terminal (CI logs), a plain line every few seconds instead.
 */
import type { ProcessState } from "../../src/domain";
import type { SoakProgress } from "./soak";

const ORDER: readonly ProcessState[] = [
  "Processed",
  "Compensated",
  "CompensationFailed",
  "Error",
  "Processing",
  "Compensating",
  "CompensationPending",
  "Pending",
];

/** ANSI colour and bar character per state: finished states solid, work in progress shaded. */
const LOOK: Record<ProcessState, { color: number; char: string; short: string }> = {
  Processed: { color: 32, char: "█", short: "Processed" },
  Compensated: { color: 36, char: "█", short: "Compensated" },
  CompensationFailed: { color: 35, char: "█", short: "CompFailed" },
  Error: { color: 31, char: "█", short: "Error" },
  Processing: { color: 33, char: "▓", short: "Processing" },
  Compensating: { color: 34, char: "▓", short: "Compensating" },
  CompensationPending: { color: 34, char: "▒", short: "CompPending" },
  Pending: { color: 37, char: "░", short: "Pending" },
};

export interface ProgressBar {
  update(progress: SoakProgress): void;
  /** Ends the redrawn line so that what follows starts on a new one. */
  done(): void;
}

export function progressBar(stream: NodeJS.WriteStream = process.stdout, width = 40): ProgressBar {
  const tty = stream.isTTY === true;
  let lastPlain = 0;
  let drawn = false;
  return {
    update(p) {
      const counts = ORDER.filter((s) => p.byState[s] > 0).map((s) => `${LOOK[s].short} ${p.byState[s]}`);
      const status = `${p.accepted}/${p.total} accepted · ${counts.join(" · ") || "waiting"} · ${(p.elapsedMs / 1000).toFixed(0)} s${p.appUp ? "" : " · app restarting"}`;
      if (!tty) {
        if (p.elapsedMs - lastPlain >= 5_000) {
          lastPlain = p.elapsedMs;
          stream.write(`${status}\n`);
        }
        return;
      }
      let bar = "";
      let used = 0;
      for (const state of ORDER) {
        const cells = Math.round((p.byState[state] / p.total) * width);
        const take = Math.min(cells, width - used);
        if (take > 0) bar += `\x1b[${LOOK[state].color}m${LOOK[state].char.repeat(take)}\x1b[0m`;
        used += take;
      }
      bar += " ".repeat(width - used);
      stream.write(`\r\x1b[2K[${bar}] ${status}`);
      drawn = true;
    },
    done() {
      if (tty && drawn) stream.write("\n");
    },
  };
}
