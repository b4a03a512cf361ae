/**
 * The editor and CI files (.vscode/, .devcontainer/, .github/workflows/ci.yml) name scripts, tasks, ports, ready
 * lines and versions that live elsewhere; each is checked against where it lives, so that renaming a script or
 * moving a port breaks this test instead of the F5 key.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { DEFAULT_PORT, formatLogRecord, hostStartedMessage } from "devhost";
import { EMULATORS_RUNNING } from "../../tools/emulators";
import { repositoryRoot, sampleSettings } from "../../tools/repository";
import { DEFAULT_SIMULATOR_PORT } from "../../tools/simulator/defaults";

const ROOT = repositoryRoot();
const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), "utf8");

/** A JSON file with comments, as VS Code reads .vscode/*.json and devcontainer.json (TypeScript's own parser). */
function readJsonc(file: string): unknown {
  const { config, error } = ts.parseConfigFileTextToJson(file, read(file));
  if (error) throw new Error(`${file}: ${ts.flattenDiagnosticMessageText(error.messageText, "\n")}`);
  return config;
}

interface Task {
  label: string;
  type: string;
  command: string;
  dependsOn?: string | string[];
  problemMatcher?: string | { background?: { beginsPattern: string; endsPattern: string } };
}
interface LaunchConfiguration {
  name: string;
  port: number;
  preLaunchTask?: string;
}
interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, string | number>;
}

const packageJson = JSON.parse(read("package.json")) as {
  name: string;
  version: string;
  scripts: Record<string, string>;
  engines: { node: string };
};
const tasks = (readJsonc(".vscode/tasks.json") as { tasks: Task[] }).tasks;
const launch = (readJsonc(".vscode/launch.json") as { configurations: LaunchConfiguration[] }).configurations;
const settings = readJsonc(".vscode/settings.json") as Record<string, unknown>;
const recommended = (readJsonc(".vscode/extensions.json") as { recommendations: string[] }).recommendations;
const devcontainer = readJsonc(".devcontainer/devcontainer.json") as {
  image: string;
  features: Record<string, { version?: string }>;
  customizations: { vscode: { extensions: string[] } };
  postCreateCommand: string;
  forwardPorts: number[];
  portsAttributes: Record<string, unknown>;
};
const workflow = parseYaml(read(".github/workflows/ci.yml")) as {
  on: Record<string, unknown>;
  jobs: Record<string, { steps: Step[] }>;
};
const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);

function task(label: string): Task {
  const found = tasks.find((t) => t.label === label);
  if (!found) throw new Error(`.vscode/tasks.json has no task "${label}"`);
  return found;
}

function background(label: string): { beginsPattern: RegExp; endsPattern: RegExp } {
  const matcher = task(label).problemMatcher;
  if (typeof matcher !== "object" || !matcher.background)
    throw new Error(`"${label}" has no background matcher`);
  return {
    beginsPattern: new RegExp(matcher.background.beginsPattern),
    endsPattern: new RegExp(matcher.background.endsPattern),
  };
}

/** The npm scripts a command line runs: `npm run X` (`npm run-script X`), `npm start`, `npm test`. */
function npmScriptsIn(commandLine: string): string[] {
  return [...commandLine.matchAll(/\bnpm (?:run(?:-script)? ([\w.-]+(?::[\w.-]+)*)|(start|test)\b)/g)].map(
    (match) => (match[1] ?? match[2])!,
  );
}

/** The line npm prints before it runs a script. */
const npmHeader = (script: string): string => `> ${packageJson.name}@${packageJson.version} ${script}`;

/** The lowest Node.js major package.json "engines" allows (">=20"). */
function enginesNodeMajor(): number {
  const match = /^>=\s*(\d+)/.exec(packageJson.engines.node);
  if (!match) throw new Error(`engines.node "${packageJson.engines.node}" is not of the form >=N`);
  return Number(match[1]);
}

