// The devhost's stand-in for the platform's built-in authentication (App Service "Easy Auth"). In Azure the
// platform signs a user in, strips any identity header the client sent, and passes the signed-in user to the app
// as x-ms-client-principal (base64 JSON of the token's claims) with -id, -name and -idp beside it. Here there is no
// identity provider: a client acts as a principal by sending those headers itself (encodeClientPrincipal builds
// them), and `signedInAs` gives every request that carries none a principal, as if the browser were signed in.

export interface ClientPrincipal {
  name: string;
  /** Object id; default: derived from the name, so one name is always one id. */
  id?: string;
  roles: readonly string[];
}

const OBJECT_ID_CLAIM = "http://schemas.microsoft.com/identity/claims/objectidentifier";

/** The headers the platform sends for a signed-in Entra ID user. */
export function encodeClientPrincipal(principal: ClientPrincipal): Record<string, string> {
  const id = principal.id ?? `local-${principal.name}`;
  const claims = [
    { typ: "name", val: principal.name },
    { typ: OBJECT_ID_CLAIM, val: id },
    ...principal.roles.map((role) => ({ typ: "roles", val: role })),
  ];
  const body = { auth_typ: "aad", claims, name_typ: "name", role_typ: "roles" };
  return {
    "x-ms-client-principal": Buffer.from(JSON.stringify(body)).toString("base64"),
    "x-ms-client-principal-id": id,
    "x-ms-client-principal-name": principal.name,
    "x-ms-client-principal-idp": "aad",
  };
}

/** `name` or `name:role,role` (the --signed-in-as option and the DEVHOST_SIGNED_IN_AS setting). */
export function parseSignedInAs(spec: string): ClientPrincipal {
  const [name = "", roles = ""] = spec.split(":", 2).map((part) => part.trim());
  if (!/^[\w.@+-]{1,64}$/.test(name)) {
    throw new Error(
      `signed-in principal "${spec}": expected name[:role,role] with a name of letters, digits, . @ + - _`,
    );
  }
  return {
    name,
    roles: roles
      .split(",")
      .map((r) => r.trim())
      .filter((r) => r !== ""),
  };
}
