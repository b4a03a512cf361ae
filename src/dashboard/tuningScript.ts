/**
 * The browser code of the dashboard's "Tuning the timings" view: the timing settings the app runs with (GET
 * /api/timings), the figures they imply, and a what-if slider per setting that recomputes the figures in the
 * page. Nothing goes back to the server: the sliders only ever change what this page shows.
 *
 * The figures come from the app's own formulas: the source of `timingFormulas` (src/domain/timingBudget.ts) is
 * put into this script as it is, so the page computes with the code the app runs, not a copy of it.
 */
import { timingFormulas, type TimingInputs } from "../domain/timingBudget";

/** A setting the view has a slider for: the formula input it sets, and the values the slider offers. */
export interface TuningKnob {
  input: keyof TimingInputs;
  setting: string;
  label: string;
  /** "seconds" values are shown as durations; a schedule's what-if is the NCRONTAB of that period. */
  unit: "seconds" | "retries" | "records";
  schedule?: true;
  /** The slider's stops, ascending; the running value is added when it is not one of them. */
  choices: number[];
}

// Periods that a schedule can keep evenly (scheduleEvery has one for each): divisors of a minute, then of an hour.
const PERIODS = [1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800, 3600];

/** The three numbers the guide names first (step timeout, Supervisor period, back-off), then the others. */
export const TUNING_KNOBS: readonly TuningKnob[] = [
  {
    input: "stepTimeoutSeconds",
    setting: "STEP_TIMEOUT_SECONDS",
    label: "Step timeout",
    unit: "seconds",
    choices: [5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 600],
  },
  {
    input: "supervisorIntervalSeconds",
    setting: "SUPERVISOR_SCHEDULE",
    label: "Supervisor sweep every",
    unit: "seconds",
    schedule: true,
    choices: PERIODS,
  },
  {
    input: "backoffBaseSeconds",
    setting: "SUPERVISOR_BACKOFF_SECONDS",
    label: "First back-off",
    unit: "seconds",
    choices: [1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600],
  },
  {
    input: "starterIntervalSeconds",
    setting: "STARTER_SCHEDULE",
    label: "Starter round every",
    unit: "seconds",
    schedule: true,
    choices: PERIODS.filter((p) => p <= 300),
  },
  {
    input: "maxFailures",
    setting: "SUPERVISOR_MAX_FAILURES",
    label: "Retries before Error",
    unit: "retries",
    choices: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  },
  {
    input: "claimTimeoutSeconds",
    setting: "CLAIM_TIMEOUT_SECONDS",
    label: "Claim timeout",
    unit: "seconds",
    choices: [10, 15, 30, 45, 60, 90, 120, 300],
  },
  {
    input: "pageSize",
    setting: "SUPERVISOR_PAGE_SIZE",
    label: "Sweep page size",
    unit: "records",
    choices: [10, 25, 50, 100, 200, 500, 1000],
  },
];

/** JSON inside a <script> element: "<" escaped so that no value can close the element. */
const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, "\\u003c");

