/**
 * A throwaway self-signed certificate for a loopback address, made with the openssl command line
 * (Node can make keys but not certificates). The emulator serves TLS with it, and a client trusts it
 * as its CA file.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { probe, runCommand } from "./command";

export interface LoopbackCertificate {
  key: Buffer;
  cert: Buffer;
  /** The certificate as a file, for clients that take a CA bundle path. */
  certPath: string;
  /** Removes the files. */
  dispose(): void;
}

export function opensslVersion(): string | undefined {
  return probe("openssl", ["version"]);
}

export async function makeLoopbackCertificate(address: string): Promise<LoopbackCertificate> {
  const dir = mkdtempSync(join(tmpdir(), "servicebus-tls-"));
  const keyPath = join(dir, "key.pem");
  const certPath = join(dir, "cert.pem");
  const { exitCode, output } = await runCommand(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-keyout",
      keyPath,
      "-out",
      certPath,
    ].concat(["-subj", `/CN=${address}`, "-addext", `subjectAltName=IP:${address}`]),
    { timeoutMs: 30_000 },
  );
  if (exitCode !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`openssl could not make a certificate:\n${output}`);
  }
  return {
    key: readFileSync(keyPath),
    cert: readFileSync(certPath),
    certPath,
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}
