package ioerr

// remote is an error that happened on another rank, as seen by the ranks
// that only learned of it: the same class and the same text.
type remote struct {
	class *Class
	text  string
}

func (r *remote) Error() string        { return r.text }
func (r *remote) Is(target error) bool { return target == r.class }
func (r *remote) Unwrap() error        { return r.class }
func (r *remote) ErrorClass() *Class   { return r.class }

// Remote returns an error with the given class and text: how an error
// that happened on another rank is seen by the ranks that learned of it.
func Remote(c *Class, text string) error { return &remote{class: c, text: text} }
