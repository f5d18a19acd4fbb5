// <mpi.h> for the CUDA layer's MPI bootstraps (NcclComm, PeerComm), C API only: the MPI C++
// bindings would make every includer depend on libmpi_cxx. Nothing without AXE_CUDA_HAVE_MPI.
#pragma once

#ifdef AXE_CUDA_HAVE_MPI
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#endif
