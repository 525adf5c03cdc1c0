package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nightshift-dev/nightshift"
)

// Steps returns every step of a task in the order recorded.
func (j *Journal) Steps(ctx context.Context, task TaskID) ([]Step, error) {
	what := fmt.Sprintf("read steps of task %d", task)
	rows, err := j.r.QueryContext(ctx, `SELECT s.id, s.kind, s.attempt, s.at_ns,
		m.system, m.history, m.current, m.prompt, m.reserve, m.total, m.limit_tokens, m.soft, m.window, m.messages,
		m.max_tokens, m.duration_ns, m.rejected, m.server_tokens, m.error, m.usage_prompt, m.cached_tokens,
		k.status, k.exit_code, k.output, k.detail, k.duration_ns,
		a.check_status, a.prompt_tokens, a.limit_tokens,
		d.turn, d.from_turn, d.to_turn, d.tokens_before, d.tokens_after, d.n_lines, d.messages,
		e.name, e.payload
		FROM steps s
		LEFT JOIN model_calls m ON m.step_id = s.id
		LEFT JOIN checks k ON k.step_id = s.id
		LEFT JOIN attempts a ON a.step_id = s.id
		LEFT JOIN distillations d ON d.step_id = s.id
		LEFT JOIN events e ON e.step_id = s.id
		WHERE s.task_id = ? ORDER BY s.id`, task)
	if err != nil {
		return nil, j.read(what, err)
	}
	var out []Step
	for rows.Next() {
		var s Step
		var at int64
		var m ModelCall
		var mc [16]sql.NullInt64
		var mErr, kStatus, kOutput, kDetail, aCheck, dMsgs, eName, ePayload sql.NullString
		var kc [2]sql.NullInt64
		var ac [2]sql.NullInt64
		var dc [6]sql.NullInt64
		if err := rows.Scan(&s.ID, &s.Kind, &s.Attempt, &at,
			&mc[0], &mc[1], &mc[2], &mc[3], &mc[4], &mc[5], &mc[6], &mc[7], &mc[8], &mc[9], &mc[10], &mc[11], &mc[12], &mc[13], &mErr, &mc[14], &mc[15],
			&kStatus, &kc[0], &kOutput, &kDetail, &kc[1],
			&aCheck, &ac[0], &ac[1],
			&dc[0], &dc[1], &dc[2], &dc[3], &dc[4], &dc[5], &dMsgs,
			&eName, &ePayload); err != nil {
			rows.Close()
			return nil, j.read(what, err)
		}
		s.At = time.Unix(0, at).UTC()
		i := func(v sql.NullInt64) int { return int(v.Int64) }
		switch s.Kind {
		case StepModelCall:
			a := &m.Assessment
			a.System, a.History, a.Current, a.Prompt, a.Reserve = i(mc[0]), i(mc[1]), i(mc[2]), i(mc[3]), i(mc[4])
			a.Total, a.Limit, a.Soft, a.Window, a.Messages = i(mc[5]), i(mc[6]), i(mc[7]), i(mc[8]), i(mc[9])
			m.Attempt, m.MaxTokens, m.Duration = s.Attempt, i(mc[10]), time.Duration(mc[11].Int64)
			m.Rejected, m.ServerTokens, m.Error = mc[12].Int64 != 0, i(mc[13]), mErr.String
			m.UsagePrompt, m.CachedTokens = i(mc[14]), i(mc[15])
			s.ModelCall = &m
		case StepCheck:
			s.Check = &CheckRecord{Attempt: s.Attempt, ExitCode: i(kc[0]), Output: kOutput.String,
				Detail: kDetail.String, Duration: time.Duration(kc[1].Int64)}
			if err := s.Check.Status.UnmarshalText([]byte(kStatus.String)); err != nil || s.Check.Status == nightshift.CheckNotRun {
				rows.Close()
				return nil, fmt.Errorf("%s: check %d: status %w", what, s.ID, badValue(s.Check.Status))
			}
		case StepAttempt:
			s.AttemptEnd = &AttemptEnd{Attempt: s.Attempt, PromptTokens: i(ac[0]), Limit: i(ac[1])}
			if err := parseAttemptCheck(s.AttemptEnd, aCheck.String); err != nil {
				rows.Close()
				return nil, fmt.Errorf("%s: attempt end %d: %w", what, s.ID, err)
			}
		case StepDistill:
			d := &Distillation{Attempt: s.Attempt, Turn: i(dc[0]), FromTurn: i(dc[1]), ToTurn: i(dc[2]),
				TokensBefore: i(dc[3]), TokensAfter: i(dc[4]), Lines: make([]string, 0, i(dc[5]))}
			if err := json.Unmarshal([]byte(dMsgs.String), &d.Messages); err != nil {
				rows.Close()
				return nil, fmt.Errorf("%s: distillation %d messages: %w", what, s.ID, err)
			}
			s.Distillation = d
		case StepEvent:
			s.Event = &Event{Attempt: s.Attempt, Name: eName.String, Payload: []byte(ePayload.String)}
		default:
			// StepCommand: its command row is read below, by step id
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return nil, j.read(what, err)
	}
	rows.Close()
	// Details with rows of their own: commands and distilled lines.
	cmds, err := j.commands(ctx, what, "c.task_id = ?", task)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*Command, len(cmds))
	for k := range cmds {
		byID[int64(cmds[k].ID)] = &cmds[k]
	}
	lines, err := j.lines(ctx, what, task)
	if err != nil {
		return nil, err
	}
	for k := range out {
		s := &out[k]
		switch s.Kind {
		case StepCommand:
			s.Command = byID[s.ID]
			if s.Command == nil {
				return nil, fmt.Errorf("%s: step %d has no command row", what, s.ID)
			}
		case StepDistill:
			s.Distillation.Lines = append(s.Distillation.Lines, lines[s.ID]...)
			if len(s.Distillation.Lines) != cap(s.Distillation.Lines) {
				return nil, fmt.Errorf("%s: distillation %d has %d of its %d lines", what, s.ID, len(s.Distillation.Lines), cap(s.Distillation.Lines))
			}
		default:
			// the other kinds were read with the step row
		}
	}
	return out, nil
}

func (j *Journal) lines(ctx context.Context, what string, task TaskID) (map[int64][]string, error) {
	rows, err := j.r.QueryContext(ctx, `SELECT l.step_id, l.text FROM lines l JOIN steps s ON s.id = l.step_id
		WHERE s.task_id = ? ORDER BY l.step_id, l.idx`, task)
	if err != nil {
		return nil, j.read(what, err)
	}
	defer rows.Close()
	out := map[int64][]string{}
	for rows.Next() {
		var id int64
		var text string
		if err := rows.Scan(&id, &text); err != nil {
			return nil, j.read(what, err)
		}
		out[id] = append(out[id], text)
	}
	return out, j.read(what, rows.Err())
}
