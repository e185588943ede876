#!/usr/bin/python3
"""Debian's Python driver for Cassandra (python3-cassandra), unmodified,
against a local 3-node cluster of ours, over CQL's native protocol.

Run by `./charybdis test` as:
  /usr/bin/python3 tests/cql/driver_test.py --ctl bazel-bin/node/charybdis-ctl --dir DIR \
      --gocql GOCQL_CHECK --nodejs NODE_MODULES
(GOCQL_CHECK: tests/cql/gocql_check.go built; NODE_MODULES: where npm
installed cassandra-driver, for tests/cql/nodejs_check.js; without either
flag, that driver's checks are left out).
It starts the cluster with tests/cql/schema.cql, runs every check (each
prints PASSED or FAILED with the reason), stops the cluster, and exits 1
if any check failed.
"""

import argparse
import concurrent.futures
import datetime
import os
import random
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import time
import traceback
import uuid

from cassandra import AlreadyExists, AuthenticationFailed, ConsistencyLevel, InvalidRequest, Unauthorized, Unavailable
from cassandra.auth import PlainTextAuthProvider
from cassandra.protocol import SyntaxException
from cassandra.cluster import Cluster, ExecutionProfile, EXEC_PROFILE_DEFAULT, NoHostAvailable
from cassandra.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy, WhiteListRoundRobinPolicy
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.metadata import Murmur3Token
from cassandra.query import BatchStatement, BatchType, SimpleStatement

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "schema.cql")


class LocalCluster:
    def __init__(self, ctl, directory):
        self.ctl, self.directory = ctl, directory

    def run(self, *args):
        env = dict(os.environ, CHARYBDIS_CLUSTER_DIR=self.directory)
        result = subprocess.run([self.ctl, "cluster", *args], env=env, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"ctl cluster {' '.join(args)}: {result.stdout}{result.stderr}")
        return result.stdout

    def up(self, nodes=3, auth=False, tls=False, schema=SCHEMA):
        out = self.run("up", "-n", str(nodes), "--smp", "2", "--rf", str(min(3, nodes)), "--cql-schema", schema,
                       *(["--auth"] if auth else []), *(["--tls"] if tls else []))
        # "node N: client A, cql HOST:PORT, ..."
        self.cql, self.client = {}, {}
        for line in out.splitlines():
            if line.startswith("node ") and ", cql " in line:
                node = int(line.split()[1].rstrip(":"))
                host, port = line.split(", cql ")[1].split(",")[0].rsplit(":", 1)
                self.cql[node] = (host, int(port))
                self.client[node] = line.split("client ")[1].split(",")[0]

    def add(self):
        # "node N: client A, cql HOST:PORT, log L; it joins", once it is normal.
        out = self.run("add", "--timeout", "120")
        for line in out.splitlines():
            if line.startswith("node ") and ", cql " in line:
                node = int(line.split()[1].rstrip(":"))
                host, port = line.split(", cql ")[1].split(",")[0].rsplit(":", 1)
                self.cql[node] = (host, int(port))
                return node
        raise RuntimeError(f"ctl cluster add named no node: {out}")


def connect(address):
    # QUORUM by default, so that a read sees the writes before it whichever
    # node coordinates each (the driver's default, LOCAL_ONE, does not).
    profile = ExecutionProfile(load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy()),
                               request_timeout=20, consistency_level=ConsistencyLevel.QUORUM)
    cluster = Cluster([address[0]], port=address[1], protocol_version=4,
                      execution_profiles={EXEC_PROFILE_DEFAULT: profile}, connect_timeout=10)
    return cluster, cluster.connect("app")


def refused(session, statement, kind):
    # The error `statement` is refused with, which must be of `kind`.
    try:
        session.execute(statement)
    except kind as error:
        return error
    raise AssertionError(f"{statement!r} was not refused")


def wait_for(what, predicate, timeout_s=30):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def check_schema(cluster, session):
    assert set(cluster.metadata.keyspaces["app"].tables) >= {"users", "events", "readings", "accounts"}
    events = cluster.metadata.keyspaces["app"].tables["events"]
    assert [c.name for c in events.partition_key] == ["stream"]
    assert [c.name for c in events.clustering_key] == ["seq"] and events.clustering_key[0].is_reversed
    assert cluster.control_connection.wait_for_schema_agreement(wait_time=10), "the nodes disagree on the schema"
    versions = {row.schema_version for row in session.execute("SELECT schema_version FROM system.peers")}
    versions.add(session.execute("SELECT schema_version FROM system.local WHERE key = 'local'").one().schema_version)
    assert len(versions) == 1, versions
    assert len(cluster.metadata.all_hosts()) == 3


def check_every_node_discovered(cluster, session, local):
    # ctl cluster up gives each node an address of its own on the standard
    # port, as ccm does: from one contact point the driver finds every node
    # through system.peers, each at its own address, and connects to it.
    # (Where ctl fell back to ports of their own on 127.0.0.1, ctl said so
    # and the nodes differ by port.)
    hosts = {(h.endpoint.address, h.endpoint.port) for h in cluster.metadata.all_hosts()}
    assert hosts == set(local.cql.values()), (hosts, local.cql)
    if len({address for address, port in local.cql.values()}) > 1:
        assert len({address for address, port in hosts}) == 3, hosts
        assert {port for address, port in hosts} == {9042}, hosts
    wait_for("a pool to every node", lambda: len(session.get_pool_state()) == 3, 10)


def check_schema_changes(cluster, session):
    # DDL through the driver: each change is a Paxos append to the schema
    # log; the driver waits until every node reports the same version.
    created = session.execute("CREATE KEYSPACE ddl WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}")
    assert created.response_future.is_schema_agreed, "no schema agreement after CREATE KEYSPACE"
    created = session.execute("CREATE TABLE ddl.items (id int PRIMARY KEY, name text)")
    assert created.response_future.is_schema_agreed, "no schema agreement after CREATE TABLE"
    assert "items" in cluster.metadata.keyspaces["ddl"].tables
    select = session.prepare("SELECT * FROM ddl.items WHERE id = ?")
    for n in range(20):  # token-aware: every node coordinates some
        session.execute("INSERT INTO ddl.items (id, name) VALUES (%s, %s)", (n, f"item{n}"))
    assert [tuple(r) for r in session.execute(select, (3,))] == [(3, "item3")]
    session.execute("ALTER TABLE ddl.items ADD price bigint")
    assert [c for c in cluster.metadata.keyspaces["ddl"].tables["items"].columns] == ["id", "name", "price"]
    session.execute("UPDATE ddl.items SET price = 7 WHERE id = 3")
    # The statement prepared before the ALTER is prepared again (Unprepared).
    assert [tuple(r) for r in session.execute(select, (3,))] == [(3, "item3", 7)]
    # ALTER TABLE ... WITH changes the options it names (docs/cql.md).
    altered = session.execute("ALTER TABLE ddl.items WITH gc_grace_seconds = 3600 AND tombstone_gc = {'mode': 'timeout'}")
    assert altered.response_future.is_schema_agreed, "no schema agreement after ALTER TABLE ... WITH"
    graces = [row.gc_grace_seconds for row in session.execute("SELECT * FROM system_schema.tables")
              if (row.keyspace_name, row.table_name) == ("ddl", "items")]
    assert graces == [3600], graces
    error = refused(session, "CREATE TABLE ddl.items (id int PRIMARY KEY)", AlreadyExists)
    assert (error.keyspace, error.table) == ("ddl", "items"), error
    session.execute("CREATE TABLE IF NOT EXISTS ddl.items (id int PRIMARY KEY)")
    session.execute("DROP TABLE ddl.items")
    refused(session, "SELECT * FROM ddl.items WHERE id = 3", InvalidRequest)  # a dropped table
    session.execute("CREATE TABLE ddl.items (id int PRIMARY KEY, name text)")
    assert session.execute("SELECT * FROM ddl.items WHERE id = 3").one() is None, "a table created again holds old rows"
    session.execute("DROP KEYSPACE ddl")
    assert "ddl" not in cluster.metadata.keyspaces
    assert cluster.control_connection.wait_for_schema_agreement(wait_time=10)


