/* Error codes: the error a Go export noted for the calling thread, turned
 * into an error code registered with the host MPI that carries collio's
 * message. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim_internal.h"
#include "_cgo_export.h"

/* The error a Go export reported on this thread: fail (main.go) runs on
 * the thread of the C call that entered Go and notes the class and the
 * message here, and the MPI_File_* function returning the class takes them
 * (shim_take_error). Per thread, so that concurrent calls on several threads
 * cannot swap messages; cleared when an intercepted call starts
 * (VIA_COLLIO), so an error found in C never gets an older call's text. */
__thread struct noted_error shim_noted;

static void copy_text(char *dst, size_t size, const char *src, int n)
{
	size_t k = n > 0 && src != NULL ? (size_t)n : 0;
	if (k > size - 1)
		k = size - 1;
	if (k > 0)
		memcpy(dst, src, k);
	dst[k] = '\0';
}

void collio_note_error(int cls, const char *full, int nfull, const char *msg, int nmsg)
{
	shim_noted.cls = cls;
	copy_text(shim_noted.msg, sizeof shim_noted.msg, msg, nmsg);
	copy_text(shim_noted.full, sizeof shim_noted.full, full, nfull);
	shim_noted.set = 1;
}

/* Error codes registered with the host MPI (MPI_Add_error_code and
 * MPI_Add_error_string), so that MPI_Error_string on a code a collio call
 * returned gives collio's message, and MPI_Error_class its class.
 *
 * Bounded: each MPI error class has a pool of at most codes_limit() codes
 * (COLLIO_ERROR_CODES, default 64; 0 returns plain classes), made when
 * first needed. A message equal to one a code of the class holds gets that
 * code again; a new message takes a new code while the pool is not full,
 * then the least recently returned code of the class, whose string
 * MPI_Add_error_string replaces (MPI-3.1 8.5 allows replacing a string;
 * Open MPI 4.1 copies the new one over the old). A long run therefore adds
 * at most codes_limit() codes per class (COLLIO_ERROR_CODES, 0 to 4096,
 * parsed in Go like every switch variable), and a code kept by the program
 * while codes_limit() newer distinct errors of its class happened shows the
 * text of a newer one (its class stays right). One mutex guards the pools;
 * the host MPI calls are made under it. */
struct code_slot {
	int code;
	unsigned long used; /* codes_clock when last returned */
	char msg[MPI_MAX_ERROR_STRING];
};
struct code_pool {
	int n;
	struct code_slot *slot; /* codes_limit() entries, n in use */
};
static struct code_pool code_pools[MPI_ERR_LASTCODE + 1];
static int codes_per_class = -1;
static unsigned long codes_clock;
static pthread_mutex_t codes_mu = PTHREAD_MUTEX_INITIALIZER;

/* Under codes_mu. */
static int codes_limit(void)
{
	if (codes_per_class < 0)
		codes_per_class = collioGoEnvInt((char *)"COLLIO_ERROR_CODES");
	return codes_per_class;
}

/* collio_error_code returns a code of class cls whose string is msg, or
 * cls itself when there is no message, codes are off, or the host MPI
 * refuses (MPI not initialised, or finalised). */
static int collio_error_code(int cls, const char *msg)
{
	int code = cls, init = 0, fin = 0, limit;
	struct code_pool *p;
	struct code_slot *s = NULL;
	if (msg == NULL || *msg == '\0' || cls <= MPI_SUCCESS || cls > MPI_ERR_LASTCODE)
		return cls;
	if (PMPI_Initialized(&init) != MPI_SUCCESS || !init || PMPI_Finalized(&fin) != MPI_SUCCESS || fin)
		return cls;
	pthread_mutex_lock(&codes_mu);
	limit = codes_limit();
	p = &code_pools[cls];
	if (limit == 0)
		goto out;
	if (p->slot == NULL && (p->slot = calloc((size_t)limit, sizeof *p->slot)) == NULL)
		goto out;
	for (int i = 0; i < p->n; i++) {
		if (strcmp(p->slot[i].msg, msg) == 0) {
			s = &p->slot[i];
			goto found;
		}
	}
	if (p->n < limit) {
		int c;
		if (PMPI_Add_error_code(cls, &c) != MPI_SUCCESS)
			goto out;
		s = &p->slot[p->n++];
		s->code = c;
	} else {
		s = &p->slot[0];
		for (int i = 1; i < p->n; i++)
			if (p->slot[i].used < s->used)
				s = &p->slot[i];
	}
	s->msg[0] = '\0'; /* until the host MPI has the new string */
	if (PMPI_Add_error_string(s->code, msg) != MPI_SUCCESS) {
		s->used = 0; /* the next to reuse */
		goto out;
	}
	snprintf(s->msg, sizeof s->msg, "%s", msg);
found:
	s->used = ++codes_clock;
	code = s->code;
out:
	pthread_mutex_unlock(&codes_mu);
	return code;
}

/* shim_take_error turns class cls, the result of a call, into the code to
 * return: a registered code with the message noted on this thread when it
 * is cls's, else cls. The full message goes to full (empty without one). */
int shim_take_error(int cls, char *full, size_t size)
{
	int code = cls;
	full[0] = '\0';
	if (cls == MPI_SUCCESS)
		return cls;
	if (shim_noted.set && shim_noted.cls == cls) {
		code = collio_error_code(cls, shim_noted.msg);
		snprintf(full, size, "%s", shim_noted.full);
	}
	shim_noted.set = 0;
	return code;
}
