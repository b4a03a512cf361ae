/**
 * The dashboard's browser code, plain ES2020 in one string: no framework and no build step, so the page is one
 * response of the `dashboard` function. It talks to the operator API only (and, on the devhost, to the simulator's
 * /_faults). Everything it shows from the API is put in the DOM as text, never as markup. It is written without
 * template literals so that it can live inside this one.
 */
export const DASHBOARD_SCRIPT = String.raw`
(() => {
  "use strict";
  const config = JSON.parse(document.getElementById("dashboard-config").textContent);
  const STATES = config.states;
  const RETRYABLE = config.operatorStates.retry;
  const CANCELLABLE = config.operatorStates.cancel;
  const OPERATIONS = config.operations;
  // Who the platform signed in (the page is served only to a principal with a role), and whether they may act.
  const canOperate = config.signedInAs.canOperate;
  const $ = (id) => document.getElementById(id);

  let serverOffsetMs = 0; // the API's clock minus this browser's, so countdowns use the server's time
  let filter = "";
  let selected = null;
  let shownList = "";
  let shownDetail = "";
  let shownFaults = "";
  let refreshing = false;
  let refreshes = 0;

  // ---- helpers -------------------------------------------------------------------------------------------------

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") el.className = value;
      else if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
      else el.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : String(child));
    }
    return el;
  }

  /** Replaces an element's content; takes what h() takes as children (arrays, nulls). */
  function fill(el, ...children) {
    el.replaceChildren(...h("div", {}, children).childNodes);
  }

  async function call(url, init) {
    const res = await fetch(url, Object.assign({ cache: "no-store" }, init));
    const text = await res.text();
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    return { status: res.status, ok: res.ok, body, retryAfter: res.headers.get("retry-after") };
  }

  function api(path, init) {
    // No key: the session cookie of the platform's sign-in goes with each same-origin call by itself.
    const headers = Object.assign({ accept: "application/json" }, (init && init.headers) || {});
    return call(config.apiBase + path, Object.assign({}, init, { headers }));
  }

  function simulator(path, init) {
    return call(config.simulatorUrl + path, init);
  }

  const postJson = (body) => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const enc = encodeURIComponent;
  const pad = (n) => String(n).padStart(2, "0");

  function time(iso) {
    if (!iso) return "";
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return String(iso);
    const clock = pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds());
    return d.toDateString() === new Date().toDateString() ? clock : d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + clock;
  }

  function timeEl(iso) {
    return iso ? h("time", { datetime: iso, title: iso }, time(iso)) : h("span", { class: "muted" }, "–");
  }

  function duration(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m " + pad(s % 60) + "s";
    if (s < 86400) return Math.floor(s / 3600) + "h " + pad(Math.floor((s % 3600) / 60)) + "m";
    return Math.floor(s / 86400) + "d " + Math.floor((s % 86400) / 3600) + "h";
  }

  function errorText(error) {
    return error ? error.code + ": " + error.message : "";
  }

  function badge(state) {
    return h("span", { class: "badge state-" + state }, state);
  }

  function answer(res) {
    if (res.body && typeof res.body === "object" && res.body.error) return res.body.error;
    return typeof res.body === "string" ? res.body : JSON.stringify(res.body);
  }

  function showResult(el, ok, text) {
    el.className = "result " + (ok ? "ok" : "refused");
    el.textContent = text;
  }

  // ---- counts --------------------------------------------------------------------------------------------------

  function renderStats(stats) {
    serverOffsetMs = Date.parse(stats.at) - Date.now();
    for (const state of STATES) $("count-" + state).textContent = String(stats.counts[state] || 0);
    $("in-flight").textContent = stats.inFlight + " of " + stats.maxInFlight;
    $("backlog").textContent = stats.backlog + " of " + stats.maxPendingBacklog;
    $("oldest-pending").textContent = stats.oldestPendingAgeSeconds === null ? "none" : duration(stats.oldestPendingAgeSeconds * 1000);
    if ($("bulk-max-in-flight")) $("bulk-max-in-flight").textContent = String(stats.maxInFlight);
    for (const breaker of stats.services || []) {
      const el = $("service-" + breaker.service);
      if (!el) continue;
      el.dataset.state = breaker.state;
      el.textContent = breakerText(breaker);
      el.title = breaker.since ? "unavailable since " + breaker.since : "";
    }
  }

  // A service's shared circuit breaker in words: up, unavailable until when, or probing.
  function breakerText(b) {
    if (b.state === "closed") return "up";
    if (b.state === "open") return "unavailable" + (b.unavailableUntil ? ", next probe " + time(b.unavailableUntil) : ", probe due");
    return "probing" + (b.probe ? " (order " + b.probe.orderId + ")" : "");
  }

  function setFilter(state) {
    filter = state;
    $("state-filter").value = state;
    for (const card of document.querySelectorAll(".card[data-state]")) {
      card.setAttribute("aria-pressed", String(card.dataset.state === state));
    }
    shownList = "";
    void refresh();
  }

  // ---- orders table --------------------------------------------------------------------------------------------

  function countdown(cell) {
    const due = Date.parse(cell.dataset.completeBy) - (Date.now() + serverOffsetMs);
    cell.textContent = due >= 0 ? "in " + duration(due) : "overdue " + duration(-due);
    cell.classList.toggle("overdue", due < 0);
    cell.classList.toggle("due", due >= 0);
  }

  function tickCountdowns() {
    for (const cell of document.querySelectorAll("[data-complete-by]")) countdown(cell);
  }

  function orderRow(record) {
    const failures = record.failureCount + (record.compensationFailureCount ? " + " + record.compensationFailureCount + " undo" : "");
    const due = record.completeBy
      ? h("td", { class: "nowrap", "data-complete-by": record.completeBy, title: "completeBy " + record.completeBy })
      : h("td", { class: "muted" }, "–");
    const row = h(
      "tr",
      { "data-order-id": record.orderId, "data-state": record.processState, class: record.orderId === selected ? "selected" : null },
      h("td", { class: "nowrap" }, h("button", { type: "button", class: "link mono", onclick: () => select(record.orderId) }, record.orderId)),
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

  function renderOrders(page) {
    const key = JSON.stringify(page) + "|" + selected;
    if (key === shownList) return;
    shownList = key;
    const rows = page.items.map(orderRow);
    if (rows.length === 0) {
      rows.push(h("tr", {}, h("td", { colspan: 8, class: "empty" }, filter ? "No " + filter + " orders." : "No orders yet.")));
    }
    fill($("orders-body"), ...rows);
    $("orders-note").textContent =
      page.items.length === 0
        ? ""
        : page.continuation
          ? "Showing the " + page.items.length + " most recently updated; pick a state to narrow the list."
          : "Showing all " + page.items.length + (filter ? " " + filter : "") + " orders, most recently updated first.";
  }

  // ---- order detail --------------------------------------------------------------------------------------------

  function select(orderId) {
    selected = orderId;
    shownDetail = "";
    shownList = "";
    $("detail").hidden = false;
    $("detail-id").textContent = orderId;
    $("action-result").textContent = "";
    fill($("detail-body"), h("p", { class: "muted" }, "Loading…"));
    for (const row of document.querySelectorAll("#orders-body tr[data-order-id]")) {
      row.classList.toggle("selected", row.dataset.orderId === orderId);
    }
    void loadDetail()
      .catch((error) => fill($("detail-body"), h("p", { class: "alert" }, "Cannot load " + orderId + ": " + error.message)))
      .then(() => $("detail").scrollIntoView({ behavior: "smooth", block: "start" }));
  }

  function closeDetail() {
    selected = null;
    shownList = "";
    $("detail").hidden = true;
    void refresh();
  }

  function stepEvents(step) {
    const events = [];
    if (step.dispatchedAt) events.push(["dispatched", step.dispatchedAt, "attempt " + step.dispatchedInAttempt]);
    if (step.status === "Succeeded") events.push(["succeeded", step.completedAt, summary(step.result)]);
    if (step.status === "Failed") events.push(["failed", step.completedAt || (step.lastError && step.lastError.at), errorText(step.lastError)]);
    if (step.status === "Dispatched" && step.lastError) events.push(["error", step.lastError.at, errorText(step.lastError)]);
    const undo = step.undo;
    if (undo) {
      events.push(["compensation dispatched", undo.dispatchedAt, "attempt " + undo.dispatchedInAttempt]);
      if (undo.status === "Succeeded") events.push(["compensated", undo.completedAt, summary(undo.result)]);
      if (undo.status === "Failed") events.push(["compensation failed", undo.completedAt || (undo.lastError && undo.lastError.at), errorText(undo.lastError)]);
      if (undo.status === "Dispatched" && undo.lastError) events.push(["compensation error", undo.lastError.at, errorText(undo.lastError)]);
    }
    return events;
  }

  function summary(value) {
    if (value === null || value === undefined) return "";
    if (typeof value !== "object") return String(value);
    // The ids a reader looks for (reservationId, chargeId, trackingNumber...), not the whole answer.
    const ids = Object.entries(value).filter(([k, v]) => k !== "orderId" && (typeof v === "string" || typeof v === "number"));
    return ids.map(([k, v]) => k + " " + v).join(", ");
  }

  function stepsSection(state) {
    const stepLabel = (step) => {
      if (step.undo) return step.undo.status === "Succeeded" ? "Compensated" : step.undo.status === "Failed" ? "Compensation failed" : "Compensating";
      return step.status === "Pending" ? "Not started" : step.status === "Dispatched" ? "In doubt / waiting" : step.status;
    };
    const stateOf = (step) =>
      step.undo ? (step.undo.status === "Failed" ? "CompensationFailed" : "Compensated") : step.status === "Succeeded" ? "Processed" : step.status === "Failed" ? "Error" : step.status === "Dispatched" ? "Processing" : "Pending";
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
            { class: "state-" + stateOf(step), "data-step": step.name },
            h("div", { class: "step-head" }, String(i + 1) + ". " + step.name, h("span", { class: "agent" }, step.agent), h("span", { class: "badge state-" + stateOf(step) }, stepLabel(step))),
            h(
              "ul",
              { class: "events" },
              stepEvents(step).map(([what, at, detail]) =>
                h("li", { class: "ev-" + what.replace(/ /g, "-") }, h("span", { class: "nowrap" }, timeEl(at)), h("span", { class: "what" }, what), h("span", { class: "muted" }, detail || "")),
              ),
            ),
          ),
        ),
      ),
    );
  }

  function orderSection(order, state) {
    const facts = [];
    if (order) {
      const total = order.items.reduce((sum, item) => sum + item.quantity * item.unitPrice, 0);
      facts.push(["Customer", order.customerId]);
      facts.push(["Items", order.items.map((i) => i.quantity + " × " + i.sku + " @ " + i.unitPrice).join(", ")]);
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
    return h("section", { "aria-labelledby": "order-title" }, h("h3", { id: "order-title" }, "Order"), factList(facts));
  }

  function factList(facts) {
    return h("dl", { class: "facts" }, facts.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
  }

  function orchestrationSection(res) {
    let body;
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
      body = h("p", { class: "muted" }, res.status === 404 ? answer(res) : "HTTP " + res.status + ": " + answer(res));
    }
    return h("section", { "aria-labelledby": "orchestration-title", id: "orchestration" }, h("h3", { id: "orchestration-title" }, "Orchestration"), body);
  }

  function statusSection(state, messages) {
    const to = state && state.replyTo ? "Sent to " + state.replyTo + " (derived from the audit trail)." : "No replyTo: none sent.";
    const rows = messages.map((m) => h("tr", {}, h("td", { class: "nowrap" }, timeEl(m.at)), h("td", { class: "status" }, m.status), h("td", {}, badge(m.processState)), h("td", {}, m.detail || "")));
    return h(
      "section",
      { "aria-labelledby": "status-title", id: "status-messages" },
      h("h3", { id: "status-title" }, "Status messages"),
      h("p", { class: "hint" }, to),
      rows.length === 0
        ? null
        : h("div", { class: "scroll" }, h("table", {}, h("thead", {}, h("tr", {}, ["At", "Status", "State", "Detail"].map((c) => h("th", { scope: "col" }, c)))), h("tbody", {}, rows))),
    );
  }

  function auditSection(state) {
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
      h("div", { class: "scroll" }, h("table", {}, h("thead", {}, h("tr", {}, ["At", "Event", "By", "Transition", "Attempt", "Detail"].map((c) => h("th", { scope: "col" }, c)))), h("tbody", {}, rows))),
    );
  }

  // The order's trace as a waterfall: each span a row, indented under its parent, its bar placed on the trace's
  // time line. Widths are set through the CSSOM, which the page's Content-Security-Policy allows (attributes not).
  function traceSection(res) {
    const head = h("h3", { id: "trace-title" }, "Trace");
    if (res.status !== 200) {
      return h("section", { class: "span3", "aria-labelledby": "trace-title", id: "trace" }, head, h("p", { class: "muted" }, res.status === 404 ? answer(res) : "HTTP " + res.status + ": " + answer(res)));
    }
    const spans = res.body.spans;
    const total = Math.max(1, ...spans.map((s) => s.startOffsetMs + s.durationMs));
    const ms = (n) => (n >= 100 ? Math.round(n) : Math.round(n * 10) / 10) + " ms";
    const rows = spans.map((s) => {
      const bar = h("span", { class: "bar kind-" + s.kind + (s.status === "error" ? " error" : "") });
      bar.style.left = (100 * s.startOffsetMs) / total + "%";
      bar.style.width = Math.max(0.3, (100 * s.durationMs) / total) + "%";
      const name = h("td", { class: "span-name", title: Object.entries(s.attributes).map(([k, v]) => k + " = " + v).join("\n") }, s.name);
      name.style.paddingLeft = 8 + 14 * s.depth + "px";
      return h(
        "tr",
        { "data-span-id": s.spanId, "data-kind": s.kind, class: s.status === "error" ? "span-error" : null },
        name,
        h("td", { class: "nowrap service" }, s.service),
        h("td", { class: "num nowrap" }, "+" + ms(s.startOffsetMs)),
        h("td", { class: "num nowrap" }, ms(s.durationMs)),
        h("td", { class: "nowrap status" }, s.status === "error" ? h("span", { class: "span-status error", title: s.statusMessage || "" }, "error") : s.status),
        h("td", { class: "waterfall" }, h("span", { class: "track" }, bar)),
      );
    });
    return h(
      "section",
      { class: "span3", "aria-labelledby": "trace-title", id: "trace" },
      head,
      h("p", { class: "hint" }, spans.length + " spans of trace ", h("span", { class: "mono" }, res.body.traceId), ", " + ms(total) + " end to end, as this process kept them (the last " + res.body.buffer.capacity.toLocaleString("en-US") + " spans). Hover a name for its attributes."),
      h("div", { class: "scroll tall" }, h("table", { class: "trace" }, h("thead", {}, h("tr", {}, ["Span", "Service", "Start", "Duration", "Status", "Timeline"].map((c) => h("th", { scope: "col" }, c)))), h("tbody", {}, rows))),
    );
  }

  async function loadDetail() {
    const orderId = selected;
    const [detail, orchestration, trace] = await Promise.all([api("orders/" + enc(orderId)), api("orders/" + enc(orderId) + "/orchestration"), api("orders/" + enc(orderId) + "/trace")]);
    if (orderId !== selected) return;
    const key = JSON.stringify([detail, orchestration, trace]);
    if (key === shownDetail) return;
    shownDetail = key;
    if (detail.status !== 200) {
      fill($("detail-state"));
      fill($("detail-body"), h("p", { class: "alert" }, "HTTP " + detail.status + ": " + answer(detail)));
      $("retry").disabled = true;
      $("cancel").disabled = true;
      return;
    }
    const { order, state, statusMessages } = detail.body;
    const processState = state ? state.processState : null;
    fill($("detail-state"), processState ? badge(processState) : "");
    $("retry").disabled = !canOperate || !RETRYABLE.includes(processState);
    $("cancel").disabled = !canOperate || !CANCELLABLE.includes(processState);
    fill($("detail-body"), 
      orderSection(order, state),
      state ? stepsSection(state) : h("section", {}, h("h3", {}, "Steps"), h("p", { class: "muted" }, "No state record yet.")),
      orchestrationSection(orchestration),
      statusSection(state, statusMessages || []),
      state ? auditSection(state) : null,
      traceSection(trace),
    );
  }

  async function operatorAction(action) {
    const orderId = selected;
    if (!orderId) return;
    if (action === "cancel" && !confirm("Cancel " + orderId + "? Its completed steps will be undone in reverse order.")) return;
    const button = $(action);
    button.disabled = true;
    const res = await api("orders/" + enc(orderId) + "/" + action, postJson({})).catch((e) => ({ status: 0, ok: false, body: { error: String(e) } }));
    const label = action === "retry" ? "Retry" : "Cancel";
    showResult(
      $("action-result"),
      res.status === 202,
      res.status === 202 ? label + ": 202 Accepted, " + orderId + " is now " + res.body.processState + "." : label + " refused: HTTP " + res.status + ", " + answer(res),
    );
    shownDetail = "";
    await refresh();
  }

  // ---- devhost playground: sample orders and faults ------------------------------------------------------------

  const CATALOGUE = [4.99, 7.5, 9.99, 12, 14.95, 19.99, 24.5, 29.99, 34, 39.95, 49.99, 59, 74.99, 89.9, 99.99, 129, 149.95, 179, 219.99, 249];
  const DESTINATIONS = [
    [{ line1: "Unter den Linden 77", city: "Berlin", postalCode: "10117", country: "DE" }, "EUR"],
    [{ line1: "12 Rue de Rivoli", city: "Paris", postalCode: "75004", country: "FR" }, "EUR"],
    [{ line1: "221B Baker Street", city: "London", postalCode: "NW1 6XE", country: "GB" }, "GBP"],
    [{ line1: "400 Broad St", city: "Seattle", postalCode: "98109", country: "US" }, "USD"],
  ];
  const pick = (n) => Math.floor(Math.random() * n);

  // The simulator says what it declines; the page asks it rather than keep a copy of its setting.
  let paymentLimit = null;
  async function simulatorPaymentLimit() {
    if (paymentLimit === null) {
      const res = await simulator("/_health");
      if (!res.ok || typeof res.body.paymentLimit !== "number") throw new Error("the simulator did not say its payment limit");
      paymentLimit = res.body.paymentLimit;
    }
    return paymentLimit;
  }

  /**
   * A valid order; a declined one carries a bulk line that takes it past the payment limit. (A browser-side copy of
   * tools/sampleOrders.ts's idea, kept small: the page cannot load the tools.)
   */
  function sampleOrder(orderId, declined, limit) {
    const skus = new Set();
    const lines = 1 + pick(3);
    while (skus.size < lines) skus.add(pick(15));
    const items = [...skus].map((i) => ({ sku: "SKU-" + (i + 1), quantity: 1 + pick(3), unitPrice: CATALOGUE[i] }));
    if (declined) items.push({ sku: "SKU-20", quantity: Math.floor(limit / 249) + 2, unitPrice: 249 });
    const [address, currency] = DESTINATIONS[pick(DESTINATIONS.length)];
    return { orderId, customerId: "C-" + (1 + pick(500)), items, currency, shippingAddress: Object.assign({}, address), replyTo: "status-demo" };
  }

  async function submitSamples(event) {
    event.preventDefault();
    const count = Math.min(50, Math.max(1, Number($("sample-count").value) || 1));
    const declined = $("sample-declined").checked;
    const d = new Date();
    const prefix = "WEB-" + pad(d.getHours()) + pad(d.getMinutes()) + pad(d.getSeconds()) + "-" + Math.random().toString(36).slice(2, 5).toUpperCase();
    $("sample-submit").disabled = true;
    try {
      const limit = declined ? await simulatorPaymentLimit() : 0;
      const orders = Array.from({ length: count }, (_, i) => sampleOrder(prefix + "-" + (i + 1), declined, limit));
      const answers = await Promise.all(orders.map((o) => api("orders", postJson(o)).catch((e) => ({ status: 0, body: { error: String(e) } }))));
      const accepted = orders.filter((_, i) => answers[i].status === 202);
      const refused = answers.filter((a) => a.status !== 202);
      showResult(
        $("sample-result"),
        refused.length === 0,
        accepted.length + " of " + count + " accepted (202)" + (declined ? ", each over the payment limit" : "") + (refused.length ? "; refused: HTTP " + refused[0].status + " " + answer(refused[0]) : "."),
      );
      fill($("sample-ids"), ...accepted.map((o) => h("li", {}, h("button", { type: "button", class: "link mono", "data-order-id": o.orderId, onclick: () => select(o.orderId) }, o.orderId))));
    } finally {
      $("sample-submit").disabled = false;
    }
    await refresh();
  }

  function fillOperations() {
    const service = $("fault-service").value;
    const current = $("fault-operation").value;
    fill($("fault-operation"), h("option", { value: "" }, "any"), OPERATIONS[service].map((op) => h("option", { value: op }, op)));
    if (OPERATIONS[service].includes(current)) $("fault-operation").value = current;
  }

  async function armFault(event) {
    event.preventDefault();
    const spec = { service: $("fault-service").value, kind: $("fault-kind").value };
    const operation = $("fault-operation").value;
    if (operation) spec.operation = operation;
    const orderId = $("fault-order").value.trim();
    if (orderId) spec.orderId = orderId;
    const calls = $("fault-calls").value.trim();
    if (calls !== "") spec.count = Number(calls);
    if (spec.kind === "latency") spec.latencyMs = Number($("fault-latency").value) || 1000;
    const res = await simulator("/_faults", postJson(spec)).catch((e) => ({ status: 0, body: { message: String(e) } }));
    const what = spec.kind + " on " + spec.service + (operation ? "/" + operation : "") + (orderId ? " for " + orderId : "");
    showResult(
      $("fault-result"),
      res.status === 201,
      res.status === 201
        ? "Armed " + res.body.id + ": " + what + (spec.count ? ", next " + spec.count + " call" + (spec.count > 1 ? "s" : "") : ", every call") + "."
        : "Refused: HTTP " + res.status + ", " + ((res.body && res.body.message) || answer(res)),
    );
    await loadFaults();
  }

  async function removeFault(id) {
    await simulator("/_faults/" + enc(id), { method: "DELETE" });
    await loadFaults();
  }

  async function clearFaults() {
    const res = await simulator("/_faults", { method: "DELETE" });
    showResult($("fault-result"), res.status === 204, res.status === 204 ? "All faults cleared." : "HTTP " + res.status);
    await loadFaults();
  }

  async function loadFaults() {
    const res = await simulator("/_faults").catch((e) => ({ status: 0, body: { message: String(e) } }));
    const key = JSON.stringify(res);
    if (key === shownFaults) return;
    shownFaults = key;
    if (res.status !== 200) {
      fill($("faults"), h("p", { class: "alert" }, "Simulator at " + config.simulatorUrl + " unreachable: " + ((res.body && res.body.message) || "HTTP " + res.status)));
      return;
    }
    const faults = res.body.faults;
    fill($("faults"), 
      faults.length === 0
        ? h("p", { class: "hint" }, "No faults armed: every call succeeds.")
        : h(
            "table",
            {},
            h("caption", { class: "sr-only" }, "Armed faults"),
            h("thead", {}, h("tr", {}, ["Fault", "Target", "Calls left", "Hits", ""].map((c) => h("th", { scope: "col" }, c)))),
            h(
              "tbody",
              {},
              faults.map((f) =>
                h(
                  "tr",
                  { "data-fault-id": f.id },
                  h("td", {}, f.id + " " + f.kind),
                  h("td", {}, f.service + (f.operation ? "/" + f.operation : ""), f.orderId ? [h("br"), h("span", { class: "mono" }, f.orderId)] : null),
                  h("td", { class: "num remaining" }, f.remaining === null ? "all" : String(f.remaining)),
                  h("td", { class: "num hits" }, String(f.hits)),
                  h("td", {}, h("button", { type: "button", class: "link", "aria-label": "Remove fault " + f.id, onclick: () => removeFault(f.id) }, "remove")),
                ),
              ),
            ),
          ),
    );
  }

  // ---- bulk actions --------------------------------------------------------------------------------------------

  // Ids a dry run shows: a sample to spot-check, so the dry run reads no more than it shows.
  const BULK_SAMPLE = 20;
  let dryRun = null; // { key, filter, matched }: what the last dry run counted; the actions need one for the filter
  let bulkRunning = false;
  const number = (n) => Number(n).toLocaleString("en-US");
  const plural = (n, one, many) => number(n) + " " + (n === 1 ? one : many);
  const failed = (e) => ({ status: 0, ok: false, body: { error: String(e) } });
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  /** The filter as the form says it; the datetime-local input is in this browser's time zone. */
  function bulkFilter() {
    const filter = { state: $("bulk-state").value };
    const code = $("bulk-error-code").value.trim();
    if (code) filter.errorCode = code;
    const since = $("bulk-since").value;
    if (since) {
      const t = new Date(since);
      filter.updatedSince = Number.isNaN(t.getTime()) ? since : t.toISOString();
    }
    return filter;
  }

  function updateBulkButtons() {
    const state = $("bulk-state").value;
    const ready = !bulkRunning && dryRun !== null && dryRun.key === JSON.stringify(bulkFilter()) && dryRun.matched > 0;
    $("bulk-retry").disabled = !(ready && RETRYABLE.includes(state));
    $("bulk-cancel").disabled = !(ready && CANCELLABLE.includes(state));
    $("bulk-dry-run").disabled = bulkRunning;
  }

  function bulkFilterChanged() {
    if (dryRun !== null) showResult($("bulk-result"), true, "Filter changed: dry run again.");
    dryRun = null;
    updateBulkButtons();
  }

  function showBulkSample(ids) {
    fill($("bulk-sample"), ...ids.map((id) => h("li", {}, h("button", { type: "button", class: "link mono", "data-order-id": id, onclick: () => select(id) }, id))));
  }

  async function bulkDryRun(event) {
    event.preventDefault();
    const filter = bulkFilter();
    // Pinned to now, so that Retry all / Cancel all act on what this dry run counted, not on orders failing since.
    const pinned = Object.assign({}, filter, { updatedBefore: new Date(Date.now() + serverOffsetMs).toISOString() });
    const action = RETRYABLE.includes(filter.state) ? "retry" : "cancel";
    dryRun = null;
    updateBulkButtons();
    $("bulk-progress").hidden = true;
    const res = await api("bulk/" + action, postJson({ filter: pinned, dryRun: true, limit: BULK_SAMPLE })).catch(failed);
    if (res.status !== 200) {
      showResult($("bulk-result"), false, "Dry run refused: HTTP " + res.status + ", " + answer(res));
      showBulkSample([]);
      return;
    }
    dryRun = { key: JSON.stringify(filter), filter: pinned, matched: res.body.matched };
    const match = res.body.matched === 1 ? " order matches" : " orders match";
    showResult($("bulk-result"), true, number(res.body.matched) + match + ", as of " + time(pinned.updatedBefore) + "." + (res.body.matched > 0 ? "" : " Nothing to do."));
    showBulkSample(res.body.sample);
    updateBulkButtons();
  }

  /** One call after another, each on the page after the last, until the API says none is left. */
  async function runBulk(action) {
    const run = dryRun;
    if (run === null) return;
    const label = action === "retry" ? "Retry all" : "Cancel all";
    if (action === "cancel" && !confirm("Cancel " + plural(run.matched, "order", "orders") + "? Their completed steps will be undone in reverse order.")) return;
    bulkRunning = true;
    updateBulkButtons();
    const progress = $("bulk-progress");
    Object.assign(progress, { hidden: false, max: run.matched, value: 0 });
    const reason = $("bulk-reason").value.trim();
    // As typed: the API refuses a bad one, naming it, and the page shows that.
    const limit = $("bulk-limit").value.trim() === "" ? null : Number($("bulk-limit").value);
    const totals = { acted: 0, refused: 0 };
    const progressText = () => "acted " + number(totals.acted) + " of " + number(run.matched) + (totals.refused ? ", " + number(totals.refused) + " refused" : "");
    let continuation = null;
    let sample = [];
    try {
      for (;;) {
        const body = Object.assign({ filter: run.filter }, reason ? { reason } : {}, limit !== null ? { limit } : {}, continuation ? { continuation } : {});
        const res = await api("bulk/" + action, postJson(body)).catch(failed);
        if (res.status === 429) {
          const seconds = Number(res.retryAfter) || 10;
          showResult($("bulk-result"), true, label + ": " + progressText() + "; waiting " + seconds + " s, " + answer(res));
          await sleep(seconds * 1000);
          continue;
        }
        if (res.status !== 200) {
          showResult($("bulk-result"), false, label + " stopped: HTTP " + res.status + ", " + answer(res) + " (" + progressText() + ")");
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
      const refusedNote = totals.refused ? " (changed since they were read: dry run again to see what is left)" : "";
      showResult($("bulk-result"), totals.refused === 0, label + " done: " + progressText() + refusedNote + ".");
    } finally {
      bulkRunning = false;
      dryRun = null;
      updateBulkButtons();
      await refresh();
    }
  }

  // ---- polling -------------------------------------------------------------------------------------------------

  function setConnection(ok, text) {
    $("connection").className = "connection" + (ok ? "" : " down");
    $("connection").textContent = text;
    $("api-error").hidden = ok;
    if (!ok) $("api-error").textContent = text;
  }

  async function refresh() {
    if (refreshing) return;
    refreshing = true;
    try {
      const [stats, page] = await Promise.all([api("stats"), api("orders?limit=100" + (filter ? "&state=" + enc(filter) : ""))]);
      if (!stats.ok) throw new Error("GET stats answered HTTP " + stats.status + ": " + answer(stats));
      if (!page.ok) throw new Error("GET orders answered HTTP " + page.status + ": " + answer(page));
      renderStats(stats.body);
      renderOrders(page.body);
      await Promise.all([selected ? loadDetail() : null, config.simulatorUrl ? loadFaults() : null]);
      setConnection(true, "Live, updated " + time(new Date().toISOString()));
    } catch (error) {
      setConnection(false, "Cannot reach the operator API: " + (error && error.message ? error.message : String(error)));
    } finally {
      refreshing = false;
      document.body.dataset.refreshes = String(++refreshes);
    }
  }

  // ---- wiring --------------------------------------------------------------------------------------------------

  for (const card of document.querySelectorAll(".card[data-state]")) {
    card.addEventListener("click", () => setFilter(card.dataset.state === filter ? "" : card.dataset.state));
  }
  $("state-filter").addEventListener("change", (e) => setFilter(e.target.value));
  $("retry").addEventListener("click", () => operatorAction("retry"));
  $("cancel").addEventListener("click", () => operatorAction("cancel"));
  $("close-detail").addEventListener("click", closeDetail);
  if (config.simulatorUrl) {
    $("sample-form").addEventListener("submit", submitSamples);
    $("fault-form").addEventListener("submit", armFault);
    $("fault-service").addEventListener("change", fillOperations);
    $("fault-kind").addEventListener("change", () => ($("latency-field").hidden = $("fault-kind").value !== "latency"));
    $("clear-faults").addEventListener("click", clearFaults);
    fillOperations();
  }
  if ($("bulk-form")) {
    $("bulk-form").addEventListener("submit", bulkDryRun);
    for (const id of ["bulk-state", "bulk-error-code", "bulk-since"]) $(id).addEventListener("input", bulkFilterChanged);
    $("bulk-retry").addEventListener("click", () => runBulk("retry"));
    $("bulk-cancel").addEventListener("click", () => runBulk("cancel"));
  }
  const requested = new URLSearchParams(location.search).get("order");
  if (requested) select(requested);
  void refresh();
  setInterval(refresh, config.refreshMs);
  setInterval(tickCountdowns, 1000);
})();
`;
