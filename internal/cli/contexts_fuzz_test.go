package cli

import (
	"testing"
)

// FuzzConfigFile: the config file parser never panics, and whatever it
// accepts holds only known settings.
func FuzzConfigFile(f *testing.F) {
	f.Add([]byte(testContexts))
	f.Add([]byte("current-context: 'a b'\ncontexts: {}\n"))
	f.Add([]byte("contexts:\n  x:\n    olric: [a, b]\n    map-addr: c=d\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<14 {
			return
		}
		cf := &configFile{Contexts: map[string]map[string][]string{}, Order: map[string][]string{}}
		if err := cf.parse(data); err != nil {
			return
		}
		for name, settings := range cf.Contexts {
			for k := range settings {
				if _, ok := lookupContextKey(k); !ok {
					t.Fatalf("context %q accepted unknown setting %q", name, k)
				}
			}
		}
	})
}
