package worker

// Observers is an Observer that passes each event to each of its observers
// in order, skipping nil ones, so a caller can combine optional observers
// without checking each for nil. Like every Observer it is called from the
// goroutine running Fix; it adds no locking of its own.
type Observers []Observer

// Observe passes e to each non-nil observer in order.
func (os Observers) Observe(e Event) {
	for _, o := range os {
		if o != nil {
			o.Observe(e)
		}
	}
}
