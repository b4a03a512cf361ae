import { randomBytes } from "node:crypto";
import { app, type HttpRequest, type HttpResponseInit } from "@azure/functions";
import { dependencies } from "../app/dependencies";
import { API, httpTrigger } from "../api/apiOperations";
import { authorize, ROLES } from "../api/authorize";
import { hasRole, readPrincipal } from "../api/principal";
import { problem } from "../api/responses";
import { browserModules } from "../dashboard/browserModules";
import { dashboardContentSecurityPolicy, renderDashboardPage, renderRefusalPage } from "../dashboard/page";

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/**
 * The operator dashboard: GET /api/dashboard answers the page, which then uses the operator API with the same
 * sign-in. It is served to principals with the reader or operator role. A browser that is not signed in is sent
 * to the platform's Entra ID sign-in and comes back here; on a local runtime (OPERATOR_AUTH=header) it gets the
 * reason instead. The fault panel appears only where DASHBOARD_SIMULATOR_URL is set (the devhost).
 */
app.http(API.dashboard.functionName, {
  ...httpTrigger(API.dashboard),
  handler: (request: HttpRequest): HttpResponseInit => {
    const config = dependencies().config;
    const url = new URL(request.url);
    const authorized = authorize(request, config, API.dashboard.access.role);
    if (!authorized.ok) {
      if (
        config.operatorAuth === "platform" &&
        readPrincipal(request).kind === "anonymous" &&
        authorized.response.status === 401
      ) {
        const back = encodeURIComponent(url.pathname);
        return {
          status: 302,
          headers: {
            location: `/.auth/login/aad?post_login_redirect_uri=${back}`,
            "cache-control": "no-store",
          },
        };
      }
      const reason = (authorized.response.jsonBody as { error: string }).error;
      return {
        status: authorized.response.status ?? 401,
        body: renderRefusalPage(authorized.response.status ?? 401, reason),
        headers: PAGE_HEADERS,
      };
    }
    // The API lives beside the page, whatever the host's route prefix is.
    const apiBase = url.pathname.replace(/dashboard\/?$/, "");
    const nonce = randomBytes(16).toString("base64");
    const principal = authorized.principal;
    const options = {
      apiBase,
      simulatorUrl: config.dashboardSimulatorUrl,
      agentMaxAttempts: config.agentMaxAttempts,
      nonce,
      signedInAs: {
        name: principal.name,
        roles: principal.roles,
        canOperate: hasRole(principal, ROLES.operator),
      },
    };
    return {
      status: 200,
      body: renderDashboardPage(options),
      headers: { ...PAGE_HEADERS, "content-security-policy": dashboardContentSecurityPolicy(options) },
    };
  },
});

/**
 * The dashboard's browser code: GET /api/dashboard/{module} answers one module of the browser build by its file
 * name, to whoever may see the page. The name is only looked up among the modules the build emitted
 * (browserModules.ts), never joined to a path.
 */
app.http(API.dashboardModule.functionName, {
  ...httpTrigger(API.dashboardModule),
  handler: (request: HttpRequest): HttpResponseInit => {
    const authorized = authorize(request, dependencies().config, API.dashboardModule.access.role);
    if (!authorized.ok) return authorized.response;
    const name = request.params.module ?? "";
    const source = browserModules().get(name);
    if (source === undefined) return problem(404, `the dashboard has no module ${JSON.stringify(name)}`);
    return {
      status: 200,
      body: source,
      headers: {
        "content-type": "text/javascript; charset=utf-8",
        // A deployment replaces the modules and the page together; a cached module could mismatch the page.
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      },
    };
  },
});
