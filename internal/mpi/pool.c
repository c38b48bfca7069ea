// The attribute that keeps a commpool.Pool with an application's
// communicator (see pool.go).
#include <mpi.h>
#include <stdint.h>
#include "_cgo_export.h"

static int pool_keyval = MPI_KEYVAL_INVALID;

static int pool_delete(MPI_Comm c, int keyval, void *value, void *extra)
{
	(void)c, (void)keyval, (void)extra;
	collioPoolDelete((uintptr_t)value);
	return MPI_SUCCESS;
}

// MPI deletes MPI_COMM_SELF's attributes first thing in MPI_Finalize:
// from then on pools are dropped without MPI calls.
static int self_delete(MPI_Comm c, int keyval, void *value, void *extra)
{
	(void)c, (void)keyval, (void)value, (void)extra;
	collioPoolFinalizing();
	return MPI_SUCCESS;
}

static int pool_init(void)
{
	if (pool_keyval != MPI_KEYVAL_INVALID)
		return MPI_SUCCESS;
	int self_keyval, rc;
	rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &self_keyval, NULL);
	if (rc == MPI_SUCCESS)
		rc = MPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, NULL);
	if (rc == MPI_SUCCESS)
		rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, pool_delete, &pool_keyval, NULL);
	return rc;
}

int collio_pool_get(MPI_Comm c, uintptr_t *value, int *found)
{
	int rc = pool_init();
	if (rc != MPI_SUCCESS)
		return rc;
	void *v = NULL;
	rc = MPI_Comm_get_attr(c, pool_keyval, &v, found);
	*value = (uintptr_t)v;
	return rc;
}

int collio_pool_set(MPI_Comm c, uintptr_t value)
{
	return MPI_Comm_set_attr(c, pool_keyval, (void *)value);
}
