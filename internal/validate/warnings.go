package validate

import (
	"fmt"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/plural"
)

// entryWarnings reports the operator warnings of lb-config.md §9 that are
// about one active, parsed entry (W1–W3, W6–W13, W18, W19).
func (c *checker) entryWarnings(e *Entry) {
	ac := e.Config
	set := e.present
	pos := e.Value.Start
	at := func(f *lb.Field) (Pos, string) {
		if v := set.get(f); v != nil {
			return v.Start, fieldPath(e.Path, f.Name)
		}
		return pos, e.Path
	}
	floorF, ceilF := lb.FieldMaxQueueTimeFloorMs, lb.FieldMaxQueueTimeCeilMs
	label := algLabel(e)
	if e.NoSLO {
		missing := "neither max_queue_time_floor_ms nor max_queue_time_ceil_ms is set"
		switch {
		case set.get(floorF) != nil:
			missing = "only " + floorF.Name + " is set"
		case set.get(ceilF) != nil:
			missing = "only " + ceilF.Name + " is set"
		}
		if e.Bounded {
			c.add(CodeNoSLOBounded, pos, e.Path, lastField(e.Path), e,
				fmt.Sprintf("%s entry has no queue SLO (%s) but already bounds rank 1 with max_queued %d and cache_affinity_wait_ms %d; after the last-cluster release rank 1 keeps requests while it has room for %s above its concurrency and a request waits up to %d ms before widening",
					label, missing, ac.MaxQueued, ac.CacheAffinityWaitMs, plural.Count(ac.MaxQueued, "queued request", "queued requests"), ac.CacheAffinityWaitMs),
				"no change needed; `lcctl migrate` leaves this entry as it is (M4)")
		} else {
			hint := "run `lcctl migrate` to add max_queued and cache_affinity_wait_ms (bounded target) or switch the entry to pulsar (keeps unlimited stickiness)"
			if e.Role == RoleRequestAlgorithm || e.Role == RoleModelRequestAlgorithm {
				hint = "run `lcctl migrate` to add max_queued and cache_affinity_wait_ms; the entry must stay pulsar-wait-and-widen to match its key (M7)"
			}
			c.add(CodeNoSLO, pos, e.Path, lastField(e.Path), e,
				fmt.Sprintf("%s entry has no queue SLO (%s): %s", label, missing, noSLOChange), hint)
		}
	}
	if e.Algorithm != lb.WaitAndWiden && e.Algorithm != lb.PulsarWaitAndWiden {
		c.pulsarWeight(e)
		c.commonWarnings(e)
		return
	}
	floor, ceil := set.get(floorF), set.get(ceilF)
	switch {
	case (floor == nil) != (ceil == nil):
		field := floorF
		if floor == nil {
			field = ceilF
		}
		p, path := at(field)
		c.add(CodeHalfSLO, p, path, field.Name, e,
			fmt.Sprintf("only %s is set on %s: the queue SLO needs both max_queue_time_floor_ms and max_queue_time_ceil_ms, so it has no effect", field.Name, label),
			"set both bounds, or remove this one")
	case floor != nil && ceil != nil && *ac.MaxQueueTimeFloorMs > *ac.MaxQueueTimeCeilMs:
		c.add(CodeSLOOrder, floor.Start, fieldPath(e.Path, floorF.Name), floorF.Name, e,
			fmt.Sprintf("max_queue_time_floor_ms %d is above max_queue_time_ceil_ms %d on %s: the bounds are not reordered, so the queue limit shrinks as the request ages", *ac.MaxQueueTimeFloorMs, *ac.MaxQueueTimeCeilMs, label),
			"swap the values")
	}
	vnodes := lb.FieldCacheAffinityVirtualNodes
	if e.Algorithm == lb.PulsarWaitAndWiden && set.get(vnodes) != nil {
		p, path := at(vnodes)
		c.add(CodeIgnoredVirtualNodes, p, path, vnodes.Name, e,
			fmt.Sprintf("cache_affinity_virtual_nodes is accepted and ignored by %s (it ranks clusters with Pulsar, not a hash ring)", label),
			"remove it")
	}
	if e.Algorithm == lb.WaitAndWiden && ac.CacheAffinityBackendSelectionCount == 0 {
		for _, f := range []*lb.Field{lb.FieldCacheAffinityWaitMs, lb.FieldCacheAffinityInputTokensScale, vnodes, lb.FieldLastClusterAffinity} {
			if set.get(f) == nil || (f == lb.FieldLastClusterAffinity && !ac.LastClusterAffinity) {
				continue
			}
			p, path := at(f)
			c.add(CodeNoAffinityGroup, p, path, f.Name, e,
				fmt.Sprintf("%s has no effect on %s without an affinity group: cache_affinity_backend_selection_count is unset or 0", f.Name, label),
				"set cache_affinity_backend_selection_count (for example 1 or 2) to form the affinity group")
		}
	}
	for _, f := range []*lb.Field{lb.FieldN, vnodes, lb.FieldCacheAffinityBackendSelectionCount} {
		if v := set.get(f); v != nil && v.Uint() == 0 {
			what := "runs as 1"
			if f == lb.FieldCacheAffinityBackendSelectionCount {
				what = "means unset"
				if e.Algorithm == lb.PulsarWaitAndWiden {
					what = "means unset (an affinity group of 1, the Pulsar rank-1 cluster)"
				}
			}
			c.add(CodeNormalised, v.Start, fieldPath(e.Path, f.Name), f.Name, e,
				fmt.Sprintf("%s: 0 on %s %s", f.Name, label, what), "write the effective value")
		}
	}
	if f := lb.FieldTTFTBucketSizeMs; set.get(f) != nil && set.get(f).Uint() == 0 {
		c.add(CodeZeroBucket, set.get(f).Start, fieldPath(e.Path, f.Name), f.Name, e,
			fmt.Sprintf("ttft_bucket_size_ms: 0 on %s makes every distinct TTFT estimate its own bucket", label),
			"use a bucket width such as 20 ms (the default)")
	}
	if f := lb.FieldNextBucketUnlockFactor; set.get(f) != nil && !(set.get(f).Float() >= 0 && set.get(f).Float() <= 1) {
		v := set.get(f)
		c.add(CodeUnlockFactor, v.Start, fieldPath(e.Path, f.Name), f.Name, e,
			fmt.Sprintf("next_bucket_unlock_factor %s on %s is outside 0–1: below 0 the next bucket unlocks at once, above 1 later than the TTFT gap", rustFloatDisplay(v.Float()), label),
			"use a fraction between 0 and 1 (default 0.25)")
	}
	if f := lb.FieldCacheAffinityWaitMs; set.get(f) != nil && set.get(f).Uint() >= 60000 {
		v := set.get(f)
		c.add(CodeLongWait, v.Start, fieldPath(e.Path, f.Name), f.Name, e,
			fmt.Sprintf("cache_affinity_wait_ms %d on %s reaches the 60 s routing-wait cap: requests get 503 before the affinity wait ends", v.Uint(), label),
			"use a wait well below 60000 ms")
	}
	if ac.LastClusterAffinity {
		hint := "roll out in order: Stargate with the flag off, then the gateway's STARGATE_LAST_CLUSTER_ENABLED=true, then this flag"
		if !ac.RequireCacheAffinityKey {
			hint += "; consider require_cache_affinity_key: true so requests without an affinity key are refused rather than silently unaffected"
		}
		p, path := at(lb.FieldLastClusterAffinity)
		c.add(CodeLastCluster, p, path, lb.FieldLastClusterAffinity.Name, e,
			fmt.Sprintf("last_cluster_affinity is on for %s: it acts only when the gateway sends x-stargate-last-cluster-id and the request has x-cache-affinity-key; without the gateway every request counts as a new session and skips the affinity wait", label),
			hint)
	}
	if v := set.get(vnodes); v != nil && v.Uint() > 1024 && e.Algorithm == lb.WaitAndWiden {
		c.add(CodeManyVirtualNodes, v.Start, fieldPath(e.Path, vnodes.Name), vnodes.Name, e,
			fmt.Sprintf("cache_affinity_virtual_nodes %d on %s is above 1024: ring memory grows with it, and routing expressions cap it at 1024", v.Uint(), label),
			"150 (the default) is enough for most cluster counts")
	}
	c.pulsarWeight(e)
	c.commonWarnings(e)
}

