package journal_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/nightshift-dev/nightshift/journal"

	"github.com/nightshift-dev/nightshift"
)

// Example records one command of a rule on a host, "crashes" with a second
// command started but not finished, and resumes: the finished command is
// known, the unfinished one is reported as of unknown outcome instead of
// being run again.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "journal-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "night.db")

	j, err := journal.Open(ctx, path, journal.Config{})
	if err != nil {
		log.Fatal(err)
	}
	run, _ := j.StartRun(ctx, journal.RunSpec{Name: "nightly"})
	task, _ := j.StartTask(ctx, run, "sshd_disable_root_login", "web-1")
	cmd, _ := j.BeginCommand(ctx, task, 1, "sed -i 's/^PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config")
	if err := j.FinishCommand(ctx, cmd, journal.CommandResult{Exec: nightshift.Exec{ExitCode: 0}}); err != nil {
		log.Fatal(err)
	}
	if _, err := j.BeginCommand(ctx, task, 2, "sshd -t"); err != nil {
		log.Fatal(err)
	}
	j.Close() // the process dies here

	j, err = journal.Open(ctx, path, journal.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer j.Close()
	st, err := j.ResumeRun(ctx, run)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range st.Pending {
		fmt.Printf("outcome unknown: attempt %d: %s\n", c.Attempt, c.Command)
	}
	fmt.Println("tasks in progress:", len(st.InProgress), "finished:", len(st.Finished))
	// Output:
	// outcome unknown: attempt 2: sshd -t
	// tasks in progress: 1 finished: 0
}
