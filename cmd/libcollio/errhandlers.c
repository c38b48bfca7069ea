/* File error handlers: collio applies the file's handler to its own
 * files' errors (shim_file_error), so it keeps the C and Fortran functions
 * of the handlers the program makes; and the MPI_File_*_errhandler
 * functions. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim_internal.h"
#include "_cgo_export.h"

/* File error handlers made with MPI_File_create_errhandler, so collio can
 * call their function for its own files. Entries are never removed: a
 * handler can outlive the user's handle (MPI_Errhandler_free while a file
 * still uses it); a new handler at a reused address replaces the entry. */
struct eh_entry {
	MPI_Errhandler eh;
	MPI_File_errhandler_function *fn;
	int fortran; /* fn takes Fortran arguments (MPI_Fint *file, MPI_Fint *code) */
};
static struct eh_entry *eh_table;
static int eh_len, eh_cap;
static pthread_mutex_t eh_mu = PTHREAD_MUTEX_INITIALIZER;
/* Serialises the use of MPI_FILE_NULL's handler slot in retain. */
static pthread_mutex_t eh_null_mu = PTHREAD_MUTEX_INITIALIZER;

static void eh_remember(MPI_Errhandler eh, MPI_File_errhandler_function *fn, int fortran)
{
	pthread_mutex_lock(&eh_mu);
	for (int i = 0; i < eh_len; i++) {
		if (eh_table[i].eh == eh) {
			eh_table[i].fn = fn;
			eh_table[i].fortran = fortran;
			pthread_mutex_unlock(&eh_mu);
			return;
		}
	}
	if (eh_len == eh_cap) {
		int cap = eh_cap ? 2 * eh_cap : 8;
		struct eh_entry *t = realloc(eh_table, (size_t)cap * sizeof *t);
		if (t == NULL) {
			pthread_mutex_unlock(&eh_mu);
			return;
		}
		eh_table = t;
		eh_cap = cap;
	}
	eh_table[eh_len].eh = eh;
	eh_table[eh_len].fn = fn;
	eh_table[eh_len].fortran = fortran;
	eh_len++;
	pthread_mutex_unlock(&eh_mu);
}

void collio_remember_fortran_errhandler(MPI_Errhandler eh, void *fn)
{
	eh_remember(eh, (MPI_File_errhandler_function *)fn, 1);
}

static MPI_File_errhandler_function *eh_lookup(MPI_Errhandler eh, int *fortran)
{
	MPI_File_errhandler_function *fn = NULL;
	pthread_mutex_lock(&eh_mu);
	for (int i = 0; i < eh_len; i++) {
		if (eh_table[i].eh == eh) {
			fn = eh_table[i].fn;
			*fortran = eh_table[i].fortran;
		}
	}
	pthread_mutex_unlock(&eh_mu);
	return fn;
}

/* The handler of MPI_FILE_NULL (the default for new files), with a
 * reference the caller releases. */
MPI_Errhandler collio_default_errhandler(void)
{
	MPI_Errhandler eh = MPI_ERRORS_RETURN;
	pthread_mutex_lock(&eh_null_mu);
	if (PMPI_File_get_errhandler(MPI_FILE_NULL, &eh) != MPI_SUCCESS)
		eh = MPI_ERRORS_RETURN;
	pthread_mutex_unlock(&eh_null_mu);
	return eh;
}

/* Takes a reference on eh with public calls only: install it on
 * MPI_FILE_NULL, get it back (which retains), restore the old one. This
 * also checks that eh is a file error handler. */
int collio_errhandler_retain(MPI_Errhandler eh)
{
	MPI_Errhandler old, got;
	int rc;
	pthread_mutex_lock(&eh_null_mu);
	rc = PMPI_File_get_errhandler(MPI_FILE_NULL, &old);
	if (rc != MPI_SUCCESS)
		goto out;
	rc = PMPI_File_set_errhandler(MPI_FILE_NULL, eh);
	if (rc != MPI_SUCCESS) {
		PMPI_Errhandler_free(&old);
		goto out;
	}
	rc = PMPI_File_get_errhandler(MPI_FILE_NULL, &got);
	PMPI_File_set_errhandler(MPI_FILE_NULL, old);
	PMPI_Errhandler_free(&old);
out:
	pthread_mutex_unlock(&eh_null_mu);
	return rc;
}

void collio_errhandler_release(MPI_Errhandler eh)
{
	if (eh != MPI_ERRHANDLER_NULL && eh != NULL)
		PMPI_Errhandler_free(&eh);
}

/* code_valid reports whether code is an error code or class of the host
 * MPI (asking about another one would call MPI_COMM_WORLD's handler). */
static int code_valid(int code)
{
	int *last = NULL, flag = 0;
	if (code < 0)
		return 0;
	if (code <= MPI_ERR_LASTCODE)
		return 1;
	if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag) != MPI_SUCCESS || !flag || last == NULL)
		return 0;
	return code <= *last;
}

/* shim_invoke applies handler eh to error code on file fh (MPI_FILE_NULL for
 * open and delete) and returns the code for the caller to return. msg is
 * collio's message for it (empty: the host's text for code is printed). */
