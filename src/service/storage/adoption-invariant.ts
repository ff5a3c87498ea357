import { sql, type Kysely } from 'kysely';
import type { Database } from './schema';

/**
 * The adoption invariant, checked over the whole database: what must hold
 * after any interleaving of requests and any crash, since each move of an
 * order and its pet is one transaction. A pet is `pending` exactly when it
 * has one `placed` order, and `sold` when it has a `completed` order, unless
 * its status was set directly (at its creation, or by staff: `status_source`
 * is `direct`), which no order contradicts. Returns one line per violation;
 * none when it holds.
 *
 * @example expect(await adoptionViolations(db)).toEqual([]);
 */
export async function adoptionViolations(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<{ problem: string }>`
    select 'pet ' || p.id || ' is ' || p.status || ' but has placed order ' || o.id as problem
      from orders o join pets p on p.id = o.pet_id
      where o.status = 'placed' and p.status <> 'pending'
    union all
    select 'pet ' || p.id || ' is ' || p.status || ' but has completed order ' || o.id
      from orders o join pets p on p.id = o.pet_id
      where o.status = 'completed' and p.status <> 'sold'
    union all
    select 'pet ' || pet_id || ' has ' || count(*) || ' ' || status || ' orders'
      from orders where status in ('placed', 'completed')
      group by pet_id, status having count(*) > 1
    union all
    select 'pet ' || p.id || ' is pending by an order, but has no placed order'
      from pets p
      where p.status = 'pending' and p.status_source = 'order'
        and not exists (select 1 from orders o where o.pet_id = p.id and o.status = 'placed')
    union all
    select 'pet ' || p.id || ' is sold by an order, but has no completed order'
      from pets p
      where p.status = 'sold' and p.status_source = 'order'
        and not exists (select 1 from orders o where o.pet_id = p.id and o.status = 'completed')
    union all
    select 'order ' || o.id || ' is for pet ' || o.pet_id || ', which does not exist'
      from orders o where not exists (select 1 from pets p where p.id = o.pet_id)
  `.execute(db);
  return rows.map((row) => row.problem);
}
