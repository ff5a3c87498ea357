import { ExpiringBans } from '../src/service/rate-limit';

describe('ExpiringBans (the in-memory ban ends of one process, a worker or the cluster primary)', () => {
  it('keeps the later end when a key is banned twice, in either order', () => {
    const bans = new ExpiringBans();
    bans.remember(1, 5_000);
    bans.remember(1, 3_000);
    bans.remember(2, 3_000);
    bans.remember(2, 5_000);
    expect([bans.until(1, 0), bans.until(2, 0)]).toEqual([5_000, 5_000]);
  });

  it('answers nothing once a ban has ended, and forgets it', () => {
    const bans = new ExpiringBans();
    bans.remember(1, 5_000);
    expect(bans.until(1, 4_999)).toBe(5_000);
    expect(bans.until(1, 5_000)).toBeUndefined();
    expect(bans.live(0)).toEqual([]);
    expect(bans.until(7, 0)).toBeUndefined();
  });

  it('lists the bans still running, for a worker that starts later', () => {
    const bans = new ExpiringBans();
    bans.remember(1, 2_000);
    bans.remember(2, 9_000);
    expect(bans.live(5_000)).toEqual([[2, 9_000]]);
    expect(bans.live(1_000)).toEqual([[2, 9_000]]); // the ended one is gone for good
  });
});
