import { describe, expect, it } from "vitest";
import { requestBodyLimit } from "../../src/triggers/bodyLimit";

describe("requestBodyLimit", () => {
  it("is the host's 104857600 bytes unless FUNCTIONS_REQUEST_BODY_SIZE_LIMIT gives another number of bytes", () => {
    expect(requestBodyLimit({})).toBe(104_857_600);
    expect(requestBodyLimit({ FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: "" })).toBe(104_857_600);
    expect(requestBodyLimit({ FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: "209715200" })).toBe(209_715_200);
  });

  // azure-functions-host src/WebJobs.Script.WebHost/Middleware/HttpRequestBodySizeMiddleware.cs: long.TryParse.
  it("reads the setting as the host's long.TryParse does: white space and a sign allowed, 0 a limit", () => {
    expect(requestBodyLimit({ FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: " 2048 " })).toBe(2048);
    expect(requestBodyLimit({ FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: "+2048" })).toBe(2048);
    expect(requestBodyLimit({ FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: "0" })).toBe(0);
  });

  it("keeps the default for a value the host cannot parse (it ignores it), and says so", () => {
    for (const value of ["100MB", "1.5", "1e9", "99999999999999999999"]) {
      const warnings: string[] = [];
      expect(requestBodyLimit({ FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: value }, (w) => warnings.push(w))).toBe(
        104_857_600,
      );
      expect(warnings).toEqual([
        `FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: "${value}" is not a whole number of bytes, so the host ignores it; the limit stays 104857600 bytes.`,
      ]);
    }
  });

  it("stops the start for a negative limit, which would fail every request in Azure", () => {
    expect(() => requestBodyLimit({ FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: "-1" })).toThrow(
      'FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: "-1" is negative',
    );
  });
});
