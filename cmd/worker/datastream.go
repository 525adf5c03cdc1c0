package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift/rules"

	"github.com/nightshift-dev/nightshift"
)

// hostChunk is how much of a file one command on the host returns: well
// under sshexec's default output cap (1 MiB), so no chunk is ever cut.
const hostChunk = 512 << 10

// datastreamRules reads the SCAP source datastream at path on the host
// (the file the host's oscap evaluates) and builds the worker rules of
// profile for ids, each checked by oscap against that path. An unreadable
// or invalid datastream, an unknown profile or rule is a usage error; a
// connection that fails is the host being unreachable.
func datastreamRules(ctx context.Context, c nightshift.Runner, host, path, profile string, ids []string) ([]rules.Rule, error) {
	data, err := readHostFile(ctx, c, path, rules.MaxDatastreamSize)
	if err != nil {
		return nil, err
	}
	ds, err := rules.ParseDatastream(bytes.NewReader(data), host+":"+path)
	if err != nil {
		return nil, &usageError{err}
	}
	set, err := ds.Set(rules.SCAPOptions{Profile: profile, Rules: ids, TargetPath: path})
	if errors.Is(err, rules.ErrUnknownProfile) {
		short := make([]string, 0, len(ds.ProfileIDs()))
		for _, p := range ds.ProfileIDs() {
			short = append(short, rules.ShortID(p))
		}
		return nil, usagef("%w (it has %s)", err, strings.Join(short, ", "))
	}
	if err != nil {
		return nil, &usageError{err}
	}
	return set.Rules(), nil
}

// readHostFile reads a regular file on the host in chunks of hostChunk
// bytes through the existing connection (no second login, no passphrase
// asked twice). A file that changes size while it is read is an error.
func readHostFile(ctx context.Context, c nightshift.Runner, path string, limit int) ([]byte, error) {
	q := shellQuote(path)
	// A FIFO or a device would make wc wait or read forever: only a
	// regular file is measured.
	r, err := c.Run(ctx, "if [ ! -e "+q+" ]; then echo 'no such file' >&2; exit 1; elif [ ! -f "+q+" ]; then "+
		"echo 'not a regular file' >&2; exit 1; fi; wc -c < "+q)
	if err != nil {
		return nil, &unreachable{fmt.Errorf("read %s on the host: %w", path, err)}
	}
	if r.ExitCode != 0 {
		return nil, usagef("read %s on the host: exit %d: %s", path, r.ExitCode, firstLineOr(r.Stderr, "no error message"))
	}
	size, err := strconv.ParseInt(strings.TrimSpace(r.Stdout), 10, 64)
	if err != nil || size < 0 {
		return nil, usagef("read %s on the host: wc -c printed %q", path, strings.TrimSpace(r.Stdout))
	}
	if size > int64(limit) {
		return nil, &usageError{fmt.Errorf("read %s on the host: %d bytes, more than %d: %w", path, size, limit, rules.ErrTooLarge)}
	}
	buf := make([]byte, 0, size)
	for off := int64(0); off < size; off += hostChunk {
		want := min(hostChunk, size-off)
		r, err := c.Run(ctx, fmt.Sprintf("tail -c +%d -- %s | head -c %d", off+1, q, hostChunk))
		if err != nil {
			return nil, &unreachable{fmt.Errorf("read %s on the host: %w", path, err)}
		}
		if r.ExitCode != 0 || r.StdoutCut > 0 || int64(len(r.Stdout)) != want {
			return nil, usagef("read %s on the host: bytes %d-%d: exit %d, %d bytes (the file changed while read?): %s",
				path, off, off+want, r.ExitCode, len(r.Stdout), firstLineOr(r.Stderr, "no error message"))
		}
		buf = append(buf, r.Stdout...)
	}
	return buf, nil
}

func firstLineOr(s, def string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return def
	}
	line, _, _ := strings.Cut(s, "\n")
	return line
}
