// What stopping the host undoes, collected as start-up goes: each phase registers the step that undoes it, and
// stopping runs them in reverse order, so the last thing started stops first. A step that fails is logged and the
// others still run: one stuck receiver must not leave the task hub open or the environment changed.
import type { HostLogger } from "../logger";

export type ShutdownStep = () => Promise<void> | void;

export class ShutdownSteps {
  private readonly steps: ShutdownStep[] = [];

  constructor(private readonly logger: HostLogger) {}

  push(step: ShutdownStep): void {
    this.steps.push(step);
  }

  /** Runs every step registered so far, newest first; each runs at most once. */
  async runAll(): Promise<void> {
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step();
      } catch (error) {
        this.logger.warn(`Shutdown step failed: ${(error as Error).message}`);
      }
    }
  }
}
