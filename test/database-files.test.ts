import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { openStorage } from '../src/service/storage';
import { PROJECT_ROOT, tempDir } from './support/paths';
import { runKeysCli } from './support/processes';

/**
 * The SQLite files hold the cursor secret, the key hashes and stored responses: the folders the
 * backend makes are 0700 and the database files 0600, whatever the umask, on every path that
 * opens the database (they all go through openStorage).
 */

const mode = (file: string): string => (statSync(file).mode & 0o777).toString(8);
const DATABASE_FILES = ['pets.db', 'pets.db-wal', 'pets.db-shm'];

/** Opens the database, writes a pet (so the WAL exists) and gives each path's mode while it is open. */
async function openAndWrite(file: string, paths: string[]): Promise<string[]> {
  const storage = await openStorage(`sqlite:${file}`);
  try {
    await storage.pets.create({ name: 'Rex', categoryId: 1, status: 'available' });
    return paths.map(mode);
  } finally {
    await storage.close();
  }
}

describe('database files are their owner only', () => {
  it('a new database: the folders made for it 0700, the database, its -wal and -shm 0600', async () => {
    const root = tempDir();
    chmodSync(root, 0o755);
    const folder = path.join(root, 'new', 'sub');
    const paths = [path.join(root, 'new'), folder, ...DATABASE_FILES.map((name) => path.join(folder, name))];
    const modes = await openAndWrite(path.join(folder, 'pets.db'), paths);
    expect(modes).toEqual(['700', '700', '600', '600', '600']);
    expect(mode(root)).toBe('755'); // there before: left as it was
  });

  // 000 would let mkdir and open give everyone access; 477 takes from the owner what they ask for.
  it.each(['000', '477'])('under umask %s as well (a child process started with it)', (umask) => {
    const root = tempDir();
    const folder = path.join(root, 'new', 'sub');
    const paths = [path.join(root, 'new'), folder, ...DATABASE_FILES.map((name) => path.join(folder, name))];
    // The child's own code, as JavaScript: it loads the TypeScript sources through tsx.
    const script = `
      const { statSync } = require('node:fs');
      const { openStorage } = require(${JSON.stringify(path.join(PROJECT_ROOT, 'src/service/storage/open-storage.ts'))});
      (async () => {
        const storage = await openStorage(process.argv[1]);
        await storage.pets.create({ name: 'Rex', categoryId: 1, status: 'available' });
        const paths = JSON.parse(process.argv[2]);
        console.log(JSON.stringify(paths.map((name) => (statSync(name).mode & 0o777).toString(8))));
        await storage.close();
      })();`;
    const quote = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`;
    const loader = pathToFileURL(path.join(PROJECT_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
    const node = [process.execPath, '--import', loader, '-e', script, `sqlite:${path.join(folder, 'pets.db')}`, JSON.stringify(paths)];
    // tsx's cache is left alone: folders it made under this umask would be no use to later runs.
    const child = spawnSync('sh', ['-c', `umask ${umask} && umask && exec ${node.map(quote).join(' ')}`], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, TSX_DISABLE_CACHE: '1' },
      encoding: 'utf8',
    });
    expect({ status: child.status, stderr: child.stderr }).toEqual({ status: 0, stderr: '' });
    const [shellUmask, modes] = child.stdout.trim().split('\n');
    expect(shellUmask).toBe(`0${umask}`);
    expect(JSON.parse(modes!)).toEqual(['700', '700', '600', '600', '600']);
  });

  it('an existing database left 0644 (and its -wal and -shm) becomes 0600; the folder that was there keeps 0755', async () => {
    const folder = path.join(tempDir(), 'data');
    mkdirSync(folder);
    chmodSync(folder, 0o755);
    const file = path.join(folder, 'pets.db');
    // An older version's database, still open (its -wal and -shm are there), every file 0644.
    const older = new BetterSqlite3(file);
    try {
      older.pragma('journal_mode = WAL');
      older.exec('create table older (id integer primary key); insert into older default values');
      for (const name of DATABASE_FILES) chmodSync(path.join(folder, name), 0o644);
      const modes = await openAndWrite(file, [folder, ...DATABASE_FILES.map((name) => path.join(folder, name))]);
      expect(modes).toEqual(['755', '600', '600', '600']);
      expect(older.prepare('select count(*) as n from older').get()).toEqual({ n: 1 });
    } finally {
      older.close();
    }
  });

  it('the keys CLI on a new database leaves its folder 0700 and every file in it 0600', () => {
    const folder = path.join(tempDir(), 'd');
    const result = runKeysCli(['create', '--plan', 'free'], { DATABASE_URL: `sqlite:${path.join(folder, 'pets.db')}` });
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: expect.stringContaining('created key 1') });
    expect(mode(folder)).toBe('700');
    const files = readdirSync(folder);
    expect(files).toContain('pets.db');
    expect(Object.fromEntries(files.map((name) => [name, mode(path.join(folder, name))]))).toEqual(Object.fromEntries(files.map((name) => [name, '600'])));
  });
});
