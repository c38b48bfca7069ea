/* MPI helpers the Go side calls (declared in shim.h): datatypes of a
 * view, info objects, groups. In C because they use mpi.h's handles and
 * constants. */
#define _GNU_SOURCE
#include <string.h>

#include "shim_internal.h"

MPI_Datatype collio_type_byte(void) { return MPI_BYTE; }

int collio_type_is_named(MPI_Datatype t)
{
	int ni, na, nt, comb;
	if (t == MPI_DATATYPE_NULL)
		return 1;
	if (PMPI_Type_get_envelope(t, &ni, &na, &nt, &comb) != MPI_SUCCESS)
		return 1;
	return comb == MPI_COMBINER_NAMED;
}

int collio_type_keep(MPI_Datatype t, MPI_Datatype *out)
{
	if (collio_type_is_named(t)) {
		*out = t;
		return MPI_SUCCESS;
	}
	return PMPI_Type_dup(t, out);
}

void collio_type_drop(MPI_Datatype t)
{
	if (!collio_type_is_named(t))
		PMPI_Type_free(&t);
}

MPI_Info collio_info_new(void)
{
	MPI_Info info = MPI_INFO_NULL;
	if (PMPI_Info_create(&info) != MPI_SUCCESS)
		return MPI_INFO_NULL;
	return info;
}

void collio_info_put(MPI_Info info, const char *key, const char *value)
{
	if (strlen(key) < MPI_MAX_INFO_KEY && strlen(value) > 0 && strlen(value) < MPI_MAX_INFO_VAL)
		PMPI_Info_set(info, key, value);
}

MPI_Info collio_info_null(void) { return MPI_INFO_NULL; }

int collio_info_fint(MPI_Info info) { return (int)PMPI_Info_c2f(info); }

int collio_comm_group(MPI_Comm comm, MPI_Group *group) { return PMPI_Comm_group(comm, group); }
