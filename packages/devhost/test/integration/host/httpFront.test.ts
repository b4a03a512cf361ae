// What the HTTP front refuses before any app code runs, as Kestrel does in the host: a request whose Host header
// is not a valid host (400, with the problem named), and a body over the size limit (413, at once when the headers
// declare it, and as soon as a chunked body passes it; the connection closed either way). Requests go over raw
// sockets (node:net), since fetch neither sends a bad Host nor withholds a body it declared.
import fs from "node:fs";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDevHost, type TestDevHost } from "../../support/devhost";

interface RawReply {
  status: number | undefined;
  head: string;
  body: string;
  /** The server ended the connection. */
  closed: boolean;
  ms: number;
}

/**
 * Writes `parts` to a new connection (a part may be held back by the caller never sending it) and collects what
 * comes back until the server closes the connection or `waitMs` passes.
 */
function raw(port: number, parts: string[], waitMs = 5_000): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, "127.0.0.1");
    let data = "";
    let closed = false;
    const finish = (): void => {
      clearTimeout(timer);
      socket.destroy();
      const [head = "", body = ""] = data.split("\r\n\r\n", 2);
      const status = /^HTTP\/1\.1 (\d{3})/.exec(head)?.[1];
      resolve({ status: status ? Number(status) : undefined, head, body, closed, ms: Date.now() - started });
    };
    const timer = setTimeout(finish, waitMs);
    socket.on("connect", () => {
      for (const part of parts) socket.write(part);
    });
    socket.on("data", (chunk) => (data += chunk.toString("latin1")));
    socket.on("end", () => {
      closed = true;
      finish();
    });
    socket.on("error", (error: NodeJS.ErrnoException) => {
      // A reset after the answer still counts as the server closing the connection.
      if (error.code === "ECONNRESET" && data !== "") {
        closed = true;
        finish();
      } else reject(error);
    });
  });
}

const get = (target: string, headers: string, version = "1.1"): string =>
  `GET ${target} HTTP/${version}\r\n${headers}Connection: close\r\n\r\n`;

function executions(host: TestDevHost, name: string): number {
  return host.lines().filter((line) => line.startsWith(`Executing 'Functions.${name}'`)).length;
}

describe("the Host header", () => {
  let host: TestDevHost;
  beforeAll(async () => {
    host = await startTestDevHost("http-app");
  });
  afterAll(async () => {
    await host?.stop();
    if (host) fs.rmSync(host.dataDir, { recursive: true, force: true });
  });

  it.each([
    ["a space", "Host: bad host\r\n", "Invalid Host header: 'bad host'."],
    ["userinfo", "Host: user@127.0.0.1\r\n", "Invalid Host header: 'user@127.0.0.1'."],
    ["a port over 65535", "Host: 127.0.0.1:99999\r\n", "Invalid Host header: '127.0.0.1:99999'."],
    ["an empty port", "Host: 127.0.0.1:\r\n", "Invalid Host header: '127.0.0.1:'."],
    ["a port alone", "Host: :8080\r\n", "Invalid Host header: ':8080'."],
    ["a bad IPv6 literal", "Host: [::g]\r\n", "Invalid Host header: '[::g]'."],
    ["two Host headers", "Host: 127.0.0.1\r\nHost: example.com\r\n", "Multiple Host headers."],
    ["no Host header (HTTP/1.1)", "", "Request is missing Host header."],
  ])("answers 400 naming the problem, without running the app, for %s", async (_case, headers, problem) => {
    const before = executions(host, "requestUrl");
    const reply = await raw(host.port, [get("/api/request-url", headers)]);
    expect(reply.status).toBe(400);
    expect(reply.body).toBe(problem);
    expect(executions(host, "requestUrl")).toBe(before);
  });

  it("answers 400 with the parser's reason for a control character, and 400 for a mismatched absolute target", async () => {
    const control = await raw(host.port, [get("/api/request-url", "Host: a\x01b\r\n")]);
    expect(control.status).toBe(400);
    expect(control.body).toMatch(/^Bad request: .+\.$/);
    const absolute = await raw(host.port, [get("http://example.com/api/request-url", "Host: 127.0.0.1\r\n")]);
    expect(absolute.status).toBe(400);
    expect(absolute.body).toContain("does not match the request target");
    expect(executions(host, "requestUrl")).toBe(0);
  });

  it("refuses a bad Host on the durable webhooks too: 400 before the key is even looked at", async () => {
    const reply = await raw(host.port, [
      get(`/runtime/webhooks/durabletask/instances?code=${host.durableKey}`, "Host: bad host\r\n"),
    ]);
    expect(reply.status).toBe(400);
  });

  it("builds the app's URL from a valid Host: a name, an IPv6 literal, the listening address for HTTP/1.0 without one", async () => {
    const url = async (request: string): Promise<unknown> => {
      const reply = await raw(host.port, [request]);
      expect(reply.status).toBe(200);
      return (JSON.parse(reply.body) as { url: string }).url;
    };
    expect(await url(get("/api/request-url?x=1", "Host: localhost:1234\r\n"))).toBe(
      "http://localhost:1234/api/request-url?x=1",
    );
    expect(await url(get("/api/request-url", "Host: [::1]:8080\r\n"))).toBe(
      "http://[::1]:8080/api/request-url",
    );
    expect(await url(get("/api/request-url", "", "1.0"))).toBe(`${host.url}/api/request-url`);
    expect(await url(get("http://localhost:1234/api/request-url", "Host: localhost:1234\r\n"))).toBe(
      "http://localhost:1234/api/request-url",
    );
    // A path that looks like a scheme-relative URL stays a path on the host the header names.
    const scheme = await raw(host.port, [get("//evil.example/api/request-url", "Host: localhost:1234\r\n")]);
    expect(scheme.status).toBe(404);
  });
});

