package nightshift

// The names of the tools the worker offers the model, defined once: the
// worker's tool definitions, the distiller's summaries, the lessons recorder
// and the simulator's scripted policies all use these.
const (
	// ToolApply runs one shell command on the target host; its arguments
	// are {"command": string, "reason"?: string}.
	ToolApply = "ssh_apply"
	// ToolGiveUp ends the rule because it cannot be fixed on this host; its
	// arguments are {"reason": string}.
	ToolGiveUp = "give_up"
)
