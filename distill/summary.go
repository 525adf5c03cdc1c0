package distill

import (
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultCommandTokens = 40
	DefaultMaxLineTokens = 160
	// noteTokens bounds a ban pattern, a rejection note or a give-up reason
	// quoted in a line.
	noteTokens = 16
	// maxTargetsShown bounds the targets a step names in a line.
	maxTargetsShown = 3
)

// Config configures a Distiller. The zero value is usable.
type Config struct {
	// Counter counts tokens for the budgets below; pass the model's
	// tokenizer. Nil means an estimate of one token per three bytes.
	Counter Counter
	// CommandTokens is the budget of an abbreviated command. Zero means
	// DefaultCommandTokens (40); values below 4 are raised to 4.
	CommandTokens int
	// MaxLineTokens bounds a whole line. Zero means DefaultMaxLineTokens
	// (160); values below 16 are raised to 16. Lines over it are shortened
	// step by step (fewer targets and classes, shorter error and re-check
	// lines, shorter commands, fewer steps) and, as a last resort, cut in
	// the middle.
	MaxLineTokens int
}

// Distiller writes deterministic one-line summaries of turns. It is
// immutable and safe for concurrent use when its Counter is.
type Distiller struct {
	count         func(string) int
	commandTokens int
	maxLineTokens int
}

// New returns a Distiller with cfg's zero fields defaulted.
func New(cfg Config) *Distiller {
	c := cfg.Counter
	if c == nil {
		c = approxCounter{}
	}
	d := &Distiller{count: c.Count, commandTokens: cfg.CommandTokens, maxLineTokens: cfg.MaxLineTokens}
	if d.commandTokens == 0 {
		d.commandTokens = DefaultCommandTokens
	}
	d.commandTokens = max(d.commandTokens, 4)
	if d.maxLineTokens == 0 {
		d.maxLineTokens = DefaultMaxLineTokens
	}
	d.maxLineTokens = max(d.maxLineTokens, 16)
	return d
}

// StepSummary holds the facts of one tool call that a line shows.
type StepSummary struct {
	Tool   string
	Action nightshift.Action
	// Program is the head of the command used to group similar steps: the
	// program of its first simple command, with the subcommand for package
	// managers and systemctl ("sed", "apt-get install", "systemctl restart").
	Program string
	// Gist is Program with the first command's targets, e.g. "sed on
	// /etc/aide.conf" or "apt-get install aide": the key Merge counts.
	Gist string
	// Command is the command on one line, abbreviated to the command budget.
	Command string
	// Full is the command on one line, unabbreviated (heredoc bodies left out).
	Full string
	// Targets are the files, units, packages or keys the command touches.
	Targets  []string
	ExitCode int
	Signal   string
	// Classes are the error classes found in the output.
	Classes []Class
	// Error is the output's most informative line (ErrorLine), "" when
	// none qualifies.
	Error string
	// Changed are the files the change records say the command changed,
	// written "path" (modified), "path (created)" or "path (deleted)".
	Changed []string
	// Note is the ban pattern, the rejection note or the give-up reason,
	// abbreviated.
	Note string
	// head is how many words of Full abbreviation keeps (see headWords).
	head int
}

// Summary holds the facts of one turn, from which Line and Merge write.
type Summary struct {
	Turn  int
	Steps []StepSummary
	Check nightshift.CheckStatus
	// CheckLine is the decisive line of the re-check's output (CheckLine).
	CheckLine string
	GaveUp    bool
	line      string
}

// Summarize extracts the facts of a turn and writes its line within the
// line budget. It never fails; a turn with no tool call says so.
func (d *Distiller) Summarize(t Turn) Summary {
	s := Summary{Turn: t.Number, Check: t.Check, GaveUp: t.GaveUp}
	if t.Check != nightshift.CheckPass && t.Check != nightshift.CheckNotRun {
		s.CheckLine = CheckLine(t.CheckOutput)
	}
	for _, st := range t.Steps {
		s.Steps = append(s.Steps, d.step(st))
	}
	s.line = d.fit(s)
	return s
}