/** The .NET major of the conformance suites (every one targets the same netN.0). */
function conformanceDotnetMajor(): number {
  const dir = "packages/devhost/test/conformance";
  const majors = fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .flatMap((project) =>
      fs
        .readdirSync(path.join(ROOT, dir, project))
        .filter((file) => file.endsWith(".csproj"))
        .map((file) => read(path.join(dir, project, file))),
    )
    .map((csproj) => Number(/<TargetFramework>net(\d+)\.0<\/TargetFramework>/.exec(csproj)?.[1]));
  expect(majors.length).toBeGreaterThan(0);
  expect(new Set(majors).size, "the conformance projects target one .NET").toBe(1);
  return majors[0]!;
}

describe("npmScriptsIn", () => {
  it("finds run, run-script, start and test, with their options, and nothing else", () => {
    expect(npmScriptsIn("npm run build --silent && node x && npm run-script start:debug")).toEqual([
      "build",
      "start:debug",
    ]);
    expect(npmScriptsIn("npm start -- --port 0; npm test -- --reporter=json")).toEqual(["start", "test"]);
    expect(npmScriptsIn('step "demo (npm run demo: 50 orders)"')).toEqual(["demo"]);
    expect(npmScriptsIn("npm ci --no-audit && npm install && npm started")).toEqual([]);
  });
});