def check_schema_events(cluster, session, local):
    # A second driver, connected to node 2 before the changes and never
    # asked to refresh, learns each change from SCHEMA_CHANGE events.
    watcher = Cluster([local.cql[2][0]], port=local.cql[2][1], protocol_version=4, connect_timeout=10,
                      execution_profiles={EXEC_PROFILE_DEFAULT: ExecutionProfile(
                          load_balancing_policy=DCAwareRoundRobinPolicy())})
    try:
        watcher.connect()
        seen = watcher.metadata.keyspaces
        assert "watched" not in seen
        session.execute("CREATE KEYSPACE watched WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
        session.execute("CREATE TABLE watched.t (k int PRIMARY KEY, v text)")
        wait_for("the watcher to see the new table", lambda: "t" in getattr(
            watcher.metadata.keyspaces.get("watched"), "tables", {}), 20)
        session.execute("ALTER TABLE watched.t ADD w bigint")
        wait_for("the watcher to see the new column",
                 lambda: "w" in watcher.metadata.keyspaces["watched"].tables["t"].columns, 20)
        session.execute("DROP KEYSPACE watched")
        wait_for("the watcher to see the keyspace go", lambda: "watched" not in watcher.metadata.keyspaces, 20)
    finally:
        watcher.shutdown()


def check_levels(cluster, session):
    # Each level writes, and a level that overlaps it reads (R + W > RF).
    overlapping = {ConsistencyLevel.ONE: ConsistencyLevel.ALL, ConsistencyLevel.QUORUM: ConsistencyLevel.QUORUM,
                   ConsistencyLevel.ALL: ConsistencyLevel.ONE,
                   ConsistencyLevel.LOCAL_QUORUM: ConsistencyLevel.LOCAL_QUORUM}
    insert = session.prepare("INSERT INTO users (id, name, age) VALUES (?, ?, ?)")
    select = session.prepare("SELECT name, age FROM users WHERE id = ?")
    assert insert.routing_key_indexes == [0]
    for n, (write_level, read_level) in enumerate(overlapping.items()):
        insert.consistency_level, select.consistency_level = write_level, read_level
        session.execute(insert, (100 + n, f"user{n}", n))
        row = session.execute(select, (100 + n,)).one()
        assert (row.name, row.age) == (f"user{n}", n), row
        simple = SimpleStatement("UPDATE users SET email = %s WHERE id = %s", consistency_level=write_level)
        session.execute(simple, (f"u{n}@example.com", 100 + n))
        read = SimpleStatement("SELECT email FROM users WHERE id = %s", consistency_level=read_level)
        assert session.execute(read, (100 + n,)).one().email == f"u{n}@example.com"


def check_insert_if_not_exists_once(cluster, session):
    sessions = [cluster.connect("app") for _ in range(8)]
    key = f"once-{uuid.uuid4()}"

    def attempt(n):
        row = sessions[n].execute(
            SimpleStatement("INSERT INTO accounts (id, balance, owner) VALUES (%s, %s, %s) IF NOT EXISTS",
                            serial_consistency_level=ConsistencyLevel.SERIAL), (key, n, f"owner{n}")).one()
        return row[0], n

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(attempt, range(8)))
    winners = [n for applied, n in results if applied]
    assert len(winners) == 1, results
    row = session.execute("SELECT balance, owner FROM accounts WHERE id = %s", (key,)).one()
    assert (row.balance, row.owner) == (winners[0], f"owner{winners[0]}"), row
    for extra in sessions:
        extra.shutdown()


def check_failed_update_returns_row(cluster, session):
    session.execute("INSERT INTO accounts (id, balance, owner) VALUES ('acct-1', 10, 'ann')")
    row = session.execute("UPDATE accounts SET balance = 20 WHERE id = 'acct-1' IF balance = 11").one()
    assert row[0] is False and row.balance == 10 and row.owner == "ann", row
    row = session.execute("UPDATE accounts SET balance = 20 WHERE id = 'acct-1' IF balance >= 10 AND owner = 'ann'").one()
    assert row[0] is True, row
    assert session.execute("SELECT balance FROM accounts WHERE id = 'acct-1'").one().balance == 20


def check_conditional_batch(cluster, session):
    stream = f"batch-{uuid.uuid4()}"
    insert = session.prepare("INSERT INTO events (stream, seq, payload) VALUES (?, ?, ?) IF NOT EXISTS")
    batch = BatchStatement()
    batch.add(insert, (stream, 1, b"a"))
    batch.add(insert, (stream, 2, b"b"))
    assert session.execute(batch).one()[0] is True
    again = BatchStatement()
    again.add(insert, (stream, 2, b"c"))
    again.add(insert, (stream, 3, b"d"))
    assert session.execute(again).one()[0] is False
    rows = list(session.execute("SELECT seq, payload FROM events WHERE stream = %s", (stream,)))
    assert [(r.seq, r.payload) for r in rows] == [(2, b"b"), (1, b"a")], rows
    plain = BatchStatement()
    plain.add(SimpleStatement("INSERT INTO events (stream, seq) VALUES (%s, %s)"), (stream, 7))
    plain.add(SimpleStatement("DELETE FROM events WHERE stream = %s AND seq = %s"), (stream, 1))
    session.execute(plain)
    seqs = [r.seq for r in session.execute("SELECT seq FROM events WHERE stream = %s", (stream,))]
    assert seqs == [7, 2], seqs


def check_logged_batch(cluster, session):
    # A logged batch of prepared statements over two tables and several
    # partitions: stored in two nodes' batch logs, then written (docs/cql.md).
    key = uuid.uuid4().int % 1000000 + 20000
    batch = BatchStatement(batch_type=BatchType.LOGGED)
    add_user = session.prepare("INSERT INTO users (id, name) VALUES (?, ?)")
    add_account = session.prepare("INSERT INTO accounts (id, balance, owner) VALUES (?, ?, ?)")
    for n in range(4):
        batch.add(add_user, (key + n, f"user{n}"))
    batch.add(add_account, (f"acct-{key}", 100, "user0"))
    session.execute(batch)
    names = [session.execute("SELECT name FROM users WHERE id = %s", (key + n,)).one().name for n in range(4)]
    assert names == [f"user{n}" for n in range(4)], names
    assert session.execute("SELECT balance FROM accounts WHERE id = %s", (f"acct-{key}",)).one().balance == 100


