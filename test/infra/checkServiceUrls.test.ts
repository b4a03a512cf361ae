/**
 * infra/scripts/check-service-urls.sh, azure.yaml's first preprovision hook: an azd environment that still sets a
 * service's own URL variable, which earlier builds passed to main.bicep and deployments no longer read, stops
 * before provisioning and is told what to set instead; any other environment goes on.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { processServices, readText } from "../support/infra";

const ROOT = path.resolve(__dirname, "..", "..");
const SCRIPT = path.join(ROOT, "infra/scripts/check-service-urls.sh");

/** The hook as azd runs it: the environment's values as variables, none of them the services' unless given. */
function check(variables: Record<string, string>) {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^[A-Z]+_URL$/.test(name)),
  );
  return spawnSync("bash", [SCRIPT], { encoding: "utf8", env: { ...inherited, ...variables } });
}

describe("the preprovision check of the services' URL variables", () => {
  const [first, second] = processServices.map((s) => s.name);
  const own = (service: string) => `${service.toUpperCase()}_URL`;

  it("runs before anything else is provisioned", () => {
    expect(readText("azure.yaml")).toMatch(
      /preprovision:\n\s+shell: sh\n\s+run: bash infra\/scripts\/check-service-urls\.sh &&/,
    );
  });

  it("lets an environment through that says where the services are with REMOTE_SERVICES_URL and SERVICE_URLS", () => {
    const run = check({
      REMOTE_SERVICES_URL: "https://services.contoso.example",
      SERVICE_URLS: `${first}=https://${first}.contoso.example`,
      [own(second!)]: "",
    });
    expect(run.status, run.stderr).toBe(0);
  });

  it("stops one that still sets a service's own URL, naming it and the SERVICE_URLS pair to set", () => {
    const run = check({ [own(first!)]: `https://${first}.contoso.example` });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      `${own(first!)}: put it in SERVICE_URLS as ${first}=https://${first}.contoso.example, then clear it (azd env set ${own(first!)} '')`,
    );
    expect(run.stderr).not.toContain(own(second!));
  });
});
