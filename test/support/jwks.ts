import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, SignJWT, type JWTPayload } from 'jose';

/** An OAuth2 authorization server as far as a resource server sees it: a JWKS URL and tokens signed by its keys. */
export interface TestIssuer {
  /** Where the JWKS is served (`OAUTH2_JWKS_URL`). */
  readonly jwksUrl: string;
  /** Its authorization server metadata (RFC 8414: `issuer`, `jwks_uri`), as a 3.2 document's `oauth2MetadataUrl` names it. */
  readonly metadataUrl: string;
  /** The `issuer` its metadata states. */
  readonly issuer: string;
  /**
   * Signs an access token for `sub` with the given claims (`scope`, `scp`,
   * `aud`, `iss`, ...), issued now and valid for an hour unless `iat` / `exp`
   * say otherwise (`expires: false`: no `exp` at all); `typ` sets the header's type (`at+jwt`).
   */
  sign(claims: JWTPayload & { sub?: string }, options?: { alg?: 'RS256' | 'ES256'; kid?: string; expires?: boolean; typ?: string }): Promise<string>;
  /** Adds a signing key the JWKS publishes from now on (a rotation). */
  rotate(kid: string, alg: 'RS256' | 'ES256'): void;
  close(): Promise<void>;
}

/**
 * Starts a JWKS endpoint on a free local port with an RS256 key (`rs-1`) and
 * an ES256 key (`es-1`) made with node:crypto: no network, no fixed keys.
 *
 * @example
 * const issuer = await startTestIssuer();
 * const token = await issuer.sign({ sub: 'alice', scope: 'read:pets' });
 */
export async function startTestIssuer(): Promise<TestIssuer> {
  const keys = new Map<string, { alg: 'RS256' | 'ES256'; privateKey: KeyObject; publicKey: KeyObject }>();
  const add = (kid: string, alg: 'RS256' | 'ES256'): void => {
    const pair = alg === 'RS256' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
    keys.set(kid, { alg, ...pair });
  };
  let origin = '';
  add('rs-1', 'RS256');
  add('es-1', 'ES256');
  const server = http.createServer((req, res) => {
    if (req.url === '/.well-known/oauth-authorization-server') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ issuer: `${origin}/`, jwks_uri: `${origin}/.well-known/jwks.json`, token_endpoint: `${origin}/token` }));
      return;
    }
    void Promise.all([...keys].map(async ([kid, key]) => ({ ...(await exportJWK(key.publicKey)), kid, alg: key.alg, use: 'sig' }))).then((published) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: published }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  return {
    jwksUrl: `${origin}/.well-known/jwks.json`,
    metadataUrl: `${origin}/.well-known/oauth-authorization-server`,
    issuer: `${origin}/`,
    async sign(claims, { alg = 'RS256', kid = alg === 'RS256' ? 'rs-1' : 'es-1', expires = true, typ } = {}) {
      const key = keys.get(kid);
      if (!key) throw new Error(`no key ${kid}`);
      const jwt = new SignJWT(claims).setProtectedHeader({ alg, kid, ...(typ !== undefined && { typ }) });
      if (claims.iat === undefined) jwt.setIssuedAt();
      if (claims.exp === undefined && expires) jwt.setExpirationTime('1h');
      return jwt.sign(key.privateKey);
    },
    rotate: add,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
