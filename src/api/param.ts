/** A parameter read from a route or a query string: its value, or the 400 message that names the problem. */
export type Param<T> = { ok: true; value: T } | { ok: false; error: string };
