package fleet

import (
	"errors"
	"fmt"
	"time"

	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/lessons"
	"github.com/nightshift-dev/nightshift/orchestrate"
	"github.com/nightshift-dev/nightshift/recipes"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

// Names registered with Temporal. They are part of the fleet's contract
// with running nights: renaming one breaks every history that uses it.
const (
	nightWorkflowName = "nightshift.Night"
	hostWorkflowName  = "nightshift.Host"
	probeActivity     = "nightshift.Probe"
	checkActivity     = "nightshift.Check"
	commandActivity   = "nightshift.Command"
	// sandboxProbeActivity says whether the recording sandbox can run on
	// a host (package sandbox).
	sandboxProbeActivity = "nightshift.SandboxProbe"
	modelActivity        = "nightshift.ModelCall"

	// statusQuery is answered by the night workflow with a NightStatus.
	statusQuery = "status"
	// resultQuery is answered by the night workflow with the Result so far.
	resultQuery = "result"
)

// Task queues. A zone's hosts are worked on by the workers of the queue
// ZoneQueue(zone); every `worker fleet serve` also polls NightQueue (night
// workflows only schedule children) and, with model slots, modelQueue.
const (
	NightQueue  = "nightshift-night"
	modelQueue  = "nightshift-model"
	DefaultZone = "default"
	// ZoneVar is the inventory variable naming a host's zone.
	ZoneVar = "nightshift_zone"
)

// Defaults for Night's zero values.
const (
	DefaultHostsPerRun    = 500
	defaultParallelHosts  = 4
	DefaultCommandTimeout = 5 * time.Minute
	DefaultHeartbeat      = 20 * time.Second
)

// ErrSpec is wrapped by every error about a night's input: no rules or
// hosts, a duplicate, a rule file that does not parse, an unknown rule id.
var ErrSpec = errors.New("invalid fleet night")

// ZoneQueue is the task queue of zone ("" is DefaultZone).
func ZoneQueue(zone string) string {
	if zone == "" {
		zone = DefaultZone
	}
	return "nightshift-zone-" + zone
}

// ZoneOf is the zone of an inventory host: its nightshift_zone variable, or
// DefaultZone.
func ZoneOf(h inventory.Host) string {
	if z := h.Vars[ZoneVar]; z != "" {
		return z
	}
	return DefaultZone
}

// RuleFile is a rules file shipped inside the night's input, so every
// worker parses the same rules whatever its own disk holds.
type RuleFile struct {
	Name string `json:"name"`
	Data []byte `json:"data"`
}

// ModelSpec is the served model and the budget of its window, fixed when
// the night starts so that every replay of a host workflow counts the same.
type ModelSpec struct {
	Name          string `json:"name"`           // the served model's id
	Tokenizer     string `json:"tokenizer"`      // built-in name or tokenizer.json path present on every worker
	ContextWindow int    `json:"context_window"` // tokens
	MaxTokens     int    `json:"max_tokens"`     // completion reserve
}

// Night is the input of the night workflow: what `worker run` takes, with
// the rules' text in place of their paths.
type Night struct {
	Name      string     `json:"name"`
	RuleFiles []RuleFile `json:"rule_files"`
	RuleIDs   []string   `json:"rule_ids,omitempty"` // empty: every rule, in file order
	// Datastream, in place of RuleFiles, takes the rules of an SCAP
	// profile from a datastream on the hosts: the night reads it on the
	// first host of the first host's zone that answers (up to 8 tried)
	// and keeps the rules in SCAPRules.
	Datastream *DatastreamSource `json:"datastream,omitempty"`
	// SCAPRules are the rules read from Datastream (set by the night).
	SCAPRules []ProfileRule    `json:"scap_rules,omitempty"`
	Hosts     []inventory.Host `json:"hosts"`
	Model     ModelSpec        `json:"model"`
	// MaxAttempts caps the attempts of every rule, a rule's max_attempts
	// included (a lower max_attempts is kept; 0: each rule's max_attempts,
	// else 20); KeepTurns is the memory's K (0: memory.DefaultKeepTurns).
	MaxAttempts int `json:"max_attempts,omitempty"`
	KeepTurns   int `json:"keep_turns,omitempty"`
	// ParallelHosts is how many host workflows run at once (0: 4).
	ParallelHosts int `json:"parallel_hosts,omitempty"`
	// RetryDeadline is how long model calls are retried (0: 10 minutes).
	RetryDeadline time.Duration `json:"retry_deadline_ns,omitempty"`
	// RequestTimeout bounds one model call activity (0:
	// worker.DefaultRequestTimeout, 5 minutes), and so does RetryDeadline
	// when it is less.
	RequestTimeout time.Duration `json:"request_timeout_ns,omitempty"`
	// CommandTimeout bounds one command or check activity (0: 5 minutes);
	// Heartbeat is how soon a command whose worker died is found out (0: 20s).
	CommandTimeout time.Duration `json:"command_timeout_ns,omitempty"`
	Heartbeat      time.Duration `json:"heartbeat_ns,omitempty"`
	// NoLessons turns off lessons between hosts.
	NoLessons bool `json:"no_lessons,omitempty"`
	// Sandbox is where the recording sandbox runs each remediation
	// command first: "required" (a host where it cannot run has its rules
	// failed, naming the missing piece), "auto" (such a host falls back to
	// the static check, stated in its results) or "off"; "" (nights started
	// before it existed) is off.
	Sandbox string `json:"sandbox,omitempty"`
	// Lessons seed the night (from earlier runs); may be empty.
	Lessons []lessons.Lesson `json:"lessons,omitempty"`
	// NoRecipes turns replay of proven fixes off for the night: every host
	// asks the model (`--no-recipes`); fixes are still proved into the
	// night's recipes (NightResult.Recipes, for export).
	NoRecipes bool `json:"no_recipes,omitempty"`
	// Recipes seed the night (proven in earlier nights, e.g. a journal
	// file's); may be empty. A host started after a fix of its key
	// replays the best recipe before asking the model.
	Recipes []nightshift.Recipe `json:"recipes,omitempty"`
	// Book is the workflow id of the fleet's recipe book ("":
	// DefaultBook): the night starts with the recipes it holds (proven,
	// demoted, pinned or retired by earlier nights and operators), before
	// Recipes, and publishes what its hosts prove and demote to it. The
	// read starts the book when it does not run.
	Book string `json:"book,omitempty"`
	// HostsPerRun is how many host workflows one run of the night workflow
	// starts before it continues as new (0: DefaultHostsPerRun), so that a
	// night's history stays bounded however many hosts it has.
	HostsPerRun int `json:"hosts_per_run,omitempty"`
	// Carry is where a night that continued as new resumes; nil when a
	// night starts. Set by the night workflow only.
	Carry *Carry `json:"carry,omitempty"`
}

// Carry is the state a night hands to its next run when it continues as
// new: the hosts started so far, its progress and its lessons.
type Carry struct {
	Next    int              `json:"next"` // index in Hosts of the next host to start
	Started time.Time        `json:"started"`
	Runs    int              `json:"runs"` // runs of the night workflow before this one
	Status  NightStatus      `json:"status"`
	Failed  []HostResult     `json:"failed,omitempty"` // hosts whose workflow failed
	Learned []lessons.Lesson `json:"learned,omitempty"`
	// Recipes are the night's recipes so far (its seed included).
	Recipes []nightshift.Recipe `json:"recipes,omitempty"`
	// Book is the recipe book the night publishes to ("": none).
	Book string `json:"book,omitempty"`
}

// book is the workflow id of the night's recipe book.
func (n Night) book() string {
	if n.Book == "" {
		return DefaultBook
	}
	return n.Book
}

// withDefaults fills zero fields.
func (n Night) withDefaults() Night {
	if n.ParallelHosts <= 0 {
		n.ParallelHosts = defaultParallelHosts
	}
	if n.RetryDeadline <= 0 {
		n.RetryDeadline = worker.DefaultRetryDeadline
	}
	if n.RequestTimeout <= 0 {
		n.RequestTimeout = worker.DefaultRequestTimeout
	}
	if n.CommandTimeout <= 0 {
		n.CommandTimeout = DefaultCommandTimeout
	}
	if n.Heartbeat <= 0 {
		n.Heartbeat = DefaultHeartbeat
	}
	if n.Name == "" {
		n.Name = "fleet night"
	}
	if n.HostsPerRun <= 0 {
		n.HostsPerRun = DefaultHostsPerRun
	}
	return n
}

// Rules parses the night's rule files and selects RuleIDs, in order. It is
// deterministic and runs inside workflows.
func (n Night) Rules() ([]rules.Rule, error) {
	var all []rules.Rule
	byID := map[string]rules.Rule{}
	for _, f := range n.RuleFiles {
		set, err := rules.Parse(f.Name, f.Data)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSpec, err)
		}
		for _, r := range set.Rules() {
			if _, dup := byID[r.ID]; dup {
				return nil, fmt.Errorf("%w: rule %s is defined twice", ErrSpec, r.ID)
			}
			byID[r.ID] = r
			all = append(all, r)
		}
	}
	for _, sr := range n.SCAPRules {
		r := sr.rule()
		if _, dup := byID[r.ID]; dup || r.ID == "" {
			return nil, fmt.Errorf("%w: SCAP rule %q is empty or defined twice", ErrSpec, r.ID)
		}
		byID[r.ID] = r
		all = append(all, r)
	}
	if len(n.RuleIDs) > 0 {
		all = all[:0:0]
		for _, id := range n.RuleIDs {
			r, ok := byID[id]
			if !ok {
				return nil, fmt.Errorf("%w: rule %q is in none of the rule files", ErrSpec, id)
			}
			all = append(all, r)
		}
	}
	return all, nil
}

