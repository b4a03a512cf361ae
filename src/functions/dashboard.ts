import { randomBytes } from "node:crypto";
import { app, type HttpRequest, type HttpResponseInit } from "@azure/functions";
import { getConfig } from "../config";
import { dashboardContentSecurityPolicy, renderDashboardPage } from "../dashboard/page";

/**
 * The operator dashboard (DESIGN §5): GET /api/dashboard answers the page, which then uses the operator API. The
 * fault panel appears only where DASHBOARD_SIMULATOR_URL is set (the devhost). In Azure, open it with
 * ?code=<function key>: the page sends the same key with each API call.
 */
app.http("dashboard", {
  route: "dashboard",
  methods: ["GET"],
  authLevel: "function",
  handler: (request: HttpRequest): HttpResponseInit => {
    const config = getConfig();
    // The API lives beside the page, whatever the host's route prefix is.
    const apiBase = new URL(request.url).pathname.replace(/dashboard\/?$/, "");
    const nonce = randomBytes(16).toString("base64");
    const options = {
      apiBase,
      simulatorUrl: config.dashboardSimulatorUrl,
      agentMaxAttempts: config.agentMaxAttempts,
      nonce,
    };
    return {
      status: 200,
      body: renderDashboardPage(options),
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "content-security-policy": dashboardContentSecurityPolicy(options),
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
      },
    };
  },
});
