/**
 * The OpenAPI document as built from the operations table and the handlers' zod schemas: valid OpenAPI 3.1, every
 * schema a JSON Schema that compiles, every route parameter described, and the schemas as strict as the zod ones
 * they come from. test/e2e/openApi.test.ts holds it to the running app.
 */
import { HttpRequest } from "@azure/functions";
import { describe, expect, it } from "vitest";
import { API } from "../../../src/api/apiOperations";
import { openApiDocument, openApiRequest } from "../../../src/api/openApi";
import { orderSchema } from "../../../src/domain";
import { OpenApiCheck } from "../../support/openApi";
import { sampleOrder } from "../../support/domain";

const document = openApiDocument();
const check = new OpenApiCheck(document as ConstructorParameters<typeof OpenApiCheck>[0]);
const schema = (name: string) => `/components/schemas/${name}`;

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1, and each of its schemas compiles", () => {
    expect(check.documentErrors()).toEqual([]);
    expect(check.schemaErrors()).toEqual([]);
  });

  it("the specification's schema refuses a broken document, so the check above can fail", () => {
    const broken = structuredClone(document) as typeof check.document;
    delete (broken.paths["/orders"]!.post!.responses as Record<string, Record<string, unknown>>)["202"]!
      .description;
    expect(new OpenApiCheck(broken).documentErrors()).toContainEqual(
      expect.stringContaining("must have required property 'description'"),
    );
  });

  it("has one operation per entry of the table, with unique ids and function names", () => {
    expect(check.operations.map((o) => o.operationId).sort()).toEqual(Object.keys(API).sort());
    const functions = check.operations.map((o) => o.operation["x-azure-function"]);
    expect(new Set(functions).size).toBe(functions.length);
  });

  it("describes every {parameter} of a path, with the grammar the handler checks", () => {
    for (const { path, operation } of check.operations) {
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const described = ((operation.parameters ?? []) as { name: string; in: string }[])
        .filter((p) => p.in === "path")
        .map((p) => p.name);
      expect(described, path).toEqual(inPath);
    }
    const orderId = `/paths/~1orders~1{orderId}/get/parameters/0/schema`;
    expect(check.valueErrors(orderId, "ORD-1_a")).toEqual([]);
    for (const bad of ["-ORD", "a/b", "x".repeat(65), ""])
      expect(check.valueErrors(orderId, bad)).not.toEqual([]);
  });

  it("names only security schemes it defines; operator routes name their role", () => {
    const schemes = Object.keys((document.components as { securitySchemes: object }).securitySchemes);
    for (const { operationId, operation } of check.operations) {
      for (const requirement of operation.security) {
        for (const name of Object.keys(requirement)) expect(schemes, operationId).toContain(name);
      }
    }
    expect(check.operation("retryOrder").operation.security).toEqual([{ signedIn: ["Orders.Operator"] }]);
    expect(check.operation("listOrders").operation.security).toEqual([{ signedIn: ["Orders.Reader"] }]);
    expect(check.operation("submitOrder").operation.security).toEqual([
      { functionKey: [] },
      { functionKeyQuery: [] },
    ]);
    expect(check.operation("health").operation.security).toEqual([]);
  });

  it("takes an order as orderSchema does, as far as JSON Schema can say; its example is one", () => {
    const example = (check.operation("submitOrder").operation.requestBody as never)["content"][
      "application/json"
    ]["example"];
    expect(orderSchema.safeParse(example).success).toBe(true);
    expect(check.valueErrors(schema("Order"), example)).toEqual([]);
    expect(check.valueErrors(schema("Order"), sampleOrder())).toEqual([]);
    for (const broken of [
      { ...sampleOrder(), unknownField: 1 },
      { ...sampleOrder(), items: [] },
      { ...sampleOrder(), items: [{ sku: "S", quantity: 1, unitPrice: 0 }] },
      { ...sampleOrder(), currency: "euro" },
      { ...sampleOrder(), orderId: "has space" },
    ]) {
      expect(check.valueErrors(schema("Order"), broken), JSON.stringify(broken)).not.toEqual([]);
      expect(orderSchema.safeParse(broken).success).toBe(false);
    }
  });

  it("documents the input side of a body with defaults and transforms, and the output side of an answer", () => {
    // bulk: dryRun and limit have defaults, so a client may leave them out; updatedSince is a timestamp in.
    expect(check.valueErrors(schema("BulkRetry"), { filter: { state: "Error" } })).toEqual([]);
    expect(
      check.valueErrors(schema("BulkRetry"), { filter: { state: "Error", updatedSince: "yesterday" } }),
    ).not.toEqual([]);
    expect(check.valueErrors(schema("BulkCancel"), { filter: { state: "Error" }, limit: 0 })).not.toEqual([]);
    // A refusal has an error and nothing else unknown.
    expect(check.valueErrors(schema("Problem"), { error: "x" })).toEqual([]);
    expect(check.valueErrors(schema("Problem"), { message: "x" })).not.toEqual([]);
  });

  it("is served with the base path the request came in under as its server", () => {
    const served = openApiRequest(
      new HttpRequest({ method: "GET", url: "http://localhost:7071/api/openapi.json" }),
    );
    expect(served.status).toBe(200);
    expect((served.jsonBody as typeof document).servers).toEqual([{ url: "/api" }]);
    const other = openApiRequest(
      new HttpRequest({ method: "GET", url: "https://x.example/v2/openapi.json" }),
    );
    expect((other.jsonBody as typeof document).servers).toEqual([{ url: "/v2" }]);
  });
});
