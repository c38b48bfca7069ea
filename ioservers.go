package collio

import (
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/ioserver"
)

// IOServerStats counts what the I/O servers' Compactors saved.
type IOServerStats struct {
	Merged  int64 // writes joined to an adjacent or overlapping queued write
	Morphed int64 // queued bytes replaced by newer writes, never written
	Stolen  int64 // reads served fully or partly from the queues
}

// SplitIOServers makes some ranks of c dedicated I/O servers (collective
// on c). n > 0 is their number; n == 0 takes collio_io_servers from h,
// else from the environment (COLLIO_IO_SERVERS), a count or a percentage
// such as "1%". The servers are spread over the nodes.
//
// On compute ranks it returns the compute communicator: files opened on it
// hand every write to a server (chosen by the file's stripe or block) and
// the call returns once the server has the data; reads see data still
// queued; Sync and Close wait until every byte is on the file system and
// return any write error on every rank. On server ranks it serves until
// the compute ranks call StopIOServers, then returns nil and a nil error:
// a server rank then goes on to finalise. With no servers it returns c.
// collio_io_server_buffer (or COLLIO_IO_SERVER_BUFFER) bounds each
// server's memory.
func SplitIOServers(c Comm, n int, h Hints) (Comm, error) {
	out, err := ioserver.SplitHints(c, n, h)
	if err != nil {
		rank := -1
		if c != nil {
			rank = c.Rank()
		}
		return nil, ioerr.Wrap(err, "split_io_servers", "", rank)
	}
	return out, nil
}

// StopIOServers ends the I/O servers of a compute communicator from
// SplitIOServers (collective on it), once the servers have written
// everything; every compute rank returns the same error, the first write
// error of files the servers still had open.
func StopIOServers(c Comm) error {
	if err := ioserver.Stop(c); err != nil {
		return ioerr.Wrap(err, "stop_io_servers", "", c.Rank())
	}
	return nil
}

// IOServerCounts returns the Compactor counts summed over the servers of a
// compute communicator from SplitIOServers (not collective).
func IOServerCounts(c Comm) (IOServerStats, error) {
	s, ok := ioserver.SessionOf(c)
	if !ok {
		return IOServerStats{}, ioerr.New(ioerr.ErrArg, "io_server_counts", "the communicator has no I/O servers (not from SplitIOServers)")
	}
	st, err := s.Stats()
	if err != nil {
		return IOServerStats{}, ioerr.Wrap(err, "io_server_counts", "", c.Rank())
	}
	return IOServerStats{Merged: st.Merged, Morphed: st.Morphed, Stolen: st.Stolen}, nil
}
