package chattemplate

// qwen25DefaultSystem is the system prompt the Qwen2.5 template supplies when
// the conversation does not start with a system message.
const qwen25DefaultSystem = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

// renderQwen25 is the Qwen2.5 Instruct chat_template
// (served/models/qwen2.5/tokenizer_config.json), statement for statement.
func renderQwen25(w *writer, msgs []message, tools []string, opt Options) {
	system := qwen25DefaultSystem
	if msgs[0].role == roleSystem {
		system = msgs[0].content
	}
	if len(tools) > 0 {
		w.str("<|im_start|>system\n")
		w.str(system)
		w.str("\n\n")
		w.tools(tools)
	} else {
		w.turn(roleSystem, system)
	}
	for i := range msgs {
		w.start(i)
		m := &msgs[i]
		switch {
		case m.role == roleUser || (m.role == roleSystem && i > 0) || (m.role == roleAssistant && len(m.toolCalls) == 0):
			w.turn(m.role, m.content)
		case m.role == roleAssistant:
			w.str("<|im_start|>assistant")
			if m.content != "" {
				w.byte('\n')
				w.str(m.content)
			}
			for k := range m.toolCalls {
				tc := &m.toolCalls[k]
				w.byte('\n')
				w.str(toolCallOpen)
				w.str(tc.name)
				w.str(toolCallArgs)
				w.args(tc) // tool_call.arguments | tojson
				w.str(toolCallClose)
			}
			w.str(imEnd)
		case m.role == roleTool:
			w.toolResponse(msgs, i)
		}
	}
	if opt.AddGenerationPrompt {
		w.str(generationOpen)
	}
}
