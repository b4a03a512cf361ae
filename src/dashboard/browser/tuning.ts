/**
 * The dashboard's "Tuning the timings" view: the timing settings the app runs with (GET /api/timings), the figures
 * they imply, and a what-if slider per setting that recomputes the figures in the page. Nothing goes back to the
 * server: the sliders only ever change what this page shows.
 *
 * The figures come from the app's own formulas: "./timingBudget.js" is src/domain/timingBudget.ts, compiled for the
 * browser and loaded from beside this module (see rootDirs in tsconfig.json), so the page computes with the code
 * the app runs, not a copy of it.
 */
import { $, $as, h, pad, readConfig } from "./dom.js";
import {
  MAX_PAGES_PER_SWEEP,
  scheduleEvery,
  timingBudget,
  type TimingBudget,
  type TimingInputs,
} from "./timingBudget.js";
import { TUNING_KNOBS, type TuningKnob } from "./tuningKnobs.js";

/** What GET /api/timings answers (src/api/timings.ts): `inputs` is null when a schedule has no fixed period. */
interface TimingsAnswer {
  settings: Record<string, string | number>;
  inputs: TimingInputs | null;
  problem?: string;
}

interface Figure {
  id: string;
  label: string;
  formula: string;
  /** A duration in seconds (shown as one, its change as a difference), else a count (its change as a ratio). */
  time?: true;
  get: (budget: TimingBudget) => number;
}

const config = readConfig();
const number = (n: number): string => Number(n).toLocaleString("en-US", { maximumFractionDigits: 1 });

/** A duration in words: 45 s, 4 min 05 s, 1 h 10 min. */
function span(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${pad(s % 60)} s` : ""}`;
  const m = Math.floor((s % 3600) / 60);
  return `${Math.floor(s / 3600)} h${m ? ` ${pad(m)} min` : ""}`;
}

function knobText(knob: TuningKnob, value: number): string {
  if (knob.unit === "seconds") return span(value);
  if (knob.unit === "retries") return `${value}${value === 1 ? " retry" : " retries"}`;
  return `${number(value)} records`;
}

/** The setting's value as it would be written: a schedule as the NCRONTAB of its period. */
function settingValue(knob: TuningKnob, value: number): string {
  return knob.schedule ? (scheduleEvery(value) ?? `every ${value} s`) : String(value);
}

// What the panel shows, each a getter on the formulas' timingBudget(); lower is quicker or lighter for all.
const FIGURES: readonly Figure[] = [
  {
    id: "recovery-notice",
    label: "Stuck step retried, deadline notice received",
    formula: "STEP_TIMEOUT + back-off + starter period",
    time: true,
    get: (b) => b.recovery.viaRecoveryQueueSeconds,
  },
  {
    id: "recovery-sweep",
    label: "Stuck step retried, worst case (found by the sweep)",
    formula: "STEP_TIMEOUT + Supervisor period + back-off + starter period",
    time: true,
    get: (b) => b.recovery.viaSweepSeconds,
  },
  {
    id: "give-up",
    label: "A step that never answers ends in Error within",
    formula: "every retry's wait + STEP_TIMEOUT + Supervisor period",
    time: true,
    get: (b) => b.giveUpSeconds,
  },
  {
    id: "longest-order",
    label: "Longest an order may take",
    formula:
      "2 × (retries + 1) × (CLAIM_TIMEOUT + steps × STEP_TIMEOUT + Supervisor period + largest back-off + starter period)",
    time: true,
    get: (b) => b.longestOrder.seconds,
  },
  {
    id: "sweeps",
    label: "Supervisor sweeps per hour",
    formula: "3600 ÷ Supervisor period; each query fans out to every partition",
    get: (b) => b.load.sweepsPerHour,
  },
  {
    id: "sweep-records",
    label: "Records the sweeps read per hour, a page each",
    formula: "sweeps per hour × SUPERVISOR_PAGE_SIZE",
    get: (b) => b.load.sweepRecordsPerHour,
  },
  {
    id: "sweep-max",
    label: "Most records one sweep reads",
    formula: `${MAX_PAGES_PER_SWEEP} pages × SUPERVISOR_PAGE_SIZE, when many steps expire at once`,
    get: (b) => b.load.sweepMaxRecords,
  },
  {
    id: "starter-rounds",
    label: "Starter rounds per hour",
    formula: "3600 ÷ starter period",
    get: (b) => b.load.starterRoundsPerHour,
  },
];

/** The inputs the app runs with (GET timings) and the sliders' inputs; set together once the settings load. */
let running: TimingInputs;
let whatIf: TimingInputs;
/** Knob input → the slider's values. */
const stops: Partial<Record<keyof TimingInputs, number[]>> = {};
const stopsOf = (knob: TuningKnob): number[] => stops[knob.input] ?? [];

function change(figure: Figure, now: number, then: number): HTMLElement {
  if (then === now) return h("td", { class: "change same" }, "same");
  const more = then > now;
  const text = figure.time
    ? (more ? "+" : "−") + span(Math.abs(then - now))
    : `×${number(Math.round((then / now) * 100) / 100)}`;
  return h("td", { class: `change ${more ? "more" : "less"}` }, text);
}

