package main

import (
	"bytes"
	"context"
	"errors"
	"strings"

	"github.com/nightshift-dev/nightshift/internal/hostfile"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/scap"

	"github.com/nightshift-dev/nightshift"
)

// hostChunk is how much of a file one command on the host returns.
const hostChunk = hostfile.Chunk

// datastreamRules reads the SCAP source datastream at path on the host
// (the file the host's oscap evaluates) and builds the worker rules of
// profile for ids, each checked by oscap against that path. An unreadable
// or invalid datastream, an unknown profile or rule is a usage error; a
// connection that fails is the host being unreachable.
func datastreamRules(ctx context.Context, c nightshift.Runner, host, path, profile string, ids []string) ([]rules.Rule, error) {
	data, err := readHostFile(ctx, c, path, scap.MaxSize)
	if err != nil {
		return nil, err
	}
	ds, err := scap.Parse(bytes.NewReader(data), host+":"+path)
	if err != nil {
		return nil, &usageError{err}
	}
	set, err := ds.Set(scap.Options{Profile: profile, Rules: ids, TargetPath: path})
	if errors.Is(err, scap.ErrUnknownProfile) {
		short := make([]string, 0, len(ds.ProfileIDs()))
		for _, p := range ds.ProfileIDs() {
			short = append(short, scap.ShortID(p))
		}
		return nil, usagef("%w (it has %s)", err, strings.Join(short, ", "))
	}
	if err != nil {
		return nil, &usageError{err}
	}
	return set.Rules(), nil
}

// readHostFile reads a regular file on the host through the existing
// connection (no second login, no passphrase asked twice), in chunks of
// hostChunk bytes (package hostfile). The host not answering is the host
// being unreachable; anything else about the file is a usage error.
func readHostFile(ctx context.Context, c nightshift.Runner, path string, limit int) ([]byte, error) {
	data, err := hostfile.Read(ctx, c, path, limit)
	switch {
	case errors.Is(err, hostfile.ErrHost):
		return nil, &unreachable{err}
	case err != nil:
		return nil, &usageError{err}
	}
	return data, nil
}
