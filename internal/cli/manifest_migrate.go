package cli

import (
	"github.com/lcctl/lcctl/internal/manifest"
	"github.com/lcctl/lcctl/internal/migrate"
	"github.com/lcctl/lcctl/internal/migrate/safewrite"
	"github.com/lcctl/lcctl/internal/validate"
)

// migrateManifest migrates each lb-config of a Kubernetes manifest or Helm
// values file (one report each, in file order) and, with --write, writes
// the manifest once with every change that could be made. Each rewrite
// happens inside the lb-config's own lines (manifest.Embedded.Replace),
// so every other byte of the manifest stays as it was. Report i's diff
// goes from the manifest with the changes of reports 0..i-1 to the one
// with report i's change too, so the diffs printed one after another
// apply in order with patch(1).
func migrateManifest(opts *migrateOptions, mo migrate.Options, name string, orig *safewrite.Original, data []byte,
	es []*manifest.Embedded, err error) []migrateFileReport {
	if err != nil {
		fr := newMigrateFileReport(name)
		fr.Status, fr.Format = string(migrate.StatusUnreadable), "yaml"
		for _, d := range manifestFailure(name, err, opts.ValuesKey != "").Diagnostics {
			fr.Errors = append(fr.Errors, migrateDiag(d))
		}
		return []migrateFileReport{fr}
	}
	mopts := manifest.Options{ValuesKey: opts.ValuesKey, DataKey: opts.DataKey}
	current := data
	reports := make([]migrateFileReport, 0, len(es))
	changed := false
	for i, e := range es {
		// migrate detects the format from the name: the data key's
		// extension, else the text's first byte.
		as := "lb-config.json"
		if embeddedFormat(e, validate.FormatUnknown) == validate.FormatYAML {
			as = "lb-config.yaml"
		}
		fr, res := migrateText(mo, name, as, e.Text)
		fr.Source = e.Source
		for j := range fr.Errors {
			d := &fr.Errors[j]
			d.Line, d.Column, _ = e.Map(d.Line, d.Column, -1)
		}
		if res != nil && res.Changed() {
			next, rerr := replaceEmbedded(current, i, res.Output, mopts)
			if rerr != nil {
				fr.Status, fr.Diff, fr.Changes, fr.Availability = string(migrate.StatusRefused), "", []migrate.Change{}, []migrate.Availability{}
				fr.RequiresAffinityWaitStargate = false
				fr.Notes = append(fr.Notes, migrate.Note{Severity: migrate.SeverityError,
					Message: "lcctl could not rewrite this lb-config inside the manifest, so it changes nothing: " + rerr.Error(),
					Hint:    "rewrite the lb-config's own file with lcctl migrate and paste it back, or apply the change by hand"})
			} else {
				fr.Diff = migrate.UnifiedDiff(name, name, current, next)
				current, changed = next, true
			}
		}
		reports = append(reports, fr)
	}
	if !opts.Write || !changed {
		return reports
	}
	backup, werr := safewrite.Replace(orig, current, safewrite.Options{Backup: opts.Backup, FS: opts.fs})
	for i := range reports {
		fr := &reports[i]
		if fr.Status != string(migrate.StatusPending) {
			continue
		}
		fr.Backup = backup
		if werr != nil {
			writeFailure(fr, werr)
			continue
		}
		fr.Status = statusMigrated
	}
	return reports
}

// replaceEmbedded rewrites lb-config i of the manifest data with text.
func replaceEmbedded(data []byte, i int, text []byte, opts manifest.Options) ([]byte, error) {
	es, err := manifest.Extract(data, opts)
	if err != nil {
		return nil, err
	}
	return es[i].Replace(data, text, opts)
}
