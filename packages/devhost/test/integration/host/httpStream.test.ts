// HTTP streaming as a user meets it: the sample app http-stream-app (written as for Azure, with
// app.setup({ enableHttpStream: true })) on the devhost CLI in a child process, so that the memory the devhost
// itself uses can be read from /proc. What the real host does is taken from "HTTP streams in Azure Functions
// Node.js" (Microsoft Learn, azure-functions/node-http-stream, "the docs" below) and from the source of
// @azure/functions (src/http/httpProxy.ts, src/http/HttpRequest.ts, src/converters/toRpcHttp.ts).
import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  processMemory,
  resetPeakMemory,
  runCliProcess,
  waitForOutput,
  type RunningCli,
} from "../../support/cliProcess";
import { buildCliCopy, sampleApp } from "../../support/devhost";

const MiB = 1024 * 1024;
/** Over the host's default body limit of 104857600 bytes (100 MB), which the sample app's settings raise (the docs). */
const BIG = 120 * MiB;
const CHUNK = 64 * 1024;
/**
 * How much the devhost's resident memory may grow while it moves one BIG body. Streamed, each hop holds a few of
 * its 64 KiB chunks at a time (socket and stream buffers of 16-64 KiB each, a handful of hops), a few MB; what
 * remains is garbage the collector has not yet taken (Buffers are freed by V8's collector, which runs by its own
 * heuristics) and the heap the JIT and the streams grow on first use. 60 MB leaves room for that and is still
 * half of what holding the body would take: a buffered body (120 MiB, plus a copy while it is assembled) would
 * overshoot it.
 */
const MAX_GROWTH = 60 * MiB;

/** The sample app's download pattern: byte i is i mod 251. */
function patternChunk(offset: number, size: number): Buffer {
  const chunk = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) chunk[i] = (offset + i) % 251;
  return chunk;
}

function patternHash(totalBytes: number): string {
  const hash = createHash("sha256");
  for (let offset = 0; offset < totalBytes; offset += CHUNK)
    hash.update(patternChunk(offset, Math.min(CHUNK, totalBytes - offset)));
  return hash.digest("hex");
}

/**
 * POSTs `totalBytes` of the pattern, made as the socket takes them (chunked: no Content-Length). It stops sending
 * once an answer comes; a connection the server closes after answering (a 413) still gives that answer.
 */
function upload(url: string, totalBytes: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
    });
    let answer: { status: number; body: string } | undefined;
    req.on("response", (res) => {
      answer = { status: res.statusCode ?? 0, body: "" };
      res.setEncoding("utf8");
      res.on("data", (text: string) => (answer!.body += text));
      res.on("end", () => resolve(answer!));
    });
    req.on("error", (error) => (answer ? resolve(answer) : reject(error)));
    let offset = 0;
    const writeMore = (): void => {
      while (offset < totalBytes && !answer) {
        const size = Math.min(CHUNK, totalBytes - offset);
        const more = req.write(patternChunk(offset, size));
        offset += size;
        if (!more) {
          req.once("drain", writeMore);
          return;
        }
      }
      req.end();
    };
    writeMore();
  });
}

/** GETs a body and reads it as it comes: its size and SHA-256, never the whole of it. */
function download(url: string): Promise<{ status: number; bytes: number; sha256: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        const hash = createHash("sha256");
        let bytes = 0;
        res.on("data", (chunk: Buffer) => {
          hash.update(chunk);
          bytes += chunk.length;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, bytes, sha256: hash.digest("hex") }));
        res.on("error", reject);
      })
      .on("error", reject);
  });
}

/** Runs `transfer` and says by how much the devhost's resident memory peaked above where it was before. */
async function peakGrowth(pid: number, transfer: () => Promise<unknown>): Promise<number> {
  const before = processMemory(pid, "VmRSS");
  resetPeakMemory(pid);
  await transfer();
  return processMemory(pid, "VmHWM") - before;
}

