/**
 * The worked example of docs/operations.md#tuning: the timing figures of a few sets of settings side by side, from
 * the timing formulas (src/domain/timingBudget.ts) as the app and the dashboard compute them. The docs test
 * renders it into the section's generated block.
 */
import { scheduleIntervalSeconds, timingBudget, timingInputs, type TimingSettings } from "../src/domain";

export interface TimingExampleColumn {
  title: string;
  settings: TimingSettings;
}

const number = (n: number): string => n.toLocaleString("en-US", { maximumFractionDigits: 1 });

/** Seconds, with minutes or hours beside them from two minutes on: "1680 s (28 min)". */
function seconds(s: number): string {
  if (s < 120) return `${number(s)} s`;
  if (s < 7200) return `${number(s)} s (${number(Math.round((s / 60) * 10) / 10)} min)`;
  return `${number(s)} s (${number(Math.round((s / 3600) * 10) / 10)} h)`;
}

const schedule = (value: string): string => `\`${value}\` (${scheduleIntervalSeconds(value)} s)`;

/** A Markdown table: one row per setting and per figure, one column per set of settings. */
export function renderTimingExample(columns: readonly TimingExampleColumn[], steps: number): string {
  const figures = columns.map((c) => timingBudget(timingInputs(c.settings, steps)));
  const row = (label: string, cells: string[]) => `| ${label} | ${cells.join(" | ")} |`;
  const setting = (name: string, cell: (s: TimingSettings) => string) =>
    row(
      `\`${name}\``,
      columns.map((c) => cell(c.settings)),
    );
  const figure = (label: string, cell: (f: (typeof figures)[number]) => string) =>
    row(label, figures.map(cell));
  return [
    row(
      "",
      columns.map((c) => `**${c.title}**`),
    ),
    `| --- |${columns.map(() => " ---: |").join("")}`,
    setting("STEP_TIMEOUT_SECONDS", (s) => `${s.stepTimeoutSeconds}`),
    setting("SUPERVISOR_SCHEDULE", (s) => schedule(s.supervisorSchedule)),
    setting("SUPERVISOR_BACKOFF_SECONDS", (s) => `${s.supervisorBackoffSeconds}`),
    setting("STARTER_SCHEDULE", (s) => schedule(s.starterSchedule)),
    setting("SUPERVISOR_MAX_FAILURES", (s) => `${s.supervisorMaxFailures}`),
    setting("CLAIM_TIMEOUT_SECONDS", (s) => `${s.claimTimeoutSeconds}`),
    setting("SUPERVISOR_PAGE_SIZE", (s) => `${s.supervisorPageSize}`),
    figure("Stuck step retried, deadline notice received", (f) =>
      seconds(f.recovery.viaRecoveryQueueSeconds),
    ),
    figure(
      "Stuck step retried, worst case (found by the sweep)",
      (f) => `**${seconds(f.recovery.viaSweepSeconds)}**`,
    ),
    figure("Back-offs before each retry", (f) => `${f.retries.map((r) => r.backoffSeconds).join(", ")} s`),
    figure("Later retries, worst case", (f) => {
      const later = f.retries.slice(1).map((r) => r.viaSweepSeconds);
      return later.length > 0 ? `${later.join(", ")} s` : "none";
    }),
    figure("A step that never answers ends in Error within", (f) => seconds(f.giveUpSeconds)),
    figure(`Longest an order may take (${steps} steps)`, (f) => seconds(f.longestOrder.seconds)),
    figure("Supervisor sweeps per hour", (f) => number(f.load.sweepsPerHour)),
    figure("Records the sweeps read per hour, a page each", (f) => number(f.load.sweepRecordsPerHour)),
    figure("Most records one sweep reads", (f) => number(f.load.sweepMaxRecords)),
    figure("Starter rounds per hour", (f) => number(f.load.starterRoundsPerHour)),
  ].join("\n");
}
