type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The error codes /openapi.json lists for one operation and status (API envelope or OAuth error). */
export function documentedCodes(doc: Json, method: string, path: string, status: number): string[] {
  const schema = doc.paths?.[path]?.[method]?.responses?.[status]?.content?.['application/json']?.schema;
  if (!schema) return [];
  // One variant per error style, each the shared schema (a $ref) narrowed to these codes.
  const parts: Json[] = (schema.anyOf ?? [schema]).flatMap((v: Json) => v.allOf ?? [v]);
  return parts.flatMap((p) => p.properties?.error?.properties?.code?.enum ?? p.properties?.error?.enum ?? []);
}

/** The verification catalogue, for a plugin's test that checks the document lists each code. */
export { VERIFICATION_ERRORS } from '@gatehouse-auth/plugin-api';
