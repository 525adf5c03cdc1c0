package journal

// applicationID marks a Nightshift journal in the SQLite header ("NSJL").
const applicationID = 0x4e534a4c

// migrations[i] brings the schema from version i to i+1. Append only: a
// released migration is never edited. SchemaVersion is len(migrations).
var migrations = []string{
	// 1: the first schema.
	`
CREATE TABLE runs (
	id         INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL DEFAULT '',
	config     TEXT    NOT NULL DEFAULT 'null' CHECK (json_valid(config)),
	status     TEXT    NOT NULL DEFAULT 'running',
	resumes    INTEGER NOT NULL DEFAULT 0,
	started_ns INTEGER NOT NULL,
	ended_ns   INTEGER
);
CREATE TABLE tasks (
	id         INTEGER PRIMARY KEY,
	run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	rule       TEXT    NOT NULL,
	host       TEXT    NOT NULL,
	finished   INTEGER NOT NULL DEFAULT 0 CHECK (finished IN (0, 1)),
	status     TEXT    NOT NULL DEFAULT 'running',
	reason     TEXT    NOT NULL DEFAULT '',
	attempts   INTEGER NOT NULL DEFAULT 0,
	outcome    TEXT    NOT NULL DEFAULT 'null' CHECK (json_valid(outcome)),
	started_ns INTEGER NOT NULL,
	ended_ns   INTEGER,
	UNIQUE (run_id, rule, host)
);
CREATE TABLE steps (
	id      INTEGER PRIMARY KEY AUTOINCREMENT,
	run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	task_id INTEGER REFERENCES tasks(id) ON DELETE CASCADE,
	attempt INTEGER NOT NULL DEFAULT 0,
	kind    TEXT    NOT NULL CHECK (kind IN ('model_call', 'command', 'check', 'attempt', 'distill', 'event')),
	at_ns   INTEGER NOT NULL
);
CREATE INDEX steps_by_task ON steps(task_id, id);
CREATE INDEX steps_by_run ON steps(run_id, id);
CREATE TABLE model_calls (
	step_id       INTEGER PRIMARY KEY REFERENCES steps(id) ON DELETE CASCADE,
	system        INTEGER NOT NULL,
	history       INTEGER NOT NULL,
	current       INTEGER NOT NULL,
	prompt        INTEGER NOT NULL,
	reserve       INTEGER NOT NULL,
	total         INTEGER NOT NULL,
	limit_tokens  INTEGER NOT NULL,
	soft          INTEGER NOT NULL,
	window        INTEGER NOT NULL,
	messages      INTEGER NOT NULL,
	max_tokens    INTEGER NOT NULL,
	duration_ns   INTEGER NOT NULL,
	rejected      INTEGER NOT NULL,
	server_tokens INTEGER NOT NULL,
	error         TEXT    NOT NULL
);
CREATE TABLE commands (
	step_id     INTEGER PRIMARY KEY REFERENCES steps(id) ON DELETE CASCADE,
	task_id     INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	command     TEXT    NOT NULL,
	state       TEXT    NOT NULL CHECK (state IN ('started', 'finished', 'unknown', 'skipped')),
	action      TEXT    NOT NULL,
	exit_code   INTEGER NOT NULL DEFAULT -1,
	signal      TEXT    NOT NULL DEFAULT '',
	timed_out   INTEGER NOT NULL DEFAULT 0,
	canceled    INTEGER NOT NULL DEFAULT 0,
	stdout      TEXT    NOT NULL DEFAULT '',
	stderr      TEXT    NOT NULL DEFAULT '',
	stdout_cut  INTEGER NOT NULL DEFAULT 0,
	stderr_cut  INTEGER NOT NULL DEFAULT 0,
	duration_ns INTEGER NOT NULL DEFAULT 0,
	detail      TEXT    NOT NULL DEFAULT '',
	error       TEXT    NOT NULL DEFAULT '',
	finished_ns INTEGER
);
CREATE UNIQUE INDEX commands_one_started ON commands(task_id) WHERE state = 'started';
CREATE TABLE checks (
	step_id     INTEGER PRIMARY KEY REFERENCES steps(id) ON DELETE CASCADE,
	status      TEXT    NOT NULL,
	exit_code   INTEGER NOT NULL,
	output      TEXT    NOT NULL,
	detail      TEXT    NOT NULL,
	duration_ns INTEGER NOT NULL
);
CREATE TABLE attempts (
	step_id       INTEGER PRIMARY KEY REFERENCES steps(id) ON DELETE CASCADE,
	check_status  TEXT    NOT NULL,
	prompt_tokens INTEGER NOT NULL,
	limit_tokens  INTEGER NOT NULL
);
CREATE TABLE distillations (
	step_id       INTEGER PRIMARY KEY REFERENCES steps(id) ON DELETE CASCADE,
	turn          INTEGER NOT NULL,
	from_turn     INTEGER NOT NULL,
	to_turn       INTEGER NOT NULL,
	tokens_before INTEGER NOT NULL,
	tokens_after  INTEGER NOT NULL,
	n_lines       INTEGER NOT NULL,
	messages      TEXT    NOT NULL CHECK (json_valid(messages))
);
CREATE TABLE lines (
	step_id INTEGER NOT NULL REFERENCES distillations(step_id) ON DELETE CASCADE,
	idx     INTEGER NOT NULL,
	text    TEXT    NOT NULL,
	PRIMARY KEY (step_id, idx)
) WITHOUT ROWID;
CREATE TABLE events (
	step_id INTEGER PRIMARY KEY REFERENCES steps(id) ON DELETE CASCADE,
	name    TEXT    NOT NULL,
	payload TEXT    NOT NULL CHECK (json_valid(payload))
);

CREATE VIEW run_summary AS
SELECT r.id AS run, r.name, r.status, r.resumes,
	datetime(r.started_ns / 1000000000, 'unixepoch') AS started,
	datetime(r.ended_ns / 1000000000, 'unixepoch') AS ended,
	(SELECT count(*) FROM tasks t WHERE t.run_id = r.id) AS tasks,
	(SELECT count(*) FROM tasks t WHERE t.run_id = r.id AND t.finished) AS finished,
	(SELECT count(*) FROM tasks t WHERE t.run_id = r.id AND t.status IN ('fixed', 'compliant')) AS fixed
FROM runs r;

CREATE VIEW task_summary AS
SELECT t.run_id AS run, t.id AS task, t.rule, t.host, t.status, t.attempts,
	(SELECT count(*) FROM steps s WHERE s.task_id = t.id AND s.kind = 'model_call') AS model_calls,
	(SELECT count(*) FROM commands c WHERE c.task_id = t.id AND c.state <> 'skipped') AS commands,
	(SELECT count(*) FROM commands c WHERE c.task_id = t.id AND c.state IN ('started', 'unknown')) AS unknown_commands,
	(SELECT max(m.prompt) FROM model_calls m JOIN steps s ON s.id = m.step_id WHERE s.task_id = t.id) AS max_prompt_tokens,
	round((coalesce(t.ended_ns, (SELECT max(s.at_ns) FROM steps s WHERE s.task_id = t.id), t.started_ns) - t.started_ns) / 1e9, 3) AS seconds,
	t.reason
FROM tasks t;

CREATE VIEW command_log AS
SELECT s.run_id AS run, c.task_id AS task, t.rule, t.host, s.attempt, c.step_id AS command_id,
	c.state, c.action, c.exit_code, c.signal, c.timed_out, round(c.duration_ns / 1e9, 3) AS seconds,
	c.command, c.detail, c.error
FROM commands c JOIN steps s ON s.id = c.step_id JOIN tasks t ON t.id = c.task_id;

CREATE VIEW pending_commands AS
SELECT * FROM command_log WHERE state = 'started';
`,
	// 2: the server's usage of each model call — prompt tokens and how many
	// of them its prefix cache served (vLLM's
	// usage.prompt_tokens_details.cached_tokens) — and their sums per task.
	`
ALTER TABLE model_calls ADD COLUMN usage_prompt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE model_calls ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
DROP VIEW task_summary;
CREATE VIEW task_summary AS
SELECT t.run_id AS run, t.id AS task, t.rule, t.host, t.status, t.attempts,
	(SELECT count(*) FROM steps s WHERE s.task_id = t.id AND s.kind = 'model_call') AS model_calls,
	(SELECT count(*) FROM commands c WHERE c.task_id = t.id AND c.state <> 'skipped') AS commands,
	(SELECT count(*) FROM commands c WHERE c.task_id = t.id AND c.state IN ('started', 'unknown')) AS unknown_commands,
	(SELECT max(m.prompt) FROM model_calls m JOIN steps s ON s.id = m.step_id WHERE s.task_id = t.id) AS max_prompt_tokens,
	(SELECT sum(m.usage_prompt) FROM model_calls m JOIN steps s ON s.id = m.step_id WHERE s.task_id = t.id) AS prompt_tokens,
	(SELECT sum(m.cached_tokens) FROM model_calls m JOIN steps s ON s.id = m.step_id WHERE s.task_id = t.id) AS cached_tokens,
	round((coalesce(t.ended_ns, (SELECT max(s.at_ns) FROM steps s WHERE s.task_id = t.id), t.started_ns) - t.started_ns) / 1e9, 3) AS seconds,
	t.reason
FROM tasks t;
`,
	// 3: what each command did in the recording sandbox and what became of
	// it (nightshift.Evidence as JSON; '' without a sandbox), and the
	// committed sandbox trials of a run, for worker undo.
	`
ALTER TABLE commands ADD COLUMN evidence TEXT NOT NULL DEFAULT '';
CREATE VIEW trials AS
SELECT s.run_id AS run, c.task_id AS task, t.rule, t.host, s.attempt, c.step_id AS command_id,
	json_extract(c.evidence, '$.trial') AS trial, json_extract(c.evidence, '$.verdict') AS verdict, c.command
FROM commands c JOIN steps s ON s.id = c.step_id JOIN tasks t ON t.id = c.task_id
WHERE c.evidence <> '';
`,
}

// SchemaVersion is the journal schema this package writes (len(migrations)).
const SchemaVersion = 3
