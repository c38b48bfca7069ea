package striped

import "fmt"

// LayoutError reports a failure to set or read a file's striping. It
// unwraps to the errno.
type LayoutError struct {
	FS      string // the driver: "lustre", "beegfs"
	Op      string // the file system's name of the step: "setstripe", "mkfile", ...
	Path    string
	Request string // for steps that set a layout: what was asked, in the file system's words
	Reason  string // extra explanation, may be empty
	Err     error
}

func (e *LayoutError) Error() string {
	msg := fmt.Sprintf("%s %s %s", e.FS, e.Op, e.Path)
	if e.Request != "" {
		msg += " (" + e.Request + ")"
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg + ": " + e.Err.Error()
}

func (e *LayoutError) Unwrap() error { return e.Err }

// Requested describes one requested value for LayoutError.Request: "name N",
// or "name default" when v is 0 or less (the file-system default).
func Requested(name string, v int64) string {
	if v <= 0 {
		return name + " default"
	}
	return fmt.Sprintf("%s %d", name, v)
}
