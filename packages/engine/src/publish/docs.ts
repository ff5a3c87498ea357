import type { Express, Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import swaggerUi from 'swagger-ui-express';
import { precomputeHeaders } from '../pipeline/security-headers';
import { asMiddleware } from '../stage/stage';
import { stringify } from 'yaml';
import type { OpenApiDocument } from '../contract/document';
import { withTagTree } from './tag-tree';

/** The strong ETag of a body: Express's own `etag` (a hash of the bytes and their length). */
const etag = require('etag') as (body: string) => string;

/** How the instance serving the page is named in the docs' server selector. */
export const THIS_SERVER_DESCRIPTION = 'this server';

/**
 * The copy of the contract shown by `/docs`: the same document with a relative
 * server (the base path, e.g. `/v1`) first, so the server selector defaults to
 * the instance that served the page and "Try it out" calls it (same origin,
 * so the CSP's `default-src 'self'` allows it and no CORS is involved),
 * whatever host or port the page was opened on. The YAML's servers follow.
 *
 * @example withThisServerFirst(contract, '/v1').servers?.[0] // { url: '/v1', description: 'this server' }
 */
export function withThisServerFirst(spec: OpenApiDocument, basePath: string): OpenApiDocument {
  const thisServer = { url: basePath || '/', description: THIS_SERVER_DESCRIPTION };
  return { ...spec, servers: [thisServer, ...(spec.servers ?? [])] };
}

/**
 * The copy of the contract shown by `/docs` says which security schemes are
 * `deprecated` (OpenAPI 3.2) in their description, where Swagger UI's
 * Authorize dialog shows it; the published document keeps them as written.
 *
 * @example withDeprecatedSchemesSaid(spec).components?.securitySchemes?.bearer // { ..., description: '**Deprecated.** ...' }
 */
export function withDeprecatedSchemesSaid(spec: OpenApiDocument): OpenApiDocument {
  const schemes = (spec.components?.['securitySchemes'] ?? {}) as Record<string, { deprecated?: unknown; description?: unknown }>;
  if (!Object.values(schemes).some((scheme) => scheme?.deprecated === true)) return spec;
  const said = Object.fromEntries(
    Object.entries(schemes).map(([name, scheme]) => [
      name,
      scheme?.deprecated === true
        ? { ...scheme, description: `**Deprecated.**${typeof scheme.description === 'string' ? ` ${scheme.description}` : ''}` }
        : scheme,
    ]),
  );
  return { ...spec, components: { ...spec.components, securitySchemes: said } };
}

/**
 * helmet's default CSP without `upgrade-insecure-requests`: with it, a docs
 * page opened over plain HTTP on any host but localhost (a staging box, a
 * container's published port) has its browser fetch every asset and "Try it
 * out" call over HTTPS, and stays blank. Over HTTPS the page's URLs are all
 * same-origin, so the directive changes nothing there. Everything else stays.
 */
const docsContentSecurityPolicy = asMiddleware(precomputeHeaders(helmet.contentSecurityPolicy({ directives: { upgradeInsecureRequests: null } })));

/**
 * A body fixed at start, answered with `Cache-Control: no-cache` (kept, but
 * revalidated on every use) and its ETag, computed here once: the app turns
 * Express's per-response ETags off for the API. `res.send` answers 304
 * without a body when `If-None-Match` matches (Express's `req.fresh`).
 */
function revalidated(type: string, body: string): RequestHandler {
  const headers = { 'Cache-Control': 'no-cache', ETag: etag(body) };
  return (_req, res) => {
    res.type(type).set(headers).send(body);
  };
}

/**
 * What one of swagger-ui-express's handlers sends for `url`. Its init script
 * depends only on the options and is exported only as a handler, so it is
 * rendered here once, to be served with its ETag.
 */
function sentBy(handler: RequestHandler, url: string): string {
  let sent: unknown;
  const res = {
    set: () => res,
    send: (body: unknown) => {
      sent = body;
    },
  };
  void handler({ url } as Request, res as unknown as Response, () => undefined);
  if (typeof sent !== 'string') throw new Error(`swagger-ui-express sent nothing for ${url}`);
  return sent;
}

/**
 * How Swagger UI's own files (its bundle, styles, icons) are served by
 * serve-static: a browser keeps them a week, then revalidates them by their
 * ETag. Not `immutable`: their names stay the same when swagger-ui-dist is
 * upgraded.
 */
const ASSET_CACHING = { maxAge: '7d' } as const;

/**
 * The contract, as served to people and tools. For every major version,
 * `/openapi/vN.yaml` and `/openapi/vN.json` exactly as written (tools and
 * generated clients need the published servers); `/openapi.yaml` and
 * `/openapi.json` keep answering the first version (v1), where tools already
 * point. An interactive reference at `/docs` (Swagger UI, whose assets and
 * init script are served from here as files, so helmet's CSP stays on with
 * no inline script) with a version selector, each version aimed at this
 * instance (`/docs/vN.json`: the document with this server first, and a
 * 3.2 tag tree named by paths, `books › search`: tag-tree.ts; deprecated
 * schemes said so). The documents, the page and its init script carry an
 * ETag and are revalidated on each use; Swagger UI's files are kept a week.
 * `guard` runs before every one of these routes (the service's rate limit).
 *
 * @example mountDocs(app, [{ name: 'v1', basePath: '/v1', contract: v1 }, { name: 'v2', basePath: '/v2', contract: v2 }], limit);
 */
export function mountDocs(
  app: Express,
  apis: ReadonlyArray<{ name: string; basePath: string; contract: OpenApiDocument }>,
  guard: RequestHandler = (_req, _res, next) => next(),
): void {
  apis.forEach(({ name, basePath, contract }, index) => {
    const yaml = stringify(contract);
    const json = JSON.stringify(contract, null, 2);
    const shown = JSON.stringify(withThisServerFirst(withDeprecatedSchemesSaid(withTagTree(contract)), basePath), null, 2);
    const paths = index === 0 ? [`/openapi/${name}`, '/openapi'] : [`/openapi/${name}`];
    app.get(
      paths.map((path) => `${path}.yaml`),
      guard,
      revalidated('application/yaml', yaml),
    );
    app.get(
      paths.map((path) => `${path}.json`),
      guard,
      revalidated('application/json', json),
    );
    app.get(`/docs/${name}.json`, guard, revalidated('application/json', shown));
  });
  const options = {
    customSiteTitle: `${apis[0]!.contract.info.title} reference`,
    explorer: true,
    swaggerOptions: {
      // The selector: one entry per version, the first one shown first.
      urls: apis.map(({ name, contract }) => ({ url: `/docs/${name}.json`, name: `${name} (${contract.info.version})` })),
      // No badge image fetched from validator.swagger.io: the page talks to this server only.
      validatorUrl: null,
    },
  };
  // The init script (for every method, as the library answers it), then Swagger UI's files (and the 404 for their package.json), then the page for any other path, as setup() serves it.
  const init = sentBy(swaggerUi.serveFiles(undefined, options)[0]!, '/swagger-ui-init.js');
  app.all('/docs/swagger-ui-init.js', guard, docsContentSecurityPolicy, revalidated('application/javascript', init));
  app.use(
    '/docs',
    guard,
    docsContentSecurityPolicy,
    swaggerUi.serveWithOptions({ ...ASSET_CACHING }), // a copy: the library writes `index: false` into it
    revalidated('text/html', swaggerUi.generateHTML(undefined, options)),
  );
}
