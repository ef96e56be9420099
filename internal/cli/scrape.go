package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lcctl/lcctl/internal/metrics"
	"github.com/lcctl/lcctl/internal/preflight"
)

// scrapeSpec is one metrics input of preflight or check metrics.
type scrapeSpec struct {
	// flag is the flag that gave src, without dashes (gateway,
	// stargate-metrics, …); a file that cannot be read is an error
	// naming it.
	flag string
	src  string
	keep []string
	out  *preflight.Scrapes
}

// scrapeAll takes one scrape of every spec, or two scrapes interval apart
// when interval > 0. A file or stdin source that cannot be read or parsed
// is an input error (returned, exit 2); a URL that cannot be fetched or
// parsed is recorded in the spec's Scrapes.Err (a failed check).
func scrapeAll(ctx context.Context, f *metrics.Fetcher, specs []*scrapeSpec, interval time.Duration) error {
	round := func(first bool) error {
		for _, s := range specs {
			if s.out.Err != nil {
				continue
			}
			sc, err := f.Fetch(ctx, s.src, s.keep...)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if !metrics.IsURL(s.src) {
					if _, unread := errors.AsType[*metrics.ReadError](err); unread && s.flag != "" {
						err = fmt.Errorf("--%s: %w", s.flag, err)
					}
					return UsageErr(err)
				}
				s.out.Err = err
				continue
			}
			if !first {
				s.out.Before = s.out.After
			}
			s.out.After = sc
			if sc.Empty {
				// A finding (the scrape check fails), for files too.
				s.out.Err = metrics.EmptyError(s.out.Source)
			}
		}
		return nil
	}
	if err := round(true); err != nil {
		return err
	}
	if interval <= 0 {
		return nil
	}
	t := time.NewTimer(interval)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	return round(false)
}

// checkIntervalSources refuses --interval with sources that cannot be
// scraped twice (files, stdin).
func checkIntervalSources(interval time.Duration, srcs ...string) error {
	if interval < 0 {
		return Usagef("--interval must not be negative")
	}
	stdin := 0
	for _, s := range srcs {
		if s == "" {
			continue
		}
		if s == "-" {
			stdin++
		}
		if interval > 0 && !metrics.IsURL(s) {
			return Usagef("--interval needs http(s) URLs to scrape twice; %q is a file", metrics.RedactSource(s))
		}
	}
	if stdin > 1 {
		return Usagef("only one metrics source can be standard input (-)")
	}
	return nil
}

func sourceLabel(src string) string {
	if src == "-" {
		return "stdin"
	}
	return metrics.RedactSource(src)
}
