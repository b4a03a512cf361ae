/**
 * Where role code writes what it did. The Functions host's InvocationContext is one (its lines carry the
 * invocation id into Application Insights); tests pass any object with these three methods.
 */
export interface Logger {
  log(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}
