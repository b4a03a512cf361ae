// A streaming app started from code (startDevHost), as a test of one's own would: the same forwarding through the
// worker's HTTP server as under the CLI (httpStream.test.ts has the large bodies and the memory they cost).
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDevHost, type TestDevHost } from "../../support/devhost";

describe("HTTP streaming from code", () => {
  let host: TestDevHost;

  beforeAll(async () => {
    host = await startTestDevHost("http-stream-app");
  });

  afterAll(async () => {
    await host?.stop();
    if (host) fs.rmSync(host.dataDir, { recursive: true, force: true });
  });

  it("streams a request body in and a response body out", async () => {
    const body = Buffer.alloc(3 * 1024 * 1024, 7);
    const upload = await fetch(`${host.url}/api/upload`, { method: "POST", body });
    expect(await upload.json()).toMatchObject({ bytes: body.length });
    const download = await fetch(`${host.url}/api/download?bytes=1000`);
    expect((await download.arrayBuffer()).byteLength).toBe(1000);
    expect(host.lines()).toContainEqual(expect.stringMatching(/^HTTP streaming is on: /));
  });
});
