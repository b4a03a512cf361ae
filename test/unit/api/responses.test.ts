import { HttpRequest } from "@azure/functions";
import { describe, expect, it } from "vitest";
import { readJsonBody } from "../../../src/api/responses";
import { RAW_CONTROL } from "../../support/text";

const post = (body: Uint8Array, contentType = "application/json") =>
  new HttpRequest({
    method: "POST",
    url: "http://127.0.0.1:7071/api/orders",
    headers: { "content-type": contentType },
    body: { bytes: body },
  });

const errorOf = (read: Awaited<ReturnType<typeof readJsonBody>>) =>
  read.ok
    ? "read"
    : { status: read.response.status, error: (read.response.jsonBody as { error: string }).error };

describe("readJsonBody", () => {
  it("refuses a body that is not UTF-8 with 400 naming the byte, instead of reading U+FFFD into it", async () => {
    const latin1 = Buffer.from('{"city":"Z\xfcrich"}', "latin1");
    expect(errorOf(await readJsonBody(post(latin1), 1_000))).toEqual({
      status: 400,
      error: "body: expected UTF-8, got bytes that are not UTF-8 at byte offset 10",
    });
  });

  it("reads UTF-8, with or without a byte order mark", async () => {
    const text = '{"city":"Zürich"}';
    for (const body of [
      Buffer.from(text),
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]),
    ]) {
      expect(await readJsonBody(post(body), 1_000)).toEqual({ ok: true, body: { city: "Zürich" } });
    }
  });

  it("still answers 413 for a body over the limit and 415 for another content type", async () => {
    const big = Buffer.from(JSON.stringify({ pad: "x".repeat(2_000) }));
    expect(errorOf(await readJsonBody(post(big), 1_000))).toEqual({
      status: 413,
      error: "body: expected at most 1000 bytes",
    });
    expect(errorOf(await readJsonBody(post(Buffer.from([0xff]), "text/plain"), 1_000))).toMatchObject({
      status: 415,
    });
  });

  it("escapes what the JSON parser quotes of the body", async () => {
    const read = errorOf(await readJsonBody(post(Buffer.from('{"a":\u2028\n"b" x}')), 1_000));
    expect(read).toMatchObject({ status: 400, error: expect.stringMatching(/^body: expected JSON \(/) });
    expect(typeof read === "object" && read.error).not.toMatch(RAW_CONTROL);
  });
});
