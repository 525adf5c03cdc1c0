package retry

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
)

// RetryableStatus reports whether an HTTP status is worth another try: a
// 5xx answer or 429 Too Many Requests.
func RetryableStatus(code int) bool { return code >= 500 || code == 429 }

// NetworkError reports whether err is a transport failure worth another try:
// a refused, reset or dropped connection (EOF), a timeout, or any net.Error.
func NetworkError(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr)
}
