import { describe, expect, it } from "vitest";
import { compareRoutes, compileRoute } from "../../src/triggers/httpRoutes";

const match = (template: string, path: string) =>
  compileRoute(template).match(path.split("/").filter(Boolean));

describe("HTTP route templates", () => {
  it("matches literals case-insensitively and captures parameters", () => {
    expect(match("api/orders/{orderId}", "API/Orders/ORD-1")).toEqual({ orderId: "ORD-1" });
    expect(match("api/orders/{orderId}", "api/orders")).toBeUndefined();
    expect(match("api/orders/{orderId}", "api/orders/1/extra")).toBeUndefined();
  });

  it("applies inline constraints", () => {
    expect(match("api/items/{id:int}", "api/items/42")).toEqual({ id: "42" });
    expect(match("api/items/{id:int}", "api/items/4x")).toBeUndefined();
    expect(match("api/c/{code:alpha:length(3)}", "api/c/EUR")).toEqual({ code: "EUR" });
    expect(match("api/c/{code:alpha:length(3)}", "api/c/EURO")).toBeUndefined();
    expect(match("api/n/{n:range(1,10)}", "api/n/11")).toBeUndefined();
    expect(match("api/g/{id:guid}", "api/g/8f3c0a9e-5b1d-4c2e-9f00-1a2b3c4d5e6f")).toBeDefined();
    expect(match("api/r/{x:regex(^a+b$)}", "api/r/aab")).toEqual({ x: "aab" });
    expect(match("api/b/{flag:bool}", "api/b/TRUE")).toEqual({ flag: "TRUE" });
  });

  it("lets optional, defaulted and catch-all parameters be omitted at the end", () => {
    expect(match("api/list/{page?}", "api/list")).toEqual({});
    expect(match("api/list/{page:int?}", "api/list/3")).toEqual({ page: "3" });
    expect(match("api/list/{page=1}", "api/list")).toEqual({ page: "1" });
    expect(match("api/files/{*path}", "api/files")).toEqual({});
    expect(match("api/files/{*path}", "api/files/a/b")).toEqual({ path: "a/b" });
  });

  it("matches several parameters in one segment", () => {
    expect(match("api/{name}.{ext}", "api/report.pdf")).toEqual({ name: "report", ext: "pdf" });
  });

  it("orders literals before constrained, plain, optional and catch-all parameters", () => {
    const templates = ["api/{*rest}", "api/{id?}", "api/{id}", "api/{id:int}", "api/stats"];
    const sorted = templates
      .map(compileRoute)
      .sort(compareRoutes)
      .map((r) => r.template);
    expect(sorted).toEqual(["api/stats", "api/{id:int}", "api/{id}", "api/{id?}", "api/{*rest}"]);
  });

  it("rejects templates the host would reject", () => {
    expect(() => compileRoute("api/{id:number}")).toThrow(/unknown route constraint "number"/);
    expect(() => compileRoute("api/{*rest}/more")).toThrow(/catch-all parameter must be the last segment/);
    expect(() => compileRoute("api/{id}/{ID}")).toThrow(/parameter "id" appears twice/);
    expect(() => compileRoute("api/{id")).toThrow(/unclosed "\{"/);
  });
});
