/**
 * The operator view of the dashboard: counts, the orders table, an order's detail with retry and cancel, bulk
 * actions and, on the devhost, the playground (sample orders and the simulator's faults). It talks to the operator
 * API only (and, on the devhost, to the simulator's /_faults), polling every config.refreshMs. Everything it shows
 * from the API goes into the DOM as text (h), never as markup.
 */
import { $, $as, fill, h, pad, readConfig } from "./dom.js";
import { NO_UNDO, NO_UNDO_TITLE, hasNoUndo, stepLabel, stepState } from "./stepView.js";

// ---- what the API answers, as far as the page reads it (the schemas are src/api/apiSchemas.ts) ----------------

interface Problem {
  code: string;
  message: string;
  at?: string;
}

interface Breaker {
  service: string;
  state: string;
  since?: string | null;
  unavailableUntil?: string | null;
  probe?: { orderId: string } | null;
}

interface Stats {
  at: string;
  counts: Record<string, number>;
  inFlight: number;
  maxInFlight: number;
  backlog: number;
  maxPendingBacklog: number;
  oldestPendingAgeSeconds: number | null;
  services?: Breaker[];
}

interface OrderRow {
  orderId: string;
  processState: string;
  attempt: number;
  failureCount: number;
  compensationFailureCount?: number;
  lockedBy?: string | null;
  completeBy?: string | null;
  lastError?: Problem | null;
  updatedAt: string;
}

interface OrdersPage {
  items: OrderRow[];
  continuation?: string | null;
}

interface StepAction {
  status: "Pending" | "Dispatched" | "Succeeded" | "Failed";
  dispatchedAt?: string | null;
  dispatchedInAttempt?: number | null;
  completedAt?: string | null;
  result?: unknown;
  lastError?: Problem | null;
}

interface Step extends StepAction {
  name: string;
  agent: string;
  undoable?: boolean;
  undo?: StepAction | null;
}

interface AuditEvent {
  at: string;
  event: string;
  by: string;
  from?: string | null;
  to: string;
  attempt: number;
  detail?: string | null;
}

interface StateRecord {
  processState: string;
  workflow: { name: string; version: number };
  attempt: number;
  failureCount: number;
  compensationFailureCount: number;
  lockedBy?: string | null;
  completeBy?: string | null;
  retryAt?: string | null;
  lastError?: Problem | null;
  createdAt: string;
  replyTo?: string | null;
  steps: Step[];
  history: AuditEvent[];
}

interface Order {
  customerId: string;
  currency: string;
  items: { sku: string; quantity: number; unitPrice: number }[];
  shippingAddress: { line1: string; city: string; postalCode: string; country: string };
}

interface StatusMessage {
  at: string;
  status: string;
  processState: string;
  detail?: string | null;
}

interface OrderDetail {
  order: Order | null;
  state: StateRecord | null;
  statusMessages?: StatusMessage[];
}

interface Orchestration {
  instanceId: string;
  runtimeStatus: string;
  customStatus: unknown;
  createdTime: string;
  lastUpdatedTime: string;
  output: unknown;
}

interface TraceSpan {
  spanId: string;
  name: string;
  kind: string;
  service: string;
  depth: number;
  startOffsetMs: number;
  durationMs: number;
  status: string;
  statusMessage?: string;
  attributes: Record<string, unknown>;
}

interface Trace {
  traceId: string;
  spans: TraceSpan[];
  buffer: { capacity: number };
}

interface Fault {
  id: string;
  kind: string;
  service: string;
  operation?: string;
  orderId?: string;
  remaining: number | null;
  hits: number;
}

interface BulkFilter {
  state: string;
  errorCode?: string;
  updatedSince?: string;
  updatedBefore?: string;
}

interface BulkAnswer {
  matched: number;
  acted: number;
  refused: number;
  sample: string[];
  continuation?: string | null;
}

/**
 * An answer: its status and body, parsed when it is JSON. `body` is typed as what a success carries; a refusal's
 * is read through answer(), which expects no more than {error} or text.
 */
interface Answer<T> {
  status: number;
  ok: boolean;
  body: T;
  retryAfter?: string | null;
}

const config = readConfig();
const STATES = config.states;
const RETRYABLE = config.operatorStates.retry;
const CANCELLABLE = config.operatorStates.cancel;
const OPERATIONS = config.operations;
// Who the platform signed in (the page is served only to a principal with a role), and whether they may act.
const canOperate = config.signedInAs.canOperate;

let serverOffsetMs = 0; // the API's clock minus this browser's, so countdowns use the server's time
let filter = "";
let selected: string | null = null;
let shownList = "";
let shownDetail = "";
let shownFaults = "";
let refreshing = false;
let refreshes = 0;

// ---- helpers ----------------------------------------------------------------------------------------------------

async function call<T>(url: string, init?: RequestInit): Promise<Answer<T>> {
  const res = await fetch(url, { cache: "no-store", ...init });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status: res.status, ok: res.ok, body: body as T, retryAfter: res.headers.get("retry-after") };
}

function api<T>(path: string, init?: RequestInit): Promise<Answer<T>> {
  // No key: the session cookie of the platform's sign-in goes with each same-origin call by itself.
  const headers = { accept: "application/json", ...(init?.headers as Record<string, string> | undefined) };
  return call<T>(config.apiBase + path, { ...init, headers });
}

