/**
 * Paging past the first page (version 1.1): `Link: <…>; rel="next"` (RFC 8288)
 * with an opaque, signed cursor; walking every link returns every pet once.
 */
import { startTestApp, type TestApp } from './support/test-app';

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
});
afterEach(() => t.close());

const NEXT = /^<([^>]+)>; rel="next"$/;

async function createPets(count: number, status?: string): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await t.api
      .post('/v1/pets')
      .set('Authorization', t.auth)
      .send({ name: `pet ${i}`, categoryId: 1, ...(status && { status }) })
      .expect(201);
    ids.push(res.body.id);
  }
  return ids;
}

/** Follows every next link from `first`; the ids seen, page by page. */
async function walk(first: string, onPage: (index: number) => Promise<void> = async () => undefined): Promise<number[][]> {
  const pages: number[][] = [];
  for (let url: string | undefined = first; url !== undefined; ) {
    const res: { body: Array<{ id: number }>; headers: Record<string, string> } = await t.api.get(url).set('Authorization', t.auth).expect(200);
    pages.push(res.body.map((pet) => pet.id));
    await onPage(pages.length - 1);
    const link: string | undefined = res.headers['link'];
    url = link === undefined ? undefined : NEXT.exec(link)![1];
    if (pages.length > 100) throw new Error('too many pages');
  }
  return pages;
}

describe('listPets pages', () => {
  it('a first page with more results has a next link with the same limit; the last page has none', async () => {
    const ids = await createPets(5);
    const res = await t.api.get('/v1/pets?limit=2').set('Authorization', t.auth).expect(200);
    expect(res.body.map((pet: { id: number }) => pet.id)).toEqual(ids.slice(0, 2));
    const [, next] = NEXT.exec(res.headers['link']!)!;
    expect(next).toMatch(/^\/v1\/pets\?limit=2&cursor=[A-Za-z0-9_-]+$/);
    expect(await walk('/v1/pets?limit=2')).toEqual([ids.slice(0, 2), ids.slice(2, 4), ids.slice(4)]);
  });

  it('exactly `limit` results and no more: no link', async () => {
    await createPets(3);
    const res = await t.api.get('/v1/pets?limit=3').set('Authorization', t.auth).expect(200);
    expect(res.body).toHaveLength(3);
    expect(res.headers['link']).toBeUndefined();
  });

  it('keeps the status filter and the limit in the link', async () => {
    const sold = await createPets(3, 'sold');
    await createPets(2, 'available');
    const res = await t.api.get('/v1/pets?limit=2&status=sold').set('Authorization', t.auth).expect(200);
    expect(NEXT.exec(res.headers['link']!)![1]).toMatch(/^\/v1\/pets\?limit=2&status=sold&cursor=/);
    expect((await walk('/v1/pets?status=sold&limit=2')).flat()).toEqual(sold);
  });

  it('walking every link returns every pet exactly once, also while pets are being created', async () => {
    const before = await createPets(7);
    const during: number[] = [];
    const pages = await walk('/v1/pets?limit=3', async (index) => {
      if (index < 3) during.push(...(await createPets(2)));
    });
    const seen = pages.flat();
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...before, ...during]);
  });

  it('a cursor the server did not issue is a 400 Error object', async () => {
    await createPets(3);
    const res = await t.api.get('/v1/pets?limit=1').set('Authorization', t.auth).expect(200);
    const cursor = new URL(NEXT.exec(res.headers['link']!)![1]!, 'http://x').searchParams.get('cursor')!;
    const tampered = (cursor[0] === 'A' ? 'B' : 'A') + cursor.slice(1);
    // The tag's last character has 4 spare bits: a spelling that decodes to the same tag is still not the server's.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(cursor.at(-1)!);
    const respelled = cursor.slice(0, -1) + alphabet[last ^ 1];
    expect(Buffer.from(respelled.slice(-22), 'base64url')).toEqual(Buffer.from(cursor.slice(-22), 'base64url'));
    const forged = Buffer.from(JSON.stringify([1, 1, null])).toString('base64url') + 'A'.repeat(22);
    for (const bad of [tampered, respelled, forged, 'x', 'A'.repeat(40)]) {
      const refused = await t.api.get(`/v1/pets?limit=1&cursor=${bad}`).set('Authorization', t.auth).expect(400);
      expect(refused.body).toEqual({ code: 'invalid_request', status: 400, message: expect.stringContaining('query.cursor') });
    }
    // Issued for limit=1: not valid for another limit or status.
    await t.api.get(`/v1/pets?limit=2&cursor=${cursor}`).set('Authorization', t.auth).expect(400);
    await t.api.get(`/v1/pets?limit=1&status=sold&cursor=${cursor}`).set('Authorization', t.auth).expect(400);
    // The contract bounds it too (the validator's 400).
    await t.api
      .get(`/v1/pets?cursor=${'a'.repeat(257)}`)
      .set('Authorization', t.auth)
      .expect(400);
    await t.api.get('/v1/pets?cursor=a.b').set('Authorization', t.auth).expect(400);
  });

  it('a cursor keeps working after a restart and on another instance of the same database', async () => {
    await createPets(3);
    const res = await t.api.get('/v1/pets?limit=2').set('Authorization', t.auth).expect(200);
    const next = NEXT.exec(res.headers['link']!)![1]!;
    const other = await startTestApp({ databaseUrl: t.databaseUrl });
    try {
      const page = await other.api.get(next).set('Authorization', t.auth).expect(200);
      expect(page.body).toHaveLength(1);
    } finally {
      await other.close();
    }
  });
});
