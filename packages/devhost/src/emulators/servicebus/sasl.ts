/**
 * The SASL mechanisms Service Bus offers, for rhea's server side. Each client names its own: the .NET
 * client only MSSBCBS, the Node and Python clients ANONYMOUS, generic AMQP clients PLAIN or EXTERNAL.
 * MSSBCBS, ANONYMOUS and EXTERNAL prove nothing: the client authenticates afterwards, link by link,
 * with CBS put-token. PLAIN carries the SAS key name and key themselves; Azure then grants the
 * connection the whole namespace without CBS, and so does the emulator (see `grantsNamespace`).
 */
import { timingSafeEqual } from "node:crypto";
import type { SasRule } from "./sas";

/** What rhea's SaslServer calls: `start` with the client's initial response, then reads `outcome`. */
interface ServerMechanism {
  outcome: boolean | undefined;
  username: string | undefined;
  start(initialResponse?: Buffer): void;
}

/** MSSBCBS, ANONYMOUS, EXTERNAL: always succeed; CBS decides what the connection may touch. */
class AuthenticateThroughCbs implements ServerMechanism {
  outcome: boolean | undefined = undefined;
  username: string | undefined = undefined;

  start(initialResponse?: Buffer): void {
    this.outcome = true;
    this.username =
      initialResponse && initialResponse.length > 0 ? initialResponse.toString("utf8") : "anonymous";
  }
}

/** PLAIN: `\0<key name>\0<key>`, checked against the emulator's one SAS rule. */
export class PlainSasKey implements ServerMechanism {
  outcome: boolean | undefined = undefined;
  username: string | undefined = undefined;

  constructor(private readonly rule: SasRule) {}

  start(initialResponse?: Buffer): void {
    const [, user = "", password = ""] = (initialResponse ?? Buffer.alloc(0)).toString("utf8").split("\0");
    this.username = user;
    this.outcome = user === this.rule.keyName && sameText(password, this.rule.key);
  }
}

/** In the order Azure lists them in its sasl-mechanisms frame. */
const MECHANISMS = ["MSSBCBS", "PLAIN", "ANONYMOUS", "EXTERNAL"] as const;

/**
 * Puts the mechanisms on a rhea container's `sasl_server_mechanisms` (rhea offers its own property
 * names, in insertion order). ANONYMOUS among them also lets clients that skip SASL connect, as before.
 */
export function offerServiceBusMechanisms(mechanisms: Record<string, unknown>, rule: SasRule): void {
  for (const name of MECHANISMS) {
    mechanisms[name] = name === "PLAIN" ? () => new PlainSasKey(rule) : () => new AuthenticateThroughCbs();
  }
}

/** Whether the mechanism a connection authenticated with gives it every entity, as PLAIN does. */
export function grantsNamespace(mechanism: unknown): boolean {
  return mechanism instanceof PlainSasKey && mechanism.outcome === true;
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