def check_paging(cluster, session):
    stream = f"paging-{uuid.uuid4()}"
    insert = session.prepare("INSERT INTO events (stream, seq) VALUES (?, ?)")
    futures = []
    for seq in range(10000):
        futures.append(session.execute_async(insert, (stream, seq)))
        if len(futures) >= 256:
            for future in futures:
                future.result()
            futures = []
    for future in futures:
        future.result()
    statement = SimpleStatement("SELECT seq FROM events WHERE stream = %s", fetch_size=1000)
    result = session.execute(statement, (stream,))
    pages = 1
    seqs = [row.seq for row in result.current_rows]
    while result.has_more_pages:
        result.fetch_next_page()
        pages += 1
        seqs.extend(row.seq for row in result.current_rows)
    assert seqs == list(range(9999, -1, -1)), (len(seqs), seqs[:3])
    assert pages == 10, pages
    count = session.execute("SELECT COUNT(*) FROM events WHERE stream = %s", (stream,)).one()[0]
    assert count == 10000, count
    limited = [r.seq for r in session.execute("SELECT seq FROM events WHERE stream = %s AND seq < 50 LIMIT 3", (stream,))]
    assert limited == [49, 48, 47], limited


def check_full_scan(cluster, session):
    # SELECT without a partition key: the table in ring order, paged by the
    # driver, and split into token ranges as full-scan tools do.
    session.execute("CREATE TABLE scanned (id int PRIMARY KEY, v int)")
    insert = session.prepare("INSERT INTO scanned (id, v) VALUES (?, ?)")
    execute_concurrent_with_args(session, insert, [(n, n * 3) for n in range(1000)], concurrency=50)
    first_page = session.execute(SimpleStatement("SELECT id, v FROM scanned", fetch_size=100))
    assert first_page.has_more_pages and len(first_page.current_rows) == 100
    rows = list(first_page)  # the driver fetches the other pages
    assert sorted(r.id for r in rows) == list(range(1000)), len(rows)
    assert all(r.v == r.id * 3 for r in rows)
    tokens = [Murmur3Token.from_key(struct.pack(">i", r.id)).value for r in rows]
    assert tokens == sorted(tokens), "not in ring order"
    bounds = [-2**63] + [-2**63 + (2**64 // 8) * i for i in range(1, 8)] + [2**63 - 1]
    ranged = []
    for low, high in zip(bounds, bounds[1:]):
        op = ">=" if low == -2**63 else ">"
        ranged += [r.id for r in session.execute(
            f"SELECT id FROM scanned WHERE token(id) {op} %s AND token(id) <= %s", (low, high))]
    assert ranged == [r.id for r in rows], "token ranges do not add up to the scan"
    assert session.execute("SELECT COUNT(*) FROM scanned").one()[0] == 1000


def check_ttl(cluster, session):
    session.execute("INSERT INTO users (id, name) VALUES (7000, 'brief') USING TTL 2")
    session.execute("INSERT INTO users (id, name) VALUES (7001, 'stays')")
    assert session.execute("SELECT name FROM users WHERE id = 7000").one().name == "brief"
    when = session.execute("SELECT TTL(name), WRITETIME(name), TTL(age) FROM users WHERE id = 7000").one()
    assert when[0] in (1, 2) and when[2] is None, when
    assert abs(when[1] - time.time() * 1e6) < 60e6, when  # microseconds, the coordinator's clock
    session.execute("UPDATE users USING TIMESTAMP 1234 SET email = 'e' WHERE id = 7001")
    assert session.execute("SELECT WRITETIME(email) FROM users WHERE id = 7001").one()[0] == 1234
    wait_for("the TTL to expire", lambda: session.execute("SELECT name FROM users WHERE id = 7000").one() is None, 15)
    assert session.execute("SELECT name FROM users WHERE id = 7001").one().name == "stays"


def check_order_by(cluster, session):
    sensor, day = uuid.uuid4(), "2026-12-01"
    insert = session.prepare("INSERT INTO readings (sensor, day, at, value) VALUES (?, ?, ?, ?)")
    assert sorted(insert.routing_key_indexes) == [0, 1]
    for minute in [5, 1, 3]:
        session.execute(insert, (sensor, day, 1764547200000 + minute * 60000, float(minute)))
    select = "SELECT value FROM readings WHERE sensor = %s AND day = %s ORDER BY at {}"
    assert [r.value for r in session.execute(select.format("DESC"), (sensor, day))] == [5.0, 3.0, 1.0]
    assert [r.value for r in session.execute(select.format("ASC"), (sensor, day))] == [1.0, 3.0, 5.0]


def check_range_deletes(cluster, session):
    # Range tombstones through the driver: a slice of a DESC partition,
    # bound by markers, a clustering range of a composite partition, then a
    # whole partition; and Cassandra's refusals.
    stream = f"ranges-{uuid.uuid4()}"
    insert = session.prepare("INSERT INTO events (stream, seq) VALUES (?, ?)")
    execute_concurrent_with_args(session, insert, [(stream, seq) for seq in range(100)], concurrency=50)
    delete = session.prepare("DELETE FROM events WHERE stream = ? AND seq >= ? AND seq < ?")
    session.execute(delete, (stream, 10, 90))
    statement = SimpleStatement("SELECT seq FROM events WHERE stream = %s", fetch_size=7)
    seqs = [row.seq for row in session.execute(statement, (stream,))]
    assert seqs == list(range(99, 89, -1)) + list(range(9, -1, -1)), seqs
    session.execute("DELETE FROM events WHERE stream = %s AND seq > 95", (stream,))
    assert session.execute("SELECT COUNT(*) FROM events WHERE stream = %s", (stream,)).one()[0] == 16
    sensor, day = uuid.uuid4(), "2026-12-02"
    reading = session.prepare("INSERT INTO readings (sensor, day, at, value) VALUES (?, ?, ?, ?)")
    for minute in range(6):
        session.execute(reading, (sensor, day, 1764633600000 + minute * 60000, float(minute)))
    session.execute("DELETE FROM readings WHERE sensor = %s AND day = %s AND at <= %s",
                    (sensor, day, 1764633600000 + 2 * 60000))
    values = [r.value for r in session.execute("SELECT value FROM readings WHERE sensor = %s AND day = %s", (sensor, day))]
    assert values == [3.0, 4.0, 5.0], values
    session.execute("DELETE FROM events WHERE stream = %s", (stream,))
    assert list(session.execute("SELECT seq FROM events WHERE stream = %s", (stream,))) == []
    session.execute(insert, (stream, 42))
    assert [r.seq for r in session.execute("SELECT seq FROM events WHERE stream = %s", (stream,))] == [42]
    refused(session, "DELETE payload FROM events WHERE stream = 'x' AND seq > 1", InvalidRequest)
    refused(session, "DELETE FROM events WHERE stream = 'x' IF EXISTS", InvalidRequest)


def check_collections(cluster, session):
    # Sets, maps and lists, frozen and not, through the driver's own types:
    # literals, bound values, element operations, and the schema it reads.
    session.execute("CREATE TABLE profiles (id int PRIMARY KEY, tags set<text>, attrs map<text, int>,"
                    " scores list<int>, labels frozen<set<int>>, runs map<text, frozen<list<double>>>)")
    table = cluster.metadata.keyspaces["app"].tables["profiles"]
    assert table.columns["labels"].cql_type == "frozen<set<int>>", table.columns["labels"].cql_type
    assert table.columns["runs"].cql_type == "map<text, frozen<list<double>>>", table.columns["runs"].cql_type
    session.execute("INSERT INTO profiles (id, tags, attrs, scores, labels) VALUES (1, {'b', 'a'}, {'x': 1}, [3, 1], {2, 1})")
    insert = session.prepare("INSERT INTO profiles (id, tags, attrs, scores, runs) VALUES (?, ?, ?, ?, ?)")
    session.execute(insert, (2, {"p", "q"}, {"k": 7}, [9, 8], {"r": [1.5, 0.5]}))
    update = session.prepare("UPDATE profiles SET tags = tags + ?, attrs[?] = ?, scores = scores + ? WHERE id = ?")
    session.execute(update, ({"c"}, "y", 2, [5], 1))
    session.execute("UPDATE profiles SET scores = [0] + scores, tags = tags - {'a'}, attrs = attrs - {'x'} WHERE id = 1")
    row = session.execute("SELECT tags, attrs, scores, labels FROM profiles WHERE id = 1").one()
    assert sorted(row.tags) == ["b", "c"] and dict(row.attrs) == {"y": 2}, row
    assert list(row.scores) == [0, 3, 1, 5] and sorted(row.labels) == [1, 2], row
    row = session.execute("SELECT tags, attrs, scores, runs FROM profiles WHERE id = 2").one()
    assert sorted(row.tags) == ["p", "q"] and dict(row.attrs) == {"k": 7} and list(row.scores) == [9, 8], row
    assert {k: list(v) for k, v in row.runs.items()} == {"r": [1.5, 0.5]}, row
    # Additions from many concurrent requests all stay.
    add = session.prepare("UPDATE profiles SET tags = tags + ?, scores = scores + ? WHERE id = 3")
    execute_concurrent_with_args(session, add, [({f"t{i}"}, [i]) for i in range(100)], concurrency=50)
    row = session.execute("SELECT tags, scores FROM profiles WHERE id = 3").one()
    assert len(row.tags) == 100 and sorted(row.scores) == list(range(100)), row
    session.execute("DELETE attrs['y'] FROM profiles WHERE id = 1")
    session.execute("UPDATE profiles SET tags = {} WHERE id = 1")
    row = session.execute("SELECT tags, attrs FROM profiles WHERE id = 1").one()
    assert row.tags is None and row.attrs is None, row  # empty is null
    applied = session.execute("UPDATE profiles SET labels = {5} WHERE id = 1 IF labels = {1, 2}").one()
    assert applied[0], applied
    conditional = session.prepare("UPDATE profiles SET scores = scores + [1] WHERE id = 2 IF tags = ? AND attrs[?] = ?")
    assert session.execute(conditional, ({"q", "p"}, "k", 7)).one()[0]
    assert not session.execute(conditional, ({"p"}, "k", 7)).one()[0]
    assert list(session.execute("SELECT scores FROM profiles WHERE id = 2").one().scores) == [9, 8, 1]
    refused(session, "UPDATE profiles SET tags['a'] = 'b' WHERE id = 1", InvalidRequest)
    refused(session, "SELECT WRITETIME(tags) FROM profiles WHERE id = 1", InvalidRequest)


def check_aggregates(cluster, session):
    # Aggregates of a partition's rows and token() through the driver,
    # named as Cassandra names them (or by AS).
    stream = f"agg-{uuid.uuid4()}"
    insert = session.prepare("INSERT INTO events (stream, seq) VALUES (?, ?)")
    for seq in (5, -3, 12, 7):
        session.execute(insert, (stream, seq))
    row = session.execute("SELECT min(seq), max(seq) AS top, sum(seq), avg(seq), count(seq), token(stream) "
                          "FROM events WHERE stream = %s", (stream,)).one()
    assert row.system_min_seq == -3 and row.top == 12 and row.system_sum_seq == 21 and row.system_avg_seq == 5, row
    assert row.system_count_seq == 4, row
    token = session.execute("SELECT token(stream) FROM events WHERE stream = %s LIMIT 1", (stream,)).one()[0]
    assert token == row[5], (token, row)
    refused(session, "SELECT max(seq) FROM events", InvalidRequest)


def check_functions(cluster, session):
    # now(), uuid() and currentTimestamp() from the node's clock.
    session.execute("CREATE TABLE stamps (id int PRIMARY KEY, t timeuuid, u uuid, at timestamp)")
    session.execute("INSERT INTO stamps (id, t, u, at) VALUES (1, now(), uuid(), currentTimestamp())")
    row = session.execute("SELECT t, u, at FROM stamps WHERE id = 1").one()
    assert row.t.version == 1 and row.u.version == 4, row
    seconds = (row.t.time - 0x01B21DD213814000) / 1e7
    at = (row.at - datetime.datetime(1970, 1, 1)).total_seconds()  # the driver gives UTC, naive
    assert abs(seconds - time.time()) < 60 and abs(at - seconds) < 1, (row, seconds)


def check_compression(local):
    # Frame compression as the driver asks for it in STARTUP: LZ4 (its
    # first choice, so every other check's connections use it too when
    # python3-lz4 is installed) and Snappy, each with a value large enough
    # to compress, a prepared statement and a paged read.
    for algorithm in ("lz4", "snappy"):
        cluster = Cluster([local.cql[1][0]], port=local.cql[1][1], protocol_version=4, connect_timeout=10,
                          compression=algorithm)
        try:
            session = cluster.connect("app")
            assert cluster.control_connection._connection._compression_type == algorithm
            stream = f"{algorithm}-{uuid.uuid4()}"
            payload = (b"compressible " * 20000)[:200000]
            insert = session.prepare("INSERT INTO events (stream, seq, payload) VALUES (?, ?, ?)")
            for seq in range(30):
                session.execute(insert, (stream, seq, payload if seq == 0 else bytes([seq])), timeout=20)
            statement = SimpleStatement("SELECT seq, payload FROM events WHERE stream = %s", fetch_size=7,
                                        consistency_level=ConsistencyLevel.QUORUM)
            rows = list(session.execute(statement, (stream,), timeout=20))
            assert [row.seq for row in rows] == list(range(29, -1, -1)), [row.seq for row in rows]  # seq DESC
            assert rows[-1].payload == payload and rows[0].payload == bytes([29])
        finally:
            cluster.shutdown()


def check_errors(cluster, session):
    error = refused(session, "SELECT * FORM users", SyntaxException)
    assert "line 1:9" in str(error), error
    error = refused(session, "SELECT * FROM no_such_table WHERE id = 1", InvalidRequest)
    assert "no_such_table" in str(error), error
    refused(session, "INSERT INTO users (id, age) VALUES (1, 'not a number')", InvalidRequest)


def check_node_down(cluster, session, local, gocql_check):
    victim = 3
    # By address and port: nodes share the port on addresses of their own,
    # or share the address on ports of their own (ctl cluster up --ports).
    host = next(h for h in cluster.metadata.all_hosts() if (h.endpoint.address, h.endpoint.port) == local.cql[victim])
    session.execute("CREATE KEYSPACE single WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE single.t (k int PRIMARY KEY, v int)")
    create_gc_table(session)
    events = EventListener(local.cql[1])
    local.run("kill", str(victim))
    events.wait_for("DOWN", local.cql[victim], 15)
    wait_for("the driver to mark the killed node down", lambda: not host.is_up, 30)
    quorum = SimpleStatement("INSERT INTO users (id, name) VALUES (%s, 'q')", consistency_level=ConsistencyLevel.QUORUM)
    everyone = SimpleStatement("INSERT INTO users (id, name) VALUES (%s, 'all')", consistency_level=ConsistencyLevel.ALL)
    for key in range(8000, 8020):
        session.execute(quorum, (key,))
    caught = None

    def all_unavailable():
        nonlocal caught
        try:
            session.execute(everyone, (8100,))
        except Unavailable as error:
            caught = error
            return True
        return False

    wait_for("ALL to be Unavailable", all_unavailable, 15)
    assert (caught.required_replicas, caught.alive_replicas) == (3, 2), caught
    check_single_replica_keyspace(cluster, session, host)
    delete = SimpleStatement("DELETE FROM gc.t WHERE k = %s", consistency_level=ConsistencyLevel.QUORUM)
    for key in range(20):
        session.execute(delete, (key,))
    if gocql_check:
        check_gocql(local, gocql_check, "--one-node-down")
    local.run("start", str(victim))
    events.wait_for("UP", local.cql[victim], 15)
    events.close()
    wait_for("the driver to mark the restarted node up", lambda: host.is_up, 60)
    wait_for("ALL to work again", lambda: session.execute(everyone, (8101,)) is not None, 15)
    check_repair_and_gc(session, local)
    check_storage_shrinks(session, local)


def ctl(local, *args):
    env = dict(os.environ, CHARYBDIS_CLUSTER_DIR=local.directory)
    result = subprocess.run([local.ctl, *args], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"ctl {' '.join(args)}: {result.stdout}{result.stderr}"
    return result.stdout


def create_gc_table(session):
    # Deletions go once a repair begun after them covered them (no delay).
    session.execute("CREATE KEYSPACE gc WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
    session.execute("CREATE TABLE gc.t (k int PRIMARY KEY, v int) "
                    "WITH tombstone_gc = {'mode': 'repair', 'propagation_delay_in_seconds': 0}")
    insert = SimpleStatement("INSERT INTO gc.t (k, v) VALUES (%s, 1)", consistency_level=ConsistencyLevel.ALL)
    for key in range(30):
        session.execute(insert, (key,))


def check_repair_and_gc(session, local):
    # Node 3 was down while keys 0-19 of gc.t were deleted at QUORUM. A
    # compaction before any repair purges no deletion; node 1's repair
    # covers every range (RF 3 of 3), and the compactions after it purge
    # the tombstones with the rows they deleted, on every node. The keys
    # stay deleted at every level, and the others stay.
    ctl(local, "compact", "gc")
    repaired = ctl(local, "repair", "gc", "--node", "1")
    assert "ranges in agreement" in repaired, repaired
    compacted = ctl(local, "compact", "gc")
    purged = [int(line.split("deleted ")[1].split()[0]) for line in compacted.splitlines() if "deleted " in line]
    assert len(purged) == 3 and all(pairs >= 20 for pairs in purged), compacted
    for level in (ConsistencyLevel.ONE, ConsistencyLevel.ALL):
        read = SimpleStatement("SELECT k FROM gc.t WHERE k = %s", consistency_level=level)
        left = [key for key in range(30) if list(session.execute(read, (key,)))]
        assert left == list(range(20, 30)), (level, left)


def stored_bytes(local, node):
    # What node `node` keeps on disk for its shards: RocksDB's tables,
    # write-ahead logs and manifests, not its informational LOG files.
    total = 0
    for root, _, files in os.walk(os.path.join(local.directory, "node%d" % node, "data")):
        if os.path.basename(root).startswith("shard-"):
            total += sum(os.path.getsize(os.path.join(root, name)) for name in files if not name.startswith("LOG"))
    return total


def loads(local):
    # Each node's load as `ctl status` prints it ("UN  HOST:PORT  4.00 KiB ..."), in bytes.
    units = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    by_host = {host: node for node, (host, _) in local.cql.items()}
    found = {}
    for line in ctl(local, "status").splitlines():
        fields = line.split()
        if len(fields) > 3 and fields[0] in ("UN", "DN") and fields[1].rsplit(":", 1)[0] in by_host:
            found[by_host[fields[1].rsplit(":", 1)[0]]] = float(fields[2]) * units[fields[3]]
    assert set(found) == set(local.cql), found
    return found


def check_storage_shrinks(session, local):
    # 20000 rows written at ALL and deleted at ALL; node 1's repair, then a
    # compaction on every node (the purge, then RocksDB's full compaction)
    # leave each node's disk at most 5% of its peak.
    session.execute("CREATE TABLE gc.big (k int PRIMARY KEY, v text) "
                    "WITH tombstone_gc = {'mode': 'repair', 'propagation_delay_in_seconds': 0}")
    keys = [(key,) for key in range(20000)]
    insert = session.prepare("INSERT INTO gc.big (k, v) VALUES (?, '%s')" % ("x" * 100))
    insert.consistency_level = ConsistencyLevel.ALL
    delete = session.prepare("DELETE FROM gc.big WHERE k = ?")
    delete.consistency_level = ConsistencyLevel.ALL
    peak = {node: stored_bytes(local, node) for node in local.cql}
    for statement in (insert, delete):
        results = execute_concurrent_with_args(session, statement, keys, concurrency=64, raise_on_first_error=True)
        assert all(success for success, _ in results)
        peak = {node: max(peak[node], stored_bytes(local, node)) for node in local.cql}
    ctl(local, "repair", "gc", "big", "--node", "1")
    compacted = ctl(local, "compact", "gc", "big")
    after = {node: stored_bytes(local, node) for node in local.cql}
    print(f"  stored bytes at peak {peak}, after compaction {after}", flush=True)
    assert all(peak[node] >= 2000000 for node in local.cql), peak  # the rows did reach the disk
    assert all(after[node] <= 0.05 * peak[node] for node in local.cql), (peak, after, compacted)
    assert list(session.execute("SELECT k FROM gc.big LIMIT 1")) == []
    # The rows written again, then the table dropped: every node deletes
    # its keys and compacts on its own (docs/repair.md, "Dropped tables").
    # Measured by each node's load (RocksDB's live data and memtables; its
    # files keep a preallocated write-ahead log whatever they hold), above
    # what it was before: the other tables stay.
    before = loads(local)
    results = execute_concurrent_with_args(session, insert, keys, concurrency=64, raise_on_first_error=True)
    assert all(success for success, _ in results)
    written = {node: load - before[node] for node, load in loads(local).items()}
    assert all(written[node] >= 2000000 for node in local.cql), written
    session.execute("DROP TABLE gc.big")
    deadline = time.time() + 30
    while time.time() < deadline:
        dropped = {node: load - before[node] for node, load in loads(local).items()}
        if all(dropped[node] <= 0.05 * written[node] for node in local.cql):
            break
        time.sleep(0.5)
    print(f"  load above {before}: with the rows again {written}, after DROP TABLE {dropped}", flush=True)
    assert all(dropped[node] <= 0.05 * written[node] for node in local.cql), (written, dropped)


def check_nodejs(local, node_modules, expected, flags=()):
    # npm's Node.js driver, through tests/cql/nodejs_check.js: from node 1
    # it finds every `expected` node and writes and reads through each.
    env = dict(os.environ, NODE_PATH=node_modules)
    result = subprocess.run(["node", os.path.join(HERE, "nodejs_check.js"), "--address", "%s:%d" % local.cql[1],
                             "--expect", ",".join("%s:%d" % address for address in expected), *flags],
                            env=env, capture_output=True, text=True, timeout=120)
    print(result.stdout, end="", flush=True)
    assert result.returncode == 0, f"nodejs_check exited {result.returncode}: {result.stderr}"


def check_node_joins_and_leaves(ctl, directory, gocql_check, node_modules):
    # On a cluster of its own, of three: node 4 joins (ctl cluster add,
    # docs/topology.md). Drivers hear TOPOLOGY_CHANGE NEW_NODE, the Python
    # driver, gocql and the Node.js driver find it in system.peers and
    # route to it. Then it decommissions (ctl decommission): drivers hear
    # REMOVED_NODE, and system.peers no longer names it, so the driver
    # drops the host. A keyspace of four replicas is refused before node 4
    # joins and made after; while it stands, node 4 cannot leave.
    local = LocalCluster(ctl, directory)
    local.up(nodes=3)
    four = "CREATE KEYSPACE four WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 4}"
    try:
        cluster, session = connect(local.cql[1])
        try:
            session.execute(four)
            raise AssertionError("a keyspace of four replicas was made on three nodes")
        except Exception as error:  # ConfigurationException
            assert "more than its 3 nodes" in str(error), error
        events = EventListener(local.cql[1], "TOPOLOGY_CHANGE")
        assert local.add() == 4
        gone = local.cql[4]
        events.wait_for("NEW_NODE", gone, 15)

        def node_4():
            return next((h for h in cluster.metadata.all_hosts() if (h.endpoint.address, h.endpoint.port) == gone), None)

        def knows_node_4():
            return node_4() is not None

        wait_for("the driver to find node 4", lambda: knows_node_4() and node_4().is_up, 30)
        insert = SimpleStatement("INSERT INTO accounts (id, balance, owner) VALUES ('joined', 4, 'node 4')",
                                 consistency_level=ConsistencyLevel.ALL)
        session.execute(insert, host=node_4())
        select = SimpleStatement("SELECT owner FROM accounts WHERE id = 'joined'", consistency_level=ConsistencyLevel.ALL)
        row = session.execute(select, host=node_4()).one()
        assert row is not None and row.owner == "node 4", row
        if gocql_check:
            check_gocql(local, gocql_check, "--expect", ",".join("%s:%d" % local.cql[n] for n in range(1, 5)))
        if node_modules:
            check_nodejs(local, node_modules, [local.cql[n] for n in range(1, 5)])
        session.execute(four)
        env = dict(os.environ, CHARYBDIS_CLUSTER_DIR=directory)
        result = subprocess.run([ctl, "decommission", "4"], env=env, capture_output=True, text=True, timeout=180)
        assert result.returncode != 0 and "keyspace four" in result.stdout + result.stderr, result.stdout + result.stderr
        session.execute("DROP KEYSPACE four")
        result = subprocess.run([ctl, "decommission", "4"], env=env, capture_output=True, text=True, timeout=180)
        assert result.returncode == 0, result.stdout + result.stderr
        events.wait_for("REMOVED_NODE", gone, 15)
        events.close()
        wait_for("the driver to drop node 4", lambda: not knows_node_4(), 30)
        peers = [row.peer for row in session.execute(SimpleStatement("SELECT peer FROM system.peers"), host=next(
            h for h in cluster.metadata.all_hosts() if (h.endpoint.address, h.endpoint.port) == local.cql[1]))]
        assert len(peers) == 2, peers
        cluster.shutdown()
    finally:
        local.run("down")


def check_alter_keyspace(cluster, session, local):
    # ALTER KEYSPACE raises a replication by moving the data first: a
    # keyspace of one replica holds 50 rows, each on one node; raised to
    # three, the answer comes once the rows moved, the driver's metadata
    # shows the new factor, and each node alone reads every row at ONE (a
    # replica reads its own copy first). Lowered to one and moved to
    # NetworkTopologyStrategy at once (a change of class: a range may gain
    # an owner and lose others), every row still reads back at ONE.
    session.execute("CREATE KEYSPACE grow WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE grow.t (k int PRIMARY KEY, v text)")
    insert = SimpleStatement("INSERT INTO grow.t (k, v) VALUES (%s, %s)", consistency_level=ConsistencyLevel.ONE)
    for key in range(50):
        session.execute(insert, (key, f"v{key}"))
    raised = session.execute(
        "ALTER KEYSPACE grow WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}", timeout=120)
    assert raised.response_future.is_schema_agreed, "no schema agreement after ALTER KEYSPACE"
    assert cluster.metadata.keyspaces["grow"].replication_strategy.replication_factor == 3
    read = SimpleStatement("SELECT k, v FROM grow.t WHERE k = %s", consistency_level=ConsistencyLevel.ONE)
    for node, (address, port) in sorted(local.cql.items()):
        alone = Cluster([address], port=port, protocol_version=4, connect_timeout=10,
                        execution_profiles={EXEC_PROFILE_DEFAULT: ExecutionProfile(
                            load_balancing_policy=WhiteListRoundRobinPolicy([address]))})
        try:
            on_node = alone.connect()
            missing = [key for key in range(50) if on_node.execute(read, (key,)).one() != (key, f"v{key}")]
            assert not missing, f"node {node} lacks rows {missing}"
        finally:
            alone.shutdown()
    session.execute(
        "ALTER KEYSPACE grow WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 1}", timeout=120)
    strategy = cluster.metadata.keyspaces["grow"].replication_strategy
    assert strategy.dc_replication_factors == {"dc1": 1}, strategy.export_for_schema()
    missing = [key for key in range(50) if session.execute(read, (key,)).one() != (key, f"v{key}")]
    assert not missing, f"rows {missing} lost when lowered"
    session.execute("DROP KEYSPACE grow")


def check_single_replica_keyspace(cluster, session, down):
    # A keyspace of one replica, with node `down` down: a key at ALL works
    # where the driver's own SimpleStrategy places it on a live node, and
    # is Unavailable (1 required, 0 alive) where it places it on `down`.
    insert = SimpleStatement("INSERT INTO single.t (k, v) VALUES (%s, 1)", consistency_level=ConsistencyLevel.ALL)
    on_down = 0
    for key in range(30):
        replicas = cluster.metadata.get_replicas("single", struct.pack(">i", key))
        assert len(replicas) == 1, (key, replicas)
        if replicas[0] != down:
            session.execute(insert, (key,))
            continue
        on_down += 1
        try:
            session.execute(insert, (key,))
            raise AssertionError(f"key {key}, on the node that is down, was written at ALL")
        except Unavailable as error:
            assert (error.required_replicas, error.alive_replicas) == (1, 0), error
    assert 0 < on_down < 30, on_down


def check_protocol_fallback(cluster, session):
    # The driver starts at its newest version (DSE v2, then v5) and must
    # fall back to v4 on our answer.
    fresh = Cluster([cluster.contact_points[0]], port=cluster.port, connect_timeout=10,
                    execution_profiles={EXEC_PROFILE_DEFAULT: ExecutionProfile(
                        load_balancing_policy=DCAwareRoundRobinPolicy())})
    try:
        fresh.connect().execute("SELECT key FROM system.local")
        assert fresh.protocol_version == 4, fresh.protocol_version
    finally:
        fresh.shutdown()


def options_over(address, source_port=0):
    """SUPPORTED's options for a raw connection from `source_port`."""
    with socket.create_connection(address, timeout=5, source_address=("127.0.0.1", source_port)) as raw:
        raw.sendall(struct.pack(">BBhBi", 4, 0, 1, 0x05, 0))  # OPTIONS
        header = raw.recv(9, socket.MSG_WAITALL)
        length = struct.unpack(">i", header[5:9])[0]
        body = b""
        while len(body) < length:
            body += raw.recv(length - len(body))
    options, at = {}, 2

    def string():
        nonlocal at
        size = struct.unpack(">H", body[at:at + 2])[0]
        at += 2 + size
        return body[at - size:at].decode()

    for _ in range(struct.unpack(">H", body[:2])[0]):
        key = string()
        count = struct.unpack(">H", body[at:at + 2])[0]
        at += 2
        options[key] = [string() for _ in range(count)]
    return options


class EventListener:
    """A raw connection REGISTERed for STATUS_CHANGE (or `kind`), read frame by frame."""

    def __init__(self, address, kind="STATUS_CHANGE"):
        self.kind = kind
        self.raw = socket.create_connection(address, timeout=5)
        self.send(0x01, struct.pack(">H", 1) + self.string("CQL_VERSION") + self.string("3.0.0"))  # STARTUP
        assert self.frame()[0] == 0x02  # READY
        self.send(0x0B, struct.pack(">H", 1) + self.string(kind))  # REGISTER
        assert self.frame()[0] == 0x02

    @staticmethod
    def string(text):
        return struct.pack(">H", len(text)) + text.encode()

    def send(self, opcode, body):
        self.raw.sendall(struct.pack(">BBhBi", 4, 0, 1, opcode, len(body)) + body)

    def frame(self):
        header = self.raw.recv(9, socket.MSG_WAITALL)
        length = struct.unpack(">i", header[5:9])[0]
        return header[4], self.raw.recv(length, socket.MSG_WAITALL) if length else b""

    def wait_for(self, change, address, timeout_s):
        """Reads events until `change` ("UP", "DOWN", "NEW_NODE", "REMOVED_NODE") of the node at `address` (host, port)."""
        deadline = time.monotonic() + timeout_s
        seen = []
        while time.monotonic() < deadline:
            self.raw.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                opcode, body = self.frame()
            except socket.timeout:
                break
            if opcode != 0x0C:
                continue
            at, fields = 0, []
            for _ in range(2):
                size = struct.unpack(">H", body[at:at + 2])[0]
                fields.append(body[at + 2:at + 2 + size].decode())
                at += 2 + size
            address_size = body[at]
            event_host = socket.inet_ntoa(body[at + 1:at + 1 + address_size])
            event_port = struct.unpack(">i", body[at + 1 + address_size:at + 5 + address_size])[0]
            seen.append((fields[1], event_host, event_port))
            if fields == [self.kind, change] and (event_host, event_port) == tuple(address):
                return
        raise AssertionError(f"no {self.kind} {change} for {address} within {timeout_s} s; saw {seen}")

    def close(self):
        self.raw.close()


def tls_context(ca):
    # As an application would: the server's certificate must be signed by
    # the cluster's CA and name the address connected to.
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(ca)
    context.check_hostname = True
    return context


def closed_on(connection):
    # Whether the peer closes `connection` (after whatever it answers, a TLS
    # alert); a reset counts (a close with our bytes unread).
    try:
        while connection.recv(256):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def check_tls_refusals(host, port, ca):
    # A driver speaking in clear to a port that takes TLS only is closed on;
    # a client that trusts another CA refuses the node; a handshake of
    # garbage is closed on; and the node goes on serving the others.
    with socket.create_connection((host, port), timeout=10) as clear:
        clear.sendall(bytes([4, 0, 0, 1, 5, 0, 0, 0, 0]))  # OPTIONS, protocol 4
        assert closed_on(clear), "a clear OPTIONS was answered on a TLS-only port"
    with socket.create_connection((host, port), timeout=10) as garbage:
        garbage.sendall(b"\x16\x03\x01\x00\x08garbage!")
        assert closed_on(garbage), "a handshake of garbage was kept"
    other = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    other.load_default_certs()
    try:
        with socket.create_connection((host, port), timeout=10) as raw:
            other.wrap_socket(raw, server_hostname=host)
        raise AssertionError("a client trusting other CAs accepted the node's certificate")
    except ssl.SSLCertVerificationError:
        pass
    with socket.create_connection((host, port), timeout=10) as raw:
        with tls_context(ca).wrap_socket(raw, server_hostname=host) as good:
            good.sendall(bytes([4, 0, 0, 1, 5, 0, 0, 0, 0]))
            assert good.recv(1)[0] == 0x84, "no SUPPORTED through TLS"


def check_grpc_auth(local, ca):
    # The gRPC client API asks for the same credentials as CQL: ctl logs in
    # as a local cluster's superuser by itself (DIR/superuser.txt); no
    # credentials, a wrong password, a role without the permission and a
    # node-wide operation of a role that is no superuser are refused.
    def ctl(*args, directory=local.directory):
        result = subprocess.run([local.ctl, "--dir", directory, *args], capture_output=True, text=True, timeout=60)
        return result.returncode, result.stdout + result.stderr

    code, out = ctl("put", "kv", "grpc", "v=1")
    assert code == 0, out
    node = ["--address", local.client[1], "--ca", ca]
    nowhere = local.directory + "-none"
    code, out = ctl(*node, "get", "kv", "grpc", directory=nowhere)
    assert code == 1 and "asks for a role and password" in out, out
    secrets = local.directory + "-secrets"
    os.makedirs(secrets, exist_ok=True)
    for role, secret in [("admin", "wrong"), ("app_user", "app pw")]:
        with open(os.path.join(secrets, role), "w") as file:
            file.write(secret + "\n")
    code, out = ctl(*node, "--user", "admin", "--password-file", os.path.join(secrets, "admin"), "get", "kv", "grpc",
                    directory=nowhere)
    assert code == 1 and "Provided username admin and/or password are incorrect" in out, out
    app_user = [*node, "--user", "app_user", "--password-file", os.path.join(secrets, "app_user")]
    code, out = ctl(*app_user, "get", "kv", "grpc", directory=nowhere)
    assert code == 1 and "User app_user has no SELECT permission on <all keyspaces>" in out, out
    code, out = ctl(*app_user, "compact", directory=nowhere)
    assert code == 1 and "User app_user is no superuser" in out, out
    shutil.rmtree(secrets, ignore_errors=True)


def check_auth(ctl, directory, gocql_check, node_modules):
    # A two-node cluster whose CQL port asks for a password and speaks TLS
    # only, and whose nodes talk through mutual TLS (ctl cluster up --auth
    # --tls): the superuser admin, its random password in a file only its
    # owner reads; the CA in DIR/ca.pem (docs/security.md).
    local = LocalCluster(ctl, directory)
    os.makedirs(directory + "-schema", exist_ok=True)
    schema = os.path.join(directory + "-schema", "schema.cql")
    with open(schema, "w") as file:
        file.write("CREATE KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 1};\n"
                   "CREATE TABLE app.accounts (id text PRIMARY KEY, balance bigint, owner text);\n")
    local.up(nodes=2, auth=True, tls=True, schema=schema)
    try:
        ca = os.path.join(directory, "ca.pem")
        superuser_file = os.path.join(directory, "superuser.txt")
        assert os.stat(superuser_file).st_mode & 0o077 == 0, oct(os.stat(superuser_file).st_mode)
        with open(superuser_file) as file:
            name, password = file.read().split()
        assert name == "admin", name
        host, port = local.cql[1]

        def login(user, secret, tls=True):
            provider = None if user is None else PlainTextAuthProvider(username=user, password=secret)
            cluster = Cluster([host], port=port, protocol_version=4, connect_timeout=10, auth_provider=provider,
                              ssl_context=tls_context(ca) if tls else None)
            return cluster, cluster.connect("app")

        # Connected, and never a handshake: closed after 10 s, by the end.
        stalled = socket.create_connection((host, port), timeout=30)
        check_tls_refusals(host, port, ca)
        try:
            cluster, _ = login("admin", password, tls=False)
            cluster.shutdown()
            raise AssertionError("a driver logged in without TLS")
        except NoHostAvailable:
            pass

        for user, secret in [(None, None), ("admin", "wrong"), ("nobody", password)]:
            try:
                cluster, _ = login(user, secret)
                cluster.shutdown()
                raise AssertionError(f"{user} logged in with {secret!r}")
            except NoHostAvailable as error:
                reasons = list(error.errors.values())
                assert reasons and all(isinstance(r, AuthenticationFailed) for r in reasons), reasons
                if user is not None:
                    assert f"Provided username {user} and/or password are incorrect" in str(reasons[0]), reasons
        def grant(statement):
            cluster, session = login("admin", password)
            try:
                session.execute(statement)
            finally:
                cluster.shutdown()

        admin, session = login("admin", password)
        try:
            session.execute("INSERT INTO accounts (id, balance) VALUES ('auth', 1)")
            session.execute("CREATE ROLE app_user WITH PASSWORD = 'app pw' AND LOGIN = true")
            roles = {row.role for row in session.execute("LIST ROLES")}
            assert roles == {"admin", "app_user"}, roles
            for statement in ["SELECT * FROM system_auth.roles",
                              "UPDATE system_auth.roles SET is_superuser = true WHERE role = 'app_user'"]:
                refused(session, statement, Unauthorized)
        finally:
            admin.shutdown()
        user, session = login("app_user", "app pw")
        try:
            # Logged in, but granted nothing yet.
            error = refused(session, "SELECT balance FROM accounts WHERE id = 'auth'", Unauthorized)
            assert "has no SELECT permission on <table app.accounts>" in str(error), error
            grant("GRANT SELECT, MODIFY ON KEYSPACE app TO app_user")
            time.sleep(2.2)  # the connection trusts the permissions it read for 2 s
            assert session.execute("SELECT balance FROM accounts WHERE id = 'auth'").one().balance == 1
            error = refused(session, "CREATE ROLE other WITH PASSWORD = 'x' AND LOGIN = true", Unauthorized)
            assert "only superusers create roles" in str(error), error
        finally:
            user.shutdown()
        check_grpc_auth(local, ca)
        credentials = ["--user", "app_user", "--password", "app pw", "--ca", ca]
        expected = [local.cql[1], local.cql[2]]
        if gocql_check:
            check_gocql(local, gocql_check, "--expect", ",".join("%s:%d" % a for a in expected), *credentials)
        if node_modules:
            check_nodejs(local, node_modules, expected, credentials)
        assert closed_on(stalled), "a connection without a handshake was kept"
        stalled.close()
    finally:
        local.run("down")
        shutil.rmtree(directory + "-schema", ignore_errors=True)


def check_gocql(local, gocql_check, *flags):
    # Go's gocql (Debian's), through tests/cql/gocql_check.go, built by
    # ./charybdis test: its own keyspace, the core checks of this file.
    result = subprocess.run([gocql_check, "--address", "%s:%d" % local.cql[1], *flags], capture_output=True,
                            text=True, timeout=300)
    print(result.stdout, end="", flush=True)
    assert result.returncode == 0, f"gocql_check exited {result.returncode}: {result.stderr}"


def check_shard_aware_port(cluster, session, local):
    host, _ = local.cql[1]
    regular = options_over(local.cql[1])
    shards = int(regular["SCYLLA_NR_SHARDS"][0])
    aware_port = int(regular["SCYLLA_SHARD_AWARE_PORT"][0])
    assert shards == 2 and regular["SCYLLA_SHARDING_IGNORE_MSB"] == ["12"], regular
    seen = set()
    # Linux hands out bind(0) ports of one parity, so pick ports ourselves.
    for source_port in random.Random(7).sample(range(20000, 30000), 40):
        try:
            options = options_over((host, aware_port), source_port)
        except OSError:
            continue  # that port is taken
        assert int(options["SCYLLA_SHARD"][0]) == source_port % shards, (source_port, options["SCYLLA_SHARD"])
        seen.add(source_port % shards)
        if len(seen) == shards:
            return
    raise AssertionError(f"shards reached through the shard-aware port: {seen}")


CHECKS = [check_protocol_fallback, check_schema, check_schema_changes, check_levels, check_insert_if_not_exists_once, check_failed_update_returns_row,
          check_conditional_batch, check_logged_batch, check_paging, check_full_scan, check_ttl, check_order_by, check_range_deletes, check_collections, check_aggregates, check_functions,
          check_errors]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ctl", required=True, help="the charybdis-ctl binary")
    parser.add_argument("--dir", required=True, help="where the local cluster lives (must not hold one)")
    parser.add_argument("--gocql", help="tests/cql/gocql_check.go, built: also run Go's gocql checks")
    parser.add_argument("--nodejs", help="a node_modules holding cassandra-driver: also run the Node.js driver's")
    args = parser.parse_args()
    local = LocalCluster(os.path.abspath(args.ctl), args.dir)
    failed = 0
    try:
        local.up()
        cluster, session = connect(local.cql[1])
        checks = [(check.__name__, lambda check=check: check(cluster, session)) for check in CHECKS]
        checks.append(("check_every_node_discovered", lambda: check_every_node_discovered(cluster, session, local)))
        checks.append(("check_schema_events", lambda: check_schema_events(cluster, session, local)))
        checks.append(("check_alter_keyspace", lambda: check_alter_keyspace(cluster, session, local)))
        checks.append(("check_compression", lambda: check_compression(local)))
        gocql_check = os.path.abspath(args.gocql) if args.gocql else None
        if gocql_check:
            checks.append(("check_gocql", lambda: check_gocql(local, gocql_check)))
        node_modules = os.path.abspath(args.nodejs) if args.nodejs else None
        if node_modules:
            checks.append(("check_nodejs", lambda: check_nodejs(local, node_modules, list(local.cql.values()),
                                                                 ["--range-deletes", "--collections"])))
        checks.append(("check_shard_aware_port", lambda: check_shard_aware_port(cluster, session, local)))
        checks.append(("check_node_down", lambda: check_node_down(cluster, session, local, gocql_check)))
        checks.append(("check_auth", lambda: check_auth(local.ctl, local.directory + "-auth", gocql_check,
                                                        node_modules)))
        checks.append(("check_node_joins_and_leaves",
                       lambda: check_node_joins_and_leaves(local.ctl, local.directory + "-membership", gocql_check,
                                                           node_modules)))
        for name, run in checks:
            started = time.monotonic()
            try:
                run()
                print(f"PASSED cql {name} ({time.monotonic() - started:.1f} s)", flush=True)
            except Exception:
                failed += 1
                print(f"FAILED cql {name}:\n{traceback.format_exc()}", flush=True)
        cluster.shutdown()
    finally:
        local.run("down")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
