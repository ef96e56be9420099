package store

import (
	"context"
	"fmt"
	"time"
)

// DemoSession is one session of the demo data `lcctl store serve-dev
// --seed-demo` writes: the triple an operator would know (routing key,
// model, raw session ID and where the client sent it) and the cluster the
// entry points to.
type DemoSession struct {
	RoutingKey string `json:"routing_key"`
	Model      string `json:"model"`
	SessionID  string `json:"session_id"`
	Source     Source `json:"source"`
	Cluster    string `json:"cluster"`
}

// Session returns the session triple the gateway would hash (the affinity
// key derived from SessionID and Source as the gateway does).
func (d DemoSession) Session() (Session, error) {
	ak, err := AffinityKey(d.Source, d.SessionID)
	if err != nil {
		return Session{}, err
	}
	return Session{RoutingKey: d.RoutingKey, Model: d.Model, AffinityKey: ak}, nil
}

// DemoClusters are the demo's cluster IDs, in order of share (50 %, 30 %,
// 20 %).
var DemoClusters = []string{"cluster-a", "cluster-b", "cluster-c"}

// DemoSessions returns n deterministic demo sessions (n >= 2). The first
// is the worked example of gateway.md §3.1 (fn-alpha, company/model,
// prompt_cache_key "session-1", pointing to cluster-b), the second the
// upstream end-to-end session (e2e, e2e-model, "e2e-last-cluster-session",
// cluster-b); the rest are "demo-session-NNN" over three routing keys, two
// models and the three eligible sources, spread 50/30/20 over
// cluster-a/b/c.
func DemoSessions(n int) []DemoSession {
	out := []DemoSession{
		{RoutingKey: "fn-alpha", Model: "company/model", SessionID: "session-1", Source: SourcePromptCacheKey, Cluster: "cluster-b"},
		{RoutingKey: "e2e", Model: "e2e-model", SessionID: "e2e-last-cluster-session", Source: SourcePromptCacheKey, Cluster: "cluster-b"},
	}
	routingKeys := []string{"fn-alpha", "fn-beta", "fn-gamma"}
	models := []string{"company/model", "company/model-large"}
	for i := 1; len(out) < n; i++ {
		cluster := DemoClusters[0]
		switch m := i % 10; {
		case m >= 5 && m < 8:
			cluster = DemoClusters[1]
		case m >= 8:
			cluster = DemoClusters[2]
		}
		out = append(out, DemoSession{
			RoutingKey: routingKeys[i%len(routingKeys)],
			Model:      models[(i/3)%len(models)],
			SessionID:  fmt.Sprintf("demo-session-%03d", i),
			Source:     Sources[i%len(Sources)],
			Cluster:    cluster,
		})
	}
	return out[:max(n, 0)]
}

// SeedDemo writes the sessions through c with the given TTL, as the
// gateway would (Put with PX). It returns the number written and stops at
// the first error.
func SeedDemo(ctx context.Context, c *Client, sessions []DemoSession, ttl time.Duration) (int, error) {
	for i, d := range sessions {
		s, err := d.Session()
		if err != nil {
			return i, fmt.Errorf("demo session %d: %w", i+1, err)
		}
		if err := c.Put(ctx, s.Key(), d.Cluster, ttl, PutAlways); err != nil {
			return i, fmt.Errorf("seed demo session %d: %w", i+1, err)
		}
	}
	return len(sessions), nil
}
