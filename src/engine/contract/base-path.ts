import type { OpenApiDocument } from './document';

/**
 * The path every operation is mounted under, read from the document's
 * `servers` (e.g. `/v1`). Server variables take their defaults. All servers
 * must agree, so production, staging and local development serve the same paths.
 *
 * @example basePathOf(loadSpec()) // '/v1'
 */
export function basePathOf(spec: OpenApiDocument): string {
  const servers = spec.servers ?? [];
  if (servers.length === 0) return '';
  const paths = new Set(
    servers.map((server) => {
      const url = server.url.replace(/\{([^}]+)\}/g, (_, name: string) => {
        const variable = server.variables?.[name];
        if (!variable) throw new Error(`server ${server.url}: variable {${name}} is not declared`);
        return variable.default;
      });
      return new URL(url, 'http://localhost').pathname.replace(/\/+$/, '');
    }),
  );
  if (paths.size !== 1) {
    throw new Error(`servers disagree on the base path: ${[...paths].join(', ')}`);
  }
  return [...paths][0]!;
}
