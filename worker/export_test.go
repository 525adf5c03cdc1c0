package worker

import (
	"context"
	"time"
)

// WithSleep returns cfg whose retry waits are slept by sleep: tests record
// the waits instead of spending them.
func WithSleep(cfg Config, sleep func(ctx context.Context, d time.Duration) error) Config {
	cfg.sleep = sleep
	return cfg
}
