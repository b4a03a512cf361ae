/** Status code of an @azure/cosmos error (409 conflict, 412 precondition failed, 404, 429...). */
export function cosmosStatus(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}