// Written without template literals, as script.ts is, and joined to the formulas' source below.
const VIEW = String.raw`
  const config = JSON.parse(document.getElementById("dashboard-config").textContent);
  const $ = (id) => document.getElementById(id);
  const pad = (n) => String(n).padStart(2, "0");
  const number = (n) => Number(n).toLocaleString("en-US", { maximumFractionDigits: 1 });

  /** A duration in words: 45 s, 4 min 05 s, 1 h 10 min. */
  function span(seconds) {
    const s = Math.round(seconds);
    if (s < 60) return s + " s";
    if (s < 3600) return Math.floor(s / 60) + " min" + (s % 60 ? " " + pad(s % 60) + " s" : "");
    const m = Math.floor((s % 3600) / 60);
    return Math.floor(s / 3600) + " h" + (m ? " " + pad(m) + " min" : "");
  }

  function knobText(knob, value) {
    if (knob.unit === "seconds") return span(value);
    if (knob.unit === "retries") return value + (value === 1 ? " retry" : " retries");
    return number(value) + " records";
  }

  /** The setting's value as it would be written: a schedule as the NCRONTAB of its period. */
  function settingValue(knob, value) {
    return knob.schedule ? TIMING.scheduleEvery(value) || "every " + value + " s" : String(value);
  }

  // What the panel shows, each a getter on the formulas' timingBudget(); lower is quicker or lighter for all.
  const FIGURES = [
    { id: "recovery-notice", label: "Stuck step retried, deadline notice received", formula: "STEP_TIMEOUT + back-off + starter period", time: true, get: (b) => b.recovery.viaRecoveryQueueSeconds },
    { id: "recovery-sweep", label: "Stuck step retried, worst case (found by the sweep)", formula: "STEP_TIMEOUT + Supervisor period + back-off + starter period", time: true, get: (b) => b.recovery.viaSweepSeconds },
    { id: "give-up", label: "A step that never answers ends in Error within", formula: "every retry's wait + STEP_TIMEOUT + Supervisor period", time: true, get: (b) => b.giveUpSeconds },
    { id: "longest-order", label: "Longest an order may take", formula: "2 × (retries + 1) × (CLAIM_TIMEOUT + steps × STEP_TIMEOUT + Supervisor period + largest back-off + starter period)", time: true, get: (b) => b.longestOrder.seconds },
    { id: "sweeps", label: "Supervisor sweeps per hour", formula: "3600 ÷ Supervisor period; each query fans out to every partition", get: (b) => b.load.sweepsPerHour },
    { id: "sweep-records", label: "Records the sweeps read per hour, a page each", formula: "sweeps per hour × SUPERVISOR_PAGE_SIZE", get: (b) => b.load.sweepRecordsPerHour },
    { id: "sweep-max", label: "Most records one sweep reads", formula: TIMING.MAX_PAGES_PER_SWEEP + " pages × SUPERVISOR_PAGE_SIZE, when many steps expire at once", get: (b) => b.load.sweepMaxRecords },
    { id: "starter-rounds", label: "Starter rounds per hour", formula: "3600 ÷ starter period", get: (b) => b.load.starterRoundsPerHour },
  ];

  let running = null; // the inputs the app runs with, from GET timings
  let whatIf = null; // the sliders' inputs
  const stops = {}; // knob input → the slider's values

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") el.className = value;
      else el.setAttribute(name, String(value));
    }
    for (const child of children.flat()) if (child !== null && child !== undefined) el.append(child instanceof Node ? child : String(child));
    return el;
  }

  function change(figure, now, then) {
    if (then === now) return h("td", { class: "change same" }, "same");
    const more = then > now;
    const text = figure.time ? (more ? "+" : "−") + span(Math.abs(then - now)) : "×" + number(Math.round((then / now) * 100) / 100);
    return h("td", { class: "change " + (more ? "more" : "less") }, text);
  }

  function renderFigures() {
    const now = TIMING.timingBudget(running);
    const then = TIMING.timingBudget(whatIf);
    const rows = FIGURES.map((f) => {
      const a = f.get(now);
      const b = f.get(then);
      const show = (v) => (f.time ? span(v) : number(v));
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
        h("td", { class: "num notice", "data-value": r.viaRecoveryQueueSeconds }, span(r.viaRecoveryQueueSeconds)),
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

  function renderApply() {
    const changed = KNOBS.filter((k) => whatIf[k.input] !== running[k.input]);
    $("tuning-reset").disabled = changed.length === 0;
    if (changed.length === 0) {
      $("tuning-apply").textContent = "The sliders are at the settings the app runs with.";
      return;
    }
    $("tuning-apply").replaceChildren(
      "What-if, not applied: the app keeps running with its settings. To run with these, set ",
      ...changed.flatMap((k, i) => [i === 0 ? "" : ", ", h("code", { "data-setting": k.setting }, k.setting + "=" + settingValue(k, whatIf[k.input]))]),
      " in the app settings and restart it.",
    );
  }

  function showKnob(knob) {
    const value = whatIf[knob.input];
    const slider = $("knob-" + knob.input);
    slider.value = String(stops[knob.input].indexOf(value));
    slider.setAttribute("aria-valuetext", knobText(knob, value));
    $("knob-" + knob.input + "-value").textContent = knobText(knob, value);
    $("knob-" + knob.input + "-value").classList.toggle("changed", value !== running[knob.input]);
    const schedule = $("knob-" + knob.input + "-schedule");
    if (schedule) schedule.textContent = settingValue(knob, value);
  }

  function render() {
    for (const knob of KNOBS) showKnob(knob);
    renderFigures();
    renderApply();
  }

  function reset() {
    whatIf = Object.assign({}, running);
    render();
  }

  async function load() {
    const res = await fetch(config.apiBase + "timings", { cache: "no-store", headers: { accept: "application/json" } });
    const body = await res.json().catch(() => null);
    if (!res.ok || !body) throw new Error("GET timings answered HTTP " + res.status + (body && body.error ? ": " + body.error : ""));
    for (const knob of KNOBS) {
      const cell = document.querySelector('#tuning-settings tr[data-knob="' + knob.input + '"] td.running');
      const raw = body.settings[knob.setting];
      cell.textContent = knob.schedule ? raw : knobText(knob, raw);
      cell.classList.toggle("mono", !!knob.schedule);
      cell.dataset.value = String(raw);
    }
    if (!body.inputs) {
      $("tuning-problem").hidden = false;
      $("tuning-problem").textContent = "No figures for these settings: " + body.problem;
      return;
    }
    running = body.inputs;
    for (const knob of KNOBS) {
      stops[knob.input] = [...new Set(knob.choices.concat([running[knob.input]]))].sort((a, b) => a - b);
      const slider = $("knob-" + knob.input);
      slider.max = String(stops[knob.input].length - 1);
      slider.disabled = false;
      slider.addEventListener("input", () => {
        whatIf[knob.input] = stops[knob.input][Number(slider.value)];
        showKnob(knob);
        renderFigures();
        renderApply();
      });
    }
    $("tuning-reset").addEventListener("click", reset);
    reset();
    document.getElementById("tuning").dataset.ready = "true";
  }

  load().catch((error) => {
    $("tuning-problem").hidden = false;
    $("tuning-problem").textContent = "Cannot load the timing settings: " + (error && error.message ? error.message : String(error));
  });
})();
`;

/** The view's script: the formulas' own source, the sliders' stops, then the view. */
export const TUNING_SCRIPT =
  "\n(() => {\n" +
  '  "use strict";\n' +
  "  // The app's timing formulas, src/domain/timingBudget.ts, as compiled: the page computes with the app's code.\n" +
  `  const TIMING = (${timingFormulas.toString()})();\n` +
  `  const KNOBS = ${scriptJson(TUNING_KNOBS)};\n` +
  VIEW;