func (d *Distiller) step(st Step) StepSummary {
	ss := StepSummary{Tool: st.Tool, Action: st.Action, ExitCode: st.ExitCode, Signal: normSignal(st.Signal)}
	if ss.Tool == "" && st.Command != "" {
		ss.Tool = nightshift.ToolApply
	}
	if st.Command != "" {
		an := analyze(st.Command)
		ss.Full = oneLine(st.Command)
		var ts targetSet
		ts.analysis(an, 0)
		ss.Targets = ts.list
		ss.Program, ss.Gist = gist(an, leadProgram(st.Command))
		ss.head = headWords(an)
		ss.Command = d.abbreviate(ss.Full, ss.Targets, ss.head, d.commandTokens)
	}
	switch {
	case blocked(st.Action) || st.Action == nightshift.ActionMalformed:
		ss.Note = d.clip(oneLineText(st.Note), noteTokens)
	case ss.Tool == nightshift.ToolGiveUp:
		ss.Note = d.clip(oneLineText(st.Reason), noteTokens)
	}
	if st.Action.Ran() {
		code := st.ExitCode
		if st.Action != nightshift.ActionRan {
			code = 0
		}
		out := joinOutput(st.Stderr, st.Stdout)
		ss.Classes = ClassifyError(out, code)
		if st.Signal == "" || code != 0 {
			ss.Error = ErrorLine(out, code)
		}
	}
	for _, c := range st.Changes {
		p := oneLineText(c.Path)
		if c.Change != nightshift.ChangeModified {
			p += " (" + c.Change.String() + ")"
		}
		ss.Changed = append(ss.Changed, p)
	}
	return ss
}

func joinOutput(stderr, stdout string) string {
	switch {
	case stderr == "":
		return stdout
	case stdout == "":
		return stderr
	}
	return stderr + "\n" + stdout
}

func without(cs []Class, c Class) []Class {
	var out []Class
	for _, x := range cs {
		if x != c {
			out = append(out, x)
		}
	}
	return out
}

// normSignal writes a signal name as SIGNAME ("KILL", "9", "SIGKILL" →
// "SIGKILL" where known).
func normSignal(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	if s == "" {
		return ""
	}
	switch s {
	case "9":
		return "SIGKILL"
	case "15":
		return "SIGTERM"
	case "2":
		return "SIGINT"
	case "1":
		return "SIGHUP"
	case "6":
		return "SIGABRT"
	case "11":
		return "SIGSEGV"
	}
	if !strings.HasPrefix(s, "SIG") {
		s = "SIG" + s
	}
	return s
}

// Line returns the summary line, "[Turn N: …]", in the past tense. A
// Summary from Summarize returns the line written within its budget; a
// Summary built by hand is rendered in full.
func (s Summary) Line() string {
	if s.line != "" {
		return s.line
	}
	return render(s, fullLevel)
}

// Body returns the line without its "[Turn N: " prefix and "]" suffix: the
// facts of the turn, the same for every turn that ran the same command
// with the same outcome, error line and re-check line. Memories merge
// turns with equal bodies into one line (TurnsLine).
func (s Summary) Body() string {
	l := s.Line()
	if i := strings.Index(l, ": "); i >= 0 && strings.HasPrefix(l, "[Turn") {
		l = l[i+2:]
	}
	return strings.TrimSuffix(l, "]")
}

// level is how much of a summary a rendering shows.
type level struct {
	targets    int  // targets per step
	classes    int  // classes per step; -1 for all
	steps      int  // steps shown; -1 for all
	command    bool // show the abbreviated command (else the program only)
	errorBytes int  // bytes of a step's error line shown (0: none)
	checkBytes int  // bytes of the re-check line shown (0: none)
}

var fullLevel = level{targets: maxTargetsShown, classes: -1, steps: -1, command: true, errorBytes: errorLineBytes, checkBytes: checkLineBytes}

// checkLineBytes bounds the re-check's decisive line in a summary.
const checkLineBytes = 120

