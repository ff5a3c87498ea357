// The probe of bench/hostile.ts, in a process of its own so that the attacks
// the bench sends never delay it: GET /v2/pets?limit=1 every INTERVAL ms over
// one keep-alive connection from PROBE_ADDRESS (queued behind each other, as
// one client's requests are), each given TIMEOUT ms. A line on stdin stops
// it; it then prints {latencies, timeouts, errors, slow} as JSON.
import http from 'node:http';

const [baseUrl, key, interval, timeout, address] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: address });
const latencies = [];
/** When (s from the start) each probe over 100 ms was sent, and what it took (ms): where in the attack the stalls fall. */
const slow = [];
const origin = performance.now();
let timeouts = 0;
let errors = 0;
const pending = new Set();

const probe = () => {
  const started = performance.now();
  const done = new Promise((resolve) => {
    // Each probe ends once: answered, timed out, or failed (a connection that closed without an answer included).
    let settled = false;
    const settle = (count) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      count();
      resolve();
    };
    const request = http.get(`${baseUrl}/v2/pets?limit=1`, { agent, headers: { authorization: `Bearer ${key}` } }, (response) => {
      response.resume();
      response.on('end', () =>
        settle(() => {
          const took = performance.now() - started;
          if (response.statusCode === 200) latencies.push(took);
          else errors++;
          if (took > 100) slow.push([Number(((started - origin) / 1000).toFixed(2)), Math.round(took)]);
        }),
      );
      response.on('error', () => settle(() => errors++));
    });
    // From when the probe is sent, queueing behind the one before included.
    const timer = setTimeout(() => {
      settle(() => timeouts++);
      request.destroy();
    }, Number(timeout));
    request.on('error', () => settle(() => errors++));
    request.on('close', () => settle(() => errors++));
  });
  pending.add(done);
  done.then(() => pending.delete(done));
};

const timer = setInterval(probe, Number(interval));
process.stdin.once('data', async () => {
  clearInterval(timer);
  await Promise.all(pending);
  agent.destroy();
  process.stdout.write(`${JSON.stringify({ latencies, timeouts, errors, slow })}\n`);
  process.exit(0);
});