func (c *checker) commonWarnings(e *Entry) {
	if f := lb.FieldMaxInputWorkSeconds; e.present.get(f) != nil && e.present.get(f).Float() <= 0 {
		v := e.present.get(f)
		c.add(CodeInputWorkLimit, v.Start, fieldPath(e.Path, f.Name), f.Name, e,
			fmt.Sprintf("max_input_work_seconds %s on %s is not positive: input-work admission rejects nearly every request", rustFloatDisplay(v.Float()), algLabel(e)),
			"remove it to disable input-work admission, or set a positive number of seconds")
	}
}

func (c *checker) pulsarWeight(e *Entry) {
	if e.Algorithm != lb.Pulsar && e.Algorithm != lb.PulsarWaitAndWiden {
		return
	}
	if e.present.get(lb.FieldRendezvousWeight) != nil {
		return
	}
	c.add(CodeImplicitWeight, e.Value.Start, e.Path, lastField(e.Path), e,
		fmt.Sprintf("%s entry ranks clusters by the default rendezvous_weight max-input-tps, which Pylons must report", algLabel(e)),
		"set rendezvous_weight explicitly (max-input-tps or last-mean-input-tps)")
}

// unreachable reports W5: active request_algorithms entries no request can
// reach (lb-config.md E3).
func (c *checker) unreachable() {
	c.unreachableModelLevel()
	c.unreachableTopLevel()
}