// fit renders s within the line budget, shortening step by step: fewer
// targets and classes, shorter error and re-check lines, the commands at
// half their budget, then programs instead of commands, fewer steps.
func (d *Distiller) fit(s Summary) string {
	levels := []level{
		fullLevel,
		{targets: 1, classes: 2, steps: -1, command: true, errorBytes: 120, checkBytes: 60},
		{targets: 1, classes: 1, steps: -1, command: true, errorBytes: 80, checkBytes: 40},
		{targets: 1, classes: 1, steps: -1, command: false, errorBytes: 80, checkBytes: 40},
		{targets: 0, classes: 1, steps: 3, command: false, errorBytes: 60, checkBytes: 0},
		{targets: 0, classes: 1, steps: 2, command: false, errorBytes: 0, checkBytes: 0},
	}
	var line string
	for i, lv := range levels {
		if i == 3 {
			// Before dropping commands, try them at half the budget.
			half := s
			half.Steps = append([]StepSummary(nil), s.Steps...)
			for j := range half.Steps {
				half.Steps[j].Command = d.abbreviate(half.Steps[j].Full, half.Steps[j].Targets, half.Steps[j].head, max(d.commandTokens/2, 4))
			}
			if l := render(half, levels[2]); d.count(l) <= d.maxLineTokens {
				return l
			}
		}
		line = render(s, lv)
		if d.count(line) <= d.maxLineTokens {
			return line
		}
	}
	return d.cutMiddle(line)
}

// cutMiddle shortens a line to the budget by cutting its middle, keeping the
// turn number at the start and the outcome at the end.
func (d *Distiller) cutMiddle(line string) string {
	r := []rune(line)
	lo, hi := 0, len(r)/2
	best := "[" + strings.SplitN(line, ":", 2)[0][1:] + ": …]"
	for lo <= hi {
		k := (lo + hi) / 2
		cand := string(r[:k]) + " … " + string(r[len(r)-k:])
		if d.count(cand) <= d.maxLineTokens {
			best, lo = cand, k+1
		} else {
			hi = k - 1
		}
	}
	return best
}

func render(s Summary, lv level) string {
	var b strings.Builder
	b.WriteString("[Turn ")
	b.WriteString(strconv.Itoa(s.Turn))
	b.WriteString(": ")
	b.WriteString(renderBody(s, lv))
	b.WriteByte(']')
	return b.String()
}

