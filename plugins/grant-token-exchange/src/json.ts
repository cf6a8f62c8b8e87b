import type { JsonObject, JsonValue } from '@gatehouse-auth/core';

export const isJsonObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
