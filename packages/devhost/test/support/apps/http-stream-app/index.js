// Sample app for the devhost's HTTP streaming tests: written exactly as for Azure (v4 programming model), plain
// CommonJS so that it needs no build step. It follows "HTTP streams in Azure Functions Node.js" (Microsoft Learn,
// azure-functions/node-http-stream): app.setup({ enableHttpStream: true }) in a file "main" includes, request.body
// read as a stream, a stream returned as the response body, and FUNCTIONS_REQUEST_BODY_SIZE_LIMIT raised in the
// settings (local.settings.sample.json: 1 GiB) so that bodies over the default 100 MB are accepted.
"use strict";
const { createHash } = require("node:crypto");
const { Readable } = require("node:stream");
const { setTimeout: sleep } = require("node:timers/promises");
const { app } = require("@azure/functions");

app.setup({ enableHttpStream: true });

const CHUNK_BYTES = 64 * 1024;

/** The bytes of the download at `offset`: a pattern anyone can recompute (byte i is i mod 251). */
function patternChunk(offset, size) {
  const chunk = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) chunk[i] = (offset + i) % 251;
  return chunk;
}

/** `totalBytes` of the pattern, made as they are read, never all at once. */
async function* pattern(totalBytes) {
  for (let offset = 0; offset < totalBytes; offset += CHUNK_BYTES) {
    yield patternChunk(offset, Math.min(CHUNK_BYTES, totalBytes - offset));
    // What a real source (a file, a blob, a model's answer) does between chunks: it waits on I/O.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

// Reads the upload as it arrives and answers with its size and SHA-256: the body is never held whole.
app.http("upload", {
  methods: ["POST"],
  handler: async (request) => {
    if (!request.body) return { status: 400, body: "Request body is required" };
    const hash = createHash("sha256");
    let bytes = 0;
    for await (const chunk of request.body) {
      hash.update(chunk);
      bytes += chunk.length;
    }
    return { jsonBody: { bytes, sha256: hash.digest("hex") } };
  },
});

// GET /api/download?bytes=N: N bytes of the pattern, generated while they are sent.
app.get("download", {
  handler: (request) => {
    const totalBytes = Number(request.query.get("bytes") ?? "1048576");
    return {
      headers: { "content-type": "application/octet-stream" },
      body: Readable.from(pattern(totalBytes)),
    };
  },
});

// GET /api/tokens?count=N&everyMs=T: an answer that comes a piece at a time, as a chat model's does, as server-sent
// events. Each event says when it was written.
app.get("tokens", {
  handler: (request) => {
    const count = Number(request.query.get("count") ?? "5");
    const everyMs = Number(request.query.get("everyMs") ?? "100");
    async function* events() {
      for (let n = 1; n <= count; n++) {
        if (n > 1) await sleep(everyMs);
        yield Buffer.from(`data: ${JSON.stringify({ n, writtenAt: Date.now() })}\n\n`);
      }
    }
    return {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
      body: Readable.from(events()),
    };
  },
});

// A route with parameters and a body read whole: what an ordinary handler sees when the app streams.
app.http("echo", {
  methods: ["POST", "GET"],
  route: "echo/{name}",
  handler: async (request, context) => ({
    status: 201,
    headers: { "x-echo": "yes" },
    cookies: [{ name: "seen", value: "1", path: "/" }],
    jsonBody: {
      name: request.params.name,
      url: request.url,
      method: request.method,
      query: request.query.get("q"),
      header: request.headers.get("x-sample"),
      body: request.method === "POST" ? await request.text() : null,
      functionName: context.functionName,
    },
  }),
});

app.get("nothing", { handler: () => undefined });

app.get("fails", {
  handler: () => {
    throw new Error("the handler failed");
  },
});
