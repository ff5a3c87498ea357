/**
 * The sunset enforced: a deprecated operation with `x-sunset` works until that
 * instant (its calls counted by plan), then answers 410 Gone with its Sunset
 * and successor Link headers, after authentication and the rate limits.
 */
import { startTestApp, type TestApp } from './support/test-app';
import { accessLineOf } from './support/memory-log';

const SUNSET = Date.parse('2030-12-05T00:00:00Z');

let t: TestApp;
let now: number;
beforeEach(async () => {
  now = SUNSET - 1;
  t = await startTestApp({ now: () => now });
});
afterEach(() => t.close());

async function deprecatedCalls(): Promise<Array<{ labels: Record<string, string | number>; value: number }>> {
  return (await t.metrics.deprecatedCalls.get()).values;
}

describe('getPet (deprecated, x-sunset 2030-12-05)', () => {
  it('works until the sunset instant, its calls counted by operation and plan', async () => {
    const pet = await t.api.post('/v1/pets').set('Authorization', t.auth).send({ name: 'Rex', categoryId: 1 }).expect(201);
    const res = await t.api.get(`/v1/pets/${pet.body.id}`).set('Authorization', t.auth).expect(200);
    expect(res.headers['sunset']).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
    await t.api
      .get(`/v1/pets/${pet.body.id}`)
      .set('Authorization', await t.issueKey('pro'))
      .expect(200);
    expect(await deprecatedCalls()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ labels: { operation: 'getPet', plan: 'free', version: 'v1' }, value: 1 }),
        expect.objectContaining({ labels: { operation: 'getPet', plan: 'pro', version: 'v1' }, value: 1 }),
      ]),
    );
  });

  it('from the sunset instant: 410 gone with the Sunset, successor Link and rate-limit headers, counted', async () => {
    const pet = await t.api.post('/v1/pets').set('Authorization', t.auth).send({ name: 'Rex', categoryId: 1 }).expect(201);
    now = SUNSET;
    const res = await t.api.get(`/v1/pets/${pet.body.id}`).set('Authorization', t.auth).expect(410);
    expect(res.body).toEqual({ code: 'gone', status: 410, message: 'getPet was retired on 2030-12-05: use listPets instead (see the Link header)' });
    expect(res.headers['sunset']).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
    expect(res.headers['link']).toBe('</v1/pets>; rel="successor-version"');
    expect(res.headers['deprecation']).toBe('@1795219200');
    expect(res.headers['x-ratelimit-remaining']).toBe('58'); // the create and this 410: both counted
    // Its access line says why, for this request id.
    const line = accessLineOf(t.logs(), res.headers['x-request-id']);
    expect(line).toMatchObject({ status: 410, reason: 'gone', detail: res.body.message });
    // Still after authentication: no key is a 401, not a 410.
    await t.api.get(`/v1/pets/${pet.body.id}`).expect(401);
    // The successor keeps working.
    await t.api.get('/v1/pets').set('Authorization', t.auth).expect(200);
    expect((await deprecatedCalls()).every((value) => value.value === 0)).toBe(true);
  });

  it('the answer comes from the clock, not the contract: back before the sunset it is served again', async () => {
    now = SUNSET + 86_400_000;
    await t.api.get('/v1/pets/1').set('Authorization', t.auth).expect(410);
    now = SUNSET - 86_400_000;
    await t.api.get('/v1/pets/1').set('Authorization', t.auth).expect(404);
  });
});
