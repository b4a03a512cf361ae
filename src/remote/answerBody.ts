/**
 * Reading a remote answer's body within a bound: as a stream, counting bytes, so that a service answering
 * megabytes costs the process at most the bound and one chunk, never the whole answer.
 */

/** The answer was larger than the client reads: transient (the next answer may be the service's own). */
export class AnswerTooLargeError extends Error {
  readonly code = "AnswerTooLarge";
  constructor(max: number, declared?: number) {
    super(
      declared === undefined
        ? `the answer's body passed ${max} bytes; the rest was not read`
        : `the answer declared ${declared} bytes of body (content-length); at most ${max} are read, none were`,
    );
    this.name = "AnswerTooLargeError";
  }
}

/**
 * Lets go of a body without reading it. Cancelling the stream makes fetch close the connection: the rest of the
 * answer is never received.
 */
export async function dropBody(res: Response): Promise<void> {
  await res.body?.cancel().catch(() => undefined);
}

/**
 * The body of `res`, at most `max` bytes. A content-length over `max` is refused before any byte is read; a body
 * that runs past `max` is refused at the chunk that passes it. Either way the body is dropped (dropBody) and
 * AnswerTooLargeError thrown.
 */
export async function readBoundedBody(res: Response, max: number): Promise<Uint8Array> {
  const declared = res.headers.get("content-length")?.trim();
  if (declared && /^\d+$/.test(declared) && Number(declared) > max) {
    await dropBody(res);
    throw new AnswerTooLargeError(max, Number(declared));
  }
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new AnswerTooLargeError(max);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}
