// The devhost's console output, shaped like `func start`: a timestamp, then the host's own lines
// ("Executing 'Functions.x' (Reason=..., Id=...)") or the app's context.log lines tagged with the function.

export type LogLevel = "trace" | "debug" | "information" | "warning" | "error" | "critical";

export interface LogRecord {
  level: LogLevel;
  /** host: the devhost itself; user: context.log and friends; system: @azure/functions and durable internals. */
  category: "host" | "user" | "system";
  message: string;
  functionName?: string;
  invocationId?: string;
  time: Date;
}

export type LogSink = (record: LogRecord) => void;

const LEVEL_ORDER: Record<LogLevel, number> = {
  trace: 0,
  debug: 1,
  information: 2,
  warning: 3,
  error: 4,
  critical: 5,
};

export function formatLogRecord(record: LogRecord): string {
  const tag = record.category === "user" && record.functionName ? `[${record.functionName}] ` : "";
  const level = record.level === "warning" || record.level === "error" || record.level === "critical";
  return `[${record.time.toISOString()}] ${tag}${level ? `${record.level}: ` : ""}${record.message}`;
}

/** Writes records at `minLevel` and above to stdout (warnings and errors to stderr). */
export function consoleLogSink(minLevel: LogLevel = "information"): LogSink {
  return (record) => {
    if (LEVEL_ORDER[record.level] < LEVEL_ORDER[minLevel]) return;
    const line = formatLogRecord(record) + "\n";
    if (LEVEL_ORDER[record.level] >= LEVEL_ORDER.warning) process.stderr.write(line);
    else process.stdout.write(line);
  };
}

/** A small facade so call sites read as `log.info("...")`. */
export class HostLogger {
  readonly sink: LogSink;
  constructor(sink: LogSink) {
    this.sink = sink;
  }
  write(record: Omit<LogRecord, "time">): void {
    try {
      this.sink({ ...record, time: new Date() });
    } catch {
      // A failing log sink must never fail an invocation or stop the host.
    }
  }
  info(message: string): void {
    this.write({ level: "information", category: "host", message });
  }
  warn(message: string): void {
    this.write({ level: "warning", category: "host", message });
  }
  error(message: string): void {
    this.write({ level: "error", category: "host", message });
  }
}
