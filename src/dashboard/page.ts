/**
 * The operator dashboard: one HTML page, served by the `dashboard` function, that reads and acts
 * through the operator API only. No framework: markup here, styles beside it, the few values the page needs
 * embedded as JSON, and the browser code in src/dashboard/browser, TypeScript compiled to ES modules that the page
 * loads from GET /api/dashboard/{module} (browserModules.ts). The deployment package ships compiled JavaScript only,
 * so the page is a string in a module rather than a file.
 */
import { PROCESS_STATES } from "../domain/stateRecord";
import { SERVICES, orderWorkflowV1 } from "../domain/process";
import { AGENT_NAMES } from "../domain/workflow";
import { CANCELLABLE_STATES, RETRYABLE_STATES } from "../domain/transitions/operator";
import { DASHBOARD_CONFIG_ID, type DashboardConfig } from "./browser/pageConfig";
import { TUNING_KNOBS } from "./browser/tuningKnobs";
import { DASHBOARD_ENTRY_MODULES } from "./browserModules";
import { DASHBOARD_CSS } from "./styles";

export interface DashboardPageOptions {
  /** Path the operator API is served under, ending in "/": "/api/" on the devhost and in Azure. */
  apiBase: string;
  /** The simulator whose /_faults the fault panel drives; "" hides the devhost playground (Azure). */
  simulatorUrl: string;
  /** The agent's calls per request (AGENT_MAX_ATTEMPTS): the fault panel says how many calls fail a step. */
  agentMaxAttempts: number;
  /** Nonce of the inline style and the module scripts, matching the response's Content-Security-Policy. */
  nonce: string;
  /** How often the page polls the API; default 2000 ms. */
  refreshMs?: number;
  /** The signed-in principal the page is served to, and whether its roles allow retry and cancel. */
  signedInAs: { name: string; roles: string[]; canOperate: boolean };
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** JSON inside a <script> element: "<" escaped so that no value can close the element. */
const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, "\\u003c");

/**
 * The page's Content-Security-Policy: its own inline style and module scripts (by nonce), calls to its own origin,
 * and to the simulator when the playground is on. Nothing else loads, so an order field can never run as code. The
 * modules the page's scripts import need no source of their own: an import is fetched with its importer's nonce.
 */
