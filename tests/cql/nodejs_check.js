// The Node.js driver (cassandra-driver from npm, unmodified) against a
// running cluster, from tests/cql/driver_test.py: from one contact point it
// must find every expected node, each at its own address, hold it up, and
// route a write and a read at ALL through each one (the Node.js driver
// found only one of three local nodes when they shared 127.0.0.1).
//
// usage: node nodejs_check.js --address HOST:PORT --expect HOST:PORT[,HOST:PORT...]
//        [--user ROLE --password PASSWORD]  (a port that asks for a login)
//        [--ca FILE]  (a port that speaks TLS, its certificate signed by that CA)
// NODE_PATH names the node_modules that holds cassandra-driver.
'use strict';

const cassandra = require('cassandra-driver');

function argument(name) {
  const at = process.argv.indexOf(name);
  if (at < 0 || at + 1 >= process.argv.length) throw new Error(`${name} is required`);
  return process.argv[at + 1];
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForHosts(client, expected, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const up = client.hosts.values().filter((host) => host.isUp()).map((host) => host.address);
    const missing = expected.filter((address) => !up.includes(address));
    if (missing.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`the driver does not hold ${missing.join(', ')} up; it knows ${client.hosts.keys().join(', ')}`);
    }
    await sleep(200);
  }
}

// A range DELETE of a DESC partition, then the partition: range
// tombstones, bound as a prepared statement's values.
async function checkRangeDeletes(client) {
  const stream = `nodejs-ranges-${Date.now()}`;
  const options = { prepare: true, consistency: cassandra.types.consistencies.quorum };
  for (let seq = 0; seq < 10; seq++) {
    await client.execute('INSERT INTO events (stream, seq) VALUES (?, ?)', [stream, seq], options);
  }
  const seqs = async () =>
    (await client.execute('SELECT seq FROM events WHERE stream = ?', [stream], options)).rows.map((row) => row.seq);
  await client.execute('DELETE FROM events WHERE stream = ? AND seq > ? AND seq <= ?', [stream, 2, 7], options);
  const left = await seqs();
  if (JSON.stringify(left) !== JSON.stringify([9, 8, 2, 1, 0])) throw new Error(`after a range delete: ${left}`);
  await client.execute('DELETE FROM events WHERE stream = ?', [stream], options);
  const none = await seqs();
  if (none.length !== 0) throw new Error(`after a partition delete: ${none}`);
}

// Sets, maps and lists as the driver's own types (arrays and objects):
// bound whole, added to, read back in order.
async function checkCollections(client) {
  const options = { prepare: true, consistency: cassandra.types.consistencies.quorum };
  await client.execute('CREATE TABLE IF NOT EXISTS nodeprofiles (id int PRIMARY KEY, tags set<text>, ' +
    'attrs map<text, int>, scores list<int>)');
  await client.execute('INSERT INTO nodeprofiles (id, tags, attrs, scores) VALUES (?, ?, ?, ?)',
    [1, ['b', 'a'], { x: 1 }, [3, 1]], options);
  await client.execute('UPDATE nodeprofiles SET tags = tags + ?, attrs[?] = ?, scores = ? + scores WHERE id = ?',
    [['c'], 'y', 2, [0], 1], options);
  const row = (await client.execute('SELECT tags, attrs, scores FROM nodeprofiles WHERE id = 1', [], options)).first();
  const got = JSON.stringify([row.tags, row.attrs, row.scores]);
  if (got !== JSON.stringify([['a', 'b', 'c'], { x: 1, y: 2 }, [0, 3, 1]])) throw new Error(`collections read back ${got}`);
}

async function main() {
  const [host, port] = argument('--address').split(':');
  const expected = argument('--expect').split(',');
  const client = new cassandra.Client({
    contactPoints: [host],
    protocolOptions: { port: Number(port) },
    localDataCenter: 'dc1',
    keyspace: 'app',
    socketOptions: { readTimeout: 20000 },
    authProvider: process.argv.includes('--user')
      ? new cassandra.auth.PlainTextAuthProvider(argument('--user'), argument('--password')) : undefined,
    // Node's TLS checks the certificate's names against the address.
    sslOptions: process.argv.includes('--ca')
      ? { ca: [require('fs').readFileSync(argument('--ca'))], rejectUnauthorized: true } : undefined,
  });
  await client.connect();
  try {
    await waitForHosts(client, expected, 30000);
    for (const address of expected) {
      const through = client.hosts.get(address);
      const id = `nodejs via ${address}`;
      const options = { prepare: true, host: through, consistency: cassandra.types.consistencies.all };
      await client.execute('INSERT INTO accounts (id, balance, owner) VALUES (?, ?, ?)',
        [id, cassandra.types.Long.fromNumber(7), address], options);
      const result = await client.execute('SELECT owner FROM accounts WHERE id = ?', [id], options);
      const coordinator = result.info.queriedHost;
      if (coordinator !== address) throw new Error(`asked ${address} to coordinate, ${coordinator} did`);
      const row = result.first();
      if (row === null || row.owner !== address) throw new Error(`read back through ${address}: ${JSON.stringify(row)}`);
    }
    // Where the schema of tests/cql/schema.cql is (its events table).
    const ranges = process.argv.includes('--range-deletes');
    if (ranges) await checkRangeDeletes(client);
    const collections = process.argv.includes('--collections');
    if (collections) await checkCollections(client);
    console.log(`nodejs: cassandra-driver ${require('cassandra-driver/package.json').version} found ` +
      `${expected.length} nodes and wrote and read at ALL through each${ranges ? '; range deletes hold' : ''}` +
      `${collections ? '; collections hold' : ''}`);
  } finally {
    await client.shutdown();
  }
}

main().catch((error) => {
  console.error(`nodejs_check: ${error.message}`);
  process.exit(1);
});