function simulator<T>(path: string, init?: RequestInit): Promise<Answer<T>> {
  return call<T>(config.simulatorUrl + path, init);
}

/** An answer for a call that never got one (the network failed): status 0, the error as its reason. */
const failed = (e: unknown): Answer<never> =>
  ({ status: 0, ok: false, body: { error: String(e), message: String(e) } }) as unknown as Answer<never>;

const postJson = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});
const enc = encodeURIComponent;

function time(iso: string | null | undefined): string {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  const clock = pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds());
  return d.toDateString() === new Date().toDateString()
    ? clock
    : d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + clock;
}

function timeEl(iso: string | null | undefined): HTMLElement {
  return iso ? h("time", { datetime: iso, title: iso }, time(iso)) : h("span", { class: "muted" }, "–");
}

function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m " + pad(s % 60) + "s";
  if (s < 86400) return Math.floor(s / 3600) + "h " + pad(Math.floor((s % 3600) / 60)) + "m";
  return Math.floor(s / 86400) + "d " + Math.floor((s % 86400) / 3600) + "h";
}

function errorText(error: Problem | null | undefined): string {
  return error ? error.code + ": " + error.message : "";
}

function badge(state: string): HTMLElement {
  return h("span", { class: "badge state-" + state }, state);
}

/** What a refusal said: the API's {error}, else the body as it came. */
function answer(res: Answer<unknown>): string {
  const body = res.body as { error?: string } | string | null;
  if (body && typeof body === "object" && body.error) return body.error;
  return typeof body === "string" ? body : JSON.stringify(body);
}

function showResult(el: HTMLElement, ok: boolean, text: string): void {
  el.className = "result " + (ok ? "ok" : "refused");
  el.textContent = text;
}

const errorMessage = (error: unknown): string =>
  error instanceof Error && error.message ? error.message : String(error);

// ---- counts -----------------------------------------------------------------------------------------------------

function renderStats(stats: Stats): void {
  serverOffsetMs = Date.parse(stats.at) - Date.now();
  for (const state of STATES) $("count-" + state).textContent = String(stats.counts[state] || 0);
  $("in-flight").textContent = stats.inFlight + " of " + stats.maxInFlight;
  $("backlog").textContent = stats.backlog + " of " + stats.maxPendingBacklog;
  $("oldest-pending").textContent =
    stats.oldestPendingAgeSeconds === null ? "none" : duration(stats.oldestPendingAgeSeconds * 1000);
  // Only operators have the bulk panel.
  const maxInFlight = document.getElementById("bulk-max-in-flight");
  if (maxInFlight) maxInFlight.textContent = String(stats.maxInFlight);
  for (const breaker of stats.services || []) {
    const el = document.getElementById("service-" + breaker.service);
    if (!el) continue;
    el.dataset.state = breaker.state;
    el.textContent = breakerText(breaker);
    el.title = breaker.since ? "unavailable since " + breaker.since : "";
  }
}

// A service's shared circuit breaker in words: up, unavailable until when, or probing.
function breakerText(b: Breaker): string {
  if (b.state === "closed") return "up";
  if (b.state === "open")
    return "unavailable" + (b.unavailableUntil ? ", next probe " + time(b.unavailableUntil) : ", probe due");
  return "probing" + (b.probe ? " (order " + b.probe.orderId + ")" : "");
}

function setFilter(state: string): void {
  filter = state;
  $as("state-filter", HTMLSelectElement).value = state;
  for (const card of document.querySelectorAll<HTMLElement>(".card[data-state]")) {
    card.setAttribute("aria-pressed", String(card.dataset.state === state));
  }
  shownList = "";
  void refresh();
}

// ---- orders table -----------------------------------------------------------------------------------------------

function countdown(cell: HTMLElement): void {
  const due = Date.parse(cell.dataset.completeBy ?? "") - (Date.now() + serverOffsetMs);
  cell.textContent = due >= 0 ? "in " + duration(due) : "overdue " + duration(-due);
  cell.classList.toggle("overdue", due < 0);
  cell.classList.toggle("due", due >= 0);
}

function tickCountdowns(): void {
  for (const cell of document.querySelectorAll<HTMLElement>("[data-complete-by]")) countdown(cell);
}

function orderRow(record: OrderRow): HTMLElement {
  const failures =
    record.failureCount +
    (record.compensationFailureCount ? " + " + record.compensationFailureCount + " undo" : "");
  const due = record.completeBy
    ? h("td", {
        class: "nowrap",
        "data-complete-by": record.completeBy,
        title: "completeBy " + record.completeBy,
      })
    : h("td", { class: "muted" }, "–");
  const row = h(
    "tr",
    {
      "data-order-id": record.orderId,
      "data-state": record.processState,
      class: record.orderId === selected ? "selected" : null,
    },
    h(
      "td",
      { class: "nowrap" },
      h(
        "button",
        { type: "button", class: "link mono", onclick: () => select(record.orderId) },
        record.orderId,
      ),
    ),
    h("td", { class: "state" }, badge(record.processState)),
    h("td", { class: "num attempt" }, String(record.attempt)),
    h("td", { class: "num failures" }, failures),
    h("td", { class: "mono lockedby" }, record.lockedBy || h("span", { class: "muted" }, "–")),
    due,
    h("td", { class: "error", title: errorText(record.lastError) }, errorText(record.lastError)),
    h("td", { class: "nowrap" }, timeEl(record.updatedAt)),
  );
  if (record.completeBy) countdown(due);
  return row;
}

