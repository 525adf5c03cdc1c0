package chattemplate

import "strings"

// renderQwen3 is the Qwen3 chat_template
// (served/models/qwen3/tokenizer_config.json), statement for statement.
func renderQwen3(w *writer, msgs []message, tools []string, opt Options) {
	if len(tools) > 0 {
		w.str("<|im_start|>system\n")
		if msgs[0].role == roleSystem {
			w.str(msgs[0].content)
			w.str("\n\n")
		}
		w.tools(tools)
	} else if msgs[0].role == roleSystem {
		w.turn(roleSystem, msgs[0].content)
	}

	// ns.last_query_index: the last user message that is not a wrapped tool
	// response; len-1 when there is none.
	lastQuery := len(msgs) - 1
	for i := len(msgs) - 1; i >= 0; i-- {
		m := &msgs[i]
		if m.role == roleUser && !(strings.HasPrefix(m.content, "<tool_response>") && strings.HasSuffix(m.content, "</tool_response>")) {
			lastQuery = i
			break
		}
	}

	last := len(msgs) - 1
	for i := range msgs {
		w.start(i)
		m := &msgs[i]
		switch {
		case m.role == roleUser || (m.role == roleSystem && i > 0):
			w.turn(m.role, m.content)
		case m.role == roleAssistant:
			// vLLM never defines message.reasoning_content for a go-openai
			// request, so the template's else branch splits the content.
			content, reasoning := m.content, ""
			if strings.Contains(m.content, "</think>") {
				parts := strings.Split(m.content, "</think>")
				content = strings.TrimLeft(parts[len(parts)-1], "\n")
				before := strings.Split(strings.TrimRight(parts[0], "\n"), "<think>")
				reasoning = strings.TrimLeft(before[len(before)-1], "\n")
			}
			w.str("<|im_start|>assistant\n")
			if i > lastQuery && (i == last || reasoning != "") {
				w.str("<think>\n")
				w.str(strings.Trim(reasoning, "\n"))
				w.str("\n</think>\n\n")
				w.str(strings.TrimLeft(content, "\n"))
			} else {
				w.str(content)
			}
			for k := range m.toolCalls {
				if k > 0 || content != "" {
					w.byte('\n')
				}
				tc := &m.toolCalls[k]
				w.str(toolCallOpen)
				w.str(tc.name)
				w.str(toolCallArgs)
				if tc.isString {
					w.str(tc.text) // `is string`: printed as is
				} else {
					w.args(tc)
				}
				w.str(toolCallClose)
			}
			w.str(imEnd)
		case m.role == roleTool:
			w.toolResponse(msgs, i)
		}
	}
	if opt.AddGenerationPrompt {
		w.str(generationOpen)
		if opt.EnableThinking != nil && !*opt.EnableThinking {
			w.str("<think>\n\n</think>\n\n")
		}
	}
}
