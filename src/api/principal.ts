import type { HttpRequest } from "@azure/functions";
import { z } from "zod";
import { boundedText } from "../domain";

/**
 * Who calls the operator routes. Operators are people signed in with Entra ID through the platform's built-in
 * authentication (App Service "Easy Auth"), which validates the session or bearer token and passes the caller on
 * in the `x-ms-client-principal` header (base64 JSON), after removing any such header the client sent. The app
 * reads the principal from that header only, and never from anything a caller declares about itself.
 */
export const PRINCIPAL_HEADER = "x-ms-client-principal";

/** The app roles of the app registration (infra/operator-app-roles.json holds the same values). */
export const ROLES = {
  /** Reads: the dashboard, the order listing and details, stats, orchestration status. */
  reader: "Orders.Reader",
  /** Reads, and retries or cancels orders. */
  operator: "Orders.Operator",
} as const;
export type Role = (typeof ROLES)[keyof typeof ROLES];

export interface Principal {
  /** Stable id: the Entra object id when there is one. */
  id: string;
  /** What a person reads in the audit trail: the sign-in name. */
  name: string;
  roles: string[];
  provider: string;
}

const claimsSchema = z.strictObject({
  auth_typ: z.string().max(64),
  claims: z.array(z.looseObject({ typ: z.string().max(512), val: z.string().max(4096) })).max(1000),
  name_typ: z.string().max(512).optional(),
  role_typ: z.string().max(512).optional(),
});

const OBJECT_ID_CLAIMS = ["http://schemas.microsoft.com/identity/claims/objectidentifier", "oid"];
const NAME_CLAIMS = [
  "name",
  "preferred_username",
  "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name",
];
const APPLICATION_CLAIMS = ["azp", "appid"];
// Entra puts app roles in `roles`; the platform's claim mapping may name them after role_typ or the long URI.
const ROLE_CLAIMS = ["roles", "http://schemas.microsoft.com/ws/2008/06/identity/claims/role"];

export type PrincipalResult =
  { kind: "anonymous" } | { kind: "invalid"; reason: string } | { kind: "principal"; principal: Principal };

/** The caller the platform vouches for, from `x-ms-client-principal`; "anonymous" when there is none. */
export function readPrincipal(request: HttpRequest): PrincipalResult {
  const header = request.headers.get(PRINCIPAL_HEADER);
  if (!header) return { kind: "anonymous" };
  if (header.length > 32_768 || !/^[A-Za-z0-9+/=_-]+$/.test(header)) {
    return { kind: "invalid", reason: `${PRINCIPAL_HEADER}: expected base64 JSON` };
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
  } catch {
    return { kind: "invalid", reason: `${PRINCIPAL_HEADER}: expected base64 JSON` };
  }
  const parsed = claimsSchema.safeParse(decoded);
  if (!parsed.success) return { kind: "invalid", reason: `${PRINCIPAL_HEADER}: not a client principal` };
  const { claims, auth_typ, name_typ, role_typ } = parsed.data;
  const claim = (types: string[]) => claims.find((c) => types.includes(c.typ) && c.val !== "")?.val;
  const id = claim(OBJECT_ID_CLAIMS) ?? (request.headers.get("x-ms-client-principal-id") || undefined);
  // People have a sign-in name; an application calling with a bearer token has its client id instead.
  const name =
    claim(name_typ ? [name_typ, ...NAME_CLAIMS] : NAME_CLAIMS) ??
    (request.headers.get("x-ms-client-principal-name") || undefined) ??
    claim(APPLICATION_CLAIMS) ??
    id;
  if (!name) return { kind: "invalid", reason: `${PRINCIPAL_HEADER}: no object id or name claim` };
  const roleTypes = role_typ ? [...ROLE_CLAIMS, role_typ] : ROLE_CLAIMS;
  // Names reach the audit trail and log lines: escaped, and short.
  return {
    kind: "principal",
    principal: {
      id: boundedText(id ?? name, 64),
      name: boundedText(name, 64),
      roles: [...new Set(claims.filter((c) => roleTypes.includes(c.typ)).map((c) => c.val))],
      provider: boundedText(request.headers.get("x-ms-client-principal-idp") ?? auth_typ, 32),
    },
  };
}

/** What a principal may do: an operator also reads. */
export function hasRole(principal: Principal, needed: Role): boolean {
  if (principal.roles.includes(ROLES.operator)) return true;
  return needed === ROLES.reader && principal.roles.includes(ROLES.reader);
}

/** How the audit trail names the principal: its sign-in name, and its object id when that differs. */
export function auditName(principal: Principal): string {
  return principal.id === principal.name ? principal.name : `${principal.name} (${principal.id})`;
}