func renderBody(s Summary, lv level) string {
	var parts []string
	steps := s.Steps
	more := 0
	if lv.steps >= 0 && len(steps) > lv.steps {
		more = len(steps) - lv.steps
		steps = steps[:lv.steps]
	}
	gaveUp := false
	for _, st := range steps {
		parts = append(parts, stepPhrase(st, lv))
		if st.Tool == nightshift.ToolGiveUp {
			gaveUp = true
		}
	}
	if more > 0 {
		parts = append(parts, "and "+strconv.Itoa(more)+" more "+plural(more, "call", "calls"))
	}
	if s.GaveUp && !gaveUp {
		parts = append(parts, "gave up")
	}
	if len(parts) == 0 {
		parts = append(parts, "made no tool call")
	}
	if s.Check != nightshift.CheckNotRun {
		c := "re-check " + checkWord(s.Check)
		if s.CheckLine != "" && lv.checkBytes > 0 {
			c += ": " + quoteLine(s.CheckLine, lv.checkBytes)
		}
		parts = append(parts, c)
	}
	return strings.Join(parts, "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// stepPhrase writes one step in the past tense.
func stepPhrase(st StepSummary, lv level) string {
	cmd := st.Command
	if !lv.command && st.Program != "" {
		cmd = st.Program + " …"
	}
	quoted := CodeSpan(cmd)
	on := onTargets(hidden(st.Targets, cmd), lv.targets)
	if len(st.Changed) > 0 {
		on = changedList(st.Changed, max(lv.targets, 1))
	}
	switch {
	case st.Tool == nightshift.ToolGiveUp:
		if st.Note != "" {
			return "gave up (" + quoteLine(st.Note, 120) + ")"
		}
		return "gave up"
	case st.Action == nightshift.ActionMalformed:
		what := "a malformed " + orDefault(st.Tool, "tool") + " call"
		if st.Note != "" {
			return "rejected " + what + " (" + st.Note + ")"
		}
		return "rejected " + what
	case st.Tool != nightshift.ToolApply && st.Command == "":
		return "called " + st.Tool + outcome(st, lv)
	case blocked(st.Action):
		if st.Action == nightshift.ActionRefused {
			return "refused " + quoted + on + " (" + orDefault(st.Note, "repeat of a failed command") + ")"
		}
		if st.Note != "" {
			return "blocked " + quoted + on + " (ban pattern " + CodeSpan(st.Note) + ")"
		}
		return "blocked " + quoted + on + " (ban list)"
	case st.Action == nightshift.ActionTimedOut:
		return "timed out running " + quoted + on + errorPart(st, lv, " — ")
	case st.Action == nightshift.ActionUnknown:
		return "lost the connection running " + quoted + on + " — outcome unknown"
	}
	return "ran " + quoted + on + outcome(st, lv)
}

// changedList writes the files the change records name.
func changedList(files []string, n int) string {
	shown := files
	if len(shown) > n {
		shown = shown[:n]
	}
	s := " — changed " + strings.Join(shown, ", ")
	if extra := len(files) - len(shown); extra > 0 {
		s += " +" + strconv.Itoa(extra) + " more"
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func outcome(st StepSummary, lv level) string {
	var o string
	switch {
	case st.Signal != "":
		o = " — killed by " + st.Signal
	default:
		o = " — exit " + strconv.Itoa(st.ExitCode)
	}
	if st.Signal == "" && st.ExitCode == 0 && len(st.Classes) == 0 && (st.Error == "" || lv.errorBytes == 0) {
		return o
	}
	return o + errorPart(st, lv, ": ")
}

// errorPart writes a step's error line, quoted, or when it has none (or
// none is shown) its error classes.
func errorPart(st StepSummary, lv level, lead string) string {
	if st.Error != "" && lv.errorBytes > 0 {
		return lead + quoteLine(st.Error, lv.errorBytes)
	}
	cs := st.Classes
	if st.Signal != "" {
		cs = without(cs, classKilled) // the phrase already says so
	}
	return classList(cs, lv.classes, lead)
}

// quoteLine writes an output line in double quotes, cut in its middle to
// n bytes.
func quoteLine(s string, n int) string {
	return `"` + cutLine(oneLineText(s), n) + `"`
}

// CodeSpan writes a command so that it can be read back: between runs of
// backquotes longer than any run inside it (as Markdown code spans), with
// a space inside the fence when the command starts or ends with a
// backquote. An empty command is "“".
func CodeSpan(cmd string) string {
	longest, run := 0, 0
	for i := 0; i < len(cmd); i++ {
		if cmd[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(cmd, "`") || strings.HasSuffix(cmd, "`") {
		return fence + " " + cmd + " " + fence
	}
	return fence + cmd + fence
}

func classList(cs []Class, n int, lead string) string {
	if n >= 0 && len(cs) > n {
		cs = cs[:n]
	}
	if len(cs) == 0 {
		return ""
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = string(c)
	}
	return lead + strings.Join(parts, ", ")
}

// hidden returns the targets not shown in the displayed command.
func hidden(ts []string, cmd string) []string {
	var out []string
	for _, t := range ts {
		if !strings.Contains(cmd, t) {
			out = append(out, t)
		}
	}
	return out
}

func onTargets(ts []string, n int) string {
	if n <= 0 || len(ts) == 0 {
		return ""
	}
	shown := ts
	if len(shown) > n {
		shown = shown[:n]
	}
	s := " on " + strings.Join(shown, ", ")
	if extra := len(ts) - len(shown); extra > 0 {
		s += " +" + strconv.Itoa(extra) + " more"
	}
	return s
}

// oneLineText collapses whitespace.
func oneLineText(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