// Validate checks the night's input: rules that parse, at least one rule
// (or a datastream to read them from) and one host, no duplicate host, a
// model, recipes (Recipes) that recipes.Memory.Load takes.
func (n Night) Validate() error {
	rs, err := n.Rules()
	if err != nil {
		return err
	}
	pending := n.Datastream != nil && len(n.SCAPRules) == 0 // read by the night
	switch {
	case n.Datastream != nil && (n.Datastream.Path == "" || n.Datastream.Profile == ""):
		return fmt.Errorf("%w: a datastream needs its path on the hosts and a profile", ErrSpec)
	case n.Datastream != nil && len(n.RuleFiles) > 0:
		return fmt.Errorf("%w: rules files and a datastream cannot be combined", ErrSpec)
	case (len(rs) == 0 && !pending) || len(n.Hosts) == 0:
		return fmt.Errorf("%w: no rules or no hosts", ErrSpec)
	case n.Model.Name == "" || n.Model.Tokenizer == "" || n.Model.ContextWindow <= 0 || n.Model.MaxTokens <= 0:
		return fmt.Errorf("%w: the model's name, tokenizer, context window and max tokens are required", ErrSpec)
	}
	if err := recipes.NewMemory(nil).Load(n.Recipes...); err != nil {
		return fmt.Errorf("%w: the night's recipes: %w", ErrSpec, err)
	}
	seen := map[string]bool{}
	for _, h := range n.Hosts {
		if h.Name == "" || seen[h.Name] {
			return fmt.Errorf("%w: host %q is empty or listed twice", ErrSpec, h.Name)
		}
		seen[h.Name] = true
	}
	return nil
}

