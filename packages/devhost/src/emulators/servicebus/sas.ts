/**
 * Shared Access Signature checks for CBS put-token, as Service Bus does them: the token
 * `SharedAccessSignature sr=<url-encoded resource>&sig=<signature>&se=<expiry, unix s>&skn=<key name>`
 * is an HMAC-SHA256, keyed with the key's UTF-8 bytes, of `<sr as sent>\n<se>`.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export interface SasRule {
  keyName: string;
  key: string;
}

export type SasVerdict =
  { ok: true; resource: string; expiresAtMs: number } | { ok: false; description: string };

/**
 * Checks a token presented for `audience`. The descriptions mirror Service Bus's 401 texts, so that
 * what the client reports reads like the real thing.
 */
export function verifySasToken(token: string, audience: string, rule: SasRule, nowMs: number): SasVerdict {
  const prefix = "SharedAccessSignature ";
  if (!token.startsWith(prefix)) {
    return { ok: false, description: "InvalidToken: the token is not a SharedAccessSignature." };
  }
  const fields = new Map<string, string>();
  for (const pair of token.slice(prefix.length).split("&")) {
    const at = pair.indexOf("=");
    if (at > 0) fields.set(pair.slice(0, at), pair.slice(at + 1));
  }
  const [sr, sig, se, skn] = ["sr", "sig", "se", "skn"].map((k) => fields.get(k));
  if (sr === undefined || sig === undefined || se === undefined || skn === undefined) {
    return { ok: false, description: "InvalidToken: the token lacks one of sr, sig, se, skn." };
  }
  if (safeDecode(skn) !== rule.keyName) {
    return { ok: false, description: `InvalidSignature: unknown SharedAccessKeyName '${safeDecode(skn)}'.` };
  }
  const expected = createHmac("sha256", rule.key).update(`${sr}\n${se}`).digest();
  const given = Buffer.from(safeDecode(sig), "base64");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, description: "InvalidSignature: The token has an invalid signature." };
  }
  const expiresAtMs = Number(se) * 1000;
  if (!Number.isFinite(expiresAtMs) || expiresAtMs <= nowMs) {
    return { ok: false, description: "ExpiredToken: The token is expired." };
  }
  const resource = safeDecode(sr);
  if (!covers(entityPathOf(resource), entityPathOf(audience))) {
    return {
      ok: false,
      description: `InvalidAudience: The token audience '${resource}' does not cover '${audience}'.`,
    };
  }
  return { ok: true, resource, expiresAtMs };
}

/**
 * The entity path an address or audience names, lower-cased (entity names are case-insensitive):
 * `sb://host:5672/Orders/$DeadLetterQueue` and `orders/$deadletterqueue/` both give `orders/$deadletterqueue`.
 */
export function entityPathOf(address: string): string {
  const withoutHost = address.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "");
  return withoutHost.replace(/^\/+|\/+$/g, "").toLowerCase();
}

/** Whether a claim for `claimPath` grants access to `entityPath`: the same path or one below it. */
export function covers(claimPath: string, entityPath: string): boolean {
  return claimPath === "" || entityPath === claimPath || entityPath.startsWith(`${claimPath}/`);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
