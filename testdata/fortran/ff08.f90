! MPI-IO from Fortran through `use mpi_f08`: a collective write and read
! through a subarray view, write_at_all, independent writes and reads,
! set_view/get_view, hints through an info object, error returns and a
! Fortran error handler, with the f08 types (TYPE(MPI_File), ...).
!
!   mpirun -np N ff08 OUTDIR
!
! COLLIO_EXPECT=1 (0) fails the run unless collio (the host MPI-IO) served
! the calls: only collio reports collio_* hints in MPI_File_get_info.

module f08count
  use mpi_f08
  implicit none
  integer :: handler_calls = 0, handler_code = 0
  type(MPI_File) :: handler_file

contains

  subroutine on_error(fh, code)
    type(MPI_File) :: fh
    integer :: code
    handler_calls = handler_calls + 1
    handler_code = code
    handler_file = fh
  end subroutine on_error

end module f08count

program ff08
  use mpi_f08
  use f08count
  implicit none
  integer, parameter :: nx = 6, ny = 5, nat = 4
  integer :: ierr, rank, np, i, j, k, cnt, gsizes(2), subsizes(2), starts(2)
  integer, allocatable :: lbuf(:), rbuf(:), whole(:)
  integer :: at(nat), atr(nat)
  integer(kind=MPI_OFFSET_KIND) :: off, disp
  type(MPI_File) :: fh
  type(MPI_Datatype) :: ftype, etype2, ftype2
  type(MPI_Info) :: info, used
  type(MPI_Status) :: status
  type(MPI_Request) :: req
  type(MPI_Errhandler) :: eh
  character(len=4096) :: dir
  character(len=32) :: expect, rep
  character(len=MPI_MAX_INFO_VAL) :: val
  logical :: flag, collio

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  if (command_argument_count() < 1) call fail('usage: ff08 OUTDIR')
  call get_command_argument(1, dir)
  call get_environment_variable('COLLIO_EXPECT', expect)

  call MPI_Info_create(info)
  call MPI_Info_set(info, 'cb_buffer_size', '65536')

  ! Rows of an nx x ny array split over the ranks (some ranks may have
  ! none), each element its global index.
  gsizes = (/ nx, ny /)
  subsizes = (/ nx, ny / np /)
  if (rank < mod(ny, np)) subsizes(2) = subsizes(2) + 1
  starts = (/ 0, rank * (ny / np) + min(rank, mod(ny, np)) /)
  call MPI_Type_create_subarray(2, gsizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INTEGER, ftype)
  call MPI_Type_commit(ftype)
  allocate(lbuf(nx * ny), rbuf(nx * ny), whole(nx * ny))
  k = 0
  do j = 0, subsizes(2) - 1
     do i = 0, nx - 1
        k = k + 1
        lbuf(k) = i + nx * (starts(2) + j)
     end do
  end do
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/f08sub.dat', MPI_MODE_CREATE + MPI_MODE_RDWR, info, fh, ierr)
  call check(ierr, 'open f08sub.dat')
  collio = served(fh)
  if (expect == '1' .and. .not. collio) call fail('COLLIO_EXPECT=1 but the host MPI-IO serves the file')
  if (expect == '0' .and. collio) call fail('COLLIO_EXPECT=0 but collio serves the file')
  disp = 0
  rep = 'native'
  call MPI_File_set_view(fh, disp, MPI_INTEGER, ftype, rep, info, ierr)
  call check(ierr, 'set_view')
  call MPI_File_get_view(fh, disp, etype2, ftype2, rep, ierr)
  call check(ierr, 'get_view')
  if (disp /= 0 .or. rep /= 'native' .or. etype2 /= MPI_INTEGER) call fail('get_view')
  call MPI_File_write_all(fh, lbuf, nx * subsizes(2), MPI_INTEGER, status, ierr)
  call check(ierr, 'write_all')
  call MPI_Get_count(status, MPI_INTEGER, cnt)
  if (cnt /= nx * subsizes(2)) call fail('write_all: status count')
  rbuf = -1
  call MPI_File_seek(fh, 0_MPI_OFFSET_KIND, MPI_SEEK_SET, ierr)
  call MPI_File_read_all(fh, rbuf, nx * subsizes(2), MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(ierr, 'read_all')
  if (any(rbuf(1:nx * subsizes(2)) /= lbuf(1:nx * subsizes(2)))) call fail('read_all: wrong data')
  call MPI_File_close(fh, ierr)
  call check(ierr, 'close')
  if (fh /= MPI_FILE_NULL) call fail('close did not set MPI_FILE_NULL')
  if (rank == 0) then
     call MPI_File_open(MPI_COMM_SELF, trim(dir) // '/f08sub.dat', MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
     call MPI_File_read(fh, whole, nx * ny, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
     call check(ierr, 'read f08sub.dat')
     do k = 1, nx * ny
        if (whole(k) /= k - 1) call fail('f08sub.dat: wrong content')
     end do
     call MPI_File_close(fh)
  end if
  call MPI_Type_free(ftype)

  ! write_at_all, nonblocking independent reads, hints.
  do k = 1, nat
     at(k) = rank * 10 + k
  end do
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/f08at.dat', MPI_MODE_CREATE + MPI_MODE_RDWR, info, fh, ierr)
  call check(ierr, 'open f08at.dat')
  off = rank * nat * 4
  call MPI_File_write_at_all(fh, off, at, nat, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(ierr, 'write_at_all')
  call MPI_File_sync(fh)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_File_sync(fh)
  off = mod(rank + 1, np) * nat * 4
  call MPI_File_iread_at(fh, off, atr, nat, MPI_INTEGER, req, ierr)
  call check(ierr, 'iread_at')
  call MPI_Wait(req, status)
  call MPI_Get_count(status, MPI_INTEGER, cnt)
  if (cnt /= nat) call fail('iread_at: status count')
  do k = 1, nat
     if (atr(k) /= mod(rank + 1, np) * 10 + k) call fail('iread_at: wrong data')
  end do
  call MPI_File_get_info(fh, used, ierr)
  call MPI_Info_get(used, 'cb_buffer_size', MPI_MAX_INFO_VAL, val, flag)
  if (collio .and. (.not. flag .or. val /= '65536')) call fail('get_info: cb_buffer_size ' // trim(val))
  call MPI_Info_free(used)
  call MPI_File_close(fh)

  ! Errors: a Fortran handler on a read-only file, a negative count, a
  ! missing file (ierror given and left out).
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/f08at.dat', MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
  call MPI_File_create_errhandler(on_error, eh, ierr)
  call check(ierr, 'create_errhandler')
  call MPI_File_set_errhandler(fh, eh, ierr)
  call MPI_File_write(fh, at, 1, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call expect_class(ierr, MPI_ERR_READ_ONLY, 'write to a read-only file', 'read-only')
  if (handler_calls /= 1 .or. handler_file /= fh .or. handler_code /= ierr) &
       call fail('the Fortran error handler was not called right')
  call MPI_File_close(fh)
  call MPI_Errhandler_free(eh)
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/f08at.dat', MPI_MODE_RDWR, MPI_INFO_NULL, fh)
  call MPI_File_write_at(fh, 0_MPI_OFFSET_KIND, at, -2, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call expect_class(ierr, MPI_ERR_COUNT, 'write_at with count -2', 'count -2 is negative')
  call MPI_File_close(fh)
  fh%MPI_VAL = -7
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/missing.dat', MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
  call expect_class(ierr, MPI_ERR_NO_SUCH_FILE, 'open of a missing file', 'no such file')
  ! (Open MPI 4.1's mpi_f08 binding leaves fh as it was.)
  if (collio .and. fh /= MPI_FILE_NULL) call fail('a failed open did not give MPI_FILE_NULL')

  call MPI_Info_free(info)
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a)', 'PASS ff08 (', np, ' ranks)'
  call MPI_Finalize()

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    write (0, '(a,i0,a,a)') 'FAIL ff08 rank ', rank, ': ', what
    call MPI_Abort(MPI_COMM_WORLD, 1)
    stop 1
  end subroutine fail

  subroutine check(rc, what)
    integer, intent(in) :: rc
    character(len=*), intent(in) :: what
    integer :: n
    character(len=MPI_MAX_ERROR_STRING) :: s
    if (rc == MPI_SUCCESS) return
    call MPI_Error_string(rc, s, n)
    call fail(what // ': ' // s(1:n))
  end subroutine check

  logical function served(f)
    type(MPI_File), intent(in) :: f
    type(MPI_Info) :: i2
    character(len=MPI_MAX_INFO_VAL) :: v
    logical :: has
    call MPI_File_get_info(f, i2)
    call MPI_Info_get(i2, 'collio_strategy', MPI_MAX_INFO_VAL, v, has)
    call MPI_Info_free(i2)
    served = has
  end function served

  subroutine expect_class(rc, want, what, text)
    integer, intent(in) :: rc, want
    character(len=*), intent(in) :: what, text
    integer :: c, n
    character(len=MPI_MAX_ERROR_STRING) :: s
    if (rc == MPI_SUCCESS) call fail(what // ' succeeded')
    call MPI_Error_class(rc, c)
    if (c /= want) call fail(what // ': wrong error class')
    call MPI_Error_string(rc, s, n)
    if (collio .and. (index(s(1:n), 'collio: ') == 0 .or. index(s(1:n), text) == 0)) &
         call fail(what // ': message ' // s(1:n))
  end subroutine expect_class

end program ff08
