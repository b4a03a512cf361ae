/**
 * What the app's identity may do, and who else may do it, in what infra/main.bicep deploys (bicep snapshot, four
 * parameter sets): identity-based connections only, the storage roles the Functions host needs, and nobody but the
 * app allowed to send where a message is trusted (docs/operations.md, "Trust boundaries").
 */
import { beforeAll, expect, it } from "vitest";
import {
  compiledInfra,
  COMPILE_TIMEOUT_MS,
  DEPLOYMENT_NAMES,
  describeWithBicep,
  isAppIdentity,
  requestQueues,
  roleAssignments,
  type CompiledInfra,
} from "../support/infra";

const SERVICE_BUS_SENDING_ROLES: Record<string, string> = {
  "69a216fc-b8fb-44d8-bc22-1f3c2cd27a39": "Azure Service Bus Data Sender",
  "090c5cfd-751d-490a-894a-3ce6f1109419": "Azure Service Bus Data Owner",
};
const STORAGE_HOST_ROLES: Record<string, string> = {
  "b7e6dc6d-f1e8-4753-8033-0f276bb0955b": "Storage Blob Data Owner",
  "974c5e8b-45b9-4653-ba55-5f855dd0fb88": "Storage Queue Data Contributor",
  "0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3": "Storage Table Data Contributor",
};

describeWithBicep("role assignments and keys", () => {
  let infra: CompiledInfra;
  beforeAll(async () => {
    infra = await compiledInfra();
  }, COMPILE_TIMEOUT_MS);

  it("read no key and carry no connection string with one, anywhere in the template", () => {
    for (const pattern of [/listKeys\(/i, /listConnectionStrings\(/i, /AccountKey=/i, /SharedAccessKey/i]) {
      expect(infra.templateText, String(pattern)).not.toMatch(pattern);
    }
  });

  // A reply on agent-replies with every field right is indistinguishable from an agent's, so the trust boundary
  // is who may send there; the same goes for the request queues, whose messages become remote calls. A grant on
  // the namespace or above covers them too, so it counts.
  it.each(DEPLOYMENT_NAMES)(
    "let only the app's identity send to agent-replies and the agent request queues, one grant each (%s)",
    (name) => {
      const guarded = ["agent-replies", ...requestQueues];
      const senders = roleAssignments(infra.snapshots[name])
        .filter((a) => a.roleId in SERVICE_BUS_SENDING_ROLES)
        .map((a) => ({
          ...a,
          queue: /\/Microsoft\.ServiceBus\/namespaces\/[^/]+\/queues\/([^/]+)$/.exec(a.scope)?.[1],
        }))
        .filter((a) => a.queue === undefined || guarded.includes(a.queue));
      const others = senders
        .filter((a) => !isAppIdentity(a.principalId))
        .map((a) => `${SERVICE_BUS_SENDING_ROLES[a.roleId]} on ${a.queue ?? a.scope} to ${a.principalId}`);
      expect(others).toEqual([]);
      expect(senders.map((a) => a.queue).sort()).toEqual([...guarded].sort());
    },
  );

  // The host writes diagnostic events to tables and is given the queue and table endpoints with either durable
  // backend, so all three roles are needed in both modes.
  it.each(DEPLOYMENT_NAMES)(
    "give the app's identity blob, queue and table data roles on the storage account (%s)",
    (name) => {
      const granted = roleAssignments(infra.snapshots[name])
        .filter((a) => isAppIdentity(a.principalId))
        .filter((a) => /\/Microsoft\.Storage\/storageAccounts\/[^/]+$/.test(a.scope))
        .map((a) => a.roleId);
      for (const [id, role] of Object.entries(STORAGE_HOST_ROLES)) expect(granted, role).toContain(id);
    },
  );
});
