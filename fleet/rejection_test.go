package fleet

import (
	"errors"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
)

// TestRejection: a model-call failure comes back to the workflow as the
// server's typed answer when it was one, as a plain error when it was not,
// and typed with an unknown status when recorded without details.
func TestRejection(t *testing.T) {
	param := "input_tokens"
	tests := []struct {
		name    string
		details []any
		typed   bool
		status  int
	}{
		{"the server's answer", []any{modelRejection{Server: true, Status: 400, StatusText: "400 Bad Request", Type: "BadRequestError", Param: &param}}, true, 400},
		{"not the server's JSON", []any{modelRejection{}}, false, 0},
		{"recorded without details", nil, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ae := temporal.NewNonRetryableApplicationError("too long", errTypeModelRejected, nil, tt.details...)
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(ae, &appErr))
			err := rejection(appErr)
			var apiErr *openai.APIError
			require.Equal(t, tt.typed, errors.As(err, &apiErr), "typed: %T", err)
			if !tt.typed {
				assert.EqualError(t, err, "too long")
				return
			}
			assert.Equal(t, "too long", apiErr.Message)
			assert.Equal(t, tt.status, apiErr.HTTPStatusCode)
			if tt.status != 0 {
				assert.Equal(t, &param, apiErr.Param)
				assert.Equal(t, "BadRequestError", apiErr.Type)
			}
		})
	}
}
