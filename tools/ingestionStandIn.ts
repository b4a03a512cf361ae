/**
 * A stand-in for Application Insights' ingestion endpoint on loopback, for the real Azure Monitor exporter: it takes
 * each batch the exporter posts (a JSON array of envelopes, gzipped or not), keeps every envelope with its size as
 * sent, and answers that it accepted them all. The exporter speaks https only, so the stand-in serves a throwaway
 * self-signed certificate for 127.0.0.1 made with openssl (`loopbackCertificate`: undefined without openssl).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";

/** An Application Insights envelope, as far as the app's tests and benchmarks read it. */
export interface Envelope {
  name: string;
  tags: Record<string, string>;
  data: {
    baseType: string;
    baseData: {
      name?: string;
      id?: string;
      properties?: Record<string, string>;
      metrics?: { name: string; value: number }[];
    };
  };
}

export interface LoopbackCertificate {
  key: Buffer;
  cert: Buffer;
}

/** A self-signed certificate for 127.0.0.1, or undefined without openssl. */
export function loopbackCertificate(): LoopbackCertificate | undefined {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ingestion-tls-"));
  try {
    const made = spawnSync(
      "openssl",
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"].concat([
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        "key.pem",
        "-out",
        "cert.pem",
      ]),
      { cwd: dir, stdio: "ignore" },
    );
    if (made.status !== 0) return undefined;
    return {
      key: fs.readFileSync(path.join(dir, "key.pem")),
      cert: fs.readFileSync(path.join(dir, "cert.pem")),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface IngestionStandIn {
  /** The ingestion endpoint, for a connection string's IngestionEndpoint. */
  url: string;
  /** Every envelope received, in order, with the bytes of its JSON as the exporter sent it (uncompressed). */
  readonly received: Array<{ envelope: Envelope; bytes: number }>;
  close(): Promise<void>;
}

export async function startIngestionStandIn(certificate: LoopbackCertificate): Promise<IngestionStandIn> {
  const received: IngestionStandIn["received"] = [];
  const server = createServer(certificate, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const text = (req.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body).toString("utf8");
      const parsed = JSON.parse(text) as Envelope | Envelope[];
      for (const envelope of Array.isArray(parsed) ? parsed : [parsed])
        received.push({ envelope, bytes: Buffer.byteLength(JSON.stringify(envelope)) });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ itemsReceived: received.length, itemsAccepted: received.length, errors: [] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