function renderFigures(): void {
  const now = timingBudget(running);
  const then = timingBudget(whatIf);
  const rows = FIGURES.map((f) => {
    const a = f.get(now);
    const b = f.get(then);
    const show = (v: number) => (f.time ? span(v) : number(v));
    return h(
      "tr",
      { "data-figure": f.id, class: a === b ? null : "changed" },
      h("th", { scope: "row" }, f.label, h("span", { class: "formula" }, f.formula)),
      h("td", { class: "num running", "data-value": a }, show(a)),
      h("td", { class: "num whatif", "data-value": b }, show(b)),
      change(f, a, b),
    );
  });
  $("tuning-figures-body").replaceChildren(...rows);
  const retries = then.retries.map((r) =>
    h(
      "tr",
      { "data-failure": r.failure },
      h("td", { class: "num" }, String(r.failure)),
      h("td", { class: "num backoff", "data-value": r.backoffSeconds }, span(r.backoffSeconds)),
      h(
        "td",
        { class: "num notice", "data-value": r.viaRecoveryQueueSeconds },
        span(r.viaRecoveryQueueSeconds),
      ),
      h("td", { class: "num sweep", "data-value": r.viaSweepSeconds }, span(r.viaSweepSeconds)),
    ),
  );
  retries.push(
    h(
      "tr",
      { "data-failure": whatIf.maxFailures + 1, class: "final" },
      h("td", { class: "num" }, String(whatIf.maxFailures + 1)),
      h("td", { colspan: 3 }, "no retry: the order ends in Error and an alert is sent"),
    ),
  );
  $("tuning-retries-body").replaceChildren(...retries);
  $("tuning-steps").textContent = String(whatIf.steps);
}

function renderApply(): void {
  const changed = TUNING_KNOBS.filter((k) => whatIf[k.input] !== running[k.input]);
  $as("tuning-reset", HTMLButtonElement).disabled = changed.length === 0;
  if (changed.length === 0) {
    $("tuning-apply").textContent = "The sliders are at the settings the app runs with.";
    return;
  }
  $("tuning-apply").replaceChildren(
    "What-if, not applied: the app keeps running with its settings. To run with these, set ",
    ...changed.flatMap((k, i) => [
      i === 0 ? "" : ", ",
      h("code", { "data-setting": k.setting }, `${k.setting}=${settingValue(k, whatIf[k.input])}`),
    ]),
    " in the app settings and restart it.",
  );
}

function showKnob(knob: TuningKnob): void {
  const value = whatIf[knob.input];
  const slider = $as(`knob-${knob.input}`, HTMLInputElement);
  slider.value = String(stopsOf(knob).indexOf(value));
  slider.setAttribute("aria-valuetext", knobText(knob, value));
  const shown = $(`knob-${knob.input}-value`);
  shown.textContent = knobText(knob, value);
  shown.classList.toggle("changed", value !== running[knob.input]);
  // Only the schedules have one.
  const schedule = document.getElementById(`knob-${knob.input}-schedule`);
  if (schedule) schedule.textContent = settingValue(knob, value);
}

function render(): void {
  for (const knob of TUNING_KNOBS) showKnob(knob);
  renderFigures();
  renderApply();
}

function reset(): void {
  whatIf = { ...running };
  render();
}

async function load(): Promise<void> {
  const res = await fetch(`${config.apiBase}timings`, {
    cache: "no-store",
    headers: { accept: "application/json" },
  });
  const body = (await res.json().catch(() => null)) as (TimingsAnswer & { error?: string }) | null;
  if (!res.ok || !body)
    throw new Error(`GET timings answered HTTP ${res.status}${body?.error ? `: ${body.error}` : ""}`);
  for (const knob of TUNING_KNOBS) {
    const cell = document.querySelector<HTMLElement>(
      `#tuning-settings tr[data-knob="${knob.input}"] td.running`,
    );
    if (!cell) throw new Error(`the page has no row for ${knob.setting}`);
    const raw = body.settings[knob.setting];
    cell.textContent = knob.schedule ? String(raw) : knobText(knob, Number(raw));
    cell.classList.toggle("mono", !!knob.schedule);
    cell.dataset.value = String(raw);
  }
  if (!body.inputs) {
    $("tuning-problem").hidden = false;
    $("tuning-problem").textContent = `No figures for these settings: ${body.problem}`;
    return;
  }
  running = body.inputs;
  for (const knob of TUNING_KNOBS) {
    const knobStops = [...new Set([...knob.choices, running[knob.input]])].sort((a, b) => a - b);
    stops[knob.input] = knobStops;
    const slider = $as(`knob-${knob.input}`, HTMLInputElement);
    slider.max = String(knobStops.length - 1);
    slider.disabled = false;
    slider.addEventListener("input", () => {
      whatIf[knob.input] = knobStops[Number(slider.value)] ?? running[knob.input];
      showKnob(knob);
      renderFigures();
      renderApply();
    });
  }
  $("tuning-reset").addEventListener("click", reset);
  reset();
  $("tuning").dataset.ready = "true";
}

load().catch((error: unknown) => {
  $("tuning-problem").hidden = false;
  $("tuning-problem").textContent =
    `Cannot load the timing settings: ${error instanceof Error ? error.message : String(error)}`;
});