function renderOrders(page: OrdersPage): void {
  const key = JSON.stringify(page) + "|" + selected;
  if (key === shownList) return;
  shownList = key;
  const rows = page.items.map(orderRow);
  if (rows.length === 0) {
    rows.push(
      h(
        "tr",
        {},
        h("td", { colspan: 8, class: "empty" }, filter ? "No " + filter + " orders." : "No orders yet."),
      ),
    );
  }
  fill($("orders-body"), ...rows);
  $("orders-note").textContent =
    page.items.length === 0
      ? ""
      : page.continuation
        ? "Showing the " + page.items.length + " most recently updated; pick a state to narrow the list."
        : "Showing all " +
          page.items.length +
          (filter ? " " + filter : "") +
          " orders, most recently updated first.";
}

// ---- order detail -----------------------------------------------------------------------------------------------

function select(orderId: string): void {
  selected = orderId;
  shownDetail = "";
  shownList = "";
  $("detail").hidden = false;
  $("detail-id").textContent = orderId;
  $("action-result").textContent = "";
  fill($("detail-body"), h("p", { class: "muted" }, "Loading…"));
  for (const row of document.querySelectorAll<HTMLElement>("#orders-body tr[data-order-id]")) {
    row.classList.toggle("selected", row.dataset.orderId === orderId);
  }
  void loadDetail()
    .catch((error: unknown) =>
      fill(
        $("detail-body"),
        h("p", { class: "alert" }, "Cannot load " + orderId + ": " + errorMessage(error)),
      ),
    )
    .then(() => $("detail").scrollIntoView({ behavior: "smooth", block: "start" }));
}

function closeDetail(): void {
  selected = null;
  shownList = "";
  $("detail").hidden = true;
  void refresh();
}

type StepEvent = [what: string, at: string | null | undefined, detail: string];

function stepEvents(step: Step): StepEvent[] {
  const events: StepEvent[] = [];
  if (step.dispatchedAt)
    events.push(["dispatched", step.dispatchedAt, "attempt " + step.dispatchedInAttempt]);
  if (step.status === "Succeeded") events.push(["succeeded", step.completedAt, summary(step.result)]);
  if (step.status === "Failed")
    events.push(["failed", step.completedAt || step.lastError?.at, errorText(step.lastError)]);
  if (step.status === "Dispatched" && step.lastError)
    events.push(["error", step.lastError.at, errorText(step.lastError)]);
  const undo = step.undo;
  if (undo) {
    events.push(["compensation dispatched", undo.dispatchedAt, "attempt " + undo.dispatchedInAttempt]);
    if (undo.status === "Succeeded") events.push(["compensated", undo.completedAt, summary(undo.result)]);
    if (undo.status === "Failed")
      events.push(["compensation failed", undo.completedAt || undo.lastError?.at, errorText(undo.lastError)]);
    if (undo.status === "Dispatched" && undo.lastError)
      events.push(["compensation error", undo.lastError.at, errorText(undo.lastError)]);
  }
  return events;
}

function summary(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value !== "object") return String(value);
  // The ids a reader looks for (reservationId, chargeId, trackingNumber...), not the whole answer.
  const ids = Object.entries(value).filter(
    ([k, v]) => k !== "orderId" && (typeof v === "string" || typeof v === "number"),
  );
  return ids.map(([k, v]) => k + " " + String(v)).join(", ");
}

