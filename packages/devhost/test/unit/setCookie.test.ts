// The host's Set-Cookie, edge by edge. Sources: azure-functions-host GrpcMessageExtensionUtilities.cs
// (RpcHttpCookieConverter), dotnet/aspnetcore ResponseCookies.cs and SetCookieHeaderValue.cs.
import { describe, expect, it } from "vitest";
import { escapeDataString, formatSetCookie } from "../../src/triggers/setCookie";

describe("formatSetCookie", () => {
  it("escapes the value as Uri.EscapeDataString: all but letters, digits and -._~", () => {
    expect(escapeDataString("a-b_c.d~e")).toBe("a-b_c.d~e");
    expect(escapeDataString("!'()* ;,=/é")).toBe("%21%27%28%29%2A%20%3B%2C%3D%2F%C3%A9");
    expect(escapeDataString("\uD800x")).toBe("%EF%BF%BDx");
  });

  it("keeps an explicit empty path and domain (set, so written), and defaults a missing path to /", () => {
    expect(formatSetCookie({ name: "a", value: "1", path: { value: "" }, domain: { value: "" } })).toBe(
      "a=1; domain=; path=",
    );
    expect(formatSetCookie({ name: "a", value: "" })).toBe("a=; path=/");
  });

  it("writes max-age as whole seconds, truncated, and refuses what ASP.NET Core refuses", () => {
    expect(formatSetCookie({ name: "a", value: "1", maxAge: { value: 0 } })).toBe("a=1; max-age=0; path=/");
    expect(formatSetCookie({ name: "a", value: "1", maxAge: { value: -0.5 } })).toBe(
      "a=1; max-age=0; path=/",
    );
    expect(() => formatSetCookie({ name: "a", value: "1", maxAge: { value: -2 } })).toThrow(
      "Invalid cookie maxAge",
    );
    expect(() => formatSetCookie({ name: "a b", value: "1" })).toThrow("Invalid cookie name");
  });

  it("maps sameSite as the host: none (the library's default) is left out, explicitNone is samesite=none", () => {
    expect(formatSetCookie({ name: "a", value: "1", sameSite: "none" })).toBe("a=1; path=/");
    expect(formatSetCookie({ name: "a", value: "1", sameSite: "explicitNone" })).toBe(
      "a=1; path=/; samesite=none",
    );
  });

  it("writes expires in RFC 1123 form, from the timestamp's seconds", () => {
    expect(formatSetCookie({ name: "a", value: "1", expires: { value: { seconds: 0 } } })).toBe(
      "a=1; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/",
    );
  });
});
