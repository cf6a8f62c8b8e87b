type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The error codes /openapi.json lists for one operation and status (API envelope or OAuth error). */
export function documentedCodes(doc: Json, method: string, path: string, status: number): string[] {
  const schema = doc.paths?.[path]?.[method]?.responses?.[status]?.content?.['application/json']?.schema;
  if (!schema) return [];
  const variants: Json[] = schema.anyOf ?? [schema];
  return variants.flatMap((v) => v.properties?.error?.properties?.code?.enum ?? v.properties?.error?.enum ?? []);
}