function stepsSection(state: StateRecord): HTMLElement {
  return h(
    "section",
    { "aria-labelledby": "steps-title" },
    h("h3", { id: "steps-title" }, "Steps"),
    h(
      "ol",
      { class: "steps" },
      state.steps.map((step, i) =>
        h(
          "li",
          { class: "state-" + stepState(step), "data-step": step.name },
          h(
            "div",
            { class: "step-head" },
            String(i + 1) + ". " + step.name,
            h("span", { class: "agent" }, step.agent),
            h("span", { class: "badge state-" + stepState(step) }, stepLabel(step)),
            hasNoUndo(step) ? h("span", { class: "no-undo", title: NO_UNDO_TITLE }, NO_UNDO) : null,
          ),
          h(
            "ul",
            { class: "events" },
            stepEvents(step).map(([what, at, detail]) =>
              h(
                "li",
                { class: "ev-" + what.replace(/ /g, "-") },
                h("span", { class: "nowrap" }, timeEl(at)),
                h("span", { class: "what" }, what),
                h("span", { class: "muted" }, detail || ""),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

function orderSection(order: Order | null, state: StateRecord | null): HTMLElement {
  const facts: [string, string][] = [];
  if (order) {
    const total = order.items.reduce((sum, item) => sum + item.quantity * item.unitPrice, 0);
    facts.push(["Customer", order.customerId]);
    facts.push([
      "Items",
      order.items.map((i) => i.quantity + " × " + i.sku + " @ " + i.unitPrice).join(", "),
    ]);
    facts.push(["Total", total.toFixed(2) + " " + order.currency]);
    const a = order.shippingAddress;
    facts.push(["Ship to", a.line1 + ", " + a.postalCode + " " + a.city + ", " + a.country]);
  }
  if (state) {
    facts.push(["Workflow", state.workflow.name + " v" + state.workflow.version]);
    facts.push(["Attempt", String(state.attempt)]);
    facts.push(["Failures", state.failureCount + " forward, " + state.compensationFailureCount + " undo"]);
    facts.push(["Locked by", state.lockedBy || "–"]);
    facts.push(["Complete by", state.completeBy ? time(state.completeBy) : "–"]);
    if (state.retryAt) facts.push(["Retry at", time(state.retryAt)]);
    if (state.lastError) facts.push(["Last error", errorText(state.lastError)]);
    facts.push(["Created", time(state.createdAt)]);
  }
  return h(
    "section",
    { "aria-labelledby": "order-title" },
    h("h3", { id: "order-title" }, "Order"),
    factList(facts),
  );
}

function factList(facts: [string, string][]): HTMLElement {
  return h(
    "dl",
    { class: "facts" },
    facts.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]),
  );
}

function orchestrationSection(res: Answer<Orchestration>): HTMLElement {
  let body: HTMLElement;
  if (res.status === 200) {
    const o = res.body;
    body = factList([
      ["Instance", o.instanceId],
      ["Runtime status", o.runtimeStatus],
      ["Custom status", o.customStatus === null ? "–" : JSON.stringify(o.customStatus)],
      ["Created", time(o.createdTime)],
      ["Last updated", time(o.lastUpdatedTime)],
      ["Output", o.output === null ? "–" : JSON.stringify(o.output)],
    ]);
  } else {
    body = h(
      "p",
      { class: "muted" },
      res.status === 404 ? answer(res) : "HTTP " + res.status + ": " + answer(res),
    );
  }
  return h(
    "section",
    { "aria-labelledby": "orchestration-title", id: "orchestration" },
    h("h3", { id: "orchestration-title" }, "Orchestration"),
    body,
  );
}

const headRow = (columns: string[]): HTMLElement =>
  h(
    "thead",
    {},
    h(
      "tr",
      {},
      columns.map((c) => h("th", { scope: "col" }, c)),
    ),
  );

function statusSection(state: StateRecord | null, messages: StatusMessage[]): HTMLElement {
  const to =
    state && state.replyTo
      ? "Sent to " + state.replyTo + " (derived from the audit trail)."
      : "No replyTo: none sent.";
  const rows = messages.map((m) =>
    h(
      "tr",
      {},
      h("td", { class: "nowrap" }, timeEl(m.at)),
      h("td", { class: "status" }, m.status),
      h("td", {}, badge(m.processState)),
      h("td", {}, m.detail || ""),
    ),
  );
  return h(
    "section",
    { "aria-labelledby": "status-title", id: "status-messages" },
    h("h3", { id: "status-title" }, "Status messages"),
    h("p", { class: "hint" }, to),
    rows.length === 0
      ? null
      : h(
          "div",
          { class: "scroll" },
          h("table", {}, headRow(["At", "Status", "State", "Detail"]), h("tbody", {}, rows)),
        ),
  );
}

function auditSection(state: StateRecord): HTMLElement {
  const rows = state.history.map((e) =>
    h(
      "tr",
      { "data-event": e.event },
      h("td", { class: "nowrap" }, timeEl(e.at)),
      h("td", { class: "event" }, e.event),
      h("td", {}, e.by),
      h("td", { class: "nowrap" }, e.from ? [badge(e.from), " → "] : null, badge(e.to)),
      h("td", { class: "num" }, String(e.attempt)),
      h("td", {}, e.detail || ""),
    ),
  );
  return h(
    "section",
    { class: "span2", "aria-labelledby": "audit-title", id: "audit-trail" },
    h("h3", { id: "audit-title" }, "Audit trail"),
    h(
      "div",
      { class: "scroll" },
      h("table", {}, headRow(["At", "Event", "By", "Transition", "Attempt", "Detail"]), h("tbody", {}, rows)),
    ),
  );
}

// The order's trace as a waterfall: each span a row, indented under its parent, its bar placed on the trace's
// time line. Widths are set through the CSSOM, which the page's Content-Security-Policy allows (attributes not).
function traceSection(res: Answer<Trace>): HTMLElement {
  const head = h("h3", { id: "trace-title" }, "Trace");
  if (res.status !== 200) {
    return h(
      "section",
      { class: "span3", "aria-labelledby": "trace-title", id: "trace" },
      head,
      h(
        "p",
        { class: "muted" },
        res.status === 404 ? answer(res) : "HTTP " + res.status + ": " + answer(res),
      ),
    );
  }
  const spans = res.body.spans;
  const total = Math.max(1, ...spans.map((s) => s.startOffsetMs + s.durationMs));
  const ms = (n: number): string => (n >= 100 ? Math.round(n) : Math.round(n * 10) / 10) + " ms";
  const rows = spans.map((s) => {
    const bar = h("span", { class: "bar kind-" + s.kind + (s.status === "error" ? " error" : "") });
    bar.style.left = (100 * s.startOffsetMs) / total + "%";
    bar.style.width = Math.max(0.3, (100 * s.durationMs) / total) + "%";
    const name = h(
      "td",
      {
        class: "span-name",
        title: Object.entries(s.attributes)
          .map(([k, v]) => k + " = " + String(v))
          .join("\n"),
      },
      s.name,
    );
    name.style.paddingLeft = 8 + 14 * s.depth + "px";
    return h(
      "tr",
      { "data-span-id": s.spanId, "data-kind": s.kind, class: s.status === "error" ? "span-error" : null },
      name,
      h("td", { class: "nowrap service" }, s.service),
      h("td", { class: "num nowrap" }, "+" + ms(s.startOffsetMs)),
      h("td", { class: "num nowrap" }, ms(s.durationMs)),
      h(
        "td",
        { class: "nowrap status" },
        s.status === "error"
          ? h("span", { class: "span-status error", title: s.statusMessage || "" }, "error")
          : s.status,
      ),
      h("td", { class: "waterfall" }, h("span", { class: "track" }, bar)),
    );
  });
  return h(
    "section",
    { class: "span3", "aria-labelledby": "trace-title", id: "trace" },
    head,
    h(
      "p",
      { class: "hint" },
      spans.length + " spans of trace ",
      h("span", { class: "mono" }, res.body.traceId),
      ", " +
        ms(total) +
        " end to end, as this process kept them (the last " +
        res.body.buffer.capacity.toLocaleString("en-US") +
        " spans). Hover a name for its attributes.",
    ),
    h(
      "div",
      { class: "scroll tall" },
      h(
        "table",
        { class: "trace" },
        headRow(["Span", "Service", "Start", "Duration", "Status", "Timeline"]),
        h("tbody", {}, rows),
      ),
    ),
  );
}

async function loadDetail(): Promise<void> {
  const orderId = selected;
  if (orderId === null) return;
  const [detail, orchestration, trace] = await Promise.all([
    api<OrderDetail>("orders/" + enc(orderId)),
    api<Orchestration>("orders/" + enc(orderId) + "/orchestration"),
    api<Trace>("orders/" + enc(orderId) + "/trace"),
  ]);
  if (orderId !== selected) return;
  const key = JSON.stringify([detail, orchestration, trace]);
  if (key === shownDetail) return;
  shownDetail = key;
  const retry = $as("retry", HTMLButtonElement);
  const cancel = $as("cancel", HTMLButtonElement);
  if (detail.status !== 200) {
    fill($("detail-state"));
    fill($("detail-body"), h("p", { class: "alert" }, "HTTP " + detail.status + ": " + answer(detail)));
    retry.disabled = true;
    cancel.disabled = true;
    return;
  }
  const { order, state, statusMessages } = detail.body;
  const processState = state ? state.processState : null;
  fill($("detail-state"), processState ? badge(processState) : "");
  retry.disabled = !canOperate || processState === null || !RETRYABLE.includes(processState);
  cancel.disabled = !canOperate || processState === null || !CANCELLABLE.includes(processState);
  fill(
    $("detail-body"),
    orderSection(order, state),
    state
      ? stepsSection(state)
      : h("section", {}, h("h3", {}, "Steps"), h("p", { class: "muted" }, "No state record yet.")),
    orchestrationSection(orchestration),
    statusSection(state, statusMessages || []),
    state ? auditSection(state) : null,
    traceSection(trace),
  );
}

async function operatorAction(action: "retry" | "cancel"): Promise<void> {
  const orderId = selected;
  if (!orderId) return;
  if (
    action === "cancel" &&
    !confirm("Cancel " + orderId + "? Its completed steps will be undone in reverse order.")
  )
    return;
  $as(action, HTMLButtonElement).disabled = true;
  const res = await api<{ processState: string }>(
    "orders/" + enc(orderId) + "/" + action,
    postJson({}),
  ).catch(failed);
  const label = action === "retry" ? "Retry" : "Cancel";
  showResult(
    $("action-result"),
    res.status === 202,
    res.status === 202
      ? label + ": 202 Accepted, " + orderId + " is now " + res.body.processState + "."
      : label + " refused: HTTP " + res.status + ", " + answer(res),
  );
  shownDetail = "";
  await refresh();
}

// ---- devhost playground: sample orders and faults ---------------------------------------------------------------

const CATALOGUE = [
  4.99, 7.5, 9.99, 12, 14.95, 19.99, 24.5, 29.99, 34, 39.95, 49.99, 59, 74.99, 89.9, 99.99, 129, 149.95, 179,
  219.99, 249,
];
const DESTINATIONS: [Order["shippingAddress"], string][] = [
  [{ line1: "Unter den Linden 77", city: "Berlin", postalCode: "10117", country: "DE" }, "EUR"],
  [{ line1: "12 Rue de Rivoli", city: "Paris", postalCode: "75004", country: "FR" }, "EUR"],
  [{ line1: "221B Baker Street", city: "London", postalCode: "NW1 6XE", country: "GB" }, "GBP"],
  [{ line1: "400 Broad St", city: "Seattle", postalCode: "98109", country: "US" }, "USD"],
];
const pick = (n: number): number => Math.floor(Math.random() * n);

// The simulator says what it declines; the page asks it rather than keep a copy of its setting.
let paymentLimit: number | null = null;
async function simulatorPaymentLimit(): Promise<number> {
  if (paymentLimit === null) {
    const res = await simulator<{ paymentLimit?: unknown }>("/_health");
    if (!res.ok || typeof res.body.paymentLimit !== "number")
      throw new Error("the simulator did not say its payment limit");
    paymentLimit = res.body.paymentLimit;
  }
  return paymentLimit;
}

/**
 * A valid order; a declined one carries a bulk line that takes it past the payment limit. (A browser-side copy of
 * tools/sampleOrders.ts's idea, kept small: the page cannot load the tools.)
 */
function sampleOrder(orderId: string, declined: boolean, limit: number) {
  const skus = new Set<number>();
  const lines = 1 + pick(3);
  while (skus.size < lines) skus.add(pick(15));
  const items = [...skus].map((i) => ({
    sku: "SKU-" + (i + 1),
    quantity: 1 + pick(3),
    unitPrice: CATALOGUE[i],
  }));
  if (declined) items.push({ sku: "SKU-20", quantity: Math.floor(limit / 249) + 2, unitPrice: 249 });
  const [address, currency] = DESTINATIONS[pick(DESTINATIONS.length)]!;
  return {
    orderId,
    customerId: "C-" + (1 + pick(500)),
    items,
    currency,
    shippingAddress: { ...address },
    replyTo: "status-demo",
  };
}

async function submitSamples(event: Event): Promise<void> {
  event.preventDefault();
  const count = Math.min(50, Math.max(1, Number($as("sample-count", HTMLInputElement).value) || 1));
  const declined = $as("sample-declined", HTMLInputElement).checked;
  const d = new Date();
  const prefix =
    "WEB-" +
    pad(d.getHours()) +
    pad(d.getMinutes()) +
    pad(d.getSeconds()) +
    "-" +
    Math.random().toString(36).slice(2, 5).toUpperCase();
  const submit = $as("sample-submit", HTMLButtonElement);
  submit.disabled = true;
  try {
    const limit = declined ? await simulatorPaymentLimit() : 0;
    const orders = Array.from({ length: count }, (_, i) =>
      sampleOrder(prefix + "-" + (i + 1), declined, limit),
    );
    const answers = await Promise.all(orders.map((o) => api("orders", postJson(o)).catch(failed)));
    const accepted = orders.filter((_, i) => answers[i]?.status === 202);
    const refused = answers.filter((a) => a.status !== 202);
    const firstRefused = refused[0];
    showResult(
      $("sample-result"),
      refused.length === 0,
      accepted.length +
        " of " +
        count +
        " accepted (202)" +
        (declined ? ", each over the payment limit" : "") +
        (firstRefused ? "; refused: HTTP " + firstRefused.status + " " + answer(firstRefused) : "."),
    );
    fill(
      $("sample-ids"),
      ...accepted.map((o) =>
        h(
          "li",
          {},
          h(
            "button",
            {
              type: "button",
              class: "link mono",
              "data-order-id": o.orderId,
              onclick: () => select(o.orderId),
            },
            o.orderId,
          ),
        ),
      ),
    );
  } finally {
    submit.disabled = false;
  }
  await refresh();
}

function fillOperations(): void {
  const service = $as("fault-service", HTMLSelectElement).value;
  const operation = $as("fault-operation", HTMLSelectElement);
  const current = operation.value;
  const operations = OPERATIONS[service] ?? [];
  fill(
    operation,
    h("option", { value: "" }, "any"),
    operations.map((op) => h("option", { value: op }, op)),
  );
  if (operations.includes(current)) operation.value = current;
}

async function armFault(event: Event): Promise<void> {
  event.preventDefault();
  const spec: {
    service: string;
    kind: string;
    operation?: string;
    orderId?: string;
    count?: number;
    latencyMs?: number;
  } = {
    service: $as("fault-service", HTMLSelectElement).value,
    kind: $as("fault-kind", HTMLSelectElement).value,
  };
  const operation = $as("fault-operation", HTMLSelectElement).value;
  if (operation) spec.operation = operation;
  const orderId = $as("fault-order", HTMLInputElement).value.trim();
  if (orderId) spec.orderId = orderId;
  const calls = $as("fault-calls", HTMLInputElement).value.trim();
  if (calls !== "") spec.count = Number(calls);
  if (spec.kind === "latency") spec.latencyMs = Number($as("fault-latency", HTMLInputElement).value) || 1000;
  const res = await simulator<{ id: string; message?: string }>("/_faults", postJson(spec)).catch(failed);
  const what =
    spec.kind +
    " on " +
    spec.service +
    (operation ? "/" + operation : "") +
    (orderId ? " for " + orderId : "");
  showResult(
    $("fault-result"),
    res.status === 201,
    res.status === 201
      ? "Armed " +
          res.body.id +
          ": " +
          what +
          (spec.count ? ", next " + spec.count + " call" + (spec.count > 1 ? "s" : "") : ", every call") +
          "."
      : "Refused: HTTP " + res.status + ", " + ((res.body && res.body.message) || answer(res)),
  );
  await loadFaults();
}

async function removeFault(id: string): Promise<void> {
  await simulator("/_faults/" + enc(id), { method: "DELETE" });
  await loadFaults();
}

async function clearFaults(): Promise<void> {
  const res = await simulator("/_faults", { method: "DELETE" });
  showResult(
    $("fault-result"),
    res.status === 204,
    res.status === 204 ? "All faults cleared." : "HTTP " + res.status,
  );
  await loadFaults();
}

async function loadFaults(): Promise<void> {
  const res = await simulator<{ faults: Fault[]; message?: string }>("/_faults").catch(failed);
  const key = JSON.stringify(res);
  if (key === shownFaults) return;
  shownFaults = key;
  if (res.status !== 200) {
    fill(
      $("faults"),
      h(
        "p",
        { class: "alert" },
        "Simulator at " +
          config.simulatorUrl +
          " unreachable: " +
          ((res.body && res.body.message) || "HTTP " + res.status),
      ),
    );
    return;
  }
  const faults = res.body.faults;
  fill(
    $("faults"),
    faults.length === 0
      ? h("p", { class: "hint" }, "No faults armed: every call succeeds.")
      : h(
          "table",
          {},
          h("caption", { class: "sr-only" }, "Armed faults"),
          headRow(["Fault", "Target", "Calls left", "Hits", ""]),
          h(
            "tbody",
            {},
            faults.map((f) =>
              h(
                "tr",
                { "data-fault-id": f.id },
                h("td", {}, f.id + " " + f.kind),
                h(
                  "td",
                  {},
                  f.service + (f.operation ? "/" + f.operation : ""),
                  f.orderId ? [h("br"), h("span", { class: "mono" }, f.orderId)] : null,
                ),
                h("td", { class: "num remaining" }, f.remaining === null ? "all" : String(f.remaining)),
                h("td", { class: "num hits" }, String(f.hits)),
                h(
                  "td",
                  {},
                  h(
                    "button",
                    {
                      type: "button",
                      class: "link",
                      "aria-label": "Remove fault " + f.id,
                      onclick: () => removeFault(f.id),
                    },
                    "remove",
                  ),
                ),
              ),
            ),
          ),
        ),
  );
}

// ---- bulk actions -----------------------------------------------------------------------------------------------

// Ids a dry run shows: a sample to spot-check, so the dry run reads no more than it shows.
const BULK_SAMPLE = 20;
/** What the last dry run counted; the actions need one for the filter the form shows. */
let dryRun: { key: string; filter: BulkFilter; matched: number } | null = null;
let bulkRunning = false;
const number = (n: number): string => Number(n).toLocaleString("en-US");
const plural = (n: number, one: string, many: string): string => number(n) + " " + (n === 1 ? one : many);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The filter as the form says it; the datetime-local input is in this browser's time zone. */
function bulkFilter(): BulkFilter {
  const filter: BulkFilter = { state: $as("bulk-state", HTMLSelectElement).value };
  const code = $as("bulk-error-code", HTMLInputElement).value.trim();
  if (code) filter.errorCode = code;
  const since = $as("bulk-since", HTMLInputElement).value;
  if (since) {
    const t = new Date(since);
    filter.updatedSince = Number.isNaN(t.getTime()) ? since : t.toISOString();
  }
  return filter;
}

function updateBulkButtons(): void {
  const state = $as("bulk-state", HTMLSelectElement).value;
  const ready =
    !bulkRunning && dryRun !== null && dryRun.key === JSON.stringify(bulkFilter()) && dryRun.matched > 0;
  $as("bulk-retry", HTMLButtonElement).disabled = !(ready && RETRYABLE.includes(state));
  $as("bulk-cancel", HTMLButtonElement).disabled = !(ready && CANCELLABLE.includes(state));
  $as("bulk-dry-run", HTMLButtonElement).disabled = bulkRunning;
}

function bulkFilterChanged(): void {
  if (dryRun !== null) showResult($("bulk-result"), true, "Filter changed: dry run again.");
  dryRun = null;
  updateBulkButtons();
}

function showBulkSample(ids: string[]): void {
  fill(
    $("bulk-sample"),
    ...ids.map((id) =>
      h(
        "li",
        {},
        h(
          "button",
          { type: "button", class: "link mono", "data-order-id": id, onclick: () => select(id) },
          id,
        ),
      ),
    ),
  );
}

async function bulkDryRun(event: Event): Promise<void> {
  event.preventDefault();
  const filter = bulkFilter();
  // Pinned to now, so that Retry all / Cancel all act on what this dry run counted, not on orders failing since.
  const pinned: BulkFilter = {
    ...filter,
    updatedBefore: new Date(Date.now() + serverOffsetMs).toISOString(),
  };
  const action = RETRYABLE.includes(filter.state) ? "retry" : "cancel";
  dryRun = null;
  updateBulkButtons();
  $("bulk-progress").hidden = true;
  const res = await api<BulkAnswer>(
    "bulk/" + action,
    postJson({ filter: pinned, dryRun: true, limit: BULK_SAMPLE }),
  ).catch(failed);
  if (res.status !== 200) {
    showResult($("bulk-result"), false, "Dry run refused: HTTP " + res.status + ", " + answer(res));
    showBulkSample([]);
    return;
  }
  dryRun = { key: JSON.stringify(filter), filter: pinned, matched: res.body.matched };
  const match = res.body.matched === 1 ? " order matches" : " orders match";
  showResult(
    $("bulk-result"),
    true,
    number(res.body.matched) +
      match +
      ", as of " +
      time(pinned.updatedBefore) +
      "." +
      (res.body.matched > 0 ? "" : " Nothing to do."),
  );
  showBulkSample(res.body.sample);
  updateBulkButtons();
}

/** One call after another, each on the page after the last, until the API says none is left. */
async function runBulk(action: "retry" | "cancel"): Promise<void> {
  const run = dryRun;
  if (run === null) return;
  const label = action === "retry" ? "Retry all" : "Cancel all";
  if (
    action === "cancel" &&
    !confirm(
      "Cancel " +
        plural(run.matched, "order", "orders") +
        "? Their completed steps will be undone in reverse order.",
    )
  )
    return;
  bulkRunning = true;
  updateBulkButtons();
  const progress = $as("bulk-progress", HTMLProgressElement);
  Object.assign(progress, { hidden: false, max: run.matched, value: 0 });
  const reason = $as("bulk-reason", HTMLInputElement).value.trim();
  // As typed: the API refuses a bad one, naming it, and the page shows that.
  const limitInput = $as("bulk-limit", HTMLInputElement).value.trim();
  const limit = limitInput === "" ? null : Number(limitInput);
  const totals = { acted: 0, refused: 0 };
  const progressText = () =>
    "acted " +
    number(totals.acted) +
    " of " +
    number(run.matched) +
    (totals.refused ? ", " + number(totals.refused) + " refused" : "");
  let continuation: string | null | undefined = null;
  let sample: string[] = [];
  try {
    for (;;) {
      const body = {
        filter: run.filter,
        ...(reason ? { reason } : {}),
        ...(limit !== null ? { limit } : {}),
        ...(continuation ? { continuation } : {}),
      };
      const res: Answer<BulkAnswer> = await api<BulkAnswer>("bulk/" + action, postJson(body)).catch(failed);
      if (res.status === 429) {
        const seconds = Number(res.retryAfter) || 10;
        showResult(
          $("bulk-result"),
          true,
          label + ": " + progressText() + "; waiting " + seconds + " s, " + answer(res),
        );
        await sleep(seconds * 1000);
        continue;
      }
      if (res.status !== 200) {
        showResult(
          $("bulk-result"),
          false,
          label + " stopped: HTTP " + res.status + ", " + answer(res) + " (" + progressText() + ")",
        );
        return;
      }
      totals.acted += res.body.acted;
      totals.refused += res.body.refused;
      continuation = res.body.continuation;
      progress.value = Math.min(run.matched, totals.acted + totals.refused);
      sample = sample.concat(res.body.sample).slice(0, BULK_SAMPLE);
      showBulkSample(sample);
      if (!continuation) break;
      showResult($("bulk-result"), true, label + ": " + progressText() + "…");
    }
    const refusedNote = totals.refused
      ? " (changed since they were read: dry run again to see what is left)"
      : "";
    showResult(
      $("bulk-result"),
      totals.refused === 0,
      label + " done: " + progressText() + refusedNote + ".",
    );
  } finally {
    bulkRunning = false;
    dryRun = null;
    updateBulkButtons();
    await refresh();
  }
}

// ---- polling ----------------------------------------------------------------------------------------------------

function setConnection(ok: boolean, text: string): void {
  $("connection").className = "connection" + (ok ? "" : " down");
  $("connection").textContent = text;
  $("api-error").hidden = ok;
  if (!ok) $("api-error").textContent = text;
}

async function refresh(): Promise<void> {
  if (refreshing) return;
  refreshing = true;
  try {
    const [stats, page] = await Promise.all([
      api<Stats>("stats"),
      api<OrdersPage>("orders?limit=100" + (filter ? "&state=" + enc(filter) : "")),
    ]);
    if (!stats.ok) throw new Error("GET stats answered HTTP " + stats.status + ": " + answer(stats));
    if (!page.ok) throw new Error("GET orders answered HTTP " + page.status + ": " + answer(page));
    renderStats(stats.body);
    renderOrders(page.body);
    await Promise.all([selected ? loadDetail() : null, config.simulatorUrl ? loadFaults() : null]);
    setConnection(true, "Live, updated " + time(new Date().toISOString()));
  } catch (error) {
    setConnection(false, "Cannot reach the operator API: " + errorMessage(error));
  } finally {
    refreshing = false;
    document.body.dataset.refreshes = String(++refreshes);
  }
}

// ---- wiring -----------------------------------------------------------------------------------------------------

for (const card of document.querySelectorAll<HTMLElement>(".card[data-state]")) {
  const state = card.dataset.state ?? "";
  card.addEventListener("click", () => setFilter(state === filter ? "" : state));
}
$("state-filter").addEventListener("change", (e) => setFilter((e.target as HTMLSelectElement).value));
$("retry").addEventListener("click", () => void operatorAction("retry"));
$("cancel").addEventListener("click", () => void operatorAction("cancel"));
$("close-detail").addEventListener("click", closeDetail);
if (config.simulatorUrl) {
  $("sample-form").addEventListener("submit", (e) => void submitSamples(e));
  $("fault-form").addEventListener("submit", (e) => void armFault(e));
  $("fault-service").addEventListener("change", fillOperations);
  $("fault-kind").addEventListener(
    "change",
    () => ($("latency-field").hidden = $as("fault-kind", HTMLSelectElement).value !== "latency"),
  );
  $("clear-faults").addEventListener("click", () => void clearFaults());
  fillOperations();
}
// Only operators have the bulk panel.
if (document.getElementById("bulk-form")) {
  $("bulk-form").addEventListener("submit", (e) => void bulkDryRun(e));
  for (const id of ["bulk-state", "bulk-error-code", "bulk-since"])
    $(id).addEventListener("input", bulkFilterChanged);
  $("bulk-retry").addEventListener("click", () => void runBulk("retry"));
  $("bulk-cancel").addEventListener("click", () => void runBulk("cancel"));
}
const requested = new URLSearchParams(location.search).get("order");
if (requested) select(requested);
void refresh();
setInterval(() => void refresh(), config.refreshMs);
setInterval(tickCountdowns, 1000);