describe("the request body size limit", () => {
  const LIMIT = 1000;
  let host: TestDevHost;
  beforeAll(async () => {
    host = await startTestDevHost("http-app", {
      settings: { FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: String(LIMIT) },
    });
  });
  afterAll(async () => {
    await host?.stop();
    if (host) fs.rmSync(host.dataDir, { recursive: true, force: true });
  });

  const post = (headers: string): string =>
    `POST /api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${headers}\r\n`;
  const chunk = (text: string): string => `${text.length.toString(16)}\r\n${text}\r\n`;
  const jsonOf = (size: number): string => `"${"x".repeat(size - 2)}"`;

  it("answers 413 to a declared Content-Length of limit+1 at once, before a byte of the body, and closes", async () => {
    // The body is never sent: an answer that waited for it would not come at all.
    const reply = await raw(host.port, [post(`Content-Length: ${LIMIT + 1}\r\n`)]);
    expect(reply.status).toBe(413);
    expect(reply.head.toLowerCase()).toContain("connection: close");
    expect(reply.body).toContain(`${LIMIT} bytes`);
    expect(reply.closed).toBe(true);
    expect(reply.ms).toBeLessThan(3_000);
    expect(executions(host, "echo")).toBe(0);
  });

  it("stops reading a chunked body once it passes the limit: 413 and the connection closed, the body unfinished", async () => {
    // Two chunks past the limit and no last chunk: only a server that stops at the limit answers.
    const reply = await raw(host.port, [
      post("Transfer-Encoding: chunked\r\n"),
      chunk("x".repeat(600)),
      chunk("x".repeat(600)),
    ]);
    expect(reply.status).toBe(413);
    expect(reply.closed).toBe(true);
    expect(executions(host, "echo")).toBe(0);
  });

  it("takes a body of exactly the limit, declared or chunked", async () => {
    const body = jsonOf(LIMIT);
    const declared = await raw(host.port, [post(`Content-Length: ${LIMIT}\r\nConnection: close\r\n`), body]);
    expect(declared.status).toBe(201);
    const chunked = await raw(host.port, [
      post("Transfer-Encoding: chunked\r\nConnection: close\r\n"),
      chunk(body.slice(0, 500)),
      chunk(body.slice(500)),
      "0\r\n\r\n",
    ]);
    expect(chunked.status).toBe(201);
    expect(executions(host, "echo")).toBe(2);
  });
});

describe("the default request body size limit", () => {
  let host: TestDevHost;
  beforeAll(async () => {
    host = await startTestDevHost("http-app");
  });
  afterAll(async () => {
    await host?.stop();
    if (host) fs.rmSync(host.dataDir, { recursive: true, force: true });
  });

  it("is the host's 104857600 bytes: a declared 104857601 gets 413 at once, with no body sent", async () => {
    const reply = await raw(host.port, [
      "POST /api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 104857601\r\n\r\n",
    ]);
    expect(reply.status).toBe(413);
    expect(reply.body).toContain("104857600 bytes");
    expect(reply.closed).toBe(true);
  });
});