// unreachableModelLevel reports model-level entries keyed by the model's
// own algorithm (W5).
func (c *checker) unreachableModelLevel() {
	for _, m := range c.models {
		if m.Algorithm == 0 || m.Config == nil {
			continue
		}
		for _, e := range m.children {
			if e.Role == RoleModelRequestAlgorithm && e.Active && e.KeyAlgorithm == m.Algorithm {
				c.add(CodeUnreachable, e.Value.Start, e.Path, e.Key, e,
					fmt.Sprintf("request_algorithms[%q] of model %q is never used: x-routing-method %s selects the model's own %s entry first (E3.1)", e.Key, m.Model, e.KeyAlgorithm, m.Algorithm),
					"remove it, or change the model's own entry instead")
			}
		}
	}
}

// unreachableTopLevel reports a top-level entry keyed by the default
// algorithm that no model can reach (W5).
func (c *checker) unreachableTopLevel() {
	def := lb.PowerOfN
	if c.defaultEntry != nil {
		if c.defaultEntry.Algorithm == 0 {
			return
		}
		def = c.defaultEntry.Algorithm
	}
	for _, e := range c.topRA {
		if e.KeyAlgorithm != def {
			continue
		}
		reachable := false
		for _, m := range c.models {
			if m.Algorithm == 0 {
				reachable = true // unknown: do not claim it is dead
				break
			}
			if m.Algorithm == def {
				continue
			}
			own := false
			if m.Config != nil {
				_, own = m.Config.RequestAlgorithms[def]
			}
			if !own {
				reachable = true
				break
			}
		}
		if !reachable {
			c.add(CodeUnreachable, e.Value.Start, e.Path, e.Key, e,
				fmt.Sprintf("request_algorithms[%q] is never used: it names the default algorithm %s, which models without an entry already run with default settings (E3.1), and every models entry either uses %s or has its own entry for it", e.Key, def, def),
				"remove it; to tune the default algorithm, add models entries for the models that need it")
		}
	}
}
