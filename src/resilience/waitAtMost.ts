/**
 * Waits for `work` at most `ms`, then answers `fallback` and leaves `work` to finish on its own. For work a caller
 * may go on without (a cached count, a best-effort claim round) that a store fault must not hold the caller up
 * for; `work` must not reject (catch first), since nobody awaits it once the wait is over.
 */
export async function waitAtMost<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  try {
    return await Promise.race([work, waited]);
  } finally {
    clearTimeout(timer);
  }
}
