import type { Express } from 'express';
import swaggerUi from 'swagger-ui-express';
import { stringify } from 'yaml';
import type { OpenApiDocument } from '../spec/load-spec';

/**
 * The contract, as served to people and tools: `/openapi.yaml`,
 * `/openapi.json` and an interactive reference at `/docs` (Swagger UI, whose
 * assets are served from here so helmet's CSP stays on).
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
  app.use('/docs', swaggerUi.serveFiles(spec), swaggerUi.setup(spec, { customSiteTitle: `${spec.info.title} reference` }));
}
