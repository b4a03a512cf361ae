import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import { z } from "zod";
import {
  API,
  PATH_PARAMETERS,
  RESPONSE_HEADERS,
  TAGS,
  type ApiOperation,
  type ApiResponse,
} from "./apiOperations";
import { REQUEST_SCHEMAS, RESPONSE_SCHEMAS, type OpenApiDocument } from "./apiSchemas";
import { PRINCIPAL_HEADER } from "./principal";
import { json } from "./responses";

/**
 * The OpenAPI 3.1 description of the HTTP API, built from the operations table (apiOperations.ts) and the zod
 * schemas the handlers use (apiSchemas.ts): JSON Schema 2020-12, which is OpenAPI 3.1's own dialect, straight from
 * z.toJSONSchema. GET /api/openapi.json serves it; test/e2e/openApi.test.ts holds it to the running app.
 */

export const OPENAPI_VERSION = "3.1.1";
/** The version of the contract the document describes: raise it with a change of a route or a shape. */
export const API_VERSION = "1.1.0";

type JsonObject = Record<string, unknown>;

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** A zod schema as an inline JSON Schema (a parameter's, a header's). */
function inlineSchema(schema: z.ZodType): JsonObject {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: "input" });
  return rest;
}

/**
 * Named zod schemas as components, through one registry so that they refer to each other by name. `io` says which
 * side of a schema a transform or a default describes: the body a client sends, or the answer it gets.
 */
function componentSchemas(
  named: Record<string, z.ZodType>,
  io: "input" | "output",
): Record<string, JsonObject> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(named)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { io, uri: (id) => `#/components/schemas/${id}` });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, { $id: _id, $schema: _dialect, ...schema }]) => [id, schema]),
  );
}

/** Request and answer schemas in one namespace: a name both use must mean the same on both sides. */
function allComponentSchemas(): Record<string, JsonObject> {
  const requests = componentSchemas(REQUEST_SCHEMAS, "input");
  const responses = componentSchemas(RESPONSE_SCHEMAS, "output");
  for (const [name, schema] of Object.entries(requests)) {
    if (name in responses && JSON.stringify(responses[name]) !== JSON.stringify(schema)) {
      throw new Error(`components/schemas/${name}: the request's schema and the answer's differ`);
    }
  }
  return { ...requests, ...responses };
}

const SECURITY_SCHEMES = {
  functionKey: {
    type: "apiKey",
    in: "header",
    name: "x-functions-key",
    description: "A function key (or the host key) of the Function App: `az functionapp keys list`",
  },
  functionKeyQuery: {
    type: "apiKey",
    in: "query",
    name: "code",
    description: "The same key, as a query parameter",
  },
  signedIn: {
    type: "apiKey",
    in: "header",
    name: PRINCIPAL_HEADER,
    description:
      "A user signed in with Entra ID through the platform's built-in authentication (App Service " +
      "authentication): a browser session, or `Authorization: Bearer` with an access token for the app. The " +
      `platform passes the user on as ${PRINCIPAL_HEADER} (base64 JSON of the claims) and strips any such ` +
      "header a client sends. An operation's roles name the app role it needs: Orders.Operator includes " +
      "Orders.Reader. On a local runtime (OPERATOR_AUTH=header, the devhost) a client sends the header itself.",
  },
};

/** Who may call: the security requirement of an operation's access. */
function security(operation: ApiOperation): JsonObject[] {
  const access = operation.access;
  if (access.kind === "functionKey") return [{ functionKey: [] }, { functionKeyQuery: [] }];
  if (access.kind === "signedIn") return [{ signedIn: [access.role] }];
  return [];
}

/** The statuses an operation answers because of its access and its body, whatever its handler does. */
function impliedResponses(operation: ApiOperation): Record<number, ApiResponse> {
  const implied: Record<number, ApiResponse> = {};
  if (operation.access.kind === "functionKey") {
    implied[401] = {
      description:
        "No function key, or a wrong one: the Functions host answers before the app runs, with no body",
    };
  }
  if (operation.access.kind === "signedIn") {
    implied[401] = {
      description: "Not signed in (with WWW-Authenticate), or a principal header that is not one",
      body: "Problem",
      headers: ["WWW-Authenticate"],
    };
    implied[403] = { description: `Signed in without the role ${operation.access.role}`, body: "Problem" };
    implied[503] = {
      description:
        "Operator sign-in is not set up: OPERATOR_AUTH=platform with the platform's authentication off",
      body: "Problem",
    };
  }
  if (operation.body) {
    implied[413] = {
      description:
        "A body over MAX_REQUEST_BYTES. One declared larger than FUNCTIONS_REQUEST_BODY_SIZE_LIMIT (twice that) is refused by the Functions host before it is read, with the host's own body",
      body: "Problem",
    };
    implied[415] = { description: "A content-type other than application/json (UTF-8)", body: "Problem" };
  }
  return implied;
}

