/**
 * Building one workflow version from another. Apart from ./workflow, which reads the process declaration, so that
 * the declaration itself (./process) can build its later versions with it.
 */
import type { StepDefinition, WorkflowDefinition } from "./workflow";

/**
 * The steps of `base` with `step` inserted after the step named `after`: how a new version is built from an old
 * one (docs/architecture.md#versioning). Every step of `base` is taken, so a version built this way cannot lose one
 * of them, however `base` changes; it throws when `after` is not a step of `base` or `step`'s name is taken.
 */
export function withStepAfter(
  base: WorkflowDefinition,
  after: string,
  step: StepDefinition,
): StepDefinition[] {
  const names = base.steps.map((s) => s.name);
  const at = names.indexOf(after);
  const where = `${base.name} v${base.version}`;
  if (at < 0) throw new Error(`${where} has no step ${after} (steps: ${names.join(", ")})`);
  if (names.includes(step.name)) throw new Error(`${where} already has a step ${step.name}`);
  return [...base.steps.slice(0, at + 1), step, ...base.steps.slice(at + 1)];
}
