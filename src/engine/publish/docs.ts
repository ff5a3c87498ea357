import type { Express } from 'express';
import helmet from 'helmet';
import swaggerUi from 'swagger-ui-express';
import { precomputeHeaders } from '../pipeline/security-headers';
import { asMiddleware } from '../stage/stage';
import { stringify } from 'yaml';
import type { OpenApiDocument } from '../contract/document';
import { withTagTree } from './tag-tree';

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
 * The contract, as served to people and tools. For every major version,
 * `/openapi/vN.yaml` and `/openapi/vN.json` exactly as written (tools and
 * generated clients need the published servers); `/openapi.yaml` and
 * `/openapi.json` keep answering the first version (v1), where tools already
 * point. An interactive reference at `/docs` (Swagger UI, whose assets and
 * init script are served from here as files, so helmet's CSP stays on with
 * no inline script) with a version selector, each version aimed at this
 * instance (`/docs/vN.json`: the document with this server first, and a
 * 3.2 tag tree named by paths, `books › search`: tag-tree.ts; deprecated
 * schemes said so).
 *
 * @example mountDocs(app, [{ name: 'v1', basePath: '/v1', contract: v1 }, { name: 'v2', basePath: '/v2', contract: v2 }]);
 */
export function mountDocs(app: Express, apis: ReadonlyArray<{ name: string; basePath: string; contract: OpenApiDocument }>): void {
  apis.forEach(({ name, basePath, contract }, index) => {
    const yaml = stringify(contract);
    const json = JSON.stringify(contract, null, 2);
    const shown = JSON.stringify(withThisServerFirst(withDeprecatedSchemesSaid(withTagTree(contract)), basePath), null, 2);
    const paths = index === 0 ? [`/openapi/${name}`, '/openapi'] : [`/openapi/${name}`];
    app.get(
      paths.map((path) => `${path}.yaml`),
      (_req, res) => {
        res.type('application/yaml').send(yaml);
      },
    );
    app.get(
      paths.map((path) => `${path}.json`),
      (_req, res) => {
        res.type('application/json').send(json);
      },
    );
    app.get(`/docs/${name}.json`, (_req, res) => {
      res.type('application/json').send(shown);
    });
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
  app.use('/docs', docsContentSecurityPolicy, swaggerUi.serveFiles(undefined, options), swaggerUi.setup(undefined, options));
}