describe("editor and CI files", () => {
  it("run only npm scripts that package.json defines", () => {
    const commandLines = [
      ...tasks.map((t) => t.command),
      devcontainer.postCreateCommand,
      ...steps.flatMap((s) => s.run ?? []),
      read(".ci/run"),
    ];
    const used = commandLines.flatMap(npmScriptsIn);
    expect(used).toEqual(expect.arrayContaining(["start:debug", "build", "emulators", "azurite", "test"]));
    const missing = used.filter((script) => !(script in packageJson.scripts));
    expect(missing, "scripts missing from package.json").toEqual([]);
  });

  it("name tasks that tasks.json defines, wherever a task is named", () => {
    const labels = tasks.map((t) => t.label);
    expect(new Set(labels).size, "task labels are unique").toBe(labels.length);
    const named = [
      ...launch.flatMap((c) => c.preLaunchTask ?? []),
      ...tasks.flatMap((t) => t.dependsOn ?? []),
      settings["azureFunctions.preDeployTask"] as string,
    ];
    expect(named.filter((label) => !labels.includes(label))).toEqual([]);
    // Tasks VS Code runs itself are shell commands; the Functions extension runs the `func` one.
    for (const t of tasks) expect(["shell", "func"]).toContain(t.type);
  });

  it("attach to the devhost on the port `npm run start:debug` opens the inspector on, which is `npm start` plus it", () => {
    const attach = launch.find((c) => c.name === "Attach to the devhost");
    expect(attach?.preLaunchTask).toBe("npm start (debug)");
    expect(npmScriptsIn(task(attach!.preLaunchTask!).command)).toEqual(["start:debug"]);
    const debug = packageJson.scripts["start:debug"]!;
    const inspect = /--inspect=(?:127\.0\.0\.1:)?(\d+) /.exec(debug);
    expect(Number(inspect?.[1])).toBe(attach!.port);
    expect(debug.replace(inspect![0], "")).toBe(`npm run build && ${packageJson.scripts.start}`);
    const functions = launch.find((c) => c.name === "Attach to Node Functions");
    expect(functions?.preLaunchTask).toBe("func: host start");
    expect(task("func: host start")).toMatchObject({ type: "func", command: "host start" });
  });

  it("wait for the ready lines the devhost, Node's inspector and the emulators launcher print", () => {
    const devhost = background("npm start (debug)");
    const ready = formatLogRecord({
      time: new Date(),
      level: "information",
      category: "host",
      message: hostStartedMessage(`http://127.0.0.1:${DEFAULT_PORT}`, "sas", path.join(ROOT, ".devhost")),
    });
    expect(ready).toMatch(devhost.endsPattern);
    const inspector = spawnSync(process.execPath, ["--inspect=127.0.0.1:0", "-e", ""], { encoding: "utf8" });
    expect(inspector.stderr.split("\n")).toContainEqual(expect.stringMatching(devhost.beginsPattern));

    const emulators = background("emulators");
    expect(EMULATORS_RUNNING).toMatch(emulators.endsPattern);
    expect(npmHeader("emulators")).toMatch(emulators.beginsPattern);
    expect(npmScriptsIn(task("emulators").command)).toEqual(["emulators"]);
    // Azurite's own line is its package's; what is checked here is that the task starts that package.
    expect(npmHeader("azurite")).toMatch(background("azurite").beginsPattern);
    expect(npmScriptsIn(task("azurite").command)).toEqual(["azurite"]);
  });

  it("deploy from the Functions extension what azd deploys: the folder stage-package.sh stages", () => {
    const stagingDir = /^staging_dir="([^"]+)"$/m.exec(read("infra/scripts/stage-package.sh"))?.[1];
    expect(stagingDir).toBeDefined();
    expect(settings["azureFunctions.deploySubpath"]).toBe(stagingDir);
    expect(task(settings["azureFunctions.preDeployTask"] as string).command).toBe(
      "bash infra/scripts/stage-package.sh",
    );
    expect(settings).toMatchObject({
      "azureFunctions.projectLanguage": "TypeScript",
      "azureFunctions.projectRuntime": "~4",
      "azureFunctions.projectLanguageModel": 4,
    });
  });

  it("give the dev container the Node.js of engines, the suites' .NET, the shipped ports and the same extensions", () => {
    expect(devcontainer.image).toMatch(new RegExp(`/typescript-node:${enginesNodeMajor()}(-|$)`));
    expect(devcontainer.features["ghcr.io/devcontainers/features/dotnet:2"]?.version).toBe(
      `${conformanceDotnetMajor()}.0`,
    );
    expect(devcontainer.postCreateCommand).toBe("npm ci");
    const shipped = sampleSettings();
    const localHttpPort = (
      JSON.parse(read("local.settings.sample.json")) as { Host: { LocalHttpPort: number } }
    ).Host.LocalHttpPort;
    expect(localHttpPort).toBe(DEFAULT_PORT);
    expect(Number(new URL(shipped.DASHBOARD_SIMULATOR_URL!).port)).toBe(DEFAULT_SIMULATOR_PORT);
    expect(devcontainer.forwardPorts).toEqual([DEFAULT_PORT, DEFAULT_SIMULATOR_PORT]);
    expect(Object.keys(devcontainer.portsAttributes).map(Number)).toEqual(devcontainer.forwardPorts);
    expect([...devcontainer.customizations.vscode.extensions].sort()).toEqual([...recommended].sort());
    for (const id of recommended) expect(id).toMatch(/^[\w-]+\.[\w-]+$/);
    expect(new Set(recommended).size).toBe(recommended.length);
  });

  it("run .ci/run in the workflow, on every push and pull request, with the Node.js of engines and the suites' .NET", () => {
    expect(Object.keys(workflow.on).sort()).toEqual(["pull_request", "push"]);
    expect(steps.map((s) => s.run?.trim())).toContain("bash .ci/run");
    const setupNode = steps.find((s) => s.uses?.startsWith("actions/setup-node@"));
    expect(Number(setupNode?.with?.["node-version"])).toBe(enginesNodeMajor());
    const setupDotnet = steps.find((s) => s.uses?.startsWith("actions/setup-dotnet@"));
    expect(String(setupDotnet?.with?.["dotnet-version"])).toBe(`${conformanceDotnetMajor()}.0.x`);
    // The steps before .ci/run may only prepare the machine: .ci/run is the one definition of CI.
    const ciRun = steps.findIndex((s) => s.run?.trim() === "bash .ci/run");
    expect(steps.slice(0, ciRun).flatMap((s) => (s.run ? npmScriptsIn(s.run) : []))).toEqual([]);
    // The deploy workflow stays beside it.
    expect(parseYaml(read(".github/workflows/azure-dev.yml"))).toMatchObject({ name: "azure-dev" });
  });
});