export function dashboardContentSecurityPolicy(
  options: Pick<DashboardPageOptions, "nonce" | "simulatorUrl">,
): string {
  const connect = ["'self'", ...(options.simulatorUrl ? [new URL(options.simulatorUrl).origin] : [])];
  return [
    "default-src 'none'",
    `script-src 'nonce-${options.nonce}'`,
    `style-src 'nonce-${options.nonce}'`,
    `connect-src ${connect.join(" ")}`,
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

const stateCards = (): string =>
  PROCESS_STATES.map(
    (state) => `
      <button type="button" class="card state-${state}" data-state="${state}" aria-pressed="false"
        title="Show only ${state} orders">
        <span class="count" id="count-${state}">–</span><span class="label">${state}</span>
      </button>`,
  ).join("");

const stateOptions = (): string =>
  PROCESS_STATES.map((state) => `<option value="${state}">${state}</option>`).join("");

/** The declared services, "a, b and c". */
const serviceList = (): string =>
  AGENT_NAMES.length === 1
    ? AGENT_NAMES[0]
    : `${AGENT_NAMES.slice(0, -1).join(", ")} and ${AGENT_NAMES.at(-1)}`;

/** The fault form's services; the second step's is preselected, as a fault there leaves an earlier step to undo. */
const serviceOptions = (): string => {
  const preselected = orderWorkflowV1.steps[1]?.agent ?? AGENT_NAMES[0];
  return AGENT_NAMES.map((s) => `<option${s === preselected ? " selected" : ""}>${s}</option>`).join("");
};

function playground(options: DashboardPageOptions): string {
  if (!options.simulatorUrl) return "";
  const simulator = escapeHtml(options.simulatorUrl);
  const attempts = options.agentMaxAttempts;
  const hint =
    attempts === 1
      ? `The agent makes one call per step (AGENT_MAX_ATTEMPTS=1): one transient call fails the step, and the
         Supervisor retries the order.`
      : `The agent makes up to ${attempts} calls per step: fewer transient calls are absorbed by its retries;
         ${attempts} or more fail the step, and the Supervisor retries the order.`;
  return `
    <section class="panel playground" aria-labelledby="playground-title">
      <div class="panel-head">
        <h2 id="playground-title">Devhost playground</h2>
        <p class="intro">Submit orders, break a remote service, and watch the Supervisor recover them. Faults go to
          the simulator at <span class="mono" id="simulator-url">${simulator}</span>.</p>
      </div>
      <div class="playground-grid">
        <form id="sample-form">
          <fieldset>
            <legend>Submit sample orders</legend>
            <div class="fields">
              <div class="field"><label for="sample-count">Orders</label>
                <input id="sample-count" type="number" min="1" max="50" value="5" required></div>
            </div>
            <label class="check"><input id="sample-declined" type="checkbox"> Over the payment limit (payment
              declines, the order is compensated)</label>
            <div><button id="sample-submit" type="submit" class="primary">Submit sample orders</button></div>
          </fieldset>
          <p id="sample-result" class="result" role="status"></p>
          <ul id="sample-ids" class="sample-ids" aria-label="Orders just submitted"></ul>
        </form>
        <form id="fault-form">
          <fieldset>
            <legend>Arm a fault</legend>
            <div class="fields">
              <div class="field"><label for="fault-service">Service</label>
                <select id="fault-service">${serviceOptions()}</select></div>
              <div class="field"><label for="fault-operation">Operation</label><select id="fault-operation"></select></div>
              <div class="field"><label for="fault-kind">Kind</label>
                <select id="fault-kind">
                  <option value="transient">transient (503)</option>
                  <option value="permanent">permanent (400)</option>
                  <option value="latency">latency</option>
                  <option value="hang">hang (never answers)</option>
                  <option value="drop-response">drop-response (acts, reply lost)</option>
                </select></div>
              <div class="field"><label for="fault-calls">Next calls</label>
                <input id="fault-calls" type="number" min="1" value="1" aria-describedby="fault-calls-hint"></div>
              <div class="field"><label for="fault-order">Order id</label>
                <input id="fault-order" type="text" placeholder="any order" autocomplete="off"></div>
              <div class="field" id="latency-field" hidden><label for="fault-latency">Latency ms</label>
                <input id="fault-latency" type="number" min="1" value="5000"></div>
            </div>
            <p class="hint" id="fault-calls-hint">${hint} Leave "Next calls" empty for every call.</p>
            <div class="buttons"><button type="submit" class="primary">Arm fault</button>
              <button type="button" id="clear-faults">Clear all faults</button></div>
          </fieldset>
          <p id="fault-result" class="result" role="status"></p>
        </form>
        <section class="faults" aria-labelledby="faults-title">
          <h3 id="faults-title">Armed faults</h3>
          <div id="faults"><p class="hint">Loading…</p></div>
        </section>
      </div>
    </section>`;
}

/** The states a bulk action can select: the retryable ones first, as after an outage they are what is looked for. */
const BULK_STATE_CHOICES = [...new Set([...RETRYABLE_STATES, ...CANCELLABLE_STATES])];

/**
 * Retry or cancel every order a filter matches, for the aftermath of an outage. Only for operators: the routes
 * behind it need the operator role. Retry all and Cancel all stay disabled until a dry run has counted the filter.
 */
function bulkPanel(options: DashboardPageOptions): string {
  if (!options.signedInAs.canOperate) return "";
  const states = BULK_STATE_CHOICES.map((state) => `<option value="${state}">${state}</option>`).join("");
  return `
    <section id="bulk" class="panel bulk" aria-labelledby="bulk-title">
      <div class="panel-head">
        <h2 id="bulk-title">Bulk actions</h2>
        <p class="intro">After an outage: retry or cancel every order that matches, a page at a time. Dry run
          first. Each order's audit trail names you and the reason; the starter admits at most
          <span id="bulk-max-in-flight">MAX_IN_FLIGHT</span> at a time, the rest wait in Pending.</p>
      </div>
      <form id="bulk-form">
        <div class="fields">
          <div class="field"><label for="bulk-state">In state</label><select id="bulk-state">${states}</select></div>
          <div class="field"><label for="bulk-error-code">Error code</label>
            <input id="bulk-error-code" type="text" placeholder="any, e.g. RetriesExhausted" autocomplete="off"></div>
          <div class="field"><label for="bulk-since">Updated since</label>
            <input id="bulk-since" type="datetime-local" step="1"></div>
          <div class="field"><label for="bulk-limit">Page size</label>
            <input id="bulk-limit" type="number" min="1" max="1000" value="500" title="How many each call acts on"></div>
          <div class="field wide"><label for="bulk-reason">Reason</label>
            <input id="bulk-reason" type="text" maxlength="200" placeholder="for each order's audit trail"
              autocomplete="off"></div>
        </div>
        <div class="buttons">
          <button id="bulk-dry-run" type="submit" class="primary">Dry run</button>
          <button id="bulk-retry" type="button" disabled>Retry all</button>
          <button id="bulk-cancel" type="button" class="danger" disabled>Cancel all</button>
        </div>
      </form>
      <progress id="bulk-progress" max="1" value="0" hidden></progress>
      <p id="bulk-result" class="result" role="status"></p>
      <ul id="bulk-sample" class="sample-ids" aria-label="Orders of the last bulk answer (first 20)"></ul>
    </section>`;
}

/**
 * "Tuning the timings": the timing settings the app runs with, the figures they imply, and a what-if slider for
 * each. The rows are here; the browser code (browser/tuning.ts) fills them from GET /api/timings and recomputes
 * with the app's own formulas as a slider moves. Nothing it does reaches the server.
 */
function tuningPanel(): string {
  const knobs = TUNING_KNOBS.map(
    (knob) => `
            <tr data-knob="${knob.input}">
              <th scope="row"><label for="knob-${knob.input}">${knob.label}</label>
                <span class="setting mono">${knob.setting}</span></th>
              <td class="running">–</td>
              <td class="whatif"><input type="range" id="knob-${knob.input}" min="0" max="0" step="1" value="0" disabled>
                <output id="knob-${knob.input}-value" for="knob-${knob.input}">–</output>${
                  knob.schedule ? `<span id="knob-${knob.input}-schedule" class="setting mono"></span>` : ""
                }</td>
            </tr>`,
  ).join("");
  return `
    <section id="tuning" class="panel tuning" aria-labelledby="tuning-title">
      <div class="panel-head">
        <h2 id="tuning-title">Tuning the timings</h2>
        <span class="whatif-badge" id="tuning-badge">What-if, not applied</span>
        <span class="spacer"></span>
        <button type="button" id="tuning-reset" disabled>Reset to the running settings</button>
      </div>
      <p class="intro">Three numbers decide how fast a stuck step is recovered and how much load the Supervisor
        adds: the step timeout, the Supervisor's period and the back-off. Move a slider to see the trade-off. The
        figures are computed in this browser with the app's own formulas (<span class="mono">src/domain/timingBudget.ts</span>);
        nothing is sent to the server, and the app keeps running with the settings in the "Running" column.</p>
      <p id="tuning-problem" class="alert" role="alert" hidden></p>
      <div class="tuning-grid">
        <table id="tuning-settings">
          <caption class="sr-only">Timing settings: as the app runs, and what-if</caption>
          <thead><tr><th scope="col">Setting</th><th scope="col">Running</th><th scope="col">What-if</th></tr></thead>
          <tbody>${knobs}
          </tbody>
        </table>
        <div>
          <table id="tuning-figures">
            <caption class="sr-only">What the settings imply: running, what-if, and the change</caption>
            <thead><tr><th scope="col">Figure</th><th scope="col" class="num">Running</th>
              <th scope="col" class="num">What-if</th><th scope="col" class="num">Change</th></tr></thead>
            <tbody id="tuning-figures-body"><tr><td colspan="4" class="empty">Loading…</td></tr></tbody>
          </table>
          <p class="hint">Times run from the stuck step's dispatch to the retry's claim. The longest workflow has
            <span id="tuning-steps">–</span> steps; kills and outages of a remote service add to the longest
            order (docs/chaos.md).</p>
        </div>
      </div>
      <h3 class="tuning-sub">Back-off and retries, what-if</h3>
      <table id="tuning-retries">
        <caption class="sr-only">Each failure of an attempt: the back-off and when the retry is claimed</caption>
        <thead><tr><th scope="col" class="num">Failure</th><th scope="col" class="num">Back-off</th>
          <th scope="col" class="num">Retried within, notice received</th>
          <th scope="col" class="num">Retried within, found by the sweep</th></tr></thead>
        <tbody id="tuning-retries-body"></tbody>
      </table>
      <p id="tuning-apply" class="note" role="status"></p>
    </section>`;
}

/** The whole page; `options` are embedded as JSON for the browser code. */
export function renderDashboardPage(options: DashboardPageOptions): string {
  const nonce = escapeHtml(options.nonce);
  const config: DashboardConfig = {
    apiBase: options.apiBase,
    simulatorUrl: options.simulatorUrl,
    refreshMs: options.refreshMs ?? 2000,
    states: PROCESS_STATES,
    operatorStates: { retry: RETRYABLE_STATES, cancel: CANCELLABLE_STATES },
    /** Each service's operations, for the fault form (src/domain/process.ts). */
    operations: Object.fromEntries(AGENT_NAMES.map((s) => [s, SERVICES[s].operations])),
    signedInAs: options.signedInAs,
  };
  const who = options.signedInAs;
  const roles = who.roles.length > 0 ? who.roles.join(", ") : "no role";
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Operator dashboard · Scheduler Agent Supervisor</title>
  <link rel="icon" href="data:,">
  <style nonce="${nonce}">${DASHBOARD_CSS}</style>
</head>
<body>
  <header class="top">
    <div>
      <h1>Operator dashboard</h1>
      <p class="sub">Scheduler Agent Supervisor · orders across ${serviceList()} · <a
        href="${escapeHtml(options.apiBase)}openapi.json">API description (OpenAPI)</a></p>
    </div>
    <div class="who">
      <p id="connection" class="connection waiting">Connecting…</p>
      <p id="signed-in" class="sub">Signed in as <strong>${escapeHtml(who.name)}</strong> (${escapeHtml(roles)})${
        who.canOperate ? "" : " · read only: retry and cancel need the operator role"
      }</p>
    </div>
  </header>
  <main>
    <p id="api-error" class="alert" role="alert" hidden></p>
    <section class="panel" aria-labelledby="counts-title">
      <h2 id="counts-title">Orders by state</h2>
      <div class="cards">${stateCards()}
      </div>
      <dl class="gauges">
        <div><dt>In flight</dt><dd id="in-flight">–</dd></div>
        <div><dt>Backlog</dt><dd id="backlog">–</dd></div>
        <div><dt>Oldest pending</dt><dd id="oldest-pending">–</dd></div>
      </dl>
      <dl class="gauges services" aria-label="Circuit breakers (shared by every instance)">
        <div><dt>Remote services (shared circuit breakers):</dt></div>${AGENT_NAMES.map(
          (service) =>
            `
        <div><dt>${service}</dt><dd id="service-${service}" class="breaker" data-state="">–</dd></div>`,
        ).join("")}
      </dl>
    </section>
    ${playground(options).trim()}
    <section class="panel" aria-labelledby="orders-title">
      <div class="panel-head">
        <h2 id="orders-title">Orders</h2>
        <span class="spacer"></span>
        <label for="state-filter">State</label>
        <select id="state-filter"><option value="">All states</option>${stateOptions()}</select>
      </div>
      <div class="table-wrap">
        <table id="orders">
          <caption class="sr-only">Orders, most recently updated first</caption>
          <thead><tr>
            <th scope="col">Order</th><th scope="col">State</th><th scope="col">Attempt</th>
            <th scope="col">Failures</th><th scope="col">Locked by</th><th scope="col">Complete by</th>
            <th scope="col">Last error</th><th scope="col">Updated</th>
          </tr></thead>
          <tbody id="orders-body"><tr><td colspan="8" class="empty">Loading…</td></tr></tbody>
        </table>
      </div>
      <p id="orders-note" class="note"></p>
    </section>
    ${bulkPanel(options).trim()}
    <section id="detail" class="panel" aria-labelledby="detail-title" hidden>
      <div class="panel-head">
        <h2 id="detail-title">Order <span id="detail-id" class="mono"></span></h2>
        <span id="detail-state"></span>
        <span class="spacer"></span>
        <button type="button" id="retry" disabled>Retry</button>
        <button type="button" id="cancel" class="danger" disabled>Cancel order</button>
        <button type="button" id="close-detail">Close</button>
      </div>
      <p id="action-result" class="result" role="status"></p>
      <div id="detail-body" class="detail-grid"></div>
    </section>
    ${tuningPanel().trim()}
  </main>
  <script type="application/json" id="${DASHBOARD_CONFIG_ID}">${scriptJson(config)}</script>${DASHBOARD_ENTRY_MODULES.map(
    (module) => `
  <script type="module" nonce="${nonce}" src="${escapeHtml(options.apiBase)}dashboard/${module}"></script>`,
  ).join("")}
</body>
</html>
`;
}

/** What a browser gets instead of the page when the caller may not see it: the API's reason, as a small page. */
export function renderRefusalPage(status: number, reason: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Operator dashboard · ${status}</title><link rel="icon" href="data:,"></head>
<body><h1>Operator dashboard</h1><p>HTTP ${status}: ${escapeHtml(reason)}</p></body>
</html>
`;
}
