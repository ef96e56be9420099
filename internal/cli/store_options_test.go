package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/store"
)

// The store subcommands run from their options structs against the test
// cluster, without cobra: put, get, del, scan, stats, probe and key.
func TestStoreCommandsWithoutCobra(t *testing.T) {
	cl := storeCluster(t)
	ctx := context.Background()
	conn := func() storeConn {
		return storeConn{conn: &connFlags{addrs: cl.AddrList(), dmap: testDMap(t), dialTimeout: store.DefaultDialTimeout, requestTimeout: store.DefaultRequestTimeout}}
	}
	session := sessionFlags{withKey: true, routingKey: "fn-alpha", model: "company/model", sessionID: "session-opts", source: "prompt_cache_key"}
	sessionGiven := given("routing-key", "model", "session-id", "source")

	key := &storeKeyOptions{cmdInput: sessionGiven, session: session, partitions: store.DefaultPartitionCount}
	env, out, _ := testEnv("", OutputText)
	if err := runValidated(ctx, env, key, runStoreKey); err != nil || !strings.HasPrefix(out.String(), "lc:v1:") {
		t.Fatalf("store key: %v %q", err, out)
	}
	want := strings.TrimSpace(out.String())
	if err := (&storeKeyOptions{cmdInput: sessionGiven, session: session, batch: true, partitions: 1}).validate(env); !usageErr(err, "--batch reads every session from stdin") {
		t.Errorf("store key --batch with session flags: %v", err)
	}

	putGiven := given("routing-key", "model", "session-id", "source", "cluster")
	put := &storePutOptions{cmdInput: putGiven, storeConn: conn(), session: session, cluster: "  cluster-b ", ttl: "1h", yes: true}
	env, out, _ = testEnv("", OutputText)
	if err := runValidated(ctx, env, put, runStorePut); err != nil || !strings.Contains(out.String(), "wrote "+want+" = cluster-b (ttl 1h0m0s") {
		t.Fatalf("store put: %v %q", err, out)
	}
	if err := (&storePutOptions{cmdInput: sessionGiven, storeConn: conn(), session: session, ttl: "1h"}).validate(env); !usageErr(err, "--cluster is required") {
		t.Errorf("store put without --cluster: %v", err)
	}
	if err := (&storePutOptions{cmdInput: putGiven, storeConn: conn(), session: session, cluster: "c", ttl: "1h", ifAbsent: true, ifPresent: true}).validate(env); !usageErr(err, "exclude each other") {
		t.Errorf("store put --if-absent --if-present: %v", err)
	}

	get := &storeGetOptions{cmdInput: sessionGiven, storeConn: conn(), session: session}
	env, out, _ = testEnv("", OutputJSON)
	if err := runValidated(ctx, env, get, runStoreGet); err != nil || !strings.Contains(out.String(), `"cluster": "cluster-b"`) {
		t.Errorf("store get: %v %q", err, out)
	}
	if err := (&storeGetOptions{storeConn: conn(), session: session}).validate(env); !usageErr(err, "name the entry") {
		t.Errorf("store get without a key: %v", err)
	}

	scan := &storeScanOptions{storeConn: conn(), count: 10, settle: store.DefaultSettleTimeout, summaryOnly: true}
	env, out, _ = testEnv("", OutputText)
	if err := runValidated(ctx, env, scan, runStoreScan); err != nil || !strings.Contains(out.String(), "(complete)") || !strings.Contains(out.String(), "cluster-b") {
		t.Errorf("store scan: %v %q", err, out)
	}
	if err := (&storeScanOptions{storeConn: conn(), count: 0, settle: store.DefaultSettleTimeout}).validate(env); !usageErr(err, "--count 0 out of range 1-100000") {
		t.Errorf("store scan --count 0: %v", err)
	}

	env, out, _ = testEnv("", OutputJSON)
	if err := runValidated(ctx, env, &storeStatsOptions{storeConn: conn(), noScan: true}, runStoreStats); err != nil || !strings.Contains(out.String(), `"schema": "lcctl.store-stats/v1"`) {
		t.Errorf("store stats: %v %q", err, out)
	}
	env, out, _ = testEnv("", OutputText)
	if err := runValidated(ctx, env, &storeProbeOptions{storeConn: conn()}, runStoreProbe); err != nil || !strings.Contains(out.String(), "members ") {
		t.Errorf("store probe: %v %q", err, out)
	}
	if err := (&storeProbeOptions{storeConn: storeConn{conn: &connFlags{}}}).validate(env); !usageErr(err, "no Olric address") {
		t.Errorf("store probe without --olric: %v", err)
	}

	if err := (&storeProbeOptions{cmdInput: given("olric"), storeConn: storeConn{conn: &connFlags{addrs: " "}}}).validate(testEnvWith(EnvOlricAddrs + "=" + cl.AddrList())); !usageErr(err, "--olric is empty") {
		t.Errorf("store probe --olric ' ' with $%s set: %v", EnvOlricAddrs, err)
	}

	del := &storeDelOptions{cmdInput: given("key", "if-cluster"), storeConn: conn(), session: sessionFlags{withKey: true, key: want}, ifCluster: "cluster-b", yes: true}
	env, out, _ = testEnv("", OutputText)
	if err := runValidated(ctx, env, del, runStoreDel); err != nil || !strings.HasPrefix(out.String(), "deleted "+want) ||
		!strings.Contains(out.String(), ": confirmed absent at the current owners (127.0.0.1:") {
		t.Errorf("store del: %v %q", err, out)
	}
	if err := (&storeDelOptions{cmdInput: given("key", "if-cluster"), storeConn: conn(), session: sessionFlags{withKey: true, key: want}}).validate(env); !usageErr(err, "--if-cluster") {
		t.Errorf("store del --if-cluster '': %v", err)
	}
}

// testEnvWith is testEnv's Env with the environment vars (NAME=VALUE).
func testEnvWith(vars ...string) *Env {
	env, _, _ := testEnv("", OutputText, vars...)
	return env
}
