/**
 * Everything the server reads from the environment, checked at start: a bad
 * value stops the start with its name, never a failure later.
 */
export interface Settings {
  /** PORT (3000). */
  readonly port: number;
  /** HOST (127.0.0.1: loopback until you say otherwise). */
  readonly host: string;
  /** KEYS_FILE (data/keys.jsonl): where `npm run keys` writes and the server reads API keys. */
  readonly keysFile: string;
  /**
   * MOCK=true (`npm run mock`): stubbed operations answer their documents' examples instead of 501.
   * MOCK=stateful, or `--stateful` on the command line (`npm run mock -- --stateful`): every operation is
   * answered by the mock, handlers or not, and what clients create is kept in memory until the server stops.
   */
  readonly mock: boolean | 'stateful';
  /** OAUTH2_JWKS_URL, OAUTH2_ISSUER, OAUTH2_AUDIENCE: how oauth2 and openIdConnect access tokens are verified. */
  readonly tokens: { jwksUrl?: string; issuer?: string; audience?: string };
}

/**
 * The settings of `env` and of the command line's `args`; throws naming the variable that is wrong.
 *
 * @example settingsOf({ PORT: '8080' }).port // 8080
 * @example settingsOf({ MOCK: 'true' }, ['--stateful']).mock // 'stateful'
 */
export function settingsOf(env: NodeJS.ProcessEnv, args: readonly string[] = []): Settings {
  const port = Number(env['PORT'] ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`PORT must be a port number (0 to 65535), not ${env['PORT']}`);
  // npm appends what follows `--` to the script's command: `npm run mock -- --stateful` ends in `server.js --stateful`.
  const mock = args.includes('--stateful') ? 'stateful' : (env['MOCK'] ?? 'false');
  if (mock !== 'true' && mock !== 'false' && mock !== 'stateful') throw new Error(`MOCK must be true, false or stateful, not ${mock}`);
  const { OAUTH2_JWKS_URL: jwksUrl, OAUTH2_ISSUER: issuer, OAUTH2_AUDIENCE: audience } = env;
  if (jwksUrl !== undefined && !/^https?:\/\//.test(jwksUrl)) throw new Error(`OAUTH2_JWKS_URL must be an http(s) URL of a JSON Web Key Set, not ${jwksUrl}`);
  if (jwksUrl !== undefined && (issuer === undefined || audience === undefined))
    throw new Error('OAUTH2_JWKS_URL verifies access tokens, so OAUTH2_ISSUER and OAUTH2_AUDIENCE must both be set (the iss and aud this API accepts)');
  return Object.freeze({
    port,
    host: env['HOST'] ?? '127.0.0.1',
    keysFile: env['KEYS_FILE'] ?? 'data/keys.jsonl',
    mock: mock === 'stateful' ? mock : mock === 'true',
    tokens: { ...(jwksUrl && { jwksUrl }), ...(issuer && { issuer }), ...(audience && { audience }) },
  });
}
