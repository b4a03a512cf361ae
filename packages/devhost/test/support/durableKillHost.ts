// A minimal durable host for the kill-and-restart test, run as a child process (compiled by
// durableChild.ts): loads the kill app through the capture shim, opens the task hub given on the command
// line with the real clock, serves the durable HTTP API on 127.0.0.1:0 and prints "READY <port>".
// SIGTERM stops it cleanly; the test SIGKILLs it at arbitrary points.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { durableRegistrations } from "./durableCapture";
import { DurableEngine } from "../../src/durable";

async function main(): Promise<void> {
  const dataDir = process.argv[2];
  if (!dataDir) throw new Error("usage: durableKillHost <dataDir>");
  await import("./apps/durableKillApp");
  const engine = new DurableEngine({ dataDir, log: (line) => process.stderr.write(`${line}\n`) });
  for (const reg of durableRegistrations()) engine.register(reg);
  await engine.start();
  const server = http.createServer((req, res) => {
    const url = req.url ?? "/";
    if (url.startsWith("/durabletask/")) void engine.handleRpc(req, res, url.slice("/durabletask/".length));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`);
  process.once("SIGTERM", () => {
    void engine.stop().then(() => {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    });
  });
}

main().catch((err: unknown) => {
  process.stderr.write(
    `durableKillHost: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
