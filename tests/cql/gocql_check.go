// Go's gocql driver from Debian (golang-github-gocql-gocql-dev), unmodified,
// against a running cluster of ours: the core checks of driver_test.py.
// tests/cql/driver_test.py builds nothing; `./charybdis test` builds this
// program offline (GOPATH mode, Debian's sources) and the Python test runs
// it with --address HOST:PORT while its cluster is up, and again with
// --one-node-down once it has killed a node. Each check prints
// "ok NAME" or "FAILED NAME: why"; the exit status is 1 if any failed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gocql/gocql"
	"github.com/gocql/gocql/lz4"
)

// The codes of section 9 that gocql leaves as a plain RequestError.
const (
	codeSyntax  = 0x2000
	codeInvalid = 0x2200
)

// Set by --user and --password: the node's CQL port asks for them.
var credentials *gocql.PasswordAuthenticator

// Set by --ca: the node's CQL port speaks TLS, its certificate signed by
// this CA and naming the node's address.
var tlsOptions *gocql.SslOptions

func connect(address string) (*gocql.Session, error) {
	return connectWith(address, gocql.TokenAwareHostPolicy(gocql.DCAwareRoundRobinPolicy("dc1")))
}

func connectWith(address string, policy gocql.HostSelectionPolicy) (*gocql.Session, error) {
	return connectCompressed(address, policy, nil)
}

func connectCompressed(address string, policy gocql.HostSelectionPolicy, compressor gocql.Compressor) (*gocql.Session, error) {
	host, port, err := splitAddress(address)
	if err != nil {
		return nil, err
	}
	cluster := gocql.NewCluster(host)
	cluster.Port = port
	cluster.ProtoVersion = 4
	cluster.Consistency = gocql.Quorum
	cluster.Timeout = 20 * time.Second
	cluster.ConnectTimeout = 10 * time.Second
	cluster.PoolConfig.HostSelectionPolicy = policy
	if credentials != nil {
		cluster.Authenticator = *credentials
	}
	cluster.SslOpts = tlsOptions
	cluster.Compressor = compressor
	return cluster.CreateSession()
}

func splitAddress(address string) (string, int, error) {
	for i := len(address) - 1; i >= 0; i-- {
		if address[i] == ':' {
			port, err := strconv.Atoi(address[i+1:])
			return address[:i], port, err
		}
	}
	return "", 0, fmt.Errorf("%q is not HOST:PORT", address)
}

