/**
 * CBS put-token (AMQP Claims-Based Security, as Service Bus speaks it): a client sends a token for an
 * audience on the `$cbs` link, and the answer says whether the connection now holds a claim on it.
 * Only SAS tokens can be checked here; they come typed `servicebus.windows.net:sastoken` (the .NET and
 * Node clients) or `jwt` (the Python client, which types every token so).
 */
import { types, type Message } from "rhea";
import { entityPathOf, verifySasToken, type SasRule } from "./sas";

const TOKEN_TYPES = new Set(["servicebus.windows.net:sastoken", "jwt"]);
const SAS_PREFIX = "SharedAccessSignature ";

export interface PutTokenOutcome {
  /** The response for the client's reply link (correlation and addressing are added by the caller). */
  response: Message;
  /** The claim the connection gains: the entity path the token covers, until when. */
  claim?: { path: string; expiresAtMs: number };
  /** Why the token was refused, for the emulator's log. */
  refusal?: string;
}

export function answerPutToken(request: Message, rule: SasRule, nowMs: number): PutTokenOutcome {
  const props = (request.application_properties ?? {}) as Record<string, unknown>;
  const audience = String(props.name ?? "");
  const verdict = judge(props, tokenText(request.body), audience, rule, nowMs);
  return {
    response: {
      application_properties: {
        "status-code": types.wrap_int(verdict.status),
        "status-description": verdict.description,
      },
      body: undefined,
    },
    claim:
      verdict.expiresAtMs === undefined
        ? undefined
        : { path: entityPathOf(audience), expiresAtMs: verdict.expiresAtMs },
    refusal:
      verdict.status >= 300 ? `put-token for '${audience}' refused: ${verdict.description}` : undefined,
  };
}

function judge(
  props: Record<string, unknown>,
  token: string,
  audience: string,
  rule: SasRule,
  nowMs: number,
): { status: number; description: string; expiresAtMs?: number } {
  if (props.operation !== "put-token") {
    return { status: 400, description: `Unsupported CBS operation '${String(props.operation)}'.` };
  }
  if (!TOKEN_TYPES.has(String(props.type))) {
    return {
      status: 400,
      description: `Unsupported token type '${String(props.type)}' (expected ${[...TOKEN_TYPES].join(" or ")}).`,
    };
  }
  if (!token.startsWith(SAS_PREFIX)) {
    // An Entra ID (AAD) JWT: the emulator has no identity provider to check it against.
    return {
      status: 401,
      description:
        "InvalidToken: the Service Bus emulator accepts SAS tokens only, not Entra ID (AAD) tokens.",
    };
  }
  const verdict = verifySasToken(token, audience, rule, nowMs);
  if (!verdict.ok) return { status: 401, description: verdict.description };
  return { status: 202, description: "Accepted", expiresAtMs: verdict.expiresAtMs };
}

/** The token as text: clients send it as an AMQP string, some as binary. */
function tokenText(body: unknown): string {
  if (typeof body === "string") return body;
  if (Buffer.isBuffer(body)) return body.toString("utf8");
  return "";
}