describe.skipIf(process.platform !== "linux")("HTTP streaming (enableHttpStream)", () => {
  let copy: { dir: string; bin: string };
  let running: RunningCli;
  let url: string;

  beforeAll(async () => {
    copy = buildCliCopy();
    running = runCliProcess(
      copy.bin,
      [
        "--app",
        sampleApp("http-stream-app"),
        "--no-emulators",
        "--port",
        "0",
        "--data-dir",
        path.join(copy.dir, "data"),
      ],
      copy.dir,
    );
    [, url = ""] = await waitForOutput(running, /Host started: (http:\/\/127\.0\.0\.1:\d+)/);
  });

  afterAll(async () => {
    if (running) {
      running.child.kill("SIGINT");
      await running.exited;
    }
    if (copy) fs.rmSync(copy.dir, { recursive: true, force: true });
  });

  it("says where the worker's HTTP server is, and lists the functions as usual", () => {
    // The library starts it in getCapabilities and names it `http://localhost:<port>/` (httpProxy.ts setupHttpProxy).
    expect(running.output()).toMatch(
      /HTTP streaming is on: requests go to the worker's HTTP server at http:\/\/localhost:\d+\//,
    );
    expect(running.output()).toContain(`  upload: [POST] ${url}/api/upload`);
  });

  it("streams an upload of over 100 MB into request.body, and the devhost does not hold it", async () => {
    // The docs: request.body is a stream to read as it comes; FUNCTIONS_REQUEST_BODY_SIZE_LIMIT raised for bodies over
    // 100 MB.
    const warmUp = await upload(`${url}/api/upload`, 4 * MiB);
    expect(JSON.parse(warmUp.body)).toEqual({ bytes: 4 * MiB, sha256: patternHash(4 * MiB) });

    let answer: { status: number; body: string } | undefined;
    const growth = await peakGrowth(running.child.pid!, async () => {
      answer = await upload(`${url}/api/upload`, BIG);
    });
    expect(answer?.status).toBe(200);
    expect(JSON.parse(answer!.body)).toEqual({ bytes: BIG, sha256: patternHash(BIG) });
    process.stdout.write(
      `upload of ${BIG / MiB} MiB: devhost RSS peaked ${(growth / MiB).toFixed(1)} MiB above\n`,
    );
    expect(growth).toBeLessThan(MAX_GROWTH);
  });

  it("streams a download of over 100 MB made as it is sent, and the devhost does not hold it", async () => {
    // The docs: a handler returns a stream (a Node Readable here) as the body; the library writes it to the
    // host's forwarded request as it reads it (httpProxy.ts sendProxyResponse).
    const warmUp = await download(`${url}/api/download?bytes=${4 * MiB}`);
    expect(warmUp).toEqual({ status: 200, bytes: 4 * MiB, sha256: patternHash(4 * MiB) });

    let got: { status: number; bytes: number; sha256: string } | undefined;
    const growth = await peakGrowth(running.child.pid!, async () => {
      got = await download(`${url}/api/download?bytes=${BIG}`);
    });
    expect(got).toEqual({ status: 200, bytes: BIG, sha256: patternHash(BIG) });
    process.stdout.write(
      `download of ${BIG / MiB} MiB: devhost RSS peaked ${(growth / MiB).toFixed(1)} MiB above\n`,
    );
    expect(growth).toBeLessThan(MAX_GROWTH);
  });

  it("delivers a response a piece at a time: the first event arrives before the last is written", async () => {
    // The docs name streaming a model's answer (OpenAI) as a use: each piece must reach the client when written.
    const response = await fetch(`${url}/api/tokens?count=5&everyMs=200`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    let firstArrivedAt: number | undefined;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      firstArrivedAt ??= Date.now();
      text += decoder.decode(value, { stream: true });
    }
    const events = text
      .split("\n\n")
      .filter((event) => event.startsWith("data: "))
      .map((event) => JSON.parse(event.slice("data: ".length)) as { n: number; writtenAt: number });
    expect(events.map((event) => event.n)).toEqual([1, 2, 3, 4, 5]);
    // The last event was written 800 ms after the first; the first must have arrived well before that.
    expect(firstArrivedAt!).toBeLessThan(events[4]!.writtenAt);
  });

  it("gives an ordinary handler its URL, route parameters, query, headers and body; status, headers and cookies back", async () => {
    // The library builds request.url from x-forwarded-proto and x-forwarded-host, and takes headers and parameters
    // from the invocation's trigger metadata (HttpRequest.ts createStreamRequest).
    const response = await fetch(`${url}/api/echo/ada?q=1`, {
      method: "POST",
      headers: { "x-sample": "sent" },
      body: "hello",
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("x-echo")).toBe("yes");
    expect(response.headers.get("set-cookie")).toBe("seen=1; Path=/");
    // The library marks its answer with the invocation's id (httpProxy.ts sendProxyResponse), and the host's forwarder
    // copies every response header but the hop-by-hop ones (azure-functions-host DefaultHttpProxyService.cs, YARP).
    expect(response.headers.get("x-ms-invocation-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(await response.json()).toEqual({
      name: "ada",
      url: `${url}/api/echo/ada?q=1`,
      method: "POST",
      query: "1",
      header: "sent",
      body: "hello",
      functionName: "echo",
    });
  });

  it("answers 204 for a handler that returns nothing, and 500 for one that throws", async () => {
    // The library sends no response over its server in either case (toRpcHttp returns early for no value; the
    // invocation fails before it for a throw); the devhost answers as it does without streaming.
    expect((await fetch(`${url}/api/nothing`)).status).toBe(204);
    expect((await fetch(`${url}/api/fails`)).status).toBe(500);
    await waitForOutput(running, /Executed 'Functions\.fails' \(Failed, Id=[0-9a-f-]{36}/);
  });

  it("goes on serving after a client leaves in the middle of a download", async () => {
    // The library cannot tell that the client left (azure-functions-nodejs-library issue #294) and writes the
    // rest of the body into the closed connection; the devhost drops it and stays up.
    await new Promise<void>((resolve, reject) => {
      const req = http.get(`${url}/api/download?bytes=${BIG}`, (res) => {
        res.once("data", () => {
          req.destroy();
          resolve();
        });
      });
      req.on("error", (error) => (req.destroyed ? undefined : reject(error)));
    });
    expect(await download(`${url}/api/download?bytes=${MiB}`)).toEqual({
      status: 200,
      bytes: MiB,
      sha256: patternHash(MiB),
    });
  });
  it("ends the invocation of a client that leaves as soon as it has sent its headers", async () => {
    // The library holds an invocation until its forwarded request arrives (httpProxy.ts waitForProxyRequest): the
    // devhost must deliver it even when the client is already gone, or the invocation would never end.
    const before = running.output().match(/Executed 'Functions\.upload'/g)?.length ?? 0;
    for (let attempt = 0; attempt < 5; attempt++) {
      const socket = net.connect(Number(new URL(url).port), "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      socket.write(
        `POST /api/upload HTTP/1.1\r\nHost: ${new URL(url).host}\r\nContent-Length: 1000000\r\n\r\n`,
      );
      socket.destroy();
    }
    await vi.waitFor(
      () => expect(running.output().match(/Executed 'Functions\.upload'/g)?.length ?? 0).toBe(before + 5),
      { timeout: 5000 },
    );
  });
});

describe.skipIf(process.platform !== "linux")("HTTP streaming under the body size limit", () => {
  let copy: { dir: string; bin: string };
  let running: RunningCli;
  let url: string;

  beforeAll(async () => {
    copy = buildCliCopy();
    // The environment wins over the settings file: a limit of 1 MiB.
    running = runCliProcess(
      copy.bin,
      [
        "--app",
        sampleApp("http-stream-app"),
        "--no-emulators",
        "--port",
        "0",
        "--data-dir",
        path.join(copy.dir, "data"),
      ],
      copy.dir,
      { FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: String(MiB) },
    );
    [, url = ""] = await waitForOutput(running, /Host started: (http:\/\/127\.0\.0\.1:\d+)/);
  });

  afterAll(async () => {
    if (running) {
      running.child.kill("SIGINT");
      await running.exited;
    }
    if (copy) fs.rmSync(copy.dir, { recursive: true, force: true });
  });

  it("refuses a streamed body that outgrows FUNCTIONS_REQUEST_BODY_SIZE_LIMIT with 413, as without streaming", async () => {
    // The docs: the limit applies to streamed requests too (raise it "if you plan to stream large amounts of data").
    const chunked = await upload(`${url}/api/upload`, 2 * MiB);
    expect(chunked.status).toBe(413);
    expect(chunked.body).toContain(`the limit is ${MiB} bytes`);
    const declared = await fetch(`${url}/api/upload`, { method: "POST", body: Buffer.alloc(MiB + 1) });
    expect(declared.status).toBe(413);
    const within = await upload(`${url}/api/upload`, MiB);
    expect(JSON.parse(within.body)).toEqual({ bytes: MiB, sha256: patternHash(MiB) });
  });
});
