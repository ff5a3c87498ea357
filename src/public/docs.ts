import type { Express } from 'express';
import helmet from 'helmet';
import swaggerUi from 'swagger-ui-express';
import { precomputeHeaders } from '../pipeline/security-headers';
import { asMiddleware } from '../pipeline/stage';
import { stringify } from 'yaml';
import type { OpenApiDocument } from '../contract/load-spec';
import { basePathOf } from '../contract/base-path';

/** How the instance serving the page is named in the docs' server selector. */
export const THIS_SERVER_DESCRIPTION = 'this server';

/**
 * The copy of the contract shown by `/docs`: the same document with a relative
 * server (the base path, e.g. `/v1`) first, so the server selector defaults to
 * the instance that served the page and "Try it out" calls it (same origin,
 * so the CSP's `default-src 'self'` allows it and no CORS is involved),
 * whatever host or port the page was opened on. The YAML's servers follow.
 *
 * @example withThisServerFirst(loadSpec()).servers?.[0] // { url: '/v1', description: 'this server' }
 */
export function withThisServerFirst(spec: OpenApiDocument): OpenApiDocument {
  const thisServer = { url: basePathOf(spec) || '/', description: THIS_SERVER_DESCRIPTION };
  return { ...spec, servers: [thisServer, ...(spec.servers ?? [])] };
}

/**
 * helmet's default CSP without `upgrade-insecure-requests`: with it, a docs
 * page opened over plain HTTP on any host but localhost (a staging box, a
 * container's published port) has its browser fetch every asset and "Try it
 * out" call over HTTPS, and stays blank. Over HTTPS the page's URLs are all
 * same-origin, so the directive changes nothing there. Everything else stays.
 */
const docsContentSecurityPolicy = asMiddleware(
  precomputeHeaders(helmet.contentSecurityPolicy({ directives: { upgradeInsecureRequests: null } })),
);

/**
 * The contract, as served to people and tools: `/openapi.yaml` and
 * `/openapi.json` exactly as written (tools and generated clients need the
 * published servers), and an interactive reference at `/docs` (Swagger UI,
 * whose assets and init script are served from here as files, so helmet's
 * CSP stays on with no inline script) aimed at this instance.
 */
export function mountDocs(app: Express, spec: OpenApiDocument): void {
  const yaml = stringify(spec);
  const json = JSON.stringify(spec, null, 2);
  app.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').send(yaml);
  });
  app.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(json);
  });
  const docs = withThisServerFirst(spec);
  const options = {
    customSiteTitle: `${spec.info.title} reference`,
    // No badge image fetched from validator.swagger.io: the page talks to this server only.
    swaggerOptions: { validatorUrl: null },
  };
  app.use('/docs', docsContentSecurityPolicy, swaggerUi.serveFiles(docs, options), swaggerUi.setup(docs, options));
}
