// The host's system keys, as far as the devhost has any: the Durable extension's `durabletask_extension` key, which
// the host requires on the extension's webhooks ("HTTP API reference" of Durable Functions: every API takes the
// system key as `code`; "Work with access keys in Azure Functions": system keys are named after the extension, and
// the key goes in the `code` query parameter or the `x-functions-key` header; a missing or wrong key is 401). The
// host creates the key once and keeps it in its secret storage, so that URLs handed out before a restart keep
// working; the devhost keeps it in the data directory, in the shape of the host's file secret storage
// (secrets/host.json), and creates it at the first start.
import crypto from "node:crypto";
import fs from "node:fs";
import type http from "node:http";
import path from "node:path";

export const DURABLE_KEY_NAME = "durabletask_extension";

interface SecretsFile {
  systemKeys?: Array<{ name?: unknown; value?: unknown }>;
}

/** The system key `name` kept under `dataDir`, created (random, 256 bits) if there is none yet. */
export function loadSystemKey(dataDir: string, name: string): string {
  const file = path.join(dataDir, "secrets", "host.json");
  const secrets = readSecrets(file);
  const kept = secrets.systemKeys?.find((k) => k.name === name)?.value;
  if (typeof kept === "string" && kept !== "") return kept;
  const value = crypto.randomBytes(32).toString("base64url");
  const systemKeys = [...(secrets.systemKeys ?? []).filter((k) => k.name !== name), { name, value }];
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ ...secrets, systemKeys }, null, 2)}\n`, { mode: 0o600 });
  return value;
}

function readSecrets(file: string): SecretsFile {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as SecretsFile;
  } catch {
    // Reported below, as for any other shape.
  }
  throw new Error(
    `${file}: not the devhost's secrets file (a JSON object with "systemKeys"); delete it to start over.`,
  );
}

/** The key a request presents: the x-functions-key header, else the `code` query parameter (the host's order). */
export function presentedKey(req: http.IncomingMessage, query: URLSearchParams): string | undefined {
  const header = req.headers["x-functions-key"];
  if (typeof header === "string" && header !== "") return header;
  return query.get("code") ?? undefined;
}

/** Compares in constant time, so that the answer's timing tells nothing of the key. */
export function keyMatches(presented: string | undefined, key: string): boolean {
  if (presented === undefined) return false;
  const a = crypto.createHash("sha256").update(presented).digest();
  const b = crypto.createHash("sha256").update(key).digest();
  return crypto.timingSafeEqual(a, b);
}