func checkSchema(s *gocql.Session) error {
	statements := []string{
		"CREATE KEYSPACE gocheck WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}",
		"CREATE TABLE gocheck.kv (k int PRIMARY KEY, v text)",
		"CREATE TABLE gocheck.rows (p text, c int, v int, PRIMARY KEY (p, c))",
	}
	for _, statement := range statements {
		if err := s.Query(statement).Exec(); err != nil {
			return fmt.Errorf("%s: %w", statement, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return s.AwaitSchemaAgreement(ctx)
}

// Each level writes, and a level that overlaps it (R + W > RF) reads, once
// as a simple statement and once prepared.
func checkLevels(s *gocql.Session) error {
	overlapping := map[gocql.Consistency]gocql.Consistency{
		gocql.One: gocql.All, gocql.Quorum: gocql.Quorum, gocql.All: gocql.One, gocql.LocalQuorum: gocql.LocalQuorum,
	}
	levels := []gocql.Consistency{gocql.One, gocql.Quorum, gocql.All, gocql.LocalQuorum}
	for i, write := range levels {
		simple := fmt.Sprintf("INSERT INTO gocheck.kv (k, v) VALUES (%d, 'simple %s')", i, write)
		if err := s.Query(simple).Consistency(write).Exec(); err != nil {
			return fmt.Errorf("simple write at %s: %w", write, err)
		}
		if err := expectValue(s, i, "simple "+write.String(), overlapping[write]); err != nil {
			return err
		}
		prepared := "prepared " + write.String()
		if err := s.Query("INSERT INTO gocheck.kv (k, v) VALUES (?, ?)", i, prepared).Consistency(write).Exec(); err != nil {
			return fmt.Errorf("prepared write at %s: %w", write, err)
		}
		if err := expectValue(s, i, prepared, overlapping[write]); err != nil {
			return err
		}
	}
	return nil
}

func expectValue(s *gocql.Session, k int, want string, level gocql.Consistency) error {
	var got string
	if err := s.Query("SELECT v FROM gocheck.kv WHERE k = ?", k).Consistency(level).Scan(&got); err != nil {
		return fmt.Errorf("read of %d at %s: %w", k, level, err)
	}
	if got != want {
		return fmt.Errorf("read of %d at %s: %q, want %q", k, level, got, want)
	}
	return nil
}

func checkInsertIfNotExistsOnce(s *gocql.Session) error {
	const sessions = 8
	var wg sync.WaitGroup
	applied := make([]bool, sessions)
	errs := make([]error, sessions)
	for n := 0; n < sessions; n++ {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			previous := map[string]interface{}{}
			applied[n], errs[n] = s.Query("INSERT INTO gocheck.kv (k, v) VALUES (100, ?) IF NOT EXISTS",
				fmt.Sprintf("writer %d", n)).SerialConsistency(gocql.Serial).MapScanCAS(previous)
		}(n)
	}
	wg.Wait()
	winners := 0
	for n := 0; n < sessions; n++ {
		if errs[n] != nil {
			return fmt.Errorf("writer %d: %w", n, errs[n])
		}
		if applied[n] {
			winners++
		}
	}
	if winners != 1 {
		return fmt.Errorf("%d of %d writers applied IF NOT EXISTS", winners, sessions)
	}
	return nil
}

func checkFailedUpdateReturnsRow(s *gocql.Session) error {
	if err := s.Query("INSERT INTO gocheck.kv (k, v) VALUES (200, 'current')").Exec(); err != nil {
		return err
	}
	current := map[string]interface{}{}
	applied, err := s.Query("UPDATE gocheck.kv SET v = 'new' WHERE k = 200 IF v = 'other'").MapScanCAS(current)
	if err != nil {
		return err
	}
	if applied || current["v"] != "current" {
		return fmt.Errorf("applied=%v, row %v; want not applied and v = 'current'", applied, current)
	}
	return nil
}

func checkConditionalBatch(s *gocql.Session) error {
	for attempt, want := range []bool{true, false} {
		batch := s.NewBatch(gocql.LoggedBatch)
		batch.Query("INSERT INTO gocheck.rows (p, c, v) VALUES ('batch', 1, ?) IF NOT EXISTS", attempt)
		batch.Query("INSERT INTO gocheck.rows (p, c, v) VALUES ('batch', 2, ?) IF NOT EXISTS", attempt)
		applied, iter, err := s.MapExecuteBatchCAS(batch, map[string]interface{}{})
		if err != nil {
			return fmt.Errorf("attempt %d: %w", attempt, err)
		}
		iter.Close()
		if applied != want {
			return fmt.Errorf("attempt %d: applied=%v, want %v", attempt, applied, want)
		}
	}
	return nil
}

// Pages through one partition of `rows` rows, ascending, then reads it
// descending.
func checkPagingAndOrder(s *gocql.Session) error {
	const rows = 2500
	for c := 0; c < rows; c += 100 {
		batch := s.NewBatch(gocql.UnloggedBatch)
		for i := c; i < c+100; i++ {
			batch.Query("INSERT INTO gocheck.rows (p, c, v) VALUES ('paged', ?, ?)", i, i*2)
		}
		if err := s.ExecuteBatch(batch); err != nil {
			return err
		}
	}
	var seen []int
	iter := s.Query("SELECT c, v FROM gocheck.rows WHERE p = 'paged'").PageSize(300).Iter()
	var c, v int
	for iter.Scan(&c, &v) {
		if v != 2*c {
			return fmt.Errorf("row %d holds %d", c, v)
		}
		seen = append(seen, c)
	}
	if err := iter.Close(); err != nil {
		return err
	}
	if len(seen) != rows || !sort.IntsAreSorted(seen) || seen[0] != 0 {
		return fmt.Errorf("paging read %d rows (want %d, ascending from 0)", len(seen), rows)
	}
	if err := s.Query("SELECT c FROM gocheck.rows WHERE p = 'paged' ORDER BY c DESC LIMIT 1").Scan(&c); err != nil {
		return err
	}
	if c != rows-1 {
		return fmt.Errorf("ORDER BY c DESC starts at %d, want %d", c, rows-1)
	}
	return nil
}

// Frame compression, as gocql asks for it in STARTUP: a session with each
// of its compressors writes rows, one large enough to compress, and pages
// through them.
func checkCompression(s *gocql.Session) error {
	for name, compressor := range map[string]gocql.Compressor{"snappy": gocql.SnappyCompressor{}, "lz4": lz4.LZ4Compressor{}} {
		compressed, err := connectCompressed(*addressFlag, gocql.TokenAwareHostPolicy(gocql.DCAwareRoundRobinPolicy("dc1")), compressor)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		err = writeAndPage(compressed, name)
		compressed.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func writeAndPage(s *gocql.Session, partition string) error {
	for c := 0; c < 30; c++ {
		if err := s.Query("INSERT INTO gocheck.rows (p, c, v) VALUES (?, ?, ?)", partition, c, c*c).Exec(); err != nil {
			return err
		}
	}
	big := strings.Repeat("compressible ", 20000)
	if err := s.Query("INSERT INTO gocheck.kv (k, v) VALUES (?, ?)", len(partition), big).Exec(); err != nil {
		return err
	}
	var read string
	if err := s.Query("SELECT v FROM gocheck.kv WHERE k = ?", len(partition)).Scan(&read); err != nil {
		return err
	}
	if read != big {
		return fmt.Errorf("a value of %d bytes came back as %d", len(big), len(read))
	}
	iter := s.Query("SELECT c, v FROM gocheck.rows WHERE p = ?", partition).PageSize(7).Iter()
	var c, v, next int
	for iter.Scan(&c, &v) {
		if c != next || v != c*c {
			return fmt.Errorf("row %d (v %d) where row %d was due", c, v, next)
		}
		next++
	}
	if err := iter.Close(); err != nil {
		return err
	}
	if next != 30 {
		return fmt.Errorf("%d rows of 30 paged through", next)
	}
	return nil
}

// Deletes a range of the partition checkPagingAndOrder wrote, then the
// whole partition: range tombstones, bound by gocql's markers.
func checkRangeDeletes(s *gocql.Session) error {
	if err := s.Query("DELETE FROM gocheck.rows WHERE p = 'paged' AND c >= ? AND c < ?", 100, 2400).Exec(); err != nil {
		return err
	}
	var count int
	if err := s.Query("SELECT COUNT(*) FROM gocheck.rows WHERE p = 'paged'").Scan(&count); err != nil {
		return err
	}
	if count != 200 {
		return fmt.Errorf("%d rows after deleting c in [100, 2400), want 200", count)
	}
	var first, last int
	if err := s.Query("SELECT c FROM gocheck.rows WHERE p = 'paged' AND c > 50 LIMIT 2").Scan(&first); err != nil {
		return err
	}
	if err := s.Query("SELECT c FROM gocheck.rows WHERE p = 'paged' AND c > 99 LIMIT 1").Scan(&last); err != nil {
		return err
	}
	if first != 51 || last != 2400 {
		return fmt.Errorf("rows around the deleted range start at %d and %d, want 51 and 2400", first, last)
	}
	if err := s.Query("DELETE FROM gocheck.rows WHERE p = ?", "paged").Exec(); err != nil {
		return err
	}
	if err := s.Query("SELECT COUNT(*) FROM gocheck.rows WHERE p = 'paged'").Scan(&count); err != nil {
		return err
	}
	if count != 0 {
		return fmt.Errorf("%d rows after deleting the partition", count)
	}
	return nil
}

// Sets, maps and lists as gocql's own types: bound whole, added to, read back.
func checkCollections(s *gocql.Session) error {
	if err := s.Query("CREATE TABLE IF NOT EXISTS gocheck.profiles (id int PRIMARY KEY, tags set<text>, attrs map<text, int>, scores list<int>)").Exec(); err != nil {
		return err
	}
	if err := s.Query("INSERT INTO gocheck.profiles (id, tags, attrs, scores) VALUES (?, ?, ?, ?)",
		1, []string{"b", "a"}, map[string]int{"x": 1}, []int{3, 1}).Exec(); err != nil {
		return err
	}
	if err := s.Query("UPDATE gocheck.profiles SET tags = tags + ?, attrs[?] = ?, scores = ? + scores WHERE id = ?",
		[]string{"c"}, "y", 2, []int{0}, 1).Exec(); err != nil {
		return err
	}
	var tags []string
	var attrs map[string]int
	var scores []int
	if err := s.Query("SELECT tags, attrs, scores FROM gocheck.profiles WHERE id = 1").Scan(&tags, &attrs, &scores); err != nil {
		return err
	}
	if fmt.Sprint(tags) != "[a b c]" || fmt.Sprint(attrs) != "map[x:1 y:2]" || fmt.Sprint(scores) != "[0 3 1]" {
		return fmt.Errorf("read back tags %v, attrs %v, scores %v", tags, attrs, scores)
	}
	return nil
}

func checkErrors(s *gocql.Session) error {
	for _, want := range []struct {
		statement string
		code      int
	}{{"SELEC * FROM gocheck.kv", codeSyntax}, {"SELECT * FROM gocheck.missing WHERE k = 1", codeInvalid}} {
		err := s.Query(want.statement).Exec()
		var request gocql.RequestError
		if !errors.As(err, &request) || request.Code() != want.code {
			return fmt.Errorf("%q: %v, want error code %#x", want.statement, err, want.code)
		}
	}
	return nil
}

// With one of the three nodes down: QUORUM still works, and ALL is
// Unavailable with required 3 and alive 2.
func checkOneNodeDown(s *gocql.Session) error {
	if err := s.Query("INSERT INTO gocheck.kv (k, v) VALUES (300, 'quorum')").Consistency(gocql.Quorum).Exec(); err != nil {
		return fmt.Errorf("QUORUM with a node down: %w", err)
	}
	err := s.Query("INSERT INTO gocheck.kv (k, v) VALUES (301, 'all')").Consistency(gocql.All).Exec()
	var unavailable *gocql.RequestErrUnavailable
	if !errors.As(err, &unavailable) || unavailable.Required != 3 || unavailable.Alive != 2 {
		return fmt.Errorf("ALL with a node down: %v, want Unavailable with required 3 and alive 2", err)
	}
	return nil
}

type namedCheck struct {
	name  string
	check func(*gocql.Session) error
}

var addressFlag = flag.String("address", "", "a node's CQL address, HOST:PORT")

func main() {
	address := addressFlag
	oneNodeDown := flag.Bool("one-node-down", false, "only check what holds while one node of three is down")
	expect := flag.String("expect", "", "only check that gocql finds these nodes (HOST:PORT,...) and routes to each")
	user := flag.String("user", "", "log in as this role (PasswordAuthenticator)")
	password := flag.String("password", "", "the role's password")
	ca := flag.String("ca", "", "connect through TLS, checking the node's certificate against this CA (PEM)")
	flag.Parse()
	if *user != "" {
		credentials = &gocql.PasswordAuthenticator{Username: *user, Password: *password}
	}
	if *ca != "" {
		tlsOptions = &gocql.SslOptions{CaPath: *ca, EnableHostVerification: true}
	}
	if *address == "" {
		fmt.Fprintln(os.Stderr, "usage: gocql_check --address HOST:PORT [--one-node-down | --expect HOST:PORT,...]")
		os.Exit(2)
	}
	if *expect != "" {
		if err := checkHosts(*address, strings.Split(*expect, ",")); err != nil {
			fmt.Printf("FAILED hosts: %v\n", err)
			os.Exit(1)
		}
		fmt.Printf("ok hosts: found and routed to %s\n", *expect)
		return
	}
	session, err := connect(*address)
	if err != nil {
		fmt.Printf("FAILED connect: %v\n", err)
		os.Exit(1)
	}
	defer session.Close()
	checks := []namedCheck{
		{"schema", checkSchema}, {"levels", checkLevels}, {"insert_if_not_exists_once", checkInsertIfNotExistsOnce},
		{"failed_update_returns_row", checkFailedUpdateReturnsRow}, {"conditional_batch", checkConditionalBatch},
		{"paging_and_order", checkPagingAndOrder}, {"range_deletes", checkRangeDeletes}, {"collections", checkCollections}, {"errors", checkErrors},
		{"compression", checkCompression},
	}
	if *oneNodeDown {
		checks = []namedCheck{{"one_node_down", checkOneNodeDown}}
	}
	failed := 0
	for _, c := range checks {
		if err := c.check(session); err != nil {
			failed++
			fmt.Printf("FAILED %s: %v\n", c.name, err)
		} else {
			fmt.Printf("ok %s\n", c.name)
		}
	}
	if failed > 0 {
		os.Exit(1)
	}
}
