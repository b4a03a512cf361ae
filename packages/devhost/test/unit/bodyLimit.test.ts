import { describe, expect, it } from "vitest";
import { requestBodyLimit } from "../../src/triggers/bodyLimit";

describe("requestBodyLimit", () => {
  it("is the host's 104857600 bytes unless FUNCTIONS_REQUEST_BODY_SIZE_LIMIT gives another number of bytes", () => {
    expect(requestBodyLimit({})).toBe(104_857_600);
    expect(requestBodyLimit({ FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: "" })).toBe(104_857_600);
    expect(requestBodyLimit({ FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: "209715200" })).toBe(209_715_200);
  });

  it("stops the start, naming the setting, for a value that is not a whole number of bytes", () => {
    for (const value of ["100MB", "-1", "0", "1.5", "1e9", "99999999999999999999"]) {
      expect(() => requestBodyLimit({ FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: value })).toThrow(
        `FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: "${value}" is not a number of bytes`,
      );
    }
  });
});