function responseObject(response: ApiResponse): JsonObject {
  const { body, headers } = response;
  return {
    description: response.description,
    ...(headers
      ? { headers: Object.fromEntries(headers.map((h) => [h, { $ref: `#/components/headers/${h}` }])) }
      : {}),
    ...(body === "html" ? { content: { "text/html": { schema: { type: "string" } } } } : {}),
    ...(body === "javascript" ? { content: { "text/javascript": { schema: { type: "string" } } } } : {}),
    ...(body && body !== "html" && body !== "javascript"
      ? { content: { "application/json": { schema: schemaRef(body) } } }
      : {}),
  };
}

/** The route's `{name}` parameters, each with its grammar, then the query parameters. */
function parameters(operation: ApiOperation): JsonObject[] {
  const names = [...operation.route.matchAll(/\{([^}:]+)[^}]*\}/g)].map((m) => m[1]!);
  const inPath = names.map((name) => {
    const parameter = PATH_PARAMETERS[name];
    if (!parameter) throw new Error(`route ${operation.route}: no description of the parameter {${name}}`);
    const { description, schema } = parameter;
    return { name, in: "path", required: true, description, schema: inlineSchema(schema) };
  });
  const inQuery = (operation.query ?? []).map(({ name, description, schema }) => ({
    name,
    in: "query",
    required: false,
    description,
    schema: inlineSchema(schema),
  }));
  return [...inPath, ...inQuery];
}

function operationObject(operationId: string, operation: ApiOperation): JsonObject {
  const params = parameters(operation);
  const responses = { ...impliedResponses(operation), ...operation.responses };
  return {
    operationId,
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    tags: [operation.tag],
    "x-azure-function": operation.functionName,
    security: security(operation),
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(operation.body
      ? {
          requestBody: {
            required: operation.body.required,
            content: {
              "application/json": {
                schema: schemaRef(operation.body.schema),
                ...(operation.body.example ? { example: operation.body.example } : {}),
              },
            },
          },
        }
      : {}),
    // Integer keys iterate in ascending order: the statuses come out sorted.
    responses: Object.fromEntries(Object.entries(responses).map(([s, r]) => [s, responseObject(r)])),
  };
}

function buildDocument(): OpenApiDocument {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [operationId, operation] of Object.entries(API) as [string, ApiOperation][]) {
    const methods = (paths[`/${operation.route}`] ??= {});
    methods[operation.method.toLowerCase()] = operationObject(operationId, operation);
  }
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: "Scheduler Agent Supervisor: orders API",
      version: API_VERSION,
      description:
        "Machine clients submit orders and read their status with a function key; people read and act on " +
        "orders signed in with Entra ID, holding an app role. Every refusal the app answers itself is a 4xx " +
        "with {error} naming the problem.",
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: "/api" }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas: allComponentSchemas(),
      headers: Object.fromEntries(
        Object.entries(RESPONSE_HEADERS).map(([name, h]) => [
          name,
          { description: h.description, schema: inlineSchema(h.schema) },
        ]),
      ),
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}

let built: OpenApiDocument | undefined;

/** The document, with the API's base path as its server: `/api` under the host's default route prefix. */
export function openApiDocument(apiBase?: string): OpenApiDocument {
  built ??= buildDocument();
  return apiBase === undefined ? built : { ...built, servers: [{ url: apiBase }] };
}

/** GET /api/openapi.json: the API lives beside the document, whatever the host's route prefix is. */
export function openApiRequest(request: HttpRequest): HttpResponseInit {
  const apiBase = new URL(request.url).pathname.replace(/\/openapi\.json$/i, "");
  return json(200, openApiDocument(apiBase === "" ? "/" : apiBase));
}