// hostInput is the input of one host workflow.
type hostInput struct {
	Night   Night            `json:"night"` // Hosts holds only this host
	Host    inventory.Host   `json:"host"`
	Lessons []lessons.Lesson `json:"lessons,omitempty"` // learned before this host started
	// Recipes are those the host may replay, proven before it started.
	Recipes []nightshift.Recipe `json:"recipes,omitempty"`
}

// HostResult is what a host workflow returns.
type HostResult struct {
	Host  string             `json:"host"`
	Zone  string             `json:"zone"`
	Tasks []orchestrate.Task `json:"tasks"`
	// Lessons are those this host's rules taught (not the ones it got).
	Lessons []lessons.Lesson `json:"lessons,omitempty"`
	// Recipes are the changes this host made to the night's recipes: its
	// proofs and its failed replays, in order.
	Recipes []RecipeChange `json:"recipes,omitempty"`
	// Unreachable is why the host stopped answering, if it did.
	Unreachable string `json:"unreachable,omitempty"`
	// Stopped is why the host's work ended early (the model server stayed
	// down, the night was cancelled); its unfinished tasks say where.
	Stopped string `json:"stopped,omitempty"`
}

// NightResult is what the night workflow returns (and its resultQuery answers
// while it runs): every finished host's tasks.
type NightResult struct {
	Name     string                `json:"name"`
	Model    string                `json:"model"`
	Started  time.Time             `json:"started"`
	Ended    time.Time             `json:"ended,omitzero"`
	Rules    []orchestrate.RuleRef `json:"rules"`
	Hosts    []string              `json:"hosts"`
	HostRuns []HostResult          `json:"host_runs"`
	// InChildren says (for nights started since fleets continue as new)
	// that HostRuns holds only the hosts whose workflow failed: every other
	// host's HostResult is the result of its host workflow, hostWorkflowID
	// (night, host), which Fetch reads. A night's own result then stays
	// small however many hosts it has.
	InChildren bool `json:"in_children,omitempty"`
	// Runs is how many runs of the night workflow the night took (1 +
	// the times it continued as new); 0 in results of older nights.
	Runs int `json:"runs,omitempty"`
	// Recipes are the night's recipes at its end (so far, while it runs):
	// its seed and every host's proofs and failures, in List's order (by
	// rule, key, rank). Empty for nights started before recipes.
	Recipes []nightshift.Recipe `json:"recipes,omitempty"`
}

// hostWorkflowID is the workflow id of host's workflow in night.
func hostWorkflowID(night, host string) string { return night + "/" + host }

// NightStatus is what statusQuery answers.
type NightStatus struct {
	Name     string                        `json:"name"`
	Total    int                           `json:"total"`    // rules × hosts
	Finished int                           `json:"finished"` // tasks ended
	Hosts    map[string]HostState          `json:"hosts"`    // host → its state
	Outcomes map[nightshift.RuleStatus]int `json:"outcomes"` // rule outcome → tasks
}

// HostState is where a host of a night is.
type HostState string

// The host states.
const (
	HostWaiting     HostState = "waiting"     // not started yet (statusQuery while the night runs)
	HostNotStarted  HostState = "not started" // never started (StatusOf a night's result)
	HostRunning     HostState = "running"     // its host workflow runs
	HostDone        HostState = "done"        // its host workflow ended
	HostUnreachable HostState = "unreachable" // it stopped answering
	HostStopped     HostState = "stopped"     // its work ended early (model server down, night cancelled)
)

// stateOf is the state of a host whose workflow ended with hr.
func stateOf(hr HostResult) HostState {
	switch {
	case hr.Unreachable != "":
		return HostUnreachable
	case hr.Stopped != "":
		return HostStopped
	}
	return HostDone
}
