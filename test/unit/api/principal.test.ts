import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { HttpRequest } from "@azure/functions";
import { authorize } from "../../../src/api/authorize";
import { auditName, readPrincipal, ROLES } from "../../../src/api/principal";
import { encodeClientPrincipal } from "devhost/auth";

const request = (headers: Record<string, string>): HttpRequest =>
  ({ headers: new Headers(headers) }) as unknown as HttpRequest;
const ada = encodeClientPrincipal({ name: "ada@contoso.com", id: "oid-ada", roles: [ROLES.operator] });

describe("the signed-in principal", () => {
  it("is read from the header the platform sends, with its roles", () => {
    expect(readPrincipal(request(ada))).toEqual({
      kind: "principal",
      principal: { id: "oid-ada", name: "ada@contoso.com", roles: ["Orders.Operator"], provider: "aad" },
    });
    expect(readPrincipal(request({}))).toEqual({ kind: "anonymous" });
  });

  it("takes roles under any of the names the platform's claim mapping uses", () => {
    const claims = [
      { typ: "name", val: "bob" },
      { typ: "http://schemas.microsoft.com/ws/2008/06/identity/claims/role", val: "Orders.Reader" },
      { typ: "customrole", val: "Orders.Operator" },
    ];
    const header = Buffer.from(
      JSON.stringify({ auth_typ: "aad", claims, name_typ: "name", role_typ: "customrole" }),
    );
    const read = readPrincipal(request({ "x-ms-client-principal": header.toString("base64") }));
    expect(read).toMatchObject({ principal: { roles: ["Orders.Reader", "Orders.Operator"] } });
  });

  it("reads an application calling with a bearer token, which has a client id but no sign-in name", () => {
    const claims = [
      { typ: "http://schemas.microsoft.com/identity/claims/objectidentifier", val: "oid-monitor" },
      { typ: "azp", val: "client-id-of-monitor" },
      { typ: "roles", val: "Orders.Reader" },
    ];
    const header = Buffer.from(
      JSON.stringify({ auth_typ: "aad", claims, name_typ: "name", role_typ: "roles" }),
    );
    expect(readPrincipal(request({ "x-ms-client-principal": header.toString("base64") }))).toMatchObject({
      principal: { id: "oid-monitor", name: "client-id-of-monitor", roles: ["Orders.Reader"] },
    });
  });

  it("refuses a principal that names nobody", () => {
    const header = Buffer.from(
      JSON.stringify({ auth_typ: "aad", claims: [{ typ: "roles", val: "Orders.Operator" }] }),
    );
    expect(readPrincipal(request({ "x-ms-client-principal": header.toString("base64") }))).toEqual({
      kind: "invalid",
      reason: "x-ms-client-principal: no object id or name claim",
    });
  });

  it("names the principal in the audit trail on one line, its control characters escaped", () => {
    const sneaky = encodeClientPrincipal({ name: "ada", id: "oid\nx\u2028y\u202ez", roles: [] });
    const read = readPrincipal(request({ "x-ms-client-principal": sneaky["x-ms-client-principal"]! }));
    expect(read.kind === "principal" && auditName(read.principal)).toBe("ada (oid\\nx\\u2028y\\u202ez)");
  });
});

describe("authorize", () => {
  const platform = { operatorAuth: "platform" as const };

  it("believes the header only while the platform's authentication is on", () => {
    const off = authorize(request(ada), platform, ROLES.operator, {});
    expect(off).toMatchObject({ ok: false, response: { status: 503 } });
    const on = authorize(request(ada), platform, ROLES.operator, { WEBSITE_AUTH_ENABLED: "True" });
    expect(on).toMatchObject({ ok: true, principal: { name: "ada@contoso.com" } });
    // Local runtimes with no platform in front take it as sent.
    expect(authorize(request(ada), { operatorAuth: "header" }, ROLES.operator, {})).toMatchObject({
      ok: true,
    });
  });

  it("answers 401 without a principal and 403 without the role", () => {
    const env = { WEBSITE_AUTH_ENABLED: "true" };
    expect(authorize(request({}), platform, ROLES.reader, env)).toMatchObject({ response: { status: 401 } });
    const reader = encodeClientPrincipal({ name: "bob", roles: [ROLES.reader] });
    expect(authorize(request(reader), platform, ROLES.reader, env)).toMatchObject({ ok: true });
    expect(authorize(request(reader), platform, ROLES.operator, env)).toMatchObject({
      response: {
        status: 403,
        jsonBody: { error: "bob lacks the role Orders.Operator (roles held: Orders.Reader)" },
      },
    });
  });
});

describe("the app roles", () => {
  it("are the roles of the app registration the deployment creates", () => {
    const roles = JSON.parse(readFileSync("infra/entra/operator-app-roles.json", "utf8")) as Array<{
      value: string;
      isEnabled: boolean;
    }>;
    expect(roles.map((r) => r.value).sort()).toEqual(Object.values(ROLES).sort());
    expect(roles.every((r) => r.isEnabled)).toBe(true);
  });
});
