package cli

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/lcctl/lcctl/internal/manifest"
	"github.com/lcctl/lcctl/internal/validate"
	"github.com/lcctl/lcctl/internal/yamldoc"
)

// valuesKeyUsage is the help of --values-key (validate, migrate, explain).
const valuesKeyUsage = "read the lb-config under this key path of a Helm values file (dots between keys, e.g. router.lbConfig)"

// dataKeyUsage is the help of --data-key (validate, migrate, explain).
const dataKeyUsage = "in a Kubernetes manifest, read only the ConfigMap data entries with this key (for a ConfigMap holding several lb-configs)"

// addValuesKeyFlag registers --values-key and --data-key on a command's
// flags.
func addValuesKeyFlag(f *pflag.FlagSet, p *string, dataKey *string) {
	f.StringVar(p, "values-key", "", valuesKeyUsage)
	f.StringVar(dataKey, "data-key", "", dataKeyUsage)
}

// validateValuesKeyFlags refuses an empty --values-key or --data-key
// (an unset shell variable: the file would be read as a plain lb-config
// without a word, as --only "" is refused for widening migrate's run)
// and the two together (a Helm values file has no ConfigMap data keys,
// so --data-key would be ignored). given is cmdInput.flagGiven.
func validateValuesKeyFlags(given func(string) bool, valuesKey, dataKey string) error {
	if given("values-key") && valuesKey == "" {
		return Usagef("--values-key is empty (an unset variable?): give the key path of the lb-config in the Helm values file (e.g. router.lbConfig), or leave the flag out")
	}
	if given("data-key") && dataKey == "" {
		return Usagef("--data-key is empty (an unset variable?): give the ConfigMap data key of the lb-config (e.g. lb-config.json), or leave the flag out")
	}
	if valuesKey != "" && dataKey != "" {
		return Usagef("--data-key picks a ConfigMap data entry of a Kubernetes manifest and --values-key a key of a Helm values file: give one of them")
	}
	return nil
}

// errNotManifest is embeddedConfigs' error for --data-key on a file that
// is not a Kubernetes manifest.
var errNotManifest = errors.New("not a Kubernetes manifest")

// embeddedConfigs finds the lb-configs of a Kubernetes manifest (a
// ConfigMap, a List, a multi-document stream) or, with valuesKey, of a
// Helm values file. ok is false when data is neither (a plain lb-config);
// err says why a manifest holds no usable lb-config. With dataKey, data
// must be a manifest: a plain lb-config gives ok and an error wrapping
// errNotManifest (--data-key would otherwise be ignored without a word).
func embeddedConfigs(data []byte, valuesKey, dataKey string) (es []*manifest.Embedded, ok bool, err error) {
	if valuesKey == "" && !manifest.IsManifest(data) {
		if dataKey != "" {
			return nil, true, fmt.Errorf("--data-key %q: the file is %w (no ConfigMap with a data section), so it has no data keys; leave --data-key out for a plain lb-config", dataKey, errNotManifest)
		}
		return nil, false, nil
	}
	es, err = manifest.Extract(data, manifest.Options{ValuesKey: valuesKey, DataKey: dataKey})
	return es, true, err
}

// embeddedFormat is the format of an embedded lb-config: forced, from the
// data key's extension (lb-config.json), else detected from its text.
func embeddedFormat(e *manifest.Embedded, forced validate.Format) validate.Format {
	if forced != validate.FormatUnknown {
		return forced
	}
	switch filepath.Ext(e.Key) {
	case ".json":
		return validate.FormatJSON
	case ".yaml", ".yml":
		return validate.FormatYAML
	}
	return validate.DetectFormat("", e.Text)
}

// validateEmbedded validates one embedded lb-config as Stargate reads it
// and moves every diagnostic's position into the manifest file.
func validateEmbedded(name string, e *manifest.Embedded, format validate.Format) *validate.Result {
	r := validate.FileAs(name, e.Text, embeddedFormat(e, format))
	mapDiagnostics(e, r.Diagnostics)
	return r
}

// mapDiagnostics moves positions in an embedded text into the manifest.
func mapDiagnostics(e *manifest.Embedded, ds []validate.Diagnostic) {
	for i := range ds {
		d := &ds[i]
		if d.Code == validate.CodeRead {
			continue
		}
		d.Line, d.Col, d.Offset = e.Map(d.Line, d.Col, d.Offset)
	}
}

// manifestFailure is the result for a manifest that holds no lb-config,
// or that does not parse as YAML: one LC1001 finding at the top of the
// file (exit 2, as for any input that is not an lb-config).
func manifestFailure(name string, err error, values bool) *validate.Result {
	what := "Kubernetes manifest: "
	if values {
		what = "Helm values file: "
	}
	if errors.Is(err, errNotManifest) {
		what = ""
	}
	line, col, msg := 0, 0, err.Error()
	var ye *yamldoc.Error
	if inner := errors.Unwrap(err); inner != nil && !errors.Is(err, manifest.ErrNoConfig) && !errors.Is(err, errNotManifest) {
		line, msg = 0, "not valid YAML: "+inner.Error()
		if errors.As(inner, &ye) {
			line, col, msg = ye.Line, ye.Col, "not valid YAML: "+ye.Msg
		}
	}
	r := &validate.Result{File: name, Format: validate.FormatYAML, Doc: &validate.Document{File: name, Format: validate.FormatYAML}}
	hint := "give the lb-config's own file, or a manifest with a ConfigMap holding it (--values-key for a Helm values file)"
	if errors.Is(err, errNotManifest) {
		hint = "leave --data-key out to read the file as an lb-config, or give the manifest (kubectl get cm NAME -o yaml)"
	}
	r.Diagnostics = []validate.Diagnostic{{Severity: validate.SeverityError, Code: validate.CodeSyntax, Rule: "V1", File: name,
		Line: line, Col: col, Offset: -1, Message: what + msg, Hint: hint}}
	r.Counts = validate.CountDiagnostics(r.Diagnostics)
	return r
}
