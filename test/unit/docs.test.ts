/**
 * The documentation that describes the state machine, the contract and the settings is checked against the code,
 * so that it cannot drift. `npm run docs:update` rewrites the generated sections.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SETTING_NAMES } from "../../src/config";
import {
  AGENT_NAMES,
  ALERT_KINDS,
  PROCESS_STATES,
  STATUS_VALUES,
  agentRequestQueue,
  renderStateDiagram,
  renderTransitionTable,
} from "../../src/domain";
import { QUEUES } from "../../src/services/serviceBus";
import { schedulerActivities } from "../../src/scheduler/activities";
import { SCHEDULER_ORCHESTRATION } from "../../src/scheduler/orchestration";

const UPDATE = process.env.UPDATE_DOCS === "1";

function generatedSections(): Record<string, string> {
  return {
    "state-diagram": "```mermaid\n" + renderStateDiagram() + "\n```",
    "transition-table": renderTransitionTable(),
  };
}

function withSections(text: string, sections: Record<string, string>): string {
  let out = text;
  for (const [name, body] of Object.entries(sections)) {
    const pattern = new RegExp(`(<!-- generated:${name} -->)[\\s\\S]*?(<!-- /generated:${name} -->)`);
    if (!pattern.test(out)) throw new Error(`docs/architecture.md lacks the markers of section ${name}`);
    out = out.replace(pattern, `$1\n${body}\n$2`);
  }
  return out;
}

describe("docs", () => {
  it("docs/architecture.md shows the state machine as the code defines it", () => {
    const path = "docs/architecture.md";
    const current = readFileSync(path, "utf8");
    const expected = withSections(current, generatedSections());
    if (UPDATE) writeFileSync(path, expected);
    else expect(current, "run `npm run docs:update`").toBe(expected);
  });

  it("docs/contract.md names every queue, state, alert kind, status and Scheduler function of the code", () => {
    const text = readFileSync("docs/contract.md", "utf8");
    const names = [
      ...Object.values(QUEUES),
      ...AGENT_NAMES.map(agentRequestQueue),
      ...PROCESS_STATES,
      ...ALERT_KINDS,
      ...STATUS_VALUES,
      SCHEDULER_ORCHESTRATION,
      ...Object.keys(schedulerActivities),
    ];
    for (const name of names) expect(text, name).toContain(`\`${name}\``);
  });

  it("docs/configuration.md documents every setting", () => {
    const text = readFileSync("docs/configuration.md", "utf8");
    for (const name of SETTING_NAMES) expect(text, name).toContain(`\`${name}\``);
  });
});
