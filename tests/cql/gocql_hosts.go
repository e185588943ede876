package main

// Discovery and routing: from one contact point gocql must find every
// expected node (system.peers, TOPOLOGY_CHANGE), hold it up, and send a
// query to each one. gocql 1.3 has no per-query host, so a policy of ours
// wraps the usual one and pins a query to a chosen host.

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gocql/gocql"
)

type pinnedHost gocql.HostInfo

func (h *pinnedHost) Info() *gocql.HostInfo { return (*gocql.HostInfo)(h) }
func (h *pinnedHost) Mark(error)            {}

// The DC-aware token-aware policy, which also keeps which hosts are up
// and sends every query to `target` while one is set.
type hostRecordingPolicy struct {
	gocql.HostSelectionPolicy
	mu     sync.Mutex
	up     map[string]*gocql.HostInfo // by HOST:PORT
	target string
}

func newHostRecordingPolicy() *hostRecordingPolicy {
	return &hostRecordingPolicy{
		HostSelectionPolicy: gocql.TokenAwareHostPolicy(gocql.DCAwareRoundRobinPolicy("dc1")),
		up:                  map[string]*gocql.HostInfo{},
	}
}

func hostAddress(h *gocql.HostInfo) string { return fmt.Sprintf("%s:%d", h.ConnectAddress(), h.Port()) }

func (p *hostRecordingPolicy) set(h *gocql.HostInfo, up bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if up {
		p.up[hostAddress(h)] = h
	} else {
		delete(p.up, hostAddress(h))
	}
}

func (p *hostRecordingPolicy) AddHost(h *gocql.HostInfo)    { p.set(h, true); p.HostSelectionPolicy.AddHost(h) }
func (p *hostRecordingPolicy) HostUp(h *gocql.HostInfo)     { p.set(h, true); p.HostSelectionPolicy.HostUp(h) }
func (p *hostRecordingPolicy) RemoveHost(h *gocql.HostInfo) { p.set(h, false); p.HostSelectionPolicy.RemoveHost(h) }
func (p *hostRecordingPolicy) HostDown(h *gocql.HostInfo)   { p.set(h, false); p.HostSelectionPolicy.HostDown(h) }

func (p *hostRecordingPolicy) Pick(q gocql.ExecutableQuery) gocql.NextHost {
	p.mu.Lock()
	target, host := p.target, p.up[p.target]
	p.mu.Unlock()
	if target == "" {
		return p.HostSelectionPolicy.Pick(q)
	}
	picked := false
	return func() gocql.SelectedHost {
		if picked || host == nil {
			return nil
		}
		picked = true
		return (*pinnedHost)(host)
	}
}

func (p *hostRecordingPolicy) missing(expected []string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var missing []string
	for _, address := range expected {
		if _, ok := p.up[address]; !ok {
			missing = append(missing, address)
		}
	}
	return missing
}

// Connects through `address`, waits until every expected host is up, then
// writes and reads a row of app.accounts at ALL through each.
func checkHosts(address string, expected []string) error {
	policy := newHostRecordingPolicy()
	session, err := connectWith(address, policy)
	if err != nil {
		return err
	}
	defer session.Close()
	deadline := time.Now().Add(30 * time.Second)
	for missing := policy.missing(expected); len(missing) > 0; missing = policy.missing(expected) {
		if time.Now().After(deadline) {
			return fmt.Errorf("gocql does not hold %s up", strings.Join(missing, ", "))
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, target := range expected {
		policy.mu.Lock()
		policy.target = target
		policy.mu.Unlock()
		id := "gocql via " + target
		if err := session.Query("INSERT INTO app.accounts (id, balance, owner) VALUES (?, ?, ?)", id, 7, target).
			Consistency(gocql.All).Exec(); err != nil {
			return fmt.Errorf("write through %s: %v", target, err)
		}
		iter := session.Query("SELECT owner FROM app.accounts WHERE id = ?", id).Consistency(gocql.All).Iter()
		var owner string
		read := iter.Scan(&owner)
		coordinator := iter.Host()
		if err := iter.Close(); err != nil || !read || owner != target {
			return fmt.Errorf("read through %s: %v, %q", target, err, owner)
		}
		if coordinator == nil || hostAddress(coordinator) != target {
			return fmt.Errorf("asked %s to coordinate, %v did", target, coordinator)
		}
	}
	return nil
}
