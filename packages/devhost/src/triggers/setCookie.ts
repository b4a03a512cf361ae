// The Set-Cookie header of one cookie an HTTP function returned, written as the Functions host writes it. The
// host turns each RpcHttpCookie into ASP.NET Core CookieOptions (RpcHttpCookieConverter in azure-functions-host
// src/WebJobs.Script.Grpc/MessageExtensions/GrpcMessageExtensionUtilities.cs) and appends it with
// HttpResponse.Cookies.Append (src/WebJobs.Script/Binding/Http/RawScriptResult.cs). ASP.NET Core then writes it
// (dotnet/aspnetcore src/Http/Http/src/Internal/ResponseCookies.cs, src/Http/Headers/src/SetCookieHeaderValue.cs):
//   - the name as given, the value escaped with Uri.EscapeDataString;
//   - then, in this order and in lower case: `expires=` (RFC 1123, "r" format), `max-age=` (whole seconds),
//     `domain=`, `path=`, `secure`, `samesite=` (lax, strict or none), `httponly`;
//   - `path=/` when the cookie names no path, since CookieOptions.Path defaults to "/" and the converter only
//     overrides it with a path the cookie has;
//   - no samesite when the cookie has none: the library sends "none" for that, which the converter maps to
//     SameSiteMode.Unspecified, while the app's `sameSite: "None"` arrives as "explicitNone", SameSiteMode.None.
import type { RpcHttpCookie } from "../functionsCore";

/** CookieOptions.Path's default, which the host keeps for a cookie without a path. */
const DEFAULT_PATH = "/";

const SAME_SITE: Record<NonNullable<RpcHttpCookie["sameSite"]>, string | undefined> = {
  none: undefined,
  lax: "lax",
  strict: "strict",
  explicitNone: "none",
};

/** RFC 7230 token characters: what SetCookieHeaderValue accepts in a cookie name (CheckNameFormat). */
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export function formatSetCookie(cookie: RpcHttpCookie): string {
  const name = cookie.name ?? "";
  if (!COOKIE_NAME.test(name)) {
    // ASP.NET Core throws here, and the request fails; say why rather than write a header browsers would drop.
    throw new Error(`Invalid cookie name ${JSON.stringify(name)}: a cookie name must be an HTTP token.`);
  }
  const parts = [`${name}=${escapeDataString(cookie.value ?? "")}`];
  const expires = cookie.expires?.value?.seconds;
  if (typeof expires === "number") parts.push(`expires=${new Date(expires * 1000).toUTCString()}`);
  const maxAge = cookie.maxAge?.value;
  if (typeof maxAge === "number") parts.push(`max-age=${wholeSeconds(maxAge)}`);
  if (cookie.domain?.value !== undefined && cookie.domain.value !== null)
    parts.push(`domain=${cookie.domain.value}`);
  parts.push(`path=${cookie.path?.value ?? DEFAULT_PATH}`);
  if (cookie.secure?.value) parts.push("secure");
  const sameSite = SAME_SITE[cookie.sameSite ?? "none"];
  if (sameSite) parts.push(`samesite=${sameSite}`);
  if (cookie.httpOnly?.value) parts.push("httponly");
  return parts.join("; ");
}

/**
 * max-age as SetCookieHeaderValue writes it: TimeSpan.FromSeconds(maxAge), truncated to whole seconds
 * ((long)TotalSeconds), through HeaderUtilities.FormatNonNegativeInt64, which throws for a negative number.
 */
function wholeSeconds(maxAge: number): number {
  const seconds = Math.trunc(maxAge);
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new Error(`Invalid cookie maxAge ${maxAge}: it must be a number of seconds of 0 or more.`);
  }
  return seconds === 0 ? 0 : seconds; // -0.5 truncates to -0, which is written as 0
}

/**
 * .NET's Uri.EscapeDataString: every byte of the UTF-8 form percent-encoded except RFC 3986's unreserved
 * characters (letters, digits, "-", ".", "_", "~"). encodeURIComponent also leaves "!'()*" alone, so those are
 * encoded after it; a lone surrogate becomes U+FFFD, as .NET's UTF-8 encoder replaces it.
 */
export function escapeDataString(text: string): string {
  const wellFormed = text.replace(
    /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
    "\uFFFD",
  );
  return encodeURIComponent(wellFormed).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}
