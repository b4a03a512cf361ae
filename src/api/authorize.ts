import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import type { AppConfig } from "../config";
import { capText } from "../domain";
import { problem } from "./responses";
import { hasRole, PRINCIPAL_HEADER, readPrincipal, ROLES, type Principal, type Role } from "./principal";

/**
 * Whether the principal header can be believed. With OPERATOR_AUTH=platform only the platform may set it, which
 * it does when its authentication is on (WEBSITE_AUTH_ENABLED): it then strips a client's own header. With the
 * authentication off the header would be whatever the caller wrote, so nothing is believed and the operator
 * routes fail closed. OPERATOR_AUTH=header (local runtimes only, refused in Azure at start-up) takes the header
 * as sent: the devhost, or a developer's curl, plays the platform.
 */
export function principalHeaderTrusted(
  config: Pick<AppConfig, "operatorAuth">,
  env: Record<string, string | undefined> = process.env,
): boolean {
  return config.operatorAuth === "header" || /^true$/i.test(env.WEBSITE_AUTH_ENABLED ?? "");
}

export type Authorization = { ok: true; principal: Principal } | { ok: false; response: HttpResponseInit };

/**
 * The signed-in principal of a request to an operator route, if it holds `role`: otherwise 401 (no or broken
 * principal), 403 (signed in without the role) or 503 (sign-in is not set up), each naming what is missing.
 */
export function authorize(
  request: HttpRequest,
  config: Pick<AppConfig, "operatorAuth">,
  role: Role,
  env: Record<string, string | undefined> = process.env,
): Authorization {
  if (!principalHeaderTrusted(config, env)) {
    return {
      ok: false,
      response: problem(
        503,
        "operator sign-in is not set up: OPERATOR_AUTH=platform needs the platform's authentication " +
          "(App Service authentication with Entra ID), which is off for this app",
      ),
    };
  }
  const read = readPrincipal(request);
  if (read.kind === "anonymous") {
    return {
      ok: false,
      response: {
        ...problem(401, `sign-in required: this route needs a signed-in user with the role ${role}`),
        headers: { "cache-control": "no-store", "www-authenticate": 'Bearer realm="operators"' },
      },
    };
  }
  if (read.kind === "invalid") return { ok: false, response: problem(401, read.reason) };
  if (!hasRole(read.principal, role)) {
    const held = read.principal.roles.length > 0 ? capText(read.principal.roles.join(", "), 200) : "none";
    return {
      ok: false,
      response: problem(403, `${read.principal.name} lacks the role ${role} (roles held: ${held})`),
    };
  }
  return { ok: true, principal: read.principal };
}

export { PRINCIPAL_HEADER, ROLES };
