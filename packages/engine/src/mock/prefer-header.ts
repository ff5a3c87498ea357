/** What a client asked the mock for (as Prism reads it): a declared status, a named example. */
export interface MockPreferences {
  code?: string;
  example?: string;
}

/**
 * Reads `Prefer: code=404, example=notFound` (RFC 7240 preferences, separated
 * by `,` or `;`, values optionally quoted). Other preferences are ignored, as
 * RFC 7240 asks of preferences a server does not support.
 *
 * @example parsePrefer('code=404, example="notFound"') // { code: '404', example: 'notFound' }
 */
export function parsePrefer(header: string | undefined): MockPreferences {
  const preferences: MockPreferences = {};
  for (const token of (header ?? '').split(/[,;]/)) {
    const match = /^\s*(code|example)\s*=\s*(?:"([^"]*)"|([^\s"]*))\s*$/i.exec(token);
    if (!match) continue;
    const name = match[1]!.toLowerCase() as keyof MockPreferences;
    preferences[name] = match[2] ?? match[3]!;
  }
  return preferences;
}