int shim_invoke(MPI_File fh, MPI_Errhandler eh, int code, const char *name, const char *msg)
{
	if (code == MPI_SUCCESS)
		return code;
	if (collio_verbose() > 0 || eh == MPI_ERRORS_ARE_FATAL) {
		char host[MPI_MAX_ERROR_STRING];
		int n = 0;
		if (msg == NULL || *msg == '\0') {
			snprintf(host, sizeof host, "error code %d", code);
			if (code_valid(code))
				PMPI_Error_string(code, host, &n);
			msg = host;
		}
		fprintf(stderr, "collio[%d]: %s failed: %s\n", collio_world_rank(), name, msg);
	}
	if (eh == MPI_ERRORS_RETURN)
		return code;
	if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRHANDLER_NULL || eh == NULL) {
		/* The class: an exit status the shell can tell apart. */
		int cls = code;
		if (code_valid(code) && PMPI_Error_class(code, &cls) != MPI_SUCCESS)
			cls = code;
		PMPI_Abort(MPI_COMM_WORLD, cls);
		return code;
	}
	int fortran = 0;
	MPI_File_errhandler_function *fn = eh_lookup(eh, &fortran);
	if (fn != NULL && fortran) {
		MPI_Fint f = MPI_File_c2f(fh), c = (MPI_Fint)code;
		((void (*)(MPI_Fint *, MPI_Fint *))(void *)fn)(&f, &c);
	} else if (fn != NULL) {
		MPI_File f = fh;
		int c = code;
		fn(&f, &c);
	}
	return code;
}

/* shim_file_error reports class cls, the result of a call on fh, through the
 * file's error handler, as a code with collio's message (shim_take_error); a
 * handle that is not (or no longer) a collio file uses MPI_FILE_NULL's
 * handler. It returns the code for the caller to return. */
int shim_file_error(MPI_File fh, int cls, const char *name)
{
	char msg[sizeof shim_noted.full];
	void *eh = NULL;
	int code;
	if (cls == MPI_SUCCESS)
		return cls;
	code = shim_take_error(cls, msg, sizeof msg);
	if (fh != MPI_FILE_NULL && OURS(fh) && collioGoErrhandler(H(fh), &eh) == MPI_SUCCESS && eh != NULL &&
	    collio_errhandler_retain((MPI_Errhandler)eh) == MPI_SUCCESS) {
		code = shim_invoke(fh, (MPI_Errhandler)eh, code, name, msg);
		collio_errhandler_release((MPI_Errhandler)eh);
		return code;
	}
	MPI_Errhandler d = collio_default_errhandler();
	code = shim_invoke(MPI_FILE_NULL, d, code, name, msg);
	collio_errhandler_release(d);
	return code;
}

/* shim_arg_error is shim_file_error for an error found in C (a NULL output pointer,
 * ...), with the message "collio: NAME: WHAT". */
int shim_arg_error(MPI_File fh, int cls, const char *name, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int n = snprintf(msg, sizeof msg, "collio: %s: %s", name, what);
	if (n < 0 || n >= (int)sizeof msg)
		n = (int)strlen(msg);
	collio_note_error(cls, msg, n, msg, n);
	collioGoSetLastError(msg);
	return shim_file_error(fh, cls, name);
}

int MPI_File_create_errhandler(MPI_File_errhandler_function *function, MPI_Errhandler *errhandler)
{
	int rc = PMPI_File_create_errhandler(function, errhandler);
	if (rc == MPI_SUCCESS)
		eh_remember(*errhandler, function, 0);
	return rc;
}

int MPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
	void *old = NULL;
	int rc;
	if (!OURS(file)) {
		VIA_HOST("MPI_File_set_errhandler");
		return PMPI_File_set_errhandler(file, errhandler);
	}
	VIA_COLLIO("MPI_File_set_errhandler");
	rc = collioGoValid(H(file));
	if (rc != MPI_SUCCESS)
		return shim_file_error(file, rc, "MPI_File_set_errhandler");
	/* Retaining also checks that this is a file error handler. */
	if (collio_errhandler_retain(errhandler) != MPI_SUCCESS)
		return shim_arg_error(file, MPI_ERR_ARG, "MPI_File_set_errhandler", "errhandler is not a file error handler");
	rc = collioGoSwapErrhandler(H(file), (void *)errhandler, &old);
	if (rc != MPI_SUCCESS) {
		collio_errhandler_release(errhandler);
		return shim_file_error(file, rc, "MPI_File_set_errhandler");
	}
	collio_errhandler_release((MPI_Errhandler)old);
	return MPI_SUCCESS;
}

int MPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
	void *eh = NULL;
	int rc;
	if (!OURS(file)) {
		VIA_HOST("MPI_File_get_errhandler");
		return PMPI_File_get_errhandler(file, errhandler);
	}
	VIA_COLLIO("MPI_File_get_errhandler");
	if (errhandler == NULL)
		return shim_arg_error(file, MPI_ERR_ARG, "MPI_File_get_errhandler", "errhandler is NULL");
	rc = collioGoErrhandler(H(file), &eh);
	if (rc == MPI_SUCCESS)
		rc = collio_errhandler_retain((MPI_Errhandler)eh); /* the caller's reference */
	if (rc == MPI_SUCCESS)
		*errhandler = (MPI_Errhandler)eh;
	return shim_file_error(file, rc, "MPI_File_get_errhandler");
}

int MPI_File_call_errhandler(MPI_File fh, int errorcode)
{
	void *eh = NULL;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_call_errhandler");
		return PMPI_File_call_errhandler(fh, errorcode);
	}
	VIA_COLLIO("MPI_File_call_errhandler");
	rc = collioGoErrhandler(H(fh), &eh);
	if (rc != MPI_SUCCESS)
		return shim_file_error(fh, rc, "MPI_File_call_errhandler");
	if (collio_errhandler_retain((MPI_Errhandler)eh) != MPI_SUCCESS)
		return MPI_ERR_INTERN;
	shim_invoke(fh, (MPI_Errhandler)eh, errorcode, "MPI_File_call_errhandler", NULL);
	collio_errhandler_release((MPI_Errhandler)eh);
	return MPI_SUCCESS;
}
