-- schema version 3, application_id 0x4e534a4c

-- index commands_one_started
CREATE UNIQUE INDEX commands_one_started ON commands(task_id) WHERE state = 'started';

-- index steps_by_run
CREATE INDEX steps_by_run ON steps(run_id, id);

-- index steps_by_task
CREATE INDEX steps_by_task ON steps(task_id, id);

-- table attempts
CREATE TABLE attempts (
	step_id       INTEGER PRIMARY KEY REFERENCES steps(id) ON DELETE CASCADE,
	check_status  TEXT    NOT NULL,
	prompt_tokens INTEGER NOT NULL,
	limit_tokens  INTEGER NOT NULL
);

-- table checks
CREATE TABLE checks (
	step_id     INTEGER PRIMARY KEY REFERENCES steps(id) ON DELETE CASCADE,
	status      TEXT    NOT NULL,
	exit_code   INTEGER NOT NULL,
	output      TEXT    NOT NULL,
	detail      TEXT    NOT NULL,
	duration_ns INTEGER NOT NULL
);

-- table commands
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
, evidence TEXT NOT NULL DEFAULT '');

-- table distillations
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

-- table events
CREATE TABLE events (
	step_id INTEGER PRIMARY KEY REFERENCES steps(id) ON DELETE CASCADE,
	name    TEXT    NOT NULL,
	payload TEXT    NOT NULL CHECK (json_valid(payload))
);

-- table lines
CREATE TABLE lines (
	step_id INTEGER NOT NULL REFERENCES distillations(step_id) ON DELETE CASCADE,
	idx     INTEGER NOT NULL,
	text    TEXT    NOT NULL,
	PRIMARY KEY (step_id, idx)
) WITHOUT ROWID;

-- table model_calls
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
, usage_prompt INTEGER NOT NULL DEFAULT 0, cached_tokens INTEGER NOT NULL DEFAULT 0);

-- table runs
CREATE TABLE runs (
	id         INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL DEFAULT '',
	config     TEXT    NOT NULL DEFAULT 'null' CHECK (json_valid(config)),
	status     TEXT    NOT NULL DEFAULT 'running',
	resumes    INTEGER NOT NULL DEFAULT 0,
	started_ns INTEGER NOT NULL,
	ended_ns   INTEGER
);

-- table steps
CREATE TABLE steps (
	id      INTEGER PRIMARY KEY AUTOINCREMENT,
	run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	task_id INTEGER REFERENCES tasks(id) ON DELETE CASCADE,
	attempt INTEGER NOT NULL DEFAULT 0,
	kind    TEXT    NOT NULL CHECK (kind IN ('model_call', 'command', 'check', 'attempt', 'distill', 'event')),
	at_ns   INTEGER NOT NULL
);

-- table tasks
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

-- view command_log
CREATE VIEW command_log AS
SELECT s.run_id AS run, c.task_id AS task, t.rule, t.host, s.attempt, c.step_id AS command_id,
	c.state, c.action, c.exit_code, c.signal, c.timed_out, round(c.duration_ns / 1e9, 3) AS seconds,
	c.command, c.detail, c.error
FROM commands c JOIN steps s ON s.id = c.step_id JOIN tasks t ON t.id = c.task_id;

-- view pending_commands
CREATE VIEW pending_commands AS
SELECT * FROM command_log WHERE state = 'started';

-- view run_summary
CREATE VIEW run_summary AS
SELECT r.id AS run, r.name, r.status, r.resumes,
	datetime(r.started_ns / 1000000000, 'unixepoch') AS started,
	datetime(r.ended_ns / 1000000000, 'unixepoch') AS ended,
	(SELECT count(*) FROM tasks t WHERE t.run_id = r.id) AS tasks,
	(SELECT count(*) FROM tasks t WHERE t.run_id = r.id AND t.finished) AS finished,
	(SELECT count(*) FROM tasks t WHERE t.run_id = r.id AND t.status IN ('fixed', 'compliant')) AS fixed
FROM runs r;

-- view task_summary
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

-- view trials
CREATE VIEW trials AS
SELECT s.run_id AS run, c.task_id AS task, t.rule, t.host, s.attempt, c.step_id AS command_id,
	json_extract(c.evidence, '$.trial') AS trial, json_extract(c.evidence, '$.verdict') AS verdict, c.command
FROM commands c JOIN steps s ON s.id = c.step_id JOIN tasks t ON t.id = c.task_id
WHERE c.evidence <> '';
