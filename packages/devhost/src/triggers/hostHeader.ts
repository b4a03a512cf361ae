// The Host header check of the HTTP front, as Kestrel (the host's web server) makes it before any app code runs:
// RFC 9112 §3.2 says a server must answer 400 to an HTTP/1.1 request without a Host header, with more than one,
// or with one whose value is not a valid host. The request URL handed to the app is built from the header, so a
// value that passed no check would make an invalid URL and fail deep inside the library as a 500; here it is
// refused first, with a short text naming the problem (Kestrel's own texts: "Request is missing Host header.",
// "Multiple Host headers.", "Invalid Host header: '...'").
import type http from "node:http";

export type RequestOrigin =
  | {
      /** http://host[:port] as the client named the host, safe to build URLs on. */
      origin: string;
      /** The path and query of the request target (absolute-form reduced to them). */
      pathAndQuery: string;
    }
  | { problem: string };

/**
 * Kestrel's HttpUtilities.IsHostHeaderValid: empty (allowed by RFC 9112 §3.2), an IPv6 literal in brackets, or
 * reg-name characters (unreserved, sub-delims and %); then optionally ":" and digits. No userinfo, no spaces.
 */
const HOST_PATTERN = /^(?:|\[[0-9A-Fa-f:.]+(?:%[\w.~-]+)?\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::\d{1,5})?$/;

/**
 * Where the request came to: its Host header checked, and the URL of the request built on it. `fallbackHost`
 * (the address the server listens on) stands in for an empty Host, which the RFC allows and Kestrel accepts.
 */
export function requestOrigin(req: http.IncomingMessage, fallbackHost: string): RequestOrigin {
  const hosts = hostHeaderValues(req);
  if (hosts.length === 0) {
    // Node answers an HTTP/1.1 request without Host itself unless told not to; HTTP/1.0 needs none.
    if (req.httpVersion !== "1.0") return { problem: "Request is missing Host header." };
  }
  if (hosts.length > 1) return { problem: "Multiple Host headers." };
  const host = hosts[0]?.trim() || fallbackHost;
  if (!HOST_PATTERN.test(host) || host.startsWith(":")) {
    return { problem: `Invalid Host header: '${printable(hosts[0] ?? "")}'.` };
  }
  let origin: URL;
  try {
    // The WHATWG parser is the last word: it refuses what the pattern lets through but no URL can hold
    // (a port over 65535, a bad percent-escape, an IPv6 literal of the wrong shape).
    origin = new URL(`http://${host}`);
  } catch {
    return { problem: `Invalid Host header: '${printable(host)}'.` };
  }
  const target = req.url ?? "/";
  if (target.startsWith("/")) return { origin: origin.origin, pathAndQuery: target };
  // Absolute-form (RFC 9112 §3.2.2): Kestrel requires the Host header to name the same authority.
  try {
    const absolute = new URL(target);
    if ((absolute.protocol === "http:" || absolute.protocol === "https:") && absolute.host === origin.host) {
      return { origin: origin.origin, pathAndQuery: `${absolute.pathname}${absolute.search}` };
    }
    return { problem: `Invalid Host header: '${printable(host)}' does not match the request target.` };
  } catch {
    return { problem: `Invalid request target: '${printable(target)}'.` };
  }
}

/** Every Host header the client sent: node's req.headers keeps only the first of several. */
function hostHeaderValues(req: http.IncomingMessage): string[] {
  const values: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]?.toLowerCase() === "host") values.push(req.rawHeaders[i + 1] ?? "");
  }
  return values;
}

/** A header value to quote in a response: at most 100 characters, anything unprintable as "?". */
function printable(value: string): string {
  const cut = value.length > 100 ? `${value.slice(0, 100)}...` : value;
  return cut.replace(/[^\x20-\x7e]/g, "?");
}
