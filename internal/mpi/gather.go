package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
// #include <sched.h>
// #include <string.h>
// static void collio_reverse(char *p, size_t n) {
// 	for (size_t i = 0, j = n; i + 1 < j; i++, j--) {
// 		char t = p[i]; p[i] = p[j - 1]; p[j - 1] = t;
// 	}
// }
// // Bruck's allgather of b bytes per rank, built in recv: round d (1, 2,
// // 4, ... below n) sends the first min(d, n-d) blocks to rank r-d and
// // receives as many from rank r+d behind them, so that block i is then
// // rank (r+i)'s; a rotation by r blocks puts them in rank order. Each
// // round's two requests are tested, yielding the core between tests,
// // until they complete or the deadline passes: then *done stays 0 and
// // the requests are left to complete (or not) in MPI, unreferenced.
// static int collio_gather_until(const char *send, char *recv, int b, MPI_Comm c, int tag,
// 		double seconds, int *done) {
// 	MPI_Request reqs[2];
// 	int n, r, rc;
// 	*done = 0;
// 	if ((rc = MPI_Comm_size(c, &n)) != MPI_SUCCESS || (rc = MPI_Comm_rank(c, &r)) != MPI_SUCCESS)
// 		return rc;
// 	memcpy(recv, send, (size_t)b);
// 	double end = MPI_Wtime() + seconds;
// 	for (int d = 1; d < n; d <<= 1) {
// 		int k = d < n - d ? d : n - d;
// 		rc = MPI_Irecv(recv + (size_t)d * b, k * b, MPI_BYTE, (r + d) % n, tag, c, &reqs[0]);
// 		if (rc != MPI_SUCCESS)
// 			return rc;
// 		rc = MPI_Isend(recv, k * b, MPI_BYTE, (r - d + n) % n, tag, c, &reqs[1]);
// 		if (rc != MPI_SUCCESS)
// 			return rc;
// 		for (;;) {
// 			int flag;
// 			rc = MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE);
// 			if (rc != MPI_SUCCESS || flag)
// 				break;
// 			if (seconds > 0 && MPI_Wtime() > end)
// 				return MPI_SUCCESS;
// 			sched_yield();
// 		}
// 		if (rc != MPI_SUCCESS)
// 			return rc;
// 	}
// 	size_t all = (size_t)n * b, shift = (size_t)r * b;
// 	collio_reverse(recv, all);
// 	collio_reverse(recv, shift);
// 	collio_reverse(recv + shift, all - shift);
// 	*done = 1;
// 	return MPI_SUCCESS;
// }
import "C"

import (
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// gatherTag marks the messages of AllgatherP2P; no other part of collio
// sends with it on a file's communicator.
const gatherTag = 7900

// stranded keeps what gathers that timed out left to MPI: their buffers
// and requests stay pinned and allocated, since MPI may still write them.
var stranded struct {
	sync.Mutex
	pins []*runtime.Pinner
}

// AllgatherP2P gathers every rank's send (equal lengths) into recv in rank
// order, as MPI_Allgather, but with point-to-point messages polled until
// they complete or d passes (d <= 0: no limit), so that a rank whose peers
// never join gets false instead of hanging. The whole gather is one call
// into C, and each rank sends ceil(log2 n) messages in as many rounds
// (Bruck's algorithm), where Open MPI's MPI_Iallgather sends one to every
// other rank in one round: fewer messages for ranks on several nodes,
// more rounds to wait through on one. After a false the communicator must
// not be used again: messages are pending.
func (c Comm) AllgatherP2P(send, recv []byte, d time.Duration) (bool, error) {
	const call = "allgather"
	if _, err := c.gatherCount(send, recv, call); err != nil {
		return false, err
	}
	// The rounds send up to half of recv in one message.
	if _, err := cCount(len(recv), "receive length", call); err != nil {
		return false, err
	}
	if len(send) == 0 {
		return true, nil
	}
	pin := new(runtime.Pinner)
	pin.Pin(&send[0])
	pin.Pin(&recv[0])
	var done C.int
	beforeWait()
	rc := C.collio_gather_until((*C.char)(unsafe.Pointer(&send[0])), (*C.char)(unsafe.Pointer(&recv[0])),
		C.int(len(send)), c.c, gatherTag, C.double(d.Seconds()), &done)
	if done == 0 {
		// Timed out or failed with a message in flight: MPI may still
		// read send or write recv.
		stranded.Lock()
		stranded.pins = append(stranded.pins, pin)
		stranded.Unlock()
	} else {
		pin.Unpin()
	}
	if rc != C.MPI_SUCCESS {
		return true, newError(rc, "MPI_Isend/MPI_Irecv/MPI_Testall ("+call+")")
	}
	return done != 0, nil
}
